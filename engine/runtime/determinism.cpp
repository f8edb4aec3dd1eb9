#include "volta/runtime/determinism.h"

namespace volta {

std::string_view determinism_mode_name(DeterminismMode mode) {
  switch (mode) {
    case DeterminismMode::Strict:
      return "strict";
    case DeterminismMode::Relaxed:
      return "relaxed";
  }
  return "?";
}

std::optional<DeterminismMode> parse_determinism_mode(std::string_view name) {
  if (name == "strict") return DeterminismMode::Strict;
  if (name == "relaxed") return DeterminismMode::Relaxed;
  return std::nullopt;
}

std::string_view kernel_determinism_name(KernelDeterminism d) {
  switch (d) {
    case KernelDeterminism::BitExact:
      return "bit-exact";
    case KernelDeterminism::RunToRun:
      return "run-to-run";
    case KernelDeterminism::NonDeterministic:
      return "non-deterministic";
  }
  return "?";
}

std::string_view cross_backend_exactness_name(CrossBackendExactness e) {
  switch (e) {
    case CrossBackendExactness::NotClaimed:
      return "not-claimed";
    case CrossBackendExactness::Bitwise:
      return "bitwise";
    case CrossBackendExactness::BitwiseExceptNanPayload:
      return "bitwise-except-nan-payload";
  }
  return "?";
}

}  // namespace volta
