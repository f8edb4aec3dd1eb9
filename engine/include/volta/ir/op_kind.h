#pragma once

#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>

namespace volta {

// The one list of ops. Each is described once, in the op table file of its family
// (engine/ir/op_table_<family>.cpp); every table indexed by OpKind (kernels, reference, docs) is
// sized by kOpCount and checked against it. The list's order is the OpKind order; the comments
// name each run's families.
// clang-format off
#define VOLTA_OP_LIST(X)                                                                      \
  /* elementwise */ X(Add) X(Sub) X(Mul) X(Div) X(Pow) X(Neg) X(Abs) X(Sqrt) X(Reciprocal)    \
                    X(Exp) X(Log)                                                             \
  /* activation  */ X(Erf) X(Tanh) X(Sigmoid) X(Relu) X(LeakyRelu) X(Gelu)                     \
  /* elementwise */ X(Min) X(Max) X(Where)                                                    \
  /* logical     */ X(Equal) X(Less) X(Greater) X(Not) X(And) X(Or)                           \
  /* elementwise */ X(Cast) X(Clip)                                                           \
  /* linalg      */ X(MatMul) X(Gemm)                                                         \
  /* normalize   */ X(Softmax) X(LogSoftmax) X(LayerNormalization)                            \
  /* reduction   */ X(ReduceSum) X(ReduceMean) X(ReduceMax) X(ReduceMin) X(ReduceProd)         \
                    X(ReduceSumSquare) X(ReduceL1) X(ReduceL2) X(ReduceLogSumExp) X(ArgMax)    \
                    X(ArgMin) X(CumSum)                                                       \
  /* movement    */ X(Reshape) X(Transpose) X(Concat) X(Split) X(Slice) X(Gather) X(Expand)    \
                    X(Squeeze) X(Unsqueeze) X(Flatten) X(Identity) X(Constant)                 \
  /* elementwise, activation and logical, added for ONNX import */                          \
                    X(Sin) X(Cos) X(Tan) X(Asin) X(Acos) X(Atan) X(Sinh) X(Cosh) X(Asinh)      \
                    X(Acosh) X(Atanh) X(Floor) X(Ceil) X(Round) X(Sign) X(Mod) X(Elu) X(Selu)  \
                    X(Celu) X(HardSigmoid) X(HardSwish) X(Softplus) X(Softsign) X(PRelu)       \
                    X(ThresholdedRelu) X(Shrink) X(IsNaN) X(IsInf) X(Xor) X(LessOrEqual)      \
                    X(GreaterOrEqual)                                                         \
  /* convolution and pooling */                                                             \
                    X(Conv) X(ConvTranspose) X(MaxPool) X(AveragePool) X(LpPool)              \
                    X(GlobalAveragePool) X(GlobalMaxPool) X(GlobalLpPool)                     \
  /* normalization, loss, and Einsum (linalg) */                                            \
                    X(BatchNormalization) X(InstanceNormalization)                            \
                    X(MeanVarianceNormalization) X(LRN) X(Hardmax)                            \
                    X(SoftmaxCrossEntropyLoss) X(NegativeLogLikelihoodLoss) X(Einsum)         \
  /* indexing, and the layout ops Tile ... ReverseSequence (movement) */                     \
                    X(GatherElements) X(GatherND) X(ScatterElements) X(ScatterND) X(TopK)     \
                    X(OneHot) X(Trilu) X(Tile) X(Pad) X(DepthToSpace) X(SpaceToDepth)         \
                    X(ReverseSequence)                                                        \
  /* resampling, and Det (linalg) */                                                        \
                    X(Resize) X(Det) X(GridSample)                                            \
  /* linalg, internal: created by graph passes, never imported */                           \
                    X(FusedMatMul)
// clang-format on

enum class OpKind : uint16_t {
#define VOLTA_OP_ENUM(name) name,
  VOLTA_OP_LIST(VOLTA_OP_ENUM)
#undef VOLTA_OP_ENUM
};

namespace detail {
inline constexpr std::string_view kOpNames[] = {
#define VOLTA_OP_NAME(name) #name,
    VOLTA_OP_LIST(VOLTA_OP_NAME)
#undef VOLTA_OP_NAME
};
}  // namespace detail

inline constexpr int kOpCount = static_cast<int>(std::size(detail::kOpNames));

constexpr int op_index(OpKind op) { return static_cast<int>(op); }
std::string_view op_name(OpKind op);
std::optional<OpKind> parse_op(std::string_view name);

}  // namespace volta
