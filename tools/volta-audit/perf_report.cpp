#include "perf_report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>
#include <vector>

#include "perf_run_data.h"
#include "perf_svg.h"

namespace volta::audit {
namespace {

using conformance::Database;

constexpr std::string_view kNone = "—";

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
      "Peers run what Volta benchmarks run through another library in the same perf run "
      "(perf/peers): torch the f32 GEMM shapes and the tiny transformer's training step and "
      "inference (lm/), OpenBLAS (numpy's) and MLAS (ONNX Runtime's MatMul) the square and "
      "transformer-shaped f32 GEMMs, ONNX Runtime the inference of the model `volta export` "
      "writes (lm/infer). A peer benchmark matches a Volta benchmark by name without ISA "
      "segments. The ONNX conformance models (onnx/) have no peer.";
  if (data.peers.empty()) {
    s.note +=
        " This run has no peer samples: each lane was skipped (torch not importable by "
        "python3, no interop venv; `volta-audit perf` printed why) or mirrored no benchmark "
        "the run selected.";
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

std::string render_perf_report(const Database& db, ReportFormat format,
                               std::optional<int64_t> run) {
  const View view = build_view(load_perf_run(db, run), format);
  return format == ReportFormat::Html ? render_html(view) : render_markdown(view);
}

}  // namespace volta::audit
