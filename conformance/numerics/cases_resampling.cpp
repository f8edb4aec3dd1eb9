// Parity grids of Resize and GridSample.

#include <limits>
#include <string>
#include <variant>
#include <vector>

#include "case_list.h"
#include "volta/ir/random.h"

namespace volta::conformance::cases {
namespace {

using Ints = std::vector<int64_t>;
using Floats = std::vector<double>;

Attributes resize_attrs(Ints sizes, const char* mode, const char* transform) {
  return {{"sizes", std::move(sizes)},
          {"mode", std::string(mode)},
          {"coordinate_transformation_mode", std::string(transform)}};
}

void resize_grid(CaseList& cases) {
  const char* transforms[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                              "tf_half_pixel_for_nearest"};
  // Up on one axis, down on another, unchanged on the rest: every transform and mode.
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    for (const char* transform : transforms) {
      cases.add(K::Resize, {f32({2, 3, 5, 4})}, resize_attrs({2, 3, 8, 3}, mode, transform));
      cases.add(K::Resize, {f32({3, 4, 5})}, resize_attrs({5, 2, 9}, mode, transform));
    }
    // Output length 1 (pytorch_half_pixel and align_corners special-case it), and 1-D.
    cases.add(K::Resize, {f32({4, 6})}, resize_attrs({1, 3}, mode, "pytorch_half_pixel"));
    cases.add(K::Resize, {f32({4, 6})}, resize_attrs({1, 11}, mode, "align_corners"));
    cases.add(K::Resize, {f32({7})}, resize_attrs({12}, mode, "half_pixel"));
    // Unchanged shape: the identity for every mode.
    cases.add(K::Resize, {f32({2, 3, 4})}, resize_attrs({2, 3, 4}, mode, "half_pixel"));
    // Scales given (ONNX's scales input): the output is floor(input * scale) and the
    // transforms use the scale itself.
    Attributes scaled = resize_attrs({1, 1, 1, 2}, mode, "align_corners");
    scaled["scales"] = Floats{1.0, 1.0, 0.6, 0.6};
    cases.add(K::Resize, {f32({1, 1, 2, 4})}, scaled);
    scaled = resize_attrs({1, 2, 6, 10}, mode, "half_pixel");
    scaled["scales"] = Floats{1.0, 1.0, 1.7, 2.5};
    cases.add(K::Resize, {f32({1, 2, 4, 4})}, scaled);
    // half_pixel_symmetric differs from half_pixel where floor(input * scale) cuts a fraction.
    scaled["coordinate_transformation_mode"] = std::string("half_pixel_symmetric");
    cases.add(K::Resize, {f32({1, 2, 4, 4})}, scaled);
    scaled["scales"] = Floats{1.0, 1.0, 0.6, 0.35};
    scaled["sizes"] = Ints{1, 2, 2, 1};
    cases.add(K::Resize, {f32({1, 2, 4, 4})}, scaled);
    // Crop and resize, with extrapolation outside the input.
    Attributes crop = resize_attrs({1, 2, 5, 4}, mode, "tf_crop_and_resize");
    crop["roi"] = Floats{0, 0, 0.4, -0.3, 1, 1, 1.2, 0.9};
    crop["extrapolation_value"] = 10.0;
    cases.add(K::Resize, {f32({1, 2, 4, 6})}, crop);
    crop["sizes"] = Ints{1, 2, 1, 4};
    cases.add(K::Resize, {f32({1, 2, 4, 6})}, crop);
    // Empty output, and a row run that crosses task chunks.
    cases.add(K::Resize, {f32({2, 0, 3})}, resize_attrs({4, 0, 5}, mode, "half_pixel"));
    cases.add(K::Resize, {f32({2, 3})}, resize_attrs({0, 5}, mode, "asymmetric"));
    cases.add(K::Resize, {f32({1, 1, 64, 65})}, resize_attrs({1, 1, 130, 131}, mode, "half_pixel"));
  }
  for (const char* nearest : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}) {
    for (const char* transform : {"half_pixel", "align_corners", "asymmetric"}) {
      Attributes a = resize_attrs({2, 8, 7}, "nearest", transform);
      a["nearest_mode"] = std::string(nearest);
      cases.add(K::Resize, {f32({2, 4, 6})}, a);
    }
  }
  // Cubic variants: the coefficient and exclude_outside (linear too), on three axes.
  for (const char* mode : {"linear", "cubic"}) {
    for (int64_t exclude : {0, 1}) {
      Attributes a = resize_attrs({2, 7, 3, 9}, mode, "half_pixel");
      a["exclude_outside"] = exclude;
      a["cubic_coeff_a"] = -0.5;
      cases.add(K::Resize, {f32({2, 4, 5, 6})}, a);
      a["coordinate_transformation_mode"] = std::string("asymmetric");
      cases.add(K::Resize, {f32({2, 4, 5, 6})}, a);
    }
    cases.add(K::Resize, {of(DType::F64, {2, 3, 5, 4})},
              resize_attrs({2, 3, 8, 3}, mode, "half_pixel"));
    Attributes crop = resize_attrs({3, 5}, mode, "tf_crop_and_resize");
    crop["roi"] = Floats{0.1, -0.2, 0.9, 1.1};
    cases.add(K::Resize, {of(DType::F64, {4, 6})}, crop);
  }
  // Scales that do not match sizes put sample points far outside the input: every tap reads
  // the edge, or with exclude_outside none is left (NaN).
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    for (int64_t exclude : {0, 1}) {
      Attributes a = resize_attrs({2, 9}, mode, "asymmetric");
      a["scales"] = Floats{1.0, 0.25};
      a["exclude_outside"] = exclude;
      cases.add(K::Resize, {f32({2, 4})}, a);
      a["coordinate_transformation_mode"] = std::string("half_pixel");
      a["scales"] = Floats{1.0, 3.5};
      cases.add(K::Resize, {f32({2, 4})}, a);
    }
  }
  // Antialias: the kernel stretched on the axes scaled down (by 0.6 and 0.3 here; 2 taps per
  // output become 4 and 8 for linear, 8 and 14 for cubic), the plain rule on the axis scaled up,
  // exclude_outside renormalizing the window at the edges; f64; scales that put the window far
  // outside the input.
  for (const char* mode : {"linear", "cubic"}) {
    for (int64_t exclude : {0, 1}) {
      for (const char* transform : {"half_pixel", "asymmetric", "align_corners"}) {
        Attributes a = resize_attrs({2, 6, 3, 13}, mode, transform);
        a["antialias"] = int64_t{1};
        a["exclude_outside"] = exclude;
        a["scales"] = Floats{1.0, 0.6, 0.3, 2.6};
        cases.add(K::Resize, {f32({2, 10, 11, 5})}, a);
      }
    }
    Attributes a = resize_attrs({3, 7}, mode, "half_pixel");
    a["antialias"] = int64_t{1};
    cases.add(K::Resize, {of(DType::F64, {5, 20})}, a);
    a = resize_attrs({2, 3}, mode, "asymmetric");
    a["antialias"] = int64_t{1};
    a["scales"] = Floats{1.0, 0.1};
    cases.add(K::Resize, {f32({2, 12})}, a);
  }
  // Nearest copies elements of every dtype.
  for (DType d : {DType::F64, DType::I32, DType::I64, DType::Bool}) {
    cases.add(K::Resize, {of(d, {2, 3, 4})}, resize_attrs({2, 5, 3}, "nearest", "half_pixel"));
    Attributes crop = resize_attrs({3, 5}, "nearest", "tf_crop_and_resize");
    crop["roi"] = Floats{0.1, -0.2, 0.9, 1.1};
    crop["extrapolation_value"] = 1.0;
    cases.add(K::Resize, {of(d, {4, 6})}, crop);
  }
  cases.add(K::Resize, {f32({})}, resize_attrs({}, "linear", "half_pixel"));
}

// Calls add(attrs) for every mode x padding_mode x align_corners.
template <class Add>
void each_grid_sample_variant(const Add& add) {
  for (const char* mode : {"bilinear", "nearest", "bicubic"}) {
    for (const char* padding : {"zeros", "border", "reflection"}) {
      for (int64_t align : {0, 1}) {
        add(Attributes{{"mode", std::string(mode)},
                       {"padding_mode", std::string(padding)},
                       {"align_corners", align}});
      }
    }
  }
}

// A grid of uniform points in [-reach, reach): reach > 1 puts some outside the input.
Tensor grid_points(DType dtype, const Shape& shape, double reach, uint64_t seed) {
  return random_tensor(dtype, shape, seed, -reach, reach);
}

void grid_sample_grid(CaseList& cases) {
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  constexpr float kInf = std::numeric_limits<float>::infinity();
  // Points multiples of 0.25 in [-1.5, 1.5]: on elements, halfway between them (nearest's
  // ties) and on the padding's turning points.
  Tensor on_grid(DType::F32, {1, 5, 5, 2});
  for (int64_t i = 0; i < on_grid.numel(); ++i) {
    on_grid.set_double(i, static_cast<double>((i * 7) % 13 - 6) * 0.25);
  }
  // NaN, infinities and huge values, each paired with an ordinary coordinate.
  const Tensor odd =
      Tensor::from<float>({1, 2, 4, 2}, {kNaN, 0.3F, 0.2F, kNaN, kInf, 0.1F, -kInf, 0.5F, 1e30F,
                                         -0.4F, -1e30F, 0.7F, 0.25F, kInf, 3.5F, -7.25F});
  each_grid_sample_variant([&](const Attributes& a) {
    // Points mostly inside, and a few just outside.
    cases.add(K::GridSample, {f32({2, 3, 5, 7}), f32({2, 4, 6, 2})}, a, 1,
              {std::nullopt, grid_points(DType::F32, {2, 4, 6, 2}, 1.3, 1)});
    // Points far outside: reflection folds them several times.
    cases.add(K::GridSample, {f32({1, 2, 4, 3}), f32({1, 5, 3, 2})}, a, 1,
              {std::nullopt, grid_points(DType::F32, {1, 5, 3, 2}, 3.5, 2)});
    cases.add(K::GridSample, {f32({1, 2, 4, 4}), f32({1, 5, 5, 2})}, a, 1, {std::nullopt, on_grid});
    // An axis of one element (align_corners puts every point on it).
    cases.add(K::GridSample, {f32({1, 2, 1, 5}), f32({1, 3, 4, 2})}, a, 1,
              {std::nullopt, grid_points(DType::F32, {1, 3, 4, 2}, 1.5, 3)});
    cases.add(K::GridSample, {f32({1, 2, 3, 4}), f32({1, 2, 4, 2})}, a, 1, {std::nullopt, odd});
    cases.add(K::GridSample, {of(DType::F64, {2, 2, 4, 5}), of(DType::F64, {2, 3, 4, 2})}, a, 1,
              {std::nullopt, grid_points(DType::F64, {2, 3, 4, 2}, 1.3, 4)});
  });
  // Volumes (X [N, C, D, H, W], grid [N, Do, Ho, Wo, 3]): trilinear and nearest in every
  // padding mode, points inside and beyond the volume, f64, an axis of one element, odd values.
  const Tensor odd_volume = Tensor::from<float>(
      {1, 2, 3, 1, 3}, {kNaN, 0.3F, 0.2F, 0.1F, kInf, 0.5F, 1e30F, -0.4F, 0.9F, 0.25F, 0.7F, -kInf,
                        3.5F, -7.25F, 0.0F, -0.5F, 1.0F, -1.0F});
  each_grid_sample_variant([&](const Attributes& a) {
    if (std::get<std::string>(a.at("mode")) == "bicubic") return;  // rank 4 only
    cases.add(K::GridSample, {f32({2, 3, 4, 5, 6}), f32({2, 3, 2, 4, 3})}, a, 1,
              {std::nullopt, grid_points(DType::F32, {2, 3, 2, 4, 3}, 1.3, 8)});
    cases.add(K::GridSample, {f32({1, 2, 3, 2, 4}), f32({1, 4, 3, 2, 3})}, a, 1,
              {std::nullopt, grid_points(DType::F32, {1, 4, 3, 2, 3}, 3.5, 9)});
    cases.add(K::GridSample, {f32({1, 2, 1, 3, 4}), f32({1, 2, 3, 2, 3})}, a, 1,
              {std::nullopt, grid_points(DType::F32, {1, 2, 3, 2, 3}, 1.5, 10)});
    cases.add(K::GridSample, {f32({1, 2, 3, 3, 3}), f32({1, 2, 3, 1, 3})}, a, 1,
              {std::nullopt, odd_volume});
    cases.add(K::GridSample, {of(DType::F64, {1, 2, 3, 4, 5}), of(DType::F64, {1, 2, 3, 4, 3})}, a,
              1, {std::nullopt, grid_points(DType::F64, {1, 2, 3, 4, 3}, 1.3, 11)});
  });
  for (const char* mode : {"bilinear", "nearest", "bicubic"}) {
    const Attributes a = {{"mode", std::string(mode)}};
    // Empty batch, channels, output rows and columns.
    cases.add(K::GridSample, {f32({0, 3, 4, 4}), f32({0, 2, 2, 2})}, a);
    cases.add(K::GridSample, {f32({2, 0, 4, 4}), f32({2, 3, 3, 2})}, a);
    cases.add(K::GridSample, {f32({1, 2, 4, 4}), f32({1, 0, 3, 2})}, a);
    cases.add(K::GridSample, {f32({1, 2, 4, 4}), f32({1, 3, 0, 2})}, a);
  }
  // Output rows over several tasks, in every mode.
  const Shape big_grid{2, 40, 50, 2};
  cases.add(K::GridSample, {f32({2, 3, 16, 16}), f32(big_grid)}, {{"mode", std::string("nearest")}},
            1, {std::nullopt, grid_points(DType::F32, big_grid, 1.2, 5)});
  cases.add(K::GridSample, {f32({2, 3, 16, 16}), f32(big_grid)},
            {{"mode", std::string("bilinear")}, {"padding_mode", std::string("border")}}, 1,
            {std::nullopt, grid_points(DType::F32, big_grid, 1.2, 6)});
  cases.add(K::GridSample, {f32({2, 3, 16, 16}), f32(big_grid)},
            {{"mode", std::string("bicubic")},
             {"padding_mode", std::string("reflection")},
             {"align_corners", int64_t{1}}},
            1, {std::nullopt, grid_points(DType::F32, big_grid, 1.2, 7)});
  const Shape big_volume_grid{2, 6, 20, 30, 3};
  cases.add(K::GridSample, {f32({2, 3, 8, 10, 12}), f32(big_volume_grid)},
            {{"mode", std::string("bilinear")}, {"padding_mode", std::string("reflection")}}, 1,
            {std::nullopt, grid_points(DType::F32, big_volume_grid, 1.2, 12)});
  cases.add(K::GridSample, {f32({1, 2, 3, 4, 4}), f32({1, 2, 0, 2, 3})},
            {{"mode", std::string("nearest")}});
}

}  // namespace

void resampling_cases(CaseList& cases) {
  resize_grid(cases);
  grid_sample_grid(cases);
}

}  // namespace volta::conformance::cases
