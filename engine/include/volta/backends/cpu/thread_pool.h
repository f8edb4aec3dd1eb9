#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "volta/runtime/backend.h"

namespace volta {

// How a loop's tasks are handed out: [0, num_tasks) is cut into one contiguous share per
// thread. Thread w claims its own share from the front, then the others' from the back. So,
// loop after loop, the same part of a tensor runs on the same core and is found in its cache
// (the calling thread takes the first tasks, the last worker the last), while a thread that
// falls behind still has its work taken over. Not thread-safe: the pool claims under its lock.
class TaskShares {
 public:
  void reset(int64_t num_tasks, int num_threads);
  // The next task `worker` runs, or -1 when every task is claimed.
  int64_t claim(int worker);

 private:
  std::vector<int64_t> front_;  // per share: its next task from the front
  std::vector<int64_t> back_;   // and one past its last unclaimed task
};

// A fixed set of workers that run index-parallel loops. Callers split work by problem
// shape into a fixed number of tasks; the thread count only decides who runs which task,
// never what a task computes, so results do not depend on it.
class ThreadPool {
 public:
  // 1: everything runs on the calling thread. Throws VoltaError(InvalidArgument) for a
  // thread count outside [1, 1024] or a chunk scale that is not positive and finite.
  explicit ThreadPool(int num_threads, ScheduleOptions schedule = {});
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }
  const ScheduleOptions& schedule() const { return schedule_; }

  // Runs task(i) for every i in [0, num_tasks) and waits. If tasks throw, the exception
  // of the lowest-numbered failing task is rethrown (deterministic error reporting).
  void parallel_for(int64_t num_tasks, const std::function<void(int64_t)>& task);

  // Splits [0, n) into chunks of `chunk` elements (the last may be short) and runs
  // body(begin, end) for each chunk.
  void parallel_chunks(int64_t n, int64_t chunk, const std::function<void(int64_t, int64_t)>& body);

  // Per-worker scratch (a GEMM task's packing buffers): each thread of the pool, the calling
  // thread included, owns one buffer that a task running on it uses and leaves. Kernels
  // declare the bytes at selection (KernelChoice::worker_scratch_bytes) and the backend grows
  // the buffers before a plan runs, so no kernel allocates while it runs.
  // Grows every buffer to at least `bytes` (64-byte aligned); call between loops.
  void reserve_worker_scratch(int64_t bytes);
  int64_t worker_scratch_bytes() const { return scratch_bytes_; }
  // The calling thread's buffer, worker_scratch_bytes() long.
  std::span<std::byte> worker_scratch();

 private:
  struct AlignedFree {
    void operator()(std::byte* p) const;
  };
  void worker_loop(int worker);
  void run_tasks(int worker);
  int64_t task_at(int64_t claim) const {
    return schedule_.reverse_task_order ? num_tasks_ - 1 - claim : claim;
  }

  int num_threads_;
  ScheduleOptions schedule_;
  std::vector<std::thread> workers_;
  std::vector<std::unique_ptr<std::byte[], AlignedFree>> scratch_;  // [0]: the calling thread
  int64_t scratch_bytes_ = 0;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(int64_t)>* task_ = nullptr;
  int64_t num_tasks_ = 0;
  TaskShares shares_;  // the current loop's claims
  // Written under mutex_; atomic so that a spinning thread may read them without it.
  std::atomic<int64_t> finished_tasks_ = 0;
  std::atomic<uint64_t> generation_ = 0;
  std::atomic<bool> stopping_ = false;
  int64_t failed_task_ = -1;
  std::exception_ptr failure_;
};

}  // namespace volta
