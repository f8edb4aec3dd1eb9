#pragma once
// The production CPU backend (library volta_backend_cpu, registered as "cpu": make it with
// make_backend("cpu")): thread-pooled kernels whose results are bit-identical for any thread
// count (work split by shape in fixed chunks, fixed-tree reductions). Its context holds the
// thread pool and a host arena; inputs are read in place and outputs copied out.

#include <cstddef>
#include <memory>

#include "volta/backends/cpu/thread_pool.h"
#include "volta/runtime/backend.h"

namespace volta {

inline constexpr std::string_view kCpuBackend = "cpu";

class CpuContext final : public ExecutionContext {
 public:
  // Throws VoltaError(InvalidArgument) for a thread count outside [1, 1024] or a chunk scale
  // that is not positive and finite.
  explicit CpuContext(const ContextOptions& options);
  ThreadPool& pool() { return pool_; }
  int num_threads() const { return pool_.num_threads(); }
  // An aligned host arena of at least `bytes`, reused across runs (grown when needed).
  MemoryRegion arena(int64_t bytes);

 private:
  struct Free {
    void operator()(std::byte* p) const;
  };
  ThreadPool pool_;
  std::unique_ptr<std::byte[], Free> arena_;
  int64_t arena_bytes_ = 0;
};

// The CPU context of `ctx`; throws VoltaError(BackendMismatch) when another backend made it.
// Backends that wrap the CPU backend (test-only defects) reach its thread pool through this.
CpuContext& cpu_context(ExecutionContext& ctx);

}  // namespace volta
