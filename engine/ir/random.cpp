#include "volta/ir/random.h"

#include <cmath>

namespace volta {
namespace {

// SplitMix64's finalizer: a bijective mix with full avalanche.
uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

uint64_t counter_random_u64(uint64_t seed, uint64_t stream, uint64_t index) {
  return mix(mix(mix(seed + 0x9e3779b97f4a7c15ull) ^ stream) + index * 0x9e3779b97f4a7c15ull);
}

double counter_uniform(uint64_t seed, uint64_t stream, uint64_t index) {
  return static_cast<double>(counter_random_u64(seed, stream, index) >> 11) * 0x1.0p-53;
}

Tensor random_tensor(DType dtype, const Shape& shape, uint64_t seed, double lo, double hi,
                     uint64_t stream) {
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double u = lo + (hi - lo) * counter_uniform(seed, stream, static_cast<uint64_t>(i));
    if (dtype == DType::Bool) {
      t.set_int(i, u < (lo + hi) / 2 ? 0 : 1);
    } else if (is_integer(dtype)) {
      t.set_int(i, static_cast<int64_t>(std::floor(u)));
    } else {
      t.set_double(i, u);
    }
  }
  return t;
}

}  // namespace volta
