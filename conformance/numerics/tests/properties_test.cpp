// The property suite: one case per (op, property) covering every op, a planted policy
// violation caught with its seed and reproduced by replay, and every property passing at the
// CI iteration count.
#define BOOST_TEST_MODULE properties
#include "volta/conformance/properties.h"

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>
#include <string>

#include "../properties_internal.h"
#include "volta/ir/op_schema.h"

namespace volta::conformance {

std::ostream& operator<<(std::ostream& os, Outcome o) { return os << outcome_name(o); }

namespace {

// A test-only "kernel" that flushes NaN to 0, planted after the engine's Relu.
void flush_nan_to_zero(std::vector<Tensor>& outputs) {
  for (Tensor& t : outputs) {
    if (!is_floating(t.dtype())) continue;
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (std::isnan(t.get_double(i))) t.set_double(i, 0.0);
    }
  }
}

BOOST_AUTO_TEST_CASE(every_op_has_an_engine_reference_property) {
  const std::vector<SuiteCase> cases = property_cases({});
  std::set<std::string> ids;
  std::set<std::string> ops;
  for (const SuiteCase& c : cases) {
    BOOST_TEST(ids.insert(c.case_id).second, "duplicate case id " << c.case_id);
    BOOST_TEST(c.case_id.rfind("property:" + c.op + ":", 0) == 0u, c.case_id);
    BOOST_TEST(
        (c.params.starts_with("seed=") && c.params.find(" iterations=") != std::string::npos),
        c.params);
    if (c.case_id.ends_with(":engine-matches-reference")) ops.insert(c.op);
  }
  BOOST_TEST(ops.size() == static_cast<size_t>(kOpCount));
  BOOST_TEST(ids.contains("property:Add:commutes-bitwise"));
  BOOST_TEST(ids.contains("property:Softmax:rows-sum-to-one"));
  // The bodies run in the suite runner's forked child like any case.
  const CaseOutcome isolated = run_case(cases.front().body, IsolationOptions{});
  BOOST_TEST(isolated.outcome == Outcome::Pass, isolated.message);
}

// The property classes come from the op table's traits (OpSchema::traits), not from lists of ops
// in the property files: a new op gets the properties its traits give without editing them.
BOOST_AUTO_TEST_CASE(every_op_gets_the_properties_its_traits_give) {
  std::set<std::string> ids;
  for (const props::Property& p : props::all_properties()) ids.insert(p.case_id());
  for (const OpSchema& s : all_op_schemas()) {
    const std::string op(s.name);
    BOOST_TEST_CONTEXT(op) {
      BOOST_TEST(ids.contains("property:" + op + ":engine-matches-reference"));
      BOOST_TEST(ids.contains("property:" + op + ":commutes-bitwise") ==
                 s.traits.has(OpTrait::Commutative));
      BOOST_TEST(ids.contains("property:" + op + ":self-is-identity") ==
                 s.traits.has(OpTrait::Idempotent));
      BOOST_TEST(props::redraws_shapes(s.kind, 1) ==
                 (s.traits.has(OpTrait::UnaryElementwise) || s.traits.has(OpTrait::AxisAttribute)));
      BOOST_TEST(props::redraws_shapes(s.kind, 2) == s.traits.has(OpTrait::BroadcastingBinary));
    }
  }
}

BOOST_AUTO_TEST_CASE(iterations_and_seed_options) {
  // The nightly sets VOLTA_PROPERTY_ITERATIONS for the whole binary: put it back afterwards.
  const char* outer = std::getenv("VOLTA_PROPERTY_ITERATIONS");
  const bool had = outer != nullptr;
  const std::string saved = had ? outer : "";
  ::setenv("VOLTA_PROPERTY_ITERATIONS", "7", 1);
  const std::vector<SuiteCase> env = property_cases({});
  BOOST_TEST(env.front().params.ends_with(" iterations=7"), env.front().params);
  ::setenv("VOLTA_PROPERTY_ITERATIONS", "many", 1);
  BOOST_CHECK_THROW(property_cases({}), VoltaError);
  ::unsetenv("VOLTA_PROPERTY_ITERATIONS");
  BOOST_TEST(property_cases({}).front().params.ends_with(" iterations=25"));
  // Each case gets its own seed derived from the run's seed and the case id.
  const std::vector<SuiteCase> a = property_cases({});
  const std::vector<SuiteCase> b = property_cases({.iterations = 25, .seed = 5});
  BOOST_TEST(a.front().params != b.front().params);
  BOOST_TEST(a.front().params == property_cases({}).front().params);
  BOOST_TEST(a[0].params != a[1].params);
  if (had) ::setenv("VOLTA_PROPERTY_ITERATIONS", saved.c_str(), 1);
}

BOOST_AUTO_TEST_CASE(bitwise_difference_treats_nan_payloads_as_equal) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor a = Tensor::from<float>(Shape{3}, {1.0F, nan, 0.0F});
  const Tensor b = Tensor::from<float>(Shape{3}, {1.0F, -nan, 0.0F});
  const Tensor c = Tensor::from<float>(Shape{3}, {1.0F, nan, -0.0F});
  BOOST_TEST(props::bitwise_difference(a, b).empty());
  // +0 and -0 compare equal as numbers but not bitwise.
  BOOST_TEST(props::bitwise_difference(a, c) == "index 2: 0 vs -0");
}

BOOST_AUTO_TEST_CASE(planted_nan_flush_is_caught_and_replayed) {
  const props::Property planted = props::engine_matches_reference(OpKind::Relu, flush_nan_to_zero);
  const CaseOutcome first = props::run_property(planted, 1234, 200);
  BOOST_TEST_MESSAGE(first.message);
  BOOST_TEST(first.outcome == Outcome::FailNumeric);
  BOOST_TEST(first.message.find("seed=1234 iterations=200 failed at iteration") == 0u);
  BOOST_TEST(first.message.find("NaN") != std::string::npos);
  // Shrinking leaves the smallest case that still fails: one NaN.
  BOOST_TEST(first.message.find("=NaN") != std::string::npos);

  const CaseOutcome again = props::replay(planted, first.message);
  BOOST_TEST(again.outcome == Outcome::FailNumeric);
  BOOST_TEST(again.message == first.message);

  // Without the planted flush the same seed passes: the failure was the plant.
  const CaseOutcome honest =
      props::run_property(props::engine_matches_reference(OpKind::Relu), 1234, 200);
  BOOST_TEST(honest.outcome == Outcome::Pass, honest.message);
}

// The Softmax grid stops at rank 3: a rank-4 output only comes from a redrawn shape and axis.
BOOST_AUTO_TEST_CASE(axis_ops_are_drawn_on_random_shapes) {
  const props::Property p =
      props::engine_matches_reference(OpKind::Softmax, [](std::vector<Tensor>& out) {
        if (out[0].shape().rank() == 4) props::fail_case("rank 4 drawn");
      });
  const CaseOutcome out = props::run_property(p, 99, 500);
  BOOST_TEST(out.outcome == Outcome::FailNumeric);
  BOOST_TEST(out.message.find("rank 4 drawn") != std::string::npos, out.message);
}

BOOST_AUTO_TEST_CASE(replay_property_finds_the_case_and_rejects_bad_input) {
  const CaseOutcome out =
      replay_property("property:Add:commutes-bitwise", "seed=7 iterations=5 failed at ...");
  BOOST_TEST(out.outcome == Outcome::Pass, out.message);
  BOOST_TEST(out.message == "seed=7 iterations=5");
  BOOST_CHECK_THROW(replay_property("property:Add:nope", "seed=7 iterations=5"), VoltaError);
  BOOST_CHECK_THROW(replay_property("property:Add:commutes-bitwise", "no seed"), VoltaError);
}

// The CI run: every property at the default iteration count, in this process.
BOOST_AUTO_TEST_CASE(every_property_passes) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<SuiteCase> cases = property_cases({});
  int failures = 0;
  for (const SuiteCase& c : cases) {
    const CaseOutcome out = c.body();
    if (out.outcome != Outcome::Pass) {
      ++failures;
      BOOST_ERROR(c.case_id << ": " << outcome_name(out.outcome) << " " << out.message);
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  BOOST_TEST(failures == 0);
  BOOST_TEST_MESSAGE(cases.size() << " properties, " << failures << " failing, " << seconds
                                  << " s");
}

}  // namespace
}  // namespace volta::conformance
