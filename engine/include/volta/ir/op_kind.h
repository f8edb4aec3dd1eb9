#pragma once

#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>

// Adding an op. Each place below, and the test (ctest name / Boost test case) that fails when it
// is missed. "<family>" is op_family_name of the op's OpFamily: the op table, CPU kernel,
// reference, ONNX lowering and parity case files hold one file per family (an oversized family
// in parts, <family>_<part>.cpp), and the op table, CPU kernel, reference, lowering and case
// tables throw std::logic_error when a file registers an op of another family.
//
//  1. The op list below (VOLTA_OP_LIST): its position is its OpKind and its row in the docs.
//     Missed: nothing else can name the op.
//  2. Its schema: engine/ir/op_table_<family>.cpp, add_<family>_schemas: operands (each input's
//     Differentiability has no default: a missing one does not compile), attributes, shape
//     function, summary, NaN mode, accumulator, aliasing, traits (which give its properties,
//     step 9), and no_onnx_lowering when no ONNX op lowers onto it.
//     op_table_test: every_op_has_inference_policy_and_docs, operands_follow_onnx_rules,
//     attribute_defaults_have_their_declared_type,
//     every_input_declares_a_differentiability_its_types_allow,
//     unary_elementwise_ops_keep_their_input_shape, broadcasting_binary_ops_broadcast_both_ways,
//     axis_attribute_ops_take_any_axis_of_any_rank.
//  3. Its shape function: engine/ir/shape_functions.cpp when shared, else in the family file.
//     op_table_test/every_op_has_inference_policy_and_docs (none); a wrong one: the ONNX backend
//     tests (`volta-audit run onnx`) and the op's parity cases.
//  4. Its CPU kernel: engine/backends/cpu/kernels/<family>[_<part>].cpp, registered there
//     (register_<family>_kernels, which calls register_<family>_<part>_kernels).
//     parity_test/<Op> ("has no CPU kernel"); for the elementwise, activation and logical
//     families also cpu_elementwise_test/every_dtype_the_op_table_allows_has_a_kernel.
//  5. Its reference kernel: reference/ops/<family>.cpp, register_<family>.
//     reference_test/every_op_in_the_table_has_a_reference_kernel, parity_test/<Op>.
//  6. Its ONNX lowering, if ONNX has the op: engine/onnx/lower_<family>.cpp,
//     table.add("OnnxOp", OpKind::Op, oldest_version, &lower_op) (the registry is the one place
//     the ONNX mapping is written); else the reason in no_onnx_lowering (step 2).
//     onnx_lowering_test/every_op_is_lowered_onto_or_says_why_not.
//  7. Its parity cases: conformance/numerics/cases_<family>.cpp.
//     parity_test/<Op> ("has no parity cases", dtypes not covered).
//  8. Its numerics policy rule(s): governance/numerics-policy.md, between the RULES markers.
//     numerics_matrix_test/every_op_has_a_rule.
//  9. Its properties: nothing to write. engine-matches-reference covers every op, and its
//     traits (step 2) give it random shapes and the commutes / self-is-identity laws; a law of
//     one op goes in conformance/numerics/properties_algebra.cpp. properties_test:
//     every_op_has_an_engine_reference_property, every_op_gets_the_properties_its_traits_give,
//     every_property_passes.
// 10. The docs: run `volta-audit docs sync` (governance/op-support.md's op matrix) and update the
//     op count in README.md's prose. docs_contract_committed,
//     docs_test/the_readme_counts_the_ops_of_the_op_table.
// 11. Its VJP rules: engine/autograd/vjp_<family>.cpp, register_<family>_vjps, one rule per
//     Differentiable input (the table refuses a rule for any other input).
//     autograd_test/every_rule_matches_finite_differences_of_the_reference (add a case) and
//     every_differentiable_input_has_a_rule_or_is_pending (a missing rule, until #16 is done,
//     must be listed there).

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
                    X(FusedMatMul)                                                            \
  /* convolution, backward-only: created by VJP rules, never imported */                     \
                    X(ConvGradFilter)                                                         \
  /* elementwise: integer bit operations, and BitCast */                                    \
                    X(BitShift) X(BitwiseAnd) X(BitwiseOr) X(BitwiseXor) X(BitwiseNot)         \
                    X(BitCast)                                                                \
  /* linalg, internal: created by graph passes, never imported */                           \
                    X(PermutedMatMul)
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
