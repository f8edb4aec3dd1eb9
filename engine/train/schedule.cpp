#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "volta/error.h"
#include "volta/train/optimizer.h"

namespace volta::train {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) fail(ErrorCode::InvalidArgument, what);
}

bool finite_nonnegative(double x) { return std::isfinite(x) && x >= 0; }

// min_lr + (base - min_lr) * (1 + cos(pi * done / span)) / 2, with done clamped to span.
double cosine(double base, double min_lr, int64_t done, int64_t span) {
  const double progress = static_cast<double>(std::min(done, span)) / static_cast<double>(span);
  return min_lr + (base - min_lr) * (1 + std::cos(std::numbers::pi * progress)) / 2;
}

constexpr Schedule::Kind kScheduleKinds[] = {Schedule::Kind::Constant, Schedule::Kind::Step,
                                             Schedule::Kind::Cosine, Schedule::Kind::WarmupCosine};

}  // namespace

std::string schedule_name(Schedule::Kind kind) {
  switch (kind) {
    case Schedule::Kind::Constant:
      return "constant";
    case Schedule::Kind::Step:
      return "step";
    case Schedule::Kind::Cosine:
      return "cosine";
    case Schedule::Kind::WarmupCosine:
      return "warmup-cosine";
  }
  return "?";
}

Schedule::Kind parse_schedule_kind(std::string_view name) {
  std::string known;
  for (const Schedule::Kind kind : kScheduleKinds) {
    if (name == schedule_name(kind)) return kind;
    known += (known.empty() ? "" : ", ") + schedule_name(kind);
  }
  fail(ErrorCode::InvalidArgument,
       "unknown schedule '" + std::string(name) + "'; the schedules are " + known);
}

void Schedule::validate() const {
  require(finite_nonnegative(base_lr),
          "schedule base_lr " + std::to_string(base_lr) + " must be finite and >= 0");
  require(finite_nonnegative(min_lr) && min_lr <= base_lr,
          "schedule min_lr " + std::to_string(min_lr) + " must be finite, >= 0 and <= base_lr");
  switch (kind) {
    case Kind::Constant:
      break;
    case Kind::Step:
      require(step_size >= 1,
              "step schedule step_size " + std::to_string(step_size) + " must be >= 1");
      require(finite_nonnegative(gamma),
              "step schedule gamma " + std::to_string(gamma) + " must be finite and >= 0");
      break;
    case Kind::Cosine:
      require(total_steps >= 1,
              "cosine schedule total_steps " + std::to_string(total_steps) + " must be >= 1");
      break;
    case Kind::WarmupCosine:
      require(warmup_steps >= 1, "warm-up cosine schedule warmup_steps " +
                                     std::to_string(warmup_steps) + " must be >= 1");
      require(total_steps > warmup_steps,
              "warm-up cosine schedule total_steps " + std::to_string(total_steps) +
                  " must exceed warmup_steps " + std::to_string(warmup_steps));
      break;
  }
}

double Schedule::learning_rate(int64_t step) const {
  require(step >= 1, "schedule step " + std::to_string(step) + " must be >= 1 (the first is 1)");
  switch (kind) {
    case Kind::Constant:
      return base_lr;
    case Kind::Step: {
      const int64_t decays = (step - 1) / step_size;  // floor: both are positive
      return base_lr * std::pow(gamma, static_cast<double>(decays));
    }
    case Kind::Cosine:
      return cosine(base_lr, min_lr, step - 1, total_steps);
    case Kind::WarmupCosine:
      if (step <= warmup_steps) {
        return base_lr * static_cast<double>(step) / static_cast<double>(warmup_steps);
      }
      return cosine(base_lr, min_lr, step - warmup_steps, total_steps - warmup_steps);
  }
  return base_lr;
}

}  // namespace volta::train
