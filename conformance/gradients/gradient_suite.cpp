#include "volta/conformance/gradient_suite.h"

#include <iterator>
#include <memory>

#include "gradient_cases.h"
#include "gradient_checks.h"
#include "volta/autograd/autograd.h"
#include "volta/error.h"

namespace volta::conformance {
namespace gradients {
namespace {

// Every source of cases, one per file (gradient_cases.h says how to add one).
constexpr void (*kCaseSources[])(std::vector<GradientCase>&) = {op_family_cases, subgradient_cases,
                                                                optimizer_cases};

// The negative control: Tanh's rule sign-flipped must make the finite-difference check fail,
// and the same case must pass without it (so the failure is the planted defect's).
CaseOutcome wrong_vjp_control() {
  const Shape shape{3, 5};
  Tensor x(DType::F64, shape);
  for (int64_t e = 0; e < x.numel(); ++e) x.set_double(e, -1.5 + 0.2 * static_cast<double>(e));
  const OpGradientCase c{
      "Tanh(shape=[3,5])", OpKind::Tanh, {TypeInfo{DType::F32, shape}}, {x}, {}, 1, {0}};
  CaseOutcome out;
  const CaseOutcome clean = check_reference(c);
  if (clean.outcome != Outcome::Pass) {
    out.outcome = Outcome::FailNumeric;
    out.message = "the control case fails without its planted defect: " + clean.message;
    return out;
  }
  CaseOutcome planted;
  {
    const autograd::PlantedWrongVjp plant(OpKind::Tanh);
    planted = check_reference(c);
  }
  out.outcome = planted.outcome == Outcome::FailNumeric ? Outcome::Pass : Outcome::FailNumeric;
  out.message = out.outcome == Outcome::Pass
                    ? "caught: Tanh's VJP sign-flipped gives: " + planted.message
                    : "negative control NOT caught: Tanh's VJP sign-flipped gives " +
                          std::string(outcome_name(planted.outcome)) + ": " + planted.message;
  return out;
}

}  // namespace

std::string engine_params() {
  std::string threads;
  for (const int t : kGradientThreadCounts) {
    threads += (threads.empty() ? "" : ",") + std::to_string(t);
  }
  return "dtypes=f32,f64 threads=" + threads;
}

GradientCase gradient_case(std::string family, OpGradientCase c) {
  const auto shared = std::make_shared<const OpGradientCase>(std::move(c));
  GradientCase g;
  g.family = std::move(family);
  g.op = std::string(op_name(shared->op));
  g.id = shared->id;
  g.inputs = shared->trainable;
  g.on_cpu = [shared] { return check_engine(*shared); };
  g.on_reference = [shared] { return check_reference(*shared); };
  g.cpu_params = engine_params();
  g.reference_params = shared->documented ? std::string("oracle=documented-subgradient")
                                          : "oracle=finite-differences";
  return g;
}

}  // namespace gradients

std::vector<SuiteCase> gradient_suite(std::string_view backend, const GradientRunOptions& options) {
  if (backend != "cpu" && backend != "reference") {
    fail(ErrorCode::InvalidArgument, "the gradients suite has no backend '" + std::string(backend) +
                                         "' (supported: " + std::string(kGradientBackends) + ")");
  }
  std::vector<gradients::GradientCase> cases;
  for (const auto source : gradients::kCaseSources) source(cases);
  std::vector<SuiteCase> out;
  for (gradients::GradientCase& c : cases) {
    const bool cpu = backend == "cpu";
    CaseBody body = cpu ? std::move(c.on_cpu) : std::move(c.on_reference);
    if (!body) continue;
    if (options.plant) {
      body = [body = std::move(body), plant = *options.plant] {
        const autograd::PlantedWrongVjp planted(plant.op);
        return body();
      };
    }
    out.push_back({.family = std::move(c.family),
                   .op = std::move(c.op),
                   .backend = std::string(backend),
                   .case_id = std::string(cpu ? kEngineCheckPrefix : kVjpCheckPrefix) + c.id,
                   .params = cpu ? std::move(c.cpu_params) : std::move(c.reference_params),
                   .body = std::move(body)});
  }
  if (backend == "reference") {
    out.push_back({.family = std::string(kGradientControlsFamily),
                   .op = "Tanh",
                   .backend = "reference",
                   .case_id = std::string(kWrongVjpControl),
                   .params = "planted=Tanh sign-flipped",
                   .body = gradients::wrong_vjp_control});
  }
  return out;
}

autograd::WrongVjp parse_planted_wrong_vjp(std::string_view op) {
  const std::optional<OpKind> kind = parse_op(op);
  if (!kind || !has_vjp_rule(*kind, 0)) {
    fail(ErrorCode::InvalidArgument,
         "--plant-wrong-vjp '" + std::string(op) +
             "': expected an op whose first input has a VJP rule (Tanh, Mul, MatMul, ...)");
  }
  return {*kind};
}

}  // namespace volta::conformance
