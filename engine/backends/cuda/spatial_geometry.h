#pragma once
// Internal to the CUDA backend: the pooling and convolution kernels' geometry of a node, read
// the way the CPU backend reads it (cpu/kernels/pooling.cpp, convolution_geometry.h): the spatial
// dims padded to three at the front, empty strides / dilations meaning ones and empty pads
// zeros, the output dims taken from the output's shape (ceil_mode and ConvTranspose's
// output_padding are already in it). Computed on the host at launch.

#include "kernels/launch.h"
#include "volta/ir/graph.h"
#include "volta/ir/shape.h"

namespace volta::cuda {

// MaxPool, AveragePool, LpPool: X [N, C, in...] and Y [N, C, out...] (1 to 3 spatial dims).
PoolGeometry pool_geometry(const Node& node, const Shape& x, const Shape& y);

// Conv, ConvTranspose: X, W (its spatial dims are the kernel) and Y; ConvGradFilter: X, dW and
// dY. `depthwise` and `images_per_step` as the CPU picks its kernel and steps.
ConvGeometry conv_geometry(const Node& node, const Shape& x, const Shape& w, const Shape& y);

// The CPU's images per step of ConvGradFilter's GEMM (convolution_geometry.h's images_per_step
// over its column budget of 2^22 elements): a step's images are one GEMM's K, so they fix the
// order of the sums.
int64_t grad_images_per_step(int64_t batch, int64_t column_elements);

}  // namespace volta::cuda
