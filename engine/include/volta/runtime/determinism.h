#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace volta {

// The caller's demand, an explicit input of compilation (there is no default).
enum class DeterminismMode : uint8_t {
  Strict,   // every kernel must be BitExact; anything else is a compile error
  Relaxed,  // any kernel; the plan still records which
};

// A kernel's guarantee on its backend.
enum class KernelDeterminism : uint8_t {
  BitExact,          // identical bits for any run, process and thread count
  RunToRun,          // identical bits for a fixed thread count only
  NonDeterministic,  // may differ between runs (e.g. float atomics)
};

std::string_view determinism_mode_name(DeterminismMode mode);
std::optional<DeterminismMode> parse_determinism_mode(std::string_view name);
std::string_view kernel_determinism_name(KernelDeterminism d);

}  // namespace volta
