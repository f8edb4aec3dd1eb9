// `volta`: the user CLI. Commands that exist today: info, doctor.
#include <cstdio>
#include <string_view>
#include <vector>

#include "commands.h"
#include "volta/error.h"

namespace {

constexpr const char* kUsage =
    "usage: volta <command> [options]\n"
    "commands:\n"
    "  info     print the built-in example graph: nodes, shapes, plan, peak bytes\n"
    "           options: --mode strict|relaxed (default strict)\n"
    "  doctor   compiler, CPU features, threads, CUDA presence, determinism readiness\n";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  const std::string_view command = args[0];
  const std::span<const std::string_view> rest(args.data() + 1, args.size() - 1);
  try {
    if (command == "info") return volta::cli::info(rest);
    if (command == "doctor") return volta::cli::doctor(rest);
  } catch (const volta::VoltaError& e) {
    std::fprintf(stderr, "volta %s: %s\n", std::string(command).c_str(), e.what());
    return 1;
  }
  std::fprintf(stderr, "volta: unknown command '%s' (supported: info, doctor)\n%s",
               std::string(command).c_str(), kUsage);
  return 2;
}
