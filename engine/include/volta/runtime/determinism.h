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

// How a backend's kernel for an op compares with the CPU backend's kernel on the same node:
// the cross-backend contract (DESIGN.md, "Determinism contract": a named core set is
// bit-identical on CPU and CUDA). The CPU backend is the baseline and matches itself bitwise.
enum class CrossBackendExactness : uint8_t {
  NotClaimed,               // agrees within the tolerance table only
  Bitwise,                  // every bit, NaN payloads included
  BitwiseExceptNanPayload,  // every non-NaN bit; NaN exactly where the CPU gives NaN (GPU
                            // arithmetic returns the canonical NaN, x86 passes payloads on)
};

std::string_view determinism_mode_name(DeterminismMode mode);
std::optional<DeterminismMode> parse_determinism_mode(std::string_view name);
std::string_view kernel_determinism_name(KernelDeterminism d);
// "not-claimed", "bitwise", "bitwise-except-nan-payload".
std::string_view cross_backend_exactness_name(CrossBackendExactness e);

}  // namespace volta
