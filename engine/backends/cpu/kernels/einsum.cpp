// Einsum on the CPU: one loop for every equation.
//
// The equation is resolved into labels (volta/ir/einsum.h); each operand walks the labels with
// per-label strides, which covers transposes, diagonals (a repeated label adds its axes'
// strides) and broadcasting (stride 0). Output elements are split into fixed runs by the
// problem's size; each element's sum over the summed labels is taken in one fixed order (row-major
// over those labels), products formed operand by operand, so the bits do not depend on the thread
// count. Integers wrap (two's complement), as the other integer kernels do.

#include "volta/ir/einsum.h"

#include <algorithm>
#include <type_traits>
#include <vector>

#include "dtype_kernels.h"

namespace volta::cpu {
namespace {

// Integer products and sums are done unsigned, so overflow wraps instead of being undefined.
template <class T>
struct ArithOf {
  using type = T;
};
template <class T>
requires std::is_integral_v<T>
struct ArithOf<T> {
  using type = std::make_unsigned_t<T>;
};
template <class T>
using Arith = typename ArithOf<T>::type;

template <class T>
struct EinsumKernel {
  static void run(const KernelArgs& args) {
    std::vector<Shape> shapes;
    for (const ConstTensorView& in : args.inputs) shapes.push_back(in.shape);
    const EinsumEquation eq = parse_einsum_equation(args.attrs.get_string("equation"), shapes);
    const size_t num_operands = args.inputs.size();
    std::vector<const T*> data;
    std::vector<std::vector<int64_t>> label_strides;
    for (size_t k = 0; k < num_operands; ++k) {
      data.push_back(args.inputs[k].as<T>());
      label_strides.push_back(eq.label_strides(static_cast<int>(k), shapes[k]));
    }
    const auto extent = [&](int label) { return eq.label_extent[static_cast<size_t>(label)]; };
    const auto stride = [&](size_t k, int label) {
      return label_strides[k][static_cast<size_t>(label)];
    };

    const Shape out_shape = eq.output_shape();
    const int64_t out_count = out_shape.numel();
    T* y = args.outputs[0].as<T>();
    int64_t summed_count = 1;
    for (int l : eq.summed_labels) summed_count *= extent(l);
    if (out_count == 0) return;
    if (summed_count == 0) {
      std::fill_n(y, out_count, T{0});
      return;
    }
    // The last summed label is the inner loop; the others advance as an odometer.
    const std::vector<int> outer_summed(
        eq.summed_labels.begin(), eq.summed_labels.end() - (eq.summed_labels.empty() ? 0 : 1));
    const int inner_label = eq.summed_labels.empty() ? -1 : eq.summed_labels.back();
    const int64_t inner_extent = inner_label < 0 ? 1 : extent(inner_label);
    std::vector<int64_t> inner_stride(num_operands, 0);
    if (inner_label >= 0) {
      for (size_t k = 0; k < num_operands; ++k) inner_stride[k] = stride(k, inner_label);
    }

    const int64_t chunk = std::max<int64_t>(
        1, kElementwiseChunk /
               std::max<int64_t>(1, summed_count * static_cast<int64_t>(num_operands)));
    args.pool.parallel_chunks(out_count, chunk, [&](int64_t begin, int64_t end) {
      std::vector<int64_t> base(num_operands), at(num_operands);
      std::vector<int64_t> odometer(outer_summed.size());
      for (int64_t e = begin; e < end; ++e) {
        // The operands' offsets at output element e.
        std::fill(base.begin(), base.end(), 0);
        int64_t rest = e;
        for (int a = out_shape.rank() - 1; a >= 0; --a) {
          const int label = eq.output_labels[static_cast<size_t>(a)];
          const int64_t index = rest % out_shape[a];
          rest /= out_shape[a];
          for (size_t k = 0; k < num_operands; ++k) base[k] += index * stride(k, label);
        }
        at = base;
        std::fill(odometer.begin(), odometer.end(), 0);
        Arith<T> acc{0};
        for (int64_t s = 0; s < summed_count; s += inner_extent) {
          for (int64_t j = 0; j < inner_extent; ++j) {
            Arith<T> product = static_cast<Arith<T>>(data[0][at[0] + j * inner_stride[0]]);
            for (size_t k = 1; k < num_operands; ++k) {
              product = product * static_cast<Arith<T>>(data[k][at[k] + j * inner_stride[k]]);
            }
            acc = acc + product;
          }
          for (int d = static_cast<int>(outer_summed.size()) - 1; d >= 0; --d) {
            const int label = outer_summed[static_cast<size_t>(d)];
            auto& index = odometer[static_cast<size_t>(d)];
            for (size_t k = 0; k < num_operands; ++k) at[k] += stride(k, label);
            if (++index < extent(label)) break;
            for (size_t k = 0; k < num_operands; ++k) at[k] -= stride(k, label) * extent(label);
            index = 0;
          }
        }
        y[e] = static_cast<T>(acc);
      }
    });
  }
};

const OpDTypeKernels& einsum_kernels() {
  static const OpDTypeKernels kKernels = [] {
    OpDTypeKernels f{};
    f[static_cast<size_t>(op_index(OpKind::Einsum))] =
        kernels_for<EinsumKernel>(NumericTypes{}, "einsum_label_loop");
    return f;
  }();
  return kKernels;
}

KernelSelection select_einsum_kernel(const KernelQuery& query) {
  return select_by_dtype(einsum_kernels()[static_cast<size_t>(op_index(query.node.op))], query.node,
                         query.inputs[0]->dtype);
}

}  // namespace

void register_einsum_kernels(KernelTable& table) {
  register_family(table, einsum_kernels(), select_einsum_kernel);
}

}  // namespace volta::cpu
