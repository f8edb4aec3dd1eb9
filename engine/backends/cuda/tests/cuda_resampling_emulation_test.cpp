// Resize's and GridSample's device code (kernels/resampling_kernel.cuh) run on the host, element
// by element, against the CPU backend, bit for bit, NaN payloads included (x86 arithmetic passes
// them on as the CPU kernel's does; a device returns the canonical NaN, which its claim allows).
// The launch is built by the backend's own resize_launch / grid_sample_launch. It checks the
// port's arithmetic and its order without a device; the device tests (cuda_device_layout_test)
// check what nvcc makes of it.

#define BOOST_TEST_MODULE cuda_resampling_emulation_test
#include <cuda_runtime_api.h>

#include <boost/test/unit_test.hpp>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

// NOLINTBEGIN(bugprone-reserved-identifier): the CUDA names the kernel is written with, which
// cuda_runtime_api.h defines as device attributes a host compiler does not know.
#undef __device__
#undef __forceinline__
#define __device__
#define __forceinline__ inline
// NOLINTEND(bugprone-reserved-identifier)

#include "kernels/resampling_kernel.cuh"
#include "kernels/resampling_launch.h"
#include "resampling_cases.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta {
namespace {

using namespace resampling_test;  // NOLINT(google-build-using-namespace): the shared cases
using cuda::GridSampleLaunch;
using cuda::ResizeLaunch;
using cuda::ResizeMode;

const Backend& cpu() {
  static const std::unique_ptr<Backend> backend = make_backend("cpu");
  return *backend;
}

Tensor run_cpu(const Graph& g, const std::vector<Tensor>& inputs) {
  const ExecutionPlan plan = compile(g, cpu(), DeterminismMode::Strict, {.optimize = false});
  const std::unique_ptr<ExecutionContext> ctx = cpu().make_context({.threads = 3});
  return execute(plan, cpu(), *ctx, inputs).at(0);
}

Graph one_node(OpKind op, const std::vector<TypeInfo>& inputs, Attributes attrs) {
  Graph g;
  std::vector<ValueId> ids;
  for (size_t i = 0; i < inputs.size(); ++i) {
    ids.push_back(g.add_input("in" + std::to_string(i), inputs[i].dtype, inputs[i].shape));
  }
  g.set_outputs({g.add(op, ids, std::move(attrs), "op")});
  return g;
}

// The first element whose bytes differ, or empty.
std::string first_difference(const Tensor& got, const Tensor& want) {
  const size_t size = dtype_size(got.dtype());
  for (int64_t i = 0; i < got.numel(); ++i) {
    const auto at = static_cast<size_t>(i) * size;
    if (std::memcmp(static_cast<const std::byte*>(got.data()) + at,
                    static_cast<const std::byte*>(want.data()) + at, size) != 0) {
      return "element " + std::to_string(i) + ": emulated " + std::to_string(got.get_double(i)) +
             ", cpu " + std::to_string(want.get_double(i));
    }
  }
  return {};
}

template <class T>
void emulate_resize(const ResizeLaunch& r, const Tensor& x, Tensor& y) {
  const T* in = static_cast<const T*>(x.data());
  T* out = static_cast<T*>(y.data());
  for (int64_t i = 0; i < r.numel; ++i) {
    out[i] = r.mode == ResizeMode::Nearest
                 ? cuda::resampling_detail::resize_nearest_element(r, in, i)
                 : cuda::resampling_detail::resize_interpolated_element(r, in, i);
  }
}

void check_resize(DType dtype, const ResizeCase& c, const Attributes& attrs, const Tensor& x,
                  const std::string& what) {
  const Graph g = one_node(OpKind::Resize, {{dtype, c.in}}, attrs);
  const Tensor want = run_cpu(g, {x});
  const ResizeLaunch r = cuda::resize_launch(g.node(0), c.in, c.out, dtype);
  Tensor got(dtype, c.out);
  if (dtype == DType::F32) emulate_resize<float>(r, x, got);
  if (dtype == DType::F64) emulate_resize<double>(r, x, got);
  if (dtype == DType::I32) emulate_resize<uint32_t>(r, x, got);
  if (dtype == DType::I64) emulate_resize<uint64_t>(r, x, got);
  if (dtype == DType::Bool) emulate_resize<uint8_t>(r, x, got);
  const std::string difference = first_difference(got, want);
  BOOST_CHECK_MESSAGE(difference.empty(), what << ": " << difference);
}

BOOST_AUTO_TEST_CASE(resize_nearest_is_the_cpus_for_every_dtype_and_mode) {
  uint64_t seed = 600;
  for (const ResizeCase& c : resize_cases()) {
    for (const char* transform : kTransforms) {
      for (const char* nearest : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}) {
        for (DType dtype : {DType::F32, DType::F64, DType::I64, DType::I32, DType::Bool}) {
          Attributes attrs = resize_attrs(c, "nearest", transform, nearest, 0);
          if (dtype == DType::Bool && std::string(transform) == "tf_crop_and_resize") {
            attrs["extrapolation_value"] = 1.0;
          }
          check_resize(dtype, c, attrs, random_of(dtype, c.in, ++seed),
                       std::string(dtype_name(dtype)) + " nearest " + transform + " " + nearest +
                           " " + c.in.str() + " to " + c.out.str());
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(resize_linear_and_cubic_are_the_cpus) {
  uint64_t seed = 700;
  for (const ResizeCase& c : resize_cases()) {
    for (const char* transform : kTransforms) {
      for (const char* mode : {"linear", "cubic"}) {
        for (int64_t exclude : {0, 1}) {
          for (DType dtype : {DType::F32, DType::F64}) {
            Attributes attrs = resize_attrs(c, mode, transform, "round_prefer_floor", exclude);
            if (std::string(mode) == "cubic" && exclude == 1) attrs["cubic_coeff_a"] = -0.5;
            check_resize(dtype, c, attrs, float_data(dtype, c.in, ++seed),
                         std::string(dtype_name(dtype)) + " " + mode + " " + transform +
                             " exclude_outside " + std::to_string(exclude) + " " + c.in.str() +
                             " to " + c.out.str());
          }
        }
      }
    }
  }
}

template <class T>
void emulate_grid_sample(const GridSampleLaunch& s, const Tensor& x, const Tensor& grid,
                         Tensor& y) {
  for (int64_t i = 0; i < y.numel(); ++i) {
    static_cast<T*>(y.data())[i] = cuda::resampling_detail::grid_sample_element(
        s, static_cast<const T*>(x.data()), static_cast<const T*>(grid.data()), i);
  }
}

BOOST_AUTO_TEST_CASE(grid_sample_is_the_cpus_in_every_mode_and_padding) {
  uint64_t seed = 800;
  for (const auto& [in, grid] : grid_sample_cases()) {
    for (const char* mode : {"nearest", "bilinear", "bicubic"}) {
      for (const char* padding : {"zeros", "border", "reflection"}) {
        for (int64_t align : {0, 1}) {
          for (DType dtype : {DType::F32, DType::F64}) {
            const Graph g = one_node(OpKind::GridSample, {{dtype, in}, {dtype, grid}},
                                     {{"mode", std::string(mode)},
                                      {"padding_mode", std::string(padding)},
                                      {"align_corners", align}});
            const Tensor x = float_data(dtype, in, ++seed);
            const Tensor points = grid_values(dtype, grid, ++seed);
            const Tensor want = run_cpu(g, {x, points});
            const GridSampleLaunch s = cuda::grid_sample_launch(g.node(0), in, want.shape());
            Tensor got(dtype, want.shape());
            if (dtype == DType::F32) {
              emulate_grid_sample<float>(s, x, points, got);
            } else {
              emulate_grid_sample<double>(s, x, points, got);
            }
            const std::string difference = first_difference(got, want);
            BOOST_CHECK_MESSAGE(difference.empty(), std::string(dtype_name(dtype))
                                                        << " " << mode << " " << padding
                                                        << " align_corners " << align << " "
                                                        << in.str() << " at " << grid.str() << ": "
                                                        << difference);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace volta
