// The resampling family on the CUDA backend: Resize (nearest for every dtype, linear and cubic
// for f32 and f64; every coordinate transformation and nearest mode, exclude_outside,
// extrapolation; antialias where it stretches no axis) and GridSample (f32, f64; X of rank 4;
// nearest, bilinear, bicubic; zeros, border, reflection padding; align_corners). Selection,
// launch and claims; the device code is kernels/resampling.cu.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "../cuda_kernel.h"
#include "launch.h"
#include "resampling_launch.h"

namespace volta::cuda {
namespace {

inline constexpr DTypeSet kFloats{DType::F32, DType::F64};

// ---- Resize ----

struct ResizeNames {
  const char* name;
  ResizeMode mode;
};
constexpr ResizeNames kResizeModes[] = {
    {"nearest", ResizeMode::Nearest}, {"linear", ResizeMode::Linear}, {"cubic", ResizeMode::Cubic}};
struct TransformNames {
  const char* name;
  ResizeTransform transform;
};
constexpr TransformNames kTransforms[] = {
    {"half_pixel", ResizeTransform::HalfPixel},
    {"half_pixel_symmetric", ResizeTransform::HalfPixelSymmetric},
    {"pytorch_half_pixel", ResizeTransform::PytorchHalfPixel},
    {"align_corners", ResizeTransform::AlignCorners},
    {"asymmetric", ResizeTransform::Asymmetric},
    {"tf_half_pixel_for_nearest", ResizeTransform::TfHalfPixelForNearest},
    {"tf_crop_and_resize", ResizeTransform::TfCropAndResize}};
struct NearestNames {
  const char* name;
  NearestMode mode;
};
constexpr NearestNames kNearestModes[] = {{"round_prefer_floor", NearestMode::RoundPreferFloor},
                                          {"round_prefer_ceil", NearestMode::RoundPreferCeil},
                                          {"floor", NearestMode::Floor},
                                          {"ceil", NearestMode::Ceil}};

// The table entry named `name`, or null.
template <class Entry, size_t N>
const Entry* find_named(const Entry (&table)[N], const std::string& name) {
  for (const Entry& e : table) {
    if (name == e.name) return &e;
  }
  return nullptr;
}

template <class Entry, size_t N>
std::string names_of(const Entry (&table)[N]) {
  std::string out;
  for (const Entry& e : table) out += (out.empty() ? "\"" : ", \"") + std::string(e.name) + "\"";
  return out;
}

// Whether antialias stretches the kernel of some axis (linear or cubic, scale < 1).
bool stretches(const AttrReader& attrs, const Shape& in) {
  if (attrs.get_int("antialias") == 0 || attrs.get_string("mode") == "nearest") return false;
  const std::vector<double>& scales = attrs.get_floats("scales");
  const std::vector<int64_t>& sizes = attrs.get_ints("sizes");
  for (int a = 0; a < in.rank(); ++a) {
    const auto u = static_cast<size_t>(a);
    const double scale =
        scales.empty() ? static_cast<double>(sizes[u]) / static_cast<double>(in[a]) : scales[u];
    if (scale < 1.0) return true;
  }
  return false;
}

// Why a Resize node has no kernel (an attribute value or rank it does not take), or empty.
std::string resize_refusal(const AttrReader& attrs, const Shape& in) {
  const int rank = in.rank();
  const std::pair<const char*, bool> checks[] = {
      {"mode", find_named(kResizeModes, attrs.get_string("mode")) != nullptr},
      {"coordinate_transformation_mode",
       find_named(kTransforms, attrs.get_string("coordinate_transformation_mode")) != nullptr},
      {"nearest_mode", find_named(kNearestModes, attrs.get_string("nearest_mode")) != nullptr}};
  const std::string supported[] = {names_of(kResizeModes), names_of(kTransforms),
                                   names_of(kNearestModes)};
  for (size_t i = 0; i < std::size(checks); ++i) {
    if (!checks[i].second) {
      return "Resize " + std::string(checks[i].first) + " \"" + attrs.get_string(checks[i].first) +
             "\" has no CUDA kernel (supported: " + supported[i] + ")";
    }
  }
  if (stretches(attrs, in)) {
    return "Resize antialias 1 on an axis scaled down (the stretched " + attrs.get_string("mode") +
           " kernel) has no CUDA kernel (supported: antialias 0, nearest, or no axis scaled "
           "down)";
  }
  if (rank > kMaxResizeRank) {
    return "Resize of rank " + std::to_string(rank) + " has no CUDA kernel (at most " +
           std::to_string(kMaxResizeRank) + " axes)";
  }
  return {};
}

// The output element of an extrapolated point as the CPU's extrapolation_of converts it (the
// op table only lets tf_crop_and_resize give a value the dtype holds exactly).
uint64_t extrapolated_bits(DType dtype, double value) {
  uint64_t bits = 0;
  visit_dtype(dtype, [&]<class T>(TypeTag<T>) {
    const T v = static_cast<T>(value);  // bool: value != 0
    std::memcpy(&bits, &v, sizeof v);
  });
  return bits;
}

}  // namespace

ResizeLaunch resize_launch(const Node& node, const Shape& in, const Shape& out, DType dtype) {
  const AttrReader attrs(node);
  ResizeLaunch r;
  r.rank = in.rank();
  r.numel = out.numel();
  r.mode = find_named(kResizeModes, attrs.get_string("mode"))->mode;
  r.transform =
      find_named(kTransforms, attrs.get_string("coordinate_transformation_mode"))->transform;
  r.nearest = find_named(kNearestModes, attrs.get_string("nearest_mode"))->mode;
  r.cubic_a = attrs.get_float("cubic_coeff_a");
  r.exclude_outside = attrs.get_int("exclude_outside") != 0;
  const std::vector<double>& scales = attrs.get_floats("scales");
  const std::vector<double>& roi = attrs.get_floats("roi");
  const std::vector<int64_t> strides = in.strides();
  for (int a = 0; a < r.rank; ++a) {
    const auto u = static_cast<size_t>(a);
    r.in_dims[a] = in[a];
    r.out_dims[a] = out[a];
    r.in_strides[a] = strides[u];
    r.scales[a] =
        scales.empty() ? static_cast<double>(out[a]) / static_cast<double>(in[a]) : scales[u];
    if (roi.size() == 2 * static_cast<size_t>(r.rank)) {
      r.roi_start[a] = roi[u];
      r.roi_end[a] = roi[u + static_cast<size_t>(r.rank)];
    }
  }
  if (r.transform == ResizeTransform::TfCropAndResize) {
    r.extrapolated_bits = extrapolated_bits(dtype, attrs.get_float("extrapolation_value"));
  }
  return r;
}

namespace {

void resize(const CudaKernelArgs& args) {
  const ConstTensorView& in = args.inputs[0];
  const TensorView& out = args.outputs[0];
  if (out.numel() == 0) return;
  if (out.shape.rank() == 0) {  // one element, copied as the CPU copies it
    check_launch(cudaMemcpyAsync(out.data, in.data, dtype_size(out.dtype), cudaMemcpyDeviceToDevice,
                                 args.stream),
                 args.node);
    return;
  }
  const ResizeLaunch r = resize_launch(args.node, in.shape, out.shape, out.dtype);
  check_launch(launch_resize(element_type(out.dtype), r, in.data, out.data, args.stream),
               args.node);
}

// By mode, then dtype (f32, f64, i64, i32, bool).
constexpr CudaKernel kResize[3][5] = {{{resize, "f32_resize_nearest_cuda"},
                                       {resize, "f64_resize_nearest_cuda"},
                                       {resize, "i64_resize_nearest_cuda"},
                                       {resize, "i32_resize_nearest_cuda"},
                                       {resize, "bool_resize_nearest_cuda"}},
                                      {{resize, "f32_resize_linear_cuda"},
                                       {resize, "f64_resize_linear_cuda"},
                                       {resize, "i64_resize_linear_cuda"},
                                       {resize, "i32_resize_linear_cuda"},
                                       {resize, "bool_resize_linear_cuda"}},
                                      {{resize, "f32_resize_cubic_cuda"},
                                       {resize, "f64_resize_cubic_cuda"},
                                       {resize, "i64_resize_cubic_cuda"},
                                       {resize, "i32_resize_cubic_cuda"},
                                       {resize, "bool_resize_cubic_cuda"}}};

size_t dtype_slot(DType dtype) {
  switch (dtype) {
    case DType::F32:
      return 0;
    case DType::F64:
      return 1;
    case DType::I64:
      return 2;
    case DType::I32:
      return 3;
    case DType::Bool:
      return 4;
    case DType::F16:
    case DType::BF16:
    case DType::I8:
    case DType::U8:
    case DType::I16:
    case DType::U16:
    case DType::U32:
    case DType::U64:
      break;  // not in Resize's CUDA types (kCoreTypes)
  }
  fail(ErrorCode::MissingKernel,
       "no CUDA Resize kernel slot for " + std::string(dtype_name(dtype)));
}

KernelSelection select_resize(const CudaKernelQuery& query) {
  const AttrReader attrs(query.node);
  const Shape& in = query.inputs[0]->shape;
  if (std::string why = resize_refusal(attrs, in); !why.empty()) {
    return KernelUnsupported{why};
  }
  const ResizeMode mode = find_named(kResizeModes, attrs.get_string("mode"))->mode;
  if (mode != ResizeMode::Nearest) {
    if (auto refused = refuse_dtype(query, kFloats)) return *refused;
  }
  return choice_of(kResize[static_cast<size_t>(mode)][dtype_slot(query.inputs[0]->dtype)]);
}

// ---- GridSample ----

struct GridModeNames {
  const char* name;
  GridSampleMode mode;
};
constexpr GridModeNames kGridModes[] = {{"nearest", GridSampleMode::Nearest},
                                        {"bilinear", GridSampleMode::Bilinear},
                                        {"bicubic", GridSampleMode::Bicubic}};
struct PaddingNames {
  const char* name;
  GridPadding padding;
};
constexpr PaddingNames kPaddings[] = {{"zeros", GridPadding::Zeros},
                                      {"border", GridPadding::Border},
                                      {"reflection", GridPadding::Reflection}};

}  // namespace

GridSampleLaunch grid_sample_launch(const Node& node, const Shape& in, const Shape& out) {
  const AttrReader attrs(node);
  GridSampleLaunch g;
  g.batch = in[0];
  g.channels = in[1];
  g.h = in[2];
  g.w = in[3];
  g.out_h = out[2];
  g.out_w = out[3];
  g.mode = find_named(kGridModes, attrs.get_string("mode"))->mode;
  g.padding = find_named(kPaddings, attrs.get_string("padding_mode"))->padding;
  g.align_corners = attrs.get_int("align_corners") != 0;
  return g;
}

namespace {

void grid_sample(const CudaKernelArgs& args) {
  const TensorView& out = args.outputs[0];
  if (out.numel() == 0) return;
  const GridSampleLaunch g = grid_sample_launch(args.node, args.inputs[0].shape, out.shape);
  check_launch(launch_grid_sample(element_type(out.dtype), g, args.inputs[0].data,
                                  args.inputs[1].data, out.data, args.stream),
               args.node);
}

// By mode, then dtype (f32, f64).
constexpr CudaKernel kGridSample[3][2] = {
    {{grid_sample, "f32_grid_sample_nearest_cuda"}, {grid_sample, "f64_grid_sample_nearest_cuda"}},
    {{grid_sample, "f32_grid_sample_bilinear_cuda"},
     {grid_sample, "f64_grid_sample_bilinear_cuda"}},
    {{grid_sample, "f32_grid_sample_bicubic_cuda"}, {grid_sample, "f64_grid_sample_bicubic_cuda"}}};

KernelSelection select_grid_sample(const CudaKernelQuery& query) {
  if (auto refused = refuse_dtype(query, kFloats)) return *refused;
  if (const int rank = query.inputs[0]->shape.rank(); rank != 4) {
    return KernelUnsupported{"GridSample of X of rank " + std::to_string(rank) + " (" +
                             std::to_string(rank - 2) +
                             " spatial axes) has no CUDA kernel (supported: rank 4)"};
  }
  const AttrReader attrs(query.node);
  const GridModeNames* mode = find_named(kGridModes, attrs.get_string("mode"));
  if (mode == nullptr) {
    return KernelUnsupported{"GridSample mode \"" + attrs.get_string("mode") +
                             "\" has no CUDA kernel (supported: " + names_of(kGridModes) + ")"};
  }
  if (find_named(kPaddings, attrs.get_string("padding_mode")) == nullptr) {
    return KernelUnsupported{"GridSample padding_mode \"" + attrs.get_string("padding_mode") +
                             "\" has no CUDA kernel (supported: " + names_of(kPaddings) + ")"};
  }
  return choice_of(
      kGridSample[static_cast<size_t>(mode->mode)][query.inputs[0]->dtype == DType::F32 ? 0 : 1]);
}

using E = CrossBackendExactness;
const CudaOpKernels kOps[] = {
    {{OpKind::Resize, kCoreTypes, E::BitwiseExceptNanPayload,
      "the CPU's taps found in double by the same IEEE operations, weights rounded once, sums "
      "in the element type in the CPU's order (no FMA); nearest copies element bytes"},
     select_resize},
    {{OpKind::GridSample, kFloats, E::BitwiseExceptNanPayload,
      "the CPU's taps found in double by the same IEEE operations (fmod, nearbyint exact on "
      "both), weights rounded once, sums in the element type in the CPU's order (no FMA)"},
     select_grid_sample},
};

}  // namespace

std::span<const CudaOpKernels> resampling_op_kernels() { return kOps; }

}  // namespace volta::cuda
