#pragma once
// Internal to the CPU movement kernels (movement*.cpp) and indexing.cpp. Movement ops
// never compute on their elements, so kernels are chosen by element size (x8, x16, x32,
// x64), not by dtype.

#include <algorithm>
#include <cstdint>
#include <string>

#include "cpu_kernel.h"

namespace volta::cpu::movement {

// Output elements per task: fixed by the problem, never by the thread count.
inline constexpr int64_t kCopyChunk = kElementwiseChunk;
// Bytes per task of a plain memcpy (the reshape family, Constant).
inline constexpr int64_t kMemcpyChunkBytes = 64 * 1024;

// Calls f(TypeTag<U>{}) with U the unsigned integer as wide as one element of `dtype`.
// Exhaustive over DType, so a new dtype fails to compile (-Wswitch) until it is placed.
template <class F>
decltype(auto) visit_element_size(DType dtype, F&& f) {
  switch (dtype) {
    case DType::Bool:
    case DType::I8:
    case DType::U8:
      return f(TypeTag<uint8_t>{});
    case DType::F16:
    case DType::BF16:
    case DType::I16:
    case DType::U16:
      return f(TypeTag<uint16_t>{});
    case DType::F32:
    case DType::I32:
    case DType::U32:
      return f(TypeTag<uint32_t>{});
    case DType::F64:
    case DType::I64:
    case DType::U64:
      return f(TypeTag<uint64_t>{});
  }
  return f(TypeTag<uint64_t>{});  // unreachable: the switch is exhaustive
}

// "x8", "x32", "x64": the element-size prefix of a kernel variant name.
template <class U>
std::string element_size_prefix() {
  return "x" + std::to_string(8 * sizeof(U));
}

// "transpose" for OpKind::Transpose: the op part of a kernel variant name.
std::string lowercase_op_name(OpKind op);

// Splits the flat range [begin, end) of a row-major [rows, row_len] array into pieces that
// never cross a row: body(row, col, count, flat) for each, rows ascending one by one, where
// `flat` is the piece's first flat index. Kernels that move whole rows use it to copy one
// contiguous run per call while tasks stay fixed chunks of the output.
template <class F>
void for_each_row_piece(int64_t begin, int64_t end, int64_t row_len, F&& body) {
  int64_t row = begin / row_len;
  int64_t col = begin % row_len;
  for (int64_t flat = begin; flat < end; ++row, col = 0) {
    const int64_t count = std::min(row_len - col, end - flat);
    body(row, col, count, flat);
    flat += count;
  }
}

// Transpose, Slice and Expand: each output element is read from the input at an affine
// offset, so one strided-copy engine serves all three (movement_strided.cpp).
KernelSelection select_strided_copy(const KernelQuery& query);

}  // namespace volta::cpu::movement
