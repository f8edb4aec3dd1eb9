// The ONNX lowering registry (lowering.h) is the one source of Volta's ONNX mapping. Every op of
// the op table is lowered onto by some ONNX op, or the table says why not
// (OpSchema::no_onnx_lowering); every lowering reads an ONNX op from a version ONNX has (the
// library's up to opset 17, onnx_versions.h beyond), reads every newer version of it, and is
// reported under the family of the op it lowers onto.
#define BOOST_TEST_MODULE onnx_lowering
#include <onnx/defs/schema.h>

#include <boost/test/unit_test.hpp>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "lowering.h"
#include "onnx_versions.h"

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

BOOST_AUTO_TEST_CASE(every_lowering_reads_an_onnx_op_from_a_version_onnx_has) {
  for (const auto& [op_type, lowering] : lowering_table().all()) {
    if (!lowering.domain.empty()) continue;  // the preview domain: its own test below
    BOOST_TEST_CONTEXT(op_type) {
      // The library's schemas up to opset 17, the newer-version table beyond.
      const std::optional<int> oldest = schema_version(op_type, lowering.min_version);
      BOOST_TEST_REQUIRE(oldest.has_value(),
                         "ONNX has no " << op_type << " at version " << lowering.min_version);
      BOOST_TEST(*oldest == lowering.min_version, "the oldest version handled is "
                                                      << lowering.min_version << ", but " << op_type
                                                      << " has no schema of that version");
      BOOST_TEST(schema_version(op_type, kNewestOpset).has_value());
      if (lowering.onto) {
        BOOST_TEST((lowering.family == op_schema(*lowering.onto).family));
      }
    }
  }
}

// Every version of an op Volta lowers, up to the newest opset it reads, is read: a version that
// changed the op's inputs or attributes is `Lowered` once its lowering reads the new form.
BOOST_AUTO_TEST_CASE(every_newer_version_of_a_lowered_op_is_read) {
  for (const NewerSchema& s : newer_schemas()) {
    BOOST_TEST_CONTEXT(s.op << " " << s.version) {
      BOOST_TEST(s.version > kLibraryOpset);
      BOOST_TEST(s.version <= kNewestOpset);
      const Lowering* lowering = lowering_table().find(s.op);
      if (lowering != nullptr) BOOST_TEST((s.change != SchemaChange::Refused));
      if (lowering == nullptr) BOOST_TEST((s.change != SchemaChange::Lowered));
    }
  }
  // An op's first newer version is New exactly when the library lacks the op.
  for (size_t i = 0; i < newer_schemas().size(); ++i) {
    const NewerSchema& s = newer_schemas()[i];
    const bool first = i == 0 || newer_schemas()[i - 1].op != s.op;
    BOOST_TEST_CONTEXT(s.op << " " << s.version) {
      BOOST_TEST((s.change == SchemaChange::New) == (first && newest_schema(s.op) == nullptr));
    }
  }
  for (size_t i = 1; i < newer_schemas().size(); ++i) {
    const NewerSchema& a = newer_schemas()[i - 1];
    const NewerSchema& b = newer_schemas()[i];
    BOOST_TEST((a.op < b.op || (a.op == b.op && a.version < b.version)), b.op << " " << b.version);
  }
}

BOOST_AUTO_TEST_CASE(the_preview_domains_lower_their_own_ops_at_their_opset_1) {
  const NodeLowering flex = find_lowering(kPreviewDomain, "FlexAttention", 26, 1);
  BOOST_TEST_REQUIRE(flex.lowering != nullptr);
  BOOST_TEST(flex.version.problem.empty());
  BOOST_TEST(flex.version.version == 1);
  BOOST_TEST((flex.lowering->family == OpFamily::Linalg));
  BOOST_TEST(find_lowering(kPreviewDomain, "FlexAttention", 26, 0).version.invalid);
  BOOST_TEST(find_lowering(kPreviewDomain, "FlexAttention", 26, 2).version.problem ==
             "the model imports opset 2 of ai.onnx.preview; Volta reads its opset 1 (ONNX 1.23)");
  // Each domain's ops are its own.
  BOOST_TEST(find_lowering("", "FlexAttention", 26, 1).lowering == nullptr);
  BOOST_TEST(find_lowering(kPreviewDomain, "Relu", 26, 1).lowering == nullptr);
  BOOST_TEST(find_lowering("ai.onnx", "Relu", 26, 0).lowering != nullptr);
  BOOST_TEST(find_lowering("com.microsoft", "Relu", 26, 1).version.problem ==
             "domain 'com.microsoft' is not supported; supported: the default domain (ai.onnx), "
             "ai.onnx.ml (ArrayFeatureExtractor, Binarizer, TreeEnsemble), ai.onnx.preview "
             "(FlexAttention) and ai.onnx.preview.training (Adagrad, Adam, Momentum)");
  BOOST_TEST(find_lowering(kTrainingDomain, "Adam", 0, 1).version.version == 1);
  BOOST_TEST(find_lowering(kTrainingDomain, "FlexAttention", 0, 1).lowering == nullptr);
  BOOST_TEST(find_lowering(kPreviewDomain, "Adam", 0, 1).lowering == nullptr);
  for (const auto& [op_type, lowering] : lowering_table().all()) {
    if (!lowering.domain.empty()) {
      BOOST_TEST((lowering.domain == kPreviewDomain || lowering.domain == kTrainingDomain ||
                  lowering.domain == kMlDomain),
                 op_type);
    }
  }
}

// ai.onnx.ml ops are read from the opset that defines them up to opset 5 (ONNX 1.23), at the
// one schema version each has there.
BOOST_AUTO_TEST_CASE(the_ml_domain_lowers_its_ops_from_their_first_opset_to_5) {
  const NodeLowering tree = find_lowering(kMlDomain, "TreeEnsemble", 0, 5);
  BOOST_TEST_REQUIRE(tree.lowering != nullptr);
  BOOST_TEST(tree.version.problem.empty());
  BOOST_TEST(tree.version.version == 5);
  BOOST_TEST((tree.lowering->family == OpFamily::Indexing));
  const NodeLowering early = find_lowering(kMlDomain, "TreeEnsemble", 0, 4);
  BOOST_TEST(early.version.invalid);
  BOOST_TEST(
      early.version.problem ==
      "op TreeEnsemble of ai.onnx.ml is defined from its opset 5; the model imports opset 4");
  BOOST_TEST(find_lowering(kMlDomain, "Binarizer", 0, 6).version.problem ==
             "the model imports opset 6 of ai.onnx.ml; Volta reads its opsets 1 to 5 (ONNX 1.23)");
  BOOST_TEST(find_lowering(kMlDomain, "Binarizer", 18, 3).version.version == 1);
  BOOST_TEST(find_lowering(kMlDomain, "Binarizer", 18, 0).version.invalid);
  BOOST_TEST(find_lowering("", "Binarizer", 18, 0).lowering == nullptr);
  BOOST_TEST(find_lowering(kMlDomain, "Relu", 18, 3).lowering == nullptr);
}

BOOST_AUTO_TEST_CASE(the_schema_in_force_comes_from_the_library_or_the_newer_table) {
  BOOST_TEST(schema_version("Softmax", 15).value() == 13);  // the library's
  BOOST_TEST(schema_version("ReduceMean", 17).value() == 13);
  BOOST_TEST(schema_version("ReduceMean", 18).value() == 18);  // the newer table's
  BOOST_TEST(schema_version("ReduceMean", 28).value() == 18);
  BOOST_TEST(schema_version("Add", 28).value() == 14);
  BOOST_TEST(!schema_version("Gelu", 19).has_value());
  BOOST_TEST(schema_version("Gelu", 20).value() == 20);
  BOOST_TEST(!schema_version("NoSuchOp", 18).has_value());
  BOOST_TEST(newer_schema("Softmax", 28) == nullptr);
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
  BOOST_TEST(op_schema(OpKind::Gelu).no_onnx_lowering.empty());  // ONNX opset 20
  BOOST_TEST(op_schema(OpKind::FusedMatMul).no_onnx_lowering.starts_with("internal:"));
}

}  // namespace
}  // namespace volta::onnx
