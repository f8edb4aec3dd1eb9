#pragma once
// Internal to the reference engine: per-family tables of scalar kernels (ops/<family>.cpp).

#include <array>

#include "volta/reference/reference.h"

namespace volta::reference {

using RefTable = std::array<RefKernel, kOpCount>;

// One function per family file: ops/<family>.cpp.
void register_elementwise(RefTable& table);
void register_activation(RefTable& table);
void register_logical(RefTable& table);
void register_linalg(RefTable& table);
void register_normalization(RefTable& table);
void register_reduction(RefTable& table);
void register_movement(RefTable& table);
void register_convolution(RefTable& table);
void register_pooling(RefTable& table);
void register_indexing(RefTable& table);
void register_loss(RefTable& table);
void register_resampling(RefTable& table);

}  // namespace volta::reference
