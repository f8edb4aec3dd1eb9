// The generated doc sections: each renders Markdown from the op table and the backends, or
// from a commit's recorded results, never from anything machine-specific, so every machine
// regenerates the same text.

#include <algorithm>
#include <map>
#include <set>

#include "docs_contract.h"
#include "volta/backends/cpu.h"
#include "volta/conformance/onnx_coverage.h"
#include "volta/conformance/onnx_suite.h"
#include "volta/ir/op_schema.h"
#include "volta/reference/reference.h"

namespace volta::audit {
namespace {

// Display width: UTF-8 continuation bytes take no column ("—" is one column, three bytes).
size_t display_width(std::string_view s) {
  return static_cast<size_t>(std::ranges::count_if(
      s, [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// A Markdown table padded so its source reads as a table too.
std::string markdown_table(const std::vector<std::string>& header,
                           const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(header.size(), 3);
  auto widen = [&](const std::vector<std::string>& row) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], display_width(row[c]));
  };
  widen(header);
  std::ranges::for_each(rows, widen);
  auto format_row = [&](const std::vector<std::string>& row) {
    std::string line = "|";
    for (size_t c = 0; c < row.size(); ++c) {
      line += " " + row[c] + std::string(width[c] - display_width(row[c]), ' ') + " |";
    }
    return line + "\n";
  };
  std::string table = format_row(header) + "|";
  for (size_t w : width) table += std::string(w + 2, '-') + "|";
  table += "\n";
  for (const std::vector<std::string>& row : rows) table += format_row(row);
  return table;
}

std::string dtype_list(DTypeSet set) {
  std::string out;
  for (int i = 0; i < kDTypeCount; ++i) {
    const auto dtype = static_cast<DType>(i);
    if (set.contains(dtype)) out += (out.empty() ? "" : ", ") + std::string(dtype_name(dtype));
  }
  return out;
}

// The type parameters some input or output is bound to (the movement family declares an
// index parameter that only Gather's indices use).
std::vector<const TypeParam*> used_type_params(const OpSchema& schema) {
  std::vector<const TypeParam*> used;
  for (const TypeParam& param : schema.type_params) {
    const bool bound =
        std::ranges::any_of(schema.inputs,
                            [&](const InputSpec& in) { return in.type_param == param.name; }) ||
        std::ranges::any_of(schema.outputs,
                            [&](const OutputSpec& out) { return out.type_param == param.name; });
    if (bound) used.push_back(&param);
  }
  return used;
}

// One type parameter: its dtypes. Several (ArgMax's output, Gather's indices): each named.
std::string type_params_cell(const OpSchema& schema) {
  const std::vector<const TypeParam*> params = used_type_params(schema);
  if (params.size() == 1) return dtype_list(params[0]->allowed);
  std::string out;
  for (const TypeParam* param : params) {
    out +=
        (out.empty() ? "" : "; ") + std::string(1, param->name) + ": " + dtype_list(param->allowed);
  }
  return out;
}

std::string capability_cell(const OpCapability& capability) {
  if (!capability.supported) return "—";
  return dtype_list(capability.dtypes) + " (" +
         std::string(kernel_determinism_name(capability.determinism)) + ")";
}

// How one op, family or backend's tests ended, per backend in kOnnxBackends order.
struct Tally {
  int64_t tests = 0;
  std::map<std::string, conformance::OnnxCoverageRow> by_backend;
  std::set<std::string> ops;

  void add(const conformance::OnnxCoverageRow& row) {
    conformance::OnnxCoverageRow& t = by_backend[row.backend];
    t.tests += row.tests;
    t.passed += row.passed;
    t.unsupported += row.unsupported;
    t.failed += row.failed;
    ops.insert(row.op);
  }
};

std::vector<conformance::OnnxCoverageRow> onnx_rows(const conformance::Database& db,
                                                    std::string_view commit) {
  std::vector<conformance::OnnxCoverageRow> rows = conformance::onnx_coverage(db, commit);
  if (rows.empty()) {
    throw SectionUnavailable("no onnx results for commit " + std::string(commit.substr(0, 12)) +
                             "; run `volta-audit run onnx` first");
  }
  return rows;
}

// Tests counted once whatever the number of backends that ran them.
int64_t tests_of(const Tally& tally) {
  int64_t most = 0;
  for (const auto& [backend, t] : tally.by_backend) most = std::max(most, t.tests);
  return most;
}

std::vector<std::string> onnx_header(std::vector<std::string> first) {
  for (std::string_view backend : conformance::kOnnxBackends) {
    for (std::string_view what : {"pass", "unsupported", "fail"}) {
      first.push_back(std::string(backend) + " " + std::string(what));
    }
  }
  return first;
}

std::vector<std::string> onnx_cells(const Tally& tally, std::vector<std::string> first) {
  for (std::string_view backend : conformance::kOnnxBackends) {
    const auto it = tally.by_backend.find(std::string(backend));
    const conformance::OnnxCoverageRow t =
        it == tally.by_backend.end() ? conformance::OnnxCoverageRow{} : it->second;
    first.push_back(std::to_string(t.passed));
    first.push_back(std::to_string(t.unsupported));
    first.push_back(std::to_string(t.failed));
  }
  return first;
}

constexpr GeneratedSection kGeneratedSections[] = {
    {"op-backend-matrix", false, [](const ResultsSource&) { return render_op_backend_matrix(); }},
    {"onnx-coverage", true,
     [](const ResultsSource& r) { return render_onnx_coverage(*r.db, r.commit); }},
    {"onnx-totals", true,
     [](const ResultsSource& r) { return render_onnx_totals(*r.db, r.commit); }},
};

}  // namespace

std::span<const GeneratedSection> generated_sections() { return kGeneratedSections; }

std::string render_op_backend_matrix() {
  const Capabilities cpu = make_cpu_backend()->capabilities();
  std::vector<std::vector<std::string>> rows;
  for (const OpSchema& schema : all_op_schemas()) {
    rows.push_back({std::string(schema.name), std::string(op_family_name(schema.family)),
                    type_params_cell(schema), std::string(nan_mode_name(schema.nan_mode)),
                    capability_cell(cpu[static_cast<size_t>(op_index(schema.kind))]),
                    reference::reference_kernel(schema.kind) != nullptr ? "yes" : "no"});
  }
  return markdown_table({"op", "family", "dtypes", "NaN policy", "cpu", "reference"}, rows);
}

std::string render_onnx_coverage(const conformance::Database& db, std::string_view commit) {
  std::map<std::string, Tally> families, ops;
  std::map<std::string, std::string> family_of_op;
  Tally total;
  for (const conformance::OnnxCoverageRow& row : onnx_rows(db, commit)) {
    families[row.family].add(row);
    ops[row.op].add(row);
    family_of_op[row.op] = row.family;
    total.add(row);
  }
  std::vector<std::vector<std::string>> family_rows;
  family_rows.reserve(families.size() + 1);
  for (const auto& [family, tally] : families) {
    family_rows.push_back(onnx_cells(
        tally, {family, std::to_string(tally.ops.size()), std::to_string(tests_of(tally))}));
  }
  family_rows.push_back(onnx_cells(
      total, {"**total**", std::to_string(total.ops.size()), std::to_string(tests_of(total))}));
  std::vector<std::vector<std::string>> op_rows;
  op_rows.reserve(ops.size());
  for (const auto& [op, tally] : ops) {
    op_rows.push_back(onnx_cells(tally, {op.empty() ? "(no nodes)" : op, family_of_op[op],
                                         std::to_string(tests_of(tally))}));
  }
  return "By family:\n\n" + markdown_table(onnx_header({"family", "ops", "tests"}), family_rows) +
         "\nBy op:\n\n" + markdown_table(onnx_header({"op", "family", "tests"}), op_rows);
}

std::string render_onnx_totals(const conformance::Database& db, std::string_view commit) {
  Tally total;
  for (const conformance::OnnxCoverageRow& row : onnx_rows(db, commit)) total.add(row);
  std::vector<std::vector<std::string>> rows;
  for (std::string_view backend : conformance::kOnnxBackends) {
    const auto it = total.by_backend.find(std::string(backend));
    const conformance::OnnxCoverageRow t =
        it == total.by_backend.end() ? conformance::OnnxCoverageRow{} : it->second;
    rows.push_back({std::string(backend), std::to_string(t.tests), std::to_string(t.passed),
                    std::to_string(t.unsupported), std::to_string(t.failed)});
  }
  return markdown_table({"ONNX backend tests", "tests", "pass", "unsupported", "fail"}, rows);
}

}  // namespace volta::audit
