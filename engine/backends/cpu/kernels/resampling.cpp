// Resize on the CPU (semantics: engine/ir/op_table_resampling.cpp).
//
// Each axis gets a tap table first: for every output index, up to four (input offset,
// weight) pairs, or the stretched kernel's wider window under antialias, computed in double
// from the coordinate transform. An output element is then
// a sum over the product of its axes' taps. Work is split into fixed runs of output rows (all
// axes but the last), and every element is computed by one task in one fixed order, so the
// bits never depend on the thread count. Weights are rounded to the input type once per axis
// (the outer axes' product once per row), and sums run in the input type: for each outer tap,
// the last axis' taps in order, then the outer taps in order.
// Nearest copies one element (any dtype; NaN payloads pass unchanged).
//
// register_resampling_kernels also registers GridSample (resampling_grid_sample.cpp).

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "dtype_kernels.h"

namespace volta::cpu {
namespace {

enum class Mode { Nearest, Linear, Cubic };

// Tap slots per output index under the plain rule (cubic's four).
inline constexpr int kPlainWidth = 4;
// An output index whose coordinate falls outside the input under tf_crop_and_resize.
inline constexpr int kExtrapolate = -1;

// The node's attributes, decoded once.
struct ResizeSpec {
  Mode mode = Mode::Nearest;
  std::string transform;
  std::string nearest_mode;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  double extrapolation = 0.0;
  std::vector<double> scales;  // per axis; sizes / input when the node gives none
  std::vector<double> roi;

  ResizeSpec(const AttrReader& attrs, const Shape& in, const Shape& out) {
    const std::string& m = attrs.get_string("mode");
    mode = m == "nearest" ? Mode::Nearest : m == "linear" ? Mode::Linear : Mode::Cubic;
    transform = attrs.get_string("coordinate_transformation_mode");
    nearest_mode = attrs.get_string("nearest_mode");
    cubic_a = attrs.get_float("cubic_coeff_a");
    exclude_outside = attrs.get_int("exclude_outside") != 0;
    antialias = attrs.get_int("antialias") != 0;
    extrapolation = attrs.get_float("extrapolation_value");
    scales = attrs.get_floats("scales");
    roi = attrs.get_floats("roi");
    if (scales.empty()) {
      for (int a = 0; a < in.rank(); ++a) {
        scales.push_back(static_cast<double>(out[a]) / static_cast<double>(in[a]));
      }
    }
  }
};

// The input coordinate of output index x on axis `axis` (in: input length, out: output
// length), or NaN when tf_crop_and_resize puts it outside the input.
double source_coordinate(const ResizeSpec& spec, int axis, int rank, int64_t x, int64_t in,
                         int64_t out) {
  const double scale = spec.scales[static_cast<size_t>(axis)];
  const auto xd = static_cast<double>(x);
  const auto last = static_cast<double>(in - 1);
  const std::string& t = spec.transform;
  if (t == "half_pixel") return (xd + 0.5) / scale - 0.5;
  if (t == "half_pixel_symmetric") {  // centred: shifted where out is not scale * in
    const double adjustment = static_cast<double>(out) / (scale * static_cast<double>(in));
    const double offset = static_cast<double>(in) / 2.0 * (1.0 - adjustment);
    return offset + (xd + 0.5) / scale - 0.5;
  }
  if (t == "pytorch_half_pixel") return out > 1 ? (xd + 0.5) / scale - 0.5 : 0.0;
  if (t == "align_corners") {
    return out == 1 ? 0.0 : xd * last / (scale * static_cast<double>(in) - 1.0);
  }
  if (t == "asymmetric") return xd / scale;
  if (t == "tf_half_pixel_for_nearest") return (xd + 0.5) / scale;
  // tf_crop_and_resize
  const double start = spec.roi[static_cast<size_t>(axis)];
  const double end = spec.roi[static_cast<size_t>(axis) + static_cast<size_t>(rank)];
  const double c = out > 1 ? start * last + xd * (end - start) * last / static_cast<double>(out - 1)
                           : 0.5 * (start + end) * last;
  return c < 0.0 || c > last ? std::numeric_limits<double>::quiet_NaN() : c;
}

// The element nearest_mode picks for a coordinate between two elements.
int64_t nearest_index(const std::string& mode, double c) {
  const double below = std::floor(c);
  const double fraction = c - below;
  bool up = false;
  if (mode == "round_prefer_floor") {
    up = fraction > 0.5;
  } else if (mode == "round_prefer_ceil") {
    up = fraction >= 0.5;
  } else {
    up = mode == "ceil";
  }
  return static_cast<int64_t>(below) + (up ? 1 : 0);
}

// Keys' cubic convolution kernel at distance d (the plain rule only reads it within 2).
double cubic_weight(double a, double d) {
  d = std::abs(d);
  if (d <= 1.0) return ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0;
  return ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a;
}

// Antialias on an axis scaled down: the half-width m = ceil(support / scale) of the stretched
// kernel's window (support 1 for linear, 2 for cubic); 0 where the plain rule holds.
int64_t stretch_half_width(const ResizeSpec& spec, double scale) {
  if (!spec.antialias || spec.mode == Mode::Nearest || scale >= 1.0) return 0;
  return static_cast<int64_t>(std::ceil((spec.mode == Mode::Cubic ? 2.0 : 1.0) / scale));
}

// The stretched kernel at distance d (in input elements): linear's triangle or Keys' kernel
// at scale * d, zero beyond their support.
double stretched_weight(const ResizeSpec& spec, double scale, double d) {
  const double s = std::abs(scale * d);
  if (spec.mode == Mode::Linear) return std::max(0.0, 1.0 - s);
  return s < 2.0 ? cubic_weight(spec.cubic_a, s) : 0.0;
}

// The taps of coordinate c on an axis of `in` elements: input indices (possibly outside the
// input) and weights, `half` the stretch's half-width (0: the plain rule). Returns how many;
// 0 when exclude_outside leaves none.
int sample_taps(const ResizeSpec& spec, double scale, int64_t half, double c, int64_t in,
                int64_t* index, double* w) {
  // Far outside, every tap reads the edge (or is excluded): a nearer coordinate keeps the
  // conversions below in range and reads the same elements.
  const auto reach = static_cast<double>(3 + half);
  c = std::clamp(c, -reach, static_cast<double>(in) + reach);
  const double below = std::floor(c);
  const double t = c - below;
  const auto base = static_cast<int64_t>(below);
  if (spec.mode == Mode::Nearest) {
    index[0] = t == 0.0 ? base : nearest_index(spec.nearest_mode, c);
    w[0] = 1.0;
    return 1;
  }
  int n = 0;
  if (half > 0) {
    // The window ONNX's reference takes: ceil(c) - 1 + [1 - m, m], normalized to sum 1.
    const int64_t first = static_cast<int64_t>(std::ceil(c)) - half;
    double sum = 0.0;
    for (int64_t k = 0; k < 2 * half; ++k) {
      index[k] = first + k;
      w[k] = stretched_weight(spec, scale, c - static_cast<double>(first + k));
      sum += w[k];
    }
    n = static_cast<int>(2 * half);
    for (int k = 0; k < n; ++k) w[k] /= sum;
  } else if (t == 0.0) {
    index[0] = base;
    w[0] = 1.0;
    n = 1;
  } else if (spec.mode == Mode::Linear) {
    index[0] = base;
    index[1] = base + 1;
    w[0] = 1.0 - t;
    w[1] = t;
    n = 2;
  } else {
    for (int k = 0; k < 4; ++k) {
      index[k] = base - 1 + k;
      w[k] = cubic_weight(spec.cubic_a, t + 1.0 - static_cast<double>(k));
    }
    n = 4;
  }
  if (!spec.exclude_outside) return n;
  int kept = 0;
  double sum = 0.0;
  for (int k = 0; k < n; ++k) {
    if (index[k] < 0 || index[k] >= in) continue;
    index[kept] = index[k];
    w[kept] = w[k];
    sum += w[k];
    ++kept;
  }
  for (int k = 0; k < kept; ++k) w[k] /= sum;
  return kept;
}

// Taps of every output index of one axis, `width` slots per index. count[i] is the number of
// taps of output i, or kExtrapolate; 0 means exclude_outside left no tap (the output is NaN).
struct AxisTaps {
  int64_t width = kPlainWidth;
  std::vector<int> count;
  std::vector<int64_t> offset;  // out * width: input index (clamped) times the axis stride
  std::vector<double> weight;   // out * width

  AxisTaps(const ResizeSpec& spec, int axis, int rank, int64_t in, int64_t out, int64_t stride) {
    const double scale = spec.scales[static_cast<size_t>(axis)];
    const int64_t half = stretch_half_width(spec, scale);
    if (half > 0) width = 2 * half;
    count.resize(static_cast<size_t>(out));
    offset.resize(static_cast<size_t>(out * width));
    weight.resize(static_cast<size_t>(out * width));
    std::vector<int64_t> index(static_cast<size_t>(width));
    std::vector<double> w(static_cast<size_t>(width));
    for (int64_t x = 0; x < out; ++x) {
      const auto u = static_cast<size_t>(x);
      const double c = source_coordinate(spec, axis, rank, x, in, out);
      if (std::isnan(c)) {
        count[u] = kExtrapolate;
        continue;
      }
      count[u] = sample_taps(spec, scale, half, c, in, index.data(), w.data());
      const auto slot = static_cast<size_t>(x * width);
      for (size_t k = 0; k < static_cast<size_t>(count[u]); ++k) {
        offset[slot + k] = std::clamp<int64_t>(index[k], 0, in - 1) * stride;
        weight[slot + k] = w[k];
      }
    }
  }
};

std::vector<AxisTaps> axis_taps(const ResizeSpec& spec, const Shape& in, const Shape& out) {
  const std::vector<int64_t> strides = in.strides();
  std::vector<AxisTaps> axes;
  axes.reserve(static_cast<size_t>(in.rank()));
  for (int a = 0; a < in.rank(); ++a) {
    axes.emplace_back(spec, a, in.rank(), in[a], out[a], strides[static_cast<size_t>(a)]);
  }
  return axes;
}

// The taps of one output row: the product of the outer axes' taps (all axes but the last),
// or why there are none. Buffers are reused from row to row.
struct RowTaps {
  int state = 1;  // as AxisTaps::count: kExtrapolate, 0 (NaN) or 1 (taps below)
  std::vector<int64_t> offset, next_offset, index;
  std::vector<double> weight, next_weight;

  void compute(const std::vector<AxisTaps>& axes, const Shape& out, int64_t row) {
    const int outer = out.rank() - 1;
    index.resize(static_cast<size_t>(outer));
    for (int a = outer - 1; a >= 0; --a) {
      index[static_cast<size_t>(a)] = row % out[a];
      row /= out[a];
    }
    state = 1;
    offset.assign(1, 0);
    weight.assign(1, 1.0);
    for (int a = 0; a < outer; ++a) {
      const AxisTaps& axis = axes[static_cast<size_t>(a)];
      const auto i = static_cast<size_t>(index[static_cast<size_t>(a)]);
      const int n = axis.count[i];
      if (n <= 0) {
        // Extrapolation wins over NaN, as it does on the last axis.
        if (n == kExtrapolate || state != kExtrapolate) state = n;
        continue;
      }
      next_offset.clear();
      next_weight.clear();
      for (size_t p = 0; p < offset.size(); ++p) {
        for (size_t k = 0; k < static_cast<size_t>(n); ++k) {
          const auto slot = i * static_cast<size_t>(axis.width) + k;
          next_offset.push_back(offset[p] + axis.offset[slot]);
          next_weight.push_back(weight[p] * axis.weight[slot]);
        }
      }
      offset.swap(next_offset);
      weight.swap(next_weight);
    }
  }
};

int64_t rows_per_task(int64_t row_length, int64_t taps_per_element) {
  return std::max<int64_t>(1,
                           kElementwiseChunk / std::max<int64_t>(1, row_length * taps_per_element));
}

template <class T>
T extrapolation_of(const ResizeSpec& spec) {
  if constexpr (std::is_same_v<T, uint8_t>) {
    return spec.extrapolation != 0.0 ? 1 : 0;
  } else {
    return static_cast<T>(spec.extrapolation);
  }
}

// Nearest: one element per output, copied.
template <class T>
void resize_nearest(const ResizeSpec& spec, const std::vector<AxisTaps>& axes, const T* x, T* y,
                    const Shape& out, ThreadPool& pool) {
  const int64_t n = out[out.rank() - 1];
  const AxisTaps& last = axes.back();
  const T extrapolated = extrapolation_of<T>(spec);
  pool.parallel_chunks(out.numel() / n, rows_per_task(n, 1), [&](int64_t begin, int64_t end) {
    RowTaps taps;
    for (int64_t r = begin; r < end; ++r) {
      taps.compute(axes, out, r);
      T* yr = y + r * n;
      if (taps.state == kExtrapolate) {
        std::fill_n(yr, n, extrapolated);
        continue;
      }
      const T* xr = x + taps.offset[0];
      for (int64_t j = 0; j < n; ++j) {
        const auto u = static_cast<size_t>(j);
        yr[j] = last.count[u] == kExtrapolate
                    ? extrapolated
                    : xr[last.offset[u * static_cast<size_t>(last.width)]];
      }
    }
  });
}

// Linear and cubic: weighted sums over the taps.
template <class T>
struct Interpolation {
  const std::vector<AxisTaps>& axes;
  const Shape& out;
  const T* x;
  T* y;
  T extrapolated;
  std::vector<T> last_weight;  // the last axis' weights, rounded once

  // Output rows [begin, end).
  void rows(int64_t begin, int64_t end) const {
    const int64_t n = out[out.rank() - 1];
    const AxisTaps& last = axes.back();
    const T nan = std::numeric_limits<T>::quiet_NaN();
    RowTaps taps;
    std::vector<T> outer_weight;
    for (int64_t r = begin; r < end; ++r) {
      taps.compute(axes, out, r);
      outer_weight.assign(taps.weight.begin(), taps.weight.end());
      T* yr = y + r * n;
      for (int64_t j = 0; j < n; ++j) {
        const auto u = static_cast<size_t>(j);
        const int count = last.count[u];
        if (taps.state == kExtrapolate || count == kExtrapolate) {
          yr[j] = extrapolated;
          continue;
        }
        if (taps.state == 0 || count == 0) {
          yr[j] = nan;
          continue;
        }
        const size_t slot = u * static_cast<size_t>(last.width);
        const int64_t* offset = &last.offset[slot];
        const T* weight = &last_weight[slot];
        T sum{0};
        for (size_t p = 0; p < outer_weight.size(); ++p) {
          const T* xp = x + taps.offset[p];
          T inner{0};
          for (int k = 0; k < count; ++k) inner += weight[k] * xp[offset[k]];
          sum += outer_weight[p] * inner;
        }
        yr[j] = sum;
      }
    }
  }
};

template <class T>
void resize_interpolate(const ResizeSpec& spec, const std::vector<AxisTaps>& axes, const T* x, T* y,
                        const Shape& out, ThreadPool& pool) {
  const Interpolation<T> job{axes,
                             out,
                             x,
                             y,
                             extrapolation_of<T>(spec),
                             std::vector<T>(axes.back().weight.begin(), axes.back().weight.end())};
  // Work per element, for sizing tasks: every axis' taps (capped: only the order of magnitude
  // matters).
  int64_t taps_per_element = 1;
  for (size_t a = 0; a < axes.size() && taps_per_element < kElementwiseChunk; ++a) {
    taps_per_element *= axes[a].width > kPlainWidth ? axes[a].width
                        : spec.mode == Mode::Cubic  ? 4
                                                    : 2;
  }
  const int64_t n = out[out.rank() - 1];
  pool.parallel_chunks(out.numel() / n, rows_per_task(n, taps_per_element),
                       [&job](int64_t begin, int64_t end) { job.rows(begin, end); });
}

template <class T>
struct ResizeKernel {
  static void run(const KernelArgs& args) {
    const ConstTensorView& in = args.inputs[0];
    const TensorView& out = args.outputs[0];
    if (out.numel() == 0) return;
    const T* x = in.as<T>();
    T* y = out.as<T>();
    if (out.shape.rank() == 0) {
      y[0] = x[0];
      return;
    }
    const ResizeSpec spec(args.attrs, in.shape, out.shape);
    const std::vector<AxisTaps> axes = axis_taps(spec, in.shape, out.shape);
    if constexpr (std::is_floating_point_v<T>) {
      if (spec.mode != Mode::Nearest)
        return resize_interpolate(spec, axes, x, y, out.shape, args.pool);
    }
    resize_nearest(spec, axes, x, y, out.shape, args.pool);
  }
};

// One kernel per (mode, dtype), so the plan names the interpolation that runs.
const DTypeKernels& resize_kernels(Mode mode) {
  static const DTypeKernels kNearest =
      kernels_for<ResizeKernel>(AllTypes{}, "resize_nearest_gather");
  static const DTypeKernels kLinear = kernels_for<ResizeKernel>(FloatTypes{}, "resize_linear_taps");
  static const DTypeKernels kCubic = kernels_for<ResizeKernel>(FloatTypes{}, "resize_cubic_taps");
  return mode == Mode::Nearest ? kNearest : mode == Mode::Linear ? kLinear : kCubic;
}

KernelSelection select_resize_kernel(const KernelQuery& query) {
  const std::string& mode = AttrReader(query.node).get_string("mode");
  const Mode m = mode == "nearest" ? Mode::Nearest : mode == "linear" ? Mode::Linear : Mode::Cubic;
  return select_by_dtype(resize_kernels(m), query.node, query.inputs[0]->dtype);
}

}  // namespace

void register_resampling_kernels(KernelTable& table) {
  table[static_cast<size_t>(op_index(OpKind::Resize))] = {&select_resize_kernel, kAllTypes,
                                                          KernelDeterminism::BitExact};
  register_resampling_grid_sample_kernels(table);
}

}  // namespace volta::cpu
