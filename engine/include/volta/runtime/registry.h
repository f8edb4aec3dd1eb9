#pragma once
// Backends by name. A backend library registers itself when it is linked into a binary
// (VOLTA_REGISTER_BACKEND in one of its sources; consumers link the `volta_backends` target,
// which links every backend built into this binary whole), so the core never names one: a new
// backend, or a test-only one, is added without touching it.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "volta/runtime/backend.h"

namespace volta {

using BackendFactory = std::unique_ptr<Backend> (*)();

// Registers `factory` under `name`, with a one-line description for `volta doctor`. Throws
// VoltaError(InvalidArgument) for an empty or duplicate name. Returns true, so that a
// registration can initialise a static.
bool register_backend(std::string_view name, std::string_view description, BackendFactory factory);

// A new backend of that name. Throws VoltaError(UnknownBackend) naming the backends built into
// this binary when there is none.
std::unique_ptr<Backend> make_backend(std::string_view name);
// Whether this binary has a backend of that name (a suite skips, with the reason, the cases of
// a backend it was not built with).
bool has_backend(std::string_view name);

struct BackendInfo {
  std::string name;
  std::string description;
};
std::vector<BackendInfo> available_backends();  // sorted by name

}  // namespace volta

// In one source file of a backend library, at namespace scope.
#define VOLTA_REGISTER_BACKEND(name, description, factory)                \
  [[maybe_unused]] static const bool volta_backend_registered_##factory = \
      ::volta::register_backend(name, description, factory)
