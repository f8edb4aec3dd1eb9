#pragma once

#include <span>
#include <string_view>

namespace volta::cli {

// Each command returns the process exit code; bad arguments print usage and return 2.
int info(std::span<const std::string_view> args);
int doctor(std::span<const std::string_view> args);

}  // namespace volta::cli
