// Einsum on the CPU.
//
// The equation is resolved into labels (volta/ir/einsum.h); each operand walks the labels with
// per-label strides, which covers transposes, diagonals (a repeated label adds its axes'
// strides) and broadcasting (stride 0).
//
// Two float operands contract as one batched GEMM on the core of linalg_gemm.h: the operands are
// packed into [batch, M, K] and [batch, K, N] by their label strides, and the result is unpacked
// into the output's label order. Every other equation (one or three and more operands, integers)
// runs the label loop: output elements are split into fixed runs by the problem's size, and each
// element's sum over the summed labels is taken in one fixed order (row-major over those labels),
// products formed operand by operand. Either way the bits do not depend on the thread count.
// Integers wrap (two's complement), as the other integer kernels do.

#include <algorithm>
#include <type_traits>
#include <vector>

#include "dtype_kernels.h"
#include "linalg_gemm.h"
#include "volta/ir/einsum.h"

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

// dst[i], i row-major over `labels`, = src[the sum over those labels of index * stride].
template <class T>
void gather_by_labels(const T* src, const std::vector<int>& labels,
                      const std::vector<int64_t>& label_strides, const EinsumEquation& eq, T* dst,
                      ThreadPool& pool) {
  std::vector<int64_t> extents, strides;
  int64_t count = 1;
  for (int l : labels) {
    extents.push_back(eq.label_extent[static_cast<size_t>(l)]);
    strides.push_back(label_strides[static_cast<size_t>(l)]);
    count *= extents.back();
  }
  const auto rank = static_cast<int>(labels.size());
  pool.parallel_chunks(count, kElementwiseChunk, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> index(static_cast<size_t>(rank));
    int64_t offset = 0;
    int64_t rest = begin;
    for (int d = rank - 1; d >= 0; --d) {
      const auto u = static_cast<size_t>(d);
      index[u] = rest % extents[u];
      rest /= extents[u];
      offset += index[u] * strides[u];
    }
    for (int64_t i = begin; i < end; ++i) {
      dst[i] = src[offset];
      for (int d = rank - 1; d >= 0; --d) {  // odometer step, last label first
        const auto u = static_cast<size_t>(d);
        offset += strides[u];
        if (++index[u] < extents[u]) break;
        offset -= strides[u] * extents[u];
        index[u] = 0;
      }
    }
  });
}

// Its planned workspace: packed A and B, the product when it is not the output, and the GEMM
// call's shared op(B) panels; the GEMM tasks pack into the worker scratch.
struct EinsumScratch {
  int64_t a_offset = 0, b_offset = 0, product_offset = 0, shared_offset = 0;
  GemmScratch gemm;
  int64_t workspace_bytes = 0;
};

template <class T>
EinsumScratch einsum_scratch(const GemmMicroKernel<T>& micro, const EinsumEquation& eq,
                             const EinsumGemm& e) {
  EinsumScratch s;
  if (eq.output_shape().numel() == 0 || e.depth == 0) return s;  // no GEMM runs
  s.gemm = gemm_scratch(micro, e.rows, e.cols, e.depth, e.batches);
  WorkspaceLayout layout;
  s.a_offset = layout.add<T>(e.batches * e.rows * e.depth);
  s.b_offset = layout.add<T>(e.batches * e.depth * e.cols);
  s.product_offset = layout.add<T>(e.product_is_output ? 0 : eq.output_shape().numel());
  s.shared_offset = layout.add<std::byte>(s.gemm.shared_bytes);
  s.workspace_bytes = layout.bytes();
  return s;
}

template <class T, GemmIsa Isa>
struct EinsumGemmKernel {
  static void run(const KernelArgs& args) {
    const std::vector<Shape> shapes = {args.inputs[0].shape, args.inputs[1].shape};
    const EinsumEquation eq = parse_einsum_equation(args.attrs.get_string("equation"), shapes);
    T* y = args.outputs[0].as<T>();
    const int64_t out_count = eq.output_shape().numel();
    if (out_count == 0) return;
    if (einsum_extent(eq.summed_labels, eq) == 0) {
      std::fill_n(y, out_count, T{0});
      return;
    }
    const EinsumGemm e = einsum_gemm(eq);
    const std::vector<int>& k = eq.summed_labels;
    const int64_t batches = e.batches, rows = e.rows, cols = e.cols, depth = e.depth;
    const GemmMicroKernel<T>& micro = gemm_micro_kernel<T>(Isa);
    const EinsumScratch s = einsum_scratch(micro, eq, e);

    T* const a_packed =
        workspace_part<T>(args.workspace, s.a_offset, batches * rows * depth, args.node);
    T* const b_packed =
        workspace_part<T>(args.workspace, s.b_offset, batches * depth * cols, args.node);
    gather_by_labels(args.inputs[0].as<T>(), joined_labels(e.batch, e.m, k),
                     eq.label_strides(0, shapes[0]), eq, a_packed, args.pool);
    gather_by_labels(args.inputs[1].as<T>(), joined_labels(e.batch, k, e.n),
                     eq.label_strides(1, shapes[1]), eq, b_packed, args.pool);

    // The product is [batch, M, N]; unless that is the output's label order it goes to
    // the workspace and is then gathered into the output.
    const std::vector<int> product_labels = joined_labels(e.batch, e.m, e.n);
    T* product = e.product_is_output
                     ? y
                     : workspace_part<T>(args.workspace, s.product_offset, out_count, args.node);
    std::vector<GemmProblem<T>> problems;
    problems.reserve(static_cast<size_t>(batches));
    for (int64_t b = 0; b < batches; ++b) {
      problems.push_back({.m = rows,
                          .n = cols,
                          .k = depth,
                          .a = a_packed + b * rows * depth,
                          .a_row_stride = depth,
                          .a_col_stride = 1,
                          .b = b_packed + b * depth * cols,
                          .b_row_stride = cols,
                          .b_col_stride = 1,
                          .y = product + b * rows * cols,
                          .y_row_stride = cols});
    }
    gemm<T>(micro, problems, args.pool,
            args.workspace.subspan(static_cast<size_t>(s.shared_offset)));
    if (product != y) {
      gather_by_labels(static_cast<const T*>(product), eq.output_labels,
                       einsum_packed_strides(product_labels, eq), eq, y, args.pool);
    }
  }
};

// "f32_einsum_pack_gemm_avx2fma_6x16": the GEMM micro-kernel's name after its dtype prefix.
template <class T, GemmIsa Isa>
const CpuKernel& einsum_gemm_kernel() {
  static const CpuKernel kernel{
      &EinsumGemmKernel<T, Isa>::run,
      std::string(dtype_name(dtype_of<T>())) + "_einsum_pack_" +
          std::string(gemm_micro_kernel<T>(Isa).name.substr(dtype_name(dtype_of<T>()).size() + 1))};
  return kernel;
}

template <class T>
const CpuKernel& fastest_einsum_gemm_kernel() {
  switch (best_gemm_isa()) {
    case GemmIsa::Generic:
      return einsum_gemm_kernel<T, GemmIsa::Generic>();
    case GemmIsa::Avx2Fma:
      return einsum_gemm_kernel<T, GemmIsa::Avx2Fma>();
    case GemmIsa::Avx512:
      return einsum_gemm_kernel<T, GemmIsa::Avx512>();
  }
  return einsum_gemm_kernel<T, GemmIsa::Generic>();  // unreachable: the switch is exhaustive
}

const DTypeKernels& einsum_loop_kernels() {
  static const DTypeKernels kKernels =
      kernels_for<EinsumKernel>(NumericTypes{}, "einsum_label_loop");
  return kKernels;
}

template <class T>
KernelChoice einsum_gemm_choice(const KernelQuery& query) {
  const std::vector<Shape> shapes = {query.inputs[0]->shape, query.inputs[1]->shape};
  const EinsumEquation eq =
      parse_einsum_equation(AttrReader(query.node).get_string("equation"), shapes);
  const EinsumScratch s =
      einsum_scratch(gemm_micro_kernel<T>(best_gemm_isa()), eq, einsum_gemm(eq));
  return choice_of(fastest_einsum_gemm_kernel<T>(), s.workspace_bytes, s.gemm.task_bytes);
}

// Two float operands: the packed GEMM; anything else: the label loop.
KernelSelection select_einsum_kernel(const KernelQuery& query) {
  const DType dtype = query.inputs[0]->dtype;
  if (query.inputs.size() == 2 && dtype == DType::F32) return einsum_gemm_choice<float>(query);
  if (query.inputs.size() == 2 && dtype == DType::F64) return einsum_gemm_choice<double>(query);
  return select_by_dtype(einsum_loop_kernels(), query.node, dtype);
}

}  // namespace

void register_linalg_einsum_kernels(KernelTable& table) {
  table[static_cast<size_t>(op_index(OpKind::Einsum))] = {
      &select_einsum_kernel, einsum_loop_kernels().dtypes, KernelDeterminism::BitExact};
}

}  // namespace volta::cpu
