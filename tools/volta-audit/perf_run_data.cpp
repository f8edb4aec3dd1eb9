#include "perf_run_data.h"

#include <algorithm>
#include <cstdlib>

#include "perf_samples.h"

namespace volta::audit {
namespace {

using conformance::Database;
using conformance::Statement;
using conformance::StoreError;

// ISA segments a benchmark name may carry (the GEMM benchmarks name the micro-kernel's ISA);
// a peer library has no ISA, so the peer key drops them.
constexpr std::string_view kIsaSegments[] = {"generic", "avx2",    "avx2fma", "avx2_fma",
                                             "avx512",  "avx512f", "neon",    "sse"};

// Values are stored in their row's unit; the report works in seconds.
double to_seconds(double value, const std::string& unit, const std::string& benchmark) {
  if (unit == "s") return value;
  if (unit == "ms") return value * 1e-3;
  if (unit == "us" || unit == "µs") return value * 1e-6;
  if (unit == "ns") return value * 1e-9;
  throw StoreError("perf row of benchmark '" + benchmark + "' has unit '" + unit +
                   "': the perf report reads s, ms, us and ns");
}

std::optional<double> optional_double(const Statement& row, int column) {
  if (row.column_is_null(column)) return std::nullopt;
  return row.column_double(column);
}

PerfRun read_run(Statement& row) {
  return {.id = row.column_int(0),
          .commit = row.column_text(1),
          .dirty = row.column_int(2) != 0,
          .build_type = row.column_text(3),
          .compiler = row.column_text(4),
          .machine = row.column_text(5),
          .started = row.column_text(6),
          .ended = row.column_text(7),
          .status = row.column_text(8)};
}

constexpr std::string_view kRunColumns =
    "SELECT id, commit_sha, dirty, build_type, compiler, machine, started_at, "
    "coalesce(ended_at, ''), status, suites FROM run ";
constexpr std::string_view kIsPerfRun =
    "(EXISTS (SELECT 1 FROM perf_verdict v WHERE v.run_id = run.id) OR "
    "EXISTS (SELECT 1 FROM perf_sample s WHERE s.run_id = run.id))";

PerfRun select_run(const Database& db, std::optional<int64_t> id) {
  if (!id) {
    Statement newest =
        db.prepare(std::string(kRunColumns) + "WHERE status = 'complete' AND " +
                   std::string(kIsPerfRun) + " ORDER BY started_at DESC, id DESC LIMIT 1");
    if (!newest.step()) {
      throw StoreError("results database '" + db.path() +
                       "' holds no complete perf run: run `volta-audit perf` first");
    }
    return read_run(newest);
  }
  Statement chosen = db.prepare(std::string(kRunColumns) + "WHERE id = ?");
  chosen.bind(1, *id);
  if (!chosen.step()) {
    throw StoreError("results database '" + db.path() + "' has no run " + std::to_string(*id));
  }
  PerfRun run = read_run(chosen);
  Statement perf = db.prepare("SELECT " + std::string(kIsPerfRun) + " FROM run WHERE id = ?");
  perf.bind(1, *id);
  if (!perf.step() || perf.column_int(0) == 0) {
    throw StoreError("run " + std::to_string(*id) + " (suites '" + chosen.column_text(9) +
                     "') recorded no perf samples or verdicts: it is not a perf run");
  }
  return run;
}

void read_verdicts(const Database& db, PerfData& data, std::map<std::string, size_t>& index) {
  Statement q = db.prepare(R"sql(
SELECT benchmark, unit, variant, threads, baseline_commit, baseline_kind, baseline_median,
       threshold, pass1_samples, pass1_median, pass1_low, pass1_high, pass1_change, pass1_p,
       pass2_samples, pass2_median, pass2_low, pass2_high, pass2_change, pass2_p, verdict, detail
FROM perf_verdict WHERE run_id = ? ORDER BY benchmark
)sql");
  q.bind(1, data.run.id);
  while (q.step()) {
    Benchmark b;
    b.name = q.column_text(0);
    const std::string unit = q.column_text(1);
    const auto seconds = [&](int column) -> std::optional<double> {
      const std::optional<double> value = optional_double(q, column);
      if (!value) return std::nullopt;
      return to_seconds(*value, unit, b.name);
    };
    const auto pass = [&](int first) {
      Pass p;
      p.samples = q.column_int(first);
      if (p.samples == 0) return p;
      p.median = seconds(first + 1);
      p.low = seconds(first + 2);
      p.high = seconds(first + 3);
      p.change = optional_double(q, first + 4);
      p.p = optional_double(q, first + 5);
      return p;
    };
    b.variant = q.column_text(2);
    b.threads = q.column_int(3);
    b.judged = true;
    b.baseline_commit = q.column_text(4);
    b.baseline_kind = q.column_text(5);
    b.baseline_median = seconds(6);
    b.threshold = q.column_double(7);
    b.pass1 = pass(8);
    b.pass2 = pass(14);
    b.verdict = q.column_text(20);
    b.detail = q.column_text(21);
    index.emplace(b.name, data.benchmarks.size());
    data.benchmarks.push_back(std::move(b));
  }
}

// "name=value;..." counters; missing ones are absent.
std::optional<double> context_counter(std::string_view context, std::string_view name) {
  size_t start = 0;
  while (start <= context.size()) {
    const size_t end = std::min(context.find(';', start), context.size());
    const std::string_view item = context.substr(start, end - start);
    if (item.starts_with(name) && item.size() > name.size() && item[name.size()] == '=') {
      const std::string value(item.substr(name.size() + 1));
      char* parsed_end = nullptr;
      const double parsed = std::strtod(value.c_str(), &parsed_end);
      if (parsed_end != value.c_str() && *parsed_end == '\0') return parsed;
    }
    start = end + 1;
  }
  return std::nullopt;
}

void read_samples(const Database& db, PerfData& data, std::map<std::string, size_t>& index) {
  Statement q = db.prepare(R"sql(
SELECT benchmark, pass, value, unit, variant, threads, gflops, gbytes_per_s, peak_bytes, context
FROM perf_sample WHERE run_id = ? ORDER BY benchmark, pass, process, repetition, id
)sql");
  q.bind(1, data.run.id);
  std::map<std::string, size_t> peer_index;
  while (q.step()) {
    const std::string name = q.column_text(0);
    const double seconds = to_seconds(q.column_double(2), q.column_text(3), name);
    if (name.starts_with(kPeerPrefix)) {
      auto [it, added] = peer_index.emplace(name, data.peers.size());
      if (added) {
        const std::string_view rest = std::string_view(name).substr(kPeerPrefix.size());
        data.peers.push_back({.library = std::string(rest.substr(0, rest.find(':'))),
                              .name = name,
                              .threads = q.column_int(5)});
      }
      data.peers[it->second].samples.push_back(seconds);
      continue;
    }
    auto [it, added] = index.emplace(name, data.benchmarks.size());
    if (added) {
      data.benchmarks.push_back({.name = name, .variant = q.column_text(4)});
      data.benchmarks.back().threads = q.column_int(5);
    }
    Benchmark& b = data.benchmarks[it->second];
    const bool pass1 = q.column_int(1) != 2;
    (pass1 ? b.samples1 : b.samples2).push_back(seconds);
    // Throughput beside the pass 1 median, so both describe the same samples.
    if (const std::optional<double> g = optional_double(q, 6); g && pass1) b.gflops.push_back(*g);
    if (const std::optional<double> g = optional_double(q, 7); g && pass1) {
      b.gbytes_per_s.push_back(*g);
    }
    if (!q.column_is_null(8)) b.peak_bytes = std::max(b.peak_bytes.value_or(0), q.column_int(8));
    const std::string context = q.column_text(9);
    const std::optional<double> hits = context_counter(context, "plan_cache_hits");
    const std::optional<double> misses = context_counter(context, "plan_cache_misses");
    if (hits || misses) {
      b.cache_hits.push_back(hits.value_or(0));
      b.cache_misses.push_back(misses.value_or(0));
    }
  }
}

// The baseline run's pass 1 samples: the newest baseline row on this machine for the
// benchmark, commit and kind the verdict compared against, other than this run's own.
void read_baseline_samples(const Database& db, const PerfRun& run, Benchmark& b) {
  Statement baseline = db.prepare(
      "SELECT run_id FROM perf_baseline WHERE machine = ? AND benchmark = ? AND commit_sha = ? "
      "AND kind = ? AND run_id IS NOT NULL AND run_id <> ? ORDER BY id DESC LIMIT 1");
  baseline.bind(1, run.machine)
      .bind(2, b.name)
      .bind(3, b.baseline_commit)
      .bind(4, b.baseline_kind)
      .bind(5, run.id);
  if (!baseline.step()) return;
  Statement samples = db.prepare(
      "SELECT value, unit FROM perf_sample WHERE run_id = ? AND benchmark = ? AND pass = 1 "
      "ORDER BY process, repetition, id");
  samples.bind(1, baseline.column_int(0)).bind(2, b.name);
  while (samples.step()) {
    b.baseline_samples.push_back(
        to_seconds(samples.column_double(0), samples.column_text(1), b.name));
  }
}

}  // namespace

std::optional<double> median(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

// Where the verdict table says which benchmarks need attention first.
int verdict_rank(const Benchmark& b) {
  if (!b.judged) return 6;
  constexpr std::string_view kOrder[] = {"regression", "noise", "improvement",
                                         "error",      "new",   "unchanged"};
  const auto* it = std::find(std::begin(kOrder), std::end(kOrder), b.verdict);
  return static_cast<int>(it - std::begin(kOrder));
}

PerfData load_perf_run(const Database& db, std::optional<int64_t> run_id) {
  PerfData data;
  data.run = select_run(db, run_id);
  std::map<std::string, size_t> index;
  read_verdicts(db, data, index);
  read_samples(db, data, index);
  for (Benchmark& b : data.benchmarks) {
    if (!b.judged) {
      b.pass1 = {.samples = static_cast<int64_t>(b.samples1.size()), .median = median(b.samples1)};
      b.pass2 = {.samples = static_cast<int64_t>(b.samples2.size()), .median = median(b.samples2)};
    }
    if (!b.baseline_commit.empty()) read_baseline_samples(db, data.run, b);
  }
  std::map<std::string, std::vector<size_t>> by_key;
  for (size_t i = 0; i < data.benchmarks.size(); ++i) {
    by_key[perf_peer_key(data.benchmarks[i].name)].push_back(i);
  }
  for (PeerBenchmark& peer : data.peers) {
    if (std::find(data.libraries.begin(), data.libraries.end(), peer.library) ==
        data.libraries.end()) {
      data.libraries.push_back(peer.library);
    }
    const auto it = by_key.find(perf_peer_key(peer.name));
    if (it == by_key.end()) continue;
    peer.matched = true;
    for (size_t i : it->second)
      data.benchmarks[i].peer_medians[peer.library] = *median(peer.samples);
  }
  std::sort(data.libraries.begin(), data.libraries.end());
  std::stable_sort(data.benchmarks.begin(), data.benchmarks.end(),
                   [](const Benchmark& a, const Benchmark& b) {
                     return std::pair(verdict_rank(a), a.name) < std::pair(verdict_rank(b), b.name);
                   });
  return data;
}

std::string perf_peer_key(std::string_view benchmark) {
  if (benchmark.starts_with(kPeerPrefix)) {
    benchmark.remove_prefix(kPeerPrefix.size());
    const size_t colon = benchmark.find(':');
    benchmark.remove_prefix(colon == std::string_view::npos ? benchmark.size() : colon + 1);
  }
  std::string key;
  size_t start = 0;
  while (start <= benchmark.size()) {
    const size_t end = std::min(benchmark.find('/', start), benchmark.size());
    const std::string_view segment = benchmark.substr(start, end - start);
    const bool isa = std::find(std::begin(kIsaSegments), std::end(kIsaSegments), segment) !=
                     std::end(kIsaSegments);
    const bool last = end == benchmark.size();
    if (!(start > 0 && isa) && !(start > 0 && last && segment == "real_time")) {
      key += (key.empty() ? "" : "/") + std::string(segment);
    }
    start = end + 1;
  }
  return key;
}

}  // namespace volta::audit
