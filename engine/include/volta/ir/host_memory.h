#pragma once
// Every host allocation of tensor data, plan arenas and kernel scratch goes through
// allocate_host. A request above the host allocation limit (by default this machine's physical
// memory) is refused before anything is allocated, and so is one the system cannot satisfy:
// both as VoltaError R-OUT-OF-MEMORY naming the bytes and what they were for. A model that
// asks for more memory than there is therefore gets a diagnostic, never an abort or a
// std::bad_alloc.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace volta {

// The machine's physical memory in bytes (sysconf), the default limit.
int64_t physical_memory_bytes();
int64_t host_allocation_limit();
// Process-wide; `bytes` must be positive. Fuzz targets and tests lower it.
void set_host_allocation_limit(int64_t bytes);

// Throws R-OUT-OF-MEMORY for `bytes` of `what`: over the limit, or refused by the system.
[[noreturn]] void refuse_host_allocation(int64_t bytes, std::string_view what, bool over_limit);
// aligned_alloc of `bytes` rounded up to `alignment` (one block for 0); nullptr when refused.
void* aligned_block(int64_t bytes, size_t alignment);

// `bytes` (>= 0) aligned to `alignment` (a power of two), not initialized; release with
// std::free. `what()` names the use for the message ("a [4096, 4096] f32 tensor"), called only
// when the allocation is refused.
template <class Describe>
std::byte* allocate_host(int64_t bytes, size_t alignment, const Describe& what) {
  if (bytes < 0 || bytes > host_allocation_limit()) refuse_host_allocation(bytes, what(), true);
  void* p = aligned_block(bytes, alignment);
  if (p == nullptr) refuse_host_allocation(bytes, what(), false);
  return static_cast<std::byte*>(p);
}

}  // namespace volta
