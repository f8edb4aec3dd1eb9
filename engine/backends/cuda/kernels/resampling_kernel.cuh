#pragma once
// Resize's and GridSample's output elements (kernels/resampling.cu launches them), ports of the
// CPU's kernels (cpu/kernels/resampling.cpp, resampling_grid_sample.cpp) operation for
// operation. An element finds its taps in double as the CPU finds them (the same IEEE
// operations in the same order; the .cu files build with -fmad=false, so nothing is
// contracted), rounds the weights to the element type once, and sums in the element type in the
// CPU's order. The CPU builds its tap tables once per axis or row; recomputing them per element
// gives the same values. Nearest copies elements.
//
// Plain CUDA C++ over launch.h, so that a host test can also run it (tests/
// cuda_resampling_emulation_test.cpp) against the CPU backend without a device.

#include <cmath>
#include <cstdint>
#include <cstring>

#include "launch.h"

namespace volta::cuda::resampling_detail {

// The libm functions used, exact on both sides (floor, fabs, fmod and nearbyint are exact by
// definition): the device's under nvcc, the C++ library's in a host emulation.
#ifdef __CUDACC__
__device__ __forceinline__ double floor_of(double v) { return floor(v); }
__device__ __forceinline__ double abs_of(double v) { return fabs(v); }
__device__ __forceinline__ double fmod_of(double a, double b) { return fmod(a, b); }
__device__ __forceinline__ double nearbyint_of(double v) { return nearbyint(v); }
__device__ __forceinline__ bool isnan_of(double v) { return isnan(v); }
__device__ __forceinline__ bool isinf_of(double v) { return isinf(v); }
#else
inline double floor_of(double v) { return std::floor(v); }
inline double abs_of(double v) { return std::fabs(v); }
inline double fmod_of(double a, double b) { return std::fmod(a, b); }
inline double nearbyint_of(double v) { return std::nearbyint(v); }
inline bool isnan_of(double v) { return std::isnan(v); }
inline bool isinf_of(double v) { return std::isinf(v); }
#endif

inline constexpr int kMaxTaps = 4;
// A Resize axis' tap count for a coordinate outside the input under tf_crop_and_resize.
inline constexpr int kExtrapolate = -1;

// std::clamp's comparisons: v < lo ? lo : hi < v ? hi : v.
__device__ __forceinline__ double clamp_like_std(double v, double lo, double hi) {
  return v < lo ? lo : (hi < v ? hi : v);
}

// std::numeric_limits<T>::quiet_NaN(), the CPU's NaN bits.
template <class T>
__device__ __forceinline__ T quiet_nan() {
  T v;
  if constexpr (sizeof(T) == 4) {
    const uint32_t bits = 0x7fc00000u;
    memcpy(&v, &bits, sizeof v);
  } else {
    const uint64_t bits = 0x7ff8000000000000ull;
    memcpy(&v, &bits, sizeof v);
  }
  return v;
}

// ---- Resize ----

struct ResizeTaps {
  int count = 0;  // taps, or kExtrapolate; 0: exclude_outside left none (NaN)
  int64_t offset[kMaxTaps] = {};
  double weight[kMaxTaps] = {};
};

// The CPU's source_coordinate: NaN when tf_crop_and_resize puts output x outside the input.
__device__ __forceinline__ double source_coordinate(const ResizeLaunch& r, int a, int64_t x) {
  const double scale = r.scales[a];
  const auto xd = static_cast<double>(x);
  const int64_t in = r.in_dims[a];
  const int64_t out = r.out_dims[a];
  const auto last = static_cast<double>(in - 1);
  switch (r.transform) {
    case ResizeTransform::HalfPixel:
      return (xd + 0.5) / scale - 0.5;
    case ResizeTransform::HalfPixelSymmetric: {
      const double adjustment = static_cast<double>(out) / (scale * static_cast<double>(in));
      const double offset = static_cast<double>(in) / 2.0 * (1.0 - adjustment);
      return offset + (xd + 0.5) / scale - 0.5;
    }
    case ResizeTransform::PytorchHalfPixel:
      return out > 1 ? (xd + 0.5) / scale - 0.5 : 0.0;
    case ResizeTransform::AlignCorners:
      return out == 1 ? 0.0 : xd * last / (scale * static_cast<double>(in) - 1.0);
    case ResizeTransform::Asymmetric:
      return xd / scale;
    case ResizeTransform::TfHalfPixelForNearest:
      return (xd + 0.5) / scale;
    case ResizeTransform::TfCropAndResize:
      break;
  }
  const double start = r.roi_start[a];
  const double end = r.roi_end[a];
  const double c = out > 1 ? start * last + xd * (end - start) * last / static_cast<double>(out - 1)
                           : 0.5 * (start + end) * last;
  return c < 0.0 || c > last ? quiet_nan<double>() : c;
}

__device__ __forceinline__ int64_t nearest_index(NearestMode mode, double c) {
  const double below = floor_of(c);
  const double fraction = c - below;
  bool up = false;
  if (mode == NearestMode::RoundPreferFloor) {
    up = fraction > 0.5;
  } else if (mode == NearestMode::RoundPreferCeil) {
    up = fraction >= 0.5;
  } else {
    up = mode == NearestMode::Ceil;
  }
  return static_cast<int64_t>(below) + (up ? 1 : 0);
}

// Keys' cubic convolution kernel at distance d (the CPU's expression, term for term).
__device__ __forceinline__ double cubic_weight(double a, double d) {
  d = abs_of(d);
  if (d <= 1.0) return ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0;
  return ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a;
}

// The CPU's AxisTaps entry for output index x on axis a: sample_taps, then the indices clamped
// into the input and scaled by the stride.
__device__ __forceinline__ ResizeTaps resize_taps(const ResizeLaunch& r, int a, int64_t x) {
  ResizeTaps taps;
  const int64_t in = r.in_dims[a];
  double c = source_coordinate(r, a, x);
  if (isnan_of(c)) {
    taps.count = kExtrapolate;
    return taps;
  }
  c = clamp_like_std(c, -3.0, static_cast<double>(in) + 3.0);
  const double below = floor_of(c);
  const double t = c - below;
  const auto base = static_cast<int64_t>(below);
  int64_t index[kMaxTaps] = {};
  double w[kMaxTaps] = {};
  int n = 0;
  if (r.mode == ResizeMode::Nearest) {
    index[0] = t == 0.0 ? base : nearest_index(r.nearest, c);
    w[0] = 1.0;
    n = 1;
  } else if (t == 0.0) {
    index[0] = base;
    w[0] = 1.0;
    n = 1;
  } else if (r.mode == ResizeMode::Linear) {
    index[0] = base;
    index[1] = base + 1;
    w[0] = 1.0 - t;
    w[1] = t;
    n = 2;
  } else {
    for (int k = 0; k < 4; ++k) {
      index[k] = base - 1 + k;
      w[k] = cubic_weight(r.cubic_a, t + 1.0 - static_cast<double>(k));
    }
    n = 4;
  }
  if (r.mode != ResizeMode::Nearest && r.exclude_outside) {
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
    n = kept;
  }
  taps.count = n;
  for (int k = 0; k < n; ++k) {
    const int64_t i = index[k] < 0 ? 0 : (index[k] > in - 1 ? in - 1 : index[k]);
    taps.offset[k] = i * r.in_strides[a];
    taps.weight[k] = w[k];
  }
  return taps;
}

// Output element i's taps on every axis; returns the outer axes' state as the CPU's RowTaps
// (kExtrapolate wins over 0, 0 over 1).
__device__ __forceinline__ int element_taps(const ResizeLaunch& r, int64_t i, ResizeTaps* taps) {
  int64_t index[kMaxResizeRank] = {};
  for (int a = r.rank - 1; a >= 0; --a) {
    index[a] = i % r.out_dims[a];
    i /= r.out_dims[a];
  }
  int state = 1;
  for (int a = 0; a < r.rank; ++a) {
    taps[a] = resize_taps(r, a, index[a]);
    const int n = taps[a].count;
    if (a < r.rank - 1 && n <= 0 && (n == kExtrapolate || state != kExtrapolate)) state = n;
  }
  return state;
}

// Nearest (rank >= 1): the element at the taps' offsets, or the extrapolated one.
template <class U>
__device__ __forceinline__ U resize_nearest_element(const ResizeLaunch& r, const U* x, int64_t i) {
  ResizeTaps taps[kMaxResizeRank];
  const int state = element_taps(r, i, taps);
  if (state == kExtrapolate || taps[r.rank - 1].count == kExtrapolate) {
    U extrapolated;
    memcpy(&extrapolated, &r.extrapolated_bits, sizeof(U));
    return extrapolated;
  }
  int64_t at = 0;
  for (int a = 0; a < r.rank; ++a) at += taps[a].offset[0];
  return x[at];
}

// The CPU's Interpolation::rows for one element (rank >= 1): for each combination of the outer
// axes' taps (the first axis slowest), its weight the product of theirs in double (from 1.0,
// axis by axis) rounded to T, times the sum over the last axis' taps.
template <class T>
__device__ __forceinline__ T resize_interpolated_element(const ResizeLaunch& r, const T* x,
                                                         int64_t i) {
  const int outer = r.rank - 1;
  ResizeTaps taps[kMaxResizeRank];
  const int state = element_taps(r, i, taps);
  const ResizeTaps& last = taps[outer];
  if (state == kExtrapolate || last.count == kExtrapolate) {
    T extrapolated;
    memcpy(&extrapolated, &r.extrapolated_bits, sizeof(T));
    return extrapolated;
  }
  if (state == 0 || last.count == 0) return quiet_nan<T>();
  T last_weight[kMaxTaps] = {};
  for (int k = 0; k < last.count; ++k) last_weight[k] = static_cast<T>(last.weight[k]);
  int pick[kMaxResizeRank] = {};
  T sum{0};
  for (;;) {
    double weight = 1.0;
    int64_t at = 0;
    for (int a = 0; a < outer; ++a) {
      weight = weight * taps[a].weight[pick[a]];
      at += taps[a].offset[pick[a]];
    }
    const T* xp = x + at;
    T inner{0};
    for (int k = 0; k < last.count; ++k) inner += last_weight[k] * xp[last.offset[k]];
    sum += static_cast<T>(weight) * inner;
    int a = outer - 1;
    for (; a >= 0; --a) {
      if (++pick[a] < taps[a].count) break;
      pick[a] = 0;
    }
    if (a < 0) return sum;
  }
}

// ---- GridSample ----

struct GridTaps {
  int count = 0;  // < 0: the output is NaN
  int64_t index[kMaxTaps] = {};
  double weight[kMaxTaps] = {};

  // Taps outside the axis add nothing (only zeros padding leaves any).
  __device__ __forceinline__ void add(int64_t i, double w, int64_t size) {
    if (i < 0 || i >= size) return;
    index[count] = i;
    weight[count] = w;
    ++count;
  }
};

inline constexpr double kCubicA = -0.75;

__device__ __forceinline__ double reflection_period(int64_t size, bool align_corners) {
  return align_corners ? 2.0 * static_cast<double>(size - 1) : 2.0 * static_cast<double>(size);
}

__device__ __forceinline__ double reflect(double c, int64_t size, bool align_corners) {
  const double period = reflection_period(size, align_corners);
  if (period == 0.0) return 0.0;
  const double low = align_corners ? 0.0 : -0.5;
  double r = fmod_of(abs_of(c - low), period);
  if (r > 0.5 * period) r = period - r;
  return low + r;
}

__device__ __forceinline__ double pad_coordinate(const GridSampleLaunch& s, double c,
                                                 int64_t size) {
  const double last = static_cast<double>(size - 1);
  switch (s.padding) {
    case GridPadding::Zeros:
      return c;
    case GridPadding::Border:
      return clamp_like_std(c, 0.0, last);
    case GridPadding::Reflection:
      return clamp_like_std(reflect(c, size, s.align_corners), 0.0, last);
  }
  return c;
}

__device__ __forceinline__ double grid_cubic_weight(double d) {
  d = abs_of(d);
  if (d <= 1.0) return ((kCubicA + 2.0) * d - (kCubicA + 3.0)) * d * d + 1.0;
  return ((kCubicA * d - 5.0 * kCubicA) * d + 8.0 * kCubicA) * d - 4.0 * kCubicA;
}

// The CPU's axis_taps of grid value g on an axis of `size` elements.
__device__ __forceinline__ GridTaps grid_taps(const GridSampleLaunch& s, double g, int64_t size) {
  GridTaps taps;
  const auto n = static_cast<double>(size);
  const double c = s.align_corners ? (g + 1.0) / 2.0 * (n - 1.0) : ((g + 1.0) * n - 1.0) / 2.0;
  if (isnan_of(c) || (s.padding == GridPadding::Reflection && isinf_of(c))) {
    taps.count = -1;
    return taps;
  }
  if (s.mode == GridSampleMode::Bicubic) {
    double x = c;
    if (s.padding == GridPadding::Zeros) x = clamp_like_std(c, -3.0, n + 1.0);
    if (s.padding == GridPadding::Border) x = clamp_like_std(c, -3.0, n + 2.0);
    const double period = reflection_period(size, s.align_corners);
    if (s.padding == GridPadding::Reflection && period > 0.0) x = fmod_of(c, period);
    const double below = floor_of(x);
    const double t = x - below;
    for (int k = 0; k < kMaxTaps; ++k) {
      const double position = pad_coordinate(s, below - 1.0 + k, size);
      taps.add(static_cast<int64_t>(position), grid_cubic_weight(t + 1.0 - k), size);
    }
    return taps;
  }
  double x = pad_coordinate(s, c, size);
  if (s.padding == GridPadding::Zeros) x = clamp_like_std(x, -2.0, n + 1.0);
  if (s.mode == GridSampleMode::Nearest) {
    taps.add(static_cast<int64_t>(nearbyint_of(x)), 1.0, size);  // ties to even
    return taps;
  }
  const double below = floor_of(x);
  const double t = x - below;
  const auto i = static_cast<int64_t>(below);
  taps.add(i, 1.0 - t, size);
  taps.add(i + 1, t, size);
  return taps;
}

// Output element i of [batch, channels, out_h, out_w].
template <class T>
__device__ __forceinline__ T grid_sample_element(const GridSampleLaunch& s, const T* x,
                                                 const T* grid, int64_t i) {
  const int64_t point = i % (s.out_h * s.out_w);
  const int64_t plane_index = i / (s.out_h * s.out_w);  // n * channels + c
  const int64_t n = plane_index / s.channels;
  const T* g = grid + (n * s.out_h * s.out_w + point) * 2;
  const GridTaps tx = grid_taps(s, static_cast<double>(g[0]), s.w);
  const GridTaps ty = grid_taps(s, static_cast<double>(g[1]), s.h);
  if (tx.count < 0 || ty.count < 0) return quiet_nan<T>();
  const T* plane = x + plane_index * s.h * s.w;
  if (s.mode == GridSampleMode::Nearest) {
    return tx.count == 0 || ty.count == 0 ? T{0} : plane[ty.index[0] * s.w + tx.index[0]];
  }
  T x_weight[kMaxTaps] = {};
  for (int k = 0; k < tx.count; ++k) x_weight[k] = static_cast<T>(tx.weight[k]);
  T sum{0};
  for (int a = 0; a < ty.count; ++a) {
    const T* row = plane + ty.index[a] * s.w;
    T across{0};
    for (int b = 0; b < tx.count; ++b) across += x_weight[b] * row[tx.index[b]];
    sum += static_cast<T>(ty.weight[a]) * across;
  }
  return sum;
}

}  // namespace volta::cuda::resampling_detail
