#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "commands.h"
#include "volta/ir/random.h"
#include "volta/model/builtin_models.h"
#include "volta/runtime/host.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

#ifdef VOLTA_CUDA_BACKEND
#include "volta/backends/cuda.h"
#endif

namespace volta::cli {
namespace {

std::string cpu_features() {
  std::string out;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("sse4.2")) out += "sse4.2 ";
  if (__builtin_cpu_supports("avx")) out += "avx ";
  if (__builtin_cpu_supports("avx2")) out += "avx2 ";
  if (__builtin_cpu_supports("fma")) out += "fma ";
  if (__builtin_cpu_supports("avx512f")) out += "avx512f ";
  return out.empty() ? "baseline x86-64" : out;
}

#ifdef VOLTA_CUDA_BACKEND
// The CUDA backend built into this binary, the driver, each device, and whether the backend
// can run here (else the reason make_context() would give).
void print_cuda() {
  const CudaReport r = cuda_report();
  std::printf("cuda backend:    built in (CUDA runtime %s, linked statically; kernels: %s)\n",
              cuda_version_text(r.runtime_version).c_str(), r.architectures.c_str());
  std::printf("cuda driver:     %s\n",
              r.driver_version == 0
                  ? "none (libcuda.so.1 not found)"
                  : ("supports CUDA " + cuda_version_text(r.driver_version)).c_str());
  for (const CudaDeviceInfo& d : r.devices) {
    std::printf("cuda device %d:   %s, compute capability %s, %d SMs, %.1f GiB\n", d.ordinal,
                d.name.c_str(), d.compute_capability().c_str(), d.sm_count,
                static_cast<double>(d.memory_bytes) / (1024.0 * 1024.0 * 1024.0));
  }
  std::printf("cuda usable:     %s\n",
              r.unavailable.empty() ? "yes (device 0)" : ("no: " + r.unavailable).c_str());
}
#else
std::string cuda_toolkit() {
  namespace fs = std::filesystem;
  if (fs::exists("/usr/local/cuda/bin/nvcc")) return "found at /usr/local/cuda";
  if (const char* path = std::getenv("PATH")) {
    std::string p = path;
    for (size_t start = 0; start <= p.size();) {
      const size_t end = std::min(p.find(':', start), p.size());
      if (fs::exists(fs::path(p.substr(start, end - start)) / "nvcc")) {
        return "nvcc on PATH in " + p.substr(start, end - start);
      }
      start = end + 1;
    }
  }
  return "not found";
}

std::string cuda_devices() {
  namespace fs = std::filesystem;
  const fs::path gpus = "/proc/driver/nvidia/gpus";
  std::error_code ec;
  int n = 0;
  if (fs::is_directory(gpus, ec)) {
    for ([[maybe_unused]] const auto& entry : fs::directory_iterator(gpus, ec)) ++n;
  }
  return n == 0 ? "none" : std::to_string(n) + " NVIDIA device(s)";
}

void print_cuda() {
  std::printf("cuda toolkit:    %s\n", cuda_toolkit().c_str());
  std::printf("cuda devices:    %s\n", cuda_devices().c_str());
  std::printf(
      "cuda backend:    not built into this binary (no nvcc at build time, or "
      "VOLTA_CUDA=OFF)\n");
}
#endif

// Strict compilation of the example block and bit-identical outputs at 1 and N threads.
bool determinism_ready(int threads, std::string& why) {
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  const Graph graph = transformer_block_graph({});
  const ExecutionPlan plan = compile(graph, *cpu, DeterminismMode::Strict);
  const Value& x = graph.value(graph.inputs()[0]);
  const std::vector<Tensor> inputs = {random_tensor(x.dtype, x.shape, 7, -1, 1)};
  const std::unique_ptr<ExecutionContext> one_context = cpu->make_context({.threads = 1});
  ExecutionContext& one = *one_context;
  const std::unique_ptr<ExecutionContext> many_context = cpu->make_context({.threads = threads});
  ExecutionContext& many = *many_context;
  const bool same =
      execute(plan, *cpu, one, inputs)[0].bit_equal(execute(plan, *cpu, many, inputs)[0]);
  why = same ? "strict plan compiles; 1 and " + std::to_string(threads) +
                   " threads give identical bits"
             : "outputs differ between 1 and " + std::to_string(threads) + " threads";
  return same;
}

}  // namespace

int doctor(std::span<const std::string_view> args) {
  if (!args.empty()) {
    std::fprintf(stderr, "volta doctor: takes no options, got '%s'\n",
                 std::string(args[0]).c_str());
    return 2;
  }
  const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::printf("compiler:        %s %s\n", "g++", __VERSION__);
#ifdef NDEBUG
  std::printf("assertions:      off\n");
#else
  std::printf("assertions:      on\n");
#endif
  std::printf("cpu:             %s\n", host_cpu_model().c_str());
  std::printf("cpu features:    %s\n", cpu_features().c_str());
  std::printf("threads:         %d hardware threads\n", hw);
  std::string built;
  for (const BackendInfo& b : available_backends()) {
    built += (built.empty() ? "" : "; ") + b.name + " (" + b.description + ")";
  }
  std::printf("backends:        %s\n", built.c_str());
  print_cuda();
  const Capabilities caps = make_backend("cpu")->capabilities();
  int supported = 0;
  for (const OpCapability& c : caps) supported += c.supported ? 1 : 0;
  std::printf("cpu backend:     %d of %d ops have kernels\n", supported, kOpCount);
  std::string why;
  const bool ready = supported == kOpCount && determinism_ready(std::max(hw, 4), why);
  if (supported != kOpCount) why = "the CPU backend lacks kernels for some ops";
  std::printf("determinism readiness: %s (%s)\n", ready ? "ready" : "NOT READY", why.c_str());
  return ready ? 0 : 1;
}

}  // namespace volta::cli
