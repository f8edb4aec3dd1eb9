#include "reduce_geometry.h"

#include <vector>

namespace volta::cuda {

std::optional<ReduceGeometry> reduce_geometry(const Shape& input, const ReduceAxes& axes) {
  const std::vector<int64_t> strides = input.strides();
  ReduceGeometry g;
  ReduceExtents* previous = nullptr;
  for (int a = 0; a < input.rank(); ++a) {
    if (input[a] == 1) continue;
    ReduceExtents& group = axes.reduces(a) ? g.reduced : g.kept;
    const int64_t stride = strides[static_cast<size_t>(a)];
    if (previous == &group) {  // merges with the axis before it: one run of the same kind
      group.sizes[group.rank - 1] *= input[a];
      group.strides[group.rank - 1] = stride;
    } else {
      if (group.rank == kMaxReduceExtents) return std::nullopt;
      group.sizes[group.rank] = input[a];
      group.strides[group.rank] = stride;
      ++group.rank;
    }
    previous = &group;
  }
  for (int d = 0; d < g.kept.rank; ++d) g.outputs *= g.kept.sizes[d];
  for (int d = 0; d < g.reduced.rank; ++d) g.row_length *= g.reduced.sizes[d];
  return g;
}

}  // namespace volta::cuda
