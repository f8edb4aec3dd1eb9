// The ONNX lowering registry (lowering.h) is the one source of Volta's ONNX mapping. Every op of
// the op table is lowered onto by some ONNX op, or the table says why not
// (OpSchema::no_onnx_lowering); every lowering reads an ONNX op the ONNX library has, from a
// version it has, and is reported under the family of the op it lowers onto.
#define BOOST_TEST_MODULE onnx_lowering
#include <onnx/defs/schema.h>

#include <boost/test/unit_test.hpp>
#include <limits>
#include <string>
#include <vector>

#include "lowering.h"

namespace volta::onnx {
namespace {

// The newest schema of `op_type` in the ONNX library, or nullptr when it has none.
const ::onnx::OpSchema* newest_schema(std::string_view op_type) {
  return ::onnx::OpSchemaRegistry::Schema(std::string(op_type), std::numeric_limits<int>::max(),
                                          "");
}

BOOST_AUTO_TEST_CASE(every_op_is_lowered_onto_or_says_why_not) {
  for (const OpSchema& s : all_op_schemas()) {
    std::vector<std::string> lowered_from;
    for (const auto& [op_type, lowering] : lowering_table().all()) {
      if (lowering.onto == s.kind) lowered_from.push_back(op_type);
    }
    BOOST_TEST_CONTEXT(s.name) {
      if (s.no_onnx_lowering.empty()) {
        BOOST_TEST(!lowered_from.empty(), s.name << " has no ONNX lowering (engine/onnx/lower_"
                                                 << op_family_name(s.family)
                                                 << ".cpp) and its schema does not say why "
                                                    "(no_onnx_lowering)");
      } else {
        BOOST_TEST(lowered_from.empty(), s.name << " says '" << s.no_onnx_lowering << "' but ONNX "
                                                << lowered_from.front() << " lowers onto it");
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(every_lowering_reads_an_onnx_op_of_the_library_from_a_version_it_has) {
  for (const auto& [op_type, lowering] : lowering_table().all()) {
    BOOST_TEST_CONTEXT(op_type) {
      BOOST_TEST_REQUIRE(newest_schema(op_type) != nullptr);
      const ::onnx::OpSchema* oldest =
          ::onnx::OpSchemaRegistry::Schema(op_type, lowering.min_version, "");
      BOOST_TEST_REQUIRE(oldest != nullptr,
                         "ONNX has no " << op_type << " at version " << lowering.min_version);
      BOOST_TEST(oldest->SinceVersion() == lowering.min_version,
                 "the oldest version handled is " << lowering.min_version << ", but " << op_type
                                                  << " has no schema of that version");
      if (lowering.onto) {
        BOOST_TEST((lowering.family == op_schema(*lowering.onto).family));
      }
    }
  }
}

// An op whose ONNX counterpart the ONNX library cannot express says so, and the claim holds:
// when a library that has the op arrives, this fails and the op gets its lowering.
BOOST_AUTO_TEST_CASE(ops_the_onnx_library_lacks_are_the_ones_said_to_be_lacking) {
  for (const OpSchema& s : all_op_schemas()) {
    if (s.no_onnx_lowering.empty() || s.no_onnx_lowering.starts_with("internal:")) continue;
    BOOST_TEST_CONTEXT(s.name) {
      BOOST_TEST(newest_schema(s.name) == nullptr, "the ONNX library now has "
                                                       << s.name << ": add its lowering and drop "
                                                       << "no_onnx_lowering from its schema");
    }
  }
  BOOST_TEST(!op_schema(OpKind::Gelu).no_onnx_lowering.empty());
  BOOST_TEST(op_schema(OpKind::FusedMatMul).no_onnx_lowering.starts_with("internal:"));
}

}  // namespace
}  // namespace volta::onnx
