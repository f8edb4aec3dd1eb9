#include "volta/conformance/progress.h"

#include <unistd.h>

namespace volta::conformance {
namespace {

using Clock = std::chrono::steady_clock;

// Plain lines at most this often when not on a terminal: enough to show life in CI logs.
constexpr auto kPlainInterval = std::chrono::seconds(10);
constexpr auto kRedrawInterval = std::chrono::milliseconds(100);

int64_t failures(const std::array<int64_t, kOutcomeCount>& counts) {
  int64_t n = 0;
  for (int i = 0; i < kOutcomeCount; ++i) {
    const auto o = static_cast<Outcome>(i);
    if (o != Outcome::Pass && o != Outcome::Skipped) n += counts[static_cast<size_t>(i)];
  }
  return n;
}

}  // namespace

Progress::Progress(std::string suite, int64_t total, bool interactive, std::FILE* out)
    : suite_(std::move(suite)),
      total_(total),
      interactive_(interactive),
      out_(out),
      start_(Clock::now()),
      last_draw_(start_) {}

bool Progress::stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

void Progress::add(Outcome outcome, std::string_view case_id) {
  ++done_;
  ++counts_[static_cast<size_t>(outcome)];
  if (!interactive_ && outcome != Outcome::Pass && outcome != Outcome::Skipped) {
    std::fprintf(out_, "%s: %s %.*s\n", suite_.c_str(), std::string(outcome_name(outcome)).c_str(),
                 static_cast<int>(case_id.size()), case_id.data());
  }
  draw(false);
}

void Progress::draw(bool force) {
  const Clock::time_point now = Clock::now();
  if (!force && now - last_draw_ < (interactive_ ? Clock::duration(kRedrawInterval)
                                                 : Clock::duration(kPlainInterval))) {
    return;
  }
  last_draw_ = now;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const int64_t pass = counts_[static_cast<size_t>(Outcome::Pass)];
  const int64_t skipped = counts_[static_cast<size_t>(Outcome::Skipped)];
  if (interactive_) {
    constexpr int kWidth = 30;
    const int filled = total_ > 0 ? static_cast<int>(kWidth * done_ / total_) : kWidth;
    std::fprintf(out_, "\r%s [%.*s%*s] %lld/%lld  pass %lld  fail %lld  skip %lld  %.0fs",
                 suite_.c_str(), filled, "##############################", kWidth - filled, "",
                 static_cast<long long>(done_), static_cast<long long>(total_),
                 static_cast<long long>(pass), static_cast<long long>(failures(counts_)),
                 static_cast<long long>(skipped), seconds);
  } else {
    std::fprintf(out_, "%s: %lld/%lld cases, %lld pass, %lld not passing, %lld skipped, %.0fs\n",
                 suite_.c_str(), static_cast<long long>(done_), static_cast<long long>(total_),
                 static_cast<long long>(pass), static_cast<long long>(failures(counts_)),
                 static_cast<long long>(skipped), seconds);
  }
  std::fflush(out_);
}

void Progress::finish() {
  draw(true);
  if (interactive_) std::fputc('\n', out_);
  std::fprintf(out_, "%-14s %8s\n", "outcome", "cases");
  for (int i = 0; i < kOutcomeCount; ++i) {
    const int64_t n = counts_[static_cast<size_t>(i)];
    if (n == 0) continue;
    std::fprintf(out_, "%-14s %8lld\n", std::string(outcome_name(static_cast<Outcome>(i))).c_str(),
                 static_cast<long long>(n));
  }
  std::fprintf(out_, "%-14s %8lld\n", "total", static_cast<long long>(done_));
  std::fflush(out_);
}

}  // namespace volta::conformance
