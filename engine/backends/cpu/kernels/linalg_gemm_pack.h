#pragma once
// Packing for the GEMM core (see linalg_gemm.h): copies op(A) rows and op(B) columns into the
// panels a micro-kernel reads front to back. Packing only copies, so how a panel is packed never
// shows in the results.

#include <cstdint>

#include "linalg_gemm.h"

namespace volta::cpu::gemm_detail {

// Packs `extent` lanes as consecutive panels of `width` lanes, each width x depth, with the
// fastest copy this CPU has for the panel's layout: panel f holds lanes [f * width, + width),
// step s of it at dst[f * width * depth + s * width + l] = src[l * lane_stride + s *
// step_stride]. Lanes past `extent` in the last panel are zero.
template <class T>
void pack_block(GemmIsa isa, const T* src, int64_t lane_stride, int64_t step_stride, int64_t extent,
                int64_t depth, int width, T* dst);

}  // namespace volta::cpu::gemm_detail
