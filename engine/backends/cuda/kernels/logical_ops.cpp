// The logical family on the CUDA backend, the CPU's dtypes: Equal (every dtype), Less Greater
// LessOrEqual GreaterOrEqual (f32 f64 i32 i64) with numpy broadcasting, And Or Xor Not (bool),
// IsNaN IsInf (f32 f64). Selection, launch and claims; the device code is kernels/logical.cu.

#include <optional>
#include <string>

#include "../broadcast_geometry.h"
#include "../cuda_kernel.h"
#include "launch.h"

namespace volta::cuda {
namespace {

inline constexpr DTypeSet kNumeric{DType::F32, DType::F64, DType::I64, DType::I32};
inline constexpr DTypeSet kFloat{DType::F32, DType::F64};
inline constexpr DTypeSet kBool{DType::Bool};

BroadcastGeometry geometry_of(const CudaKernelArgs& args) {
  const std::optional<BroadcastGeometry> g = broadcast_geometry(
      merge_broadcast(args.outputs[0].shape, args.inputs[0].shape, args.inputs[1].shape));
  if (!g) {
    fail(ErrorCode::KernelFailure, "the broadcast has more merged dims than its selection allowed");
  }
  return *g;
}

template <CompareOp kOp>
void run_compare(const CudaKernelArgs& args) {
  const TensorView& y = args.outputs[0];
  if (y.numel() == 0) return;
  check_launch(
      launch_compare(kOp, element_type(args.inputs[0].dtype), geometry_of(args),
                     args.inputs[0].data, args.inputs[1].data, y.as<uint8_t>(), args.stream),
      args.node);
}

template <BoolOp kOp>
void run_bool(const CudaKernelArgs& args) {
  const TensorView& y = args.outputs[0];
  if (y.numel() == 0) return;
  check_launch(launch_bool_binary(kOp, geometry_of(args), args.inputs[0].as<uint8_t>(),
                                  args.inputs[1].as<uint8_t>(), y.as<uint8_t>(), args.stream),
               args.node);
}

void run_not(const CudaKernelArgs& args) {
  const TensorView& y = args.outputs[0];
  if (y.numel() == 0) return;
  check_launch(launch_not(args.inputs[0].as<uint8_t>(), y.as<uint8_t>(), y.numel(), args.stream),
               args.node);
}

template <bool kIsNaN>
void run_classify(const CudaKernelArgs& args) {
  const TensorView& y = args.outputs[0];
  if (y.numel() == 0) return;
  ClassifyParams params{kIsNaN, false, false};
  if constexpr (!kIsNaN) {
    const AttrReader attrs(args.node);
    params.detect_positive = attrs.get_int("detect_positive") != 0;
    params.detect_negative = attrs.get_int("detect_negative") != 0;
  }
  check_launch(launch_classify(params, element_type(args.inputs[0].dtype), args.inputs[0].data,
                               y.as<uint8_t>(), y.numel(), args.stream),
               args.node);
}

// One kernel per dtype, named as the CPU names its: "<dtype>_<op>_cuda".
struct DTypeKernels {
  std::array<std::string, kDTypeCount> names;
  std::array<CudaKernel, kDTypeCount> kernels;
};
DTypeKernels per_dtype(CudaKernelFn fn, std::string_view op) {
  DTypeKernels k;
  for (size_t d = 0; d < k.kernels.size(); ++d) {
    k.names[d] = std::string(dtype_name(static_cast<DType>(d))) + "_" + std::string(op) + "_cuda";
    k.kernels[d] = CudaKernel{fn, k.names[d]};
  }
  return k;
}

// A broadcasting binary op's refusal when its merged dims exceed the kernels' geometry.
std::optional<KernelUnsupported> refuse_broadcast(const CudaKernelQuery& query) {
  const MergedBroadcast merged =
      merge_broadcast(query.outputs[0].shape, query.inputs[0]->shape, query.inputs[1]->shape);
  if (broadcast_geometry(merged)) return std::nullopt;
  return KernelUnsupported{std::string(op_name(query.node.op)) + " of " +
                           query.inputs[0]->shape.str() + " and " + query.inputs[1]->shape.str() +
                           " broadcasts over " + std::to_string(merged.dims.size()) +
                           " dims that cannot be merged; the CUDA kernels take at most " +
                           std::to_string(kMaxBroadcastDims)};
}

template <CudaKernelFn kFn, const char* kName, bool kBroadcasts>
KernelSelection select_logical(const CudaKernelQuery& query, DTypeSet dtypes) {
  static const DTypeKernels kKernels = per_dtype(kFn, kName);
  if (std::optional<KernelUnsupported> refused = refuse_dtype(query, dtypes)) return *refused;
  if constexpr (kBroadcasts) {
    if (std::optional<KernelUnsupported> refused = refuse_broadcast(query)) return *refused;
  }
  return choice_of(kKernels.kernels[static_cast<size_t>(query.inputs[0]->dtype)]);
}

constexpr char kEqual[] = "equal";
constexpr char kLess[] = "less";
constexpr char kGreater[] = "greater";
constexpr char kLessOrEqual[] = "less_or_equal";
constexpr char kGreaterOrEqual[] = "greater_or_equal";
constexpr char kAnd[] = "and";
constexpr char kOr[] = "or";
constexpr char kXor[] = "xor";
constexpr char kNot[] = "not";
constexpr char kIsNaN[] = "isnan";
constexpr char kIsInf[] = "isinf";

template <CudaKernelFn kFn, const char* kName, bool kBroadcasts, const DTypeSet* kDTypes>
KernelSelection select(const CudaKernelQuery& query) {
  return select_logical<kFn, kName, kBroadcasts>(query, *kDTypes);
}

using E = CrossBackendExactness;
constexpr std::string_view kCompares = "the same IEEE or integer comparison on both: 0 or 1";
constexpr std::string_view kBools = "the same boolean of nonzero bytes on both: 0 or 1";
const CudaOpKernels kOps[] = {
    {{OpKind::Equal, kCoreTypes, E::Bitwise, kCompares},
     select<run_compare<CompareOp::Equal>, kEqual, true, &kCoreTypes>},
    {{OpKind::Less, kNumeric, E::Bitwise, kCompares},
     select<run_compare<CompareOp::Less>, kLess, true, &kNumeric>},
    {{OpKind::Greater, kNumeric, E::Bitwise, kCompares},
     select<run_compare<CompareOp::Greater>, kGreater, true, &kNumeric>},
    {{OpKind::Not, kBool, E::Bitwise, kBools}, select<run_not, kNot, false, &kBool>},
    {{OpKind::And, kBool, E::Bitwise, kBools}, select<run_bool<BoolOp::And>, kAnd, true, &kBool>},
    {{OpKind::Or, kBool, E::Bitwise, kBools}, select<run_bool<BoolOp::Or>, kOr, true, &kBool>},
    {{OpKind::IsNaN, kFloat, E::Bitwise, "x != x on both: 0 or 1"},
     select<run_classify<true>, kIsNaN, false, &kFloat>},
    {{OpKind::IsInf, kFloat, E::Bitwise, "equality with each detected infinity on both: 0 or 1"},
     select<run_classify<false>, kIsInf, false, &kFloat>},
    {{OpKind::Xor, kBool, E::Bitwise, kBools}, select<run_bool<BoolOp::Xor>, kXor, true, &kBool>},
    {{OpKind::LessOrEqual, kNumeric, E::Bitwise, kCompares},
     select<run_compare<CompareOp::LessOrEqual>, kLessOrEqual, true, &kNumeric>},
    {{OpKind::GreaterOrEqual, kNumeric, E::Bitwise, kCompares},
     select<run_compare<CompareOp::GreaterOrEqual>, kGreaterOrEqual, true, &kNumeric>},
};

}  // namespace

std::span<const CudaOpKernels> logical_op_kernels() { return kOps; }

}  // namespace volta::cuda
