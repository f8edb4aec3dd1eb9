// `volta-audit perf`: the double pass. Pass 1 runs every selected benchmark with interleaved
// repetitions in one volta-perf process; the suspects (Mann-Whitney p < alpha and a median
// change beyond the benchmark's threshold, governance/perf-slo.md) are re-measured in pass 2
// in fresh processes; only a change seen in both passes is a regression or an improvement.
// Samples, verdicts and baseline moves are rows; the perf-double-pass gate reads the verdicts.
// `volta-audit perf baseline accept BENCH... --reason TEXT` moves baselines explicitly.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "build_info.h"
#include "commands.h"
#include "committed_inputs.h"
#include "gates.h"
#include "perf_machine.h"
#include "perf_policy.h"
#include "perf_run.h"
#include "perf_store.h"
#include "queries.h"
#include "tool_paths.h"
#include "volta/conformance/store.h"
#include "volta/runtime/host.h"

#ifndef VOLTA_PERF_BINARY
#define VOLTA_PERF_BINARY ""  // volta-perf not built (VOLTA_BUILD_PERF=OFF): --perf-binary PATH
#endif

namespace volta::audit {
namespace {

constexpr std::string_view kPerfOptions =
    "--db PATH, --perf-binary PATH, --filter REGEX, --repetitions N, --pass2-repetitions N, "
    "--pass2-processes N, --min-time SECONDS, --policy PATH; baseline accept BENCH... --reason "
    "TEXT";
constexpr std::string_view kFirstRunReason = "first perf run on this machine";
constexpr std::string_view kNewBenchmarkReason = "first perf run of this benchmark on this machine";

// `text` of option `name` as a whole number >= minimum; `fallback` when absent.
int count_option(std::string_view name, const std::optional<std::string>& text, int fallback,
                 int minimum) {
  if (!text) return fallback;
  try {
    size_t used = 0;
    const int value = std::stoi(*text, &used);
    if (used == text->size() && value >= minimum) return value;
  } catch (const std::exception&) {
  }
  throw UsageError(std::string(name) + " takes an integer >= " + std::to_string(minimum) +
                   (minimum > 1 ? " (the perf policy's minimum)" : "") + ", got '" + *text + "'");
}

int integer_option(Args& args, std::string_view name, int fallback, int minimum) {
  return count_option(name, args.option(name), fallback, minimum);
}

double seconds_option(Args& args, std::string_view name, double fallback) {
  const std::optional<std::string> text = args.option(name);
  if (!text) return fallback;
  try {
    size_t used = 0;
    const double value = std::stod(*text, &used);
    if (used == text->size() && value > 0 && std::isfinite(value)) return value;
  } catch (const std::exception&) {
  }
  throw UsageError(std::string(name) + " takes a positive number of seconds, got '" + *text + "'");
}

std::string perf_binary_path(const std::optional<std::string>& requested) {
  if (requested) return *requested;
  if (std::string_view(VOLTA_PERF_BINARY).empty()) {
    throw UsageError(
        "this build has no volta-perf (VOLTA_BUILD_PERF=OFF): pass --perf-binary PATH");
  }
  return VOLTA_PERF_BINARY;
}

MachineFingerprint fingerprint_of(const PerfBinary& binary) {
  return machine_fingerprint(binary.describe());
}

// "1.234 ms": a time with four significant digits in a readable unit.
std::string time_text(double seconds) {
  const char* unit = "s";
  double value = seconds;
  if (seconds < 1e-6) {
    unit = "ns";
    value = seconds * 1e9;
  } else if (seconds < 1e-3) {
    unit = "us";
    value = seconds * 1e6;
  } else if (seconds < 1) {
    unit = "ms";
    value = seconds * 1e3;
  }
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.4g %s", value, unit);
  return buffer;
}

std::string pass_text(const std::optional<PassFigures>& pass) {
  if (!pass || pass->samples == 0) return "-";
  char change[96] = "";
  if (pass->change && pass->p) {
    std::snprintf(change, sizeof change, " %+.1f%% p=%.2g", *pass->change * 100, *pass->p);
  }
  return time_text(pass->median) + " [" + time_text(pass->interval.low) + ", " +
         time_text(pass->interval.high) + "]" + change;
}

std::string print_table(std::span<const PerfVerdictRow> rows) {
  QueryResult table;
  table.columns = {"BENCHMARK",
                   "VARIANT",
                   "THREADS",
                   "BASELINE",
                   "PASS 1 median [95% CI] change p",
                   "PASS 2 median [95% CI] change p",
                   "VERDICT"};
  for (const PerfVerdictRow& r : rows) {
    table.rows.push_back(
        {r.benchmark, r.variant, std::to_string(r.threads),
         r.baseline_median ? time_text(*r.baseline_median) : "-",
         r.verdict == PerfVerdict::Error && r.pass1.samples == 0 ? "-" : pass_text(r.pass1),
         pass_text(r.pass2), std::string(perf_verdict_name(r.verdict))});
  }
  return format_table(table);
}

std::map<std::string, std::vector<const PerfSample*>> by_benchmark(
    const std::vector<PerfSample>& samples) {
  std::map<std::string, std::vector<const PerfSample*>> out;
  for (const PerfSample& s : samples) out[s.benchmark].push_back(&s);
  return out;
}

std::vector<double> seconds_of(const std::vector<const PerfSample*>& samples) {
  std::vector<double> out;
  out.reserve(samples.size());
  for (const PerfSample* s : samples) out.push_back(s->seconds);
  return out;
}

struct RunSettings {
  std::string filter;
  int repetitions = 0;
  int pass2_repetitions = 0;
  int pass2_processes = 3;
  double min_time = 0.05;
  std::filesystem::path policy_file;  // the policy read, standing for governance/perf-slo.md
};

// Timings are evidence for the commit of the binary that produced them: a volta-perf of
// another commit (or of a dirty tree, when volta-audit's is clean) would be recorded under
// the wrong provenance.
void check_binary_commit(const PerfBinary& binary, const BinaryDescription& described) {
  if (described.commit == build::kCommit) return;
  throw UsageError(binary.path().string() + " was built from commit " + described.commit +
                   ", this volta-audit from " + build::kCommit +
                   ": its timings would not be the commit's; build both from one tree");
}

// The peer lanes (perf_run.h) that mirror a selected benchmark, after pass 1, each saying what
// it recorded or why it did not run; their samples are rows of the run, never judged.
void run_peer_lanes(conformance::Database& db, int64_t run_id,
                    const std::vector<std::string>& names, const RunSettings& settings) {
  for (const PeerLane& lane : peer_lanes(peer_environment())) {
    if (!mirrors_any(lane, names)) continue;
    std::string why;
    const std::optional<PassOutcome> peer =
        run_peer_lane(lane, settings.repetitions, settings.min_time, why, names);
    if (!peer) {
      std::fprintf(stderr, "peer lane: %s: SKIPPED: %s\n", lane.name.c_str(), why.c_str());
      continue;
    }
    std::vector<PerfSample> peer_samples;
    std::ranges::copy_if(peer->samples.samples, std::back_inserter(peer_samples),
                         [](const PerfSample& s) { return s.benchmark.starts_with(kPeerPrefix); });
    record_perf_samples(db, run_id, peer_samples);
    std::fprintf(stderr, "peer lane: %s: %zu sample(s)%s%s\n", lane.name.c_str(),
                 peer_samples.size(), peer->failure.empty() ? "" : "; ", peer->failure.c_str());
  }
}

int run_double_pass(const std::string& db_path, const PerfBinary& binary, const PerfPolicy& policy,
                    const RunSettings& settings, const std::string& command) {
  const BinaryDescription described = binary.describe();
  check_binary_commit(binary, described);
  const MachineFingerprint machine = machine_fingerprint(described);
  const std::string key = machine.key();
  const std::vector<std::string> names = binary.list(settings.filter);
  // Every benchmark of the binary, whatever the filter: what the gate needs a verdict for.
  const std::vector<std::string> listing = settings.filter.empty() ? names : binary.list("");
  if (names.empty()) {
    throw UsageError("no benchmark of " + binary.path().string() + " matches --filter '" +
                     settings.filter + "'");
  }
  conformance::ResultStore store(db_path);
  const bool known_machine = machine_has_baselines(store.db(), key);
  const std::map<std::string, PerfBaseline> baselines = newest_baselines(store.db(), key);
  std::fprintf(stderr, "machine: %s\n", key.c_str());
  if (!known_machine) {
    std::fprintf(stderr,
                 "unknown machine: no perf baseline for this fingerprint; recording candidate "
                 "baselines from this run instead of comparing with another machine\n");
  }
  conformance::RunInfo info;
  info.commit = build::kCommit;
  info.dirty = build::kDirty || described.dirty;
  info.build_type = machine.binary.build_type;
  info.compiler = machine.binary.compiler;
  info.cpu_model = machine.cpu_model;
  info.threads = machine.cores;
  info.backend = "cpu";
  info.machine = key;
  info.suites = "perf";
  info.command = command;
  const int64_t run_id = store.begin_run(info);
  std::vector<conformance::RunInput> inputs = {
      file_input(std::string(kPerfPolicyFile), settings.policy_file)};
  if (const char* planted = std::getenv("VOLTA_PLANT_SLOWDOWN"); planted != nullptr) {
    inputs.push_back(planted_option("VOLTA_PLANT_SLOWDOWN", planted));
  }
  store.record_inputs(run_id, inputs);
  record_perf_listing(store.db(), run_id, listing);
  std::fprintf(stderr, "run %lld: commit %.12s%s, %zu benchmark(s), database %s\n",
               static_cast<long long>(run_id), build::kCommit, info.dirty ? " (dirty)" : "",
               names.size(), db_path.c_str());

  // Pass 1: every benchmark, interleaved, in one process.
  std::fprintf(stderr, "pass 1: %zu benchmark(s) x %d repetitions, interleaved\n", names.size(),
               settings.repetitions);
  const PassOutcome pass1 = binary.run({.repetitions = settings.repetitions,
                                        .min_time = settings.min_time,
                                        .filter = exact_name_filter(names),
                                        .pass = 1,
                                        .process = 0});
  record_perf_samples(store.db(), run_id, pass1.samples.samples);
  if (!pass1.failure.empty()) std::fprintf(stderr, "pass 1: %s\n", pass1.failure.c_str());
  run_peer_lanes(store.db(), run_id, names, settings);

  const auto pass1_by_name = by_benchmark(pass1.samples.samples);
  std::map<std::string, std::string> errors;
  for (const PerfError& e : pass1.samples.errors) errors[e.benchmark] = e.message;
  std::vector<PerfVerdictRow> rows;
  std::vector<std::string> suspects;
  for (const std::string& name : names) {
    PerfVerdictRow row;
    row.benchmark = name;
    row.threshold = policy.threshold_for(name);
    row.alpha = policy.alpha;
    const auto base = baselines.find(name);
    if (base != baselines.end()) {
      row.baseline = base->second;
      row.baseline_median = base->second.value;
    }
    const auto found = pass1_by_name.find(name);
    if (found == pass1_by_name.end()) {
      row.verdict = PerfVerdict::Error;
      const auto error = errors.find(name);
      row.detail = error != errors.end()   ? error->second
                   : pass1.failure.empty() ? "volta-perf listed it but wrote no sample of it"
                                           : "no samples: " + pass1.failure;
      rows.push_back(std::move(row));
      continue;
    }
    row.variant = found->second.front()->variant;
    row.threads = found->second.front()->threads;
    const std::vector<double> baseline_samples =
        row.baseline ? row.baseline->samples : std::vector<double>{};
    row.pass1 = pass_figures(seconds_of(found->second), baseline_samples);
    if (row.baseline && baseline_samples.empty()) {
      row.verdict = PerfVerdict::Error;
      row.detail = "baseline row " + std::to_string(row.baseline->id) +
                   " points at no samples; move it with `volta-audit perf baseline accept`";
    } else if (is_suspect(row.pass1, row.threshold, row.alpha)) {
      suspects.push_back(name);
    }
    rows.push_back(std::move(row));
  }

  // Pass 2: the suspects only, in fresh processes.
  std::vector<PerfSample> pass2_samples;
  std::string pass2_failure;
  if (suspects.empty()) {
    std::fprintf(stderr, "pass 2: no suspects\n");
  } else {
    const int per_process =
        (settings.pass2_repetitions + settings.pass2_processes - 1) / settings.pass2_processes;
    std::fprintf(stderr, "pass 2: %zu suspect(s) x %d repetitions in each of %d fresh processes\n",
                 suspects.size(), per_process, settings.pass2_processes);
    for (int p = 0; p < settings.pass2_processes; ++p) {
      const PassOutcome out = binary.run({.repetitions = per_process,
                                          .min_time = settings.min_time,
                                          .filter = exact_name_filter(suspects),
                                          .pass = 2,
                                          .process = p});
      record_perf_samples(store.db(), run_id, out.samples.samples);
      std::ranges::copy(out.samples.samples, std::back_inserter(pass2_samples));
      if (!out.failure.empty()) {
        std::fprintf(stderr, "pass 2 process %d: %s\n", p, out.failure.c_str());
        pass2_failure = out.failure;
      }
    }
  }
  const auto pass2_by_name = by_benchmark(pass2_samples);
  std::vector<BaselineMove> candidates;
  for (PerfVerdictRow& row : rows) {
    if (row.verdict == PerfVerdict::Error) continue;
    if (std::ranges::find(suspects, row.benchmark) != suspects.end()) {
      const auto found = pass2_by_name.find(row.benchmark);
      row.pass2 = found == pass2_by_name.end()
                      ? PassFigures{}
                      : pass_figures(seconds_of(found->second), row.baseline->samples);
    }
    const Judgement j =
        judge(row.pass1, row.pass2, row.threshold, row.alpha, row.baseline.has_value());
    row.verdict = j.verdict;
    row.detail = j.detail;
    if (row.verdict == PerfVerdict::Error && !pass2_failure.empty()) {
      row.detail += ": " + pass2_failure;
    }
    if (row.baseline && !row.baseline->variant.empty() && row.baseline->variant != row.variant) {
      row.detail += "; kernel variant was " + row.baseline->variant;
    }
    if (!row.baseline) {
      candidates.push_back(
          {.benchmark = row.benchmark,
           .value = row.pass1.median,
           .old_value = std::nullopt,
           .commit = build::kCommit,
           .run_id = run_id,
           .reason = std::string(known_machine ? kNewBenchmarkReason : kFirstRunReason),
           .kind = "candidate"});
    }
  }
  {
    conformance::Transaction tx(store.db());
    record_perf_verdicts(store.db(), run_id, rows);
    record_baseline_moves(store.db(), key, candidates);
    tx.commit();
  }
  store.finish_run(run_id);

  std::printf("%s\n", print_table(rows).c_str());
  if (!candidates.empty()) {
    std::printf("%zu candidate baseline(s) recorded from run %lld (%s)\n", candidates.size(),
                static_cast<long long>(run_id),
                known_machine ? "benchmarks new on this machine" : "unknown machine");
  }
  const GateResult gate =
      evaluate_gate(store.db(), *find_gate("perf-double-pass"), build::kCommit, false);
  std::printf("gate perf-double-pass: %s: %s\n", std::string(gate_status_name(gate.status)).c_str(),
              gate.reason.c_str());
  // This run's own finding decides the exit status: a run the gate refuses (a planted
  // slowdown) still says what it measured.
  const bool regressed = std::ranges::any_of(
      rows, [](const PerfVerdictRow& r) { return r.verdict == PerfVerdict::Regression; });
  return regressed || gate.status == GateStatus::Fail ? 1 : 0;
}

int accept_command(const std::string& db_path, const PerfBinary& binary,
                   const std::vector<std::string>& benchmarks, const std::string& reason) {
  const std::string key = fingerprint_of(binary).key();
  conformance::ResultStore store(db_path);
  const std::vector<BaselineMove> moves = accept_baselines(store.db(), key, benchmarks, reason);
  std::printf("machine: %s\n", key.c_str());
  for (const BaselineMove& m : moves) {
    std::printf("%s: baseline %s -> %s (run %lld, commit %.12s): %s\n", m.benchmark.c_str(),
                m.old_value ? time_text(*m.old_value).c_str() : "none", time_text(m.value).c_str(),
                static_cast<long long>(m.run_id), m.commit.c_str(), m.reason.c_str());
  }
  return 0;
}

}  // namespace

int perf_command(Args& args) {
  const std::string db = database_path(args);
  const std::optional<std::string> binary_arg = args.option("--perf-binary");
  const std::optional<std::string> reason = args.option("--reason");
  const std::optional<std::string> filter = args.option("--filter");
  const std::optional<std::string> policy_arg = args.option("--policy");
  RunSettings settings;
  settings.policy_file =
      policy_arg.value_or(source_dir().string() + "/" + std::string(kPerfPolicyFile));
  settings.pass2_processes = integer_option(args, "--pass2-processes", 3, 1);
  settings.min_time = seconds_option(args, "--min-time", 0.05);
  settings.filter = filter.value_or("");
  // Read before anything else parses: the policy says how many samples a verdict needs.
  const std::optional<std::string> repetitions = args.option("--repetitions");
  const std::optional<std::string> pass2_repetitions = args.option("--pass2-repetitions");
  const std::vector<std::string> words = args.positionals(kPerfOptions);
  if (!words.empty()) {
    if (words[0] != "baseline" || words.size() < 2 || words[1] != "accept") {
      throw UsageError("unexpected argument '" + words[0] +
                       "' (`perf` runs the double pass; `perf baseline accept BENCH... --reason "
                       "TEXT` moves baselines)");
    }
    if (words.size() < 3) throw UsageError("perf baseline accept: name at least one benchmark");
    if (!reason) throw UsageError("perf baseline accept: --reason TEXT is required");
    return accept_command(db, PerfBinary(perf_binary_path(binary_arg)),
                          {words.begin() + 2, words.end()}, *reason);
  }
  if (reason) throw UsageError("--reason applies to `perf baseline accept`");
  const PerfPolicy policy = load_perf_policy(settings.policy_file);
  settings.repetitions =
      count_option("--repetitions", repetitions, policy.repetitions, policy.repetitions);
  settings.pass2_repetitions = count_option("--pass2-repetitions", pass2_repetitions,
                                            policy.pass2_repetitions, policy.pass2_repetitions);
  const PerfBinary binary(perf_binary_path(binary_arg));
  std::string command = "volta-audit perf --perf-binary " + binary.path().string() +
                        " --repetitions " + std::to_string(settings.repetitions) +
                        " --pass2-repetitions " + std::to_string(settings.pass2_repetitions) +
                        " --pass2-processes " + std::to_string(settings.pass2_processes) +
                        " --min-time " + std::to_string(settings.min_time) + " --policy " +
                        settings.policy_file.string();
  if (filter) command += " --filter '" + *filter + "'";
  // A planted slowdown is part of how the figures were made.
  if (const char* planted = std::getenv("VOLTA_PLANT_SLOWDOWN"); planted != nullptr) {
    command = "VOLTA_PLANT_SLOWDOWN=" + std::string(planted) + " " + command;
  }
  return run_double_pass(db, binary, policy, settings, command);
}

}  // namespace volta::audit
