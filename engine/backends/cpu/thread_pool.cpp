#include "volta/backends/cpu/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "volta/error.h"
#include "volta/ir/host_memory.h"

namespace volta {
namespace {

// Which worker of which pool this thread is; threads outside a pool run its loops as worker 0.
thread_local const ThreadPool* tls_pool = nullptr;
thread_local int tls_worker = 0;

constexpr size_t kScratchAlignment = 64;

// A plan's parallel loops come microseconds apart, and a futex wake-up costs tens of
// microseconds on a virtual machine: a worker waiting for the next loop, and the caller waiting
// for a loop's last task, first spin this long (pausing, which leaves an SMT sibling its core),
// then sleep. Only when threads run changes, never what a task computes.
constexpr auto kSpinBudget = std::chrono::microseconds(100);

void pause_cpu() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spins until ready() or the budget is spent; returns ready().
template <class Ready>
bool spin_until(const Ready& ready) {
  const auto deadline = std::chrono::steady_clock::now() + kSpinBudget;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
      pause_cpu();
    }
    if (std::chrono::steady_clock::now() >= deadline) return ready();
  }
}

}  // namespace

void ThreadPool::AlignedFree::operator()(std::byte* p) const { std::free(p); }

ThreadPool::ThreadPool(int num_threads, ScheduleOptions schedule)
    : num_threads_(num_threads), schedule_(schedule) {
  if (num_threads < 1 || num_threads > 1024) {
    fail(ErrorCode::InvalidArgument,
         "thread count must be in [1, 1024], got " + std::to_string(num_threads));
  }
  if (!std::isfinite(schedule.chunk_scale) || schedule.chunk_scale <= 0) {
    fail(ErrorCode::InvalidArgument,
         "chunk scale must be positive and finite, got " + std::to_string(schedule.chunk_scale));
  }
  // The calling thread takes part in every loop, so n threads need n - 1 workers.
  scratch_.resize(static_cast<size_t>(num_threads));
  for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void TaskShares::reset(int64_t num_tasks, int num_threads) {
  front_.resize(static_cast<size_t>(num_threads));
  back_.resize(static_cast<size_t>(num_threads));
  for (size_t w = 0; w < front_.size(); ++w) {
    front_[w] = num_tasks * static_cast<int64_t>(w) / num_threads;
    back_[w] = num_tasks * static_cast<int64_t>(w + 1) / num_threads;
  }
}

int64_t TaskShares::claim(int worker) {
  const auto own = static_cast<size_t>(worker);
  if (front_[own] < back_[own]) return front_[own]++;
  for (size_t s = 1; s < front_.size(); ++s) {
    const size_t other = (own + s) % front_.size();
    if (front_[other] < back_[other]) return --back_[other];
  }
  return -1;
}

void ThreadPool::run_tasks(int worker) {
  std::unique_lock lock(mutex_);
  for (int64_t claim = shares_.claim(worker); claim >= 0; claim = shares_.claim(worker)) {
    const int64_t index = task_at(claim);
    const std::function<void(int64_t)>* task = task_;
    lock.unlock();
    std::exception_ptr error;
    try {
      (*task)(index);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    if (error && (failed_task_ < 0 || index < failed_task_)) {
      failed_task_ = index;
      failure_ = error;
    }
    if (++finished_tasks_ == num_tasks_) done_.notify_all();
  }
}

void ThreadPool::worker_loop(int worker) {
  tls_pool = this;
  tls_worker = worker;
  uint64_t seen = 0;
  for (;;) {
    spin_until([&] { return stopping_.load() || generation_.load() != seen; });
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
    }
    run_tasks(worker);
  }
}

void ThreadPool::parallel_for(int64_t num_tasks, const std::function<void(int64_t)>& task) {
  if (num_tasks <= 0) return;
  if (workers_.empty() || num_tasks == 1) {
    if (!schedule_.reverse_task_order) {
      for (int64_t i = 0; i < num_tasks; ++i) task(i);
      return;
    }
    // Reverse order still reports the lowest-numbered failing task.
    std::exception_ptr failure;
    for (int64_t i = num_tasks - 1; i >= 0; --i) {
      try {
        task(i);
      } catch (...) {
        failure = std::current_exception();
      }
    }
    if (failure) std::rethrow_exception(failure);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    task_ = &task;
    num_tasks_ = num_tasks;
    shares_.reset(num_tasks, num_threads_);
    finished_tasks_ = 0;
    failed_task_ = -1;
    failure_ = nullptr;
    ++generation_;
  }
  wake_.notify_all();
  run_tasks(tls_pool == this ? tls_worker : 0);
  spin_until([&] { return finished_tasks_.load() == num_tasks; });
  std::exception_ptr failure;
  {
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return finished_tasks_ == num_tasks_; });
    task_ = nullptr;
    num_tasks_ = 0;
    failure = failure_;
  }
  if (failure) std::rethrow_exception(failure);
}

void ThreadPool::parallel_chunks(int64_t n, int64_t chunk,
                                 const std::function<void(int64_t, int64_t)>& body) {
  if (n <= 0) return;
  if (chunk <= 0) fail(ErrorCode::InvalidArgument, "parallel_chunks: chunk must be positive");
  if (schedule_.chunk_scale != 1.0) {
    chunk = std::max<int64_t>(1, std::llround(static_cast<double>(chunk) * schedule_.chunk_scale));
  }
  const int64_t tasks = (n + chunk - 1) / chunk;
  parallel_for(tasks, [&](int64_t t) { body(t * chunk, std::min(n, (t + 1) * chunk)); });
}

void ThreadPool::reserve_worker_scratch(int64_t bytes) {
  if (bytes <= scratch_bytes_) return;
  for (auto& buffer : scratch_) {
    buffer.reset(
        allocate_host(bytes, kScratchAlignment, [] { return "a worker's kernel scratch"; }));
  }
  scratch_bytes_ = bytes;
}

std::span<std::byte> ThreadPool::worker_scratch() {
  const auto worker = static_cast<size_t>(tls_pool == this ? tls_worker : 0);
  return {scratch_[worker].get(), static_cast<size_t>(scratch_bytes_)};
}

}  // namespace volta
