#pragma once
// The loss family's label check and NegativeLogLikelihoodLoss kernels (kernels/loss.cu launches
// them), each step the CPU's cpu/kernels/loss.cpp: a sample's loss formed in double, the "sum"
// and "mean" reductions over the CPU's tree (reduce_tree.h): leaves of kTreeLeaf samples,
// sample i of a leaf into lane i % kTreeLanes in index order, the lanes combined pairwise, then
// the leaves pairwise level by level. One thread per leaf, then one thread combines the
// leaves: the tree is the sample count's alone.
//
// Plain CUDA C++ over launch.h and tree.cuh, so that a host test can also run it under an
// emulation of the CUDA thread model (tests/cuda_indexing_emulation_test.cpp).

#include <cstdint>

#include "grid_loop.cuh"
#include "launch.h"
#include "tree.cuh"

namespace volta::cuda::loss_detail {

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
  for (int64_t k = thread_begin(); k < g.samples; k += thread_stride()) {
    const int64_t label = labels[k];
    if (g.has_ignore && label == g.ignore) continue;
    if (label < 0 || label >= g.classes) atomicMin(first_bad, static_cast<unsigned long long>(k));
  }
}

template <class T, class L>
__global__ void nll_per_sample_kernel(Samples<T, L> s, T* out) {
  for (int64_t k = thread_begin(); k < s.g.samples; k += thread_stride()) {
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
  for (int64_t leaf = thread_begin(); leaf < leaves; leaf += thread_stride()) {
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

}  // namespace volta::cuda::loss_detail
