// The linalg family on the CUDA backend (f32, f64): MatMul (numpy batching and broadcasting, 1-D
// operands promoted), Gemm (transA, transB, alpha, beta, C broadcast) and FusedMatMul (bias, or
// bias then Relu), all on the GEMM of kernels/linalg.cu. Selection, launch and each op's claim
// against the CPU backend.

#include <algorithm>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "../broadcast_geometry.h"
#include "../cuda_kernel.h"
#include "launch.h"

namespace volta::cuda {
namespace {

inline constexpr DTypeSet kFloats{DType::F32, DType::F64};

// numpy matmul: the dims before the last two (before the last one for a 1-D operand).
Shape batch_dims(const Shape& s) {
  const int matrix_rank = std::min(s.rank(), 2);
  return Shape(std::vector<int64_t>(s.dims().begin(), s.dims().end() - matrix_rank));
}

// A MatMul's problems, cut as the CPU backend cuts them: a 1-D A is a [1,K] row and a 1-D B a
// [K,1] column; when every batch multiplies the same B, A's batches stack into one tall problem
// (an element's value is the same either way).
struct MatmulProblems {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  MergedBroadcast batch;  // strides count matrices
};

MatmulProblems matmul_problems(const Shape& a, const Shape& b) {
  MatmulProblems p;
  p.k = a[a.rank() - 1];
  p.m = a.rank() >= 2 ? a[a.rank() - 2] : 1;
  p.n = b.rank() >= 2 ? b[b.rank() - 1] : 1;
  const Shape batch_a = batch_dims(a);
  const Shape batch_b = batch_dims(b);
  if (batch_b.numel() == 1) {
    p.m *= batch_a.numel();
    p.batch = {{1}, {0}, {0}};
  } else {
    p.batch = merge_broadcast(*broadcast_shapes(batch_a, batch_b), batch_a, batch_b);
  }
  return p;
}

BroadcastGeometry one_problem() { return *broadcast_geometry({{1}, {0}, {0}}); }

// Y = op(A) @ op(B) of one row-major [M,K] A and [K,N] B per problem.
template <class T>
GemmLaunch<T> row_major_launch(int64_t m, int64_t n, int64_t k, const ConstTensorView& a,
                               const ConstTensorView& b, const TensorView& y) {
  GemmLaunch<T> g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.a = a.as<T>();
  g.a_row_stride = k;
  g.a_col_stride = 1;
  g.b = b.as<T>();
  g.b_row_stride = n;
  g.b_col_stride = 1;
  g.y = y.as<T>();
  g.batch = one_problem();
  return g;
}

template <class T>
void launch(const GemmLaunch<T>& g, const CudaKernelArgs& args) {
  if constexpr (std::is_same_v<T, float>) {
    check_launch(launch_f32_gemm(g, args.stream), args.node);
  } else {
    check_launch(launch_f64_gemm(g, args.stream), args.node);
  }
}

template <class T>
void run_matmul(const CudaKernelArgs& args) {
  const TensorView& y = args.outputs[0];
  if (y.numel() == 0) return;
  const ConstTensorView& a = args.inputs[0];
  const ConstTensorView& b = args.inputs[1];
  const MatmulProblems p = matmul_problems(a.shape, b.shape);
  GemmLaunch<T> g = row_major_launch<T>(p.m, p.n, p.k, a, b, y);
  const std::optional<BroadcastGeometry> batch = broadcast_geometry(p.batch);
  if (!batch) {
    fail(ErrorCode::KernelFailure, "the batch has more merged dims than its selection allowed");
  }
  g.batch = *batch;
  launch(g, args);
}

// A is stored [M,K] ([K,M] with transA), B [K,N] ([N,K] with transB); C, when given,
// broadcasts to [M,N].
template <class T>
void run_gemm(const CudaKernelArgs& args) {
  const TensorView& y = args.outputs[0];
  if (y.numel() == 0) return;
  const ConstTensorView& a = args.inputs[0];
  const ConstTensorView& b = args.inputs[1];
  const AttrReader attrs(args.node);
  const bool trans_a = attrs.get_int("transA") != 0;
  const bool trans_b = attrs.get_int("transB") != 0;
  GemmLaunch<T> g;
  g.m = y.shape[0];
  g.n = y.shape[1];
  g.k = trans_a ? a.shape[0] : a.shape[1];
  g.a = a.as<T>();
  g.a_row_stride = trans_a ? 1 : g.k;
  g.a_col_stride = trans_a ? g.m : 1;
  g.b = b.as<T>();
  g.b_row_stride = trans_b ? 1 : g.n;
  g.b_col_stride = trans_b ? g.k : 1;
  g.y = y.as<T>();
  g.alpha = static_cast<T>(attrs.get_float("alpha"));
  g.beta = static_cast<T>(attrs.get_float("beta"));
  if (args.inputs.size() > 2 && args.inputs[2].data != nullptr) {
    const ConstTensorView& c = args.inputs[2];
    const std::vector<int64_t> c_strides = broadcast_strides(c.shape, y.shape);
    g.c = c.as<T>();
    g.c_row_stride = c_strides[0];
    g.c_col_stride = c_strides[1];
  }
  g.batch = one_problem();
  launch(g, args);
}

// Every row of Y (A's leading dims flattened) by B's columns, then the bias and activation.
template <class T, GemmEpilogueOp kEpilogue>
void run_fused_matmul(const CudaKernelArgs& args) {
  const TensorView& y = args.outputs[0];
  if (y.numel() == 0) return;
  const ConstTensorView& a = args.inputs[0];
  const ConstTensorView& b = args.inputs[1];
  const int64_t n = b.shape[1];
  GemmLaunch<T> g = row_major_launch<T>(y.numel() / n, n, a.shape[a.shape.rank() - 1], a, b, y);
  g.epilogue = kEpilogue;
  g.bias = args.inputs[2].as<T>();
  g.bias_first = AttrReader(args.node).get_int("bias_first") != 0;
  launch(g, args);
}

// One kernel per dtype, f32 first.
constexpr CudaKernel kMatMul[] = {{run_matmul<float>, "f32_matmul_cuda"},
                                  {run_matmul<double>, "f64_matmul_cuda"}};
constexpr CudaKernel kGemm[] = {{run_gemm<float>, "f32_gemm_cuda"},
                                {run_gemm<double>, "f64_gemm_cuda"}};
constexpr CudaKernel kFusedBias[] = {
    {run_fused_matmul<float, GemmEpilogueOp::Bias>, "f32_fused_matmul_cuda+bias"},
    {run_fused_matmul<double, GemmEpilogueOp::Bias>, "f64_fused_matmul_cuda+bias"}};
constexpr CudaKernel kFusedBiasRelu[] = {
    {run_fused_matmul<float, GemmEpilogueOp::BiasRelu>, "f32_fused_matmul_cuda+bias_relu"},
    {run_fused_matmul<double, GemmEpilogueOp::BiasRelu>, "f64_fused_matmul_cuda+bias_relu"}};

const CudaKernel& of_dtype(const CudaKernel (&kernels)[2], const CudaKernelQuery& query) {
  return kernels[query.inputs[0]->dtype == DType::F32 ? 0 : 1];
}

KernelSelection select_matmul(const CudaKernelQuery& query) {
  if (std::optional<KernelUnsupported> refused = refuse_dtype(query, kFloats)) return *refused;
  const Shape& a = query.inputs[0]->shape;
  const Shape& b = query.inputs[1]->shape;
  const MatmulProblems p = matmul_problems(a, b);
  if (!broadcast_geometry(p.batch)) {
    return KernelUnsupported{"MatMul of " + a.str() + " and " + b.str() + " broadcasts over " +
                             std::to_string(p.batch.dims.size()) +
                             " batch dims that cannot be merged; the CUDA kernel takes at most " +
                             std::to_string(kMaxBroadcastDims)};
  }
  return choice_of(of_dtype(kMatMul, query));
}

KernelSelection select_gemm(const CudaKernelQuery& query) {
  if (std::optional<KernelUnsupported> refused = refuse_dtype(query, kFloats)) return *refused;
  return choice_of(of_dtype(kGemm, query));
}

KernelSelection select_fused_matmul(const CudaKernelQuery& query) {
  if (std::optional<KernelUnsupported> refused = refuse_dtype(query, kFloats)) return *refused;
  const std::string& activation = AttrReader(query.node).get_string("activation");
  if (activation == "none") return choice_of(of_dtype(kFusedBias, query));
  if (activation == "relu") return choice_of(of_dtype(kFusedBiasRelu, query));
  return KernelUnsupported{"no CUDA kernel for FusedMatMul with activation '" + activation +
                           "' (supported: none, relu)"};
}

using E = CrossBackendExactness;
constexpr std::string_view kGemmOrder =
    "the CPU's micro-kernels' order (the same on every ISA): per element a running FMA sum over "
    "k in order within "
    "each K slice (f32 512 deep, f64 256), alpha * sum, then fma(beta, C, .) on the first slice "
    "and fma(1, Y, .) on each later one";
const CudaOpKernels kOps[] = {
    {{OpKind::MatMul, kFloats, E::BitwiseExceptNanPayload, kGemmOrder}, select_matmul},
    {{OpKind::Gemm, kFloats, E::BitwiseExceptNanPayload, kGemmOrder}, select_gemm},
    {{OpKind::FusedMatMul, kFloats, E::BitwiseExceptNanPayload,
      "MatMul's sums, then one IEEE add of the bias in the Add's operand order, then Relu's "
      "select; activations none and relu"},
     select_fused_matmul},
};

}  // namespace

std::span<const CudaOpKernels> linalg_op_kernels() { return kOps; }

}  // namespace volta::cuda
