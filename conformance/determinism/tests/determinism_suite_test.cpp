// The determinism suite without the ONNX corpus: its configuration files, its checks on the
// built-in models, and every negative control caught; the fresh processes are the real worker
// (determinism_test_worker runs determinism_worker_main) where a test says so.
#define BOOST_TEST_MODULE determinism_suite
#include "volta/conformance/determinism_suite.h"

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <fstream>

#include "checks.h"
#include "configs.h"
#include "controls.h"
#include "volta/runtime/registry.h"

namespace volta::conformance {
namespace {

namespace fs = std::filesystem;

DeterminismOptions offline_options() {
  DeterminismOptions o;
  o.runs = 10;
  o.processes = 0;
  o.configs = VOLTA_DETERMINISM_CONFIGS;
  return o;
}

// offline_options with `processes` fresh processes of the real worker.
DeterminismOptions worker_options(int processes) {
  DeterminismOptions o = offline_options();
  o.processes = processes;
  o.worker_command = {VOLTA_DETERMINISM_WORKER};
  return o;
}

const NegativeControl& control(std::string_view id) {
  for (const NegativeControl& c : kNegativeControls) {
    if (c.case_id == id) return c;
  }
  BOOST_FAIL("no negative control " << id);
  return kNegativeControls[0];
}

CaseOutcome run(const std::vector<SuiteCase>& cases, std::string_view id) {
  for (const SuiteCase& c : cases) {
    if (c.case_id == id) return c.body();
  }
  BOOST_FAIL("no case " << id);
  return {};
}

BOOST_AUTO_TEST_CASE(the_committed_matrix_changes_one_setting_per_file) {
  const ConfigMatrix m = load_config_matrix(VOLTA_DETERMINISM_CONFIGS);
  BOOST_CHECK_EQUAL(describe(m.baseline), "threads=3 passes=on chunk_scale=1 task_order=forward");
  std::vector<std::string> names;
  for (const ConfigFile& f : m.variations) {
    names.push_back(f.name);
    BOOST_CHECK(!f.reason.empty());
  }
  const std::vector<std::string> want = {
      "chunk-scale-4x", "chunk-scale-quarter", "passes-off", "task-order-reverse",
      "threads-1",      "threads-2",           "threads-4",  "threads-8"};
  BOOST_CHECK_EQUAL_COLLECTIONS(names.begin(), names.end(), want.begin(), want.end());
}

// A scratch configuration directory with the committed baseline and one variation.
struct ScratchConfigs {
  fs::path dir;
  explicit ScratchConfigs(const std::string& variation) {
    char pattern[] = "/tmp/volta-configs-XXXXXX";
    dir = mkdtemp(pattern);
    fs::copy_file(fs::path(VOLTA_DETERMINISM_CONFIGS) / "baseline.conf", dir / "baseline.conf");
    std::ofstream(dir / "bad.conf") << variation;
  }
  ~ScratchConfigs() { fs::remove_all(dir); }
};

void expect_config_error(const std::string& variation, const std::string& needle) {
  const ScratchConfigs scratch(variation);
  try {
    load_config_matrix(scratch.dir);
    BOOST_ERROR("accepted: " << variation);
  } catch (const VoltaError& e) {
    BOOST_CHECK_MESSAGE(std::string(e.what()).find(needle) != std::string::npos, e.what());
  }
}

BOOST_AUTO_TEST_CASE(bad_configuration_files_are_refused_with_file_and_reason) {
  expect_config_error("threads = 2\n", "no `reason = ...` line");
  expect_config_error("reason = r\nthreads = 2\npasses = off\n", "changes exactly one setting");
  expect_config_error("reason = r\n", "changes exactly one setting");
  expect_config_error("reason = r\nthreads = 3\n", "has the baseline's value");
  expect_config_error("reason = r\nfast = yes\n",
                      "unknown setting 'fast' (settings: reason, "
                      "threads, passes, chunk_scale, task_order)");
  expect_config_error("reason = r\nchunk_scale = -1\n", "is not a positive number");
  expect_config_error("reason = r\nthreads = 0\n", "bad.conf:2: threads = '0' is not a thread");
  expect_config_error("reason = r\ntask_order = random\n", "is not forward or reverse");
  expect_config_error("reason = r\nthreads 2\n", "expected `setting = value`");
}

BOOST_AUTO_TEST_CASE(built_in_models_pass_every_check) {
  const std::vector<SuiteCase> cases = determinism_cases(offline_options());
  for (std::string_view model : {"model:mlp", "model:cnn", "model:transformer-block"}) {
    for (std::string_view check : {"replay:", "threads:", "plan:"}) {
      const std::string id = std::string(check) + std::string(model);
      const CaseOutcome out = run(cases, id);
      BOOST_CHECK_MESSAGE(out.outcome == Outcome::Pass, id << ": " << out.message);
      BOOST_CHECK_EQUAL(out.output_hash.empty(), false);
    }
  }
  const CaseOutcome replay = run(cases, "replay:model:transformer-block");
  BOOST_CHECK(replay.traces.size() >= 19);  // every step output of the first run (19 steps)
  BOOST_CHECK_EQUAL(replay.traces.front().subject, "model:transformer-block");
  BOOST_CHECK_EQUAL(replay.traces.front().origin, "graph builder");
  BOOST_CHECK(run(cases, "plan:model:mlp").output_hash.starts_with("plan="));
}

// On cuda the suite has the subjects' replay, plan and batch cases under their declared
// precondition, and neither controls, strict-mode nor thread-invariance (the cpu run's). Where
// this binary has no CUDA backend or device, each is SKIPPED saying why; never a PASS.
BOOST_AUTO_TEST_CASE(cuda_cases_are_the_subject_families_under_their_precondition) {
  DeterminismOptions options = offline_options();
  options.backend = "cuda";
  const std::vector<SuiteCase> cases = determinism_cases(options);
  BOOST_TEST(cases.size() == 3 * kBuiltinSubjects.size());
  for (const SuiteCase& c : cases) {
    BOOST_TEST(c.backend == "cuda");
    BOOST_TEST(c.precondition == kCudaSubjectPrecondition);
    BOOST_TEST((c.case_id.starts_with("replay:") || c.case_id.starts_with("plan:") ||
                c.case_id.starts_with("batch:")),
               c.case_id);
  }
  if (const std::optional<std::string> why = backend_unavailable("cuda")) {
    const CaseOutcome out = run(cases, "replay:model:mlp");
    BOOST_CHECK(out.outcome == Outcome::Skipped);
    BOOST_TEST(out.message.starts_with(*why), out.message);
  }
  options.backend = "tpu";
  BOOST_CHECK_EXCEPTION(determinism_cases(options), VoltaError, [](const VoltaError& e) {
    return e.message() == "the determinism suite has no backend 'tpu' (supported: cpu, cuda)";
  });
}

// Every check must be shown able to fail: each control is a planted defect its check catches
// (the fresh-process ones through the real worker). The cross-build control is judged across
// builds by the plan-stability gate: here it only records its fingerprint.
BOOST_AUTO_TEST_CASE(every_negative_control_is_caught) {
  DeterminismOptions options = worker_options(1);
  options.runs = 100;
  const std::vector<SuiteCase> cases = determinism_cases(options);
  for (const NegativeControl& control : kNegativeControls) {
    const CaseOutcome out = run(cases, control.case_id);
    BOOST_CHECK_MESSAGE(out.outcome == Outcome::Pass, control.case_id << ": " << out.message);
    if (control.across_builds) {
      BOOST_CHECK_MESSAGE(out.output_hash.starts_with("plan="), out.output_hash);
    } else {
      BOOST_CHECK_MESSAGE(out.message.starts_with("caught "), out.message);
    }
  }
}

BOOST_AUTO_TEST_CASE(only_the_optimizer_control_is_judged_across_builds) {
  for (const NegativeControl& c : kNegativeControls) {
    BOOST_CHECK_EQUAL(c.across_builds, c.case_id == "control:plan:optimizer-dependent-pass");
  }
  BOOST_CHECK(control("control:replay:fresh-process-divergence").family == kReplayFamily);
  BOOST_CHECK(control("control:plan:fresh-process-divergence").family == kPlanStabilityFamily);
  BOOST_CHECK(control("control:plan:optimizer-dependent-pass").family == kPlanStabilityFamily);
  BOOST_CHECK(control("control:batch:batch-size-chunked-kernel").family == kBatchInvarianceFamily);
}

// The batch subjects are the built-in models, at the full set of batch sizes; ONNX subjects
// have fixed shapes and are not batch subjects.
BOOST_AUTO_TEST_CASE(batch_cases_cover_the_built_in_models) {
  std::vector<std::string> ids;
  for (const SuiteCase& c : determinism_cases(offline_options())) {
    if (c.family != kBatchInvarianceFamily || c.case_id.starts_with("control:")) continue;
    ids.push_back(c.case_id);
    BOOST_CHECK_EQUAL(c.params, "batches=1,2,3,7,16,64 threads=3");
  }
  const std::vector<std::string> want = {"batch:model:cnn", "batch:model:mlp",
                                         "batch:model:transformer-block"};
  BOOST_CHECK_EQUAL_COLLECTIONS(ids.begin(), ids.end(), want.begin(), want.end());
  const std::vector<std::string> large = batch_subject_names({{}, {}, true});
  BOOST_CHECK_EQUAL(large.size(), 5u);
  // The gates' list of built-in subjects is engine/model's list of built-in models.
  const std::vector<std::string> builtin = subject_names({});
  BOOST_CHECK_EQUAL_COLLECTIONS(builtin.begin(), builtin.end(), kBuiltinSubjects.begin(),
                                kBuiltinSubjects.end());
  try {
    load_batch_subject("onnx:node/test_abs", 2);
    BOOST_ERROR("an ONNX subject was built as a batch subject");
  } catch (const VoltaError& e) {
    BOOST_CHECK_MESSAGE(std::string(e.what()).find("no batch axis") != std::string::npos, e.what());
  }
}

// Sample i's input is the same bits in every batch, and the weights do not change with it.
BOOST_AUTO_TEST_CASE(a_batch_subject_is_a_pure_function_of_the_sample_index) {
  for (const std::string& name : batch_subject_names({})) {
    const Subject three = load_batch_subject(name, 3);
    const Subject seven = load_batch_subject(name, 7);
    BOOST_REQUIRE_EQUAL(three.inputs.size(), 1u);
    const auto* a = static_cast<const std::byte*>(three.inputs[0].data());
    const auto* b = static_cast<const std::byte*>(seven.inputs[0].data());
    BOOST_CHECK_MESSAGE(std::equal(a, a + three.inputs[0].nbytes(), b), name);
    BOOST_REQUIRE_EQUAL(three.graph.parameters().size(), seven.graph.parameters().size());
  }
}

// Level 4 on the three models, at the suite's full set of batch sizes (timed: a case stays
// under a few seconds in an optimized build).
BOOST_AUTO_TEST_CASE(built_in_models_are_batch_invariant) {
  const std::vector<SuiteCase> cases = determinism_cases(offline_options());
  for (std::string_view model : {"model:mlp", "model:cnn", "model:transformer-block"}) {
    const std::string id = "batch:" + std::string(model);
    const auto start = std::chrono::steady_clock::now();
    const CaseOutcome out = run(cases, id);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    BOOST_TEST_MESSAGE(id << ": " << took.count() << " s");
    BOOST_CHECK_MESSAGE(out.outcome == Outcome::Pass, id << ": " << out.message);
    BOOST_CHECK_EQUAL(out.output_hash.size(), 16u);
    BOOST_CHECK_MESSAGE(out.message.find("all ") != std::string::npos, out.message);
  }
}

// The batch control's defect is the batch-chunked kernel, not the subject: the plain CPU
// backend passes the same check, and the caught control names batch, sample, output, element
// and the divergent node.
BOOST_AUTO_TEST_CASE(the_batch_control_is_caught_with_batch_sample_output_and_node) {
  const auto cpu = make_backend("cpu");
  const CheckResult clean = check_batch(batch_control_subject, *cpu, kBatchSizes, 3);
  BOOST_CHECK_MESSAGE(clean.identical, clean.summary);
  BOOST_CHECK_EQUAL(clean.params, "batches=1,2,3,7,16,64 threads=3");

  const auto chunked = make_batch_chunked_backend();
  const CheckResult caught = check_batch(batch_control_subject, *chunked, kBatchSizes, 3);
  BOOST_CHECK(!caught.identical);
  for (const std::string_view needle :
       {"sample output slices differ from the sample run alone; first: batch ", ", sample ",
        "output 0 'control.rowsum'", ": element 0 of the sample's slice is ", " alone; ",
        "first divergent node (run A: sample ", "node 'control.rowsum' (ReduceSum)"}) {
    BOOST_CHECK_MESSAGE(caught.summary.find(needle) != std::string::npos,
                        "'" << needle << "' not in: " << caught.summary);
  }
  const CaseOutcome out =
      run(determinism_cases(offline_options()), "control:batch:batch-size-chunked-kernel");
  BOOST_CHECK_MESSAGE(out.outcome == Outcome::Pass, out.message);
}

// A subject whose sample inputs change with the batch breaks the check's premise: an error, not
// a verdict on the engine.
BOOST_AUTO_TEST_CASE(check_batch_refuses_a_subject_whose_samples_depend_on_the_batch) {
  const auto cpu = make_backend("cpu");
  auto drifting = [](int64_t batch) {
    Subject s = batch_control_subject(batch);
    s.inputs[0].data_as<float>()[0] += static_cast<float>(batch);
    return s;
  };
  const std::vector<int64_t> batches = {1, 2};
  try {
    check_batch(drifting, *cpu, batches, 2);
    BOOST_ERROR("accepted a subject whose sample 0 depends on the batch");
  } catch (const VoltaError& e) {
    BOOST_CHECK_MESSAGE(std::string(e.what()).find("control:rowsum at batch 1: sample 0's input 0 "
                                                   "differs from the same sample's at batch 2") !=
                            std::string::npos,
                        e.what());
  }
}

// The fresh-process legs judge the workers' reports: a worker that disagrees is caught, one that
// agrees is not, and without reports nothing can be (hand-made reports).
BOOST_AUTO_TEST_CASE(fresh_process_legs_catch_a_disagreeing_worker_report) {
  const auto cpu = make_backend("cpu");
  const Subject subject = control_subject();
  const CheckResult alone = check_replay(subject, *cpu, 2, 3, {});
  BOOST_REQUIRE(alone.identical);
  const CheckResult plan = check_plan(subject, *cpu, {}, {});
  BOOST_REQUIRE(plan.identical);

  const std::vector<ProcessReport> agree = {{alone.hash, plan.hash, ""}};
  BOOST_CHECK(check_replay(subject, *cpu, 2, 3, agree).identical);
  BOOST_CHECK(check_plan(subject, *cpu, {}, agree).identical);

  const std::vector<ProcessReport> other_output = {{alone.hash, plan.hash, ""},
                                                   {"0123456789abcdef", plan.hash, ""}};
  const CheckResult replay_caught = check_replay(subject, *cpu, 2, 3, other_output);
  BOOST_CHECK(!replay_caught.identical);
  BOOST_CHECK_MESSAGE(
      replay_caught.summary.starts_with("fresh process 2 of 2 gave output hash 0123456789abcdef"),
      replay_caught.summary);
  BOOST_CHECK(check_plan(subject, *cpu, {}, other_output).identical);

  const std::vector<ProcessReport> other_plan = {{alone.hash, "plan=renamed", ""}};
  const CheckResult plan_caught = check_plan(subject, *cpu, {}, other_plan);
  BOOST_CHECK(!plan_caught.identical);
  BOOST_CHECK_MESSAGE(plan_caught.summary.starts_with("fresh process 1 of 1 compiled plan=renamed"),
                      plan_caught.summary);
  BOOST_CHECK(check_replay(subject, *cpu, 2, 3, other_plan).identical);
}

// Through the real worker: each fresh-process control is caught by its fresh-process leg with
// one or more processes, and is NOT caught (FAIL) with none.
BOOST_AUTO_TEST_CASE(fresh_process_controls_need_and_use_the_worker) {
  for (std::string_view id :
       {"control:replay:fresh-process-divergence", "control:plan:fresh-process-divergence"}) {
    const CaseOutcome caught = run(determinism_cases(worker_options(2)), id);
    BOOST_CHECK_MESSAGE(caught.outcome == Outcome::Pass, id << ": " << caught.message);
    BOOST_CHECK_MESSAGE(caught.message.find(": fresh process 1 of 2 ") != std::string::npos,
                        caught.message);

    const CaseOutcome blind = run(determinism_cases(offline_options()), id);
    BOOST_CHECK_MESSAGE(blind.outcome == Outcome::FailNumeric, id << ": " << blind.message);
    BOOST_CHECK_MESSAGE(blind.message.starts_with("negative control NOT caught"), blind.message);
    DeterminismOptions none = worker_options(0);
    const CaseOutcome zero = run(determinism_cases(none), id);
    BOOST_CHECK_MESSAGE(zero.outcome == Outcome::FailNumeric, id << ": " << zero.message);
  }
}

// The fresh processes run for the controls whenever they are selected: by --filter 'control:*'
// and by their family, and the worker gives the models' own bits too.
BOOST_AUTO_TEST_CASE(fresh_processes_run_whenever_a_fresh_process_control_is_selected) {
  DeterminismOptions by_filter = worker_options(1);
  by_filter.filter = "control:*";
  const std::vector<SuiteCase> filtered = determinism_cases(by_filter);
  for (std::string_view id :
       {"control:replay:fresh-process-divergence", "control:plan:fresh-process-divergence"}) {
    const CaseOutcome out = run(filtered, id);
    BOOST_CHECK_MESSAGE(out.outcome == Outcome::Pass, id << ": " << out.message);
  }
  for (std::string_view family : {kReplayFamily, kPlanStabilityFamily}) {
    DeterminismOptions by_family = worker_options(1);
    by_family.family = family;
    by_family.filter = "control:*";
    const std::string id = family == kReplayFamily ? "control:replay:fresh-process-divergence"
                                                   : "control:plan:fresh-process-divergence";
    const CaseOutcome out = run(determinism_cases(by_family), id);
    BOOST_CHECK_MESSAGE(out.outcome == Outcome::Pass, id << ": " << out.message);
  }
  DeterminismOptions models = worker_options(1);
  models.filter = "*:model:mlp";
  const std::vector<SuiteCase> cases = determinism_cases(models);
  for (std::string_view id : {"replay:model:mlp", "plan:model:mlp"}) {
    const CaseOutcome out = run(cases, id);
    BOOST_CHECK_MESSAGE(out.outcome == Outcome::Pass, id << ": " << out.message);
    BOOST_CHECK_MESSAGE(out.message.find(" 1 fresh processes") != std::string::npos, out.message);
  }
}

// The cross-build control records a fingerprint that is not a plain compile's: the pass's mark
// of this build (optimized or not) is in it, so a Debug and an optimized build must disagree.
BOOST_AUTO_TEST_CASE(the_optimizer_control_records_a_build_dependent_fingerprint) {
#ifdef __OPTIMIZE__
  BOOST_CHECK_EQUAL(optimizer_dependent_suffix(), "opt");
#else
  BOOST_CHECK_EQUAL(optimizer_dependent_suffix(), "noopt");
#endif
  const CaseOutcome out =
      run(determinism_cases(offline_options()), "control:plan:optimizer-dependent-pass");
  BOOST_CHECK_MESSAGE(out.outcome == Outcome::Pass, out.message);
  BOOST_CHECK_MESSAGE(
      out.message.find("must see this fingerprint differ between the Debug and the optimized "
                       "builds") != std::string::npos,
      out.message);
  const auto cpu = make_backend("cpu");
  const Subject mlp = load_subject("model:mlp", {});
  const CheckResult plain = check_plan(mlp, *cpu, {}, {});
  BOOST_CHECK(out.output_hash.starts_with("plan="));
  BOOST_CHECK_NE(out.output_hash, plain.hash);
  // The renamed node survives every pass: the plan hash itself differs, not only a pass's.
  const size_t plan_hash = std::string_view("plan=0123456789abcdef").size();
  BOOST_CHECK_NE(out.output_hash.substr(0, plan_hash), plain.hash.substr(0, plan_hash));
  // What the other build type's pass gives differs too: the suffix is all that changes.
  const CheckResult other = check_plan(
      mlp, *cpu,
      [](Graph& g) {
        g.mutable_nodes().back().name +=
            optimizer_dependent_suffix() == "opt" ? std::string(".noopt") : std::string(".opt");
      },
      {});
  BOOST_CHECK_NE(out.output_hash, other.hash);
  BOOST_CHECK_NE(other.hash, plain.hash);
}

BOOST_AUTO_TEST_CASE(strict_refuses_and_relaxed_lists_a_run_to_run_kernel) {
  const std::vector<SuiteCase> cases = determinism_cases(offline_options());
  const CaseOutcome strict = run(cases, "strict:rejects-non-bit-exact");
  BOOST_CHECK_MESSAGE(strict.outcome == Outcome::Pass, strict.message);
  const CaseOutcome relaxed = run(cases, "strict:relaxed-lists-non-bit-exact");
  BOOST_CHECK_MESSAGE(relaxed.outcome == Outcome::Pass, relaxed.message);
  BOOST_CHECK_EQUAL(relaxed.not_bit_exact,
                    "node 'control.sum' (ReduceSum, kernel f32_sum_per_thread, run-to-run)");
}

// The planted divergence changes one node's bits, reproducibly: the replay still passes (every
// run agrees) but its trace differs from a clean run's first at that node. (One flipped low
// bit may round away downstream, so the final outputs need not differ: the trace shows it.)
BOOST_AUTO_TEST_CASE(a_planted_divergence_is_reproducible_and_local) {
  DeterminismOptions planted = offline_options();
  planted.plant_divergence_node = "fc3";
  const CaseOutcome clean = run(determinism_cases(offline_options()), "replay:model:mlp");
  const CaseOutcome dirty = run(determinism_cases(planted), "replay:model:mlp");
  BOOST_CHECK_MESSAGE(dirty.outcome == Outcome::Pass, dirty.message);
  BOOST_REQUIRE_EQUAL(clean.traces.size(), dirty.traces.size());
  size_t first = clean.traces.size();
  for (size_t i = 0; i < clean.traces.size() && first == clean.traces.size(); ++i) {
    if (clean.traces[i].hash != dirty.traces[i].hash) first = i;
  }
  BOOST_REQUIRE_LT(first, clean.traces.size());
  BOOST_CHECK_EQUAL(clean.traces[first].node, "fc3");
}

}  // namespace
}  // namespace volta::conformance
