#include "volta/runtime/registry.h"

#include <algorithm>
#include <map>
#include <mutex>

namespace volta {
namespace {

struct Entry {
  std::string description;
  BackendFactory factory = nullptr;
};

// Function-local: registrations run during static initialisation, in any order.
std::map<std::string, Entry, std::less<>>& entries() {
  static std::map<std::string, Entry, std::less<>> registered;
  return registered;
}

std::mutex& registry_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::string names() {
  std::string out;
  for (const auto& [name, entry] : entries()) out += (out.empty() ? "" : ", ") + name;
  return out.empty() ? "none" : out;
}

}  // namespace

bool register_backend(std::string_view name, std::string_view description, BackendFactory factory) {
  const std::lock_guard lock(registry_mutex());
  if (name.empty() || factory == nullptr) {
    fail(ErrorCode::InvalidArgument, "a backend registers with a name and a factory");
  }
  const auto [it, added] =
      entries().emplace(std::string(name), Entry{std::string(description), factory});
  if (!added)
    fail(ErrorCode::InvalidArgument, "backend '" + std::string(name) + "' is registered twice");
  return true;
}

std::unique_ptr<Backend> make_backend(std::string_view name) {
  BackendFactory factory = nullptr;
  {
    const std::lock_guard lock(registry_mutex());
    const auto it = entries().find(name);
    if (it == entries().end()) {
      fail(ErrorCode::UnknownBackend, "no backend '" + std::string(name) +
                                          "' in this binary (backends built into it: " + names() +
                                          ")");
    }
    factory = it->second.factory;
  }
  return factory();
}

bool has_backend(std::string_view name) {
  const std::lock_guard lock(registry_mutex());
  return entries().contains(name);
}

std::vector<BackendInfo> available_backends() {
  const std::lock_guard lock(registry_mutex());
  std::vector<BackendInfo> out;
  for (const auto& [name, entry] : entries()) out.push_back({name, entry.description});
  return out;
}

}  // namespace volta
