#pragma once
// One output element of the pooling and convolution kernels (kernels/pooling.cu,
// kernels/convolution.cu), computed whole by one thread with the CPU backend's operations in the
// CPU's order (cpu/kernels/pooling.cpp, convolution.cpp). Plain C++ over launch.h: nvcc
// compiles it for the device, and the host emulation test (tests/cuda_spatial_emulation_test.cpp)
// compiles it for the host and holds every element against the CPU backend bit for bit, which
// checks the indexing and the order without a device. The arithmetic goes through the helpers
// below: one correctly rounded IEEE operation each on both sides (the device's intrinsics, the
// host's operators under -ffp-contract=off), so the two compilations differ in NaN payloads at
// most.

#include <cmath>
#include <cstdint>
#include <limits>

#include "host_device.h"
#include "launch.h"
#include "leaf_stack.h"

namespace volta::cuda::spatial {

// ---- Arithmetic, one rounding each ----

VOLTA_HD float add(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
VOLTA_HD double add(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
VOLTA_HD float mul(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
VOLTA_HD double mul(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
VOLTA_HD float fma(float a, float b, float c) {
#ifdef __CUDA_ARCH__
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
VOLTA_HD double fma(double a, double b, double c) {
#ifdef __CUDA_ARCH__
  return __fma_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
VOLTA_HD double div(double a, double b) {
#ifdef __CUDA_ARCH__
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}
VOLTA_HD double sqrt(double a) {
#ifdef __CUDA_ARCH__
  return __dsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}
// std::abs: the sign bit cleared, a NaN's payload kept.
VOLTA_HD double abs(double a) {
#ifdef __CUDA_ARCH__
  return __longlong_as_double(__double_as_longlong(a) & 0x7fffffffffffffffll);
#else
  return std::fabs(a);
#endif
}
VOLTA_HD bool is_nan(float a) { return a != a; }
VOLTA_HD bool is_nan(double a) { return a != a; }
template <class T>
VOLTA_HD bool is_finite(T a) {
  return !is_nan(a) && !is_nan(mul(a, T(0)));  // inf * 0 is NaN, any finite * 0 is +-0
}
VOLTA_HD float lowest(float) {
#ifdef __CUDA_ARCH__
  return __int_as_float(static_cast<int>(0xff800000u));
#else
  return -std::numeric_limits<float>::infinity();
#endif
}
VOLTA_HD double lowest(double) {
#ifdef __CUDA_ARCH__
  return __longlong_as_double(static_cast<long long>(0xfff0000000000000ull));
#else
  return -std::numeric_limits<double>::infinity();
#endif
}

VOLTA_HD int64_t min_of(int64_t a, int64_t b) { return a < b ? a : b; }

// ---- Windows ----

// The taps j in [0, kernel) of a window starting at `start` with 0 <= start + j * dilation <
// size, as [lo, hi): the CPU's taps_inside (pooling) and valid_range (convolution).
struct Taps {
  int64_t lo;
  int64_t hi;
  VOLTA_HD int64_t count() const { return hi - lo; }
};
VOLTA_HD Taps taps_inside(int64_t start, int64_t kernel, int64_t dilation, int64_t size) {
  const int64_t lo = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
  const int64_t last = size - 1 - start;
  const int64_t hi = last < 0 ? 0 : last / dilation + 1;
  const int64_t clamped_lo = min_of(lo, kernel);
  return {clamped_lo, hi < clamped_lo ? clamped_lo : min_of(hi, kernel)};
}

// Flat offset o of a plane of dims[0] x dims[1] x dims[2] split into its three indices.
struct Position {
  int64_t at[kSpatialDims];
};
VOLTA_HD Position position_of(const int64_t* dims, int64_t o) {
  return {{o / (dims[1] * dims[2]), (o / dims[2]) % dims[1], o % dims[2]}};
}

// Output o's window of a pool: its start and its inside taps per axis.
struct PoolWindow {
  int64_t start[kSpatialDims];
  Taps taps[kSpatialDims];
};
VOLTA_HD PoolWindow pool_window(const PoolGeometry& g, int64_t o) {
  const Position p = position_of(g.out, o);
  PoolWindow w{};
  for (int a = 0; a < kSpatialDims; ++a) {
    w.start[a] = p.at[a] * g.stride[a] - g.pad_begin[a];
    w.taps[a] = taps_inside(w.start[a], g.kernel[a], g.dilation[a], g.in[a]);
  }
  return w;
}

// Calls visit(offset in the plane, d, h, w) for each inside tap in window order (row-major over
// the kernel), as the CPU's for_each_tap.
template <class Visit>
VOLTA_HD void for_each_tap(const PoolGeometry& g, const PoolWindow& win, const Visit& visit) {
  for (int64_t jd = win.taps[0].lo; jd < win.taps[0].hi; ++jd) {
    const int64_t id = win.start[0] + jd * g.dilation[0];
    for (int64_t jh = win.taps[1].lo; jh < win.taps[1].hi; ++jh) {
      const int64_t ih = win.start[1] + jh * g.dilation[1];
      const int64_t row = (id * g.in[1] + ih) * g.in[2];
      for (int64_t jw = win.taps[2].lo; jw < win.taps[2].hi; ++jw) {
        const int64_t iw = win.start[2] + jw * g.dilation[2];
        visit(row + iw, id, ih, iw);
      }
    }
  }
}

// ---- Windowed pools: output o of the plane at xp ----

// The first maximum in window order; a NaN replaces a number, and the first NaN stays. *within
// gets its offset in the plane (column_major: d + h * D + w * D * H).
template <class T>
VOLTA_HD T max_pool_element(const PoolGeometry& g, const T* xp, int64_t o, bool column_major,
                            int64_t* within) {
  T best = T(0);
  int64_t best_at = -1;
  int64_t best_pos[kSpatialDims] = {0, 0, 0};
  for_each_tap(g, pool_window(g, o), [&](int64_t at, int64_t d, int64_t h, int64_t w) {
    const T v = xp[at];
    if (best_at < 0 || v > best || (is_nan(v) && !is_nan(best))) {
      best = v;
      best_at = at;
      best_pos[0] = d;
      best_pos[1] = h;
      best_pos[2] = w;
    }
  });
  *within = column_major ? best_pos[0] + best_pos[1] * g.in[0] + best_pos[2] * g.in[0] * g.in[1]
                         : best_at;
  return best;
}

// The window positions inside the padded input [-pad_begin, size + pad_end).
VOLTA_HD int64_t padded_count(const PoolGeometry& g, const PoolWindow& win) {
  int64_t count = 1;
  for (int a = 0; a < kSpatialDims; ++a) {
    count *= taps_inside(win.start[a] + g.pad_begin[a], g.kernel[a], g.dilation[a],
                         g.in[a] + g.pad_begin[a] + g.pad_end[a])
                 .count();
  }
  return count;
}

// AveragePool and LpPool (p 1 or 2): the taps' terms summed in double (the op table's Wide
// accumulator) in window order, then divided or rooted in double and rounded once to T.
template <class T>
VOLTA_HD T sum_pool_element(PoolOp op, const PoolGeometry& g, const T* xp, int64_t o) {
  const PoolWindow win = pool_window(g, o);
  double sum = 0;
  for_each_tap(g, win, [&](int64_t at, int64_t, int64_t, int64_t) {
    const auto v = static_cast<double>(xp[at]);
    sum = add(sum, op == PoolOp::L1 ? abs(v) : op == PoolOp::L2 ? mul(v, v) : v);
  });
  switch (op) {
    case PoolOp::Average:
      return static_cast<T>(div(sum, static_cast<double>(win.taps[0].count() * win.taps[1].count() *
                                                         win.taps[2].count())));
    case PoolOp::AverageIncludePad:
      return static_cast<T>(div(sum, static_cast<double>(padded_count(g, win))));
    case PoolOp::L2:
      return static_cast<T>(sqrt(sum));
    default:
      return static_cast<T>(sum);
  }
}

// ---- Global pools: the CPU's fixed tree (reduce_tree.h) over one plane, by one thread ----

// The CPU's reduce_row over n elements (load(i): element i's term): leaves of kTreeLeaf, element
// i of a leaf into lane i % kTreeLanes from `identity`, lanes combined pairwise, leaves pairwise.
template <class A, class Load, class Combine>
VOLTA_HD A tree_reduce(int64_t n, A identity, const Load& load, const Combine& combine) {
  tree::LeafStack<A> stack;
  const int64_t leaves = n <= kTreeLeaf ? 1 : (n + kTreeLeaf - 1) / kTreeLeaf;
  for (int64_t leaf = 0; leaf < leaves; ++leaf) {
    const int64_t first = leaf * kTreeLeaf;
    const int64_t count = min_of(kTreeLeaf, n - first);
    A lanes[kTreeLanes];
    for (A& lane : lanes) lane = identity;
    for (int64_t i = 0; i < count; ++i) {
      A& lane = lanes[i % kTreeLanes];
      lane = combine(lane, load(first + i));
    }
    for (int width = kTreeLanes / 2; width >= 1; width /= 2) {
      for (int i = 0; i < width; ++i) lanes[i] = combine(lanes[2 * i], lanes[2 * i + 1]);
    }
    stack.push(lanes[0], combine);
  }
  return stack.result(combine);
}

// The CPU's max_propagating_nan: a NaN on the left stays, one on the right replaces; ties keep
// the left operand.
struct MaxPropagatingNan {
  template <class T>
  VOLTA_HD T operator()(T a, T b) const {
    return (!is_nan(a) && !(b <= a)) ? b : a;
  }
};
struct Plus {
  VOLTA_HD double operator()(double a, double b) const { return add(a, b); }
};

// The global pool of the n elements at xp: the max in T, the others' terms in double.
template <class T>
VOLTA_HD T global_pool_element(GlobalPoolOp op, const T* xp, int64_t n) {
  if (op == GlobalPoolOp::Max) {
    return tree_reduce(
        n, lowest(T{}), [xp](int64_t i) { return xp[i]; }, MaxPropagatingNan{});
  }
  const double sum = tree_reduce(
      n, 0.0,
      [xp, op](int64_t i) {
        const auto v = static_cast<double>(xp[i]);
        return op == GlobalPoolOp::L1 ? abs(v) : op == GlobalPoolOp::L2 ? mul(v, v) : v;
      },
      Plus{});
  if (op == GlobalPoolOp::Average) return static_cast<T>(div(sum, static_cast<double>(n)));
  if (op == GlobalPoolOp::L2) return static_cast<T>(sqrt(sum));
  return static_cast<T>(sum);
}

// ---- Convolution: element `flat` of Y ----

VOLTA_HD int64_t volume(const int64_t* dims) { return dims[0] * dims[1] * dims[2]; }

// Kernel tap `tap` (row-major over the kernel) as its three indices.
VOLTA_HD Position tap_position(const ConvGeometry& g, int64_t tap) {
  return position_of(g.kernel, tap);
}

// Conv reads input position o * stride - pad + k * dilation per axis; -1 in `flat` when it falls
// into the padding.
VOLTA_HD int64_t conv_read(const ConvGeometry& g, const Position& o, const Position& k) {
  int64_t flat = 0;
  for (int a = 0; a < kSpatialDims; ++a) {
    const int64_t i = o.at[a] * g.stride[a] - g.pad[a] + k.at[a] * g.dilation[a];
    if (i < 0 || i >= g.in[a]) return -1;
    flat = flat * g.in[a] + i;
  }
  return flat;
}

// Where output element `flat` of a Conv or ConvTranspose sits, and the sizes both index with.
struct ConvOutput {
  int64_t out_size, in_size, taps;
  int64_t m, image;             // output channel, image
  int64_t group_in, group_out;  // channels per group
  Position o;
};

VOLTA_HD ConvOutput conv_output(const ConvGeometry& g, int64_t flat) {
  ConvOutput c;
  c.out_size = volume(g.out);
  c.in_size = volume(g.in);
  c.taps = volume(g.kernel);
  c.m = (flat / c.out_size) % g.channels_out;
  c.image = flat / (c.out_size * g.channels_out);
  c.o = position_of(g.out, flat % c.out_size);
  c.group_in = g.channels_in / g.group;
  c.group_out = g.channels_out / g.group;
  return c;
}

// The CPU GEMM's sum over a depth of `depth` for one output: slices of kGemmSlice<T>, each a
// running FMA sum of term(k) = (a, b) from +0; the first slice gives fma(1, *bias, 1 * sum) (or
// 1 * sum without a bias), each later one fma(1, y, 1 * sum). Depth 0 is one empty slice, as
// in the GEMM: the bias still lands.
template <class T, class Term>
VOLTA_HD T gemm_order_sum(int64_t depth, const T* bias, const Term& term) {
  T y = T(0);
  for (int64_t k0 = 0; k0 == 0 || k0 < depth; k0 += kGemmSlice<T>) {
    T sum = T(0);
    const int64_t k1 = min_of(k0 + kGemmSlice<T>, depth);
    for (int64_t k = k0; k < k1; ++k) {
      T a, b;
      term(k, a, b);
      sum = fma(a, b, sum);
    }
    const T scaled = mul(T(1), sum);
    if (k0 > 0) {
      y = fma(T(1), y, scaled);
    } else {
      y = bias != nullptr ? fma(T(1), *bias, scaled) : scaled;
    }
  }
  return y;
}

// Conv as the CPU's im2col + GEMM computes it: K = (input channel of the group, tap) in that
// order, cut into slices of kGemmSlice<T>; within a slice one running FMA sum from +0 (a padded
// tap reads the column matrix's 0); the first slice gives fma(1, B[m], 1 * sum) (or 1 * sum
// without B), each later one fma(1, Y, 1 * sum). Depthwise (one input channel per group): the
// CPU's direct kernel, a sum from +0 of weight * x in tap order (a padded tap adds weight * 0
// only for a non-finite weight, where it makes NaN), then + B[m].
template <class T>
VOLTA_HD T conv_element(const ConvGeometry& g, const T* x, const T* w, const T* bias,
                        int64_t flat) {
  const ConvOutput c = conv_output(g, flat);
  if (g.depthwise) {
    const int64_t multiplier = g.channels_out / g.group;
    const T* xc = x + (c.image * g.channels_in + c.m / multiplier) * c.in_size;
    T acc = T(0);
    for (int64_t tap = 0; tap < c.taps; ++tap) {
      const T weight = w[c.m * c.taps + tap];
      const int64_t at = conv_read(g, c.o, tap_position(g, tap));
      if (at >= 0) {
        acc = add(acc, mul(weight, xc[at]));
      } else if (!is_finite(weight)) {
        acc = add(acc, mul(weight, T(0)));
      }
    }
    return bias != nullptr ? add(acc, bias[c.m]) : acc;
  }
  const T* xg = x + (c.image * g.channels_in + (c.m / c.group_out) * c.group_in) * c.in_size;
  const T* wm = w + c.m * c.group_in * c.taps;
  return gemm_order_sum<T>(c.group_in * c.taps, bias != nullptr ? bias + c.m : nullptr,
                           [&](int64_t k, T& a, T& b) {
                             const int64_t at = conv_read(g, c.o, tap_position(g, k % c.taps));
                             a = wm[k];
                             b = at >= 0 ? xg[(k / c.taps) * c.in_size + at] : T(0);
                           });
}

// ConvTranspose as the CPU's GEMM + col2im computes it, gathered per output element: from B[m]
// (or +0), add in tap order the column value of each tap that lands here, input position
// (o + pad - k * dilation) / stride per axis when that divides and falls inside X. A column
// value is the GEMM's sum over the group's input channels c in order, in slices of
// kGemmSlice<T>: fma(W[c][m % (M / group)][tap], X[c][i], .) from +0, 1 * sum for the first
// slice, fma(1, col, 1 * sum) for each later one.
template <class T>
VOLTA_HD T conv_transpose_element(const ConvGeometry& g, const T* x, const T* w, const T* bias,
                                  int64_t flat) {
  const ConvOutput c = conv_output(g, flat);
  const int64_t grp = c.m / c.group_out;
  const T* xg = x + (c.image * g.channels_in + grp * c.group_in) * c.in_size;
  // W is [C, M / group, k...]: channel c of the group, row (m within the group, tap).
  const T* wg = w + grp * c.group_in * c.group_out * c.taps + (c.m % c.group_out) * c.taps;
  T acc = bias != nullptr ? bias[c.m] : T(0);
  for (int64_t tap = 0; tap < c.taps; ++tap) {
    const Position k = tap_position(g, tap);
    int64_t at = 0;
    for (int a = 0; a < kSpatialDims && at >= 0; ++a) {
      const int64_t t = c.o.at[a] + g.pad[a] - k.at[a] * g.dilation[a];
      const int64_t i = t >= 0 && t % g.stride[a] == 0 ? t / g.stride[a] : -1;
      at = i >= 0 && i < g.in[a] ? at * g.in[a] + i : -1;
    }
    if (at < 0) continue;
    const T col = gemm_order_sum<T>(c.group_in, nullptr, [&](int64_t channel, T& a, T& b) {
      a = wg[channel * c.group_out * c.taps + tap];
      b = xg[channel * c.in_size + at];
    });
    acc = add(acc, col);
  }
  return acc;
}

// ConvGradFilter's direct path (one X channel per group) for weight `tap` of output channel m:
// the CPU's direct_weight. Per image: when the dY plane holds a non-finite value, lane 0 adds the
// sum from +0 of dY * 0 over the positions whose read falls into the padding (NaN then, where
// it is not +0); then each inside position adds dY * X (two roundings) into lane (ow - first ow)
// % kTreeLanes of its row. The lanes combine pairwise.
template <class T>
VOLTA_HD T grad_filter_direct_element(const ConvGeometry& g, const T* x, const T* dy, int64_t m,
                                      int64_t tap) {
  const int64_t in_size = volume(g.in);
  const int64_t out_size = volume(g.out);
  const Position k = tap_position(g, tap);
  Taps reads[kSpatialDims];
  for (int a = 0; a < kSpatialDims; ++a) {
    reads[a] = taps_inside(k.at[a] * g.dilation[a] - g.pad[a], g.out[a], g.stride[a], g.in[a]);
  }
  const auto inside = [&](const Position& o) {
    for (int a = 0; a < kSpatialDims; ++a) {
      if (o.at[a] < reads[a].lo || o.at[a] >= reads[a].hi) return false;
    }
    return true;
  };
  const T* xc0 = x + (m / (g.channels_out / g.group)) * in_size;
  T lanes[kTreeLanes];
  for (T& lane : lanes) lane = T(0);
  for (int64_t n = 0; n < g.batch; ++n) {
    const T* xc = xc0 + n * g.channels_in * in_size;
    const T* dyc = dy + (n * g.channels_out + m) * out_size;
    bool finite = true;
    for (int64_t o = 0; o < out_size && finite; ++o) finite = is_finite(dyc[o]);
    if (!finite) {
      T padded = T(0);
      for (int64_t o = 0; o < out_size; ++o) {
        if (!inside(position_of(g.out, o))) padded = add(padded, mul(dyc[o], T(0)));
      }
      lanes[0] = add(lanes[0], padded);
    }
    for (int64_t od = reads[0].lo; od < reads[0].hi; ++od) {
      const int64_t id = od * g.stride[0] - g.pad[0] + k.at[0] * g.dilation[0];
      for (int64_t oh = reads[1].lo; oh < reads[1].hi; ++oh) {
        const int64_t ih = oh * g.stride[1] - g.pad[1] + k.at[1] * g.dilation[1];
        const T* src = xc + (id * g.in[1] + ih) * g.in[2] + k.at[2] * g.dilation[2] - g.pad[2];
        const T* grad = dyc + (od * g.out[1] + oh) * g.out[2];
        for (int64_t ow = reads[2].lo; ow < reads[2].hi; ++ow) {
          T& lane = lanes[(ow - reads[2].lo) % kTreeLanes];
          lane = add(lane, mul(grad[ow], src[ow * g.stride[2]]));
        }
      }
    }
  }
  for (int width = kTreeLanes / 2; width >= 1; width /= 2) {
    for (int i = 0; i < width; ++i) lanes[i] = add(lanes[2 * i], lanes[2 * i + 1]);
  }
  return lanes[0];
}

// ConvGradFilter, element `flat` of dW [M, C / group, taps] (x: X, dy: dY; g's output is dY's
// spatial dims, its kernel dW's): the CPU's im2col + GEMM order. dW starts at +0; per step of
// images_per_step images, one GEMM whose K is (image of the step, output position) in order, cut
// into slices of kGemmSlice<T>: a running FMA sum of dY * X (X 0 in the padding) from +0 per
// slice, folded by fma(1, dW, 1 * sum). Depthwise: grad_filter_direct_element.
template <class T>
VOLTA_HD T conv_grad_filter_element(const ConvGeometry& g, const T* x, const T* dy, int64_t flat) {
  const int64_t taps = volume(g.kernel);
  const int64_t group_in = g.channels_in / g.group;
  const int64_t m = flat / (group_in * taps);
  const int64_t tap = flat % taps;
  if (g.depthwise) return grad_filter_direct_element(g, x, dy, m, tap);
  const int64_t in_size = volume(g.in);
  const int64_t out_size = volume(g.out);
  const int64_t c = (m / (g.channels_out / g.group)) * group_in + (flat / taps) % group_in;
  const Position k = tap_position(g, tap);
  T y = T(0);
  for (int64_t first = 0; first < g.batch; first += g.images_per_step) {
    const int64_t depth = min_of(g.images_per_step, g.batch - first) * out_size;  // the GEMM's K
    for (int64_t k0 = 0; k0 == 0 || k0 < depth; k0 += kGemmSlice<T>) {
      T sum = T(0);
      const int64_t k1 = min_of(k0 + kGemmSlice<T>, depth);
      for (int64_t p = k0; p < k1; ++p) {
        const int64_t image = first + p / out_size;
        const int64_t o = p % out_size;
        const int64_t at = conv_read(g, position_of(g.out, o), k);
        const T xv = at >= 0 ? x[(image * g.channels_in + c) * in_size + at] : T(0);
        sum = fma(dy[(image * g.channels_out + m) * out_size + o], xv, sum);
      }
      y = fma(T(1), y, mul(T(1), sum));
    }
  }
  return y;
}

}  // namespace volta::cuda::spatial
