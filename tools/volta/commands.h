#pragma once

#include <span>
#include <string_view>

namespace volta::cli {

// Each command returns the process exit code; bad arguments print usage and return 2.
int info(std::span<const std::string_view> args);
int doctor(std::span<const std::string_view> args);
int run(std::span<const std::string_view> args);         // model_commands.cpp
int check(std::span<const std::string_view> args);       // model_commands.cpp
int bench(std::span<const std::string_view> args);       // model_commands.cpp
int info_model(std::span<const std::string_view> args);  // `info model.onnx`
// train_commands.cpp: the tiny transformer. They throw UsageError for a bad command line.
int train_command(std::span<const std::string_view> args);
int generate_command(std::span<const std::string_view> args);
int eval_command(std::span<const std::string_view> args);
int export_command(std::span<const std::string_view> args);

}  // namespace volta::cli
