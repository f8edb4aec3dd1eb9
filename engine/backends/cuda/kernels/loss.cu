// Loss-family kernels: SoftmaxCrossEntropyLoss's LogSoftmax along the classes (one thread per
// sample, the CPU's softmax_rows tree), and the launches of the label check and
// NegativeLogLikelihoodLoss (loss_kernels.cuh).

#include "device_math.cuh"
#include "loss_kernels.cuh"
#include "map.cuh"
#include "tree.cuh"

namespace volta::cuda {
namespace {

using namespace loss_detail;  // NOLINT(google-build-using-namespace): this file's kernels

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
