// The op table is the single declaration every other table is checked against: these tests
// pin its own consistency.
#define BOOST_TEST_MODULE op_table
#include <boost/test/unit_test.hpp>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "volta/error.h"
#include "volta/ir/graph.h"
#include "volta/ir/op_schema.h"
#include "volta/ir/printer.h"

namespace volta {
namespace {

BOOST_AUTO_TEST_CASE(every_op_is_listed_once_in_order) {
  BOOST_TEST(all_op_schemas().size() == static_cast<size_t>(kOpCount));
  std::set<std::string_view> names;
  for (int i = 0; i < kOpCount; ++i) {
    const auto op = static_cast<OpKind>(i);
    BOOST_TEST(op_schema(op).kind == op);
    BOOST_TEST(op_schema(op).name == op_name(op));
    BOOST_TEST((parse_op(op_name(op)) == op));
    BOOST_TEST(names.insert(op_name(op)).second);
  }
  BOOST_TEST(!parse_op("Loop").has_value());
}

BOOST_AUTO_TEST_CASE(families_and_policies_round_trip) {
  for (int f = 0; f < kOpFamilyCount; ++f) {
    const auto family = static_cast<OpFamily>(f);
    BOOST_TEST((parse_op_family(op_family_name(family)) == family));
  }
  std::set<OpFamily> used;
  for (const OpSchema& s : all_op_schemas()) used.insert(s.family);
  BOOST_TEST(used.size() == static_cast<size_t>(kOpFamilyCount));  // no empty family
}

BOOST_AUTO_TEST_CASE(operands_follow_onnx_rules) {
  for (const OpSchema& s : all_op_schemas()) {
    BOOST_TEST_CONTEXT(s.name) {
      bool seen_optional = false;
      for (size_t i = 0; i < s.inputs.size(); ++i) {
        const InputSpec& in = s.inputs[i];
        BOOST_TEST((!in.variadic || i + 1 == s.inputs.size()));  // variadic only last
        BOOST_TEST((in.optional || !seen_optional));  // no required input after an optional
        seen_optional = seen_optional || in.optional;
        BOOST_TEST(s.find_type_param(in.type_param) != nullptr);
      }
      for (const OutputSpec& out : s.outputs) {
        BOOST_TEST((out.type_param == 0 || s.find_type_param(out.type_param) != nullptr));
      }
      BOOST_TEST(s.min_outputs() >= 1);
      for (const TypeParam& p : s.type_params) BOOST_TEST(!p.allowed.empty());
    }
  }
}

BOOST_AUTO_TEST_CASE(attribute_defaults_have_their_declared_type) {
  for (const OpSchema& s : all_op_schemas()) {
    std::set<std::string_view> names;
    for (const AttrSpec& a : s.attrs) {
      BOOST_TEST_CONTEXT(s.name << "." << a.name) {
        BOOST_TEST(names.insert(a.name).second);
        if (a.default_value) BOOST_TEST((attr_type_of(*a.default_value) == a.type));
        if (a.min && a.max) BOOST_TEST(*a.min <= *a.max);
        BOOST_TEST((a.allowed_strings.empty() || a.type == AttrType::String));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(every_op_has_inference_policy_and_docs) {
  for (const OpSchema& s : all_op_schemas()) {
    BOOST_TEST_CONTEXT(s.name) {
      BOOST_TEST(s.infer != nullptr);
      BOOST_TEST(!s.summary.empty());
      // Aliasing hands an output input 0's buffer: needs exactly one output and an input.
      if (s.aliasing != Aliasing::None) {
        BOOST_TEST(s.max_outputs() == 1);
        BOOST_TEST(s.min_inputs() >= 1);
      }
      // ArgMax-like ops must say how ties break; nothing else may claim a tie rule.
      BOOST_TEST(((s.tie_break == TieBreak::FirstIndex) == (s.nan_mode == NanMode::FirstNanWins)));
    }
  }
}

// ---- Traits: each holds for the op's operands and shape function -------------------------

// Every required attribute of `s` with a value of its type (the first allowed string).
Attributes required_attrs(const OpSchema& s) {
  Attributes attrs;
  for (const AttrSpec& a : s.attrs) {
    if (a.default_value) continue;
    if (a.type == AttrType::Int) {
      attrs[std::string(a.name)] = int64_t{0};
    } else if (a.type == AttrType::String && !a.allowed_strings.empty()) {
      attrs[std::string(a.name)] = std::string(a.allowed_strings.front());
    } else {
      BOOST_ERROR(s.name << ": no test value for required attribute " << a.name);
    }
  }
  return attrs;
}

// The first dtype a type parameter allows, f32 when it allows it.
DType some_dtype(const OpSchema& s, char type_param) {
  const DTypeSet allowed = s.find_type_param(type_param)->allowed;
  if (allowed.contains(DType::F32)) return DType::F32;
  for (int code = 0; code < kDTypeCount; ++code) {
    if (allowed.contains(static_cast<DType>(code))) return static_cast<DType>(code);
  }
  return DType::F32;
}

// The shape `op` infers for operands of these shapes and attributes, or nullopt when it rejects
// them.
std::optional<Shape> inferred(const OpSchema& s, const std::vector<Shape>& shapes,
                              Attributes attrs) {
  Graph g;
  std::vector<ValueId> ids;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const InputSpec& in = s.inputs[std::min(i, s.inputs.size() - 1)];
    ids.push_back(g.add_input("x" + std::to_string(i), some_dtype(s, in.type_param), shapes[i]));
  }
  try {
    return g.value(g.add(s.kind, ids, std::move(attrs))).shape;
  } catch (const VoltaError&) {
    return std::nullopt;
  }
}

bool takes_one_operand(const OpSchema& s) { return s.min_inputs() == 1 && s.max_inputs() == 1; }

BOOST_AUTO_TEST_CASE(unary_elementwise_ops_keep_their_input_shape) {
  for (const OpSchema& s : all_op_schemas()) {
    if (!s.traits.has(OpTrait::UnaryElementwise)) continue;
    BOOST_TEST_CONTEXT(s.name) {
      BOOST_TEST(takes_one_operand(s));
      BOOST_TEST(s.max_outputs() == 1);
      for (const Shape& shape : {Shape{}, Shape{0}, Shape{7}, Shape{3, 5}, Shape{2, 1, 4}}) {
        BOOST_TEST((inferred(s, {shape}, required_attrs(s)) == shape), shape.str());
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(broadcasting_binary_ops_broadcast_both_ways) {
  for (const OpSchema& s : all_op_schemas()) {
    if (!s.traits.has(OpTrait::BroadcastingBinary)) continue;
    BOOST_TEST_CONTEXT(s.name) {
      BOOST_TEST(s.min_inputs() <= 2);
      BOOST_TEST((s.max_inputs() == 2 || s.max_inputs() == -1));
      BOOST_TEST(s.max_outputs() == 1);
      BOOST_TEST(s.inputs.front().type_param == s.inputs.back().type_param);
      const Attributes attrs = required_attrs(s);
      BOOST_TEST((inferred(s, {{3, 1}, {1, 4}}, attrs) == Shape{3, 4}));
      BOOST_TEST((inferred(s, {{5}, {2, 1}}, attrs) == Shape{2, 5}));
      BOOST_TEST((inferred(s, {{}, {0, 3}}, attrs) == Shape{0, 3}));
    }
  }
}

// The property suite redraws these attributes for random ranks: every value it can draw (any
// axis in [-rank, rank), any non-empty subset of axes, any permutation) must be accepted.
BOOST_AUTO_TEST_CASE(axis_attribute_ops_take_any_axis_of_any_rank) {
  for (const OpSchema& s : all_op_schemas()) {
    if (!s.traits.has(OpTrait::AxisAttribute)) continue;
    BOOST_TEST_CONTEXT(s.name) {
      BOOST_TEST(takes_one_operand(s));
      const bool axis = s.find_attr("axis") != nullptr;
      const bool axes = s.find_attr("axes") != nullptr;
      const bool perm = s.find_attr("perm") != nullptr;
      BOOST_TEST((axis || axes || perm));
      for (int rank = 1; rank <= 4; ++rank) {
        const Shape shape(std::vector<int64_t>(static_cast<size_t>(rank), 3));
        for (int64_t a = -rank; a < rank; ++a) {
          Attributes attrs = required_attrs(s);
          if (axis) attrs["axis"] = a;
          if (axes) attrs["axes"] = std::vector<int64_t>{(a + rank) % rank};
          if (perm) {
            std::vector<int64_t> p;
            for (int64_t k = 0; k < rank; ++k) p.push_back((k + a + rank) % rank);
            attrs["perm"] = p;
          }
          BOOST_TEST(inferred(s, {shape}, attrs).has_value(), "rank " << rank << " axis " << a);
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(algebraic_traits_are_of_broadcasting_binary_ops) {
  for (const OpSchema& s : all_op_schemas()) {
    BOOST_TEST_CONTEXT(s.name) {
      if (s.traits.has(OpTrait::Commutative) || s.traits.has(OpTrait::Idempotent)) {
        BOOST_TEST(s.traits.has(OpTrait::BroadcastingBinary));
      }
      // A shape class is one of the three; none of them mixes with another.
      const int classes = (s.traits.has(OpTrait::UnaryElementwise) ? 1 : 0) +
                          (s.traits.has(OpTrait::BroadcastingBinary) ? 1 : 0) +
                          (s.traits.has(OpTrait::AxisAttribute) ? 1 : 0);
      BOOST_TEST(classes <= 1);
    }
  }
  for (int t = 0; t < kOpTraitCount; ++t) {
    BOOST_TEST(!op_trait_name(static_cast<OpTrait>(t)).empty());
  }
}

// ---- Differentiability: one decision per input ---------------------------------------------
// InputSpec has no default for it (its constructor requires one), so every input of every op
// states it; these tests check the statements against the operand types and pin the decisions
// autograd will rely on (op_schema(op).inputs[i].differentiability).

bool allows(const OpSchema& s, char type_param, std::initializer_list<DType> dtypes) {
  if (type_param == 0) return true;  // the dtype comes from an attribute (Cast): any
  const DTypeSet allowed = s.find_type_param(type_param)->allowed;
  for (DType d : dtypes) {
    if (allowed.contains(d)) return true;
  }
  return false;
}
bool allows_float(const OpSchema& s, char type_param) {
  return allows(s, type_param, {DType::F32, DType::F64});
}

BOOST_AUTO_TEST_CASE(every_input_declares_a_differentiability_its_types_allow) {
  using D = Differentiability;
  for (const OpSchema& s : all_op_schemas()) {
    bool float_output = false;
    for (const OutputSpec& out : s.outputs) float_output |= allows_float(s, out.type_param);
    for (const InputSpec& in : s.inputs) {
      BOOST_TEST_CONTEXT(s.name << "." << in.name) {
        BOOST_TEST(differentiability_name(in.differentiability) != "?");
        // No gradient reaches an integer or bool input, and none leaves an op whose outputs are
        // all integer or bool (comparisons, ArgMax, IsNaN).
        if (!allows_float(s, in.type_param) || !float_output) {
          BOOST_TEST((in.differentiability != D::Differentiable));
        }
        // Index operands are IntegerIndex, and IntegerIndex inputs take integers.
        if (in.domain == InputDomain::Index) {
          BOOST_TEST((in.differentiability == D::IntegerIndex));
        }
        if (in.differentiability == D::IntegerIndex) {
          BOOST_TEST(allows(s, in.type_param, {DType::I64, DType::I32}));
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(differentiability_decisions_autograd_reads) {
  using D = Differentiability;
  auto of = [](OpKind op, size_t i) { return op_schema(op).inputs.at(i).differentiability; };
  BOOST_TEST((of(OpKind::Gather, 1) == D::IntegerIndex));
  BOOST_TEST((of(OpKind::GatherElements, 1) == D::IntegerIndex));
  BOOST_TEST((of(OpKind::ScatterND, 1) == D::IntegerIndex));
  BOOST_TEST((of(OpKind::OneHot, 0) == D::IntegerIndex));  // float indices are truncated
  BOOST_TEST((of(OpKind::SoftmaxCrossEntropyLoss, 1) == D::IntegerIndex));
  BOOST_TEST((of(OpKind::ReverseSequence, 1) == D::IntegerIndex));
  BOOST_TEST((of(OpKind::Where, 0) == D::NotDifferentiable));
  BOOST_TEST((of(OpKind::Where, 1) == D::Differentiable));
  BOOST_TEST((of(OpKind::Where, 2) == D::Differentiable));
  BOOST_TEST((of(OpKind::ArgMax, 0) == D::NotDifferentiable));
  BOOST_TEST((of(OpKind::Floor, 0) == D::NotDifferentiable));  // piecewise constant
  BOOST_TEST((of(OpKind::Mod, 0) == D::Differentiable));
  BOOST_TEST((of(OpKind::Mod, 1) == D::NotDifferentiable));
  BOOST_TEST((of(OpKind::MatMul, 0) == D::Differentiable));
  BOOST_TEST((of(OpKind::MatMul, 1) == D::Differentiable));
  // Comparisons and logic: bool outputs, so nothing flows back to any input.
  for (const OpSchema& s : all_op_schemas()) {
    if (s.family != OpFamily::Logical) continue;
    for (const InputSpec& in : s.inputs) {
      BOOST_TEST((in.differentiability != D::Differentiable), s.name << "." << in.name);
    }
  }
}

}  // namespace
}  // namespace volta
