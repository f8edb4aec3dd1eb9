// The elementwise family on the CUDA backend: Add Sub Mul Div Mod and the variadic Min Max with
// numpy broadcasting, Neg Abs Sign (f32 f64 i32 i64), Sqrt Reciprocal Floor Ceil Round Exp Log
// (f32 f64). Selection, launch and each op's claim against the CPU backend; the device code is
// kernels/elementwise.cu (f32) and elementwise_typed.cu (f64, i32, i64). Cast, Where and Clip
// are in kernels/conversion_ops.cpp; Pow and the trigonometric functions in
// elementwise_math_ops.cpp.

#include <array>
#include <optional>
#include <string>

#include "../broadcast_geometry.h"
#include "../cuda_kernel.h"
#include "launch.h"

namespace volta::cuda {
namespace {

// Where the CPU's f64 kernel calls libm: the f64 kernel matches within the tolerance table.
inline constexpr DTypeSet kLibmF64{DType::F64};
inline constexpr DTypeSet kFloat{DType::F32, DType::F64};
inline constexpr DTypeSet kNumeric{DType::F32, DType::F64, DType::I64, DType::I32};

BroadcastGeometry checked_geometry(const Shape& out, const Shape& a, const Shape& b) {
  const std::optional<BroadcastGeometry> geometry = broadcast_geometry(merge_broadcast(out, a, b));
  if (!geometry) {
    fail(ErrorCode::KernelFailure, "the broadcast has more merged dims than its selection allowed");
  }
  return *geometry;
}

cudaError_t launch_binary_any(BinaryOp op, DType dtype, const BroadcastGeometry& g, const void* a,
                              const void* b, void* y, cudaStream_t stream) {
  if (dtype == DType::F32) {
    return launch_f32_binary(op, g, static_cast<const float*>(a), static_cast<const float*>(b),
                             static_cast<float*>(y), stream);
  }
  return launch_typed_binary(op, element_type(dtype), g, a, b, y, stream);
}

// Integer Div, Mod and Fmod divide: their divisors are checked first.
constexpr bool divides(BinaryOp op) {
  return op == BinaryOp::Div || op == BinaryOp::Mod || op == BinaryOp::Fmod;
}

// The CPU's check of integer divisors, in its words: the first output element whose divisor is
// 0 fails the run before anything is divided.
void check_divisors(const CudaKernelArgs& args, const BroadcastGeometry& g) {
  const std::optional<int64_t> zero = first_flagged(args, [&](unsigned long long* word) {
    return launch_find_zero_divisor(element_type(args.inputs[1].dtype), g, args.inputs[1].data,
                                    word, args.stream);
  });
  if (!zero) return;
  fail(ErrorCode::KernelFailure,
       std::string(op_name(args.node.op)) +
           ": integer division by zero: divisor B is 0 at output element " + std::to_string(*zero) +
           " (integer divisors must be nonzero)");
}

template <BinaryOp kOp>
void run_binary(const CudaKernelArgs& args) {
  const TensorView& y = args.outputs[0];
  if (y.numel() == 0) return;
  const BroadcastGeometry g = checked_geometry(y.shape, args.inputs[0].shape, args.inputs[1].shape);
  if (divides(kOp) && is_integer(y.dtype)) check_divisors(args, g);
  check_launch(launch_binary_any(kOp, y.dtype, g, args.inputs[0].data, args.inputs[1].data, y.data,
                                 args.stream),
               args.node);
}

template <UnaryOp kOp>
void run_unary(const CudaKernelArgs& args) {
  const TensorView& y = args.outputs[0];
  if (y.numel() == 0) return;
  const ConstTensorView& x = args.inputs[0];
  const cudaError_t status =
      y.dtype == DType::F32
          ? launch_f32_unary(kOp, x.as<float>(), y.as<float>(), y.numel(), args.stream)
          : launch_typed_unary(kOp, element_type(y.dtype), x.data, y.data, y.numel(), args.stream);
  check_launch(status, args.node);
}

// Min / Max of one or more inputs, folded left to right as the CPU does: y = op(x0, x1), then
// y = op(y, xk) for each further input (each step reads an element of y before writing it, in
// the same thread). One input is a copy.
template <BinaryOp kOp>
void run_fold(const CudaKernelArgs& args) {
  const TensorView& y = args.outputs[0];
  if (y.numel() == 0) return;
  const std::span<const ConstTensorView> in = args.inputs;
  if (in.size() == 1) {
    check_launch(
        cudaMemcpyAsync(y.data, in[0].data, static_cast<size_t>(y.numel()) * dtype_size(y.dtype),
                        cudaMemcpyDeviceToDevice, args.stream),
        args.node);
    return;
  }
  for (size_t k = 1; k < in.size(); ++k) {
    const Shape& first_shape = k == 1 ? in[0].shape : y.shape;
    const void* first = k == 1 ? in[0].data : y.data;
    const BroadcastGeometry g = checked_geometry(y.shape, first_shape, in[k].shape);
    check_launch(launch_binary_any(kOp, y.dtype, g, first, in[k].data, y.data, args.stream),
                 args.node);
  }
}

// An op's kernels, one per dtype and variant, named as "f32_add_cuda_contiguous": the variant
// names what selection saw; the launch reads the dtype from its views.
inline constexpr size_t kVariants = 2;
struct OpKernelTable {
  std::array<std::array<std::string, kVariants>, kDTypeCount> names;
  std::array<std::array<CudaKernel, kVariants>, kDTypeCount> kernels;
  const CudaKernel& at(DType dtype, size_t variant) const {
    return kernels[static_cast<size_t>(dtype)][variant];
  }
};
// `checks_integers`: the integer kernels check their divisors first (exchanges_with_host).
OpKernelTable make_table(CudaKernelFn fn, std::string_view op,
                         std::array<std::string_view, kVariants> suffixes,
                         bool checks_integers = false) {
  OpKernelTable t;
  for (size_t d = 0; d < t.kernels.size(); ++d) {
    for (size_t v = 0; v < kVariants; ++v) {
      t.names[d][v] = std::string(dtype_name(static_cast<DType>(d))) + "_" + std::string(op) +
                      "_cuda" + std::string(suffixes[v]);
      t.kernels[d][v] =
          CudaKernel{fn, t.names[d][v], checks_integers && is_integer(static_cast<DType>(d))};
    }
  }
  return t;
}

std::optional<KernelUnsupported> refuse_geometry(const CudaKernelQuery& query, const Shape& a,
                                                 const Shape& b) {
  const MergedBroadcast merged = merge_broadcast(query.outputs[0].shape, a, b);
  if (broadcast_geometry(merged)) return std::nullopt;
  return KernelUnsupported{std::string(op_name(query.node.op)) + " of " + a.str() + " and " +
                           b.str() + " broadcasts over " + std::to_string(merged.dims.size()) +
                           " dims that cannot be merged; the CUDA kernels take at most " +
                           std::to_string(kMaxBroadcastDims)};
}

// Contiguous and broadcast variants run the same launch, which walks the same geometry. An
// integer Div declares a word of workspace for its divisor check.
template <BinaryOp kOp, const char* kName, const DTypeSet* kDTypes>
KernelSelection select_binary(const CudaKernelQuery& query) {
  static const OpKernelTable kTable =
      make_table(run_binary<kOp>, kName, {"_contiguous", "_broadcast"}, divides(kOp));
  if (std::optional<KernelUnsupported> refused = refuse_dtype(query, *kDTypes)) return *refused;
  const Shape& a = query.inputs[0]->shape;
  const Shape& b = query.inputs[1]->shape;
  if (std::optional<KernelUnsupported> refused = refuse_geometry(query, a, b)) return *refused;
  const bool contiguous =
      broadcast_geometry(merge_broadcast(query.outputs[0].shape, a, b))->contiguous();
  const DType dtype = query.inputs[0]->dtype;
  KernelChoice choice = choice_of(kTable.at(dtype, contiguous ? 0 : 1));
  if (divides(kOp) && is_integer(dtype)) choice.workspace_bytes = kCheckWorkspaceBytes;
  return choice;
}

// Every fold step must fit the kernels' merged broadcast dims.
template <BinaryOp kOp, const char* kName>
KernelSelection select_fold(const CudaKernelQuery& query) {
  static const OpKernelTable kTable = make_table(run_fold<kOp>, kName, {"_fold", "_fold"});
  if (std::optional<KernelUnsupported> refused = refuse_dtype(query, kNumeric)) return *refused;
  const Shape& out = query.outputs[0].shape;
  for (size_t k = 1; k < query.inputs.size(); ++k) {
    const Shape& first = k == 1 ? query.inputs[0]->shape : out;
    if (std::optional<KernelUnsupported> refused =
            refuse_geometry(query, first, query.inputs[k]->shape)) {
      return *refused;
    }
  }
  return choice_of(kTable.at(query.inputs[0]->dtype, 0));
}

template <UnaryOp kOp, const char* kName, const DTypeSet* kDTypes>
KernelSelection select_unary(const CudaKernelQuery& query) {
  static const OpKernelTable kTable = make_table(run_unary<kOp>, kName, {"", ""});
  if (std::optional<KernelUnsupported> refused = refuse_dtype(query, *kDTypes)) return *refused;
  return choice_of(kTable.at(query.inputs[0]->dtype, 0));
}

constexpr char kAdd[] = "add";
constexpr char kSub[] = "sub";
constexpr char kMul[] = "mul";
constexpr char kDiv[] = "div";
constexpr char kMin[] = "min";
constexpr char kMax[] = "max";
constexpr char kNeg[] = "neg";
constexpr char kAbs[] = "abs";
constexpr char kSqrt[] = "sqrt";
constexpr char kReciprocal[] = "reciprocal";
constexpr char kExp[] = "exp";
constexpr char kLog[] = "log";
constexpr char kFloor[] = "floor";
constexpr char kCeil[] = "ceil";
constexpr char kRound[] = "round";
constexpr char kSign[] = "sign";
constexpr char kMod[] = "mod";
constexpr char kFmod[] = "fmod";

// Mod's kernel follows its fmod attribute, as on the CPU.
KernelSelection select_mod(const CudaKernelQuery& query) {
  if (AttrReader(query.node).get_int("fmod") != 0) {
    return select_binary<BinaryOp::Fmod, kFmod, &kNumeric>(query);
  }
  return select_binary<BinaryOp::Mod, kMod, &kNumeric>(query);
}

using E = CrossBackendExactness;
const CudaOpKernels kOps[] = {
    {{OpKind::Add, kNumeric, E::BitwiseExceptNanPayload,
      "one IEEE add rounded to nearest on both; integers wrap on both"},
     select_binary<BinaryOp::Add, kAdd, &kNumeric>},
    {{OpKind::Sub, kNumeric, E::BitwiseExceptNanPayload,
      "one IEEE subtract rounded to nearest on both; integers wrap on both"},
     select_binary<BinaryOp::Sub, kSub, &kNumeric>},
    {{OpKind::Mul, kNumeric, E::BitwiseExceptNanPayload,
      "one IEEE multiply rounded to nearest on both; integers wrap on both"},
     select_binary<BinaryOp::Mul, kMul, &kNumeric>},
    {{OpKind::Div, kNumeric, E::BitwiseExceptNanPayload,
      "one IEEE division rounded to nearest on both (__fdiv_rn, divss; __ddiv_rn, divsd); "
      "integers truncate, and a zero divisor fails the run as on the CPU"},
     select_binary<BinaryOp::Div, kDiv, &kNumeric>},
    {{OpKind::Neg, kNumeric, E::Bitwise, "a sign-bit flip on both; integers wrap"},
     select_unary<UnaryOp::Neg, kNeg, &kNumeric>},
    {{OpKind::Abs, kNumeric, E::Bitwise, "a sign-bit clear on both; integers wrap"},
     select_unary<UnaryOp::Abs, kAbs, &kNumeric>},
    {{OpKind::Sqrt, kFloat, E::BitwiseExceptNanPayload,
      "IEEE square root, correctly rounded on both (__fsqrt_rn, sqrtss; __dsqrt_rn, sqrtsd)"},
     select_unary<UnaryOp::Sqrt, kSqrt, &kFloat>},
    {{OpKind::Reciprocal, kFloat, E::BitwiseExceptNanPayload,
      "1 / x, one IEEE division rounded to nearest on both"},
     select_unary<UnaryOp::Reciprocal, kReciprocal, &kFloat>},
    {{OpKind::Exp, kFloat, E::BitwiseExceptNanPayload,
      "the CPU's exp_f32: same reduction, polynomial (an fma per Horner step on both) and "
      "operation order; f64: CUDA's "
      "exp where the CPU calls libm's",
      kLibmF64},
     select_unary<UnaryOp::Exp, kExp, &kFloat>},
    {{OpKind::Log, kFloat, E::Bitwise,
      "the CPU's log_f32: same polynomial (an fma per Horner step on both) and operation order; "
      "NaN in or a negative "
      "gives the same quiet NaN constant; f64: CUDA's log where the CPU calls libm's",
      kLibmF64},
     select_unary<UnaryOp::Log, kLog, &kFloat>},
    {{OpKind::Min, kNumeric, E::Bitwise,
      "the CPU's left-to-right fold of a != a ? a : (a <= b ? a : b): selects only"},
     select_fold<BinaryOp::Min, kMin>},
    {{OpKind::Max, kNumeric, E::Bitwise,
      "the CPU's left-to-right fold of a != a ? a : (a >= b ? a : b): selects only"},
     select_fold<BinaryOp::Max, kMax>},
    {{OpKind::Floor, kFloat, E::Bitwise,
      "the CPU's round-half-even by +-2^23 (f64: 2^52), then one exact correction step; NaN "
      "passes"},
     select_unary<UnaryOp::Floor, kFloor, &kFloat>},
    {{OpKind::Ceil, kFloat, E::Bitwise,
      "the CPU's round-half-even by +-2^23 (f64: 2^52), then one exact correction step; NaN "
      "passes"},
     select_unary<UnaryOp::Ceil, kCeil, &kFloat>},
    {{OpKind::Round, kFloat, E::Bitwise,
      "the CPU's round-half-even by +-2^23 (f64: 2^52); NaN passes"},
     select_unary<UnaryOp::Round, kRound, &kFloat>},
    {{OpKind::Sign, kNumeric, E::Bitwise, "selects of -1, 0, 1 or the NaN itself on both"},
     select_unary<UnaryOp::Sign, kSign, &kNumeric>},
    {{OpKind::Mod, kNumeric, E::BitwiseExceptNanPayload,
      "fmod, exact on both (CUDA's fmodf / fmod, glibc's), then for fmod=0 the CPU's sign fix "
      "(one rounded add); integers as C++ %, a zero divisor failing the run as on the CPU"},
     select_mod},
};

}  // namespace

std::span<const CudaOpKernels> elementwise_op_kernels() { return kOps; }

}  // namespace volta::cuda
