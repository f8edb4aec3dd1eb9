// The determinism gates (determinism-100, thread-invariance, plan-stability, batch-invariance):
// the suite gate over their families, made complete. Every subject is a case of every family
// it belongs to: the built-in models, and for the families that replay ONNX tests, every ONNX
// test the CPU engine passes (read from the commit's onnx evidence, which the onnx gate holds
// to the corpus floor, so a determinism run over a small --data folder cannot shrink it). Each
// subject case must PASS (no expectation excuses a difference) with at least the evidence the
// gate's name promises (runs, fresh processes, configurations, batch sizes), and every
// negative control must catch its planted defect.

#include <algorithm>
#include <string>
#include <vector>

#include "build_info.h"
#include "gate_sql.h"
#include "volta/conformance/determinism_suite.h"
#include "volta/conformance/onnx_coverage.h"

namespace volta::audit {
namespace {

namespace det = conformance;

constexpr std::string_view kConfigsFolder = "conformance/determinism/configs";

// The ONNX subjects: every ONNX test the CPU engine passes, from the commit's usable onnx runs.
std::string subject_ctes(bool with_onnx) {
  std::vector<std::string> builtins(det::kBuiltinSubjects.begin(), det::kBuiltinSubjects.end());
  std::string sql = det::onnx_evidence_ctes() + ",\n";
  sql +=
      "onnx_known AS (SELECT EXISTS (SELECT 1 FROM onnx_evidence WHERE backend = 'cpu') AS "
      "yes),\n";
  sql += "subject(name) AS (" + values_list(builtins);
  if (with_onnx) {
    sql +=
        " UNION SELECT 'onnx:' || case_id FROM onnx_evidence "
        "WHERE backend = 'cpu' AND outcome = 'PASS'";
  }
  return sql + "),\n";
}

constexpr std::string_view kOnnxUnknownReason = R"sql(
  UNION ALL
  SELECT 5, 'NOT VERIFIED', 'the ONNX subjects (every ONNX test the CPU engine passes) are ' ||
         'unknown: the commit has no usable onnx results on the cpu backend; run ' ||
         '`volta-audit run onnx --backend cpu`'
  WHERE NOT (SELECT yes FROM onnx_known)
)sql";

std::vector<std::string> controls_of(std::string_view family) {
  std::vector<std::string> ids;
  for (const det::NegativeControl& c : det::kNegativeControls) {
    if (c.family == family) ids.emplace_back(c.case_id);
  }
  return ids;
}

std::vector<std::string> controls_of(const std::vector<std::string_view>& families) {
  std::vector<std::string> ids;
  for (std::string_view f : families) {
    for (std::string& id : controls_of(f)) ids.push_back(std::move(id));
  }
  std::ranges::sort(ids);
  return ids;
}

// "SELECT 'replay:' || name FROM subject": the family's case per subject.
std::string subject_cases(std::string_view prefix) {
  return "SELECT " + sql_literal(prefix) + " || name FROM subject";
}

// The configuration files committed under configs/ other than the baseline, by name: what
// every threads:SUBJECT case must have compared ("configurations=a,b,...", sorted).
std::string committed_configurations() {
  std::vector<std::string> names;
  const std::string prefix = std::string(kConfigsFolder) + "/";
  for (const build::CommittedFile& f : build::kCommittedFiles) {
    const std::string_view path = f.path;
    if (!path.starts_with(prefix) || !path.ends_with(".conf")) continue;
    const std::string_view stem = path.substr(prefix.size(), path.size() - prefix.size() - 5);
    if (stem != "baseline" && stem.find('/') == std::string_view::npos) names.emplace_back(stem);
  }
  std::ranges::sort(names);
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ",") + n;
  return list;
}

std::string batch_sizes() {
  std::string list;
  for (int64_t b : det::kBatchSizes) list += (list.empty() ? "" : ",") + std::to_string(b);
  return list;
}

SuiteGateSpec replay_gate() {
  SuiteGateSpec spec;
  spec.selection = {.suite = det::kDeterminismSuite,
                    .backend = "cpu",
                    .families = {det::kReplayFamily, det::kStrictModeFamily}};
  std::vector<std::string> strict(det::kStrictModeCases.begin(), det::kStrictModeCases.end());
  spec.extra_ctes = subject_ctes(true);
  spec.expected = subject_cases("replay:") + " UNION ALL " + values_list(strict);
  spec.controls = controls_of(spec.selection.families);
  spec.no_expected_failures = true;
  spec.params_rule =
      "substr(case_id, 1, 7) <> 'replay:' OR "
      "(CAST(volta_param(params, 'runs') AS INTEGER) >= " +
      std::to_string(det::kReplayRuns) +
      " AND CAST(volta_param(params, 'processes') AS INTEGER) >= " +
      std::to_string(det::kFreshProcesses) + ")";
  spec.params_words = "every replay needs at least " + std::to_string(det::kReplayRuns) +
                      " runs and " + std::to_string(det::kFreshProcesses) + " fresh processes";
  spec.extra_reasons = std::string(kOnnxUnknownReason);
  return spec;
}

SuiteGateSpec threads_gate() {
  SuiteGateSpec spec;
  spec.selection = {.suite = det::kDeterminismSuite,
                    .backend = "cpu",
                    .families = {det::kThreadInvarianceFamily}};
  spec.extra_ctes = subject_ctes(true);
  spec.expected = subject_cases("threads:");
  spec.controls = controls_of(spec.selection.families);
  spec.no_expected_failures = true;
  const std::string configurations = committed_configurations();
  spec.params_rule = "substr(case_id, 1, 8) <> 'threads:' OR params = " +
                     sql_literal("configurations=" + configurations);
  spec.params_words =
      "every configuration committed under " + std::string(kConfigsFolder) + ": " + configurations;
  if (configurations.empty()) {
    spec.gate_input_problem = "this volta-audit knows no committed configuration files (" +
                              std::string(kConfigsFolder) + ")";
  }
  spec.extra_reasons = std::string(kOnnxUnknownReason);
  return spec;
}

// plan-stability also compares the plan fingerprint (output_hash of every plan:SUBJECT case:
// plan, IR-after-each-pass, schedule and allocation hashes) across every usable run of the
// commit, not only the newest, and those runs must include a Debug and an optimized build on
// one machine: the optimizer must not change a plan. A case whose fingerprint differs is
// reported with the oldest run's fingerprint and the first run that disagrees with it. The
// cross-build negative control (a pass that depends on __OPTIMIZE__) goes through the same
// comparison and must be found to differ.
constexpr std::string_view kPlanComparisonCtes = R"sql(
-- Plans are compared per machine: the kernel variant (ISA, tile) is part of the plan, and the
-- policy promises nothing across machines with different instruction sets.
fingerprints AS (
  SELECT case_id, run_id, build_type, machine, started_at, output_hash FROM ranked
  WHERE (substr(case_id, 1, 5) = 'plan:' OR case_id IN (SELECT case_id FROM cross_build_control))
    AND output_hash <> ''
),
first_fingerprint AS (
  SELECT * FROM (
    SELECT f.*, row_number() OVER (PARTITION BY case_id, machine ORDER BY started_at, run_id) AS k
    FROM fingerprints f
  ) WHERE k = 1
),
diverged AS (
  SELECT * FROM (
    SELECT a.case_id, a.run_id AS run_a, a.build_type AS type_a, a.output_hash AS hash_a,
           b.run_id AS run_b, b.build_type AS type_b, b.output_hash AS hash_b,
           row_number() OVER (PARTITION BY a.case_id ORDER BY b.started_at, b.run_id) AS k
    FROM first_fingerprint a
    JOIN fingerprints b ON b.case_id = a.case_id AND b.machine = a.machine
                       AND b.output_hash <> a.output_hash
  ) WHERE k = 1
),
plan_fingerprints AS (SELECT * FROM fingerprints WHERE substr(case_id, 1, 5) = 'plan:'),
-- Machines on which both a Debug and an optimized build recorded plans.
cross_build AS (
  SELECT machine FROM plan_fingerprints GROUP BY machine
  HAVING sum(build_type = 'Debug') > 0 AND sum(build_type <> 'Debug') > 0
),
compared AS (
  SELECT (SELECT count(DISTINCT case_id) FROM plan_fingerprints) AS plans,
         (SELECT count(DISTINCT run_id) FROM plan_fingerprints) AS runs,
         coalesce((SELECT group_concat(build_type, ', ')
                   FROM (SELECT DISTINCT build_type FROM plan_fingerprints ORDER BY build_type)),
                  'none') AS build_types,
         EXISTS (SELECT 1 FROM plan_fingerprints WHERE build_type = 'Debug') AS debug,
         EXISTS (SELECT 1 FROM plan_fingerprints WHERE build_type <> 'Debug') AS optimized,
         EXISTS (SELECT 1 FROM cross_build) AS same_machine
),
cross_build_judged AS (
  SELECT k.case_id,
         EXISTS (SELECT 1 FROM diverged d WHERE d.case_id = k.case_id) AS caught,
         EXISTS (SELECT 1 FROM fingerprints f WHERE f.case_id = k.case_id
                   AND f.build_type = 'Debug' AND f.machine IN (SELECT machine FROM cross_build))
         AND EXISTS (SELECT 1 FROM fingerprints f WHERE f.case_id = k.case_id
                   AND f.build_type <> 'Debug' AND f.machine IN (SELECT machine FROM cross_build))
           AS both_builds
  FROM cross_build_control k
),
)sql";

constexpr std::string_view kPlanComparisonReasons = R"sql(
  UNION ALL
  SELECT 9, 'FAIL', (SELECT count(*) FROM diverged WHERE substr(case_id, 1, 5) = 'plan:') ||
         ' plan fingerprint(s) differ between runs of the commit on one machine; first: ' ||
         (SELECT case_id || ': run ' || run_a || ' (' || type_a || ') gave "' || hash_a ||
                 '", run ' || run_b || ' (' || type_b || ') gave "' || hash_b || '"'
          FROM diverged WHERE substr(case_id, 1, 5) = 'plan:' ORDER BY case_id LIMIT 1)
  WHERE EXISTS (SELECT 1 FROM diverged WHERE substr(case_id, 1, 5) = 'plan:')
  UNION ALL
  SELECT 10, 'NOT VERIFIED',
         CASE WHEN runs = 0 THEN
                'no plan:SUBJECT case recorded a plan fingerprint; run `{command_text}`'
              WHEN debug AND optimized THEN
                'the Debug and optimized plan fingerprints come from different machines; ' ||
                'run `{command_text}` from both builds on one machine (scripts/ci/audit.sh does)'
              ELSE
                'plan fingerprints only from build type(s) ' || build_types || ' (' || runs ||
                ' run(s)); plan stability needs a Debug and an optimized (Release or ' ||
                'RelWithDebInfo) build of the commit: run `{command_text}` from ' ||
                CASE WHEN debug THEN 'an optimized build (the `relassert` preset)'
                     ELSE 'a Debug build (scripts/ci/audit.sh builds the `debug` preset for it)'
                END
         END
  FROM compared WHERE NOT same_machine
  UNION ALL
  SELECT 11, 'NOT VERIFIED', 'cross-build negative control ' || case_id ||
         CASE WHEN both_builds THEN
                ' did not catch its planted defect: its fingerprints from the Debug and the ' ||
                'optimized build agree, so the comparison across builds is not shown able ' ||
                'to fail'
              ELSE
                ' has no fingerprints from both a Debug and an optimized build on one ' ||
                'machine; run `{command_text}` from both builds'
         END
  FROM cross_build_judged WHERE NOT caught
)sql";

SuiteGateSpec plan_gate() {
  SuiteGateSpec spec;
  spec.selection = {
      .suite = det::kDeterminismSuite, .backend = "cpu", .families = {det::kPlanStabilityFamily}};
  spec.extra_ctes = subject_ctes(true);
  std::vector<std::string> cross_build;
  for (const det::NegativeControl& c : det::kNegativeControls) {
    if (c.family == det::kPlanStabilityFamily && c.across_builds)
      cross_build.emplace_back(c.case_id);
  }
  spec.extra_ctes += "cross_build_control(case_id) AS (" + values_list(cross_build) + "),\n";
  spec.late_ctes = std::string(kPlanComparisonCtes);
  spec.expected = subject_cases("plan:");
  spec.controls = controls_of(spec.selection.families);
  spec.no_expected_failures = true;
  spec.params_rule =
      "substr(case_id, 1, 5) <> 'plan:' OR "
      "CAST(volta_param(params, 'processes') AS INTEGER) >= " +
      std::to_string(det::kFreshProcesses);
  spec.params_words =
      "every plan needs " + std::to_string(det::kFreshProcesses) + " fresh processes' compiles";
  spec.extra_reasons = std::string(kOnnxUnknownReason) + std::string(kPlanComparisonReasons);
  spec.pass_detail =
      "'; ' || (SELECT plans || ' plan fingerprint(s) identical across ' || runs || "
      "' runs of build types ' || build_types FROM compared)";
  return spec;
}

SuiteGateSpec batch_gate() {
  SuiteGateSpec spec;
  spec.selection = {
      .suite = det::kDeterminismSuite, .backend = "cpu", .families = {det::kBatchInvarianceFamily}};
  spec.extra_ctes = subject_ctes(false);
  spec.expected = subject_cases("batch:");
  spec.controls = controls_of(spec.selection.families);
  spec.no_expected_failures = true;
  const std::string sizes = batch_sizes();
  spec.params_rule =
      "substr(case_id, 1, 6) <> 'batch:' OR volta_param(params, 'batches') = " + sql_literal(sizes);
  spec.params_words = "every subject compared at batch sizes " + sizes;
  return spec;
}

// The subjects' replay, plan-stability and batch-invariance cases on cuda: every built-in model
// must pass each (a built-in skipped for want of a device or a kernel leaves the gate NOT
// VERIFIED). ONNX subjects run too where the backend has their kernels; one with an op it has
// no kernel for is SKIPPED under its declared precondition and counted, not required. The
// device's negative control is the cuda_device_determinism_test binary's planted atomic sum.
SuiteGateSpec cuda_gate() {
  SuiteGateSpec spec;
  spec.selection = {
      .suite = det::kDeterminismSuite,
      .backend = "cuda",
      .families = {det::kReplayFamily, det::kPlanStabilityFamily, det::kBatchInvarianceFamily}};
  spec.extra_ctes = subject_ctes(false);
  spec.expected = subject_cases("replay:") + " UNION ALL " + subject_cases("plan:") +
                  " UNION ALL " + subject_cases("batch:");
  spec.params_rule =
      "substr(case_id, 1, 7) <> 'replay:' OR "
      "(CAST(volta_param(params, 'runs') AS INTEGER) >= " +
      std::to_string(det::kReplayRuns) +
      " AND CAST(volta_param(params, 'processes') AS INTEGER) >= " +
      std::to_string(det::kFreshProcesses) + ")";
  spec.params_words = "every replay needs at least " + std::to_string(det::kReplayRuns) +
                      " runs and " + std::to_string(det::kFreshProcesses) + " fresh processes";
  spec.extra_reasons = R"sql(
  UNION ALL
  SELECT 9, 'NOT VERIFIED', n || ' built-in subject case(s) skipped; first: ' || first_skip
  FROM (SELECT count(*) AS n,
               (SELECT case_id || ': ' || message FROM judged
                WHERE outcome = 'SKIPPED' AND case_id IN (SELECT case_id FROM expected_case)
                ORDER BY case_id LIMIT 1) AS first_skip
        FROM judged
        WHERE outcome = 'SKIPPED' AND case_id IN (SELECT case_id FROM expected_case))
  WHERE n > 0)sql";
  return spec;
}

}  // namespace

std::string determinism_cuda_gate_sql() { return suite_gate_sql(cuda_gate()); }

std::string determinism_gate_sql(std::string_view family) {
  SuiteGateSpec spec = family == det::kReplayFamily             ? replay_gate()
                       : family == det::kThreadInvarianceFamily ? threads_gate()
                       : family == det::kPlanStabilityFamily    ? plan_gate()
                                                                : batch_gate();
  std::string sql = suite_gate_sql(spec);
  replace_all(sql, "{command_text}", selection_command(spec.selection));
  return sql;
}

}  // namespace volta::audit
