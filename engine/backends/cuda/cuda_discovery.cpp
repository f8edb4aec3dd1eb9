#include "cuda_discovery.h"

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <string>

#include "cuda_check.h"
#include "kernels/launch.h"

// The build's CUDA_ARCHITECTURES with ',' for ';' (engine/backends/cuda/CMakeLists.txt).
#ifndef VOLTA_CUDA_ARCHITECTURES_TEXT
#error "VOLTA_CUDA_ARCHITECTURES_TEXT is defined by engine/backends/cuda/CMakeLists.txt"
#endif

namespace volta {

std::string CudaDeviceInfo::compute_capability() const {
  return std::to_string(compute_major) + "." + std::to_string(compute_minor);
}

std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

namespace cuda {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

std::string device_ref(const CudaDeviceInfo& d) {
  return "CUDA device " + std::to_string(d.ordinal) + " (" + d.name + ")";
}

std::string runtime_ref(const CudaProbe& probe) {
  return "this binary's CUDA " + cuda_version_text(probe.runtime_version) + " runtime";
}

CudaProbe::Count count_devices(int& count, std::string& error) {
  const cudaError_t status = cudaGetDeviceCount(&count);
  switch (status) {
    case cudaSuccess:
      return count > 0 ? CudaProbe::Count::Found : CudaProbe::Count::NoDevice;
    case cudaErrorInsufficientDriver:
      return CudaProbe::Count::InsufficientDriver;
    case cudaErrorNoDevice:
      return CudaProbe::Count::NoDevice;
    default:
      error = cuda_error_text(status);
      return CudaProbe::Count::Failed;
  }
}

CudaProbe run_probe() {
  CudaProbe probe;
  probe.architectures = architectures_text(VOLTA_CUDA_ARCHITECTURES_TEXT);
  // Both answer without a driver: the runtime is linked in, and the driver's version is 0
  // when libcuda.so.1 cannot be loaded.
  cudaRuntimeGetVersion(&probe.runtime_version);
  cudaDriverGetVersion(&probe.driver_version);
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) probe.visible_devices = visible;
  int count = 0;
  probe.count = count_devices(count, probe.count_error);
  if (probe.count != CudaProbe::Count::Found) return probe;
  // A failure past this point is reported like a failed count: the probe never throws, so
  // `volta doctor` can always print what it found.
  const auto failed = [&probe](std::string_view call, cudaError_t status) {
    probe.count = CudaProbe::Count::Failed;
    probe.count_error = std::string(call) + ": " + cuda_error_text(status);
    return probe;
  };
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (const cudaError_t s = cudaGetDeviceProperties(&prop, i); s != cudaSuccess) {
      return failed("cudaGetDeviceProperties(" + std::to_string(i) + ")", s);
    }
    probe.devices.push_back({i, prop.name, prop.major, prop.minor, prop.multiProcessorCount,
                             static_cast<int64_t>(prop.totalGlobalMem)});
  }
  if (const cudaError_t s = cudaSetDevice(0); s != cudaSuccess)
    return failed("cudaSetDevice(0)", s);
  const cudaError_t image = kernel_image_status();
  probe.kernel_image = image == cudaSuccess;
  if (!probe.kernel_image) probe.kernel_image_error = cuda_error_text(image);
  return probe;
}

}  // namespace

std::string architectures_text(std::string_view cmake_architectures) {
  std::vector<std::string> machine_code;
  std::vector<std::string> ptx;
  std::vector<std::string> other;
  size_t start = 0;
  while (start <= cmake_architectures.size()) {
    const size_t end =
        std::min(cmake_architectures.find_first_of(",;", start), cmake_architectures.size());
    const std::string_view item = cmake_architectures.substr(start, end - start);
    start = end + 1;
    if (item.empty()) continue;
    const size_t dash = item.find('-');
    const std::string_view number = item.substr(0, dash);
    const std::string_view kind = dash == std::string_view::npos ? "" : item.substr(dash + 1);
    const bool numeric =
        !number.empty() && number.find_first_not_of("0123456789") == std::string_view::npos;
    if (!numeric || (kind != "" && kind != "real" && kind != "virtual")) {
      other.emplace_back(item);
      continue;
    }
    if (kind != "virtual") machine_code.push_back("sm_" + std::string(number));
    if (kind != "real") ptx.push_back("compute_" + std::string(number));
  }
  std::vector<std::string> parts;
  if (!machine_code.empty()) parts.push_back(join(machine_code) + " machine code");
  if (!ptx.empty()) parts.push_back(join(ptx) + " PTX");
  if (!other.empty()) parts.push_back(join(other));
  std::string out;
  for (const std::string& part : parts) out += (out.empty() ? "" : "; ") + part;
  return out.empty() ? "none" : out;
}

std::string unavailable_reason(const CudaProbe& probe) {
  if (probe.driver_version == 0) {
    return "no NVIDIA driver: libcuda.so.1 is not installed or cannot be loaded (" +
           runtime_ref(probe) + " is linked in and needs only the driver)";
  }
  const std::string driver =
      "the NVIDIA driver (CUDA " + cuda_version_text(probe.driver_version) + ")";
  switch (probe.count) {
    case CudaProbe::Count::InsufficientDriver:
      return driver + " is older than " + runtime_ref(probe) + ": install a driver for CUDA " +
             cuda_version_text(probe.runtime_version) +
             " or newer, or build Volta with the nvcc that matches this driver";
    case CudaProbe::Count::NoDevice:
      return "no CUDA device: " + driver + " reports none" +
             (probe.visible_devices.empty()
                  ? std::string()
                  : " (CUDA_VISIBLE_DEVICES=" + probe.visible_devices + ")");
    case CudaProbe::Count::Failed:
      return "CUDA could not be initialised: " + probe.count_error;
    case CudaProbe::Count::Found:
      break;
  }
  const CudaDeviceInfo& d = probe.devices.at(0);
  if (d.compute_major < kMinComputeMajor) {
    return device_ref(d) + " has compute capability " + d.compute_capability() +
           "; the CUDA backend needs " + std::to_string(kMinComputeMajor) +
           ".0 or newer (this build: " + probe.architectures + ")";
  }
  if (!probe.kernel_image) {
    return device_ref(d) + " has compute capability " + d.compute_capability() +
           ", for which this build has no kernel code (this build: " + probe.architectures + "; " +
           probe.kernel_image_error +
           "): configure with -DVOLTA_CUDA_ARCHITECTURES=" + std::to_string(d.compute_major) +
           std::to_string(d.compute_minor) + "-real added";
  }
  return {};
}

const CudaProbe& probe_cuda() {
  static const CudaProbe kProbe = run_probe();
  return kProbe;
}

}  // namespace cuda

std::string cuda_device_summary(const CudaReport& report) {
  if (report.devices.empty()) return "";
  const CudaDeviceInfo& d = report.devices.front();
  return d.name + " (compute capability " + d.compute_capability() + ", " +
         std::to_string(d.sm_count) + " SMs; driver CUDA " +
         cuda_version_text(report.driver_version) + ", toolkit " +
         cuda_version_text(report.runtime_version) + ")";
}

CudaReport cuda_report() {
  const cuda::CudaProbe& probe = cuda::probe_cuda();
  return {probe.runtime_version, probe.driver_version, probe.architectures, probe.devices,
          cuda::unavailable_reason(probe)};
}

}  // namespace volta
