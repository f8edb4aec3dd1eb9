#pragma once
// The host side of the data-movement launches: an element is moved as the unsigned integer of
// its size (its bits, whatever its dtype), and indices or lengths are read as the signed integer
// of theirs. Each dispatcher calls fn with a value of that type; another size is
// cudaErrorInvalidValue.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace volta::cuda {

template <class Fn>
cudaError_t with_element(int bytes, Fn&& fn) {
  switch (bytes) {
    case 1:
      return fn(uint8_t{});
    case 2:
      return fn(uint16_t{});
    case 4:
      return fn(uint32_t{});
    case 8:
      return fn(uint64_t{});
    default:
      return cudaErrorInvalidValue;
  }
}

template <class Fn>
cudaError_t with_index(int bytes, Fn&& fn) {
  if (bytes == 4) return fn(int32_t{});
  if (bytes == 8) return fn(int64_t{});
  return cudaErrorInvalidValue;
}

}  // namespace volta::cuda
