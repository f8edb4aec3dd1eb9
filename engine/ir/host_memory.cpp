#include "volta/ir/host_memory.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "volta/error.h"

namespace volta {
namespace {

std::atomic<int64_t>& limit() {
  static std::atomic<int64_t> bytes{physical_memory_bytes()};
  return bytes;
}

// "4.0 MiB", "192.0 TiB": the size a reader takes in at a glance, beside the exact count.
std::string readable(int64_t bytes) {
  static constexpr const char* kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  auto value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 6) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, kUnits[unit]);
  return text;
}

}  // namespace

int64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return INT64_MAX;  // unknown: only the system's refusal counts
  return static_cast<int64_t>(pages) * page;
}

int64_t host_allocation_limit() { return limit().load(std::memory_order_relaxed); }

void set_host_allocation_limit(int64_t bytes) {
  if (bytes <= 0) {
    fail(ErrorCode::InvalidArgument,
         "host allocation limit must be positive, not " + std::to_string(bytes));
  }
  limit().store(bytes, std::memory_order_relaxed);
}

void refuse_host_allocation(int64_t bytes, std::string_view what, bool over_limit) {
  const std::string need =
      std::string(what) + " needs " + std::to_string(bytes) + " bytes (" + readable(bytes) + ")";
  if (!over_limit) fail(ErrorCode::OutOfMemory, need + "; the system could not provide them");
  const int64_t cap = host_allocation_limit();
  fail(ErrorCode::OutOfMemory, need + ", over the host allocation limit of " + std::to_string(cap) +
                                   " bytes (" + readable(cap) +
                                   "; by default the machine's physical memory)");
}

void* aligned_block(int64_t bytes, size_t alignment) {
  // aligned_alloc needs a size that is a multiple of the alignment, and > 0 here.
  const auto size = static_cast<size_t>(bytes);
  return std::aligned_alloc(alignment,
                            size == 0 ? alignment : (size + alignment - 1) / alignment * alignment);
}

}  // namespace volta
