// `volta-audit report`: the latest complete run for humans, as Markdown or standalone HTML;
// with --perf, a perf run (the newest complete one, or --run ID).

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <optional>

#include "commands.h"
#include "perf_report.h"
#include "report.h"
#include "volta/conformance/store.h"
#include "volta/error.h"

namespace volta::audit {
namespace {

constexpr std::string_view kSupported =
    "--format md|html, --db PATH, -o FILE, --perf, --run ID (with --perf)";

ReportFormat parse_format(std::string_view name) {
  if (name == "md") return ReportFormat::Markdown;
  if (name == "html") return ReportFormat::Html;
  throw UsageError("unknown --format '" + std::string(name) + "' (supported: md, html)");
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    fail(ErrorCode::InvalidArgument, "cannot write the report to '" + path +
                                         "': check that its directory exists and is writable");
  }
}

}  // namespace

int report_command(Args& args) {
  const ReportFormat format = parse_format(args.option("--format").value_or("md"));
  const std::optional<std::string> output = args.option("-o");
  const bool perf = args.flag("--perf");
  const std::optional<std::string> run = args.option("--run");
  if (run && !perf) throw UsageError("--run ID selects a perf run: use it with --perf");
  const std::optional<int64_t> run_id = run ? std::optional(parse_run_id(*run)) : std::nullopt;
  const std::string path = database_path(args);
  if (const std::vector<std::string> extra = args.positionals(kSupported); !extra.empty()) {
    throw UsageError("unexpected argument '" + extra.front() +
                     "' (supported: " + std::string(kSupported) + ")");
  }
  const conformance::ResultStore store(path, conformance::Database::Mode::ReadOnly);
  const std::string report =
      perf ? render_perf_report(store.db(), format, run_id) : render_report(store.db(), format);
  if (output) {
    write_file(*output, report);
    std::printf("report written to %s\n", output->c_str());
  } else {
    std::fputs(report.c_str(), stdout);
  }
  return 0;
}

}  // namespace volta::audit
