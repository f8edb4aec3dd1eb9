#pragma once
// The CPU's combine_pairwise (cpu/kernels/reduce_tree.h) over leaf results that arrive one at a
// time, in leaf order, by one thread: the reductions, normalizations and losses (tree.cuh) and
// the global pools (spatial_element.h). Plain C++, so the host emulation tests run it too.

#include "host_device.h"

namespace volta::cuda::tree {

// Level by level pairing makes node j of level k the combination of leaves [j * 2^k,
// (j + 1) * 2^k), with the last node of a level covering whatever is left; so the complete
// power-of-two blocks are merged as they fill (a binary counter), and at the end the partial
// blocks combine from the right: result = c(B0, c(B1, ... c(Bm-1, Bm))), B0 the largest.
template <class A>
struct LeafStack {
  static constexpr int kDepth = 48;  // 2^48 leaves: beyond any row or plane
  A values[kDepth];
  int levels[kDepth];
  int top = 0;

  template <class Combine>
  VOLTA_HD void push(A value, const Combine& combine) {
    values[top] = value;
    levels[top] = 0;
    ++top;
    while (top >= 2 && levels[top - 1] == levels[top - 2]) {
      values[top - 2] = combine(values[top - 2], values[top - 1]);
      ++levels[top - 2];
      --top;
    }
  }
  template <class Combine>
  VOLTA_HD A result(const Combine& combine) const {
    A r = values[top - 1];
    for (int k = top - 2; k >= 0; --k) r = combine(values[k], r);
    return r;
  }
};

}  // namespace volta::cuda::tree
