#include "volta/conformance/onnx_suite.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <set>

#include "volta/conformance/progress.h"
#include "volta/ir/printer.h"
#include "volta/onnx/model.h"
#include "volta/onnx/session.h"
#include "volta/reference/reference.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta::conformance {
namespace fs = std::filesystem;
namespace {

struct DataSet {
  std::vector<Tensor> inputs, outputs;
};

// A graph input or output of a type Volta has no dtype for (UINT8, seq(FLOAT), ...).
std::optional<std::string> unsupported_signature(const onnx::Model& model) {
  auto check = [](const std::vector<onnx::ValueSpec>& specs,
                  std::string_view what) -> std::optional<std::string> {
    for (const onnx::ValueSpec& v : specs) {
      if (!v.dtype) {
        return std::string(what) + " '" + v.name + "' has type " + v.type +
               "; Volta's tensor types: " + onnx::onnx_tensor_types();
      }
    }
    return std::nullopt;
  };
  if (auto why = check(model.inputs(), "graph input")) return why;
  return check(model.outputs(), "graph output");
}

// The dtypes a model declares for its inputs or outputs, in order.
std::vector<std::optional<DType>> declared(const std::vector<onnx::ValueSpec>& specs) {
  std::vector<std::optional<DType>> out;
  out.reserve(specs.size());
  for (const onnx::ValueSpec& s : specs) out.push_back(s.dtype);
  return out;
}

bool is_refusal(ErrorCode code) {
  return code == ErrorCode::ImportUnsupported || code == ErrorCode::ImportNotStatic ||
         code == ErrorCode::MissingKernel || code == ErrorCode::NonDeterministicKernel;
}

std::string hash_outputs(const std::vector<Tensor>& outputs) {
  return hash_hex(hash_tensors(outputs));
}

// The reference path never touches engine kernels: the import-time evaluator is the
// reference engine too.
std::vector<Tensor> run_reference(const onnx::Model& model, const std::vector<Tensor>& inputs) {
  onnx::ImportOptions options;
  options.evaluator = [](const Graph& graph) { return reference::evaluate(graph, {}); };
  const onnx::ImportedGraph imported = model.import_for(inputs, options);
  return reference::evaluate(imported.graph, inputs);
}

std::string params_of(const OnnxTest& test) {
  std::string ops;
  for (const std::string& op : test.op_types) ops += (ops.empty() ? "" : ",") + op;
  return "opset=" + std::to_string(test.opset) + " dtype=" + test.dtype + " ops=" + ops;
}

}  // namespace

CaseOutcome run_onnx_test(const OnnxTest& test, std::string_view backend, int threads,
                          const OnnxTolerance& tolerance) {
  CaseOutcome out;
  if (!test.problem.empty()) {
    out.message = test.problem;
    return out;
  }
  try {
    const onnx::Model model = onnx::Model::load(test.dir / "model.onnx");
    if (std::optional<std::string> why = unsupported_signature(model)) {
      out.outcome = Outcome::Unsupported;
      out.message = *why;
      return out;
    }
    std::unique_ptr<Backend> engine;
    std::optional<onnx::Session> session;
    if (backend != "reference") {
      engine = make_backend(backend);
      session.emplace(model, *engine, DeterminismMode::Strict, threads);
      // NaN / -1 in every element a kernel leaves unwritten, so it cannot pass by luck.
      session->context().set_poison(std::byte{0xff});
    }
    std::vector<Tensor> outputs_seen;
    for (size_t k = 0; k < test.data_sets.size(); ++k) {
      DataSet data{read_onnx_data_set(test.data_sets[k], "input", declared(model.inputs())),
                   read_onnx_data_set(test.data_sets[k], "output", declared(model.outputs()))};
      std::vector<Tensor> got;
      if (session) {
        got = session->run(data.inputs);
        if (k == 0) out.kernel = kernel_variants(session->plan_for(data.inputs));
      } else {
        got = run_reference(model, data.inputs);
        out.kernel = "reference";
      }
      compare_onnx_outputs(got, data.outputs, tolerance, "data set " + std::to_string(k), out);
      outputs_seen.insert(outputs_seen.end(), got.begin(), got.end());
      if (out.outcome != Outcome::Pass) break;
    }
    out.output_hash = hash_outputs(outputs_seen);
  } catch (const VoltaError& e) {
    out = CaseOutcome{};
    out.outcome = is_refusal(e.code()) ? Outcome::Unsupported : Outcome::Error;
    // Inputs that contradict the model's declared types come from the test's own data (ONNX
    // 1.12's castlike bf16 tests give a [1] tensor for a [3,4] input): a shape failure of the
    // test, not an engine error.
    if (e.code() == ErrorCode::InputMismatch) out.outcome = Outcome::FailShape;
    out.message = e.what();
  }
  return out;
}

std::vector<SuiteCase> onnx_suite_cases(std::span<const OnnxTest> corpus, std::string_view backend,
                                        int threads, const OnnxTolerances& tolerances) {
  if (std::find(kOnnxBackends.begin(), kOnnxBackends.end(), backend) == kOnnxBackends.end() &&
      backend != kOnnxCudaBackend) {
    fail(ErrorCode::InvalidArgument, "the onnx suite has no backend '" + std::string(backend) +
                                         "' (supported: cpu, reference, cuda)");
  }
  const std::optional<std::string> unavailable =
      backend == "reference" ? std::nullopt : backend_unavailable(backend);
  std::vector<SuiteCase> out;
  out.reserve(corpus.size());
  for (const OnnxTest& test : corpus) {
    SuiteCase c;
    c.family = test.family;
    c.op = test.op;
    c.backend = std::string(backend);
    c.case_id = test.id;
    c.params = params_of(test);
    if (backend == kOnnxCudaBackend) c.precondition = std::string(kCudaPrecondition);
    if (unavailable) {
      c.body = [why = *unavailable, backend = c.backend] {
        CaseOutcome o;
        o.outcome = Outcome::Skipped;
        o.message = why;
        o.message += ": the onnx suite on " + backend + " needs that backend and a device";
        return o;
      };
    } else {
      c.body = [test = std::make_shared<OnnxTest>(test), backend = c.backend, threads,
                tolerance = tolerances.lookup(test.id, backend)] {
        return run_onnx_test(*test, backend, threads, tolerance);
      };
    }
    out.push_back(std::move(c));
  }
  return out;
}

SuiteSummary run_onnx_suite(ResultStore& store, int64_t run_id, std::string_view backend,
                            std::span<const SuiteCase> cases,
                            std::span<const OnnxExpectation> expectations,
                            const RunOptions& options, std::string_view suite) {
  const std::vector<Expectation> mine = onnx_expectations_for(expectations, backend);
  std::vector<ExpectationRow> recorded;
  recorded.reserve(mine.size());
  for (const Expectation& e : mine) {
    recorded.push_back({std::string(suite), e.pattern, std::string(outcome_name(e.outcome)),
                        e.reason, e.issue, e.expires});
  }
  store.record_expectations(run_id, recorded);

  std::vector<const SuiteCase*> chosen;
  for (const SuiteCase& c : cases) {
    if ((options.family.empty() || c.family == options.family) &&
        (options.filter.empty() || glob_match(options.filter, c.case_id))) {
      chosen.push_back(&c);
    }
  }
  const std::string today = today_utc();
  SuiteSummary summary;
  Progress progress(std::string(suite) + " (" + std::string(backend) + ")",
                    static_cast<int64_t>(chosen.size()), options.interactive);
  std::vector<ResultRow> batch;
  auto add = [&](ResultRow row) {
    ++summary.cases;
    if (row.verdict != Verdict::Expected) ++summary.unexpected;
    progress.add(row.outcome, row.case_id);
    batch.push_back(std::move(row));
    if (static_cast<int>(batch.size()) >= options.batch_size) {
      store.record(run_id, batch);
      batch.clear();
    }
  };
  std::set<std::string> seen;
  for (const SuiteCase* c : chosen) {
    const CaseOutcome outcome = run_case(c->body, options.isolation);
    add(result_row(std::string(suite), *c, outcome, match_expectation(mine, c->case_id), today));
    seen.insert(c->case_id);
  }
  // A line naming one exact test the corpus no longer has would otherwise rot unnoticed.
  if (options.family.empty() && options.filter.empty()) {
    for (const Expectation& e : mine) {
      if (e.pattern.find('*') != std::string::npos || seen.contains(e.pattern)) continue;
      const SuiteCase missing{"", "", std::string(backend), e.pattern, "", {}};
      CaseOutcome o;
      o.outcome = Outcome::Missing;
      o.message = "expectation at line " + std::to_string(e.line) +
                  " names a test the corpus does not have";
      add(result_row(std::string(suite), missing, o, &e, today));
    }
  }
  store.record(run_id, batch);
  progress.finish();
  return summary;
}

}  // namespace volta::conformance
