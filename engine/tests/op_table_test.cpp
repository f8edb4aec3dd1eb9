// The op table is the single declaration every other table is checked against: these tests
// pin its own consistency.
#define BOOST_TEST_MODULE op_table
#include <boost/test/unit_test.hpp>
#include <set>

#include "volta/ir/op_schema.h"
#include "volta/ir/printer.h"

namespace volta {
namespace {

BOOST_AUTO_TEST_CASE(every_op_is_listed_once_in_order) {
  BOOST_TEST(kOpCount == 120);
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

}  // namespace
}  // namespace volta
