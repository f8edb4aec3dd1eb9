// Softmax, LogSoftmax, LayerNormalization, BatchNormalization (inference),
// InstanceNormalization, MeanVarianceNormalization, LRN and Hardmax on the CPU.
//
// Each row (the elements along the softmax axis, the normalized trailing block, an instance
// plane, a group of MeanVarianceNormalization) is one unit of work; tasks take fixed runs of
// rows, and every sum within a row uses the fixed tree of reduce_tree.h (LRN's short channel
// window is summed in channel order), so the bits do not depend on the thread count.
// Arithmetic is in the op table's accumulator: the input type, or double for f32 where the
// column says Wide (MeanVarianceNormalization).
//
// Special values follow the math, with no masking (softmax_rows.h says what that gives for
// Softmax rows holding infinities); the normalizations propagate NaN and inf through their
// statistics.

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "dtype_kernels.h"
#include "reduce_tree.h"
#include "simd.h"
#include "softmax_rows.h"

namespace volta::cpu {
namespace {

// A variant that names the ISA its row loops run on (simd.h), e.g.
// "softmax_rows_tree4096x8_avx512".
std::string with_isa(std::string_view what) {
  return std::string(what) + "_" + std::string(simd_isa());
}

using softmax_rows::rows_per_task;

// Lambdas rather than function pointers, so that the tree's lane loops inline them.
constexpr auto plus = [](auto a, auto b) { return a + b; };

template <class T, bool kLog>
struct SoftmaxKernel {
  static void run(const KernelArgs& args) {
    const ConstTensorView& in = args.inputs[0];
    const int axis = *normalize_axis(args.attrs.get_int("axis"), in.shape.rank());
    softmax_rows::softmax_along_axis<T, kLog>(in.as<T>(), args.outputs[0].as<T>(),
                                              split_at_axis(in.shape, axis), args.pool);
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

    // Row r from its mean and sum of squared deviations.
    const auto finish_row = [&](int64_t r, T mean, T squares) {
      const T* xr = x + r * n;
      T* yr = y + r * n;
      const T variance = squares / static_cast<T>(n);
      const T inv_std = T{1} / std::sqrt(variance + epsilon);
      if (bias != nullptr) {
        for_each_index_blocked(
            n, [&](int64_t i) { yr[i] = (xr[i] - mean) * inv_std * scale[i] + bias[i]; });
      } else {
        for_each_index_blocked(n, [&](int64_t i) { yr[i] = (xr[i] - mean) * inv_std * scale[i]; });
      }
      if (mean_out != nullptr) mean_out[r] = mean;
      if (inv_std_out != nullptr) inv_std_out[r] = inv_std;
    };
    const auto load_row = [](const T* xr) { return [xr](int64_t i) { return xr[i]; }; };
    const auto load_squares = [](const T* xr, T mean) {
      return [xr, mean](int64_t i) {
        const T d = xr[i] - mean;
        return d * d;
      };
    };
    // Rows go in pairs, whose reductions overlap; each row's sums are reduce_row's.
    args.pool.parallel_chunks(rows, rows_per_task(n), [&](int64_t begin, int64_t end) {
      with_simd([&] {
        int64_t r = begin;
        for (; r + 2 <= end; r += 2) {
          const T* x0 = x + r * n;
          const T* x1 = x0 + n;
          const std::array<T, 2> sums = reduce_row_pair(n, T{0}, load_row(x0), load_row(x1), plus);
          const T mean0 = sums[0] / static_cast<T>(n);
          const T mean1 = sums[1] / static_cast<T>(n);
          const std::array<T, 2> squares =
              reduce_row_pair(n, T{0}, load_squares(x0, mean0), load_squares(x1, mean1), plus);
          finish_row(r, mean0, squares[0]);
          finish_row(r + 1, mean1, squares[1]);
        }
        if (r < end) {
          const T* xr = x + r * n;
          const T mean = reduce_row(n, T{0}, load_row(xr), plus) / static_cast<T>(n);
          finish_row(r, mean, reduce_row(n, T{0}, load_squares(xr, mean), plus));
        }
      });
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

// Dims [0, from) and [from, rank) of a shape as two element counts.
struct LeadAndRest {
  int64_t lead = 1;
  int64_t rest = 1;
};
LeadAndRest split_before(const Shape& shape, int from) {
  LeadAndRest s;
  for (int i = 0; i < shape.rank(); ++i) (i < from ? s.lead : s.rest) *= shape[i];
  return s;
}

// Y = (X - input_mean[c]) * (1 / sqrt(input_var[c] + epsilon)) * scale[c] + B[c], one task per
// run of [n, c] planes.
template <class T>
struct BatchNormKernel {
  static void run(const KernelArgs& args) {
    const ConstTensorView& in = args.inputs[0];
    const int64_t channels = in.shape[1];
    const LeadAndRest planes = split_before(in.shape, 2);
    const T* x = in.as<T>();
    const T* scale = args.inputs[1].as<T>();
    const T* bias = args.inputs[2].as<T>();
    const T* mean = args.inputs[3].as<T>();
    const T* var = args.inputs[4].as<T>();
    const auto epsilon = static_cast<T>(args.attrs.get_float("epsilon"));
    T* y = args.outputs[0].as<T>();
    const int64_t n = planes.rest;
    args.pool.parallel_chunks(planes.lead, rows_per_task(n), [&](int64_t begin, int64_t end) {
      with_simd([&] {
        for (int64_t p = begin; p < end; ++p) {
          const int64_t c = p % channels;
          const T inv_std = T{1} / std::sqrt(var[c] + epsilon);
          const T m = mean[c], s = scale[c], b = bias[c];
          const T* xp = x + p * n;
          T* yp = y + p * n;
          for_each_index_blocked(n, [&](int64_t i) { yp[i] = (xp[i] - m) * inv_std * s + b; });
        }
      });
    });
  }
};

// Mean and biased variance of n values (two passes: the variance is the mean of squared
// deviations from the mean, which stays >= 0 and accurate).
template <class T>
struct Moments {
  T mean;
  T variance;
};
template <class T, class Load>
Moments<T> mean_and_variance(int64_t n, const Load& load) {
  const T mean = reduce_row(n, T{0}, load, plus) / static_cast<T>(n);
  const T variance = reduce_row(
                         n, T{0},
                         [&](int64_t i) {
                           const T d = load(i) - mean;
                           return d * d;
                         },
                         plus) /
                     static_cast<T>(n);
  return {mean, variance};
}

// Each [n, c] plane (axes 2..) normalized by its own statistics, then * scale[c] + B[c].
template <class T>
struct InstanceNormKernel {
  static void run(const KernelArgs& args) {
    const ConstTensorView& in = args.inputs[0];
    const int64_t channels = in.shape[1];
    const LeadAndRest planes = split_before(in.shape, 2);
    const T* x = in.as<T>();
    const T* scale = args.inputs[1].as<T>();
    const T* bias = args.inputs[2].as<T>();
    const auto epsilon = static_cast<T>(args.attrs.get_float("epsilon"));
    T* y = args.outputs[0].as<T>();
    const int64_t n = planes.rest;
    if (n == 0) return;
    args.pool.parallel_chunks(planes.lead, rows_per_task(n), [&](int64_t begin, int64_t end) {
      with_simd([&] {
        for (int64_t p = begin; p < end; ++p) {
          const T* xp = x + p * n;
          T* yp = y + p * n;
          const Moments<T> m = mean_and_variance<T>(n, [xp](int64_t i) { return xp[i]; });
          const T mean = m.mean;
          const T inv_std = T{1} / std::sqrt(m.variance + epsilon);
          const T s = scale[p % channels], b = bias[p % channels];
          for_each_index_blocked(n, [&](int64_t i) { yp[i] = (xp[i] - mean) * inv_std * s + b; });
        }
      });
    });
  }
};

// The element offsets of a shape's axes where `selected[axis]` is `want`, in row-major order
// of those axes (the other axes at index 0).
std::vector<int64_t> offsets_over(const Shape& shape, const std::vector<bool>& selected,
                                  bool want) {
  std::vector<int64_t> offsets = {0};
  const std::vector<int64_t> strides = shape.strides();
  for (int a = 0; a < shape.rank(); ++a) {
    if (selected[static_cast<size_t>(a)] != want) continue;
    std::vector<int64_t> next;
    next.reserve(offsets.size() * static_cast<size_t>(shape[a]));
    for (int64_t base : offsets) {
      for (int64_t i = 0; i < shape[a]; ++i)
        next.push_back(base + i * strides[static_cast<size_t>(a)]);
    }
    offsets = std::move(next);
  }
  return offsets;
}

// Y = (X - mean) / (sqrt(variance) + epsilon), statistics over `axes`. A group is one index of
// the other axes; its elements sit at group offset + each offset over the reduced axes. The
// statistics and the division run in Wide<T> (the op table's accumulator): the groups span
// several axes, and an f32 mean over them drifts by more than the reference's tolerance.
template <class T>
struct MeanVarianceNormKernel {
  static void run(const KernelArgs& args) {
    using A = Wide<T>;
    const ConstTensorView& in = args.inputs[0];
    if (in.numel() == 0) return;
    std::vector<bool> reduced(static_cast<size_t>(in.shape.rank()), false);
    for (int64_t a : args.attrs.get_ints("axes")) {
      reduced[static_cast<size_t>(*normalize_axis(a, in.shape.rank()))] = true;
    }
    const std::vector<int64_t> groups = offsets_over(in.shape, reduced, false);
    const std::vector<int64_t> members = offsets_over(in.shape, reduced, true);
    const auto n = static_cast<int64_t>(members.size());
    const auto epsilon = static_cast<A>(args.attrs.get_float("epsilon"));
    const T* x = in.as<T>();
    T* y = args.outputs[0].as<T>();
    const int64_t* offset = members.data();
    const auto num_groups = static_cast<int64_t>(groups.size());
    args.pool.parallel_chunks(num_groups, rows_per_task(n), [&](int64_t begin, int64_t end) {
      for (int64_t g = begin; g < end; ++g) {
        const T* xg = x + groups[static_cast<size_t>(g)];
        T* yg = y + groups[static_cast<size_t>(g)];
        const Moments<A> m = mean_and_variance<A>(
            n, [xg, offset](int64_t i) { return static_cast<A>(xg[offset[i]]); });
        const A denominator = std::sqrt(m.variance) + epsilon;
        for (int64_t i = 0; i < n; ++i) {
          yg[offset[i]] = static_cast<T>((static_cast<A>(xg[offset[i]]) - m.mean) / denominator);
        }
      }
    });
  }
};

// Y[n, c, s] = X / (bias + alpha / size * sum of X[n, i, s]^2 over the channel window)^beta.
// A task takes runs of [n, c] rows; a row's window sums are built channel by channel in
// ascending order over the row's contiguous spatial run.
template <class T>
struct LrnKernel {
  static void run(const KernelArgs& args) {
    const ConstTensorView& in = args.inputs[0];
    const int64_t channels = in.shape[1];
    const LeadAndRest rows = split_before(in.shape, 2);
    const int64_t n = rows.rest;
    if (n == 0) return;
    const int64_t size = args.attrs.get_int("size");
    const auto scale = static_cast<T>(args.attrs.get_float("alpha") / static_cast<double>(size));
    const auto beta = static_cast<T>(args.attrs.get_float("beta"));
    const auto bias = static_cast<T>(args.attrs.get_float("bias"));
    const int64_t before = (size - 1) / 2, after = size - 1 - before;  // floor and ceil
    const T* x = in.as<T>();
    T* y = args.outputs[0].as<T>();
    args.pool.parallel_chunks(rows.lead, rows_per_task(n), [&](int64_t begin, int64_t end) {
      std::vector<T> sums(static_cast<size_t>(n));
      for (int64_t r = begin; r < end; ++r) {
        const int64_t c = r % channels;
        const int64_t first = std::max<int64_t>(0, c - before);
        const int64_t last = std::min(channels - 1, c + after);
        std::fill(sums.begin(), sums.end(), T{0});
        for (int64_t i = first; i <= last; ++i) {
          const T* xi = x + (r - c + i) * n;
          for_each_index_blocked(n,
                                 [&](int64_t s) { sums[static_cast<size_t>(s)] += xi[s] * xi[s]; });
        }
        const T* xr = x + r * n;
        T* yr = y + r * n;
        for (int64_t s = 0; s < n; ++s) {
          yr[s] = xr[s] / std::pow(bias + scale * sums[static_cast<size_t>(s)], beta);
        }
      }
    });
  }
};

// 1 at the first maximum along the axis, 0 elsewhere. As for ArgMax, a NaN counts as the
// maximum and the first NaN wins. A task takes runs of [outer] slices; within a slice the
// running best of every inner column is updated one axis step at a time (contiguous reads).
template <class T>
struct HardmaxKernel {
  static void run(const KernelArgs& args) {
    const ConstTensorView& in = args.inputs[0];
    if (in.numel() == 0) return;
    const int axis = *normalize_axis(args.attrs.get_int("axis"), in.shape.rank());
    const AxisSplit split = split_at_axis(in.shape, axis);
    const int64_t n = split.axis, inner = split.inner;
    const T* x = in.as<T>();
    T* y = args.outputs[0].as<T>();
    args.pool.parallel_chunks(
        split.outer, rows_per_task(n * inner), [&](int64_t begin, int64_t end) {
          std::vector<int64_t> best(static_cast<size_t>(inner));
          std::vector<T> best_value(static_cast<size_t>(inner));
          for (int64_t o = begin; o < end; ++o) {
            const T* xo = x + o * n * inner;
            T* yo = y + o * n * inner;
            std::fill(best.begin(), best.end(), 0);
            std::copy(xo, xo + inner, best_value.begin());
            for (int64_t j = 1; j < n; ++j) {
              for (int64_t i = 0; i < inner; ++i) {
                const T v = xo[j * inner + i];
                T& b = best_value[static_cast<size_t>(i)];
                if (!std::isnan(b) && (std::isnan(v) || v > b)) {
                  b = v;
                  best[static_cast<size_t>(i)] = j;
                }
              }
            }
            for (int64_t j = 0; j < n; ++j) {
              for (int64_t i = 0; i < inner; ++i) {
                yo[j * inner + i] = best[static_cast<size_t>(i)] == j ? T{1} : T{0};
              }
            }
          }
        });
  }
};

const OpDTypeKernels& normalization_kernels() {
  static const OpDTypeKernels kKernels = [] {
    OpDTypeKernels f{};
    auto at = [&f](OpKind op) -> DTypeKernels& { return f[static_cast<size_t>(op_index(op))]; };
    at(OpKind::Softmax) = kernels_for<SoftmaxOf>(FloatTypes{}, with_isa("softmax_rows_tree4096x8"));
    at(OpKind::LogSoftmax) =
        kernels_for<LogSoftmaxOf>(FloatTypes{}, with_isa("log_softmax_rows_tree4096x8"));
    at(OpKind::LayerNormalization) =
        kernels_for<LayerNormKernel>(FloatTypes{}, with_isa("layernorm_rows_tree4096x8"));
    at(OpKind::BatchNormalization) =
        kernels_for<BatchNormKernel>(FloatTypes{}, with_isa("batchnorm_inference_planes"));
    at(OpKind::InstanceNormalization) =
        kernels_for<InstanceNormKernel>(FloatTypes{}, with_isa("instancenorm_planes_tree4096x8"));
    at(OpKind::MeanVarianceNormalization) =
        kernels_for<MeanVarianceNormKernel>(FloatTypes{}, "mvn_groups_tree4096x8");
    at(OpKind::LRN) = kernels_for<LrnKernel>(FloatTypes{}, "lrn_channel_window_libm_pow");
    at(OpKind::Hardmax) = kernels_for<HardmaxKernel>(FloatTypes{}, "hardmax_first_max");
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
