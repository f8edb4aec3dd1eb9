#define BOOST_TEST_MODULE perf_inputs
// What `volta-audit perf` reads: sample files, the policy table of governance/perf-slo.md, the
// machine fingerprint, and the filter that selects pass 2's suspects.

#include <boost/test/unit_test.hpp>
#include <regex>
#include <sstream>

#include "build_info.h"
#include "perf_machine.h"
#include "perf_policy.h"
#include "perf_run.h"
#include "perf_samples.h"
#include "volta/error.h"

namespace volta::audit {
namespace {

// --- sample files ---

SampleFile parse(const std::string& text, int pass = 1, int process = 0) {
  std::istringstream in(text);
  return parse_sample_file(in, pass, process);
}

void check_refused(const std::string& text, const std::string& message) {
  try {
    parse(text);
    BOOST_ERROR("accepted: " << text);
  } catch (const std::runtime_error& e) {
    BOOST_TEST(e.what() == message);
  }
}

BOOST_AUTO_TEST_CASE(sample_lines_parse_with_every_field) {
  const SampleFile f = parse(
      "sample\tf32_gemm/size:256/threads:1/real_time\t3\t0.00125\t560\tf32_gemm_avx512_14x32\t1\t"
      "26.8\t\t\titems=4;x=1.5\n"
      "\n"
      "sample\tplan/tiny\t0\t1e-05\t70000\tplan\t2\t\t3.5\t4096\t\n"
      "error\tbroken/bench\tno kernel for Foo\n",
      2, 1);
  BOOST_REQUIRE_EQUAL(f.samples.size(), 2u);
  const PerfSample& s = f.samples[0];
  BOOST_TEST(s.benchmark == "f32_gemm/size:256/threads:1/real_time");
  BOOST_TEST(s.pass == 2);
  BOOST_TEST(s.process == 1);
  BOOST_TEST(s.repetition == 3);
  BOOST_TEST(s.seconds == 0.00125);
  BOOST_TEST(s.iterations == 560);
  BOOST_TEST(s.variant == "f32_gemm_avx512_14x32");
  BOOST_TEST(s.threads == 1);
  BOOST_TEST(*s.gflops == 26.8);
  BOOST_TEST(!s.gbytes_per_s.has_value());
  BOOST_TEST(!s.peak_bytes.has_value());
  BOOST_TEST(s.context == "items=4;x=1.5");
  const PerfSample& t = f.samples[1];
  BOOST_TEST(t.seconds == 1e-05);
  BOOST_TEST(t.threads == 2);
  BOOST_TEST(!t.gflops.has_value());
  BOOST_TEST(*t.gbytes_per_s == 3.5);
  BOOST_TEST(*t.peak_bytes == 4096);
  BOOST_REQUIRE_EQUAL(f.errors.size(), 1u);
  BOOST_TEST(f.errors[0].benchmark == "broken/bench");
  BOOST_TEST(f.errors[0].message == "no kernel for Foo");
}

BOOST_AUTO_TEST_CASE(malformed_sample_lines_are_refused_naming_the_line) {
  check_refused("sample\tb\t0\t0.1\t10\tv\t1\t\t\t\n",
                "line 1: a sample line has 11 tab-separated fields, got 10");
  check_refused("\nsample\tb\t0\tfast\t10\tv\t1\t\t\t\t\n",
                "line 2: SECONDS must be a finite number >= 0, got 'fast'");
  check_refused("sample\tb\t0\t0\t10\tv\t1\t\t\t\t\n", "line 1: SECONDS must be positive, got '0'");
  check_refused("sample\tb\t-1\t0.1\t10\tv\t1\t\t\t\t\n",
                "line 1: REPETITION must be an integer >= 0, got '-1'");
  check_refused("sample\tb\t0\t0.1\t0\tv\t1\t\t\t\t\n",
                "line 1: ITERATIONS must be an integer >= 1, got '0'");
  check_refused("sample\tb\t0\t0.1\t10\tv\t0\t\t\t\t\n",
                "line 1: THREADS must be an integer >= 1, got '0'");
  check_refused("sample\tb\t0\t0.1\t10\tv\t1\tnan\t\t\t\n",
                "line 1: GFLOPS must be a finite number >= 0, got 'nan'");
  check_refused("sample\t\t0\t0.1\t10\tv\t1\t\t\t\t\n",
                "line 1: a sample line needs a benchmark name");
  check_refused("error\tb\n",
                "line 1: an error line has 3 tab-separated fields (error, NAME, MESSAGE), got 2");
  check_refused("median\tb\t1\n", "line 1: a line starts with 'sample' or 'error', got 'median'");
}

// --- the policy ---

constexpr std::string_view kHeader =
    "# Perf SLO\n<!-- BEGIN PERF POLICY (read by volta-audit perf) -->\n"
    "| setting | value | reason |\n|---|---|---|\n";
constexpr std::string_view kFooter = "<!-- END PERF POLICY -->\n";

// The counts of samples every table must set, after the rows a test is about (so that their
// line numbers stay 5, 6, ...).
constexpr std::string_view kCounts =
    "| repetitions | 9 | p < alpha needs them |\n| pass2 repetitions | 15 | confirmation |\n";

PerfPolicy policy(const std::string& rows, std::string_view counts = kCounts) {
  std::istringstream in(std::string(kHeader) + rows + std::string(counts) + std::string(kFooter));
  return parse_perf_policy(in, "perf-slo.md");
}

void check_policy_refused(const std::string& rows, const std::string& message,
                          std::string_view counts = kCounts) {
  try {
    policy(rows, counts);
    BOOST_ERROR("accepted: " << rows);
  } catch (const VoltaError& e) {
    BOOST_TEST(std::string(e.what()).find(message) != std::string::npos,
               "'" << e.what() << "' does not contain '" << message << "'");
  }
}

BOOST_AUTO_TEST_CASE(policy_reads_alpha_the_default_and_overrides_in_order) {
  const PerfPolicy p = policy(
      "| alpha | 0.01 | why |\n"
      "| threshold | 5% | default |\n"
      "| threshold f32_gemm/.*size:64/.* | 12.5% | tiny problem, timer noise |\n"
      "| threshold f32_gemm/.* | 8% | shared caches |\n");
  BOOST_TEST(p.alpha == 0.01);
  BOOST_TEST(p.default_threshold == 0.05);
  BOOST_TEST(p.repetitions == 9);
  BOOST_TEST(p.pass2_repetitions == 15);
  BOOST_REQUIRE_EQUAL(p.overrides.size(), 2u);
  BOOST_TEST(p.overrides[0].reason == "tiny problem, timer noise");
  BOOST_TEST(p.overrides[0].line == 7);
  BOOST_TEST(p.threshold_for("f32_gemm/size:64/threads:1/real_time") == 0.125);
  BOOST_TEST(p.threshold_for("f32_gemm/size:256/threads:1/real_time") == 0.08);
  BOOST_TEST(p.threshold_for("softmax/size:64") == 0.05);
  // The pattern must match the whole name.
  BOOST_TEST(p.threshold_for("x/f32_gemm/size:64/") == 0.05);
}

BOOST_AUTO_TEST_CASE(policy_refuses_malformed_rows_naming_file_and_line) {
  check_policy_refused("| alpha | 0.01 | why |\n| threshold | 5% | |\n",
                       "perf-slo.md:6: 'threshold' has no reason; every row needs one");
  check_policy_refused(
      "| alpha | 0.01 | why |\n| threshold | 5% | d |\n| threshold gemm.* | 9% |  |\n",
      "perf-slo.md:7: 'threshold gemm.*' has no reason");
  check_policy_refused("| alpha | 0.01 | why |\n| threshold | 5 | d |\n",
                       "perf-slo.md:6: a threshold is a positive percentage like '5%', got '5'");
  check_policy_refused("| alpha | 0.01 | why |\n| threshold | -1% | d |\n",
                       "perf-slo.md:6: a threshold is a positive percentage");
  check_policy_refused("| alpha | 1.5 | why |\n| threshold | 5% | d |\n",
                       "perf-slo.md:5: alpha must be a number in (0, 1), got '1.5'");
  check_policy_refused("| alpha | 0.01 | why |\n| alpha | 0.05 | again |\n| threshold | 5% | d |\n",
                       "perf-slo.md:6: alpha is set twice (first on line 5)");
  check_policy_refused("| alpha | 0.01 | why |\n| threshold | 5% | d |\n| beta | 1 | x |\n",
                       "perf-slo.md:7: unknown setting 'beta'");
  check_policy_refused("| alpha | 0.01 | why |\n| threshold | 5% | d |\n| threshold ( | 5% | x |\n",
                       "perf-slo.md:7: threshold pattern '(' is not a valid regex");
  // Within std::regex's limits first (its parser overflows on long numbers: perf_policy_fuzz).
  check_policy_refused(
      "| alpha | 0.01 | why |\n| threshold | 5% | d |\n| threshold a{99999999999} | 5% | x |\n",
      "perf-slo.md:7: threshold pattern 'a{99999999999}' has a number of 10 or more digits, "
      "which std::regex cannot read");
  check_policy_refused(
      "| alpha | 0.01 | why |\n| threshold | 5% | d |\n| threshold a | 6% | x |\n"
      "| threshold a | 7% | y |\n",
      "perf-slo.md:8: threshold 'a' is set twice (first on line 7)");
  check_policy_refused("| alpha | 0.01 | why |\n| threshold | 5% |\n",
                       "perf-slo.md:6: a policy row is '| setting | value | reason |'");
  check_policy_refused("| threshold | 5% | d |\n", "the perf policy table does not set alpha");
  check_policy_refused("| alpha | 0.01 | why |\n",
                       "the perf policy table does not set the default threshold");
  const std::string base = "| alpha | 0.01 | why |\n| threshold | 5% | d |\n";
  check_policy_refused(base, "the perf policy table does not set repetitions", "");
  check_policy_refused(base + "| repetitions | 9 | r |\n",
                       "the perf policy table does not set pass2 repetitions", "");
  check_policy_refused(base + "| repetitions | 1 | r |\n",
                       "perf-slo.md:7: repetitions must be a whole number >= 2, got '1'", "");
  check_policy_refused(base + "| pass2 repetitions | x | r |\n",
                       "perf-slo.md:7: pass2 repetitions must be a whole number >= 1, got 'x'", "");
  check_policy_refused(base + "| repetitions | 9 | r |\n| repetitions | 11 | again |\n",
                       "perf-slo.md:8: repetitions is set twice (first on line 7)", "");
  std::istringstream none("# no table here\n");
  BOOST_CHECK_THROW(parse_perf_policy(none, "x.md"), VoltaError);
  std::istringstream open_table(std::string(kHeader) + "| alpha | 0.01 | why |\n");
  BOOST_CHECK_THROW(parse_perf_policy(open_table, "x.md"), VoltaError);
}

BOOST_AUTO_TEST_CASE(the_committed_policy_parses_and_every_override_has_a_reason) {
  const PerfPolicy p =
      load_perf_policy(std::string(build::kSourceDir) + "/" + std::string(kPerfPolicyFile));
  BOOST_TEST(p.alpha > 0);
  BOOST_TEST(p.alpha < 1);
  BOOST_TEST(p.default_threshold == 0.05);
  BOOST_TEST(p.repetitions >= 9);  // the double pass's own minimum (DESIGN.md)
  BOOST_TEST(p.pass2_repetitions >= 1);
  for (const ThresholdOverride& o : p.overrides) BOOST_TEST(!o.reason.empty());
}

// --- the machine fingerprint ---

BOOST_AUTO_TEST_CASE(fingerprint_isa_keeps_the_flags_that_matter_in_a_fixed_order) {
  const std::string cpuinfo =
      "processor\t: 0\nmodel name\t: Test CPU\nflags\t\t: fpu sse4_2 avx512f fma avx2 mmx "
      "avx512bw avx512_bf16 amx_tile\nprocessor\t: 1\nflags\t\t: fpu\n";
  const std::vector<std::string> expected = {"sse4_2",   "avx2",        "fma",     "avx512f",
                                             "avx512bw", "avx512_bf16", "amx_tile"};
  BOOST_TEST(fingerprint_isa(cpuinfo) == expected, boost::test_tools::per_element());
  BOOST_TEST(fingerprint_isa("model name : x\n").empty());
}

BOOST_AUTO_TEST_CASE(fingerprint_key_names_cpu_isa_cores_compiler_and_build) {
  const MachineFingerprint f{.cpu_model = "AMD EPYC",
                             .isa = {"avx2", "fma"},
                             .cores = 2,
                             .binary = {.build_type = "Release", .compiler = "GNU 12.2.0"}};
  BOOST_TEST(f.key() == "cpu=AMD EPYC;isa=avx2,fma;cores=2;compiler=GNU 12.2.0;build=Release");
  const MachineFingerprint here = machine_fingerprint(f.binary);
  BOOST_TEST(here.cores >= 1);
  BOOST_TEST(!here.cpu_model.empty());
  BOOST_TEST(std::regex_match(here.key(), std::regex("cpu=[^;]+;isa=[a-z0-9_,]+;cores=[0-9]+;"
                                                     "compiler=GNU 12.2.0;build=Release")));
}

BOOST_AUTO_TEST_CASE(binary_description_needs_build_compiler_and_commit) {
  const BinaryDescription d = parse_binary_description(
      "build_type\tRelease\ncompiler\tGNU 12.2.0\ncommit\tabc123\ndirty\t1\n");
  BOOST_TEST(d.build_type == "Release");
  BOOST_TEST(d.compiler == "GNU 12.2.0");
  BOOST_TEST(d.commit == "abc123");
  BOOST_TEST(d.dirty);
  BOOST_TEST(!parse_binary_description("build_type\tR\ncompiler\tc\ncommit\ta\ndirty\t0\n").dirty);
  BOOST_CHECK_THROW(parse_binary_description("build_type\tRelease\n"), VoltaError);
  // A volta-perf that does not say its commit cannot be held to the commit under test.
  BOOST_CHECK_THROW(parse_binary_description("build_type\tRelease\ncompiler\tGNU 12.2.0\n"),
                    VoltaError);
  BOOST_CHECK_THROW(parse_binary_description("Usage: benchmark [--benchmark_list_tests...]"),
                    VoltaError);
}

// --- pass 2's filter ---

BOOST_AUTO_TEST_CASE(exact_name_filter_escapes_and_anchors) {
  const std::string filter =
      exact_name_filter({"f32_gemm/size:256/threads:1/real_time", "model/a.b(c)+[d]"});
  BOOST_TEST(filter == "^(f32_gemm/size:256/threads:1/real_time|model/a\\.b\\(c\\)\\+\\[d\\])$");
  const std::regex re(filter);
  BOOST_TEST(std::regex_match("model/a.b(c)+[d]", re));
  BOOST_TEST(!std::regex_match("model/aXb(c)+[d]", re));
  BOOST_TEST(!std::regex_match("f32_gemm/size:256/threads:1/real_time/x", re));
}

BOOST_AUTO_TEST_CASE(a_process_reports_exit_status_and_output) {
  const ProcessOutcome ok = run_process({"sh", "-c", "echo out; echo err >&2"});
  BOOST_TEST(ok.ok());
  BOOST_TEST(ok.output == "out\nerr\n");
  const ProcessOutcome failed = run_process({"sh", "-c", "exit 3"});
  BOOST_TEST(!failed.ok());
  BOOST_TEST(failed.describe() == "exit 3");
  const ProcessOutcome killed = run_process({"sh", "-c", "kill -9 $$"});
  BOOST_TEST(killed.describe().starts_with("signal 9"));
  const ProcessOutcome missing = run_process({"/no/such/volta-perf"});
  BOOST_TEST(!missing.started);
}

}  // namespace
}  // namespace volta::audit
