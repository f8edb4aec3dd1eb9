#pragma once
// Internal to the CUDA backend: finding the driver and device 0, and saying what is missing.
// The probe asks the CUDA runtime once; the verdict is a pure function of what it found, so
// every refusal's text is tested on any machine (tests/cuda_backend_test.cpp).

#include <string>
#include <string_view>
#include <vector>

#include "volta/backends/cuda.h"

namespace volta::cuda {

// Oldest compute capability the backend accepts: the kernels rely on nothing newer, but the
// determinism and performance contract is stated for sm_80 and later only.
inline constexpr int kMinComputeMajor = 8;

// What the CUDA runtime reported, as data.
struct CudaProbe {
  int runtime_version = 0;
  int driver_version = 0;  // 0: no driver (libcuda.so.1 absent)
  enum class Count { Found, InsufficientDriver, NoDevice, Failed } count = Count::Found;
  std::string count_error;      // for Failed: the call and CUDA's error name and text
  std::string visible_devices;  // CUDA_VISIBLE_DEVICES when it is set
  std::vector<CudaDeviceInfo> devices;
  // Whether device 0 can load this binary's kernels (cudaFuncGetAttributes on one of them).
  bool kernel_image = true;
  std::string kernel_image_error;
  std::string architectures;  // architectures_text of the build's CUDA_ARCHITECTURES
};

// Why the backend cannot run on device 0 of `probe`, naming what is missing and what would do;
// empty when it can.
std::string unavailable_reason(const CudaProbe& probe);

// "80-real;90-real;90-virtual" -> "sm_80, sm_90 machine code; compute_90 PTX".
std::string architectures_text(std::string_view cmake_architectures);

// Asks the CUDA runtime (once per process: the answer is cached).
const CudaProbe& probe_cuda();

}  // namespace volta::cuda
