#pragma once
// The op table: everything the engine knows about an op, declared once. The verifier,
// shape inference, the backend kernel tables, the reference table, the importer, autograd,
// numerics cases and docs matrices all read from here.

#include <functional>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "volta/ir/attributes.h"
#include "volta/ir/dtype.h"
#include "volta/ir/op_kind.h"
#include "volta/ir/shape.h"

namespace volta {

struct Node;

// Families group ops that share kernels, shape grids and tolerances.
enum class OpFamily : uint8_t {
  Elementwise,    // arithmetic and math, one output element per (broadcast) input element
  Activation,     // elementwise non-linearities
  Logical,        // comparisons and boolean logic (bool outputs)
  Linalg,         // MatMul, Gemm, FusedMatMul, Einsum, Det
  Normalization,  // Softmax, LogSoftmax, LayerNormalization (row-wise)
  Reduction,      // Reduce*, ArgMax/ArgMin, CumSum
  Movement,       // reshapes, copies, gathers: no arithmetic
  Convolution,    // Conv, ConvTranspose, and ConvGradFilter (their filter gradient)
  Pooling,        // windowed and global pooling
  Indexing,       // element gathers and scatters, TopK, OneHot, Trilu
  Loss,           // SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss
  Resampling,     // Resize, GridSample
};
inline constexpr int kOpFamilyCount = 12;
std::string_view op_family_name(OpFamily family);  // "elementwise", ...
std::optional<OpFamily> parse_op_family(std::string_view name);

// How an op treats NaN inputs (numerics policy; the NaN/Inf matrix checks kernels against it).
enum class NanMode : uint8_t {
  Propagate,      // any NaN operand gives NaN
  ComparesFalse,  // comparisons with NaN are false (IEEE)
  FirstNanWins,   // ArgMax/ArgMin: NaN counts as the extreme; the first NaN's index is chosen
  PassThrough,    // data movement: NaN bits are copied unchanged
  Detects,        // IsNaN: NaN is what the op reports (true), not an operand to propagate
  NotApplicable,  // integer/bool only
};
std::string_view nan_mode_name(NanMode mode);

// Which index wins among equal candidates (ArgMax/ArgMin; select_last_index flips it).
enum class TieBreak : uint8_t { None, FirstIndex };

// The dtype partial results are kept in by the engine's kernels. The reference engine
// always accumulates in double. Wide: f32 partial results are kept in double (f64 in f64),
// for ops whose f32 running total overflows or drifts while the result is finite and exact
// enough in double (squares under a root, a long running sum); ReduceProd goes further and
// keeps a double mantissa with its binary exponent apart, in both dtypes (a late 0 in a
// product whose partial products overflow even double).
enum class Accumulator : uint8_t { None, InputType, Wide };

// Memory aliasing the planner may exploit; declared here so it never guesses.
enum class Aliasing : uint8_t {
  None,
  InPlaceInput0,  // output may take input 0's buffer when input 0 dies at this node
  ViewOfInput0,   // output has input 0's bytes unchanged (reshape family): may share its buffer
};

// What an op is, as far as the property suite (conformance/numerics/properties*.cpp) must know to
// give it properties: it derives its shape classes (which ops it redraws on random shapes) and
// its algebraic laws from these, so a new op gets them from its schema alone. op_table_test
// checks each trait against the op's operands and shape function.
enum class OpTrait : uint8_t {
  UnaryElementwise,    // one input, one output of its shape; element i depends on input element i
  BroadcastingBinary,  // two operands of one type, broadcast numpy-style both ways; elementwise
  AxisAttribute,  // one data input; its "axis" / "axes" / "perm" attributes are valid at any rank
  Commutative,    // op(a, b) == op(b, a) bitwise (Min and Max: up to the sign of a zero tie)
  Idempotent,     // op(x, x) == x bitwise
};
inline constexpr int kOpTraitCount = 5;
std::string_view op_trait_name(OpTrait trait);  // "unary-elementwise", ...

class OpTraits {
 public:
  constexpr OpTraits() = default;
  constexpr OpTraits(std::initializer_list<OpTrait> traits) {
    for (OpTrait t : traits) bits_ = static_cast<uint8_t>(bits_ | bit(t));
  }
  constexpr bool has(OpTrait t) const { return (bits_ & bit(t)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr OpTraits with(OpTrait t) const {
    OpTraits out = *this;
    out.bits_ = static_cast<uint8_t>(out.bits_ | bit(t));
    return out;
  }

 private:
  static constexpr uint8_t bit(OpTrait t) {
    return static_cast<uint8_t>(1U << static_cast<unsigned>(t));
  }
  uint8_t bits_ = 0;
};

// Whether autograd propagates a gradient to an input: declared per input (InputSpec), with no
// default, and read as op_schema(op).inputs[i].differentiability.
enum class Differentiability : uint8_t {
  Differentiable,     // a VJP is defined for float values of this input
  NotDifferentiable,  // no gradient flows here: the op's outputs are bool or integer (comparisons,
                      // ArgMax), piecewise constant in it (Floor, Hardmax), or the input is a
                      // condition, mask or parameter the op treats as a constant (Where's
                      // condition, Mod's divisor, loss weights; ONNX's categories where it has one)
  IntegerIndex,       // an index or shape input (Gather's indices, labels): never differentiable
};
std::string_view differentiability_name(Differentiability d);  // "differentiable", ...

// Input domain that gives finite, well-conditioned outputs: used to generate parity cases.
enum class InputDomain : uint8_t { Any, Positive, NonZero, Index };

struct AttrSpec {
  std::string_view name;
  AttrType type;
  std::optional<AttrValue> default_value;    // nullopt: the attribute is required
  std::optional<double> min = std::nullopt;  // inclusive range for Int/Float/Ints elements
  std::optional<double> max = std::nullopt;
  std::vector<std::string_view> allowed_strings = {};  // String: the accepted values
};

// Type constraints follow ONNX: inputs and outputs name a type parameter; every value
// bound to the same parameter has the same dtype.
struct TypeParam {
  char name;  // 'T', 'B', 'I', ...
  DTypeSet allowed;
};

// One input of an op. Differentiability has no default: an input cannot be declared without
// saying whether a gradient flows to it.
struct InputSpec {
  constexpr InputSpec(std::string_view input_name, char input_type_param,
                      Differentiability input_differentiability, bool is_optional = false,
                      bool is_variadic = false, InputDomain value_domain = InputDomain::Any)
      : name(input_name),
        type_param(input_type_param),
        differentiability(input_differentiability),
        optional(is_optional),
        variadic(is_variadic),
        domain(value_domain) {}

  std::string_view name;
  char type_param;
  Differentiability differentiability;
  bool optional;
  bool variadic;  // only the last input; one or more values
  InputDomain domain;
};

struct OutputSpec {
  std::string_view name;
  char type_param;  // 0 when the dtype comes from the "to" attribute (Cast)
  bool optional = false;
  bool variadic = false;
};

struct TypeInfo {
  DType dtype = DType::F32;
  Shape shape;
  friend bool operator==(const TypeInfo&, const TypeInfo&) = default;
};

// Reads a node's attributes with the op table's defaults filled in. Shape functions,
// kernels and the reference engine all read attributes through this.
class AttrReader {
 public:
  explicit AttrReader(const Node& node);
  bool has(std::string_view name) const;  // given on the node (not just defaulted)
  int64_t get_int(std::string_view name) const;
  double get_float(std::string_view name) const;
  const std::string& get_string(std::string_view name) const;
  const std::vector<int64_t>& get_ints(std::string_view name) const;
  const std::vector<double>& get_floats(std::string_view name) const;
  const class Tensor& get_tensor(std::string_view name) const;

 private:
  const AttrValue& lookup(std::string_view name) const;
  const Node& node_;
};

// What a shape function sees. Absent optional inputs are nullopt.
struct InferContext {
  const Node& node;
  std::span<const std::optional<TypeInfo>> inputs;
  int num_outputs;  // as declared on the node (Split, LayerNormalization)
  AttrReader attrs;

  const TypeInfo& input(int i) const { return *inputs[static_cast<size_t>(i)]; }
  bool has_input(int i) const {
    return i < static_cast<int>(inputs.size()) && inputs[static_cast<size_t>(i)].has_value();
  }
};

// Shape functions return the output types or throw ShapeError with a message naming the
// numbers; the verifier adds the node and op and turns it into a V-SHAPE diagnostic.
struct ShapeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
using ShapeFn = std::vector<TypeInfo> (*)(const InferContext& ctx);

struct OpSchema {
  OpKind kind;
  std::string_view name;
  OpFamily family;
  std::vector<InputSpec> inputs = {};
  std::vector<OutputSpec> outputs = {};
  std::vector<TypeParam> type_params = {};
  std::vector<AttrSpec> attrs = {};
  ShapeFn infer = nullptr;
  std::string_view summary = {};  // one line for the docs matrix
  NanMode nan_mode = NanMode::Propagate;
  TieBreak tie_break = TieBreak::None;
  Accumulator accumulator = Accumulator::None;
  Aliasing aliasing = Aliasing::None;
  OpTraits traits = {};
  // The ONNX mapping is not declared here: the ONNX importer's lowering registry
  // (engine/onnx/lowering.h) is its one source, naming for each ONNX op type the versions it
  // lowers and the internal op it lowers onto. What the table does say is why no ONNX op lowers
  // onto an op (created by graph passes only, or an ONNX op the ONNX library Volta builds
  // against cannot express); empty when one does. onnx_lowering_test checks both ways.
  std::string_view no_onnx_lowering = {};

  int min_inputs() const;
  int max_inputs() const;  // -1: unbounded (variadic)
  int min_outputs() const;
  int max_outputs() const;
  const AttrSpec* find_attr(std::string_view attr) const;
  const TypeParam* find_type_param(char param) const;
};

const OpSchema& op_schema(OpKind op);
std::span<const OpSchema> all_op_schemas();  // indexed by op_index()

}  // namespace volta
