#include "elementwise_common.h"

#include <cassert>

namespace volta::cpu {

BroadcastLoop::BroadcastLoop(const Shape& out, std::span<const ConstTensorView> inputs)
    : num_inputs_(inputs.size()) {
  std::vector<std::vector<int64_t>> full_strides;
  for (const ConstTensorView& in : inputs) full_strides.push_back(broadcast_strides(in.shape, out));
  // Outermost first: a dim merges into the previous one when, for every input, stepping the
  // outer dim once is the same as stepping the inner dim through its whole extent.
  for (int d = 0; d < out.rank(); ++d) {
    if (out[d] == 1) continue;
    const auto axis = static_cast<size_t>(d);
    bool merges = !dims_.empty();
    for (size_t k = 0; k < num_inputs_ && merges; ++k) {
      merges = stride(dims_.size() - 1, k) == full_strides[k][axis] * out[d];
    }
    if (merges) {
      dims_.back() *= out[d];
      for (size_t k = 0; k < num_inputs_; ++k) {
        strides_[(dims_.size() - 1) * num_inputs_ + k] = full_strides[k][axis];
      }
    } else {
      dims_.push_back(out[d]);
      for (size_t k = 0; k < num_inputs_; ++k) strides_.push_back(full_strides[k][axis]);
    }
  }
  if (dims_.empty()) {  // one element: a row of one
    dims_.push_back(1);
    strides_.assign(num_inputs_, 1);
  }
  // Along the innermost dim an input either has that dim (stride 1: the input's own inner
  // dims are all 1) or broadcasts it (stride 0), which is what Run / Splat rely on.
  for (size_t k = 0; k < num_inputs_; ++k) {
    assert(stride(dims_.size() - 1, k) == 0 || stride(dims_.size() - 1, k) == 1);
  }
}

}  // namespace volta::cpu
