// `volta-audit diff` end to end: the built binary on a temporary database whose runs carry
// planted node traces. Checks what it prints and its exit status.
#define BOOST_TEST_MODULE diff
#include <bit>
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "store_builder.h"
#include "volta/conformance/trace_store.h"
#include "volta_audit_binary.h"

namespace volta::audit {
namespace {

using conformance::NodeTraceRow;
using testing::RunEnd;
using testing::TempStore;

using Result = testing::ProcessResult;
using testing::quoted;
using testing::volta_audit;

std::vector<std::byte> floats(std::initializer_list<float> values) {
  std::vector<std::byte> out(values.size() * sizeof(float));
  std::memcpy(out.data(), std::data(values), out.size());
  return out;
}

NodeTraceRow trace(std::string subject, int step, std::string node, std::string op,
                   std::vector<std::byte> data) {
  NodeTraceRow r;
  r.subject = std::move(subject);
  r.step = step;
  r.node = std::move(node);
  r.op = std::move(op);
  r.kernel = "f32_" + r.op + "_avx2";
  r.determinism = "bit-exact";
  r.output = 0;
  r.dtype = "f32";
  r.shape = "[2,2]";
  // FNV-1a over the bytes stands in for the engine's hash: 16 hex digits, distinct per bytes.
  uint64_t hash = 0xcbf29ce484222325ull;
  for (const std::byte b : data) hash = (hash ^ std::to_integer<uint64_t>(b)) * 0x100000001b3ull;
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  r.hash = text;
  r.data = std::move(data);
  return r;
}

// Two subjects; `flip` plants the suite's divergence: the lowest bit of element 0 of node
// 'act' flips, and the step after it follows.
std::vector<NodeTraceRow> traces(bool flip) {
  const float act0 = flip ? std::bit_cast<float>(std::bit_cast<uint32_t>(0.75f) ^ 1u) : 0.75f;
  std::vector<NodeTraceRow> rows = {
      trace("model:mlp", 0, "proj", "MatMul", floats({1, 2, 3, 4})),
      trace("model:mlp", 1, "bias", "Add", floats({1.5f, 2, 3, 4})),
      trace("model:mlp", 2, "act", "Relu", floats({act0, 2, 3, 4})),
      trace("model:mlp", 3, "out", "MatMul", floats({flip ? 9.5f : 9, 8, 7, 6})),
      trace("onnx:test_add", 0, "add", "Add", floats({0, 1, 2, 3})),
  };
  rows[1].origin = "fuse-bias";
  return rows;
}

int64_t traced_run(TempStore& t, const std::vector<NodeTraceRow>& rows) {
  const int64_t run = t.add_run({}, {.end = RunEnd::Running});
  if (!rows.empty()) conformance::record_traces(t.store(), run, rows);
  t.store().finish_run(run);
  return run;
}

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

struct Fixture {
  TempStore t;
  int64_t baseline = traced_run(t, traces(false));
  int64_t planted = traced_run(t, traces(true));
  int64_t again = traced_run(t, traces(false));
  int64_t untraced = traced_run(t, {});
  std::string db = " --db " + quoted(t.path());

  std::string diff(int64_t a, int64_t b, const std::string& more = "") const {
    return "diff " + std::to_string(a) + " " + std::to_string(b) + db + more;
  }
};

BOOST_AUTO_TEST_CASE(a_planted_divergence_is_named_and_exits_1) {
  const Fixture f;
  const Result r = volta_audit(f.diff(f.baseline, f.planted));
  BOOST_TEST_MESSAGE(r.output);
  BOOST_TEST(r.status == 1);
  BOOST_TEST(r.output.starts_with("A = run 1, B = run 2\n\n"
                                  "subject model:mlp: first divergence at step 2: node 'act' "
                                  "(Relu)\n"
                                  "  kernel: f32_Relu_avx2 (bit-exact) in both runs\n"
                                  "  produced by: the frontend that built the graph\n"
                                  "  output 0: f32 [2,2]\n"),
             r.output);
  BOOST_TEST(contains(r.output,
                      "  first element: element 0 [0,0]: 0.75 (0x3f400000) vs 0.75000006 "
                      "(0x3f400001)\n"),
             r.output);
  BOOST_TEST(!contains(r.output, "node 'out'"));  // what follows the divergence is not named
  BOOST_TEST(!contains(r.output, "onnx:test_add"));
  BOOST_TEST(r.output.ends_with("\ndiff: 2 subjects, 4 node outputs compared, 1 diverge\n"),
             r.output);
}

BOOST_AUTO_TEST_CASE(identical_runs_exit_0) {
  const Fixture f;
  const Result r = volta_audit(f.diff(f.baseline, f.again));
  BOOST_TEST(r.status == 0);
  BOOST_TEST(r.output ==
             "A = run 1, B = run 3\n\ndiff: 2 subjects, 5 node outputs compared, no divergence\n");
  // Only the subject asked for: its outputs agree even between the planted runs.
  const Result one = volta_audit(f.diff(f.baseline, f.planted, " --subject onnx:test_add"));
  BOOST_TEST(one.status == 0);
  BOOST_TEST(one.output ==
             "A = run 1, B = run 2\n\ndiff: 1 subjects, 1 node outputs compared, no divergence\n");
}

BOOST_AUTO_TEST_CASE(subjects_traced_in_one_run_only_are_listed) {
  TempStore t;
  std::vector<NodeTraceRow> fewer = traces(false);
  fewer.pop_back();  // no onnx:test_add
  const int64_t a = traced_run(t, traces(false));
  const int64_t b = traced_run(t, fewer);
  const Result r = volta_audit("diff " + std::to_string(a) + " " + std::to_string(b) + " --db " +
                               quoted(t.path()));
  BOOST_TEST(r.status == 0);
  BOOST_TEST(r.output ==
             "A = run 1, B = run 2\n\ntraced in run A only: 1 subject(s): onnx:test_add\n\n"
             "diff: 1 subjects, 4 node outputs compared, no divergence\n");
}

BOOST_AUTO_TEST_CASE(bad_runs_and_subjects_are_usage_errors) {
  const Fixture f;
  const std::string usage = "\nusage: volta-audit diff RUN_A RUN_B [--subject S] [--db PATH]\n";
  Result r = volta_audit(f.diff(f.baseline, 99));
  BOOST_TEST(r.status == 2);
  BOOST_TEST(r.output.starts_with("volta-audit diff: run 99 does not exist in '" + f.t.path() +
                                  "'; node traces are recorded by `volta-audit run "
                                  "determinism`" +
                                  usage),
             r.output);
  r = volta_audit(f.diff(f.untraced, f.baseline));
  BOOST_TEST(r.status == 2);
  BOOST_TEST(r.output.starts_with("volta-audit diff: run 4 (complete) recorded no node traces; "
                                  "node traces are recorded by `volta-audit run determinism`" +
                                  usage),
             r.output);
  r = volta_audit("diff 1 two" + f.db);
  BOOST_TEST(r.status == 2);
  BOOST_TEST(r.output.starts_with("volta-audit diff: run id 'two' is not a run number"), r.output);
  r = volta_audit("diff 1" + f.db);
  BOOST_TEST(r.status == 2);
  BOOST_TEST(r.output.starts_with(
                 "volta-audit diff: name exactly two runs to compare, RUN_A and RUN_B (got 1)"),
             r.output);
  r = volta_audit(f.diff(f.baseline, f.planted, " --subject model:nope"));
  BOOST_TEST(r.status == 2);
  BOOST_TEST(r.output.starts_with("volta-audit diff: subject 'model:nope' is traced in neither "
                                  "run 1 nor run 2"),
             r.output);
  r = volta_audit(f.diff(f.baseline, f.planted, " --threads 3"));
  BOOST_TEST(r.status == 2);
  BOOST_TEST(r.output.starts_with("volta-audit diff: unknown option '--threads' (supported: "
                                  "--subject S, --db PATH)"),
             r.output);
}

BOOST_AUTO_TEST_CASE(diff_is_in_the_help) {
  const Result r = volta_audit("--help");
  BOOST_TEST(r.status == 0);
  BOOST_TEST(contains(r.output, "  diff RUN_A RUN_B [--subject S] [--db PATH]\n"), r.output);
}

}  // namespace
}  // namespace volta::audit
