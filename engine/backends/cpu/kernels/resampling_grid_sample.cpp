// GridSample on the CPU (semantics: engine/ir/op_table_resampling.cpp).
//
// Work is split into fixed runs of output rows (n, and every output spatial index but the last:
// ho, or do and ho). A task first turns each grid point of its row into taps: per spatial axis
// up to four (input index, weight) pairs, found in double from
// the grid value (the f32 coordinate would be off by ~size * 1e-7, which the weights would
// carry into every channel), weights then rounded to the input type once. Every channel of
// the row then sums its taps in the input type, in a fixed order: for each y tap, the x taps
// in order, that row sum times the y weight added to the total (in 3-D, each such plane sum
// times its z weight added in z order). Nearest copies the element
// (its offset found once per point, then read from every channel).
// Nothing depends on the thread count.

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "dtype_kernels.h"

namespace volta::cpu {
namespace {

enum class Mode { Nearest, Bilinear, Bicubic };
enum class Padding { Zeros, Border, Reflection };

inline constexpr int kMaxTaps = 4;
// Spatial axes of X: 2 (H, W) or 3 (D, H, W).
inline constexpr int kMaxSpatial = 3;
// Nearest's source offsets for a point outside X (zeros padding) and for a NaN point.
inline constexpr int64_t kOutside = -1;
inline constexpr int64_t kNotANumber = -2;
inline constexpr double kCubicA = -0.75;

struct Sampling {
  Mode mode = Mode::Bilinear;
  Padding padding = Padding::Zeros;
  bool align_corners = false;

  explicit Sampling(const AttrReader& attrs) {
    const std::string& m = attrs.get_string("mode");
    mode = m == "nearest" ? Mode::Nearest : m == "bilinear" ? Mode::Bilinear : Mode::Bicubic;
    const std::string& p = attrs.get_string("padding_mode");
    padding = p == "zeros" ? Padding::Zeros : p == "border" ? Padding::Border : Padding::Reflection;
    align_corners = attrs.get_int("align_corners") != 0;
  }
};

// The taps of one grid value on one axis. count < 0: the output is NaN.
struct AxisTaps {
  int count = 0;
  std::array<int64_t, kMaxTaps> index{};
  std::array<double, kMaxTaps> weight{};

  void add(int64_t i, double w, int64_t size) {
    if (i < 0 || i >= size) return;  // only zeros padding leaves taps outside
    index[static_cast<size_t>(count)] = i;
    weight[static_cast<size_t>(count)] = w;
    ++count;
  }
};

// Reflection about the axis' ends; period is the length of one back-and-forth.
double reflection_period(int64_t size, bool align_corners) {
  return align_corners ? 2.0 * static_cast<double>(size - 1) : 2.0 * static_cast<double>(size);
}

double reflect(double c, int64_t size, bool align_corners) {
  const double period = reflection_period(size, align_corners);
  if (period == 0.0) return 0.0;  // one element, corners aligned: every point is on it
  const double low = align_corners ? 0.0 : -0.5;
  double r = std::fmod(std::abs(c - low), period);
  if (r > 0.5 * period) r = period - r;
  return low + r;
}

// padding_mode's transform of coordinate c (finite, or infinite under zeros and border).
double pad(const Sampling& s, double c, int64_t size) {
  const double last = static_cast<double>(size - 1);
  switch (s.padding) {
    case Padding::Zeros:
      return c;
    case Padding::Border:
      return std::clamp(c, 0.0, last);
    case Padding::Reflection:
      return std::clamp(reflect(c, size, s.align_corners), 0.0, last);
  }
  return c;
}

// Keys' cubic convolution weight at distance d.
double cubic_weight(double d) {
  d = std::abs(d);
  if (d <= 1.0) return ((kCubicA + 2.0) * d - (kCubicA + 3.0)) * d * d + 1.0;
  return ((kCubicA * d - 5.0 * kCubicA) * d + 8.0 * kCubicA) * d - 4.0 * kCubicA;
}

AxisTaps axis_taps(const Sampling& s, double g, int64_t size) {
  AxisTaps taps;
  const auto n = static_cast<double>(size);
  const double c = s.align_corners ? (g + 1.0) / 2.0 * (n - 1.0) : ((g + 1.0) * n - 1.0) / 2.0;
  if (std::isnan(c) || (s.padding == Padding::Reflection && std::isinf(c))) {
    taps.count = -1;
    return taps;
  }
  if (s.mode == Mode::Bicubic) {
    // Clamping or shifting by whole periods reads the same elements and keeps the positions
    // below small enough to convert: past 3 outside, zeros reads none and border the edge.
    double x = c;
    if (s.padding == Padding::Zeros) x = std::clamp(c, -3.0, n + 1.0);
    if (s.padding == Padding::Border) x = std::clamp(c, -3.0, n + 2.0);
    const double period = reflection_period(size, s.align_corners);
    if (s.padding == Padding::Reflection && period > 0.0) x = std::fmod(c, period);
    const double below = std::floor(x);
    const double t = x - below;
    for (int k = 0; k < kMaxTaps; ++k) {
      const double position = pad(s, below - 1.0 + k, size);
      taps.add(static_cast<int64_t>(position), cubic_weight(t + 1.0 - k), size);
    }
    return taps;
  }
  // Past 2 outside, zeros reads nothing either way.
  double x = pad(s, c, size);
  if (s.padding == Padding::Zeros) x = std::clamp(x, -2.0, n + 1.0);
  if (s.mode == Mode::Nearest) {
    taps.add(static_cast<int64_t>(std::nearbyint(x)), 1.0, size);  // ties to even
    return taps;
  }
  const double below = std::floor(x);
  const double t = x - below;
  const auto i = static_cast<int64_t>(below);
  taps.add(i, 1.0 - t, size);
  taps.add(i + 1, t, size);
  return taps;
}

// One grid point's taps, ready for the channel loop: per spatial axis of X (outermost first:
// D, H, W), offsets scaled by the axis' stride.
template <class T>
struct PointTaps {
  bool nan = false;
  int rank = 0;  // spatial axes
  std::array<int, kMaxSpatial> count{};
  std::array<std::array<int64_t, kMaxTaps>, kMaxSpatial> offset{};
  std::array<std::array<T, kMaxTaps>, kMaxSpatial> weight{};

  // g: the point's grid values, x (the last axis) first; size, stride: X's spatial axes.
  void set(const Sampling& s, const T* g, int spatial, const int64_t* size, const int64_t* stride) {
    nan = false;
    rank = spatial;
    for (int a = 0; a < rank; ++a) {
      const auto u = static_cast<size_t>(a);
      const AxisTaps t = axis_taps(s, static_cast<double>(g[rank - 1 - a]), size[a]);
      nan = nan || t.count < 0;
      count[u] = std::max(t.count, 0);
      for (size_t k = 0; k < kMaxTaps; ++k) {
        offset[u][k] = t.index[k] * stride[a];
        weight[u][k] = static_cast<T>(t.weight[k]);
      }
    }
  }

  // Where nearest reads: an offset into the volume, or kOutside / kNotANumber.
  int64_t nearest_source() const {
    if (nan) return kNotANumber;
    int64_t at = 0;
    for (size_t a = 0; a < static_cast<size_t>(rank); ++a) {
      if (count[a] == 0) return kOutside;
      at += offset[a][0];
    }
    return at;
  }

  T interpolate(const T* volume) const {
    if (nan) return std::numeric_limits<T>::quiet_NaN();
    return sum_from(volume, 0);
  }

 private:
  // Axis a's taps in order, each weight times the sum over the inner axes from there.
  T sum_from(const T* base, size_t a) const {
    T sum{0};
    const auto n = static_cast<size_t>(count[a]);
    if (a + 1 == static_cast<size_t>(rank)) {
      for (size_t k = 0; k < n; ++k) sum += weight[a][k] * base[offset[a][k]];
      return sum;
    }
    for (size_t k = 0; k < n; ++k) sum += weight[a][k] * sum_from(base + offset[a][k], a + 1);
    return sum;
  }
};

// A task's buffers for one output row: each point's taps and, for nearest, its source.
struct RowScratch {
  int64_t points_offset = 0;
  int64_t source_offset = 0;
  int64_t bytes = 0;
};

template <class T>
RowScratch row_scratch(int64_t out_w) {
  WorkspaceLayout layout;
  RowScratch r;
  r.points_offset = layout.add<PointTaps<T>>(out_w);
  r.source_offset = layout.add<int64_t>(out_w);
  r.bytes = layout.bytes();
  return r;
}

// Output rows are (n, every output spatial index but the last); a row holds out_w points.
template <class T>
struct GridSampleKernel {
  static void run(const KernelArgs& args) {
    const Shape& in = args.inputs[0].shape;
    const TensorView& out = args.outputs[0];
    if (out.numel() == 0) return;
    const Sampling s(args.attrs);
    const int spatial = in.rank() - 2;
    const int64_t channels = in[1];
    const std::vector<int64_t> strides = in.strides();
    const int64_t* size = &in.dims()[2];
    const int64_t* stride = &strides[2];
    const int64_t volume = strides[1];
    const int64_t out_w = out.shape[out.shape.rank() - 1];
    int64_t rows_per_batch = 1;  // output spatial indices but the last
    for (int a = 2; a < out.shape.rank() - 1; ++a) rows_per_batch *= out.shape[a];
    const T* x = args.inputs[0].as<T>();
    const T* grid = args.inputs[1].as<T>();
    T* y = out.as<T>();
    const int64_t taps = s.mode == Mode::Nearest   ? 1
                         : s.mode == Mode::Bicubic ? 16
                                                   : int64_t{1} << spatial;
    const int64_t row_work = std::max<int64_t>(1, out_w * (channels + 1) * taps);
    const int64_t rows_per_task = std::max<int64_t>(1, kElementwiseChunk / row_work);
    const RowScratch scratch = row_scratch<T>(out_w);
    args.pool.parallel_chunks(
        out.shape[0] * rows_per_batch, rows_per_task, [&](int64_t begin, int64_t end) {
          const std::span<PointTaps<T>> points(
              worker_part<PointTaps<T>>(args.pool, scratch.points_offset, out_w, args.node),
              static_cast<size_t>(out_w));
          std::uninitialized_value_construct(points.begin(), points.end());
          int64_t* const source =
              worker_part<int64_t>(args.pool, scratch.source_offset, out_w, args.node);
          const T nan = std::numeric_limits<T>::quiet_NaN();
          for (int64_t r = begin; r < end; ++r) {
            const int64_t n = r / rows_per_batch, row = r % rows_per_batch;
            const T* g = grid + r * out_w * spatial;
            for (int64_t j = 0; j < out_w; ++j) {
              points[static_cast<size_t>(j)].set(s, g + j * spatial, spatial, size, stride);
            }
            if (s.mode == Mode::Nearest) {
              for (int64_t j = 0; j < out_w; ++j) {
                source[j] = points[static_cast<size_t>(j)].nearest_source();
              }
            }
            for (int64_t c = 0; c < channels; ++c) {
              const T* plane = x + (n * channels + c) * volume;
              T* yr = y + ((n * channels + c) * rows_per_batch + row) * out_w;
              if (s.mode == Mode::Nearest) {
                for (int64_t j = 0; j < out_w; ++j) {
                  const int64_t from = source[j];
                  yr[j] = from >= 0 ? plane[from] : from == kOutside ? T{0} : nan;
                }
                continue;
              }
              for (int64_t j = 0; j < out_w; ++j) {
                yr[j] = points[static_cast<size_t>(j)].interpolate(plane);
              }
            }
          }
        });
  }
};

// One kernel per (mode, dtype), so the plan names the interpolation that runs.
const DTypeKernels& grid_sample_kernels(Mode mode) {
  static const DTypeKernels kNearest =
      kernels_for<GridSampleKernel>(FloatTypes{}, "grid_sample_nearest");
  static const DTypeKernels kBilinear =
      kernels_for<GridSampleKernel>(FloatTypes{}, "grid_sample_bilinear");
  static const DTypeKernels kBicubic =
      kernels_for<GridSampleKernel>(FloatTypes{}, "grid_sample_bicubic");
  return mode == Mode::Nearest ? kNearest : mode == Mode::Bilinear ? kBilinear : kBicubic;
}

// Each task keeps one output row's taps and sources in its worker's scratch.
KernelSelection select_grid_sample_kernel(const KernelQuery& query) {
  const Sampling s{AttrReader(query.node)};
  const DType dtype = query.inputs[0]->dtype;
  const Shape& out = query.outputs[0].shape;
  const int64_t out_w = out.rank() >= 4 ? out[out.rank() - 1] : 0;
  const int64_t bytes =
      dtype == DType::F64 ? row_scratch<double>(out_w).bytes : row_scratch<float>(out_w).bytes;
  return with_scratch(select_by_dtype(grid_sample_kernels(s.mode), query.node, dtype), 0, bytes);
}

}  // namespace

void register_resampling_grid_sample_kernels(KernelTable& table) {
  table[static_cast<size_t>(op_index(OpKind::GridSample))] = {
      &select_grid_sample_kernel, kFloatTypes, KernelDeterminism::BitExact};
}

}  // namespace volta::cpu
