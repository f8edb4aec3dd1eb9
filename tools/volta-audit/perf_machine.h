#pragma once
// The machine fingerprint perf baselines are keyed by: timings compare only on the same CPU
// model, instruction set, core count, compiler and build type. A run on a fingerprint with no
// baseline records candidate baselines instead of comparing with another machine.

#include <string>
#include <string_view>
#include <vector>

namespace volta::audit {

// The ISA flags of /proc/cpuinfo that change which kernels run or how fast.
inline constexpr std::string_view kFingerprintIsaFlags[] = {
    "sse4_2",      "avx",         "avx2",     "fma",      "f16c",
    "avx512f",     "avx512bw",    "avx512vl", "avx512dq", "avx512_vnni",
    "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8"};

struct BinaryDescription {
  std::string build_type = {};  // CMake build type of the perf binary
  std::string compiler = {};    // its compiler id and version
  std::string commit = {};      // the commit it was built from ("unknown" outside git)
  bool dirty = false;           // built from a tree with uncommitted changes
};

struct MachineFingerprint {
  std::string cpu_model = {};
  std::vector<std::string> isa = {};  // the flags of kFingerprintIsaFlags present, in that order
  int cores = 1;                      // CPUs this process may run on
  BinaryDescription binary = {};

  // "cpu=...;isa=avx2,fma,...;cores=2;compiler=...;build=Release": run.machine and the key of
  // perf_baseline.
  std::string key() const;
};

// The "flags" line of a /proc/cpuinfo text, narrowed to kFingerprintIsaFlags.
std::vector<std::string> fingerprint_isa(std::string_view cpuinfo);
// The fingerprint of this machine for a perf binary that described itself as `binary`.
MachineFingerprint machine_fingerprint(const BinaryDescription& binary);
// Parses `volta-perf --volta_describe`'s "build_type\tX\ncompiler\tY\ncommit\tSHA\ndirty\t0|1\n";
// throws VoltaError when build_type, compiler or commit is missing.
BinaryDescription parse_binary_description(std::string_view text);

}  // namespace volta::audit
