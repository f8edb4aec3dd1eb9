// Windowed and global pooling on the CPU.
//
// Windowed pools (MaxPool, AveragePool, LpPool) loop directly over each window's taps that
// fall inside the input, in window order (row-major over the kernel). AveragePool and LpPool
// (and their global forms) accumulate in Wide<T>, the op table's accumulator: the f32 sum of a
// window of large values overflows where the mean or the p-norm is finite. Work is cut into blocks
// of kBlock outputs along the last spatial axis of one (n, c) plane, a fixed number of blocks per
// task, so the split depends on the shape alone; every output is computed whole by one task. 1-D
// and 2-D pools run as 3-D ones with leading spatial dims of size 1.
//
// Global pools reduce each (n, c) plane with the fixed tree of reduce_tree.h.
//
// MaxPool: padding never wins (only input taps are visited), NaN propagates, and the first
// maximum in window order wins ties; with a NaN the first NaN is the one reported in Indices.

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "dtype_kernels.h"
#include "reduce_tree.h"

namespace volta::cpu {
namespace {

using Dims3 = std::array<int64_t, 3>;

struct Geometry {
  int64_t planes = 0;  // N * C
  Dims3 in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1}, stride{1, 1, 1}, dilation{1, 1, 1},
      pad_begin{0, 0, 0}, pad_end{0, 0, 0};
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
};

Geometry geometry(const KernelArgs& args) {
  const Shape& x = args.inputs[0].shape;
  const Shape& y = args.outputs[0].shape;
  const int spatial = x.rank() - 2;
  const int skip = 3 - spatial;
  Geometry g;
  g.planes = x[0] * x[1];
  const std::vector<int64_t>& kernel = args.attrs.get_ints("kernel_shape");
  const std::vector<int64_t>& strides = args.attrs.get_ints("strides");
  const std::vector<int64_t>& dilations = args.attrs.get_ints("dilations");
  const std::vector<int64_t>& pads = args.attrs.get_ints("pads");
  for (int a = 0; a < spatial; ++a) {
    const auto i = static_cast<size_t>(a);
    const auto d = static_cast<size_t>(a) + static_cast<size_t>(skip);
    g.in[d] = x[a + 2];
    g.out[d] = y[a + 2];
    g.kernel[d] = kernel[i];
    if (!strides.empty()) g.stride[d] = strides[i];
    if (!dilations.empty()) g.dilation[d] = dilations[i];
    if (!pads.empty()) {
      g.pad_begin[d] = pads[i];
      g.pad_end[d] = pads[i + static_cast<size_t>(spatial)];
    }
  }
  return g;
}

// The taps j in [0, kernel) of the window starting at `start` with 0 <= start + j * dilation
// < size, as [lo, hi).
struct Taps {
  int64_t lo, hi;
  int64_t count() const { return hi - lo; }
};
Taps taps_inside(int64_t start, int64_t kernel, int64_t dilation, int64_t size) {
  const int64_t lo = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
  const int64_t last = size - 1 - start;
  const int64_t hi = last < 0 ? 0 : last / dilation + 1;
  const int64_t clamped_lo = std::min(lo, kernel);
  return {clamped_lo, std::clamp(hi, clamped_lo, kernel)};
}

// One output's window along the three axes: the start of the window and its inside taps.
struct Window {
  Dims3 start;
  std::array<Taps, 3> taps;
  int64_t count() const { return taps[0].count() * taps[1].count() * taps[2].count(); }
};

// Calls visit(flat_input_offset, d, h, w) for each inside tap in window order.
template <class Visit>
void for_each_tap(const Geometry& g, const Window& win, const Visit& visit) {
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

// Outputs per work block along the last spatial axis, and blocks per task.
constexpr int64_t kBlock = 64;

int64_t window_taps(const Geometry& g) { return g.kernel[0] * g.kernel[1] * g.kernel[2]; }

// Runs out_fn(plane, o, window) for every output, o its flat offset in the plane.
template <class OutFn>
void for_each_output(const Geometry& g, ThreadPool& pool, const OutFn& out_fn) {
  const int64_t blocks_per_row = (g.out[2] + kBlock - 1) / kBlock;
  const int64_t rows = g.planes * g.out[0] * g.out[1];
  const int64_t blocks_per_task =
      std::max<int64_t>(1, kElementwiseChunk / (kBlock * std::max<int64_t>(window_taps(g), 1)));
  pool.parallel_chunks(rows * blocks_per_row, blocks_per_task, [&](int64_t b, int64_t e) {
    for (int64_t block = b; block < e; ++block) {
      const int64_t row = block / blocks_per_row;
      const int64_t oh = row % g.out[1];
      const int64_t od = (row / g.out[1]) % g.out[0];
      const int64_t plane = row / (g.out[1] * g.out[0]);
      Window win;
      win.start[0] = od * g.stride[0] - g.pad_begin[0];
      win.start[1] = oh * g.stride[1] - g.pad_begin[1];
      win.taps[0] = taps_inside(win.start[0], g.kernel[0], g.dilation[0], g.in[0]);
      win.taps[1] = taps_inside(win.start[1], g.kernel[1], g.dilation[1], g.in[1]);
      const int64_t first = (block % blocks_per_row) * kBlock;
      const int64_t last = std::min(first + kBlock, g.out[2]);
      for (int64_t ow = first; ow < last; ++ow) {
        win.start[2] = ow * g.stride[2] - g.pad_begin[2];
        win.taps[2] = taps_inside(win.start[2], g.kernel[2], g.dilation[2], g.in[2]);
        out_fn(plane, (od * g.out[1] + oh) * g.out[2] + ow, win);
      }
    }
  });
}

template <class T>
struct MaxPoolKernel {
  static void run(const KernelArgs& args) {
    if (args.outputs[0].numel() == 0) return;
    const Geometry g = geometry(args);
    const T* x = args.inputs[0].as<T>();
    T* y = args.outputs[0].as<T>();
    int64_t* indices = args.outputs.size() > 1 ? args.outputs[1].as<int64_t>() : nullptr;
    const bool column_major = args.attrs.get_int("storage_order") != 0;
    for_each_output(g, args.pool, [&](int64_t plane, int64_t o, const Window& win) {
      const T* xp = x + plane * g.in_size();
      T best = T(0);
      int64_t best_at = -1;
      Dims3 best_pos{};
      for_each_tap(g, win, [&](int64_t at, int64_t d, int64_t h, int64_t w) {
        const T v = xp[at];
        if (best_at < 0 || v > best || (is_nan(v) && !is_nan(best))) {
          best = v;
          best_at = at;
          best_pos = {d, h, w};
        }
      });
      y[plane * g.out_size() + o] = best;
      if (indices != nullptr) {
        const int64_t within =
            column_major ? best_pos[0] + best_pos[1] * g.in[0] + best_pos[2] * g.in[0] * g.in[1]
                         : best_at;
        indices[plane * g.out_size() + o] = plane * g.in_size() + within;
      }
    });
  }
};

// The number of window positions inside the padded input [-pad_begin, size + pad_end).
int64_t padded_count(const Geometry& g, const Window& win) {
  int64_t count = 1;
  for (size_t a = 0; a < 3; ++a) {
    count *= taps_inside(win.start[a] + g.pad_begin[a], g.kernel[a], g.dilation[a],
                         g.in[a] + g.pad_begin[a] + g.pad_end[a])
                 .count();
  }
  return count;
}

template <class T>
struct AveragePoolKernel {
  static void run(const KernelArgs& args) {
    if (args.outputs[0].numel() == 0) return;
    const Geometry g = geometry(args);
    const T* x = args.inputs[0].as<T>();
    T* y = args.outputs[0].as<T>();
    const bool include_pad = args.attrs.get_int("count_include_pad") != 0;
    for_each_output(g, args.pool, [&](int64_t plane, int64_t o, const Window& win) {
      const T* xp = x + plane * g.in_size();
      Wide<T> sum = 0;
      for_each_tap(g, win, [&](int64_t at, int64_t, int64_t, int64_t) { sum += xp[at]; });
      const int64_t count = include_pad ? padded_count(g, win) : win.count();
      y[plane * g.out_size() + o] = static_cast<T>(sum / static_cast<Wide<T>>(count));
    });
  }
};

// |x|^p and its inverse, with p = 1 and p = 2 exact.
template <class T>
T abs_pow(T v, int64_t p) {
  if (p == 1) return std::abs(v);
  if (p == 2) return v * v;
  return std::pow(std::abs(v), static_cast<T>(p));
}
template <class T>
T root(T sum, int64_t p) {
  if (p == 1) return sum;
  if (p == 2) return std::sqrt(sum);
  return std::pow(sum, T(1) / static_cast<T>(p));
}

template <class T>
struct LpPoolKernel {
  static void run(const KernelArgs& args) {
    if (args.outputs[0].numel() == 0) return;
    const Geometry g = geometry(args);
    const T* x = args.inputs[0].as<T>();
    T* y = args.outputs[0].as<T>();
    const int64_t p = args.attrs.get_int("p");
    for_each_output(g, args.pool, [&](int64_t plane, int64_t o, const Window& win) {
      const T* xp = x + plane * g.in_size();
      Wide<T> sum = 0;
      for_each_tap(g, win, [&](int64_t at, int64_t, int64_t, int64_t) {
        sum += abs_pow(static_cast<Wide<T>>(xp[at]), p);
      });
      y[plane * g.out_size() + o] = static_cast<T>(root(sum, p));
    });
  }
};

constexpr auto plus = [](auto a, auto b) { return a + b; };
constexpr auto max_of = [](auto a, auto b) { return max_propagating_nan(a, b); };

// Runs reduce(plane_data, size) -> T for every (n, c) plane of X.
template <class T, class Reduce>
void global_pool(const KernelArgs& args, const Reduce& reduce) {
  const ConstTensorView& in = args.inputs[0];
  const int64_t planes = in.shape[0] * in.shape[1];
  if (planes == 0) return;
  const int64_t size = in.numel() / planes;
  const T* x = in.as<T>();
  T* y = args.outputs[0].as<T>();
  args.pool.parallel_chunks(planes, std::max<int64_t>(1, kElementwiseChunk / size),
                            [&](int64_t b, int64_t e) {
                              for (int64_t p = b; p < e; ++p) y[p] = reduce(x + p * size, size);
                            });
}

template <class T>
struct GlobalAveragePoolKernel {
  static void run(const KernelArgs& args) {
    global_pool<T>(args, [](const T* xp, int64_t n) {
      using A = Wide<T>;
      const A sum = reduce_row(
          n, A{0}, [xp](int64_t i) { return static_cast<A>(xp[i]); }, plus);
      return static_cast<T>(sum / static_cast<A>(n));
    });
  }
};

template <class T>
struct GlobalMaxPoolKernel {
  static void run(const KernelArgs& args) {
    global_pool<T>(args, [](const T* xp, int64_t n) {
      return reduce_row(
          n, lowest_value<T>(), [xp](int64_t i) { return xp[i]; }, max_of);
    });
  }
};

template <class T>
struct GlobalLpPoolKernel {
  static void run(const KernelArgs& args) {
    const int64_t p = args.attrs.get_int("p");
    global_pool<T>(args, [p](const T* xp, int64_t n) {
      using A = Wide<T>;
      const A sum = reduce_row(
          n, A{0}, [xp, p](int64_t i) { return abs_pow(static_cast<A>(xp[i]), p); }, plus);
      return static_cast<T>(root(sum, p));
    });
  }
};

const OpDTypeKernels& pooling_kernels() {
  static const OpDTypeKernels kKernels = [] {
    OpDTypeKernels f{};
    auto at = [&f](OpKind op) -> DTypeKernels& { return f[static_cast<size_t>(op_index(op))]; };
    at(OpKind::MaxPool) = kernels_for<MaxPoolKernel>(FloatTypes{}, "maxpool_direct");
    at(OpKind::AveragePool) = kernels_for<AveragePoolKernel>(FloatTypes{}, "averagepool_direct");
    at(OpKind::LpPool) = kernels_for<LpPoolKernel>(FloatTypes{}, "lppool_direct");
    at(OpKind::GlobalAveragePool) =
        kernels_for<GlobalAveragePoolKernel>(FloatTypes{}, "globalaveragepool_tree4096x8");
    at(OpKind::GlobalMaxPool) =
        kernels_for<GlobalMaxPoolKernel>(FloatTypes{}, "globalmaxpool_tree4096x8");
    at(OpKind::GlobalLpPool) =
        kernels_for<GlobalLpPoolKernel>(FloatTypes{}, "globallppool_tree4096x8");
    return f;
  }();
  return kKernels;
}

KernelSelection select_pooling_kernel(const KernelQuery& query) {
  return select_by_dtype(pooling_kernels()[static_cast<size_t>(op_index(query.node.op))],
                         query.node, query.inputs[0]->dtype);
}

}  // namespace

void register_pooling_kernels(KernelTable& table) {
  register_family(table, pooling_kernels(), select_pooling_kernel);
}

}  // namespace volta::cpu
