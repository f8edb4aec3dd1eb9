#pragma once
// Internal to the CUDA backend: the layout kernels' geometry as kernels/layout_ops.cpp builds it
// from a node, shared with the host test that runs layout_kernel.cuh against the CPU backend.

#include <optional>

#include "launch.h"
#include "volta/ir/graph.h"

namespace volta::cuda {

// Tile's or Pad's output axes against the input's; Tile drops axes of length 1 (index 0 reads
// index 0), Pad keeps them all (index 0 of a padded axis may read the border). nullopt past
// kMaxLayoutRank.
std::optional<LayoutAxes> layout_axes(const Node& node, const Shape& in, const Shape& out);
PadMode pad_mode(const Node& node);
// DepthToSpace (by its mode) or SpaceToDepth.
SpaceDepthOp space_depth_op(const Node& node);
SpaceDepthGeometry space_depth_geometry(const Node& node, const Shape& in, const Shape& out);
ReverseSequenceGeometry reverse_sequence_geometry(const Node& node, const Shape& in);

}  // namespace volta::cuda
