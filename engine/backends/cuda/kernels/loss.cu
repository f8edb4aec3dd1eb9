// Loss-family kernels: the label check, SoftmaxCrossEntropyLoss's LogSoftmax along the classes,
// and NegativeLogLikelihoodLoss over log-probabilities,
// each step the CPU's cpu/kernels/loss.cpp: a sample's loss formed in double (a product of two
// floats is exact there), the "sum" and "mean" reductions over the CPU's tree (reduce_tree.h):
// leaves of kTreeLeaf samples, sample i of a leaf into lane i % kTreeLanes in index order, the
// lanes combined pairwise, then the leaves pairwise level by level. One thread per leaf, then
// one thread combines the leaves: the tree is the sample count's alone.

#include "device_math.cuh"
#include "map.cuh"
#include "tree.cuh"

namespace volta::cuda {
namespace {

struct Plus {
  __device__ double operator()(double a, double b) const { return __dadd_rn(a, b); }
};

template <class T, class L>
struct Samples {
  LossGeometry g;
  const T* log_prob;
  const L* labels;
  const T* weights;  // null: unweighted

  __device__ bool ignored(int64_t label) const { return g.has_ignore && label == g.ignore; }
  // The CPU's loss_of: -v, or -v * weight[label], in double; +0 for the ignored label.
  __device__ double loss(int64_t k) const {
    const int64_t label = labels[k];
    if (ignored(label)) return 0.0;
    const int64_t n = k / g.inner;
    const int64_t d = k % g.inner;
    const double v = static_cast<double>(log_prob[(n * g.classes + label) * g.inner + d]);
    return weights != nullptr ? __dmul_rn(-v, static_cast<double>(weights[label])) : -v;
  }
  // The CPU's weight_of (a weighted mean's denominator).
  __device__ double weight(int64_t k) const {
    const int64_t label = labels[k];
    return ignored(label) ? 0.0 : static_cast<double>(weights[label]);
  }
};

template <class L>
__global__ void find_bad_label_kernel(LossGeometry g, const L* labels,
                                      unsigned long long* first_bad) {
  for (int64_t k = first_index(); k < g.samples; k += grid_stride()) {
    const int64_t label = labels[k];
    if (g.has_ignore && label == g.ignore) continue;
    if (label < 0 || label >= g.classes) atomicMin(first_bad, static_cast<unsigned long long>(k));
  }
}

template <class T, class L>
__global__ void nll_per_sample_kernel(Samples<T, L> s, T* out) {
  for (int64_t k = first_index(); k < s.g.samples; k += grid_stride()) {
    out[k] = static_cast<T>(s.loss(k));
  }
}

// Per leaf: its losses' sum, its weights' sum (weighted) and how many samples count, each sum
// the CPU's reduce_leaf.
struct LeafPartials {
  double* losses;
  double* weights;
  int64_t* counted;
};

template <class T, class L>
__global__ void nll_leaf_kernel(Samples<T, L> s, int64_t leaves, LeafPartials p) {
  for (int64_t leaf = first_index(); leaf < leaves; leaf += grid_stride()) {
    const int64_t first = leaf * kTreeLeaf;
    const int64_t count = tree::leaf_length(s.g.samples, leaf);
    double losses[kTreeLanes] = {};
    double weights[kTreeLanes] = {};
    int64_t counted = 0;
    for (int64_t i = 0; i < count; ++i) {
      const int lane = static_cast<int>(i % kTreeLanes);
      losses[lane] = __dadd_rn(losses[lane], s.loss(first + i));
      if (s.weights != nullptr) weights[lane] = __dadd_rn(weights[lane], s.weight(first + i));
      counted += s.ignored(s.labels[first + i]) ? 0 : 1;
    }
    p.losses[leaf] = tree::combine_pairwise(losses, kTreeLanes, 1, Plus{});
    p.weights[leaf] = tree::combine_pairwise(weights, kTreeLanes, 1, Plus{});
    p.counted[leaf] = counted;
  }
}

// One thread: the leaves combined pairwise, then the CPU's "sum" or "mean".
template <class T>
__global__ void nll_finish_kernel(int64_t leaves, LossReduction reduction, bool weighted,
                                  LeafPartials p, T* out) {
  const double sum = tree::combine_pairwise(p.losses, leaves, 1, Plus{});
  if (reduction == LossReduction::Sum) {
    out[0] = static_cast<T>(sum);
    return;
  }
  if (!weighted) {
    int64_t counted = 0;
    for (int64_t leaf = 0; leaf < leaves; ++leaf) counted += p.counted[leaf];
    out[0] = static_cast<T>(__ddiv_rn(sum, static_cast<double>(counted)));
    return;
  }
  out[0] = static_cast<T>(__ddiv_rn(sum, tree::combine_pairwise(p.weights, leaves, 1, Plus{})));
}

// The CPU's reduce_row on one thread: leaves of kTreeLeaf, lanes in index order combined
// pairwise, the leaves pairwise level by level (tree::LeafStack).
template <class A, class Load, class Combine>
__device__ A serial_row(int64_t n, A identity, const Load& load, const Combine& combine) {
  const int64_t leaves = n <= kTreeLeaf ? 1 : (n + kTreeLeaf - 1) / kTreeLeaf;
  tree::LeafStack<A> stack;
  for (int64_t leaf = 0; leaf < leaves; ++leaf) {
    const int64_t first = leaf * kTreeLeaf;
    const int64_t count = tree::leaf_length(n, leaf);
    A lanes[kTreeLanes];
    for (A& lane : lanes) lane = identity;
    for (int64_t i = 0; i < count; ++i) {
      lanes[i % kTreeLanes] = combine(lanes[i % kTreeLanes], load(first + i));
    }
    stack.push(tree::combine_pairwise(lanes, kTreeLanes, 1, combine), combine);
  }
  return stack.result(combine);
}

// softmax_rows' arithmetic per type: exp_f32 (the CPU's vector exp) for f32, the device's exp
// and log where the CPU calls libm.
__device__ __forceinline__ float exp_of(float v) { return dmath::exp_f32(v); }
__device__ __forceinline__ double exp_of(double v) { return exp(v); }
__device__ __forceinline__ float log_of(float v) { return logf(v); }
__device__ __forceinline__ double log_of(double v) { return log(v); }
__device__ __forceinline__ float sub_of(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ double sub_of(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ float add_of(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add_of(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float quiet_nan(float) { return dmath::kQuietNaN(); }
__device__ __forceinline__ double quiet_nan(double) {
  return __longlong_as_double(0x7ff8000000000000ll);
}
__device__ __forceinline__ float minus_infinity(float) { return -dmath::kInf(); }
__device__ __forceinline__ double minus_infinity(double) {
  return __longlong_as_double(static_cast<long long>(0xfff0000000000000ull));
}

template <class T>
__global__ void log_softmax_classes_kernel(LossGeometry g, const T* x, T* y) {
  const int64_t c = g.classes;
  for (int64_t r = first_index(); r < g.samples; r += grid_stride()) {
    const int64_t start = r / g.inner * c * g.inner + r % g.inner;
    const T* xr = x + start;
    T* yr = y + start;
    const int64_t step = g.inner;
    const T max = serial_row(
        c, minus_infinity(T{}), [=](int64_t i) { return xr[i * step]; },
        [](T a, T b) { return b > a ? b : a; });  // the CPU's NaN-blind max_of_numbers
    const T sum = serial_row(
        c, T{0}, [=](int64_t i) { return exp_of(sub_of(xr[i * step], max)); },
        [](T a, T b) { return add_of(a, b); });
    if (sum != sum) {
      for (int64_t i = 0; i < c; ++i) yr[i * step] = quiet_nan(T{});
      continue;
    }
    const T log_sum = log_of(sum);
    for (int64_t i = 0; i < c; ++i) yr[i * step] = sub_of(sub_of(xr[i * step], max), log_sum);
  }
}

template <class Fn>
cudaError_t with_label(int bytes, Fn&& fn) {
  if (bytes == 4) return fn(int32_t{});
  if (bytes == 8) return fn(int64_t{});
  return cudaErrorInvalidValue;
}

template <class Fn>
cudaError_t with_loss_type(LossType type, Fn&& fn) {
  if (type == LossType::F32) return fn(float{});
  return fn(double{});
}

}  // namespace

cudaError_t launch_find_bad_label(int label_bytes, const LossGeometry& g, const void* labels,
                                  unsigned long long* first_bad, cudaStream_t stream) {
  return with_label(label_bytes, [&](auto tag) {
    using L = decltype(tag);
    find_bad_label_kernel<L><<<blocks_for(g.samples), kThreadsPerBlock, 0, stream>>>(
        g, static_cast<const L*>(labels), first_bad);
    return cudaGetLastError();
  });
}

cudaError_t launch_log_softmax_classes(LossType type, const LossGeometry& g, const void* x, void* y,
                                       cudaStream_t stream) {
  return with_loss_type(type, [&](auto tag) {
    using T = decltype(tag);
    log_softmax_classes_kernel<T><<<blocks_for(g.samples), kThreadsPerBlock, 0, stream>>>(
        g, static_cast<const T*>(x), static_cast<T*>(y));
    return cudaGetLastError();
  });
}

cudaError_t launch_nll_loss(LossType type, int label_bytes, LossReduction reduction,
                            const LossGeometry& g, const void* log_prob, const void* labels,
                            const void* weights, void* out, void* partials, cudaStream_t stream) {
  return with_loss_type(type, [&](auto type_tag) {
    return with_label(label_bytes, [&](auto label_tag) {
      using T = decltype(type_tag);
      using L = decltype(label_tag);
      const Samples<T, L> s{g, static_cast<const T*>(log_prob), static_cast<const L*>(labels),
                            static_cast<const T*>(weights)};
      if (reduction == LossReduction::None) {
        nll_per_sample_kernel<T, L>
            <<<blocks_for(g.samples), kThreadsPerBlock, 0, stream>>>(s, static_cast<T*>(out));
        return cudaGetLastError();
      }
      const int64_t leaves = g.leaves();
      auto* bytes = static_cast<char*>(partials);
      const LeafPartials p{reinterpret_cast<double*>(bytes),
                           reinterpret_cast<double*>(bytes + leaves * 8),
                           reinterpret_cast<int64_t*>(bytes + leaves * 16)};
      nll_leaf_kernel<T, L><<<blocks_for(leaves), kThreadsPerBlock, 0, stream>>>(s, leaves, p);
      if (const cudaError_t status = cudaGetLastError(); status != cudaSuccess) return status;
      nll_finish_kernel<T>
          <<<1, 1, 0, stream>>>(leaves, reduction, weights != nullptr, p, static_cast<T*>(out));
      return cudaGetLastError();
    });
  });
}

}  // namespace volta::cuda
