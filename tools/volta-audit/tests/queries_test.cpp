#define BOOST_TEST_MODULE queries
#include "queries.h"

#include <boost/test/unit_test.hpp>

#include "commands.h"
#include "store_builder.h"
#include "volta/conformance/training_store.h"

namespace volta::audit {
namespace {

using conformance::Outcome;
using conformance::Verdict;
using testing::kCommit;
using testing::kOtherCommit;
using testing::result;
using testing::RunEnd;
using testing::TempStore;
using testing::Where;

// Rows as "a|b|c" lines: comparable in one assertion, readable when it fails.
std::string lines(const QueryResult& answer) {
  std::string text;
  for (const auto& row : answer.rows) {
    for (size_t i = 0; i < row.size(); ++i) text += (i ? "|" : "") + row[i];
    text += "\n";
  }
  return text;
}

QueryResult ask(TempStore& t, std::string_view name) {
  const CannedQuery* query = find_query(name);
  BOOST_REQUIRE_MESSAGE(query != nullptr, "no query " << name);
  return run_read_only(t.db(), query->sql, latest_commit(t.db()));
}

conformance::ResultRow timed(std::string case_id, double duration_ms) {
  conformance::ResultRow row = result(std::move(case_id), Outcome::Pass);
  row.duration_ms = duration_ms;
  return row;
}

conformance::ResultRow judged_by(std::string case_id, std::string tolerance) {
  conformance::ResultRow row = result(std::move(case_id), Outcome::Pass);
  row.tolerance = std::move(tolerance);
  return row;
}

BOOST_AUTO_TEST_CASE(the_canned_queries_are_listed_by_name) {
  std::vector<std::string_view> names;
  for (const CannedQuery& q : canned_queries()) {
    names.push_back(q.name);
    BOOST_TEST(!q.description.empty());
  }
  const std::vector<std::string_view> expected = {
      "failures-by-family", "slowest-cases", "unsupported-ops", "tolerance-changes",
      "expectations",       "runs",          "flaky",           "training-runs"};
  BOOST_TEST(names == expected, boost::test_tools::per_element());
  BOOST_TEST(find_query("runs") == &canned_queries()[5]);
  BOOST_TEST(find_query("no-such-query") == nullptr);
}

BOOST_AUTO_TEST_CASE(latest_commit_is_the_commit_of_the_newest_complete_run) {
  TempStore t;
  BOOST_TEST(latest_commit(t.db()).empty());
  t.add_run({}, {.commit = kOtherCommit, .started_at = "2030-01-02T00:00:00Z"});
  t.add_run({}, {.commit = kCommit, .started_at = "2030-01-01T00:00:00Z"});
  t.add_run({},
            {.commit = kCommit, .end = RunEnd::Incomplete, .started_at = "2030-01-03T00:00:00Z"});
  BOOST_TEST(latest_commit(t.db()) == kOtherCommit);
}

BOOST_AUTO_TEST_CASE(failures_by_family_counts_the_newest_complete_run) {
  TempStore t;
  const Where reduction{.suite = "parity", .backend = "cpu", .family = "reduction"};
  t.add_run({result("Add(shape=[1])", Outcome::Crash, Verdict::Unexpected, "old")});
  t.add_run({result("Add(shape=[1])", Outcome::FailNumeric, Verdict::Unexpected, "x"),
             result("Add(shape=[2])", Outcome::FailNumeric, Verdict::Expected, "y"),
             result("Add(shape=[3])", Outcome::Unsupported, Verdict::Unexpected, "z"),
             result("Add(shape=[4])", Outcome::Pass),
             result("Add(shape=[5])", Outcome::Skipped, Verdict::Expected, "no CUDA device"),
             result("ReduceSum(axis=0)", Outcome::Error, Verdict::Unexpected, "threw", reduction)});
  const QueryResult answer = ask(t, "failures-by-family");
  const std::vector<std::string> columns = {"suite", "family", "outcome", "cases"};
  BOOST_TEST(answer.columns == columns, boost::test_tools::per_element());
  BOOST_TEST(lines(answer) ==
             "parity|elementwise|FAIL_NUMERIC|2\n"
             "parity|elementwise|UNSUPPORTED|1\n"
             "parity|reduction|ERROR|1\n");
}

BOOST_AUTO_TEST_CASE(slowest_cases_are_the_top_twenty_of_the_newest_run) {
  TempStore t;
  t.add_run({timed("Old(n=1)", 9999)});
  std::vector<conformance::ResultRow> rows;
  for (int i = 1; i <= 25; ++i) rows.push_back(timed("Add(n=" + std::to_string(i) + ")", i * 1.5));
  t.add_run(rows);
  const QueryResult answer = ask(t, "slowest-cases");
  BOOST_REQUIRE_EQUAL(answer.rows.size(), 20u);
  const std::vector<std::string> first = {"parity", "cpu", "Add(n=25)", "PASS", "37.500"};
  BOOST_TEST(answer.rows.front() == first, boost::test_tools::per_element());
  BOOST_TEST(answer.rows.back()[2] == "Add(n=6)");
}

BOOST_AUTO_TEST_CASE(unsupported_ops_group_by_op_and_backend_with_the_first_diagnostic) {
  TempStore t;
  const Where cuda{.suite = "parity", .backend = "cuda", .family = "elementwise"};
  t.add_run(
      {result("Erf(shape=[3])", Outcome::Unsupported, Verdict::Unexpected, "no f16 Erf"),
       result("Erf(shape=[2])", Outcome::Unsupported, Verdict::Unexpected, "no bf16 Erf"),
       result("Erf(shape=[2])", Outcome::Unsupported, Verdict::Unexpected, "no CUDA Erf", cuda),
       result("Add(shape=[2])", Outcome::FailNumeric, Verdict::Unexpected, "not this")});
  const QueryResult answer = ask(t, "unsupported-ops");
  const std::vector<std::string> columns = {"op", "backend", "cases", "first_message"};
  BOOST_TEST(answer.columns == columns, boost::test_tools::per_element());
  BOOST_TEST(lines(answer) == "Erf|cpu|2|no bf16 Erf\nErf|cuda|1|no CUDA Erf\n");
}

BOOST_AUTO_TEST_CASE(tolerance_changes_compare_the_two_newest_complete_runs_of_each_case) {
  TempStore t;
  const int64_t oldest =
      t.add_run({judged_by("Add(shape=[2])", "abs=1"), judged_by("Mul(shape=[2])", "abs=1"),
                 judged_by("Sub(shape=[2])", "abs=1")});
  const int64_t middle =
      t.add_run({judged_by("Add(shape=[2])", "abs=2"), judged_by("Mul(shape=[2])", "abs=1")});
  t.add_run({judged_by("Mul(shape=[2])", "abs=9")}, {.end = RunEnd::Incomplete});
  const int64_t newest =
      t.add_run({judged_by("Add(shape=[2])", "abs=2"), judged_by("Sub(shape=[2])", "abs=3")});
  const QueryResult answer = ask(t, "tolerance-changes");
  const std::vector<std::string> columns = {"suite",  "backend",   "case_id", "before_run",
                                            "before", "after_run", "after"};
  BOOST_TEST(answer.columns == columns, boost::test_tools::per_element());
  // Add changed between oldest and middle, not between its two newest runs; Mul's change is
  // in an incomplete run; Sub's two newest runs are the oldest and the newest.
  BOOST_TEST(lines(answer) == "parity|cpu|Sub(shape=[2])|" + std::to_string(oldest) + "|abs=1|" +
                                  std::to_string(newest) + "|abs=3\n");
  BOOST_TEST(middle > oldest);
}

BOOST_AUTO_TEST_CASE(expectations_are_those_of_the_newest_run_that_recorded_them) {
  TempStore t;
  t.add_run({}, {.expectations = {{"parity", "Old*", "FAIL_NUMERIC", "gone", "#1", "2030-01-01"}}});
  t.add_run({result("Erf(shape=[2])", Outcome::FailNumeric)},
            {.expectations = {
                 {"parity", "Erf(*)", "FAIL_NUMERIC", "erf polynomial", "#5", "2030-06-30"}}});
  t.add_run({result("Add(shape=[2])", Outcome::Pass)});  // judged with no expectations
  const QueryResult answer = ask(t, "expectations");
  BOOST_TEST(lines(answer) == "parity|Erf(*)|FAIL_NUMERIC|erf polynomial|#5|2030-06-30\n");
}

BOOST_AUTO_TEST_CASE(runs_lists_every_run_with_provenance_and_status) {
  TempStore t;
  t.add_run({result("Add(shape=[2])", Outcome::Pass)}, {.started_at = "2030-01-01T00:00:00Z"});
  t.add_run({}, {.commit = kOtherCommit,
                 .dirty = true,
                 .end = RunEnd::Incomplete,
                 .started_at = "2030-01-02T00:00:00Z"});
  const QueryResult answer = ask(t, "runs");
  BOOST_REQUIRE_EQUAL(answer.rows.size(), 2u);
  const auto column = [&answer](std::string_view name) {
    const auto it = std::ranges::find(answer.columns, name);
    BOOST_REQUIRE(it != answer.columns.end());
    return static_cast<size_t>(it - answer.columns.begin());
  };
  BOOST_TEST(answer.rows[0][column("commit_sha")] == kCommit);
  BOOST_TEST(answer.rows[0][column("status")] == "complete");
  BOOST_TEST(answer.rows[0][column("results")] == "1");
  BOOST_TEST(answer.rows[1][column("commit_sha")] == kOtherCommit);
  BOOST_TEST(answer.rows[1][column("dirty")] == "1");
  BOOST_TEST(answer.rows[1][column("status")] == "incomplete");
  BOOST_TEST(answer.rows[1][column("machine")] == testing::kMachine);
  BOOST_TEST(answer.rows[1][column("compiler")] == "GNU 12.2.0");
}

BOOST_AUTO_TEST_CASE(training_runs_lists_every_training_run_with_first_and_last_loss) {
  TempStore t;
  conformance::TrainingRunInfo info;
  info.commit = kCommit;
  info.model = "tiny-transformer";
  info.seed = 42;
  info.threads = 2;
  const int64_t complete = conformance::begin_training_run(t.store(), info);
  conformance::record_training_steps(
      t.store(), complete,
      std::vector<conformance::TrainingStepRow>{
          {.step = 1, .loss = 5.5}, {.step = 2, .loss = 4.25}, {.step = 3, .loss = 3.75}});
  conformance::finish_training_run(t.store(), complete, conformance::TrainingStatus::Complete);
  info.resumed_from = 3;
  conformance::begin_training_run(t.store(), info);  // no steps yet
  const QueryResult answer = ask(t, "training-runs");
  BOOST_TEST(lines(answer).find("1|" + kCommit + "|0|complete|tiny-transformer|42|2||") == 0u,
             lines(answer));
  const std::vector<std::string> tail = {answer.rows[0].end() - 4, answer.rows[0].end()};
  BOOST_TEST(tail == (std::vector<std::string>{"3", "3", "5.5", "3.75"}),
             boost::test_tools::per_element());
  BOOST_REQUIRE_EQUAL(answer.rows.size(), 2u);
  const std::vector<std::string> resumed = {answer.rows[1].begin() + 3, answer.rows[1].begin() + 8};
  BOOST_TEST(resumed == (std::vector<std::string>{"running", "tiny-transformer", "42", "2", "3"}),
             boost::test_tools::per_element());
  BOOST_TEST(answer.rows[1].back() == "");  // no last loss without a step
  BOOST_TEST(answer.rows[1][answer.rows[1].size() - 4] == "0");
}

BOOST_AUTO_TEST_CASE(read_only_queries_refuse_writes_before_they_run) {
  TempStore t;
  t.add_run({result("Add(shape=[2])", Outcome::Pass)});
  for (const std::string_view sql :
       {"DELETE FROM run", "INSERT INTO gate_result VALUES (1, 'c', 'g', 1, 'PASS', 'r', 'now')",
        "DROP TABLE result", "UPDATE run SET status = 'incomplete'",
        "CREATE TABLE sneaky (x INTEGER)"}) {
    BOOST_TEST_CONTEXT(sql) {
      try {
        run_read_only(t.db(), sql);
        BOOST_FAIL("a write ran");
      } catch (const conformance::StoreError& e) {
        BOOST_TEST(std::string(e.what()) ==
                   "results database '" + t.path() + "': refused `" + std::string(sql) +
                       "`: it would write, and queries are read-only (SELECT, WITH, read-only "
                       "PRAGMAs)");
      }
    }
  }
  BOOST_TEST(run_read_only(t.db(), "SELECT count(*) FROM run").rows[0][0] == "1");
  // The connection is given back writable: docs check records findings on it afterwards.
  t.add_run({});
  BOOST_TEST(run_read_only(t.db(), "SELECT count(*) FROM run").rows[0][0] == "2");
}

BOOST_AUTO_TEST_CASE(query_command_opens_the_store_read_only) {
  TempStore t;
  t.add_run({result("Add(shape=[2])", Outcome::Pass)});
  const auto query = [&t](std::vector<std::string_view> words) {
    words.insert(words.end(), {"--db", t.path()});
    Args args(words);
    return query_command(args);
  };
  BOOST_TEST(query({"runs"}) == 0);
  BOOST_TEST(query({"--sql", "SELECT count(*) FROM result"}) == 0);
  BOOST_CHECK_THROW(query({"--sql", "DELETE FROM result"}), conformance::StoreError);
  BOOST_TEST(run_read_only(t.db(), "SELECT count(*) FROM result").rows[0][0] == "1");
  BOOST_CHECK_THROW(query({"no-such-query"}), UsageError);
  BOOST_CHECK_THROW(query({"runs", "--sql", "SELECT 1"}), UsageError);
  BOOST_CHECK_THROW(query({}), UsageError);
}

BOOST_AUTO_TEST_CASE(query_command_binds_the_commit_it_is_given) {
  TempStore t;
  t.add_run({result("Add(shape=[2])", Outcome::Pass)});
  t.add_run({result("Add(shape=[2])", Outcome::Pass)}, {.commit = kOtherCommit});
  const auto query = [&t](std::vector<std::string_view> words) {
    words.insert(words.end(), {"--db", t.path()});
    Args args(words);
    return query_command(args);
  };
  BOOST_TEST(query({"runs", "--commit", kCommit}) == 0);
  try {
    query({"runs", "--commit", "feedface"});
    BOOST_FAIL("an unknown commit was accepted");
  } catch (const UsageError& e) {
    BOOST_TEST(std::string(e.what()) == "no complete run for commit feedface in '" + t.path() +
                                            "' (`volta-audit query runs` lists the runs)");
  }
  BOOST_CHECK_THROW(query({"--list", "--commit", kCommit}), UsageError);
}

BOOST_AUTO_TEST_CASE(a_second_statement_is_refused_not_ignored) {
  TempStore t;
  BOOST_CHECK_THROW(run_read_only(t.db(), "SELECT 1; DELETE FROM run"), conformance::StoreError);
}

BOOST_AUTO_TEST_CASE(commit_is_bound_when_named) {
  TempStore t;
  const QueryResult answer = run_read_only(t.db(), "SELECT :commit AS c", kCommit);
  BOOST_TEST(answer.rows[0][0] == kCommit);
  try {
    run_read_only(t.db(), "SELECT :commit");
    BOOST_FAIL("an unbound :commit ran");
  } catch (const conformance::StoreError& e) {
    BOOST_TEST(std::string(e.what()) ==
               "results database '" + t.path() +
                   "': the query names :commit and there is no commit to bind (the store has no "
                   "complete run)");
  }
}

BOOST_AUTO_TEST_CASE(values_read_as_text_and_null_as_empty) {
  TempStore t;
  const QueryResult answer = run_read_only(t.db(), "SELECT 1 AS i, 2.5 AS r, NULL AS n, 'x' AS s");
  const std::vector<std::string> row = {"1", "2.5", "", "x"};
  BOOST_TEST(answer.rows.at(0) == row, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(tables_align_by_code_point_and_stay_on_one_line) {
  QueryResult table;
  table.columns = {"op", "shape", "message"};
  table.rows = {{"MatMul", "2×3", "ok"}, {"Add", "[4]", "line one\nline two"}};
  BOOST_TEST(format_table(table) ==
             "op      shape  message\n"
             "MatMul  2×3    ok\n"
             "Add     [4]    line one\\nline two\n");
}

}  // namespace
}  // namespace volta::audit
