#pragma once
// Internal to the CUDA backend: the indexing kernels' geometry (kernels/launch.h) from an exact
// node's shapes and attributes, as the CPU's cpu/kernels/indexing.cpp walks them. Computed on
// the host at launch; the emulation test builds the same to run the kernels on the host.

#include <cstdint>

#include "kernels/launch.h"
#include "volta/ir/shape.h"

namespace volta::cuda {

// GatherElements / ScatterElements over data along `axis` (normalized; rank <= kMaxIndexRank).
ElementsGeometry elements_geometry(const Shape& data, const Shape& indices, int axis);
// Their index check: every index one component against the axis's extent.
IndexTuples axis_tuples(const ElementsGeometry& g);
// GatherND (batch_dims) and ScatterND (0): the k-tuples in the last axis of indices.
IndexTuples nd_tuples(const Shape& data, const Shape& indices, int batch_dims);
// Trilu of x (rank >= 2) with the node's upper and k; k clamped as the CPU clamps it.
TriluGeometry trilu_geometry(const Shape& x, bool upper, int64_t k);
// OneHot's output around its new axis (normalized).
OneHotGeometry one_hot_geometry(const Shape& out, int axis);
// TopK of x along `axis` (normalized), k of the values' extent.
TopKGeometry top_k_geometry(const Shape& x, int axis, int64_t k, bool largest);

}  // namespace volta::cuda
