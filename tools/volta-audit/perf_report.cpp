#include "perf_report.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

#include "perf_samples.h"
#include "perf_svg.h"

namespace volta::audit {
namespace {

using conformance::Database;
using conformance::Statement;
using conformance::StoreError;

constexpr std::string_view kNone = "—";

// ISA segments a benchmark name may carry (the GEMM benchmarks name the micro-kernel's ISA);
// a peer library has no ISA, so the peer key drops them.
constexpr std::string_view kIsaSegments[] = {"generic", "avx2",    "avx2fma", "avx2_fma",
                                             "avx512",  "avx512f", "neon",    "sse"};

struct PerfRun {
  int64_t id = 0;
  std::string commit = {};
  bool dirty = false;
  std::string build_type = {};
  std::string compiler = {};
  std::string machine = {};
  std::string started = {};
  std::string ended = {};
  std::string status = {};
};

struct Pass {
  int64_t samples = 0;
  std::optional<double> median = {};  // seconds, as every figure below
  std::optional<double> low = {};
  std::optional<double> high = {};
  std::optional<double> change = {};  // relative to the baseline median
  std::optional<double> p = {};
};

struct Benchmark {
  std::string name = {};
  std::string variant = {};
  int64_t threads = 1;
  bool judged = false;  // has a perf_verdict row
  std::string verdict = {};
  std::string detail = {};
  std::string baseline_commit = {};
  std::string baseline_kind = {};
  std::optional<double> baseline_median = {};
  double threshold = 0;
  Pass pass1 = {};
  Pass pass2 = {};
  std::vector<double> samples1 = {};
  std::vector<double> samples2 = {};
  std::vector<double> baseline_samples = {};
  std::vector<double> gflops = {};
  std::vector<double> gbytes_per_s = {};
  std::optional<int64_t> peak_bytes = {};
  std::vector<double> cache_hits = {};  // per sample that reports them
  std::vector<double> cache_misses = {};
  std::map<std::string, double> peer_medians = {};  // library -> median seconds
};

struct PeerBenchmark {
  std::string library = {};
  std::string name = {};
  int64_t threads = 1;
  std::vector<double> samples = {};
  bool matched = false;
};

struct PerfData {
  PerfRun run = {};
  std::vector<Benchmark> benchmarks = {};
  std::vector<PeerBenchmark> peers = {};
  std::vector<std::string> libraries = {};  // peer libraries, sorted
};

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

std::optional<double> median(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
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

// Where the verdict table says which benchmarks need attention first.
int verdict_rank(const Benchmark& b) {
  if (!b.judged) return 6;
  constexpr std::string_view kOrder[] = {"regression", "noise", "improvement",
                                         "error",      "new",   "unchanged"};
  const auto* it = std::find(std::begin(kOrder), std::end(kOrder), b.verdict);
  return static_cast<int>(it - std::begin(kOrder));
}

PerfData load(const Database& db, std::optional<int64_t> run_id) {
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

// ---- What the two formats share: header lines, tables, per-row plots. ----

struct Line {
  std::string label = {};
  std::string value = {};
};

struct Table {
  std::vector<std::string> columns = {};
  std::vector<std::vector<std::string>> rows = {};
};

struct Section {
  std::string heading = {};
  std::string note = {};
  Table table = {};
  std::vector<std::string> row_classes = {};  // HTML only
  std::vector<std::string> plots = {};        // HTML only: an SVG per row, or ""
};

struct View {
  std::string title = {};
  std::vector<Line> header = {};
  std::vector<Section> sections = {};
};

std::string printf_string(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

std::string short_commit(std::string_view commit) { return std::string(commit.substr(0, 7)); }

std::string plural(size_t count, std::string_view one, std::string_view many) {
  return std::to_string(count) + " " + std::string(count == 1 ? one : many);
}

// Counters arrive as doubles ("%.9g" in the sample file).
std::string plural(double count, std::string_view one, std::string_view many) {
  return printf_string("%.6g", count) + " " + std::string(count == 1 ? one : many);
}

std::string figure(const Pass& pass, std::optional<TimeScale> scale) {
  if (pass.samples == 0 || !pass.median) return std::string(kNone);
  std::string text = format_seconds(*pass.median, scale);
  if (pass.low && pass.high) {
    const TimeScale s = scale.value_or(time_scale(*pass.median));
    text += " [" + printf_string("%.4g", *pass.low * s.per_second) + ", " +
            printf_string("%.4g", *pass.high * s.per_second) + "]";
  }
  return text;
}

std::string change_text(const Pass& pass) {
  return pass.samples > 0 && pass.change ? printf_string("%+.1f %%", *pass.change * 100)
                                         : std::string(kNone);
}

std::string p_text(const Pass& pass) {
  return pass.samples > 0 && pass.p ? printf_string("%.2g", *pass.p) : std::string(kNone);
}

std::string bytes_text(int64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes < 1024) return std::to_string(bytes) + " B";
  if (b < 1024.0 * 1024) return printf_string("%.1f KiB", b / 1024);
  if (b < 1024.0 * 1024 * 1024) return printf_string("%.1f MiB", b / (1024.0 * 1024));
  return printf_string("%.2f GiB", b / (1024.0 * 1024 * 1024));
}

std::string throughput_text(const Benchmark& b) {
  std::vector<std::string> parts;
  if (const std::optional<double> g = median(b.gflops)) {
    parts.push_back(printf_string("%.1f GFLOP/s", *g));
  }
  if (const std::optional<double> g = median(b.gbytes_per_s)) {
    parts.push_back(printf_string("%.2f GB/s", *g));
  }
  if (parts.empty()) return std::string(kNone);
  return parts.size() == 1 ? parts[0] : parts[0] + ", " + parts[1];
}

// "baseline abc1234 (accepted) .. def5678", one baseline per commit and kind the verdicts used.
std::string commit_range(const PerfData& data) {
  std::map<std::pair<std::string, std::string>, size_t> baselines;
  size_t without = 0;
  for (const Benchmark& b : data.benchmarks) {
    if (!b.judged) continue;
    if (b.baseline_commit.empty()) {
      ++without;
    } else {
      ++baselines[{b.baseline_commit, b.baseline_kind}];
    }
  }
  std::string text;
  for (const auto& [key, count] : baselines) {
    if (!text.empty()) text += ", ";
    text += "baseline " + short_commit(key.first) + " (" + key.second;
    if (baselines.size() > 1) text += ", " + plural(count, "benchmark", "benchmarks");
    text += ")";
  }
  if (text.empty()) text = "no baseline on this machine";
  text += " .. " + short_commit(data.run.commit) + (data.run.dirty ? " (dirty)" : "");
  if (without > 0 && !baselines.empty()) {
    text += "; " + plural(without, "benchmark", "benchmarks") + " without a baseline";
  }
  return text;
}

std::string verdict_counts(const PerfData& data) {
  std::map<int, std::pair<std::string, size_t>> counts;  // by rank, so the order is the table's
  for (const Benchmark& b : data.benchmarks) {
    auto& [name, count] = counts[verdict_rank(b)];
    name = b.judged ? b.verdict : "not judged";
    ++count;
  }
  std::string text;
  for (const auto& [rank, entry] : counts) {
    if (!text.empty()) text += ", ";
    text += std::to_string(entry.second) + " " + entry.first;
  }
  return text.empty()
             ? "no benchmarks"
             : text + " (" + plural(data.benchmarks.size(), "benchmark", "benchmarks") + ")";
}

Section benchmark_section(const PerfData& data, ReportFormat format) {
  Section s{.heading = "Benchmarks"};
  s.note =
      "Wall time per iteration: median [confidence interval of the median]. change: median / "
      "baseline median - 1; p: two-sided Mann-Whitney U against the baseline run's samples. "
      "Pass 2 re-measures pass 1's suspects in fresh processes (" +
      std::string(kNone) + ": not a suspect).";
  if (!data.libraries.empty()) {
    s.note += " Peer ratio: Volta's pass 1 median / the peer's median; below 1 Volta is faster.";
  }
  s.table.columns = {"benchmark",
                     "variant",
                     "threads",
                     "baseline",
                     "pass 1 median [CI]",
                     "change",
                     "p",
                     "pass 2 median [CI]",
                     "change",
                     "p",
                     "verdict",
                     "throughput",
                     "peak memory"};
  for (const std::string& library : data.libraries) {
    s.table.columns.push_back(library + " median");
    s.table.columns.push_back(library + " ratio");
  }
  for (const Benchmark& b : data.benchmarks) {
    const std::optional<double> reference = b.baseline_median ? b.baseline_median : b.pass1.median;
    const std::optional<TimeScale> scale =
        reference ? std::optional(time_scale(*reference)) : std::nullopt;
    std::vector<std::string> row = {
        b.name,
        b.variant,
        std::to_string(b.threads),
        b.baseline_median ? format_seconds(*b.baseline_median, scale) : std::string(kNone),
        figure(b.pass1, scale),
        change_text(b.pass1),
        p_text(b.pass1),
        figure(b.pass2, scale),
        change_text(b.pass2),
        p_text(b.pass2),
        b.judged ? b.verdict : "not judged",
        throughput_text(b),
        b.peak_bytes ? bytes_text(*b.peak_bytes) : std::string(kNone)};
    for (const std::string& library : data.libraries) {
      const auto it = b.peer_medians.find(library);
      if (it == b.peer_medians.end() || !b.pass1.median) {
        row.insert(row.end(), 2, std::string(kNone));
        continue;
      }
      row.push_back(format_seconds(it->second, scale));
      row.push_back(printf_string("%.2f", *b.pass1.median / it->second));
    }
    s.table.rows.push_back(std::move(row));
    s.row_classes.push_back(b.judged ? "v-" + b.verdict : "v-none");
    if (format == ReportFormat::Html && b.baseline_median) {
      StripPlot plot{
          .title = b.name, .baseline_median = *b.baseline_median, .threshold = b.threshold};
      plot.rows.push_back(
          {.label = "base", .samples = b.baseline_samples, .median = b.baseline_median});
      plot.rows.push_back({.label = "pass 1",
                           .samples = b.samples1,
                           .median = b.pass1.median,
                           .ci_low = b.pass1.low,
                           .ci_high = b.pass1.high});
      if (b.pass2.samples > 0 || !b.samples2.empty()) {
        plot.rows.push_back({.label = "pass 2",
                             .samples = b.samples2,
                             .median = b.pass2.median,
                             .ci_low = b.pass2.low,
                             .ci_high = b.pass2.high});
      }
      s.plots.push_back(strip_plot_svg(plot));
    } else {
      s.plots.emplace_back();
    }
  }
  return s;
}

Section detail_section(const PerfData& data) {
  Section s{.heading = "Verdict details",
            .note = "What `volta-audit perf` said about each benchmark it flagged."};
  s.table.columns = {"benchmark", "verdict", "detail"};
  for (const Benchmark& b : data.benchmarks) {
    if (!b.detail.empty()) s.table.rows.push_back({b.name, b.verdict, b.detail});
  }
  return s;
}

Section peer_section(const PerfData& data) {
  Section s{.heading = "Peer lane"};
  s.note =
      "Peers run the same GEMM shapes through another library in the same perf run; a peer "
      "benchmark matches a Volta benchmark by name without ISA segments. ONNX models have no "
      "peer: running them through PyTorch needs onnxruntime or an ONNX-to-torch converter, "
      "which the machine's Debian packages do not provide.";
  if (data.peers.empty()) {
    s.note +=
        " This run has no peer samples (torch not importable by the system python, or "
        "the lane was not run).";
    return s;
  }
  s.table.columns = {"peer benchmark", "threads", "samples", "median", "matches"};
  for (const PeerBenchmark& peer : data.peers) {
    s.table.rows.push_back(
        {peer.name, std::to_string(peer.threads), std::to_string(peer.samples.size()),
         format_seconds(*median(peer.samples)), peer.matched ? "yes" : "no Volta benchmark"});
  }
  return s;
}

Section plan_cache_section(const PerfData& data, std::optional<Line>& summary) {
  Section s{.heading = "Plan cache",
            .note = "Per sample (one repetition of the benchmark), medians over its samples."};
  s.table.columns = {"benchmark", "samples", "misses per sample", "hits per sample"};
  double hits = 0;
  double misses = 0;
  size_t samples = 0;
  for (const Benchmark& b : data.benchmarks) {
    if (b.cache_hits.empty()) continue;
    for (size_t i = 0; i < b.cache_hits.size(); ++i) {
      hits += b.cache_hits[i];
      misses += b.cache_misses[i];
    }
    samples += b.cache_hits.size();
    s.table.rows.push_back({b.name, std::to_string(b.cache_hits.size()),
                            printf_string("%.6g", *median(b.cache_misses)),
                            printf_string("%.6g", *median(b.cache_hits))});
  }
  if (!s.table.rows.empty()) {
    std::string value = plural(hits, "hit", "hits") + ", " + plural(misses, "miss", "misses") +
                        " over " + plural(samples, "sample", "samples") + " of " +
                        plural(s.table.rows.size(), "benchmark", "benchmarks");
    if (hits + misses > 0) {
      value += " (hit rate " + printf_string("%.1f %%", 100 * hits / (hits + misses)) + ")";
    }
    summary = Line{"Plan cache", value};
  }
  return s;
}

View build_view(const PerfData& data, ReportFormat format) {
  const PerfRun& run = data.run;
  View view;
  view.title =
      "Volta perf report: run " + std::to_string(run.id) + ", commit " + run.commit.substr(0, 12);
  view.header = {
      {"Commit", run.commit + (run.dirty ? " (dirty)" : "")},
      {"Machine", run.machine},
      {"Build", run.build_type + ", " + run.compiler},
      {"Date", run.started + (run.ended.empty() ? "" : " .. " + run.ended)},
      {"Baselines", commit_range(data)},
      {"Verdicts", verdict_counts(data)},
  };
  if (run.status != "complete") view.header.push_back({"Status", run.status});
  std::optional<Line> cache;
  Section plan_cache = plan_cache_section(data, cache);
  if (cache) view.header.push_back(*cache);
  view.sections.push_back(benchmark_section(data, format));
  if (Section details = detail_section(data); !details.table.rows.empty()) {
    view.sections.push_back(std::move(details));
  }
  view.sections.push_back(peer_section(data));
  if (!plan_cache.table.rows.empty()) view.sections.push_back(std::move(plan_cache));
  return view;
}

std::string render_markdown(const View& view) {
  std::string out = "# " + markdown_text(view.title) + "\n\n";
  for (const Line& line : view.header) {
    out += "- " + markdown_text(line.label) + ": " + markdown_text(line.value) + "\n";
  }
  for (const Section& s : view.sections) {
    out += "\n## " + markdown_text(s.heading) + "\n\n";
    if (!s.note.empty()) out += markdown_text(s.note) + "\n";
    if (s.table.columns.empty()) continue;
    out += "\n" + markdown_row(s.table.columns) + "|";
    for (size_t i = 0; i < s.table.columns.size(); ++i) out += "---|";
    out += "\n";
    for (const auto& row : s.table.rows) out += markdown_row(row);
  }
  return out;
}

constexpr std::string_view kPerfStyle = R"css(
tr.v-regression td { background: #fde2e1; }
tr.v-noise td { background: #fff4d1; }
tr.v-improvement td { background: #e2f5e2; }
tr.v-error td { background: #f3d9f5; }
svg.strip { display: block; }
)css";

std::string render_html(const View& view) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<title>" + html_text(view.title) + "</title>\n";
  out += "<style>" + std::string(kReportHtmlStyle) + std::string(kPerfStyle) +
         "</style>\n</head>\n<body>\n";
  out += "<h1>" + html_text(view.title) + "</h1>\n<ul>\n";
  for (const Line& line : view.header) {
    out += "<li>" + html_text(line.label) + ": " + html_text(line.value) + "</li>\n";
  }
  out += "</ul>\n";
  for (const Section& s : view.sections) {
    out += "<h2>" + html_text(s.heading) + "</h2>\n";
    if (!s.note.empty()) out += "<p>" + html_text(s.note) + "</p>\n";
    const bool plotted = std::any_of(s.plots.begin(), s.plots.end(),
                                     [](const std::string& plot) { return !plot.empty(); });
    if (plotted) {
      out +=
          "<p>Plot: the baseline run's samples (grey), pass 1 (blue) and pass 2 (orange) on one "
          "time axis; black ticks are medians, bars confidence intervals, the shaded band the "
          "threshold around the baseline median (dashed).</p>\n";
    }
    if (s.table.columns.empty()) continue;
    std::vector<std::string> columns = s.table.columns;
    if (plotted) columns.emplace_back("samples");
    out += "<table>\n<thead>\n" + html_row(columns, "th") + "</thead>\n<tbody>\n";
    for (size_t r = 0; r < s.table.rows.size(); ++r) {
      std::string row = html_row(s.table.rows[r], "td");
      if (r < s.row_classes.size()) {
        row.replace(0, 4, "<tr class=\"" + html_text(s.row_classes[r]) + "\">");
      }
      if (plotted) row.insert(row.size() - 6, "<td>" + s.plots[r] + "</td>");
      out += row;
    }
    out += "</tbody>\n</table>\n";
  }
  return out + "</body>\n</html>\n";
}

}  // namespace

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

std::string render_perf_report(const Database& db, ReportFormat format,
                               std::optional<int64_t> run) {
  const View view = build_view(load(db, run), format);
  return format == ReportFormat::Html ? render_html(view) : render_markdown(view);
}

}  // namespace volta::audit
