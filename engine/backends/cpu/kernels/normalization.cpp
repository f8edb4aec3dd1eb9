// Softmax, LogSoftmax and LayerNormalization on the CPU.
//
// Each row (the elements along the softmax axis, or the normalized trailing block) is one
// unit of work; tasks take fixed runs of rows, and every sum within a row uses the fixed tree
// of reduce_tree.h, so the bits do not depend on the thread count. Arithmetic is in the input
// type, as the op table's accumulator column says.
//
// Special values follow the math, with no masking: Softmax subtracts the row max before exp,
// so a row of all -inf computes (-inf) - (-inf) = NaN and gives NaN everywhere (0 / 0); a row
// holding +inf gives NaN everywhere too (inf - inf), and any NaN in a row makes the whole row
// NaN. LogSoftmax does the same. LayerNormalization propagates NaN and inf through its mean.

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "dtype_kernels.h"
#include "reduce_tree.h"
#include "vector_math.h"

namespace volta::cpu {
namespace {

// Lambdas rather than function pointers, so that the tree's lane loops inline them.
constexpr auto plus = [](auto a, auto b) { return a + b; };
constexpr auto max_of = [](auto a, auto b) { return max_propagating_nan(a, b); };

// f32 rows use the vectorizable exp of vector_math.h (<= 1 ULP); f64 rows use libm.
template <class T>
T exp_of(T v) {
  if constexpr (std::is_same_v<T, float>) {
    return vmath::exp_f32(v);
  } else {
    return std::exp(v);
  }
}

// Rows of length n per task: about kElementwiseChunk elements each.
int64_t rows_per_task(int64_t n) {
  return std::max<int64_t>(1, kElementwiseChunk / std::max<int64_t>(n, 1));
}

// Softmax (kLog false) or LogSoftmax (kLog true) of one contiguous row; y may be x.
template <class T, bool kLog>
void softmax_row(const T* x, T* y, int64_t n) {
  const T max = reduce_row(
      n, lowest_value<T>(), [x](int64_t i) { return x[i]; }, max_of);
  if constexpr (kLog) {
    const T sum = reduce_row(
        n, T{0}, [x, max](int64_t i) { return exp_of(x[i] - max); }, plus);
    const T log_sum = std::log(sum);
    for_each_index_blocked(n, [=](int64_t i) { y[i] = (x[i] - max) - log_sum; });
  } else {
    for_each_index_blocked(n, [=](int64_t i) { y[i] = exp_of(x[i] - max); });
    const T sum = reduce_row(
        n, T{0}, [y](int64_t i) { return y[i]; }, plus);
    for_each_index_blocked(n, [=](int64_t i) { y[i] = y[i] / sum; });
  }
}

// Rows along a non-last axis are strided by `inner`. A task gathers a tile of up to kRowTile
// neighbouring rows into contiguous scratch (each step along the axis reads a contiguous run
// of the tile's columns), computes them there with softmax_row, and scatters them back.
inline constexpr int64_t kRowTile = 16;

// The `width` rows starting at x and y, each of n elements `stride` apart; scratch holds
// width * n elements.
template <class T, bool kLog>
void softmax_row_tile(const T* x, T* y, int64_t n, int64_t stride, int64_t width, T* scratch) {
  for (int64_t a = 0; a < n; ++a) {
    for (int64_t c = 0; c < width; ++c) scratch[c * n + a] = x[a * stride + c];
  }
  for (int64_t c = 0; c < width; ++c) softmax_row<T, kLog>(scratch + c * n, scratch + c * n, n);
  for (int64_t a = 0; a < n; ++a) {
    for (int64_t c = 0; c < width; ++c) y[a * stride + c] = scratch[c * n + a];
  }
}

template <class T, bool kLog>
struct SoftmaxKernel {
  static void run(const KernelArgs& args) {
    const ConstTensorView& in = args.inputs[0];
    if (in.numel() == 0) return;
    const int axis = *normalize_axis(args.attrs.get_int("axis"), in.shape.rank());
    const AxisSplit split = split_at_axis(in.shape, axis);
    const T* x = in.as<T>();
    T* y = args.outputs[0].as<T>();
    const int64_t n = split.axis;
    if (split.inner == 1) {
      args.pool.parallel_chunks(split.outer, rows_per_task(n), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) softmax_row<T, kLog>(x + r * n, y + r * n, n);
      });
      return;
    }
    const int64_t tiles_per_slice = (split.inner + kRowTile - 1) / kRowTile;
    const auto run_tiles = [&](int64_t begin, int64_t end) {
      std::vector<T> scratch(static_cast<size_t>(kRowTile * n));
      for (int64_t tile = begin; tile < end; ++tile) {
        const int64_t column = (tile % tiles_per_slice) * kRowTile;
        const int64_t first = (tile / tiles_per_slice) * n * split.inner + column;
        const int64_t width = std::min(kRowTile, split.inner - column);
        softmax_row_tile<T, kLog>(x + first, y + first, n, split.inner, width, scratch.data());
      }
    };
    args.pool.parallel_chunks(split.outer * tiles_per_slice, rows_per_task(n * kRowTile),
                              run_tiles);
  }
};
template <class T>
using SoftmaxOf = SoftmaxKernel<T, false>;
template <class T>
using LogSoftmaxOf = SoftmaxKernel<T, true>;

// Scale or B as a full row of the normalized shape. An operand that already has the row's
// element count has its layout (the shape function checked it broadcasts to the row), so it
// is used in place; a smaller one is expanded into `storage`.
template <class T>
const T* operand_as_row(const ConstTensorView& operand, const Shape& row_shape,
                        std::vector<T>& storage) {
  if (operand.numel() == row_shape.numel()) return operand.as<T>();
  const std::vector<int64_t> strides = broadcast_strides(operand.shape, row_shape);
  const T* src = operand.as<T>();
  storage.resize(static_cast<size_t>(row_shape.numel()));
  std::vector<int64_t> index(static_cast<size_t>(row_shape.rank()), 0);
  int64_t offset = 0;
  for (T& value : storage) {
    value = src[offset];
    for (int d = row_shape.rank() - 1; d >= 0; --d) {  // odometer step, last axis first
      const auto u = static_cast<size_t>(d);
      offset += strides[u];
      if (++index[u] < row_shape[d]) break;
      offset -= strides[u] * row_shape[d];
      index[u] = 0;
    }
  }
  return storage.data();
}

// Y = (X - mean) * inv_std_dev * Scale + B over the trailing axes [axis, rank), with the
// two-pass variance (sum of squared deviations from the mean) for stability. Optional
// outputs Mean and InvStdDev (shape X with the normalized axes set to 1) get one value per
// row when the node declares them.
template <class T>
struct LayerNormKernel {
  static void run(const KernelArgs& args) {
    const ConstTensorView& in = args.inputs[0];
    const int axis = *normalize_axis(args.attrs.get_int("axis"), in.shape.rank());
    const Shape row_shape(
        std::vector<int64_t>(in.shape.dims().begin() + axis, in.shape.dims().end()));
    const int64_t n = row_shape.numel();
    const int64_t rows = n == 0 ? 0 : in.numel() / n;
    if (rows == 0) {
      return write_empty_row_stats(args, in.shape, axis);
    }
    std::vector<T> scale_storage, bias_storage;
    const T* scale = operand_as_row(args.inputs[1], row_shape, scale_storage);
    const bool has_bias = args.inputs.size() > 2 && args.inputs[2].present();
    const T* bias = has_bias ? operand_as_row(args.inputs[2], row_shape, bias_storage) : nullptr;
    const auto epsilon = static_cast<T>(args.attrs.get_float("epsilon"));
    const T* x = in.as<T>();
    T* y = args.outputs[0].as<T>();
    T* mean_out = args.outputs.size() > 1 ? args.outputs[1].as<T>() : nullptr;
    T* inv_std_out = args.outputs.size() > 2 ? args.outputs[2].as<T>() : nullptr;

    args.pool.parallel_chunks(rows, rows_per_task(n), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const T* xr = x + r * n;
        T* yr = y + r * n;
        const T mean = reduce_row(
                           n, T{0}, [xr](int64_t i) { return xr[i]; }, plus) /
                       static_cast<T>(n);
        const T variance = reduce_row(
                               n, T{0},
                               [xr, mean](int64_t i) {
                                 const T d = xr[i] - mean;
                                 return d * d;
                               },
                               plus) /
                           static_cast<T>(n);
        const T inv_std = T{1} / std::sqrt(variance + epsilon);
        if (bias != nullptr) {
          for_each_index_blocked(
              n, [&](int64_t i) { yr[i] = (xr[i] - mean) * inv_std * scale[i] + bias[i]; });
        } else {
          for_each_index_blocked(n,
                                 [&](int64_t i) { yr[i] = (xr[i] - mean) * inv_std * scale[i]; });
        }
        if (mean_out != nullptr) mean_out[r] = mean;
        if (inv_std_out != nullptr) inv_std_out[r] = inv_std;
      }
    });
  }

  // A normalized block of zero elements: Y is empty, and each row's statistics are those of
  // nothing, mean 0 / 0 = NaN and so InvStdDev NaN.
  static void write_empty_row_stats(const KernelArgs& args, const Shape& shape, int axis) {
    int64_t stats = 1;
    for (int i = 0; i < axis; ++i) stats *= shape[i];
    const T nan = std::numeric_limits<T>::quiet_NaN();
    for (size_t k = 1; k < args.outputs.size(); ++k) {
      std::fill_n(args.outputs[k].as<T>(), stats, nan);
    }
  }
};

const OpDTypeKernels& normalization_kernels() {
  static const OpDTypeKernels kKernels = [] {
    OpDTypeKernels f{};
    auto at = [&f](OpKind op) -> DTypeKernels& { return f[static_cast<size_t>(op_index(op))]; };
    at(OpKind::Softmax) = kernels_for<SoftmaxOf>(FloatTypes{}, "softmax_rows_tree4096x8");
    at(OpKind::LogSoftmax) = kernels_for<LogSoftmaxOf>(FloatTypes{}, "log_softmax_rows_tree4096x8");
    at(OpKind::LayerNormalization) =
        kernels_for<LayerNormKernel>(FloatTypes{}, "layernorm_rows_tree4096x8");
    return f;
  }();
  return kKernels;
}

KernelSelection select_normalization_kernel(const KernelQuery& query) {
  return select_by_dtype(normalization_kernels()[static_cast<size_t>(op_index(query.node.op))],
                         query.node, query.inputs[0]->dtype);
}

}  // namespace

void register_normalization_kernels(KernelTable& table) {
  register_family(table, normalization_kernels(), select_normalization_kernel);
}

}  // namespace volta::cpu
