#pragma once
// The inputs and cases the resampling tests share: cuda_device_layout_test runs them on the
// device, cuda_resampling_emulation_test runs the device code on the host; both against the
// CPU backend.

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "volta/ir/graph.h"
#include "volta/ir/random.h"

namespace volta::resampling_test {

// Random bytes of any dtype: every float class, NaN payloads included; bool bytes 0 or 1.
inline Tensor random_of(DType dtype, const Shape& shape, uint64_t seed) {
  if (dtype == DType::Bool) return random_tensor(dtype, shape, seed, 0.0, 2.0);
  Tensor t(dtype, shape);
  auto* bytes = static_cast<std::byte*>(t.data());
  for (size_t i = 0; i < t.nbytes(); ++i) {
    bytes[i] = static_cast<std::byte>(counter_random_u64(seed, 1, i));
  }
  return t;
}

// Uniform floats in [-4, 4) with every 7th element a special value (infinities, NaNs with
// payloads, signed zeros, the largest finite, a subnormal).
inline Tensor float_data(DType dtype, const Shape& shape, uint64_t seed) {
  Tensor t = random_tensor(dtype, shape, seed, -4.0, 4.0);
  const double specials[] = {std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(),
                             std::numeric_limits<double>::quiet_NaN(),
                             -0.0,
                             0.0,
                             dtype == DType::F32 ? 3.4e38 : 1.7e308,
                             dtype == DType::F32 ? 1e-40 : 1e-310};
  for (int64_t i = 3; i < t.numel(); i += 7) {
    t.set_double(i, specials[static_cast<size_t>(i / 7) % std::size(specials)]);
  }
  if (dtype == DType::F32 && t.numel() > 10) {  // a NaN with a payload
    const float payload = std::bit_cast<float>(0x7fc01234u);
    std::memcpy(static_cast<float*>(t.data()) + 10, &payload, sizeof payload);
  }
  return t;
}

struct ResizeCase {
  Shape in;
  Shape out;
  std::vector<double> scales;  // empty: sizes / input
};

inline const std::vector<ResizeCase>& resize_cases() {
  static const std::vector<ResizeCase> cases = {{{13}, {29}, {}},
                                                {{1, 2, 5, 7}, {1, 2, 9, 4}, {}},
                                                {{1, 1, 4, 4}, {1, 1, 8, 8}, {1.0, 1.0, 2.0, 2.0}},
                                                {{2, 3, 1, 6}, {2, 3, 3, 6}, {}},
                                                {{3, 4, 5}, {5, 3, 8}, {1.7, 0.8, 1.55}},
                                                {{2, 2, 3, 3, 3}, {2, 2, 5, 2, 4}, {}},
                                                {{1, 4100}, {1, 4099}, {}}};
  return cases;
}

inline Attributes resize_attrs(const ResizeCase& c, const std::string& mode,
                               const std::string& transform, const std::string& nearest,
                               int64_t exclude_outside) {
  Attributes attrs = {{"sizes", c.out.dims()},
                      {"mode", mode},
                      {"coordinate_transformation_mode", transform},
                      {"nearest_mode", nearest},
                      {"exclude_outside", exclude_outside}};
  if (!c.scales.empty()) attrs.emplace("scales", c.scales);
  if (transform == "tf_crop_and_resize") {
    std::vector<double> roi;
    roi.reserve(2 * static_cast<size_t>(c.in.rank()));
    for (int a = 0; a < c.in.rank(); ++a) roi.push_back(a % 2 == 0 ? 0.1 : -0.2);
    for (int a = 0; a < c.in.rank(); ++a) roi.push_back(a % 2 == 0 ? 0.85 : 1.3);
    attrs.emplace("roi", roi);
    attrs.emplace("extrapolation_value", 2.0);
  }
  return attrs;
}

inline constexpr const char* kTransforms[] = {
    "half_pixel", "half_pixel_symmetric",      "pytorch_half_pixel", "align_corners",
    "asymmetric", "tf_half_pixel_for_nearest", "tf_crop_and_resize"};

// GridSample's X and grid shapes.
inline const std::vector<std::pair<Shape, Shape>>& grid_sample_cases() {
  static const std::vector<std::pair<Shape, Shape>> cases = {{{2, 3, 5, 7}, {2, 4, 6, 2}},
                                                             {{1, 2, 1, 4}, {1, 3, 5, 2}},
                                                             {{1, 1, 6, 1}, {1, 7, 3, 2}},
                                                             {{1, 4, 33, 65}, {1, 40, 50, 2}}};
  return cases;
}

// Grid values: uniform in [-1.6, 1.6) with exact corners, centres, ties and non-finite values
// planted.
inline Tensor grid_values(DType dtype, const Shape& shape, uint64_t seed) {
  Tensor t = random_tensor(dtype, shape, seed, -1.6, 1.6);
  const double specials[] = {-1.0,
                             1.0,
                             0.0,
                             -0.0,
                             0.5,
                             -0.75,
                             0.25,
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(),
                             std::numeric_limits<double>::quiet_NaN(),
                             5.5,
                             -7.25,
                             1e30};
  for (int64_t i = 1; i < t.numel(); i += 5) {
    t.set_double(i, specials[static_cast<size_t>(i / 5) % std::size(specials)]);
  }
  return t;
}

}  // namespace volta::resampling_test
