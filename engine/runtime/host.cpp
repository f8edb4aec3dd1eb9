#include "volta/runtime/host.h"

#include <unistd.h>

#include <array>
#include <fstream>

namespace volta {

std::string host_cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

std::string host_name() {
  std::array<char, 256> buf{};
  gethostname(buf.data(), buf.size() - 1);
  return buf.data();
}

}  // namespace volta
