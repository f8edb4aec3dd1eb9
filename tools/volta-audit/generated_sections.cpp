// The generated doc sections: each renders Markdown from the op table and the backends, or
// from a commit's recorded results, never from anything machine-specific, so every machine
// regenerates the same text.

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "docs_contract.h"
#include "volta/conformance/determinism_suite.h"
#include "volta/conformance/evidence.h"
#include "volta/conformance/matrix_suite.h"
#include "volta/conformance/onnx_coverage.h"
#include "volta/conformance/onnx_suite.h"
#include "volta/ir/op_schema.h"
#include "volta/reference/reference.h"
#include "volta/runtime/registry.h"

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

// A CUDA cell: the dtypes, and how the kernels compare with the CPU backend's ("bitwise",
// "bitwise except NaN payload", or "tolerance" where nothing is claimed). Every CUDA kernel is
// bit-exact run to run, so the determinism class is not repeated.
std::string cuda_capability_cell(const OpCapability& capability) {
  if (!capability.supported) return "—";
  std::string_view cpu = "tolerance";
  if (capability.cpu_exactness == CrossBackendExactness::Bitwise) cpu = "= cpu bitwise";
  if (capability.cpu_exactness == CrossBackendExactness::BitwiseExceptNanPayload) {
    cpu = "= cpu bitwise but NaN payload";
  }
  std::string tolerance;
  if (capability.cpu_exactness != CrossBackendExactness::NotClaimed &&
      !capability.cpu_tolerance_dtypes.empty()) {
    tolerance = "; " + dtype_list(capability.cpu_tolerance_dtypes) + ": tolerance";
  }
  return dtype_list(capability.dtypes) + " (" + std::string(cpu) + tolerance + ")";
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
                                                    std::string_view commit,
                                                    std::string_view suite) {
  std::vector<conformance::OnnxCoverageRow> rows = conformance::onnx_coverage(db, commit, suite);
  if (rows.empty()) {
    throw SectionUnavailable("no " + std::string(suite) + " results for commit " +
                             std::string(commit.substr(0, 12)) + "; run `volta-audit run " +
                             std::string(suite) + "` first");
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

// Table rows of tallies keyed by `op` (an opset, numeric in the query's order, or a type): the
// key, the tests and each backend's cells. "0" (the model imports no default-domain opset) and
// "" (no input) read "none".
std::vector<std::vector<std::string>> keyed_rows(
    const std::vector<conformance::OnnxCoverageRow>& rows) {
  std::vector<std::pair<std::string, Tally>> keyed;
  for (const conformance::OnnxCoverageRow& row : rows) {
    if (keyed.empty() || keyed.back().first != row.op) keyed.emplace_back(row.op, Tally{});
    keyed.back().second.add(row);
  }
  std::vector<std::vector<std::string>> out;
  out.reserve(keyed.size());
  for (const auto& [key, tally] : keyed) {
    const bool none = key.empty() || key == "0";
    out.push_back(onnx_cells(tally, {none ? "none" : key, std::to_string(tests_of(tally))}));
  }
  return out;
}

// `sql` over the usable runs of `commit` (conformance::usable_run_cte), as the gates read them.
conformance::Statement prepare_for_commit(const conformance::Database& db, std::string_view sql,
                                          std::string_view commit) {
  conformance::Statement query =
      db.prepare("WITH " + std::string(conformance::usable_run_cte()) + "\n" + std::string(sql));
  query.bind(query.parameter_index(":commit"), commit);
  query.bind(query.parameter_index(":release"), int64_t{0});
  return query;
}

// The numerics suite's newest result per case for the commit (as its gate reads them).
constexpr std::string_view kNumericsRowsSql = R"sql(
SELECT family, backend, case_id, outcome FROM (
  SELECT c.family, c.backend, c.case_id, r.outcome,
         row_number() OVER (PARTITION BY r.case_ref
                            ORDER BY run.started_at DESC, run.id DESC) AS recency
  FROM result r
  JOIN usable_run run ON run.id = r.run_id
  JOIN test_case c ON c.id = r.case_ref
  WHERE c.suite = 'numerics'
) WHERE recency = 1
)sql";

// The value class a matrix case id places: "Relu[f32] If x is NaN, ..." -> "NaN"; decimal
// magnitudes are one class. Empty for cases that are not matrix cells (properties).
std::string value_class_of(const std::string& case_id) {
  const size_t at = case_id.find("] If ");
  if (at == std::string::npos) return {};
  const conformance::ParsedLine parsed =
      conformance::parse_rule_line("- `Identity`: " + case_id.substr(at + 2));
  if (!parsed.rule) return {};
  const conformance::Value& v = parsed.rule->clauses.front().value;
  return v.cls == conformance::ValueClass::Number ? "decimal" : v.text;
}

std::string render_numerics_matrix(const conformance::Database& db, std::string_view commit) {
  conformance::Statement query = prepare_for_commit(db, kNumericsRowsSql, commit);
  // (family, value class) -> backend -> {pass, cells}
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::pair<int, int>>> cells;
  bool any = false;
  while (query.step()) {
    any = true;
    const std::string value = value_class_of(query.column_text(2));
    if (value.empty()) continue;
    auto& [passed, total] = cells[{query.column_text(0), value}][query.column_text(1)];
    passed += query.column_text(3) == "PASS" ? 1 : 0;
    ++total;
  }
  if (!any) {
    throw SectionUnavailable("no numerics results for commit " + std::string(commit.substr(0, 12)) +
                             "; run `volta-audit run numerics` first");
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& [key, by_backend] : cells) {
    std::vector<std::string> row = {key.first, key.second};
    for (std::string_view backend : {"cpu", "reference", "cuda"}) {
      const auto it = by_backend.find(std::string(backend));
      if (backend == "cuda") {
        row.emplace_back("NOT VERIFIED");
      } else if (it == by_backend.end()) {
        row.emplace_back("MISSING");
      } else {
        row.push_back(std::to_string(it->second.first) + " / " + std::to_string(it->second.second));
      }
    }
    rows.push_back(std::move(row));
  }
  return markdown_table({"family", "value", "cpu pass / cells", "reference pass / cells", "cuda"},
                        rows);
}

// The determinism suite's newest result per case for the commit on the CPU backend (as its
// gates read them; the cuda rows are gate determinism-cuda's).
constexpr std::string_view kDeterminismRowsSql = R"sql(
SELECT family, case_id, outcome, params FROM (
  SELECT c.family, c.case_id, r.params, r.outcome,
         row_number() OVER (PARTITION BY r.case_ref
                            ORDER BY run.started_at DESC, run.id DESC) AS recency
  FROM result r
  JOIN usable_run run ON run.id = r.run_id
  JOIN test_case c ON c.id = r.case_ref
  WHERE c.suite = 'determinism' AND c.backend = 'cpu'
) WHERE recency = 1
)sql";

// The build types whose plan fingerprints the plan-stability gate compares: every complete
// run of the commit with a plan:SUBJECT fingerprint, not only the newest.
constexpr std::string_view kPlanBuildTypesSql = R"sql(
SELECT DISTINCT run.build_type
FROM result r
JOIN usable_run run ON run.id = r.run_id
JOIN test_case c ON c.id = r.case_ref
WHERE c.suite = 'determinism' AND c.backend = 'cpu'
  AND c.family = 'plan-stability' AND substr(c.case_id, 1, 5) = 'plan:' AND r.output_hash <> ''
ORDER BY run.build_type
)sql";

// "runs=100 processes=3 threads=3" -> "100 runs + 3 fresh processes at 3 threads"; params
// of another form are shown as recorded.
std::map<std::string, std::string> params_of(const std::string& params) {
  std::map<std::string, std::string> value;
  std::istringstream words(params);
  for (std::string word; words >> word;) {
    const size_t eq = word.find('=');
    if (eq != std::string::npos) value[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return value;
}

std::string replay_params_text(const std::string& params) {
  std::map<std::string, std::string> value = params_of(params);
  if (!value.contains("runs") || !value.contains("processes") || !value.contains("threads")) {
    return params;
  }
  return value["runs"] + " runs + " + value["processes"] + " fresh processes at " +
         value["threads"] + " threads";
}

// "batches=1,2,3 threads=3" -> "batch sizes 1,2,3 at 3 threads"; params as they are otherwise.
std::string batch_params_text(const std::string& params) {
  std::map<std::string, std::string> value = params_of(params);
  if (!value.contains("batches") || !value.contains("threads")) return params;
  return "batch sizes " + value["batches"] + " at " + value["threads"] + " threads";
}

// The contract's families, in the order the policy lists them.
constexpr std::array<std::string_view, 5> kEvidenceFamilies = {
    conformance::kReplayFamily, conformance::kThreadInvarianceFamily,
    conformance::kPlanStabilityFamily, conformance::kBatchInvarianceFamily,
    conformance::kStrictModeFamily};

// One family's row of the determinism-evidence table.
struct FamilyEvidence {
  int64_t cases = 0, passed = 0, failed = 0, skipped = 0;
  int64_t controls = 0, caught = 0;  // negative controls of the family, and those that passed
  std::set<std::string> params;      // replay-100, batch-invariance: distinct params of cases
  std::set<std::string> configs;     // thread-invariance: the configurations of threads:SUBJECT
};

std::string render_determinism_evidence(const conformance::Database& db, std::string_view commit) {
  using conformance::kNegativeControls;
  std::map<std::string, FamilyEvidence> families;
  for (std::string_view family : kEvidenceFamilies) families[std::string(family)];
  for (const conformance::NegativeControl& control : kNegativeControls) {
    ++families[std::string(control.family)].controls;
  }
  conformance::Statement query = prepare_for_commit(db, kDeterminismRowsSql, commit);
  bool any = false;
  while (query.step()) {
    any = true;
    FamilyEvidence& f = families[query.column_text(0)];
    const std::string case_id = query.column_text(1);
    const std::string outcome = query.column_text(2);
    if (std::ranges::any_of(kNegativeControls, [&](const conformance::NegativeControl& c) {
          return c.case_id == case_id;
        })) {
      f.caught += outcome == "PASS" ? 1 : 0;
      continue;
    }
    ++f.cases;
    f.passed += outcome == "PASS" ? 1 : 0;
    f.skipped += outcome == "SKIPPED" ? 1 : 0;
    f.failed += outcome != "PASS" && outcome != "SKIPPED" ? 1 : 0;
    if (case_id.starts_with("replay:") || case_id.starts_with("batch:")) {
      f.params.insert(query.column_text(3));
    }
    // threads:SUBJECT params: "configurations=threads-1,threads-2,...".
    const std::string params = query.column_text(3);
    if (case_id.starts_with("threads:") && params.starts_with("configurations=")) {
      std::istringstream names(params.substr(15));
      for (std::string name; std::getline(names, name, ',');) f.configs.insert(name);
    }
  }
  if (!any) {
    throw SectionUnavailable("no determinism results for commit " +
                             std::string(commit.substr(0, 12)) +
                             "; run `volta-audit run determinism --backend cpu` first");
  }
  conformance::Statement build_types = prepare_for_commit(db, kPlanBuildTypesSql, commit);
  std::string compared;
  while (build_types.step()) {
    compared += (compared.empty() ? "" : ", ") + build_types.column_text(0);
  }

  // The contract's families in its order, then any other family the suite recorded.
  std::vector<std::string> order(kEvidenceFamilies.begin(), kEvidenceFamilies.end());
  for (const auto& [family, f] : families) {
    if (std::ranges::find(order, family) == order.end()) order.push_back(family);
  }
  std::vector<std::vector<std::string>> rows;
  for (const std::string& family : order) {
    const FamilyEvidence& f = families[family];
    std::string evidence;
    if (family == conformance::kReplayFamily) {
      for (const std::string& p : f.params) {
        evidence += (evidence.empty() ? "" : "; ") + replay_params_text(p);
      }
    } else if (family == conformance::kThreadInvarianceFamily) {
      for (const std::string& c : f.configs) {
        evidence += (evidence.empty() ? "configurations: " : ", ") + c;
      }
    } else if (family == conformance::kPlanStabilityFamily && !compared.empty()) {
      evidence = "build types " + compared;
    } else if (family == conformance::kBatchInvarianceFamily) {
      for (const std::string& p : f.params) {
        evidence += (evidence.empty() ? "" : "; ") + batch_params_text(p);
      }
    }
    rows.push_back(
        {family, std::to_string(f.cases), std::to_string(f.passed), std::to_string(f.failed),
         std::to_string(f.skipped),
         f.controls == 0 ? "—" : std::to_string(f.caught) + " of " + std::to_string(f.controls),
         evidence.empty() ? "—" : evidence});
  }
  return markdown_table(
      {"family", "cases", "pass", "fail", "skipped", "negative controls caught", "evidence"}, rows);
}

// The tolerance table as checked in, one row per entry with its reason.
std::string render_tolerances() {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in{std::string(conformance::tolerances_tsv())};
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    std::istringstream cols(line);
    std::string field;
    while (std::getline(cols, field, '\t')) {
      std::string cell;  // a '|' in a reason would end the Markdown cell
      for (char c : field) cell += c == '|' ? std::string("\\|") : std::string(1, c);
      fields.push_back(std::move(cell));
    }
    fields.resize(7);
    rows.push_back(std::move(fields));
  }
  return markdown_table({"family", "dtype", "backends", "abs", "rel", "ulp", "reason"}, rows);
}

// Every gate, whether it blocks a pull request, what it proves and what complete evidence is.
std::string render_gates() {
  std::vector<std::vector<std::string>> rows;
  for (const Gate& g : gates()) {
    rows.push_back({"`" + std::string(g.name) + "`", g.blocks_pr ? "every change" : "release",
                    std::string(g.description), std::string(g.evidence)});
  }
  return markdown_table({"gate", "blocks", "proves", "complete evidence"}, rows);
}

constexpr GeneratedSection kGeneratedSections[] = {
    {"gates", false, [](const ResultsSource&) { return render_gates(); }},
    {"op-backend-matrix", false, [](const ResultsSource&) { return render_op_backend_matrix(); }},
    {"onnx-coverage", true,
     [](const ResultsSource& r) { return render_onnx_coverage(*r.db, r.commit); }},
    {"onnx-totals", true,
     [](const ResultsSource& r) { return render_onnx_totals(*r.db, r.commit); }},
    {"onnx-current-coverage", true,
     [](const ResultsSource& r) {
       return render_onnx_coverage(*r.db, r.commit, conformance::kOnnxCurrentSuite);
     }},
    {"onnx-current-totals", true,
     [](const ResultsSource& r) {
       return render_onnx_totals(*r.db, r.commit, conformance::kOnnxCurrentSuite);
     }},
    {"numerics-matrix", true,
     [](const ResultsSource& r) { return render_numerics_matrix(*r.db, r.commit); }},
    {"tolerances", false, [](const ResultsSource&) { return render_tolerances(); }},
    {"determinism-evidence", true,
     [](const ResultsSource& r) { return render_determinism_evidence(*r.db, r.commit); }},
};

}  // namespace

std::span<const GeneratedSection> generated_sections() { return kGeneratedSections; }

std::string render_op_backend_matrix() {
  const Capabilities cpu = make_backend("cpu")->capabilities();
  // The CUDA column comes from the backend's capabilities, which answer without a device; a
  // build without the backend (VOLTA_CUDA=OFF) says so in every cell rather than "no kernel".
  const std::optional<Capabilities> cuda =
      has_backend("cuda") ? std::optional(make_backend("cuda")->capabilities()) : std::nullopt;
  std::vector<std::vector<std::string>> rows;
  for (const OpSchema& schema : all_op_schemas()) {
    const auto at = static_cast<size_t>(op_index(schema.kind));
    rows.push_back({std::string(schema.name), std::string(op_family_name(schema.family)),
                    type_params_cell(schema), std::string(nan_mode_name(schema.nan_mode)),
                    capability_cell(cpu[at]),
                    cuda ? cuda_capability_cell((*cuda)[at]) : "not built",
                    reference::reference_kernel(schema.kind) != nullptr ? "yes" : "no"});
  }
  return markdown_table({"op", "family", "dtypes", "NaN policy", "cpu", "cuda", "reference"}, rows);
}

std::string render_onnx_coverage(const conformance::Database& db, std::string_view commit,
                                 std::string_view suite) {
  std::map<std::string, Tally> families, ops;
  std::map<std::string, std::string> family_of_op;
  Tally total;
  for (const conformance::OnnxCoverageRow& row : onnx_rows(db, commit, suite)) {
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
  const std::vector<std::vector<std::string>> opset_rows =
      keyed_rows(conformance::onnx_coverage_by_opset(db, commit, suite));
  const std::vector<std::vector<std::string>> dtype_rows =
      keyed_rows(conformance::onnx_coverage_by_dtype(db, commit, suite));
  return "By family:\n\n" + markdown_table(onnx_header({"family", "ops", "tests"}), family_rows) +
         "\nBy the opset of the test's model:\n\n" +
         markdown_table(onnx_header({"opset", "tests"}), opset_rows) +
         "\nBy the type of the test's first input:\n\n" +
         markdown_table(onnx_header({"type", "tests"}), dtype_rows) + "\nBy op:\n\n" +
         markdown_table(onnx_header({"op", "family", "tests"}), op_rows);
}

std::string render_onnx_totals(const conformance::Database& db, std::string_view commit,
                               std::string_view suite) {
  Tally total;
  for (const conformance::OnnxCoverageRow& row : onnx_rows(db, commit, suite)) total.add(row);
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
