#pragma once
// Internal to the CUDA backend: a Resize or GridSample node's launch as
// kernels/resampling_ops.cpp builds it from the node's attributes, shared with the host test
// that runs resampling_kernel.cuh against the CPU backend.

#include "launch.h"
#include "volta/ir/graph.h"

namespace volta::cuda {

// The CPU's ResizeSpec, decoded for the device (an input of rank 1 to kMaxResizeRank; the
// attributes ones the selector accepted).
ResizeLaunch resize_launch(const Node& node, const Shape& in, const Shape& out, DType dtype);
// X [N, C, H, W] in, Y [N, C, Ho, Wo] out.
GridSampleLaunch grid_sample_launch(const Node& node, const Shape& in, const Shape& out);

}  // namespace volta::cuda
