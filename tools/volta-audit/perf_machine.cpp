#include "perf_machine.h"

#include <sched.h>

#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "volta/error.h"
#include "volta/runtime/host.h"

namespace volta::audit {
namespace {

int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int count = CPU_COUNT(&set);
    if (count > 0) return count;
  }
  const unsigned hardware = std::thread::hardware_concurrency();
  return hardware == 0 ? 1 : static_cast<int>(hardware);
}

}  // namespace

std::string MachineFingerprint::key() const {
  std::string flags;
  for (const std::string& f : isa) flags += (flags.empty() ? "" : ",") + f;
  return "cpu=" + cpu_model + ";isa=" + (flags.empty() ? "none" : flags) +
         ";cores=" + std::to_string(cores) + ";compiler=" + binary.compiler +
         ";build=" + binary.build_type;
}

std::vector<std::string> fingerprint_isa(std::string_view cpuinfo) {
  std::set<std::string, std::less<>> present;
  std::istringstream in{std::string(cpuinfo)};
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("flags")) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::istringstream words(line.substr(colon + 1));
    for (std::string w; words >> w;) present.insert(w);
    break;  // every CPU of a machine lists the same flags
  }
  std::vector<std::string> isa;
  for (std::string_view flag : kFingerprintIsaFlags) {
    if (present.contains(flag)) isa.emplace_back(flag);
  }
  return isa;
}

MachineFingerprint machine_fingerprint(const BinaryDescription& binary) {
  std::ifstream in("/proc/cpuinfo");
  std::stringstream cpuinfo;
  cpuinfo << in.rdbuf();
  return {.cpu_model = host_cpu_model(),
          .isa = fingerprint_isa(cpuinfo.str()),
          .cores = usable_cores(),
          .binary = binary};
}

BinaryDescription parse_binary_description(std::string_view text) {
  BinaryDescription d;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    const size_t tab = line.find('\t');
    if (tab == std::string::npos) continue;
    const std::string key = line.substr(0, tab);
    if (key == "build_type") d.build_type = line.substr(tab + 1);
    if (key == "compiler") d.compiler = line.substr(tab + 1);
    if (key == "commit") d.commit = line.substr(tab + 1);
    if (key == "dirty") d.dirty = line.substr(tab + 1) == "1";
  }
  if (d.build_type.empty() || d.compiler.empty() || d.commit.empty()) {
    fail(ErrorCode::InvalidArgument,
         "the perf binary's --volta_describe gave no build_type, compiler or commit (got '" +
             std::string(text) + "'); is it a volta-perf built from this tree?");
  }
  return d;
}

}  // namespace volta::audit
