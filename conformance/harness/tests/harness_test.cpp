// The harness's judgement: expectations and verdicts, case isolation, and the runner.
#define BOOST_TEST_MODULE harness
#include <signal.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "volta/conformance/expectations.h"
#include "volta/conformance/isolation.h"
#include "volta/conformance/runner.h"
#include "volta/error.h"

namespace volta::conformance {

std::ostream& operator<<(std::ostream& os, Outcome o) { return os << outcome_name(o); }
std::ostream& operator<<(std::ostream& os, Verdict v) { return os << verdict_name(v); }

namespace {

constexpr std::string_view kToday = "2026-06-15";

Expectation expect(Outcome outcome, std::string expires = "2027-01-01") {
  return {"Op(*)", outcome, "known bug", "#1", std::move(expires), 1};
}

BOOST_AUTO_TEST_CASE(outcome_and_verdict_names_round_trip) {
  for (int i = 0; i < kOutcomeCount; ++i) {
    const auto o = static_cast<Outcome>(i);
    BOOST_TEST((parse_outcome(outcome_name(o)) == o));
  }
  for (Verdict v :
       {Verdict::Expected, Verdict::Unexpected, Verdict::UnexpectedPass, Verdict::Expired}) {
    BOOST_TEST((parse_verdict(verdict_name(v)) == v));
  }
  BOOST_TEST(!parse_outcome("FAIL").has_value());
}

// Every outcome against: no expectation, an expectation of the same outcome, an expectation
// of another outcome, and an expired expectation.
BOOST_AUTO_TEST_CASE(verdict_for_every_outcome_and_expectation) {
  for (int i = 0; i < kOutcomeCount; ++i) {
    const auto o = static_cast<Outcome>(i);
    BOOST_TEST_CONTEXT(outcome_name(o)) {
      // Without an expectation only a PASS is expected, and a SKIPPED whose case declared the
      // precondition it lacks; a skip that says nothing is not a reason.
      const Verdict none = verdict_for(o, nullptr, kToday);
      BOOST_TEST(none == (o == Outcome::Pass ? Verdict::Expected : Verdict::Unexpected));
      const Verdict declared = verdict_for(o, nullptr, kToday, true);
      const bool fine_declared = o == Outcome::Pass || o == Outcome::Skipped;
      BOOST_TEST(declared == (fine_declared ? Verdict::Expected : Verdict::Unexpected));

      if (o != Outcome::Pass) {
        const Expectation same = expect(o);
        BOOST_TEST(verdict_for(o, &same, kToday) == Verdict::Expected);
      }
      const Expectation other = expect(o == Outcome::Crash ? Outcome::Timeout : Outcome::Crash);
      BOOST_TEST(verdict_for(o, &other, kToday) ==
                 (o == Outcome::Pass ? Verdict::UnexpectedPass : Verdict::Unexpected));
      // A declared precondition's skip is expected whatever the case would give where it runs.
      const Verdict other_declared = verdict_for(o, &other, kToday, true);
      BOOST_TEST(other_declared == (o == Outcome::Pass      ? Verdict::UnexpectedPass
                                    : o == Outcome::Skipped ? Verdict::Expected
                                                            : Verdict::Unexpected));

      const Expectation expired = expect(o == Outcome::Pass ? Outcome::Crash : o, "2026-06-14");
      BOOST_TEST(verdict_for(o, &expired, kToday) == Verdict::Expired);
    }
  }
}

BOOST_AUTO_TEST_CASE(an_expectation_is_valid_through_its_expiry_day) {
  const Expectation e = expect(Outcome::FailNumeric, std::string(kToday));
  BOOST_TEST(verdict_for(Outcome::FailNumeric, &e, kToday) == Verdict::Expected);
  BOOST_TEST(verdict_for(Outcome::FailNumeric, &e, "2026-06-16") == Verdict::Expired);
}

BOOST_AUTO_TEST_CASE(glob_patterns) {
  BOOST_TEST(glob_match("Softmax(*)", "Softmax(axis=-1,shape=[3,5],dtype=f32)"));
  BOOST_TEST(glob_match("*dtype=f64)", "Add(shape=[3]x[3],dtype=f64)"));
  BOOST_TEST(glob_match("*", ""));
  BOOST_TEST(glob_match("A*B*C", "AxxBxxC"));
  BOOST_TEST(!glob_match("A*B*C", "AxxBxx"));
  BOOST_TEST(!glob_match("Softmax(*)", "LogSoftmax(axis=0)"));
  BOOST_TEST(glob_match("exact", "exact"));
  BOOST_TEST(!glob_match("exact", "exactly"));
}

BOOST_AUTO_TEST_CASE(first_matching_expectation_wins) {
  const std::vector<Expectation> list = {
      {"Add(*dtype=i32)", Outcome::FailNumeric, "r", "#1", "2027-01-01", 1},
      {"Add(*)", Outcome::Crash, "r", "#2", "2027-01-01", 2}};
  BOOST_TEST(match_expectation(list, "Add(shape=[3],dtype=i32)")->issue == "#1");
  BOOST_TEST(match_expectation(list, "Add(shape=[3],dtype=f32)")->issue == "#2");
  BOOST_TEST(match_expectation(list, "Sub(shape=[3],dtype=f32)") == nullptr);
}

BOOST_AUTO_TEST_CASE(expectation_files_parse_and_reject_bad_lines) {
  const auto parsed = parse_expectations(
      "# comment\n\nGather(*)\tFAIL_NUMERIC\tindex bug\t#12\t2027-03-01\n", "parity.tsv");
  BOOST_TEST(parsed.size() == 1u);
  BOOST_TEST(parsed[0].outcome == Outcome::FailNumeric);
  BOOST_TEST(parsed[0].line == 3);
  const auto rejects = [](std::string_view text, std::string_view fragment) {
    try {
      parse_expectations(text, "s.tsv");
      BOOST_ERROR("accepted: " << text);
    } catch (const VoltaError& e) {
      BOOST_TEST(std::string(e.what()).find(fragment) != std::string::npos, e.what());
    }
  };
  rejects("A\tFAIL_NUMERIC\treason\t#1\n", "s.tsv:1: expected 5 tab-separated fields, found 4");
  rejects("A\tPASS\treason\t#1\t2027-01-01\n", "'PASS' is not an expectable outcome");
  rejects("A\tBROKEN\treason\t#1\t2027-01-01\n", "'BROKEN' is not an expectable outcome");
  rejects("A\tCRASH\treason\t#1\t2027-13-01\n", "expiry '2027-13-01' is not a YYYY-MM-DD date");
  rejects("A\tCRASH\t\t#1\t2027-01-01\n", "pattern, reason and issue must not be empty");
}

BOOST_AUTO_TEST_CASE(outcomes_survive_the_wire_exactly) {
  CaseOutcome o;
  o.outcome = Outcome::FailNumeric;
  o.max_abs = 0.1;  // not exact in decimal: hex floats keep every bit
  o.max_ulp = 3;
  o.tolerance_key = "linalg/f32/cpu:reference";
  o.message = "line one\nline two \\ with a backslash";
  o.duration_ms = 1.25;
  const std::optional<CaseOutcome> back = deserialize(serialize(o));
  BOOST_REQUIRE(back.has_value());
  BOOST_TEST(back->outcome == Outcome::FailNumeric);
  BOOST_TEST(*back->max_abs == 0.1);
  BOOST_TEST(!back->max_rel.has_value());
  BOOST_TEST(back->message == o.message);
  BOOST_TEST(back->tolerance_key == o.tolerance_key);
  BOOST_TEST(!deserialize("outcome=PASS\n").has_value());  // truncated: no "end"
}

BOOST_AUTO_TEST_CASE(traces_and_not_bit_exact_survive_the_wire_exactly) {
  CaseOutcome o;
  o.outcome = Outcome::Pass;
  o.not_bit_exact =
      "node 'a' (ReduceSum, kernel k1, run-to-run); node 'b' (Gemm, kernel k2, "
      "run-to-run)";
  NodeTraceRow full;
  full.subject = "onnx:test_add";
  full.step = 3;
  full.node = "odd\tname\\with\nescapes";  // the wire's separators inside a field
  full.op = "Add";
  full.kernel = "f32_add_avx2";
  full.determinism = "bit-exact";
  full.origin = "";
  full.output = 1;
  full.dtype = "f32";
  full.shape = "[2,3]";
  full.hash = "0123456789abcdef";
  full.data =
      std::vector<std::byte>{std::byte{0x00}, std::byte{0xff}, std::byte{0x3f}, std::byte{0x80}};
  NodeTraceRow hash_only = full;
  hash_only.step = 4;
  hash_only.output = 0;
  hash_only.data.reset();
  NodeTraceRow empty = full;
  empty.step = 5;
  empty.data = std::vector<std::byte>{};
  o.traces = {full, hash_only, empty};

  const std::optional<CaseOutcome> back = deserialize(serialize(o));
  BOOST_REQUIRE(back.has_value());
  BOOST_TEST(back->not_bit_exact == o.not_bit_exact);
  BOOST_REQUIRE(back->traces.size() == 3u);
  for (size_t i = 0; i < 3; ++i) {
    const NodeTraceRow& want = o.traces[i];
    const NodeTraceRow& got = back->traces[i];
    BOOST_TEST(got.subject == want.subject);
    BOOST_TEST(got.step == want.step);
    BOOST_TEST(got.node == want.node);
    BOOST_TEST(got.op == want.op);
    BOOST_TEST(got.kernel == want.kernel);
    BOOST_TEST(got.determinism == want.determinism);
    BOOST_TEST(got.origin == want.origin);
    BOOST_TEST(got.output == want.output);
    BOOST_TEST(got.dtype == want.dtype);
    BOOST_TEST(got.shape == want.shape);
    BOOST_TEST(got.hash == want.hash);
    BOOST_TEST((got.data == want.data), "trace " << i);
  }
  // A malformed trace line makes the whole report unreadable, not a half-read row; the same
  // line well formed is read.
  const std::optional<CaseOutcome> handwritten =
      deserialize("outcome=PASS\ntrace=s\tn\to\tk\td\tr\tf32\t[1]\th\t7\t0\t00\nend\n");
  BOOST_REQUIRE(handwritten.has_value());
  BOOST_REQUIRE(handwritten->traces.size() == 1u);
  BOOST_TEST(handwritten->traces[0].step == 7);
  BOOST_TEST((handwritten->traces[0].data == std::vector<std::byte>{std::byte{0}}));
  BOOST_TEST(!deserialize("outcome=PASS\ntrace=a\tb\nend\n").has_value());
  BOOST_TEST(!deserialize("outcome=PASS\ntrace=s\tn\to\tk\td\tr\tf32\t[1]\th\tx\t0\t00\nend\n")
                  .has_value());  // step "x"
  BOOST_TEST(!deserialize("outcome=PASS\ntrace=s\tn\to\tk\td\tr\tf32\t[1]\th\t0\t0\t0g\nend\n")
                  .has_value());  // data "0g"
}

BOOST_AUTO_TEST_CASE(isolated_cases_report_crashes_timeouts_and_errors) {
  const IsolationOptions opts{true, 2.0};
  const CaseOutcome pass = run_case([] { return CaseOutcome{Outcome::Pass}; }, opts);
  BOOST_TEST(pass.outcome == Outcome::Pass);

  const CaseOutcome crash = run_case(
      []() -> CaseOutcome {
        raise(SIGSEGV);
        return {};
      },
      opts);
  BOOST_TEST(crash.outcome == Outcome::Crash);
  BOOST_TEST(crash.message.find("signal 11") == 0, crash.message);

  const CaseOutcome hang = run_case(
      []() -> CaseOutcome {
        std::this_thread::sleep_for(std::chrono::seconds(30));
        return {Outcome::Pass};
      },
      {true, 0.5});
  BOOST_TEST(hang.outcome == Outcome::Timeout);
  BOOST_TEST(hang.message == "killed after 0.5 s");
  BOOST_TEST(hang.duration_ms < 10000.0);

  const CaseOutcome thrown =
      run_case([]() -> CaseOutcome { throw std::runtime_error("bad input"); }, opts);
  BOOST_TEST(thrown.outcome == Outcome::Error);
  BOOST_TEST(thrown.message == "bad input");

  const CaseOutcome silent = run_case([]() -> CaseOutcome { _exit(3); }, opts);
  BOOST_TEST(silent.outcome == Outcome::Error);
  BOOST_TEST(silent.message == "the isolated case exited with status 3 without reporting a result");
}

BOOST_AUTO_TEST_CASE(unisolated_cases_run_in_process) {
  int calls = 0;
  const CaseOutcome o = run_case(
      [&calls] {
        ++calls;
        return CaseOutcome{Outcome::Skipped};
      },
      {false, 1.0});
  BOOST_TEST(calls == 1);  // the side effect is visible: it ran here, not in a child
  BOOST_TEST(o.outcome == Outcome::Skipped);
}

// A suite with a passing case, a crashing one, an expected failure and an expectation that
// names a case the suite no longer has, recorded into a fresh store.
BOOST_AUTO_TEST_CASE(runner_records_verdicts_and_missing_cases) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("volta-harness-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "demo.tsv") << "Known(1)\tFAIL_NUMERIC\tknown bug\t#7\t2099-01-01\n"
                                  << "Gone(1)\tFAIL_NUMERIC\tcase was renamed\t#8\t2099-01-01\n";
  auto make = [](std::string id, Outcome outcome) {
    return SuiteCase{"elementwise", "Op", "cpu", std::move(id), "", [outcome] {
                       CaseOutcome o;
                       o.outcome = outcome;
                       return o;
                     }};
  };
  const std::vector<SuiteCase> cases = {make("Good(1)", Outcome::Pass),
                                        make("Bad(1)", Outcome::Crash),
                                        make("Known(1)", Outcome::FailNumeric)};
  ResultStore store((dir / "r.db").string());
  const int64_t run =
      store.begin_run(RunInfo{"abc", false, "t", "c", "cpu", 1, "cpu", "m", "demo", "x"});
  RunOptions options;
  options.expectations_dir = dir.string();
  options.isolation.isolate = false;
  const SuiteSummary s = run_suite(store, run, "demo", cases, options);
  store.finish_run(run);
  BOOST_TEST(s.cases == 4);       // three cases and one MISSING
  BOOST_TEST(s.unexpected == 2);  // the crash, and Gone(1) missing instead of failing
  Statement q = store.db().prepare(
      "SELECT c.case_id, r.outcome, r.verdict FROM result r JOIN test_case c ON c.id = r.case_ref "
      "ORDER BY c.case_id");
  std::vector<std::string> rows;
  while (q.step())
    rows.push_back(q.column_text(0) + " " + q.column_text(1) + " " + q.column_text(2));
  const std::vector<std::string> want = {"Bad(1) CRASH unexpected", "Gone(1) MISSING unexpected",
                                         "Good(1) PASS expected", "Known(1) FAIL_NUMERIC expected"};
  BOOST_TEST(rows == want, boost::test_tools::per_element());
  std::filesystem::remove_all(dir);
}

// A backend's own file (DIR/BACKEND/SUITE.tsv) applies to runs on that backend only, ahead of
// the common file: an op without a CUDA kernel is expected UNSUPPORTED on cuda, while the same
// case must still PASS on the cpu.
BOOST_AUTO_TEST_CASE(a_backends_own_expectations_apply_to_its_runs_only) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("volta-harness-be-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir / "cuda");
  std::ofstream(dir / "demo.tsv") << "Pow(*\tFAIL_NUMERIC\tcommon\t#1\t2099-01-01\n";
  std::ofstream(dir / "cuda" / "demo.tsv")
      << "Pow(*\tUNSUPPORTED\tno CUDA kernel yet\t#18\t2099-01-01\n";
  BOOST_TEST(backend_expectations_path(dir.string(), "demo", "cuda") ==
             (dir / "cuda" / "demo.tsv").string());
  const std::vector<Expectation> cpu = load_expectations(dir.string(), "demo", "cpu");
  BOOST_TEST_REQUIRE(cpu.size() == 1u);
  BOOST_TEST(cpu[0].reason == "common");
  const std::vector<Expectation> cuda = load_expectations(dir.string(), "demo", "cuda");
  BOOST_TEST_REQUIRE(cuda.size() == 2u);
  const Expectation* first = match_expectation(cuda, "Pow(x)");
  BOOST_TEST_REQUIRE(first != nullptr);
  BOOST_TEST(first->reason == "no CUDA kernel yet");
  BOOST_TEST(first->file == (dir / "cuda" / "demo.tsv").string());

  auto unsupported = [](std::string backend) {
    return SuiteCase{"elementwise", "Pow", std::move(backend), "Pow(x)", "", [] {
                       CaseOutcome o;
                       o.outcome = Outcome::Unsupported;
                       return o;
                     }};
  };
  ResultStore store((dir / "r.db").string());
  RunOptions options;
  options.expectations_dir = dir.string();
  options.isolation.isolate = false;
  const int64_t cuda_run =
      store.begin_run(RunInfo{"abc", false, "t", "c", "cpu", 1, "cuda", "m", "demo", "x"});
  BOOST_TEST(run_suite(store, cuda_run, "demo", {unsupported("cuda")}, options).unexpected == 0);
  const int64_t cpu_run =
      store.begin_run(RunInfo{"abc", false, "t", "c", "cpu", 1, "cpu", "m", "demo", "x"});
  BOOST_TEST(run_suite(store, cpu_run, "demo", {unsupported("cpu")}, options).unexpected == 1);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace volta::conformance
