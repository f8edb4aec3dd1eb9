// Cast, Where and Clip on the CUDA backend (elementwise family). Selection, launch and each op's
// claim against the CPU backend; the device code is kernels/conversion.cu.

#include <array>
#include <cmath>
#include <iomanip>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "../cuda_kernel.h"
#include "launch.h"

namespace volta::cuda {
namespace {

inline constexpr DTypeSet kNumeric{DType::F32, DType::F64, DType::I64, DType::I32};

// ---- Cast ----

// A value as the CPU's Cast error writes it: integral values in full, others to the digits
// that identify them.
template <class T>
std::string format_value(T value) {
  std::ostringstream out;
  if (std::isfinite(value) && value == std::trunc(value) && std::abs(value) < T{1e21}) {
    out << std::fixed << std::setprecision(0);
  } else {
    out << std::setprecision(std::numeric_limits<T>::max_digits10);
  }
  out << value;
  return out.str();
}

template <class From>
std::string formatted_element(const void* device, int64_t i, const CudaKernelArgs& args) {
  From value{};
  copy_to_host_now(&value, static_cast<const From*>(device) + i, sizeof value, args);
  return format_value(value);
}

// The CPU's check of a float to integer cast, in its words: the first element (in order) that
// is NaN, infinite or truncates out of range fails the run before anything is written.
void check_convertible(const CudaKernelArgs& args) {
  const ConstTensorView& x = args.inputs[0];
  const DType to = args.outputs[0].dtype;
  const std::optional<int64_t> bad = first_flagged(args, [&](unsigned long long* word) {
    return launch_find_unconvertible(element_type(x.dtype), element_type(to), x.data, x.numel(),
                                     word, args.stream);
  });
  if (!bad) return;
  const std::string value = x.dtype == DType::F32 ? formatted_element<float>(x.data, *bad, args)
                                                  : formatted_element<double>(x.data, *bad, args);
  const bool to_i32 = to == DType::I32;
  const std::string lowest = to_i32 ? std::to_string(std::numeric_limits<int32_t>::lowest())
                                    : std::to_string(std::numeric_limits<int64_t>::lowest());
  const std::string max = to_i32 ? std::to_string(std::numeric_limits<int32_t>::max())
                                 : std::to_string(std::numeric_limits<int64_t>::max());
  fail(ErrorCode::KernelFailure, "Cast: value " + value + " at element " + std::to_string(*bad) +
                                     " cannot be converted to " + std::string(dtype_name(to)) +
                                     ": it must be finite and truncate toward zero into [" +
                                     lowest + ", " + max + "]");
}

void run_cast(const CudaKernelArgs& args) {
  const TensorView& y = args.outputs[0];
  if (y.numel() == 0) return;
  const ConstTensorView& x = args.inputs[0];
  if (is_floating(x.dtype) && is_integer(y.dtype)) check_convertible(args);
  check_launch(launch_cast(element_type(x.dtype), element_type(y.dtype), x.data, y.data, y.numel(),
                           args.stream),
               args.node);
}

// One kernel per (from, to) pair, named as the CPU names its: "f32_cast_f64_cuda".
struct CastKernels {
  std::array<std::array<std::string, kDTypeCount>, kDTypeCount> names;
  std::array<std::array<CudaKernel, kDTypeCount>, kDTypeCount> kernels;
};
const CastKernels& cast_kernels() {
  static const CastKernels kKernels = [] {
    CastKernels k;
    for (int from = 0; from < kDTypeCount; ++from) {
      for (int to = 0; to < kDTypeCount; ++to) {
        const auto f = static_cast<size_t>(from);
        const auto t = static_cast<size_t>(to);
        k.names[f][t] = std::string(dtype_name(static_cast<DType>(from))) + "_cast_" +
                        std::string(dtype_name(static_cast<DType>(to))) + "_cuda";
        k.kernels[f][t] =
            CudaKernel{run_cast, k.names[f][t],
                       is_floating(static_cast<DType>(from)) && is_integer(static_cast<DType>(to))};
      }
    }
    return k;
  }();
  return kKernels;
}

// Float to integer casts check their values first, in a word of workspace.
KernelSelection select_cast(const CudaKernelQuery& query) {
  const DType from = query.inputs[0]->dtype;
  const DType to = query.outputs[0].dtype;
  if (!kCoreTypes.contains(from) || !kCoreTypes.contains(to)) {
    return KernelUnsupported{"no CUDA kernel for Cast from " + std::string(dtype_name(from)) +
                             " to " + std::string(dtype_name(to)) + " (CUDA casts between " +
                             kCoreTypes.str() + ")"};
  }
  KernelChoice choice =
      choice_of(cast_kernels().kernels[static_cast<size_t>(from)][static_cast<size_t>(to)]);
  if (is_floating(from) && is_integer(to)) choice.workspace_bytes = kCheckWorkspaceBytes;
  return choice;
}

// ---- Where ----

// The output's dims with size-1 dims dropped and adjacent dims merged where every operand
// steps through both as through one; nullopt past kMaxBroadcastDims merged dims.
std::optional<TernaryGeometry> where_geometry(const Shape& out,
                                              const std::array<Shape, kWhereOperands>& in) {
  std::array<std::vector<int64_t>, kWhereOperands> full;
  for (size_t k = 0; k < full.size(); ++k) full[k] = broadcast_strides(in[k], out);
  std::vector<int64_t> dims;
  std::array<std::vector<int64_t>, kWhereOperands> strides;
  for (int d = 0; d < out.rank(); ++d) {
    if (out[d] == 1) continue;
    const auto axis = static_cast<size_t>(d);
    bool merges = !dims.empty();
    for (size_t k = 0; k < full.size() && merges; ++k) {
      merges = strides[k].back() == full[k][axis] * out[d];
    }
    if (merges) {
      dims.back() *= out[d];
      for (size_t k = 0; k < full.size(); ++k) strides[k].back() = full[k][axis];
    } else {
      dims.push_back(out[d]);
      for (size_t k = 0; k < full.size(); ++k) strides[k].push_back(full[k][axis]);
    }
  }
  if (dims.empty()) {  // one element
    dims = {1};
    for (std::vector<int64_t>& s : strides) s = {1};
  }
  if (dims.size() > static_cast<size_t>(kMaxBroadcastDims)) return std::nullopt;
  TernaryGeometry g;
  g.rank = static_cast<int>(dims.size());
  g.numel = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    g.dims[d] = dims[d];
    g.numel *= dims[d];
    for (size_t k = 0; k < strides.size(); ++k) g.strides[k][d] = strides[k][d];
  }
  return g;
}

void run_where(const CudaKernelArgs& args) {
  const TensorView& out = args.outputs[0];
  if (out.numel() == 0) return;
  const std::optional<TernaryGeometry> g =
      where_geometry(out.shape, {args.inputs[0].shape, args.inputs[1].shape, args.inputs[2].shape});
  if (!g)
    fail(ErrorCode::KernelFailure, "the broadcast has more merged dims than its selection allowed");
  check_launch(launch_where(static_cast<int>(dtype_size(out.dtype)), *g,
                            static_cast<const uint8_t*>(args.inputs[0].data), args.inputs[1].data,
                            args.inputs[2].data, out.data, args.stream),
               args.node);
}

// Kernels by element size: Where copies the chosen element's bytes.
constexpr CudaKernel kWhere[] = {
    {run_where, "x8_where_cuda"}, {run_where, "x32_where_cuda"}, {run_where, "x64_where_cuda"}};

KernelSelection select_where(const CudaKernelQuery& query) {
  const Shape& out = query.outputs[0].shape;
  if (!where_geometry(out,
                      {query.inputs[0]->shape, query.inputs[1]->shape, query.inputs[2]->shape})) {
    return KernelUnsupported{"Where of " + query.inputs[0]->shape.str() + ", " +
                             query.inputs[1]->shape.str() + " and " + query.inputs[2]->shape.str() +
                             " broadcasts over dims that cannot be merged into " +
                             std::to_string(kMaxBroadcastDims) + " (the CUDA kernels' limit)"};
  }
  const size_t bytes = dtype_size(query.inputs[1]->dtype);
  return choice_of(kWhere[bytes == 1 ? 0 : (bytes == 4 ? 1 : 2)]);
}

// ---- Clip ----

// The CPU's bound check, word for word: a NaN bound fails the run.
double clip_bound(const Node& node, std::string_view name) {
  const double bound = AttrReader(node).get_float(name);
  if (std::isnan(bound)) {
    fail(ErrorCode::KernelFailure,
         "Clip: " + std::string(name) + " is NaN; a bound must be a number (-inf / inf for none)");
  }
  return bound;
}

// The CPU's bounds for an integer type: the tightest integer bounds (min rounded up, max
// rounded down), saturated to the type's range.
template <class T>
int64_t integer_bound(double bound, bool lower) {
  constexpr double kLowest = static_cast<double>(std::numeric_limits<T>::lowest());
  if (bound <= kLowest) return std::numeric_limits<T>::lowest();
  if (bound >= -kLowest) return std::numeric_limits<T>::max();
  return static_cast<int64_t>(static_cast<T>(lower ? std::ceil(bound) : std::floor(bound)));
}

void run_clip(const CudaKernelArgs& args) {
  const double min = clip_bound(args.node, "min");
  const double max = clip_bound(args.node, "max");
  const TensorView& y = args.outputs[0];
  if (y.numel() == 0) return;
  const void* x = args.inputs[0].data;
  cudaError_t status = cudaSuccess;
  if (y.dtype == DType::F32) {
    status = launch_f32_clip(static_cast<float>(min), static_cast<float>(max),
                             args.inputs[0].as<float>(), y.as<float>(), y.numel(), args.stream);
  } else {
    ClipBounds bounds;
    bounds.f64[0] = min;
    bounds.f64[1] = max;
    if (y.dtype == DType::I32) {
      bounds.integer[0] = integer_bound<int32_t>(min, true);
      bounds.integer[1] = integer_bound<int32_t>(max, false);
    } else if (y.dtype == DType::I64) {
      bounds.integer[0] = integer_bound<int64_t>(min, true);
      bounds.integer[1] = integer_bound<int64_t>(max, false);
    }
    status = launch_typed_clip(element_type(y.dtype), bounds, x, y.data, y.numel(), args.stream);
  }
  check_launch(status, args.node);
}

// By dtype, in DType order: f32 f64 i64 i32.
constexpr CudaKernel kClip[] = {{run_clip, "f32_clip_cuda"},
                                {run_clip, "f64_clip_cuda"},
                                {run_clip, "i64_clip_cuda"},
                                {run_clip, "i32_clip_cuda"}};

KernelSelection select_clip(const CudaKernelQuery& query) {
  if (std::optional<KernelUnsupported> refused = refuse_dtype(query, kNumeric)) return *refused;
  return choice_of(kClip[static_cast<size_t>(query.inputs[0]->dtype)]);
}

using E = CrossBackendExactness;
const CudaOpKernels kOps[] = {
    {{OpKind::Where, kCoreTypes, E::Bitwise,
      "the chosen element's bytes, copied; any nonzero condition byte is true on both"},
     select_where},
    {{OpKind::Cast, kCoreTypes, E::BitwiseExceptNanPayload,
      "the C++ conversion: rounded to nearest (int to float, f64 to f32), truncated (float to "
      "int, whose NaN, infinite or out-of-range values fail the run as on the CPU) or wrapped "
      "(int to int); x != 0 to bool, 0 or 1 from bool"},
     select_cast},
    {{OpKind::Clip, kNumeric, E::Bitwise,
      "min(max(x, lower), upper) by selects, the bounds converted to the element type as on "
      "the CPU (floats rounded, integers tightened and saturated)"},
     select_clip},
};

}  // namespace

ElementType element_type(DType dtype) {
  switch (dtype) {
    case DType::F32:
      return ElementType::F32;
    case DType::F64:
      return ElementType::F64;
    case DType::I32:
      return ElementType::I32;
    case DType::I64:
      return ElementType::I64;
    case DType::Bool:
      return ElementType::Bool;
    case DType::F16:
    case DType::BF16:
    case DType::I8:
    case DType::U8:
    case DType::I16:
    case DType::U16:
    case DType::U32:
    case DType::U64:
      break;  // kCoreTypes bounds every CUDA kernel's types, so no kernel gets here
  }
  fail(ErrorCode::MissingKernel, "no CUDA element type for " + std::string(dtype_name(dtype)) +
                                     " (the CUDA kernels cover " + kCoreTypes.str() + ")");
}

std::span<const CudaOpKernels> conversion_op_kernels() { return kOps; }

}  // namespace volta::cuda
