#pragma once
// Internal to the CUDA backend: how a binary kernel walks a numpy broadcast. Computed on the
// host from the IR's broadcast_strides, at selection (which variant, or why none) and again at
// launch (the kernel's arguments), the same way both times.

#include <cstdint>
#include <optional>
#include <vector>

#include "kernels/launch.h"
#include "volta/ir/shape.h"

namespace volta::cuda {

// The output's dims with size-1 dims dropped and adjacent dims merged wherever both operands
// step through them as through one dim; each operand's element stride per merged dim (0 where
// it is broadcast). A one-element output is one dim of 1.
struct MergedBroadcast {
  std::vector<int64_t> dims;  // outermost first
  std::vector<int64_t> a_strides;
  std::vector<int64_t> b_strides;
};
// Requires that a and b broadcast to out (the verifier checked it).
MergedBroadcast merge_broadcast(const Shape& out, const Shape& a, const Shape& b);

// The kernels' form of it; nullopt when it has more than kMaxBroadcastDims merged dims.
std::optional<BroadcastGeometry> broadcast_geometry(const MergedBroadcast& merged);

}  // namespace volta::cuda
