// Training runs in the results store: round trip, refusals, the step writer's commits, dead
// runs, and files of previous schema versions.
#define BOOST_TEST_MODULE training_store
#include "volta/conformance/training_store.h"

#include <sys/wait.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "store_testing.h"
#include "volta/version.h"

namespace volta::conformance {
namespace {

using Mode = Database::Mode;
using testing::count;
using testing::expect_store_error;
using testing::insert_v1_run;
using testing::TempDir;

TrainingRunInfo run_info(std::optional<int64_t> resumed_from = std::nullopt) {
  TrainingRunInfo info;
  info.commit = "c0ffee";
  info.dirty = true;
  info.build_type = "RelWithDebInfo";
  info.compiler = "g++ 12";
  info.cpu_model = "Test CPU";
  info.threads = 2;
  info.command = "volta train --data GPL-3 --steps 3";
  info.model = "tiny-transformer";
  info.config = R"({"d_model":64,"heads":4,"layers":2})";
  info.optimizer = R"({"lr":0.001,"name":"adamw"})";
  info.data_path = "/usr/share/common-licenses/GPL-3";
  info.data_sha256 = std::string(64, 'e');
  info.data_bytes = 35149;
  info.seed = std::numeric_limits<uint64_t>::max();  // wider than SQLite's INTEGER
  info.resumed_from = resumed_from;
  return info;
}

TrainingStepRow step(int64_t number, double loss = 5.0) {
  return {.step = number,
          .loss = loss,
          .grad_norm = 1.5,
          .lr = 1e-3,
          .tokens_per_s = 1000.0 + static_cast<double>(number)};
}

std::string status_of(const Database& db, int64_t run) {
  Statement s = db.prepare("SELECT status FROM training_run WHERE id = ?");
  s.bind(1, run);
  BOOST_REQUIRE(s.step());
  return s.column_text(0);
}

BOOST_AUTO_TEST_CASE(a_training_run_round_trips_with_its_steps) {
  TempDir dir;
  ResultStore store(dir.file("results.db"));
  const int64_t run = begin_training_run(store, run_info());
  std::vector<TrainingStepRow> steps = {step(1, 5.5), step(2, 5.25), step(3, 4.75)};
  steps[1].tokens_per_s.reset();
  steps[2].loss = std::numeric_limits<double>::infinity();  // a divergence is recorded
  record_training_steps(store, run, steps);
  BOOST_TEST(status_of(store.db(), run) == "running");
  finish_training_run(store, run, TrainingStatus::Complete);

  const std::optional<TrainingRunRecord> got = load_training_run(store.db(), run);
  BOOST_REQUIRE(got.has_value());
  const TrainingRunInfo want = run_info();
  BOOST_TEST(got->id == run);
  BOOST_TEST(got->info.commit == want.commit);
  BOOST_TEST(got->info.dirty);
  BOOST_TEST(got->info.build_type == want.build_type);
  BOOST_TEST(got->info.compiler == want.compiler);
  BOOST_TEST(got->info.cpu_model == want.cpu_model);
  BOOST_TEST(got->info.machine.ends_with(" / Test CPU"));  // empty: host / CPU model
  BOOST_TEST(got->info.threads == 2);
  BOOST_TEST(got->info.command == want.command);
  BOOST_TEST(got->info.model == want.model);
  BOOST_TEST(got->info.config == want.config);
  BOOST_TEST(got->info.optimizer == want.optimizer);
  BOOST_TEST(got->info.data_path == want.data_path);
  BOOST_TEST(got->info.data_sha256 == want.data_sha256);
  BOOST_TEST(got->info.data_bytes == 35149);
  BOOST_TEST(got->info.seed == std::numeric_limits<uint64_t>::max());
  BOOST_TEST(!got->info.resumed_from.has_value());
  BOOST_TEST(training_status_name(got->status) == "complete");
  BOOST_TEST(got->started_at.size() == 20u);  // 2030-01-02T03:04:05Z
  BOOST_TEST(got->ended_at.size() == 20u);
  BOOST_TEST(got->origin.empty());
  BOOST_TEST(got->steps == 3);
  BOOST_TEST((got->first_step == steps.front()));
  BOOST_TEST((got->last_step == steps.back()));
  BOOST_TEST((load_training_steps(store.db(), run) == steps));
  BOOST_TEST(load_training_steps(store.db(), run + 1).empty());
  BOOST_TEST(!load_training_run(store.db(), run + 1).has_value());
}

BOOST_AUTO_TEST_CASE(runs_are_listed_newest_first) {
  TempDir dir;
  ResultStore store(dir.file("results.db"));
  const int64_t first = begin_training_run(store, run_info());
  const int64_t second = begin_training_run(store, run_info(/*resumed_from=*/7));
  const int64_t third = begin_training_run(store, run_info());
  // Same second: the id breaks the tie. An older start time sorts last whatever its id.
  store.db()
      .prepare("UPDATE training_run SET started_at = '2000-01-01T00:00:00Z' WHERE id = ?")
      .bind(1, third)
      .run();
  record_training_steps(store, second, std::vector{step(8), step(9)});
  const std::vector<TrainingRunRecord> all = load_training_runs(store.db());
  BOOST_REQUIRE(all.size() == 3u);
  BOOST_TEST(all[0].id == second);
  BOOST_TEST(all[1].id == first);
  BOOST_TEST(all[2].id == third);
  BOOST_TEST(all[0].info.resumed_from.value_or(-1) == 7);
  BOOST_TEST(all[0].steps == 2);
  BOOST_TEST(all[0].first_step->step == 8);
  BOOST_TEST(all[1].steps == 0);
  BOOST_TEST(!all[1].first_step.has_value());
  const std::vector<TrainingRunRecord> newest = load_training_runs(store.db(), 1);
  BOOST_REQUIRE(newest.size() == 1u);
  BOOST_TEST(newest[0].id == second);
}

BOOST_AUTO_TEST_CASE(a_step_is_recorded_once_and_a_bad_batch_leaves_nothing) {
  TempDir dir;
  const std::string path = dir.file("results.db");
  ResultStore store(path);
  const int64_t run = begin_training_run(store, run_info());
  record_training_steps(store, run, std::vector{step(1), step(2)});
  const std::string prefix = "results database '" + path + "': training run " + std::to_string(run);
  expect_store_error(
      [&] {
        record_training_steps(store, run, std::vector{step(3), step(2)});
      },
      prefix + " already has step 2: a step is recorded once per run");
  expect_store_error(
      [&] {
        record_training_steps(store, run, std::vector{step(4), step(4)});
      },
      prefix + " already has step 4: a step is recorded once per run");
  BOOST_TEST(count(store.db(), "SELECT count(*) FROM training_step") == 2);
  // Another run may use the same step numbers.
  const int64_t other = begin_training_run(store, run_info());
  record_training_steps(store, other, std::vector{step(1), step(2)});
  BOOST_TEST(count(store.db(), "SELECT count(*) FROM training_step") == 4);
}

BOOST_AUTO_TEST_CASE(bad_steps_are_refused_naming_the_step_and_the_field) {
  TempDir dir;
  const std::string path = dir.file("results.db");
  ResultStore store(path);
  const int64_t run = begin_training_run(store, run_info(/*resumed_from=*/100));
  const std::string prefix =
      "results database '" + path + "': training run " + std::to_string(run) + ", step ";
  const auto refused = [&](TrainingStepRow row, const std::string& message) {
    expect_store_error([&] { record_training_steps(store, run, std::vector{row}); }, message);
    expect_store_error([&] { TrainingStepWriter(store, run).record(row); }, message);
  };
  refused(step(0), prefix + "0: steps are numbered from 1");
  refused(step(100),
          prefix + "100: the run resumed at step 100, so its steps are numbered from 101");
  refused(step(101, std::nan("")), prefix + "101: the loss is NaN");
  TrainingStepRow bad = step(101);
  bad.grad_norm = -1;
  refused(bad, prefix + "101: the gradient norm is -1, not a number >= 0");
  bad = step(101);
  bad.lr = std::nan("");
  refused(bad, prefix + "101: the learning rate is nan, not a number >= 0");
  bad = step(101);
  bad.tokens_per_s = 0.0;
  refused(bad, prefix + "101: the throughput is 0 tokens/s, not a number > 0");
  BOOST_TEST(count(store.db(), "SELECT count(*) FROM training_step") == 0);
  record_training_steps(store, run, std::vector{step(101)});
  BOOST_TEST(count(store.db(), "SELECT count(*) FROM training_step") == 1);
}

BOOST_AUTO_TEST_CASE(only_a_running_training_run_takes_steps_or_finishes) {
  TempDir dir;
  const std::string path = dir.file("results.db");
  ResultStore store(path);
  const int64_t run = begin_training_run(store, run_info());
  const std::string prefix = "results database '" + path + "': ";
  expect_store_error([&] { finish_training_run(store, run, TrainingStatus::Running); },
                     prefix + "training run " + std::to_string(run) +
                         ": a run finishes 'complete' or 'interrupted', not 'running'");
  finish_training_run(store, run, TrainingStatus::Interrupted);
  BOOST_TEST(status_of(store.db(), run) == "interrupted");
  const std::string not_running =
      std::to_string(run) + ": it is 'interrupted', and only a 'running' run takes steps";
  expect_store_error([&] { record_training_steps(store, run, std::vector{step(1)}); },
                     prefix + "cannot record steps into training run " + not_running);
  expect_store_error([&] { TrainingStepWriter writer(store, run); },
                     prefix + "cannot record steps into training run " + not_running);
  expect_store_error([&] { finish_training_run(store, run, TrainingStatus::Complete); },
                     prefix + "cannot finish training run " + not_running);
  expect_store_error([&] { finish_training_run(store, run + 1, TrainingStatus::Complete); },
                     prefix + "cannot finish training run " + std::to_string(run + 1) +
                         ": there is no such training run");
}

BOOST_AUTO_TEST_CASE(begin_refuses_what_the_schema_refuses) {
  TempDir dir;
  ResultStore store(dir.file("results.db"));
  TrainingRunInfo info = run_info();
  info.threads = 0;
  try {
    begin_training_run(store, info);
    BOOST_ERROR("a run with 0 threads was recorded");
  } catch (const StoreError& e) {
    BOOST_TEST(e.cause() == "CHECK constraint failed: threads >= 1");
    BOOST_TEST(
        std::string(e.what()).ends_with("(beginning a training run of model "
                                        "'tiny-transformer')"));
  }
  info = run_info();
  info.model.clear();
  BOOST_CHECK_THROW(begin_training_run(store, info), StoreError);
  BOOST_TEST(count(store.db(), "SELECT count(*) FROM training_run") == 0);
}

BOOST_AUTO_TEST_CASE(the_writer_commits_every_n_steps_and_when_it_finishes) {
  TempDir dir;
  const std::string path = dir.file("results.db");
  ResultStore store(path);
  ResultStore reader(path, Mode::ReadOnly);  // another connection sees only commits
  const auto committed = [&] { return count(reader.db(), "SELECT count(*) FROM training_step"); };
  const int64_t run = begin_training_run(store, run_info());
  {
    TrainingStepWriter writer(store, run, /*steps_per_commit=*/4);
    for (int64_t s = 1; s <= 3; ++s) writer.record(step(s));
    BOOST_TEST(committed() == 0);
    writer.record(step(4));
    BOOST_TEST(committed() == 4);
    writer.record(step(5));
    writer.flush();
    BOOST_TEST(committed() == 5);
    writer.record(step(6));
  }  // the destructor commits step 6
  BOOST_TEST(committed() == 6);
  TrainingStepWriter writer(store, run, 100);
  writer.record(step(7));
  writer.finish(TrainingStatus::Complete);
  BOOST_TEST(committed() == 7);
  BOOST_TEST(status_of(reader.db(), run) == "complete");
  expect_store_error([&] { TrainingStepWriter(store, run, 0); },
                     "results database '" + path + "': cannot record steps into training run " +
                         std::to_string(run) +
                         ": it is 'complete', and only a 'running' run takes steps");
  const int64_t next = begin_training_run(store, run_info());
  expect_store_error([&] { TrainingStepWriter(store, next, 0); },
                     "results database '" + path + "': training run " + std::to_string(next) +
                         ": steps_per_commit is 0; commit every 1 or more steps");
}

// What recording costs a training loop of 1-5 ms steps: printed, and bounded loosely so that
// a regression to a transaction with a statement prepared per step shows.
BOOST_AUTO_TEST_CASE(recording_a_step_costs_microseconds) {
  TempDir dir;
  ResultStore store(dir.file("results.db"));
  constexpr int64_t kSteps = 2000;
  for (const int per_commit : {1, TrainingStepWriter::kDefaultStepsPerCommit}) {
    const int64_t run = begin_training_run(store, run_info());
    const auto start = std::chrono::steady_clock::now();
    {
      TrainingStepWriter writer(store, run, per_commit);
      for (int64_t s = 1; s <= kSteps; ++s) writer.record(step(s));
      writer.finish(TrainingStatus::Complete);
    }
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
            .count() /
        kSteps;
    BOOST_TEST_MESSAGE("steps_per_commit " << per_commit << ": " << us << " us per step");
    BOOST_TEST(load_training_run(store.db(), run)->steps == kSteps);
    BOOST_TEST(us < 1000.0, "recording a step took " << us << " us");
  }
}

BOOST_AUTO_TEST_CASE(a_dead_training_run_is_marked_interrupted_by_the_next_writer) {
  TempDir dir;
  const std::string path = dir.file("results.db");
  { ResultStore create(path); }  // no connection crosses the fork
  const pid_t child = fork();
  BOOST_REQUIRE(child >= 0);
  if (child == 0) {
    int code = 0;
    try {
      ResultStore store(path);
      const int64_t run = begin_training_run(store, run_info());
      record_training_steps(store, run, std::vector{step(1)});
    } catch (...) {
      code = 2;
    }
    _exit(code);  // dies without finishing its run
  }
  int status = 0;
  BOOST_REQUIRE(waitpid(child, &status, 0) == child);
  BOOST_REQUIRE((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  BOOST_TEST(status_of(ResultStore(path, Mode::ReadOnly).db(), 1) == "running");  // readers
  ResultStore store(path);
  BOOST_TEST(status_of(store.db(), 1) == "interrupted");
  BOOST_TEST(load_training_steps(store.db(), 1).size() == 1u);
  // A live writer's run (this process) stays running.
  const int64_t live = begin_training_run(store, run_info());
  ResultStore second(path);
  BOOST_TEST(status_of(second.db(), live) == "running");
}

// A file written by the previous schema (version 4) gets the training tables, its rows intact.
BOOST_AUTO_TEST_CASE(a_version_4_file_gets_the_training_tables) {
  TempDir dir;
  const std::string path = dir.file("v4.db");
  {
    Database db(path, Mode::ReadWrite);
    apply_migrations(db, schema_migrations().first(4));
    insert_v1_run(db, 1, "v4commit", "parity");
    BOOST_TEST(count(db,
                     "SELECT count(*) FROM sqlite_master WHERE name IN ('training_run', "
                     "'training_step')") == 0);
  }
  ResultStore store(path);
  BOOST_TEST(store.schema_version() == kSchemaVersion);
  BOOST_TEST(count(store.db(), "SELECT count(*) FROM run WHERE commit_sha = 'v4commit'") == 1);
  BOOST_TEST(count(store.db(), "SELECT count(*) FROM training_run") == 0);
  const int64_t run = begin_training_run(store, run_info());
  record_training_steps(store, run, std::vector{step(1)});
  finish_training_run(store, run, TrainingStatus::Complete);
  BOOST_TEST(load_training_run(store.db(), run)->steps == 1);
}

// Schema v6: every run and training run records the version of the binary that wrote it. A
// version 5 file keeps its rows, with an empty version: they were written before it was known.
BOOST_AUTO_TEST_CASE(a_version_5_file_keeps_its_rows_and_new_rows_record_the_version) {
  TempDir dir;
  const std::string path = dir.file("v5.db");
  {
    Database db(path, Mode::ReadWrite);
    apply_migrations(db, schema_migrations().first(5));
    insert_v1_run(db, 1, "v5commit", "parity");
    db.exec(
        "INSERT INTO training_run (id, commit_sha, dirty, build_type, compiler, cpu_model, "
        "machine, threads, command, model, config, optimizer, data_path, data_sha256, "
        "data_bytes, seed, started_at, status, host) VALUES (1, 'v5commit', 0, 'Release', "
        "'g++', 'cpu', 'm', 1, 'x', 'tiny-transformer', '{}', '{}', 'd', 'sha', 0, '7', 't0', "
        "'complete', 'h');");
  }
  ResultStore store(path);
  BOOST_TEST(store.schema_version() == kSchemaVersion);
  BOOST_TEST(count(store.db(), "SELECT count(*) FROM run WHERE volta_version = ''") == 1);
  BOOST_TEST(load_training_run(store.db(), 1)->volta_version.empty());
  const int64_t run =
      store.begin_run(RunInfo{"c", false, "t", "g++", "cpu", 1, "cpu", "m", "parity", "x"});
  const int64_t training = begin_training_run(store, run_info());
  Statement version = store.db().prepare("SELECT volta_version FROM run WHERE id = ?");
  version.bind(1, run).step();
  BOOST_TEST(version.column_text(0) == std::string(kVersion));
  BOOST_TEST(load_training_run(store.db(), training)->volta_version == std::string(kVersion));
  BOOST_TEST(!kVersion.empty());
}

}  // namespace
}  // namespace volta::conformance
