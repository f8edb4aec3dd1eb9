#include "volta/conformance/parity_suite.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <set>

#include "volta/conformance/tolerance.h"
#include "volta/ir/printer.h"
#include "volta/reference/reference.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta::conformance {
namespace {

std::vector<Tensor> run_poisoned(const ExecutionPlan& plan, const Backend& backend,
                                 const std::vector<Tensor>& inputs, int threads, std::byte poison) {
  const std::unique_ptr<ExecutionContext> ctx_context = backend.make_context({.threads = threads});
  ExecutionContext& ctx = *ctx_context;
  ctx.set_poison(poison);
  return execute(plan, backend, ctx, inputs);
}

// The kernel variants a plan runs, each once, in step order.
std::string kernels_of(const ExecutionPlan& plan) {
  std::string out;
  std::set<std::string> seen;
  for (const PlannedStep& step : plan.steps) {
    if (!seen.insert(step.kernel.variant).second) continue;
    out += (out.empty() ? "" : ",") + step.kernel.variant;
  }
  return out;
}

std::string hash_outputs(const std::vector<Tensor>& outputs) {
  StableHasher h;
  for (const Tensor& t : outputs) {
    h.text(dtype_name(t.dtype()));
    h.text(t.shape().str());
    h.bytes(t.data(), t.nbytes());
  }
  return hash_hex(h.digest());
}

// The first element where two runs of the same plan differ, for the failure message.
std::string first_difference(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  for (size_t i = 0; i < a.size(); ++i) {
    const size_t width = dtype_size(a[i].dtype());
    const auto* pa = static_cast<const unsigned char*>(a[i].data());
    const auto* pb = static_cast<const unsigned char*>(b[i].data());
    for (size_t byte = 0; byte < a[i].nbytes(); ++byte) {
      if (pa[byte] != pb[byte]) {
        return "output " + std::to_string(i) + " element " + std::to_string(byte / width);
      }
    }
  }
  return "no element";
}

bool is_nan_at(const Tensor& t, int64_t e) {
  if (t.dtype() == DType::F32) return std::isnan(t.data_as<float>()[e]);
  if (t.dtype() == DType::F64) return std::isnan(t.data_as<double>()[e]);
  return false;
}

// The first element where `got` breaks a claim of bit equality with the CPU backend's `want`
// ("output 0 element 3: 0x3f800001, the CPU 0x3f800000"), or "" when it holds.
std::string cpu_bits_breach(CrossBackendExactness claim, const std::vector<Tensor>& got,
                            const std::vector<Tensor>& want) {
  char text[96];
  for (size_t i = 0; i < want.size(); ++i) {
    const size_t width = dtype_size(want[i].dtype());
    const auto* g = static_cast<const unsigned char*>(got[i].data());
    const auto* w = static_cast<const unsigned char*>(want[i].data());
    for (int64_t e = 0; e < want[i].numel(); ++e) {
      const size_t at = static_cast<size_t>(e) * width;
      if (std::memcmp(g + at, w + at, width) == 0) continue;
      const bool nan_payload_only = claim == CrossBackendExactness::BitwiseExceptNanPayload &&
                                    want[i].dtype() == got[i].dtype() && is_nan_at(got[i], e) &&
                                    is_nan_at(want[i], e);
      if (nan_payload_only) continue;
      uint64_t gbits = 0, wbits = 0;
      std::memcpy(&gbits, g + at, std::min(width, sizeof gbits));
      std::memcpy(&wbits, w + at, std::min(width, sizeof wbits));
      std::snprintf(text, sizeof text, "output %zu element %lld: 0x%llx, the CPU 0x%llx", i,
                    static_cast<long long>(e), static_cast<unsigned long long>(gbits),
                    static_cast<unsigned long long>(wbits));
      return text;
    }
  }
  return "";
}

// Where the backend claims the CPU backend's bits for the op, runs the case on the CPU backend
// and holds the outputs to that claim; nullopt when there is no claim or it holds.
std::optional<std::string> breaks_cpu_claim(const ParityCase& c, const Backend& backend,
                                            const std::vector<Tensor>& got) {
  if (backend.name() == "cpu") return std::nullopt;
  const OpCapability capability = backend.capabilities()[static_cast<size_t>(op_index(c.op))];
  const CrossBackendExactness claim = capability.cpu_exactness;
  if (claim == CrossBackendExactness::NotClaimed) return std::nullopt;
  // The claim leaves out the dtypes whose CPU kernels call libm (keyed, like the kernels'
  // selection, by the data input's dtype).
  if (!c.inputs.empty() && capability.cpu_tolerance_dtypes.contains(c.inputs[0].dtype())) {
    return std::nullopt;
  }
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  const ExecutionPlan cpu_plan = compile(c.graph, *cpu, DeterminismMode::Strict);
  const std::vector<Tensor> want = run_poisoned(cpu_plan, *cpu, c.inputs, 1, std::byte{0x00});
  const std::string breach = cpu_bits_breach(claim, got, want);
  if (breach.empty()) return std::nullopt;
  return "claimed " + std::string(cross_backend_exactness_name(claim)) +
         " equal to the CPU backend, but " + breach;
}

}  // namespace

CaseOutcome run_parity_case(const ParityCase& c, const Backend& backend, int threads) {
  CaseOutcome out;
  ExecutionPlan plan;
  try {
    plan = compile(c.graph, backend, DeterminismMode::Strict);
  } catch (const VoltaError& e) {
    out.outcome = e.code() == ErrorCode::MissingKernel ? Outcome::Unsupported : Outcome::Error;
    out.message = e.what();
    return out;
  }
  out.kernel = kernels_of(plan);
  const std::vector<Tensor> got = run_poisoned(plan, backend, c.inputs, 1, std::byte{0xff});
  const std::vector<Tensor> again = run_poisoned(plan, backend, c.inputs, threads, std::byte{0x00});
  out.output_hash = hash_outputs(got);
  if (hash_outputs(again) != out.output_hash) {
    out.outcome = Outcome::FailNumeric;
    out.message = "runs poisoned with 0xff on 1 thread and 0x00 on " + std::to_string(threads) +
                  " threads differ at " + first_difference(got, again) +
                  ": an element is left unwritten or depends on the thread count";
    return out;
  }
  const std::vector<Tensor> want = reference::evaluate(c.graph, c.inputs);
  const OpFamily family = op_schema(c.op).family;
  out.outcome = Outcome::Pass;
  out.max_abs = out.max_rel = out.max_ulp = 0.0;
  for (size_t i = 0; i < want.size(); ++i) {
    const Tolerance tol = ToleranceTable::builtin().lookup(
        family, want[i].dtype(), std::string(backend.name()) + ":reference");
    const Comparison cmp = compare(got[i], want[i], tol);
    out.max_abs = std::max(*out.max_abs, cmp.max_abs);
    out.max_rel = std::max(*out.max_rel, cmp.max_rel);
    out.max_ulp = std::max(*out.max_ulp, cmp.max_ulp);
    // The row names the tolerance of output 0, or of the first output that failed.
    const bool first_failure = !cmp.passed() && out.outcome == Outcome::Pass;
    if (i == 0 || first_failure) {
      out.tolerance_key = tol.key;
      out.tolerance = tol.str();
    }
    if (first_failure) {
      out.outcome = outcome_of(cmp.mismatch);
      out.message = "output " + std::to_string(i) + ": " + cmp.detail;
    }
  }
  if (out.outcome == Outcome::Pass) {
    if (std::optional<std::string> breach = breaks_cpu_claim(c, backend, got)) {
      out.outcome = Outcome::FailNumeric;
      out.message = std::move(*breach);
    }
  }
  return out;
}

std::vector<SuiteCase> parity_suite(std::string_view backend, int threads) {
  if (backend != "cpu" && backend != "cuda") {
    fail(ErrorCode::InvalidArgument, "the parity suite has no backend '" + std::string(backend) +
                                         "' (supported: " + std::string(kParityBackends) + ")");
  }
  // A backend this binary was not built with, or one with no device here, is a precondition
  // the cases declare, not an error.
  const std::optional<std::string> unavailable = backend_unavailable(backend);
  std::vector<SuiteCase> out;
  for (ParityCase& c : parity_cases()) {
    SuiteCase s;
    s.family = std::string(op_family_name(op_schema(c.op).family));
    s.op = std::string(op_name(c.op));
    s.backend = std::string(backend);
    s.case_id = c.id;
    if (backend == "cuda") s.precondition = std::string(kCudaPrecondition);
    if (unavailable) {
      s.body = [why = *unavailable, name = std::string(backend)] {
        CaseOutcome o;
        o.outcome = Outcome::Skipped;
        o.message = why;
        o.message += ": parity on ";
        o.message += name;
        o.message +=
            name == "cuda" ? " needs that backend and a CUDA device" : " needs that backend";
        return o;
      };
    } else {
      s.body = [c = std::make_shared<ParityCase>(std::move(c)), name = std::string(backend),
                threads] { return run_parity_case(*c, *make_backend(name), threads); };
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace volta::conformance
