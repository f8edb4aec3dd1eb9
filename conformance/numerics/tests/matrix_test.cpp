// The numerics policy's rule parser, the NaN/Inf matrix over governance/numerics-policy.md,
// and a planted violation (a test-only Relu that flushes NaN to 0) the matrix must catch.
#define BOOST_TEST_MODULE numerics_matrix
#include <boost/test/unit_test.hpp>
#include <fstream>
#include <set>
#include <sstream>

#include "volta/conformance/matrix_suite.h"
#include "volta/ir/op_schema.h"
#include "volta/runtime/forwarding_backend.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta::conformance {
namespace {

const Policy& policy() {
  static const Policy p = load_policy(VOLTA_SOURCE_DIR);
  return p;
}

const Backend& cpu() {
  static const std::unique_ptr<Backend> backend = make_backend("cpu");
  return *backend;
}

BOOST_AUTO_TEST_CASE(parses_a_rule) {
  const ParsedLine p =
      parse_rule_line("- `Relu, Cast(to=i32)[f64]`: If x is NaN and y is -1e30, the result is x.");
  BOOST_TEST_REQUIRE(p.error == "");
  const Rule& r = *p.rule;
  BOOST_TEST(r.ops.size() == 2U);
  BOOST_TEST(r.ops[1].text == "Cast(to=i32)");
  BOOST_TEST(std::get<std::string>(r.ops[1].attrs.at("to")) == "i32");
  BOOST_TEST((r.ops[1].dtypes == std::vector<DType>{DType::F64}));
  BOOST_TEST(r.clauses.size() == 2U);
  BOOST_TEST((r.clauses[0].value.cls == ValueClass::NaN));
  BOOST_TEST((r.clauses[1].subject == Subject::Y));
  BOOST_TEST(r.clauses[1].value.number == -1e30);
  BOOST_TEST((r.result.kind == ResultKind::SameAsX));
  BOOST_TEST(r.sentence == "If x is NaN and y is -1e30, the result is x.");
}

BOOST_AUTO_TEST_CASE(attributes_take_the_schema_type) {
  const ParsedLine p = parse_rule_line(
      "- `Clip(min=0, max=1), ReduceMax(axes=[1])`: If an element of the row is NaN, the result "
      "is the index of the first NaN.");
  BOOST_TEST_REQUIRE(p.error == "");
  BOOST_TEST(std::get<double>(p.rule->ops[0].attrs.at("min")) == 0.0);
  BOOST_TEST(
      (std::get<std::vector<int64_t>>(p.rule->ops[1].attrs.at("axes")) == std::vector<int64_t>{1}));
  BOOST_TEST((p.rule->result.kind == ResultKind::IndexOfFirst));
}

BOOST_AUTO_TEST_CASE(bad_rules_say_what_was_expected) {
  BOOST_TEST(parse_rule_line("- `Relu`: If x is purple, the result is NaN.").error ==
             "value 'purple' after 'x is ' (expected NaN, +Inf, -Inf, +0, -0, subnormal, the "
             "largest finite value, the lowest finite value, true, false or a decimal number)");
  BOOST_TEST(parse_rule_line("- `Frobnicate`: If x is NaN, the result is NaN.").error ==
             "op 'Frobnicate' is not in the op table");
  BOOST_TEST(parse_rule_line("- `Relu(beta=2)`: If x is NaN, the result is NaN.").error ==
             "attribute 'beta=2' of Relu (expected attr=value with an attribute of the op's "
             "schema)");
  BOOST_TEST(!parse_rule_line("- `Relu`: When x is NaN, the result is NaN.").rule);
  BOOST_TEST(!parse_rule_line("- `Relu`: If x is NaN, the result is NaN").rule);
  BOOST_TEST(
      parse_rule_line("- `Softmax`: If an element of the row is NaN, the result is x.").error ==
      "the result 'x' needs an elementwise condition ('x is V')");
  BOOST_TEST(parse_rule_line("- `ReduceMax`: If x is NaN, the result is the index of the first "
                             "NaN.")
                 .error ==
             "'the index of the first V' needs the condition 'an element of the "
             "row is V'");
}

BOOST_AUTO_TEST_CASE(errors_name_the_line) {
  const Policy p = parse_policy(
      "intro\n<!-- BEGIN RULES -->\n- `Relu`: If x is NaN, the result is NaN.\n"
      "- `Relu`: If x is NaN the result is NaN.\n<!-- END RULES -->\n- `Bad` outside\n");
  BOOST_TEST(p.rules.size() == 1U);
  BOOST_TEST(p.rules[0].line == 3);
  BOOST_TEST_REQUIRE(p.errors.size() == 1U);
  BOOST_TEST(p.errors[0].line == 4);
  BOOST_TEST(p.errors[0].str().starts_with("line 4: cannot parse sentence"));
  BOOST_TEST(parse_policy("no markers").errors.size() == 1U);
}

BOOST_AUTO_TEST_CASE(the_policy_parses_and_every_rule_gives_cells) {
  for (const PolicyError& e : policy().errors) BOOST_ERROR(e.str());
  for (const std::string& p : matrix_problems(policy())) BOOST_ERROR(p);
  std::set<std::string> ids;
  for (const MatrixCell& c : matrix_cells(policy())) BOOST_TEST(ids.insert(c.id).second);
}

// Every op of the op table has at least one rule in governance/numerics-policy.md, so a new op
// cannot join without a stated NaN/Inf policy. (The cell tests below run the elementwise,
// activation and logical families' cells; `volta-audit run numerics` runs every cell.)
BOOST_AUTO_TEST_CASE(every_op_has_a_rule) {
  for (OpKind op : ops_without_rule(policy())) {
    BOOST_ERROR(std::string(op_name(op)) + " (" +
                std::string(op_family_name(op_schema(op).family)) + ") has no numerics rule in " +
                std::string(kPolicyFile));
  }
}

bool checked_here(const MatrixCell& c) {
  const OpFamily f = op_schema(c.op.op).family;
  return f == OpFamily::Elementwise || f == OpFamily::Activation || f == OpFamily::Logical;
}

BOOST_AUTO_TEST_CASE(cpu_cells_hold) {
  const Evaluate eval = backend_evaluator(cpu(), 3);
  for (const MatrixCell& c : matrix_cells(policy())) {
    if (!checked_here(c)) continue;
    const CaseOutcome o = run_matrix_cell(c, eval);
    BOOST_CHECK_MESSAGE(o.outcome == Outcome::Pass, c.id << ": " << o.message);
  }
}

BOOST_AUTO_TEST_CASE(reference_cells_hold) {
  const Evaluate eval = reference_evaluator();
  for (const MatrixCell& c : matrix_cells(policy())) {
    if (!checked_here(c)) continue;
    const CaseOutcome o = run_matrix_cell(c, eval);
    BOOST_CHECK_MESSAGE(o.outcome == Outcome::Pass, c.id << ": " << o.message);
  }
}

// The planted violation: the CPU backend with its f32 Relu swapped for one that flushes NaN to
// 0 (max(x, 0) written as a comparison). Test-only; the production backend never sees it.
class FlushNanRelu : public ForwardingBackend {
 public:
  FlushNanRelu() : ForwardingBackend(make_backend("cpu"), "cpu-planted-relu") {}
  KernelSelection select_kernel(const Graph& graph, const Node& node) const override {
    if (node.op == OpKind::Relu && graph.value(node.inputs[0]).dtype == DType::F32) {
      return KernelChoice{"f32_relu_flush_nan_planted", KernelDeterminism::BitExact, &kMarker};
    }
    return inner().select_kernel(graph, node);
  }
  void run_kernel(const KernelChoice& kernel, const Node& node,
                  std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs,
                  MemoryRegion workspace, ExecutionContext& ctx) const override {
    if (kernel.impl != &kMarker) {
      return inner().run_kernel(kernel, node, inputs, outputs, workspace, ctx);
    }
    const float* x = inputs[0].as<float>();
    float* y = outputs[0].as<float>();
    for (int64_t i = 0; i < outputs[0].numel(); ++i) y[i] = x[i] > 0 ? x[i] : 0.0F;
  }

 private:
  static constexpr int kMarker = 0;
};

BOOST_AUTO_TEST_CASE(a_planted_nan_flush_is_caught) {
  const FlushNanRelu planted;
  const Evaluate eval = backend_evaluator(planted, 2);
  int nan_rules = 0;
  for (const MatrixCell& c : matrix_cells(policy())) {
    if (c.op.op != OpKind::Relu || c.dtype != DType::F32) continue;
    const CaseOutcome o = run_matrix_cell(c, eval);
    if (c.rule.clauses[0].value.cls == ValueClass::NaN) {
      ++nan_rules;
      BOOST_TEST_CONTEXT(c.id) {
        BOOST_TEST((o.outcome == Outcome::FailNumeric));
        // Names the rule's line, the first offset and both values.
        BOOST_TEST(o.message.find("policy line " + std::to_string(c.rule.line)) == 0U);
        BOOST_TEST(o.message.find("offset 0: got +0, expected NaN") != std::string::npos);
      }
    } else {
      BOOST_CHECK_MESSAGE(o.outcome == Outcome::Pass, c.id << ": " << o.message);
    }
  }
  BOOST_TEST(nan_rules >= 1);
}

// "The result is an error" is the kernel refusing the data at run time (R-KERNEL-FAILURE): an
// engine that refused the graph before running it (a verifier) does not prove the rule, and a
// backend without a kernel for the op cannot check it at all (UNSUPPORTED, any rule).
BOOST_AUTO_TEST_CASE(an_error_rule_needs_the_kernel_to_refuse_the_data) {
  std::vector<MatrixCell> error_cells;
  for (MatrixCell& c : matrix_cells(policy())) {
    if (c.rule.result.kind == ResultKind::Error) error_cells.push_back(std::move(c));
  }
  BOOST_REQUIRE(!error_cells.empty());
  const auto throwing = [](ErrorCode code) -> Evaluate {
    return [code](const Graph&, std::span<const Tensor>) -> std::vector<Tensor> {
      fail(code, "planted refusal");
    };
  };
  for (const MatrixCell& c : error_cells) {
    BOOST_TEST_CONTEXT(c.id) {
      BOOST_TEST((run_matrix_cell(c, throwing(ErrorCode::KernelFailure)).outcome == Outcome::Pass));
      const CaseOutcome missing = run_matrix_cell(c, throwing(ErrorCode::MissingKernel));
      BOOST_TEST((missing.outcome == Outcome::Unsupported));
      BOOST_TEST(missing.message.find("[R-MISSING-KERNEL] planted refusal") != std::string::npos,
                 missing.message);
      for (ErrorCode other : {ErrorCode::VerifyDType, ErrorCode::InvalidArgument}) {
        const CaseOutcome o = run_matrix_cell(c, throwing(other));
        BOOST_TEST((o.outcome == Outcome::FailNumeric));
        BOOST_TEST(o.message.find("expected the kernel to refuse the data (R-KERNEL-FAILURE), "
                                  "got [" +
                                  std::string(error_code_name(other)) + "] planted refusal") !=
                       std::string::npos,
                   o.message);
      }
    }
  }
}

}  // namespace
}  // namespace volta::conformance
