#pragma once
// Progress of a suite: a live bar with counts on a terminal, a plain line every few seconds
// otherwise (CI logs), and a summary table at the end.

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "volta/conformance/outcome.h"

namespace volta::conformance {

class Progress {
 public:
  // `interactive`: redraw one line in place (a terminal); else print plain lines.
  Progress(std::string suite, int64_t total, bool interactive, std::FILE* out = stderr);
  void add(Outcome outcome, std::string_view case_id);
  void finish();  // final line and the summary table of counts by outcome
  const std::array<int64_t, kOutcomeCount>& counts() const { return counts_; }
  static bool stderr_is_terminal();

 private:
  void draw(bool force);

  std::string suite_;
  int64_t total_;
  int64_t done_ = 0;
  bool interactive_;
  std::FILE* out_;
  std::array<int64_t, kOutcomeCount> counts_{};
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace volta::conformance
