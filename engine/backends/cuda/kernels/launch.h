#pragma once
// The seam between the CUDA backend's host code (C++20, compiled by the host compiler) and its
// kernels (.cu, compiled by nvcc): plain structs and launch functions, no Volta header, so the
// .cu files stay small to compile. Each launch function enqueues its kernel on `stream` and
// returns the launch's status (cudaGetLastError); a kernel's own failure shows at the next
// synchronisation.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace volta::cuda {

// ---- Elementwise and activation (kernels/elementwise.cu, kernels/activation.cu) ----

// Merged broadcast dims of a binary op, outermost first (broadcast_geometry.h builds it).
inline constexpr int kMaxBroadcastDims = 6;
struct BroadcastGeometry {
  int rank = 0;
  int64_t dims[kMaxBroadcastDims] = {};
  int64_t a_strides[kMaxBroadcastDims] = {};  // in elements; 0 where A is broadcast
  int64_t b_strides[kMaxBroadcastDims] = {};
  int64_t numel = 0;
  // One merged dim that both operands walk element by element: same shapes, or shapes that
  // only differ by leading 1s.
  bool contiguous() const { return rank == 1 && a_strides[0] == 1 && b_strides[0] == 1; }
};

// Mod: the sign of b (numpy.mod, ONNX fmod=0); Fmod: C fmod, the sign of a (fmod=1).
enum class BinaryOp : int { Add, Sub, Mul, Div, Min, Max, PRelu, Mod, Fmod };
// Relu is the activation family's; its f64 / integer kernels are elementwise_typed.cu's.
enum class UnaryOp : int { Neg, Abs, Sqrt, Exp, Log, Reciprocal, Floor, Ceil, Round, Sign, Relu };
enum class ActivationOp : int {
  Relu,
  Tanh,
  Sigmoid,
  Erf,
  Gelu,
  GeluTanh,
  LeakyRelu,
  Elu,
  Selu,
  Celu,
  HardSigmoid,
  HardSwish,
  Softplus,
  Softsign,
  ThresholdedRelu,
  Shrink,
};
// An activation's attributes as the CPU converts them to f32 (unused ones 0): alpha; Selu's
// gamma, HardSigmoid's beta or Shrink's bias in `beta`; Shrink's lambd in `lambd`.
struct ActivationParams {
  float alpha = 0.0f;
  float beta = 0.0f;
  float lambd = 0.0f;
};

// y = op(a, b) over the geometry's elements (numel > 0).
cudaError_t launch_f32_binary(BinaryOp op, const BroadcastGeometry& geometry, const float* a,
                              const float* b, float* y, cudaStream_t stream);
// y[i] = op(x[i]) for i in [0, n), n > 0; y may be x.
cudaError_t launch_f32_unary(UnaryOp op, const float* x, float* y, int64_t n, cudaStream_t stream);
cudaError_t launch_f32_activation(ActivationOp op, const ActivationParams& params, const float* x,
                                  float* y, int64_t n, cudaStream_t stream);

// ---- Conversion: Cast, Where, Clip (kernels/conversion.cu) ----

// The element types of Cast, one per DType (bool: one byte, 0 or nonzero).
enum class ElementType : int { F32, F64, I32, I64, Bool };

// y[i] = x[i] converted as the CPU's Cast converts it, for i in [0, n), n > 0. Float to
// integer conversions truncate toward zero and are only defined for values whose truncation
// fits: launch_find_unconvertible first.
cudaError_t launch_cast(ElementType from, ElementType to, const void* x, void* y, int64_t n,
                        cudaStream_t stream);
// Lowers *first_bad (which the caller sets to all ones) to the smallest i < n whose float
// x[i] (F32 or F64) does not truncate into the integer type `to` (I32 or I64): NaN, an
// infinity, or out of range, by the CPU's truncation_fits comparisons in double.
cudaError_t launch_find_unconvertible(ElementType from, ElementType to, const void* x, int64_t n,
                                      unsigned long long* first_bad, cudaStream_t stream);

// Where's three operands (condition, x, y) broadcast to the output: merged dims, outermost
// first, and each operand's element stride per dim (0 where it is broadcast).
inline constexpr int kWhereOperands = 3;
struct TernaryGeometry {
  int rank = 0;
  int64_t dims[kMaxBroadcastDims] = {};
  int64_t strides[kWhereOperands][kMaxBroadcastDims] = {};
  int64_t numel = 0;
};
// out = condition != 0 ? x : y, elements of `element_bytes` (1, 4 or 8) bytes copied as they are.
cudaError_t launch_where(int element_bytes, const TernaryGeometry& geometry,
                         const uint8_t* condition, const void* x, const void* y, void* out,
                         cudaStream_t stream);

// y = min(max(x, lower), upper) by selects, as the CPU's Clip: NaN passes.
cudaError_t launch_f32_clip(float lower, float upper, const float* x, float* y, int64_t n,
                            cudaStream_t stream);
// The same in f64 (the bounds in `f64`) or an integer type (the bounds in `integer`, already
// in the type's range).
struct ClipBounds {
  double f64[2] = {0, 0};
  int64_t integer[2] = {0, 0};
};
cudaError_t launch_typed_clip(ElementType type, const ClipBounds& bounds, const void* x, void* y,
                              int64_t n, cudaStream_t stream);

// ---- Movement (kernels/movement.cu) ----
// Reshapes, Transpose, Slice, Expand, Concat, Split, Gather: pure data movement, elements of
// `element_bytes` (1, 4 or 8) bytes copied as they are.

// Output element i (row-major over dims) reads the source at
// src_offset + sum over axes of index * src_stride (strides in elements, may be 0 or negative).
inline constexpr int kMaxCopyAxes = 8;
struct StridedCopyGeometry {
  int rank = 0;
  int64_t dims[kMaxCopyAxes] = {};
  int64_t src_strides[kMaxCopyAxes] = {};
  int64_t src_offset = 0;
  int64_t numel = 0;
};
cudaError_t launch_strided_copy(int element_bytes, const StridedCopyGeometry& geometry,
                                const void* src, void* dst, cudaStream_t stream);

// A block of rows x cols elements: dst[dst_start + r * dst_row + c] = src[src_start + r *
// src_row + c] (Concat and Split move each piece's segment of every row this way).
struct BlockCopy {
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t src_start = 0;
  int64_t src_row = 0;
  int64_t dst_start = 0;
  int64_t dst_row = 0;
};
cudaError_t launch_block_copy(int element_bytes, const BlockCopy& block, const void* src, void* dst,
                              cudaStream_t stream);

// Gather's index check: lowers *first_bad (which the caller sets to all ones) to the smallest
// position i < n whose index (4- or 8-byte signed) is outside [-dim, dim). An integer minimum:
// the result does not depend on the launch.
cudaError_t launch_find_bad_index(int index_bytes, const void* indices, int64_t n, int64_t dim,
                                  unsigned long long* first_bad, cudaStream_t stream);
// out[o, k, c] = data[o, indices[k] (+ dim when negative), c] over [outer, num_indices, inner];
// the indices are in range (checked first).
struct GatherGeometry {
  int64_t outer = 0;
  int64_t dim = 0;
  int64_t num_indices = 0;
  int64_t inner = 0;
};
cudaError_t launch_gather(int element_bytes, int index_bytes, const GatherGeometry& geometry,
                          const void* data, const void* indices, void* out, cudaStream_t stream);

// ---- Logical: comparisons, boolean ops, IsNaN / IsInf (kernels/logical.cu) ----
// Bool results are one byte, 0 or 1; a bool operand's nonzero byte reads as true.

enum class CompareOp : int { Equal, Less, Greater, LessOrEqual, GreaterOrEqual };
// y = a op b over the geometry's elements (numel > 0), a and b of `type`.
cudaError_t launch_compare(CompareOp op, ElementType type, const BroadcastGeometry& geometry,
                           const void* a, const void* b, uint8_t* y, cudaStream_t stream);
enum class BoolOp : int { And, Or, Xor };
cudaError_t launch_bool_binary(BoolOp op, const BroadcastGeometry& geometry, const uint8_t* a,
                               const uint8_t* b, uint8_t* y, cudaStream_t stream);
cudaError_t launch_not(const uint8_t* x, uint8_t* y, int64_t n, cudaStream_t stream);
// IsNaN (is_nan), else IsInf of the infinities it detects; x of type F32 or F64.
struct ClassifyParams {
  bool is_nan = false;
  bool detect_positive = false;
  bool detect_negative = false;
};
cudaError_t launch_classify(const ClassifyParams& params, ElementType type, const void* x,
                            uint8_t* y, int64_t n, cudaStream_t stream);

// ---- Elementwise in f64, i32 and i64 (kernels/elementwise_typed.cu) ----
// The exact ops of the CPU's f64 and integer kernels: IEEE double arithmetic rounded to
// nearest, integer arithmetic wrapping (in the unsigned type of the same width), selects.

// y = op(a, b) over the geometry (numel > 0), all of `type` (F64, I32 or I64); Add Sub Mul Div
// Min Max Mod Fmod. Integer Div truncates toward zero (lowest / -1 wraps); integer divisors
// (Div, Mod, Fmod) must be nonzero: launch_find_zero_divisor first.
cudaError_t launch_typed_binary(BinaryOp op, ElementType type, const BroadcastGeometry& geometry,
                                const void* a, const void* b, void* y, cudaStream_t stream);
// Lowers *first_zero (set to all ones by the caller) to the first output element whose
// divisor b (I32 or I64) is 0.
cudaError_t launch_find_zero_divisor(ElementType type, const BroadcastGeometry& geometry,
                                     const void* b, unsigned long long* first_zero,
                                     cudaStream_t stream);
// y[i] = op(x[i]) for i in [0, n), n > 0; Neg Abs Sign Relu (F64, I32, I64), Sqrt Reciprocal
// Floor Ceil Round (F64).
cudaError_t launch_typed_unary(UnaryOp op, ElementType type, const void* x, void* y, int64_t n,
                               cudaStream_t stream);

// cudaSuccess when the current device can load this binary's kernels; otherwise why not
// (cudaErrorNoKernelImageForDevice when the build has no code for its architecture).
cudaError_t kernel_image_status();

// ---- Linalg (kernels/linalg.cu) ----

// Y = alpha * op(A) @ op(B) + beta * C over a batch of problems, each output element computed
// as the CPU backend's FMA micro-kernels compute it (engine/backends/cpu/kernels/
// linalg_gemm_micro_kernels.h): K cut into slices of kGemmSlice<T> from 0; within a slice one
// running FMA sum from +0 over k in order; the first slice stores alpha * sum (then
// fma(beta, C, that) when there is a C), each later one fma(1, Y, alpha * sum). The slice is
// every CPU micro-kernel's kc for the type (the same on every ISA).
template <class T>
inline constexpr int64_t kGemmSlice = sizeof(T) == 4 ? 512 : 256;

// What FusedMatMul adds after the full sum: the bias (bias + y when bias_first, else y + bias,
// one IEEE add), then the activation.
enum class GemmEpilogueOp : int { None, Bias, BiasRelu };

template <class T>
struct GemmLaunch {
  int64_t m = 0;  // rows of each problem's op(A) and Y
  int64_t n = 0;  // columns of op(B) and Y
  int64_t k = 0;
  // Element (i, p) of op(A) is a[i * a_row_stride + p * a_col_stride]; (p, j) of op(B) is
  // b[p * b_row_stride + j * b_col_stride] (transposes swap the strides).
  const T* a = nullptr;
  int64_t a_row_stride = 0;
  int64_t a_col_stride = 0;
  const T* b = nullptr;
  int64_t b_row_stride = 0;
  int64_t b_col_stride = 0;
  const T* c = nullptr;  // nullptr: no beta * C term; strides 0 where C broadcasts
  int64_t c_row_stride = 0;
  int64_t c_col_stride = 0;
  T* y = nullptr;  // each problem's Y is m x n, row-major, problem after problem
  T alpha = 1;
  T beta = 0;
  // The problems: the batch dims merged as for a broadcast (the strides count matrices of A,
  // of m x k, and of B, of k x n); one problem is one dim of 1.
  BroadcastGeometry batch;
  GemmEpilogueOp epilogue = GemmEpilogueOp::None;
  const T* bias = nullptr;  // [n], for the Bias epilogues
  bool bias_first = false;
};

// Enqueues the GEMM (m, n >= 1; k >= 0; batch.numel >= 1).
cudaError_t launch_f32_gemm(const GemmLaunch<float>& g, cudaStream_t stream);
cudaError_t launch_f64_gemm(const GemmLaunch<double>& g, cudaStream_t stream);
// ---- Reduction and normalization (kernels/reduction.cu, kernels/normalization.cu) ----
// Both follow the CPU backend's fixed tree (cpu/kernels/reduce_tree.h): a row is cut into
// leaves of kTreeLeaf elements, element i of a leaf goes to lane i % kTreeLanes in index order,
// the lanes combine pairwise, then the leaves pairwise level by level. The tree is the row's
// length alone; which threads compute which leaf never changes a bit.

inline constexpr int64_t kTreeLeaf = 4096;  // the CPU's kReductionChunk
inline constexpr int kTreeLanes = 8;        // the CPU's kReductionLanes

// A Reduce*'s input as the CPU's ReduceLayout sees it: size-1 axes dropped, neighbouring axes
// of the same kind merged, kept and reduced extents outermost first. Output o's row starts at
// offset(kept, o); its element i sits offset(reduced, i) further (row-major in both).
inline constexpr int kMaxReduceExtents = 8;
struct ReduceExtents {
  int rank = 0;
  int64_t sizes[kMaxReduceExtents] = {};
  int64_t strides[kMaxReduceExtents] = {};  // in elements of the input
};
struct ReduceGeometry {
  ReduceExtents kept;
  ReduceExtents reduced;
  int64_t outputs = 1;
  int64_t row_length = 1;
  // Leaves per row; an empty row counts one (empty) leaf, which finishes from the identity.
  int64_t leaves() const {
    return row_length <= kTreeLeaf ? 1 : (row_length + kTreeLeaf - 1) / kTreeLeaf;
  }
};

enum class ReduceOp : int { Sum, Mean, Max, Min, Prod, SumSquare, L1, L2 };
enum class ReduceType : int { F32, F64, I32, I64 };

// Bytes of one leaf's partial result (the op's accumulator: f32, double, or a scaled product).
int64_t reduce_partial_bytes(ReduceOp op, ReduceType type);
// Scratch the launch needs: a partial per (leaf, output) when rows span several leaves.
inline int64_t reduce_workspace_bytes(ReduceOp op, ReduceType type, const ReduceGeometry& g) {
  return g.leaves() > 1 ? g.leaves() * g.outputs * reduce_partial_bytes(op, type) : 0;
}
// y[o] = the op over output o's row, for every o (outputs > 0); workspace as sized above.
cudaError_t launch_reduce(ReduceOp op, ReduceType type, const ReduceGeometry& geometry,
                          const void* x, void* y, void* workspace, cudaStream_t stream);

// Rows of `length` elements: row r = outer * inner + i holds x[(outer * length + a) * inner + i]
// for a in [0, length).
struct RowGeometry {
  int64_t rows = 0;
  int64_t length = 0;
  int64_t inner = 1;
};

// ArgMax (max) or ArgMin along each line of `lines` (length > 0), each line scanned in index
// order as on the CPU: NaN counts as the extreme and the first NaN wins; select_last: the last
// of equals (or NaNs). Type F32 ... I64.
cudaError_t launch_arg_extreme(bool max, bool select_last, ReduceType type,
                               const RowGeometry& lines, const void* x, int64_t* indices,
                               cudaStream_t stream);
// CumSum along each line in index order (reverse: from the end), f32 summed in double, integers
// wrapping; exclusive: each output is the sum before its element.
cudaError_t launch_cumsum(ReduceType type, const RowGeometry& lines, bool exclusive, bool reverse,
                          const void* x, void* y, cudaStream_t stream);
// Hardmax (F32, F64): 1 at the first maximum of each line (the first NaN if any), 0 elsewhere.
cudaError_t launch_hardmax(ReduceType type, const RowGeometry& lines, const void* x, void* y,
                           cudaStream_t stream);

// Softmax of every row, f32 (y may be x).
cudaError_t launch_f32_softmax(const RowGeometry& rows, const float* x, float* y,
                               cudaStream_t stream);

// (x - mean) * inv_std * scale + bias over each row (inner 1), mean and biased variance by the
// tree, inv_std = 1 / sqrt(variance + epsilon). Row element i reads scale and bias (bias may be
// null) where `operands` (the row's dims; a: scale, b: bias) puts it, or with `channels` > 0
// element r % channels for row r (InstanceNormalization). mean / inv_std (may be null) get one
// value per row.
template <class T>
struct RowNormalization {
  const T* x = nullptr;
  const T* scale = nullptr;
  const T* bias = nullptr;
  T* y = nullptr;
  T* mean = nullptr;
  T* inv_std = nullptr;
  T epsilon = 0;
  int64_t channels = 0;
  BroadcastGeometry operands;
};
cudaError_t launch_normalize_rows(const RowGeometry& rows, const RowNormalization<float>& args,
                                  cudaStream_t stream);
cudaError_t launch_normalize_rows(const RowGeometry& rows, const RowNormalization<double>& args,
                                  cudaStream_t stream);
// Writes the quiet NaN (the CPU's quiet_NaN()) to y[0, n).
cudaError_t launch_fill_quiet_nan(float* y, int64_t n, cudaStream_t stream);
cudaError_t launch_fill_quiet_nan(double* y, int64_t n, cudaStream_t stream);

// MeanVarianceNormalization: each output of `groups` (the kept extents) is a group, its
// members the reduced extents in row-major order; mean and biased variance in double by the
// tree, y = (x - mean) / (sqrt(variance) + epsilon) in double, rounded to T.
cudaError_t launch_mean_variance_normalization(const ReduceGeometry& groups, const float* x,
                                               float* y, double epsilon, cudaStream_t stream);
cudaError_t launch_mean_variance_normalization(const ReduceGeometry& groups, const double* x,
                                               double* y, double epsilon, cudaStream_t stream);

// BatchNormalization (inference) over planes of `plane` elements, channel p % channels:
// y = (x - mean[c]) * (1 / sqrt(var[c] + epsilon)) * scale[c] + bias[c].
template <class T>
struct BatchNormArgs {
  const T* x = nullptr;
  const T* scale = nullptr;
  const T* bias = nullptr;
  const T* mean = nullptr;
  const T* var = nullptr;
  T* y = nullptr;
  T epsilon = 0;
  int64_t channels = 1;
  int64_t plane = 0;
  int64_t numel = 0;
};
cudaError_t launch_batch_norm(const BatchNormArgs<float>& args, cudaStream_t stream);
cudaError_t launch_batch_norm(const BatchNormArgs<double>& args, cudaStream_t stream);

// ---- Pooling and convolution (kernels/pooling.cu, kernels/convolution.cu) ----
// Both run 1-D and 2-D problems as 3-D ones with leading spatial dims of size 1, as the CPU
// backend does; spatial_geometry.h builds the geometries from a node. One thread computes one
// output element whole (kernels/spatial_element.h says how), so no value depends on the launch.

inline constexpr int kSpatialDims = 3;

// A windowed pool over planes (N * C) of in[0] x in[1] x in[2] elements; pad_begin / pad_end are
// the node's pads, the output dims its Y's (ceil_mode is already in them).
struct PoolGeometry {
  int64_t planes = 0;
  int64_t in[kSpatialDims] = {1, 1, 1};
  int64_t out[kSpatialDims] = {1, 1, 1};
  int64_t kernel[kSpatialDims] = {1, 1, 1};
  int64_t stride[kSpatialDims] = {1, 1, 1};
  int64_t dilation[kSpatialDims] = {1, 1, 1};
  int64_t pad_begin[kSpatialDims] = {0, 0, 0};
  int64_t pad_end[kSpatialDims] = {0, 0, 0};
};

// MaxPool; AveragePool dividing by the input taps or (IncludePad) by the window positions inside
// the padded input; LpPool with p = 1 or 2.
enum class PoolOp : int { Max, Average, AverageIncludePad, L1, L2 };
// GlobalMaxPool, GlobalAveragePool, GlobalLpPool with p = 1 or 2.
enum class GlobalPoolOp : int { Max, Average, L1, L2 };

// y (and for Max, when not null, the flat index into x of each maximum; column_major: the
// storage_order 1 index) for every output of g (g.planes * out elements > 0).
struct PoolLaunch {
  PoolOp op = PoolOp::Max;
  PoolGeometry geometry;
  int64_t* indices = nullptr;
  bool column_major = false;
};
cudaError_t launch_pool(const PoolLaunch& p, const float* x, float* y, cudaStream_t stream);
cudaError_t launch_pool(const PoolLaunch& p, const double* x, double* y, cudaStream_t stream);
// y[p] = the op over plane p of `plane_size` elements (planes > 0, plane_size > 0).
cudaError_t launch_global_pool(GlobalPoolOp op, int64_t planes, int64_t plane_size, const float* x,
                               float* y, cudaStream_t stream);
cudaError_t launch_global_pool(GlobalPoolOp op, int64_t planes, int64_t plane_size, const double* x,
                               double* y, cudaStream_t stream);

// Conv's and ConvTranspose's shapes: X [batch, channels_in, in...], Y [batch, channels_out,
// out...], W's spatial dims the kernel; pad: the begin pads (the end pads are in the output dims).
struct ConvGeometry {
  int64_t batch = 0;
  int64_t channels_in = 0;
  int64_t channels_out = 0;
  int64_t group = 1;
  int64_t in[kSpatialDims] = {1, 1, 1};
  int64_t out[kSpatialDims] = {1, 1, 1};
  int64_t kernel[kSpatialDims] = {1, 1, 1};
  int64_t stride[kSpatialDims] = {1, 1, 1};
  int64_t dilation[kSpatialDims] = {1, 1, 1};
  int64_t pad[kSpatialDims] = {0, 0, 0};
  // Conv or ConvGradFilter whose groups each read one input channel (group == channels_in > 1):
  // the CPU's direct kernel (multiply, then add) rather than its GEMM (FMA).
  bool depthwise = false;
  // ConvGradFilter's GEMM path: the images of one GEMM call (the CPU's images_per_step).
  int64_t images_per_step = 1;
};

template <class T>
struct ConvLaunch {
  ConvGeometry geometry;
  const T* x = nullptr;
  const T* w = nullptr;
  const T* bias = nullptr;  // null: no B
  T* y = nullptr;
};
// Every element of Y (batch * channels_out * out elements > 0).
cudaError_t launch_conv(const ConvLaunch<float>& c, cudaStream_t stream);
cudaError_t launch_conv(const ConvLaunch<double>& c, cudaStream_t stream);
cudaError_t launch_conv_transpose(const ConvLaunch<float>& c, cudaStream_t stream);
cudaError_t launch_conv_transpose(const ConvLaunch<double>& c, cudaStream_t stream);
// ConvGradFilter: x is X, w is dY, y is dW [channels_out, channels_in / group, kernel...]
// (more than 0 elements); `geometry` takes dY's spatial dims as its output and dW's as the kernel.
cudaError_t launch_conv_grad_filter(const ConvLaunch<float>& c, cudaStream_t stream);
cudaError_t launch_conv_grad_filter(const ConvLaunch<double>& c, cudaStream_t stream);
// ---- Indexing (kernels/indexing.cu) ----
// GatherElements GatherND ScatterElements ScatterND Trilu OneHot TopK as the CPU's
// cpu/kernels/indexing.cpp computes them. Elements of `element_bytes` (1, 4 or 8) bytes are
// copied as they are; indices are 4- or 8-byte signed integers, checked first
// (launch_find_bad_tuple_index) and negative ones counting from the end.

// Data ranks (and index tuple lengths) the indexing kernels take.
inline constexpr int kMaxIndexRank = 8;

// Index tuples of k components: component j indexes a data axis of extent dims[j] and stride
// strides[j] (GatherElements and ScatterElements: k = 1). GatherND's tuple t reads batch
// t / tuples_per_batch (batch_stride elements apart); each tuple names a slice of `slice`
// contiguous elements.
struct IndexTuples {
  int k = 1;
  int64_t dims[kMaxIndexRank] = {};
  int64_t strides[kMaxIndexRank] = {};
  int64_t tuples = 0;
  int64_t tuples_per_batch = 1;
  int64_t batch_stride = 0;
  int64_t slice = 1;
};
// Lowers *first_bad (set to all ones by the caller) to the smallest flat position p of the
// tuples.tuples * tuples.k indices whose value is outside [-dims[p % k], dims[p % k]).
cudaError_t launch_find_bad_tuple_index(int index_bytes, const IndexTuples& tuples,
                                        const void* indices, unsigned long long* first_bad,
                                        cudaStream_t stream);

// GatherElements / ScatterElements: indices (and updates) of `index_dims`, row-major; data's
// strides per axis; the axis the indices replace, of extent `dim`.
struct ElementsGeometry {
  int rank = 0;
  int axis = 0;
  int64_t index_dims[kMaxIndexRank] = {};
  int64_t data_strides[kMaxIndexRank] = {};
  int64_t dim = 0;
  int64_t numel = 0;  // of indices (> 0)
};
cudaError_t launch_gather_elements(int element_bytes, int index_bytes, const ElementsGeometry& g,
                                   const void* data, const void* indices, void* out,
                                   cudaStream_t stream);
// out[t * slice + c] = data[(t / tuples_per_batch) * batch_stride + offset(tuple t) + c] for
// every tuple t and c < slice (tuples * slice > 0).
cudaError_t launch_gather_nd(int element_bytes, int index_bytes, const IndexTuples& tuples,
                             const void* data, const void* indices, void* out, cudaStream_t stream);

// The scatters' combination of an output element with an update: assignment, or the CPU's
// +=, *= (floats in their type, integers wrapping), max or min (NaN propagating; bool assigns
// whatever the reduction).
enum class ScatterReduction : int { None, Add, Mul, Max, Min };
// `out` already holds data. One thread per line along the axis applies the line's updates in
// index order, as the CPU does: distinct lines write distinct elements, so no element's
// updates race, and each arrives in the CPU's order.
cudaError_t launch_scatter_elements(ElementType type, int index_bytes, ScatterReduction reduction,
                                    const ElementsGeometry& g, const void* indices,
                                    const void* updates, void* out, cudaStream_t stream);
// `out` already holds data. One thread per slice column c applies every tuple's update to
// column c of its slice, tuple after tuple in index order, as the CPU's column tasks do.
cudaError_t launch_scatter_nd(ElementType type, int index_bytes, ScatterReduction reduction,
                              const IndexTuples& tuples, const void* indices, const void* updates,
                              void* out, cudaStream_t stream);
// Reduction "none" with long runs of updates per thread: the last update of each element (in
// index order, as the CPU applies them) found by an integer atomicMax over update positions in
// `last` (8 bytes per data element for ScatterElements, per slice of data for ScatterND), then
// written alone; elements copied as they are. `out` already holds data.
inline constexpr int64_t kSerialScatterUpdates = 64;  // longer runs go by last writer
cudaError_t launch_scatter_elements_last_writer(int element_bytes, int index_bytes,
                                                const ElementsGeometry& g, const void* indices,
                                                const void* updates, void* out, long long* last,
                                                int64_t last_slots, cudaStream_t stream);
cudaError_t launch_scatter_nd_last_writer(int element_bytes, int index_bytes,
                                          const IndexTuples& tuples, const void* indices,
                                          const void* updates, void* out, long long* last,
                                          int64_t last_slots, cudaStream_t stream);

// Trilu over matrices of rows x cols (numel > 0 elements in all): row i keeps columns
// [clamp(i + k, 0, cols), cols) (upper) or [0, clamp(i + k + 1, 0, cols)) (lower), the rest
// become zero bits. k is already clamped to [-(rows + cols), rows + cols].
struct TriluGeometry {
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t k = 0;
  bool upper = true;
  int64_t numel = 0;
};
cudaError_t launch_trilu(int element_bytes, const TriluGeometry& g, const void* x, void* y,
                         cudaStream_t stream);

// OneHot: the output is [outer, depth, inner] (numel > 0), indices [outer, inner] of
// `index_type` (F32, F64, I32, I64); values (device memory) holds off, on.
struct OneHotGeometry {
  int64_t depth = 1;
  int64_t inner = 1;
  int64_t numel = 0;
};
cudaError_t launch_one_hot(int element_bytes, ElementType index_type, const OneHotGeometry& g,
                           const void* indices, const void* values, void* out, cudaStream_t stream);

// TopK along lines of n elements (row r = o * inner + i starts at o * n * inner + i, stride
// inner): element j of a line goes to output position rank(j) when rank(j) < k, rank(j) being
// the number of the line's elements ranked before it by the CPU's strict order (larger first,
// or smaller; NaN above every number; equal values by index). Type F32, F64, I32, I64;
// rows * n > 0.
struct TopKGeometry {
  int64_t rows = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t inner = 1;
  bool largest = true;
};
cudaError_t launch_top_k(ElementType type, const TopKGeometry& g, const void* x, void* values,
                         int64_t* indices, cudaStream_t stream);

// ---- Loss (kernels/loss.cu) ----
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss as the CPU's cpu/kernels/loss.cpp: the
// input [N, C, D] against N * D labels (4- or 8-byte signed), each sample's loss formed in
// double, -log_prob[n, label, d] (times weight[label] when there are weights), 0 for the
// ignored label; "sum" and "mean" add the samples' losses (and the weights) in double over the
// fixed tree (kTreeLeaf, kTreeLanes).

struct LossGeometry {
  int64_t classes = 1;  // C
  int64_t inner = 1;    // D
  int64_t samples = 0;  // N * D
  bool has_ignore = false;
  int64_t ignore = 0;
  // Leaves of the samples' tree (an empty row counts one, empty leaf).
  int64_t leaves() const {
    return samples <= kTreeLeaf ? 1 : (samples + kTreeLeaf - 1) / kTreeLeaf;
  }
};
enum class LossReduction : int { None, Sum, Mean };
enum class LossType : int { F32, F64 };

// Lowers *first_bad (set to all ones by the caller) to the first sample whose label is outside
// [0, classes) and not the ignored one.
cudaError_t launch_find_bad_label(int label_bytes, const LossGeometry& g, const void* labels,
                                  unsigned long long* first_bad, cudaStream_t stream);
// Scratch of the "sum" and "mean" reductions: per leaf, its loss sum, weight sum and count.
inline int64_t loss_partials_bytes(const LossGeometry& g) { return g.leaves() * 3 * 8; }
// The loss of log_prob (T of `type`) against the labels into out: per sample ("none") or one
// value; weights may be null; partials as sized above (unused for "none").
cudaError_t launch_nll_loss(LossType type, int label_bytes, LossReduction reduction,
                            const LossGeometry& g, const void* log_prob, const void* labels,
                            const void* weights, void* out, void* partials, cudaStream_t stream);
// SoftmaxCrossEntropyLoss's log_prob: LogSoftmax of x along C for each of the N * D samples, the
// CPU's softmax_rows (NaN-blind max and the sum of exponentials over the tree, a NaN sum giving
// the quiet NaN for the whole row, y = (x - max) - log(sum)) with exp_f32 for f32 and the
// device's log (and, for f64, exp) where the CPU calls libm. One thread per sample.
cudaError_t launch_log_softmax_classes(LossType type, const LossGeometry& g, const void* x, void* y,
                                       cudaStream_t stream);
// ---- Math: libm ops, f64 activations, LogSoftmax, LRN, ReduceLogSumExp ----
// (kernels/elementwise_math.cu, activation_f64.cu, normalization.cu, reduction.cu)
// Where the CPU's kernel calls libm (f64 transcendentals, Pow, trigonometric and hyperbolic
// functions, LogSoftmax's log, LRN's pow), these use CUDA's functions in the same formula:
// the same arithmetic around them, but the libm results' last bits may differ.

// Pow (y = a^b, broadcasting) and the unary libm functions; f32 as the CPU writes them, the
// double function of the f32 value rounded once (Pow also: powf there, pow here).
enum class MathOp : int { Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh };
// y[i] = op(x[i]) for i in [0, n), n > 0; type F32 or F64.
cudaError_t launch_math_unary(MathOp op, ElementType type, const void* x, void* y, int64_t n,
                              cudaStream_t stream);
cudaError_t launch_pow(ElementType type, const BroadcastGeometry& geometry, const void* a,
                       const void* b, void* y, cudaStream_t stream);

// The f64 activations (all of ActivationOp but Relu), attributes as doubles as the CPU's f64
// kernels read them; meanings as in ActivationParams.
struct ActivationParamsF64 {
  double alpha = 0.0;
  double beta = 0.0;
  double lambd = 0.0;
};
cudaError_t launch_f64_activation(ActivationOp op, const ActivationParamsF64& params,
                                  const double* x, double* y, int64_t n, cudaStream_t stream);
// PRelu (x < 0 ? slope * x : x) in F64, I32 or I64 (integer products wrap).
cudaError_t launch_typed_prelu(ElementType type, const BroadcastGeometry& geometry, const void* x,
                               const void* slope, void* y, cudaStream_t stream);

// Softmax (f64) and LogSoftmax (f32, f64) of every row (y may be x): the f32 Softmax's tree,
// LogSoftmax's y = (x - max) - log(sum of e^(x - max)).
cudaError_t launch_f64_softmax(const RowGeometry& rows, const double* x, double* y,
                               cudaStream_t stream);
cudaError_t launch_log_softmax(ReduceType type, const RowGeometry& rows, const void* x, void* y,
                               cudaStream_t stream);

// LRN over [N, C, spatial]: y = x / (bias + scale * window sum of x^2)^beta, the window's
// squares added channel by channel in ascending order (type F32 or F64; scale = alpha / size,
// all in the type).
struct LrnParams {
  int64_t batch = 0;
  int64_t channels = 0;
  int64_t spatial = 0;  // elements per (n, c)
  int64_t before = 0;   // channels of the window below c: (size - 1) / 2
  int64_t after = 0;    // and above: size - 1 - before
  double scale = 0;     // each rounded to the type first, as the CPU reads them
  double beta = 0;
  double bias = 0;
};
cudaError_t launch_lrn(ReduceType type, const LrnParams& params, const void* x, void* y,
                       cudaStream_t stream);

// ReduceLogSumExp (F32, F64): the row max by ReduceMax's tree, then max + log(sum of
// e^(x - max)) by ReduceSum's tree (a row whose max is not finite gives the max).
int64_t log_sum_exp_workspace_bytes(ReduceType type, const ReduceGeometry& geometry);
cudaError_t launch_reduce_log_sum_exp(ReduceType type, const ReduceGeometry& geometry,
                                      const void* x, void* y, void* workspace, cudaStream_t stream);
// ---- Layout: Tile, Pad, DepthToSpace, SpaceToDepth, ReverseSequence (kernels/layout.cu) ----
// Pure data movement like the movement family: elements of `element_bytes` (1, 4 or 8) bytes
// copied as they are (Pad's constant too), one thread per output element.

inline constexpr int kMaxLayoutRank = 8;
// Per output axis (outermost first): its length, the input's length and element stride, and
// for Pad the elements padded before it (negative: cropped).
struct LayoutAxes {
  int rank = 0;
  int64_t out_dims[kMaxLayoutRank] = {};
  int64_t in_dims[kMaxLayoutRank] = {};
  int64_t in_strides[kMaxLayoutRank] = {};
  int64_t before[kMaxLayoutRank] = {};
  int64_t numel = 0;  // of the output
};
// Tile: output index o reads input index o % in_dim on every axis.
cudaError_t launch_tile(int element_bytes, const LayoutAxes& axes, const void* x, void* y,
                        cudaStream_t stream);
// Pad as the CPU's pad_source: inside, the input; outside, the constant (`value`, one element
// in device memory, or zero bits when null), the mirror without the edge (period 2 * (dim - 1))
// or the edge element.
enum class PadMode : int { Constant, Reflect, Edge };
cudaError_t launch_pad(int element_bytes, PadMode mode, const LayoutAxes& axes, const void* x,
                       const void* value, void* y, cudaStream_t stream);

// DepthToSpace (DCR or CRD channel order) and SpaceToDepth of an [N, C, H, W] input.
enum class SpaceDepthOp : int { DepthToSpaceDcr, DepthToSpaceCrd, SpaceToDepth };
struct SpaceDepthGeometry {
  int64_t in_c = 0, in_h = 0, in_w = 0;
  int64_t out_c = 0, out_h = 0, out_w = 0;
  int64_t block = 1;
  int64_t numel = 0;  // of the output
};
cudaError_t launch_space_depth(int element_bytes, SpaceDepthOp op, const SpaceDepthGeometry& g,
                               const void* x, void* y, cudaStream_t stream);

// ReverseSequence of an input seen as [d0, d1, inner], batch on axis 0 (batch_first) or 1.
struct ReverseSequenceGeometry {
  int64_t d0 = 0, d1 = 0, inner = 1;
  bool batch_first = false;
};
// Lowers *first_bad (set to all ones by the caller) to the first e < n whose length (4- or
// 8-byte signed) is outside [0, steps].
cudaError_t launch_find_bad_length(int length_bytes, const void* lengths, int64_t n, int64_t steps,
                                   unsigned long long* first_bad, cudaStream_t stream);
// Output row (a0, a1) reads time step len - 1 - t when t < len of its batch entry, else t; the
// lengths are in range (checked first).
cudaError_t launch_reverse_sequence(int element_bytes, int length_bytes,
                                    const ReverseSequenceGeometry& g, const void* x,
                                    const void* lengths, void* y, cudaStream_t stream);

// ---- Resampling: Resize, GridSample (kernels/resampling.cu) ----
// Ports of the CPU kernels (cpu/kernels/resampling.cpp, resampling_grid_sample.cpp): taps and
// weights found in double exactly as the CPU finds them, weights rounded to the element type
// once, sums in the element type in the CPU's order. One thread per output element.

inline constexpr int kMaxResizeRank = 8;
enum class ResizeMode : int { Nearest, Linear, Cubic };
enum class ResizeTransform : int {
  HalfPixel,
  HalfPixelSymmetric,
  PytorchHalfPixel,
  AlignCorners,
  Asymmetric,
  TfHalfPixelForNearest,
  TfCropAndResize,
};
enum class NearestMode : int { RoundPreferFloor, RoundPreferCeil, Floor, Ceil };
struct ResizeLaunch {
  int rank = 0;
  int64_t in_dims[kMaxResizeRank] = {};
  int64_t out_dims[kMaxResizeRank] = {};
  int64_t in_strides[kMaxResizeRank] = {};
  double scales[kMaxResizeRank] = {};
  double roi_start[kMaxResizeRank] = {};
  double roi_end[kMaxResizeRank] = {};
  ResizeMode mode = ResizeMode::Nearest;
  ResizeTransform transform = ResizeTransform::HalfPixel;
  NearestMode nearest = NearestMode::RoundPreferFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  uint64_t extrapolated_bits = 0;  // the output element for an extrapolated point, as its bytes
  int64_t numel = 0;               // of the output, > 0
};
// Nearest: any element type (copies); Linear and Cubic: F32 or F64.
cudaError_t launch_resize(ElementType type, const ResizeLaunch& r, const void* x, void* y,
                          cudaStream_t stream);

enum class GridSampleMode : int { Nearest, Bilinear, Bicubic };
enum class GridPadding : int { Zeros, Border, Reflection };
struct GridSampleLaunch {
  int64_t batch = 0, channels = 0, h = 0, w = 0, out_h = 0, out_w = 0;
  GridSampleMode mode = GridSampleMode::Bilinear;
  GridPadding padding = GridPadding::Zeros;
  bool align_corners = false;
};
// X [batch, channels, h, w], grid [batch, out_h, out_w, 2], y [batch, channels, out_h, out_w];
// F32 or F64; at least one output element.
cudaError_t launch_grid_sample(ElementType type, const GridSampleLaunch& g, const void* x,
                               const void* grid, void* y, cudaStream_t stream);

// ---- Linalg extension: Det (kernels/linalg_det.cu) ----

// y[b] = the determinant of matrix b (m x m, row-major, one after another) by the CPU's LU with
// partial pivoting, one thread per matrix; `scratch` holds matrices * m * m elements. F32 or F64.
cudaError_t launch_det(ElementType type, const void* x, int64_t matrices, int64_t m, void* scratch,
                       void* y, cudaStream_t stream);

// ---- Linalg extension: Einsum's label loop (kernels/linalg_einsum.cu) ----
// (Two float operands contract on the GEMM above, their operands packed by launch_strided_copy.)

inline constexpr int kMaxEinsumOperands = 8;
inline constexpr int kMaxEinsumLabels = 8;  // output axes, and summed labels, each
struct EinsumLoop {
  int operands = 0;
  const void* data[kMaxEinsumOperands] = {};
  int out_rank = 0;
  int64_t out_dims[kMaxEinsumLabels] = {};
  int64_t out_strides[kMaxEinsumOperands][kMaxEinsumLabels] = {};  // per operand, per axis
  int summed = 0;
  int64_t summed_extents[kMaxEinsumLabels] = {};
  int64_t summed_strides[kMaxEinsumOperands][kMaxEinsumLabels] = {};
  int64_t summed_count = 1;  // the product of summed_extents
  int64_t numel = 0;         // of the output, > 0
};
// Each output element: the sum from 0 over the summed labels (row-major, the last fastest) of
// the operands' product (operand 0 times operand 1 times ...), in the element type (F32, F64;
// I32 and I64 wrap), as the CPU's label loop.
cudaError_t launch_einsum_loop(ElementType type, const EinsumLoop& loop, void* y,
                               cudaStream_t stream);

}  // namespace volta::cuda
