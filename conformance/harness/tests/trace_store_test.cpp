// Node traces in the results store: round trip, refusals, and batches that record results and
// traces in one transaction.
#define BOOST_TEST_MODULE trace_store
#include "volta/conformance/trace_store.h"

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "store_testing.h"
#include "volta/conformance/runner.h"

namespace volta::conformance {
namespace {

using testing::count;
using testing::expect_store_error;

// A store in a fresh temporary directory, removed with it.
class TempStore {
 public:
  ResultStore& store() { return store_; }
  const std::string& path() const { return path_; }
  const std::filesystem::path& dir() const { return dir_.path(); }

  int64_t begin_run() {
    return store_.begin_run(
        RunInfo{"c0ffee", false, "t", "g++", "cpu", 1, "cpu", "m", "determinism", "x"});
  }

 private:
  testing::TempDir dir_;
  std::string path_ = dir_.file("results.db");
  ResultStore store_{path_};
};

std::vector<std::byte> bytes(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (const int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

NodeTraceRow trace(std::string subject, int step, int output = 0) {
  NodeTraceRow r;
  r.subject = std::move(subject);
  r.step = step;
  r.node = "node" + std::to_string(step);
  r.op = "Add";
  r.kernel = "f32_add_avx2";
  r.determinism = "bit-exact";
  r.origin = step == 1 ? "fuse-bias" : "";
  r.output = output;
  r.dtype = "f32";
  r.shape = "[1]";
  r.hash = "00000000000000" + std::to_string(10 + step);
  r.data = bytes({0, 0, 128, 63});
  return r;
}

BOOST_AUTO_TEST_CASE(traces_round_trip_in_schedule_order) {
  TempStore t;
  const int64_t run = t.begin_run();
  NodeTraceRow big = trace("model:mlp", 2);
  big.data.reset();  // above the cap: hash only
  big.shape = "[1024,1024]";
  NodeTraceRow empty = trace("model:mlp", 0, 1);
  empty.data = std::vector<std::byte>{};  // an empty output keeps its (empty) bytes
  empty.shape = "[0]";
  NodeTraceRow odd = trace("onnx:test_add", 0);
  odd.node = "tab\there\nand newline";
  // Recorded out of order, across two batches: read back ordered by subject, step, output.
  record_traces(t.store(), run, std::vector{trace("onnx:test_add", 1), big});
  record_traces(t.store(), run,
                std::vector{empty, odd, trace("model:mlp", 0), trace("model:mlp", 1)});

  const std::vector<NodeTraceRow> got = load_traces(t.store().db(), run);
  BOOST_REQUIRE(got.size() == 6u);
  std::vector<std::string> order;
  order.reserve(got.size());
  for (const NodeTraceRow& r : got) {
    order.push_back(r.subject + "/" + std::to_string(r.step) + "/" + std::to_string(r.output));
  }
  const std::vector<std::string> want = {"model:mlp/0/0", "model:mlp/0/1",     "model:mlp/1/0",
                                         "model:mlp/2/0", "onnx:test_add/0/0", "onnx:test_add/1/0"};
  BOOST_TEST(order == want, boost::test_tools::per_element());
  const NodeTraceRow& first = got[0];
  const NodeTraceRow expected = trace("model:mlp", 0);
  BOOST_TEST(first.node == expected.node);
  BOOST_TEST(first.op == expected.op);
  BOOST_TEST(first.kernel == expected.kernel);
  BOOST_TEST(first.determinism == expected.determinism);
  BOOST_TEST(first.dtype == expected.dtype);
  BOOST_TEST(first.shape == expected.shape);
  BOOST_TEST(first.hash == expected.hash);
  BOOST_TEST((first.data == expected.data));
  BOOST_TEST(got[2].origin == "fuse-bias");
  BOOST_REQUIRE(got[1].data.has_value());  // empty bytes, not "hash only"
  BOOST_TEST(got[1].data->empty());
  BOOST_TEST(!got[3].data.has_value());
  BOOST_TEST(got[3].shape == "[1024,1024]");
  BOOST_TEST(got[4].node == odd.node);
  BOOST_TEST(load_traces(t.store().db(), run + 1).empty());
}

BOOST_AUTO_TEST_CASE(a_subject_is_traced_once_per_run) {
  TempStore t;
  const int64_t run = t.begin_run();
  record_traces(t.store(), run, std::vector{trace("model:cnn", 0), trace("model:cnn", 1)});
  const std::string prefix = "results database '" + t.path() + "': run " + std::to_string(run) +
                             " already has a trace of subject 'model:cnn', step 1, output 0: a "
                             "subject is traced once per run";
  // Again in a later batch: that whole batch is refused.
  expect_store_error(
      [&] {
        record_traces(t.store(), run, std::vector{trace("model:mlp", 0), trace("model:cnn", 1)});
      },
      prefix + " (trace 2 of 2; the batch was rolled back)");
  // Twice within one batch.
  const int64_t second = t.begin_run();
  expect_store_error(
      [&] {
        record_traces(
            t.store(), second,
            std::vector{trace("model:cnn", 0), trace("model:cnn", 1), trace("model:cnn", 1)});
      },
      "results database '" + t.path() + "': run " + std::to_string(second) +
          " already has a trace of subject 'model:cnn', step 1, output 0: a subject is traced "
          "once per run (trace 3 of 3; the batch was rolled back)");
  BOOST_TEST(load_traces(t.store().db(), run).size() == 2u);
  BOOST_TEST(load_traces(t.store().db(), second).empty());
  // Another run traces the same subject freely.
  record_traces(t.store(), second, std::vector{trace("model:cnn", 1)});
  BOOST_TEST(load_traces(t.store().db(), second).size() == 1u);
}

BOOST_AUTO_TEST_CASE(only_a_running_run_takes_traces) {
  TempStore t;
  const int64_t run = t.begin_run();
  t.store().finish_run(run);
  expect_store_error([&] { record_traces(t.store(), run, std::vector{trace("model:mlp", 0)}); },
                     "results database '" + t.path() + "': cannot record node traces into run " +
                         std::to_string(run) +
                         ": it is 'complete', and only a 'running' run takes rows");
  expect_store_error([&] { record_traces(t.store(), 99, std::vector{trace("model:mlp", 0)}); },
                     "results database '" + t.path() +
                         "': cannot record node traces into run 99: there is no such run");
  BOOST_TEST(count(t.store().db(), "SELECT count(*) FROM node_trace") == 0);
}

BOOST_AUTO_TEST_CASE(results_and_traces_of_a_batch_commit_together) {
  TempStore t;
  const int64_t run = t.begin_run();
  record_traces(t.store(), run, std::vector{trace("model:mlp", 0)});
  ResultRow row;
  row.suite = "determinism";
  row.family = "replay-100";
  row.backend = "cpu";
  row.case_id = "replay:model:mlp";
  {
    // The traces of the batch clash with earlier ones: its results go too.
    Transaction tx(t.store().db());
    t.store().record(run, std::vector{row});
    BOOST_CHECK_THROW(record_traces(t.store(), run, std::vector{trace("model:mlp", 0)}),
                      StoreError);
  }
  BOOST_TEST(!t.store().db().in_transaction());
  BOOST_TEST(count(t.store().db(), "SELECT count(*) FROM result") == 0);
  BOOST_TEST(count(t.store().db(), "SELECT count(*) FROM node_trace") == 1);
  {
    Transaction tx(t.store().db());
    t.store().record(run, std::vector{row});
    record_traces(t.store(), run, std::vector{trace("model:mlp", 1)});
    tx.commit();
  }
  BOOST_TEST(count(t.store().db(), "SELECT count(*) FROM result") == 1);
  BOOST_TEST(count(t.store().db(), "SELECT count(*) FROM node_trace") == 2);
}

// run_suite takes each case's traces and not-bit-exact nodes into the run with its row.
BOOST_AUTO_TEST_CASE(the_runner_records_traces_with_their_case) {
  TempStore t;
  const int64_t run = t.begin_run();
  auto traced = [](const std::string& subject, const std::string& not_bit_exact) {
    return [subject, not_bit_exact] {
      CaseOutcome o;
      o.outcome = Outcome::Pass;
      o.not_bit_exact = not_bit_exact;
      o.traces = {trace(subject, 0), trace(subject, 1)};
      return o;
    };
  };
  const std::vector<SuiteCase> cases = {
      {"replay-100", "", "cpu", "replay:model:mlp", "", traced("model:mlp", "")},
      {"strict-mode", "", "cpu", "strict:relaxed-lists-non-bit-exact", "",
       traced("model:relaxed", "node 'sum' (ReduceSum, kernel k, run-to-run)")},
      {"replay-100", "", "cpu", "replay:model:cnn", "", traced("model:cnn", "")},
  };
  RunOptions options;
  options.expectations_dir = t.dir().string();  // no determinism.tsv: no expectations
  options.batch_size = 2;                       // two batches
  const SuiteSummary summary = run_suite(t.store(), run, "determinism", cases, options);
  BOOST_TEST(summary.cases == 3);
  const std::vector<NodeTraceRow> rows = load_traces(t.store().db(), run);
  BOOST_TEST(rows.size() == 6u);
  Statement s = t.store().db().prepare(
      "SELECT c.case_id, r.not_bit_exact FROM result r JOIN test_case c ON c.id = r.case_ref "
      "WHERE r.not_bit_exact <> ''");
  BOOST_REQUIRE(s.step());
  BOOST_TEST(s.column_text(0) == "strict:relaxed-lists-non-bit-exact");
  BOOST_TEST(s.column_text(1) == "node 'sum' (ReduceSum, kernel k, run-to-run)");
  BOOST_TEST(!s.step());
}

}  // namespace
}  // namespace volta::conformance
