#pragma once
// Internal to the CUDA backend: where each output's row of a Reduce* lives in the input, the
// way the CPU backend's ReduceLayout (cpu/kernels/reduction.cpp) sees it, so both visit a row's
// elements in the same order. Computed on the host at selection and again at launch.

#include <optional>

#include "kernels/launch.h"
#include "volta/ir/op_helpers.h"
#include "volta/ir/shape.h"

namespace volta::cuda {

// Size-1 axes dropped, neighbouring axes of the same kind (kept or reduced) merged; nullopt
// when either kind has more than kMaxReduceExtents extents left.
std::optional<ReduceGeometry> reduce_geometry(const Shape& input, const ReduceAxes& axes);

}  // namespace volta::cuda
