#pragma once
// Counter-based random numbers: element i of stream s under seed k is a pure function of
// (k, s, i), so values never depend on scheduling, threads or the order they are drawn in.

#include <cstdint>

#include "volta/ir/tensor.h"

namespace volta {

uint64_t counter_random_u64(uint64_t seed, uint64_t stream, uint64_t index);
// Uniform in [0, 1) with 53 random bits.
double counter_uniform(uint64_t seed, uint64_t stream, uint64_t index);

// A tensor of uniform values in [lo, hi) (integers: [lo, hi) rounded down; bool: 0/1).
Tensor random_tensor(DType dtype, const Shape& shape, uint64_t seed, double lo, double hi,
                     uint64_t stream = 0);

}  // namespace volta
