// Every op of the op table: engine CPU against the reference engine over the parity grids,
// judged by the one tolerance table. Each op is its own test case, so a failure names the op,
// and every failing case is reported by its canonical id.
#define BOOST_TEST_MODULE parity
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include "volta/conformance/parity_cases.h"
#include "volta/conformance/parity_suite.h"
#include "volta/conformance/tolerance.h"
#include "volta/reference/reference.h"
#include "volta/runtime/forwarding_backend.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta::conformance {
namespace {

const Backend& cpu() {
  static const std::unique_ptr<Backend> backend = make_backend("cpu");
  return *backend;
}

void check_case(const ParityCase& c) {
  BOOST_TEST_CONTEXT(c.id) {
    const ExecutionPlan plan = compile(c.graph, cpu(), DeterminismMode::Strict);
    const std::unique_ptr<ExecutionContext> one_context = cpu().make_context({.threads = 1});
    ExecutionContext& one = *one_context;
    const std::unique_ptr<ExecutionContext> three_context = cpu().make_context({.threads = 3});
    ExecutionContext& three = *three_context;
    const std::vector<Tensor> got = execute(plan, cpu(), one, c.inputs);
    const std::vector<Tensor> again = execute(plan, cpu(), three, c.inputs);
    const std::vector<Tensor> want = reference::evaluate(c.graph, c.inputs);
    BOOST_REQUIRE_EQUAL(got.size(), want.size());
    const OpFamily family = op_schema(c.op).family;
    for (size_t i = 0; i < got.size(); ++i) {
      BOOST_CHECK_MESSAGE(got[i].bit_equal(again[i]),
                          "output " << i << " differs between 1 and 3 threads");
      const Tolerance tol =
          ToleranceTable::builtin().lookup(family, want[i].dtype(), "cpu:reference");
      const Comparison cmp = compare(got[i], want[i], tol);
      BOOST_CHECK_MESSAGE(cmp.passed(), "output " << i << " " << mismatch_name(cmp.mismatch)
                                                  << " mismatch: " << cmp.detail);
    }
  }
}

// Every dtype an op's type constraints allow appears in its grid, bound to each parameter.
void check_dtype_coverage(OpKind op, const std::vector<ParityCase>& cases) {
  const OpSchema& schema = op_schema(op);
  std::map<char, std::set<DType>> seen;
  for (const ParityCase& c : cases) {
    const Node& node = c.graph.node(0);
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (!node.inputs[i].valid()) continue;
      const InputSpec& spec = schema.inputs[std::min(i, schema.inputs.size() - 1)];
      seen[spec.type_param].insert(c.graph.value(node.inputs[i]).dtype);
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      const OutputSpec& spec = schema.outputs[std::min(i, schema.outputs.size() - 1)];
      if (spec.type_param != 0) seen[spec.type_param].insert(c.graph.value(node.outputs[i]).dtype);
    }
  }
  for (const TypeParam& p : schema.type_params) {
    if (!seen.contains(p.name)) continue;  // a parameter no operand of this op uses
    for (int d = 0; d < kDTypeCount; ++d) {
      const auto dtype = static_cast<DType>(d);
      BOOST_CHECK_MESSAGE(
          !p.allowed.contains(dtype) || seen[p.name].contains(dtype),
          schema.name << ": no parity case binds " << p.name << " to " << dtype_name(dtype));
    }
  }
}

const std::vector<ParityCase>& all_cases() {
  static const std::vector<ParityCase> kCases = parity_cases();
  return kCases;
}

void check_op(OpKind op) {
  std::vector<ParityCase> cases;
  for (const ParityCase& c : all_cases()) {
    if (c.op == op) cases.push_back(c);
  }
  BOOST_REQUIRE_MESSAGE(!cases.empty(), op_name(op) << " has no parity cases");
  BOOST_REQUIRE_MESSAGE(cpu().capabilities()[static_cast<size_t>(op_index(op))].supported,
                        op_name(op) << " has no CPU kernel");
  BOOST_REQUIRE_MESSAGE(reference::reference_kernel(op) != nullptr,
                        op_name(op) << " has no reference kernel");
  check_dtype_coverage(op, cases);
  for (const ParityCase& c : cases) check_case(c);
}

// A backend that cannot run here (not built in, or built with no device: R-NO-DEVICE) makes
// every parity case SKIPPED with the reason under the declared precondition, never an error.
BOOST_AUTO_TEST_CASE(cases_of_a_backend_that_cannot_run_here_are_skipped_with_the_reason) {
  BOOST_TEST(!backend_unavailable("cpu").has_value());
  BOOST_TEST(backend_unavailable("tpu").value_or("") == "no tpu backend in this build");
  const std::optional<std::string> cuda = backend_unavailable("cuda");
  if (!cuda) return;  // a usable CUDA device: its cases run (the cuda lane covers them)
  const std::vector<SuiteCase> cases = parity_suite("cuda", 1);
  BOOST_REQUIRE(!cases.empty());
  for (const size_t i : {size_t{0}, cases.size() / 2, cases.size() - 1}) {
    const CaseOutcome o = cases[i].body();
    BOOST_TEST((o.outcome == Outcome::Skipped), cases[i].case_id);
    BOOST_TEST(o.message.starts_with(*cuda), o.message);
    BOOST_TEST(cases[i].precondition == std::string(kCudaPrecondition));
  }
}

// The CPU backend standing in for the CUDA one (named "cuda", so the cuda:reference tolerance
// rows judge it), claiming the CPU's bits for Add and Sqrt (but for the dtypes `left_out`), with
// one element of every f32 Add result off by one ULP: within the tolerance against the
// reference, but a broken claim.
class OffByOneUlpAdd final : public ForwardingBackend {
 public:
  explicit OffByOneUlpAdd(CrossBackendExactness claim, DTypeSet left_out = {})
      : ForwardingBackend(make_backend("cpu"), "cuda"), claim_(claim), left_out_(left_out) {}
  Capabilities capabilities() const override {
    Capabilities caps = inner().capabilities();
    for (OpKind op : {OpKind::Add, OpKind::Sqrt}) {
      caps[static_cast<size_t>(op_index(op))].cpu_exactness = claim_;
      caps[static_cast<size_t>(op_index(op))].cpu_tolerance_dtypes = left_out_;
    }
    return caps;
  }
  void run_kernel(const KernelChoice& kernel, const Node& node,
                  std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs,
                  MemoryRegion workspace, ExecutionContext& ctx) const override {
    inner().run_kernel(kernel, node, inputs, outputs, workspace, ctx);
    if (node.op == OpKind::Add && outputs[0].dtype == DType::F32 && outputs[0].numel() > 1) {
      float& y = outputs[0].as<float>()[1];
      y = std::nextafter(y, std::numeric_limits<float>::infinity());
    }
  }

 private:
  CrossBackendExactness claim_;
  DTypeSet left_out_;
};

const ParityCase& first_case_of(OpKind op, DType dtype) {
  for (const ParityCase& c : all_cases()) {
    if (c.op == op && c.inputs.at(0).dtype() == dtype && c.inputs.at(0).numel() > 1) return c;
  }
  throw std::logic_error("no parity case");
}

BOOST_AUTO_TEST_CASE(a_claim_of_the_cpus_bits_is_checked_bit_for_bit) {
  const ParityCase& add = first_case_of(OpKind::Add, DType::F32);
  const CaseOutcome broken =
      run_parity_case(add, OffByOneUlpAdd(CrossBackendExactness::Bitwise), 1);
  BOOST_TEST((broken.outcome == Outcome::FailNumeric), broken.message);
  BOOST_TEST(broken.message.starts_with("claimed bitwise equal to the CPU backend, but output 0 "
                                        "element 1: 0x"),
             broken.message);
  // Without the claim the same result is judged by the tolerance table alone, and passes.
  const CaseOutcome unclaimed =
      run_parity_case(add, OffByOneUlpAdd(CrossBackendExactness::NotClaimed), 1);
  BOOST_TEST((unclaimed.outcome == Outcome::Pass), unclaimed.message);
  // Nor is it held to a claim that leaves its dtype out (a kernel on another math library).
  const CaseOutcome left_out =
      run_parity_case(add, OffByOneUlpAdd(CrossBackendExactness::Bitwise, DTypeSet{DType::F32}), 1);
  BOOST_TEST((left_out.outcome == Outcome::Pass), left_out.message);
  const CaseOutcome other_left_out =
      run_parity_case(add, OffByOneUlpAdd(CrossBackendExactness::Bitwise, DTypeSet{DType::F64}), 1);
  BOOST_TEST((other_left_out.outcome == Outcome::FailNumeric), other_left_out.message);
  // A claim the kernel keeps passes.
  const CaseOutcome kept = run_parity_case(first_case_of(OpKind::Sqrt, DType::F32),
                                           OffByOneUlpAdd(CrossBackendExactness::Bitwise), 1);
  BOOST_TEST((kept.outcome == Outcome::Pass), kept.message);
}

BOOST_AUTO_TEST_CASE(case_ids_are_unique) {
  std::set<std::string> ids;
  for (const ParityCase& c : all_cases()) {
    BOOST_CHECK_MESSAGE(ids.insert(c.id).second, "duplicate parity case id " << c.id);
  }
}

}  // namespace

// One test case per op, named after it: `parity_test -t Softmax` runs one op's grid.
bool register_op_cases() {
  auto& suite = boost::unit_test::framework::master_test_suite();
  for (int i = 0; i < kOpCount; ++i) {
    const auto op = static_cast<OpKind>(i);
    suite.add(boost::unit_test::make_test_case([op] { check_op(op); }, std::string(op_name(op)),
                                               __FILE__, __LINE__));
  }
  return true;
}

}  // namespace volta::conformance

namespace {
struct RegisterOpCases {
  RegisterOpCases() { volta::conformance::register_op_cases(); }
} const register_op_cases_at_startup;
}  // namespace
