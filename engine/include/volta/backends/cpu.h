#pragma once

#include <memory>

#include "volta/runtime/backend.h"

namespace volta {

// The production CPU backend: thread-pooled kernels whose results are bit-identical for
// any thread count (work split by shape in fixed chunks, fixed-tree reductions).
std::unique_ptr<Backend> make_cpu_backend();

}  // namespace volta
