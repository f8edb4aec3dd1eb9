// Einsum on the CUDA backend (f32, f64, i64, i32): a second list of OpFamily::Linalg beside
// linalg_ops.cpp, choosing as the CPU backend chooses (cpu/kernels/linalg_einsum.cpp). Two float
// operands contract as one batched GEMM: A packed into [batch, M, K] and B into [batch, K, N] in
// the workspace by label strides (launch_strided_copy), multiplied by the GEMM of
// kernels/linalg.cu (which sums as the CPU's micro-kernels do), and the product unpacked into
// the output's label order. Every other equation runs the label loop of kernels/linalg_einsum.cu.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "../broadcast_geometry.h"
#include "../cuda_kernel.h"
#include "launch.h"
#include "volta/ir/einsum.h"

namespace volta::cuda {
namespace {

inline constexpr DTypeSet kNumeric{DType::F32, DType::F64, DType::I64, DType::I32};

bool uses_gemm(DType dtype, size_t operands) {
  return operands == 2 && (dtype == DType::F32 || dtype == DType::F64);
}

int64_t aligned(int64_t bytes) { return (bytes + 255) / 256 * 256; }

// The workspace of the GEMM path: packed A, packed B, then the product when it is not the
// output, each part 256-byte aligned.
struct GemmWorkspace {
  int64_t a_offset = 0, b_offset = 0, product_offset = 0, bytes = 0;
};

GemmWorkspace gemm_workspace(const EinsumEquation& eq, const EinsumGemm& e, size_t element) {
  GemmWorkspace w;
  if (eq.output_shape().numel() == 0 || e.depth == 0) return w;
  const auto size = static_cast<int64_t>(element);
  w.b_offset = aligned(e.batches * e.rows * e.depth * size);
  w.product_offset = w.b_offset + aligned(e.batches * e.depth * e.cols * size);
  w.bytes =
      w.product_offset + (e.product_is_output ? 0 : aligned(eq.output_shape().numel() * size));
  return w;
}

// dst[i], i row-major over `labels`, = src[the sum over those labels of index * stride].
void gather_by_labels(const void* src, const std::vector<int>& labels,
                      const std::vector<int64_t>& label_strides, const EinsumEquation& eq,
                      void* dst, DType dtype, const CudaKernelArgs& args) {
  StridedCopyGeometry g;
  g.rank = static_cast<int>(labels.size());
  g.numel = 1;
  for (size_t d = 0; d < labels.size(); ++d) {
    g.dims[d] = eq.label_extent[static_cast<size_t>(labels[d])];
    g.src_strides[d] = label_strides[static_cast<size_t>(labels[d])];
    g.numel *= g.dims[d];
  }
  if (g.numel == 0) return;
  check_launch(launch_strided_copy(static_cast<int>(dtype_size(dtype)), g, src, dst, args.stream),
               args.node);
}

std::vector<Shape> shapes_of(std::span<const ConstTensorView> inputs) {
  std::vector<Shape> shapes;
  for (const ConstTensorView& in : inputs) shapes.push_back(in.shape);
  return shapes;
}

template <class T>
void einsum_gemm_run(const CudaKernelArgs& args, const EinsumEquation& eq) {
  const TensorView& out = args.outputs[0];
  const EinsumGemm e = einsum_gemm(eq);
  const GemmWorkspace w = gemm_workspace(eq, e, sizeof(T));
  auto* base = static_cast<std::byte*>(args.workspace.data);
  if (args.workspace.bytes < w.bytes) {
    fail(ErrorCode::KernelFailure,
         "node '" + args.node.name + "' (Einsum) was given less workspace than it declared");
  }
  T* a = reinterpret_cast<T*>(base + w.a_offset);
  T* b = reinterpret_cast<T*>(base + w.b_offset);
  const std::vector<Shape> shapes = shapes_of(args.inputs);
  const std::vector<int>& k = eq.summed_labels;
  gather_by_labels(args.inputs[0].data, joined_labels(e.batch, e.m, k),
                   eq.label_strides(0, shapes[0]), eq, a, out.dtype, args);
  gather_by_labels(args.inputs[1].data, joined_labels(e.batch, k, e.n),
                   eq.label_strides(1, shapes[1]), eq, b, out.dtype, args);
  T* product = e.product_is_output ? static_cast<T*>(out.data)
                                   : reinterpret_cast<T*>(base + w.product_offset);
  GemmLaunch<T> g;
  g.m = e.rows;
  g.n = e.cols;
  g.k = e.depth;
  g.a = a;
  g.a_row_stride = e.depth;
  g.a_col_stride = 1;
  g.b = b;
  g.b_row_stride = e.cols;
  g.b_col_stride = 1;
  g.y = product;
  const MergedBroadcast batch =
      e.batches == 1 ? MergedBroadcast{{1}, {0}, {0}} : MergedBroadcast{{e.batches}, {1}, {1}};
  g.batch = *broadcast_geometry(batch);
  if constexpr (std::is_same_v<T, float>) {
    check_launch(launch_f32_gemm(g, args.stream), args.node);
  } else {
    check_launch(launch_f64_gemm(g, args.stream), args.node);
  }
  if (!e.product_is_output) {
    gather_by_labels(product, eq.output_labels,
                     einsum_packed_strides(joined_labels(e.batch, e.m, e.n), eq), eq, out.data,
                     out.dtype, args);
  }
}

void einsum_loop_run(const CudaKernelArgs& args, const EinsumEquation& eq) {
  const std::vector<Shape> shapes = shapes_of(args.inputs);
  EinsumLoop loop;
  loop.operands = static_cast<int>(args.inputs.size());
  loop.numel = args.outputs[0].numel();
  const Shape out_shape = eq.output_shape();
  loop.out_rank = out_shape.rank();
  loop.summed = static_cast<int>(eq.summed_labels.size());
  for (int a = 0; a < loop.out_rank; ++a) loop.out_dims[a] = out_shape[a];
  for (int d = 0; d < loop.summed; ++d) {
    loop.summed_extents[d] =
        eq.label_extent[static_cast<size_t>(eq.summed_labels[static_cast<size_t>(d)])];
    loop.summed_count *= loop.summed_extents[d];
  }
  for (int k = 0; k < loop.operands; ++k) {
    loop.data[k] = args.inputs[static_cast<size_t>(k)].data;
    const std::vector<int64_t> strides = eq.label_strides(k, shapes[static_cast<size_t>(k)]);
    for (int a = 0; a < loop.out_rank; ++a) {
      loop.out_strides[k][a] =
          strides[static_cast<size_t>(eq.output_labels[static_cast<size_t>(a)])];
    }
    for (int d = 0; d < loop.summed; ++d) {
      loop.summed_strides[k][d] =
          strides[static_cast<size_t>(eq.summed_labels[static_cast<size_t>(d)])];
    }
  }
  check_launch(launch_einsum_loop(element_type(args.outputs[0].dtype), loop, args.outputs[0].data,
                                  args.stream),
               args.node);
}

void einsum(const CudaKernelArgs& args) {
  const TensorView& out = args.outputs[0];
  if (out.numel() == 0) return;
  const EinsumEquation eq =
      parse_einsum_equation(AttrReader(args.node).get_string("equation"), shapes_of(args.inputs));
  if (einsum_extent(eq.summed_labels, eq) == 0) {  // an empty sum: every output is 0
    check_launch(
        cudaMemsetAsync(out.data, 0, static_cast<size_t>(out.numel()) * dtype_size(out.dtype),
                        args.stream),
        args.node);
    return;
  }
  if (!uses_gemm(out.dtype, args.inputs.size())) return einsum_loop_run(args, eq);
  if (out.dtype == DType::F32) return einsum_gemm_run<float>(args, eq);
  einsum_gemm_run<double>(args, eq);
}

constexpr CudaKernel kGemm[] = {{einsum, "f32_einsum_pack_gemm_cuda"},
                                {einsum, "f64_einsum_pack_gemm_cuda"}};
// f32, f64, i64, i32.
constexpr CudaKernel kLoop[] = {{einsum, "f32_einsum_label_loop_cuda"},
                                {einsum, "f64_einsum_label_loop_cuda"},
                                {einsum, "i64_einsum_label_loop_cuda"},
                                {einsum, "i32_einsum_label_loop_cuda"}};

size_t numeric_slot(DType dtype) {
  return dtype == DType::F32 ? 0 : dtype == DType::F64 ? 1 : dtype == DType::I64 ? 2 : 3;
}

std::string too_many(const std::string& what, size_t count, int most) {
  return "Einsum with " + std::to_string(count) + " " + what + " has no CUDA kernel (at most " +
         std::to_string(most) + ")";
}

KernelSelection select_einsum(const CudaKernelQuery& query) {
  if (auto refused = refuse_dtype(query, kNumeric)) return *refused;
  const DType dtype = query.inputs[0]->dtype;
  if (query.inputs.size() > static_cast<size_t>(kMaxEinsumOperands)) {
    return KernelUnsupported{too_many("operands", query.inputs.size(), kMaxEinsumOperands)};
  }
  std::vector<Shape> shapes;
  for (const std::optional<TypeInfo>& in : query.inputs) shapes.push_back(in->shape);
  const EinsumEquation eq =
      parse_einsum_equation(AttrReader(query.node).get_string("equation"), shapes);
  if (uses_gemm(dtype, query.inputs.size())) {
    const EinsumGemm e = einsum_gemm(eq);
    const std::vector<int>& k = eq.summed_labels;
    for (const std::vector<int>& labels :
         {joined_labels(e.batch, e.m, k), joined_labels(e.batch, k, e.n), eq.output_labels}) {
      if (labels.size() > static_cast<size_t>(kMaxCopyAxes)) {
        return KernelUnsupported{
            too_many("labels in an operand or the output", labels.size(), kMaxCopyAxes)};
      }
    }
    return choice_of(kGemm[dtype == DType::F32 ? 0 : 1],
                     gemm_workspace(eq, e, dtype_size(dtype)).bytes);
  }
  if (eq.output_labels.size() > static_cast<size_t>(kMaxEinsumLabels)) {
    return KernelUnsupported{too_many("output axes", eq.output_labels.size(), kMaxEinsumLabels)};
  }
  if (eq.summed_labels.size() > static_cast<size_t>(kMaxEinsumLabels)) {
    return KernelUnsupported{too_many("summed labels", eq.summed_labels.size(), kMaxEinsumLabels)};
  }
  return choice_of(kLoop[numeric_slot(dtype)]);
}

using E = CrossBackendExactness;
const CudaOpKernels kOps[] = {
    {{OpKind::Einsum, kNumeric, E::BitwiseExceptNanPayload,
      "chosen as on the CPU: two float operands packed and multiplied on the GEMM that sums as "
      "the CPU's micro-kernels; otherwise the CPU's label loop, its products and sums in its "
      "order (no FMA), integers wrapping"},
     select_einsum},
};

}  // namespace

std::span<const CudaOpKernels> linalg_einsum_op_kernels() { return kOps; }

}  // namespace volta::cuda
