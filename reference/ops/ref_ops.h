#pragma once
// Internal to the reference engine: per-family tables of scalar kernels.

#include <array>

#include "volta/reference/reference.h"

namespace volta::reference {

using RefTable = std::array<RefKernel, kOpCount>;

void register_elementwise(RefTable& table);    // ops/elementwise.cpp
void register_linalg(RefTable& table);         // ops/linalg.cpp
void register_normalization(RefTable& table);  // ops/normalization.cpp
void register_reduction(RefTable& table);      // ops/reduction.cpp
void register_movement(RefTable& table);       // ops/movement.cpp
void register_math(RefTable& table);           // ops/activation.cpp
void register_spatial(RefTable& table);        // ops/convolution.cpp
void register_loss(RefTable& table);           // ops/loss.cpp
void register_indexing(RefTable& table);       // ops/indexing.cpp
void register_resize(RefTable& table);         // ops/resampling.cpp

}  // namespace volta::reference
