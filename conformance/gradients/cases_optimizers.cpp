// The `optimizers` family: each optimizer and schedule of engine/train run for 50 steps by the
// CPU engine (TrainingSession, at 1, 2, 3, 4 and 8 threads) and by the reference engine (the
// same step graph, build_training_step), in f32 and f64. Every optimizer operation is one IEEE
// operation rounded to the parameter dtype (governance/training-policy.md), so without clipping
// the parameters must agree bit for bit; clipping's global norm is a reduction, summed in the
// engine's fixed f32 tree and in double by the reference, so there they agree within
// kClipTolerance. At every thread count the engine must give the bits it gives at 1 thread.
// The forward is linear, loss = sum(p_i * g_i), so each step's gradient is exactly the batch
// the case feeds it. One more case trains the built-in transformer block
// for 100 steps (AdamW, clipping, warm-up cosine): the loss must fall and its bits, and the
// parameters', must not depend on the thread count.

#include <cmath>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gradient_cases.h"
#include "volta/conformance/gradient_suite.h"
#include "volta/ir/random.h"
#include "volta/model/builtin_models.h"
#include "volta/reference/reference.h"
#include "volta/runtime/registry.h"
#include "volta/train/training_session.h"

namespace volta::conformance::gradients {
namespace {

using Kind = train::OptimizerConfig::Kind;
using ScheduleKind = train::Schedule::Kind;

constexpr int64_t kOptimizerSteps = 50;
// Engine against reference with clipping, per dtype: abs, rel. Measured over these cases: f32
// max abs 6.0e-8, f64 1.1e-16.
struct ClipTolerance {
  double abs, rel;
};
constexpr ClipTolerance kClipTolerance[] = {{1e-6, 1e-5}, {1e-14, 1e-12}};  // f32, f64
constexpr int64_t kTrainingSteps = 100;
const Shape kParameterShapes[] = {Shape{3, 5}, Shape{7}, Shape{}};

TrainingProblem linear_problem(DType dtype) {
  return gradient_fed_problem(dtype, kParameterShapes, 31);
}

// Step t's gradients: mostly in [-1, 1), every fifth step a hundred times larger (clipping).
std::vector<Tensor> batch(DType dtype, int64_t step) {
  std::vector<Tensor> out;
  const double scale = step % 5 == 0 ? 100.0 : 1.0;
  for (size_t i = 0; i < std::size(kParameterShapes); ++i) {
    out.push_back(random_tensor(dtype, kParameterShapes[i], 500 + static_cast<uint64_t>(step),
                                -scale, scale, i));
  }
  return out;
}

const Backend& cpu() {
  static const std::unique_ptr<Backend> backend = make_backend("cpu");
  return *backend;
}

// The reference engine's parameters after `steps` steps of the step graph.
std::vector<Tensor> reference_parameters(const train::OptimizerConfig& config, DType dtype) {
  const TrainingProblem problem = linear_problem(dtype);
  const train::TrainingStepGraph step =
      train::build_training_step(problem.forward, problem.loss, config);
  std::vector<Tensor> states = train::initial_step_states(step, problem.initial_states);
  std::vector<Tensor*> bind;
  bind.reserve(states.size());
  for (Tensor& t : states) bind.push_back(&t);
  for (int64_t t = 1; t <= kOptimizerSteps; ++t) {
    std::vector<Tensor> inputs = batch(dtype, t);
    inputs.push_back(train::hyper_parameters(config, t, dtype));
    reference::evaluate(step.graph, inputs, bind);
  }
  states.resize(std::size(kParameterShapes));
  return states;
}

CaseOutcome check_optimizer(const train::OptimizerConfig& config) {
  CaseOutcome out;
  out.outcome = Outcome::Pass;
  double max_abs = 0;
  const auto fail = [&](const std::string& why) {
    if (out.outcome != Outcome::Pass) return;
    out.outcome = Outcome::FailNumeric;
    out.message = why;
  };
  for (const DType dtype : {DType::F32, DType::F64}) {
    const ClipTolerance tol = kClipTolerance[dtype == DType::F32 ? 0 : 1];
    const std::vector<Tensor> want = reference_parameters(config, dtype);
    const TrainingProblem problem = linear_problem(dtype);
    std::vector<Tensor> at_one_thread;
    for (const int threads : kGradientThreadCounts) {
      train::TrainingSession session(problem.forward, problem.loss, problem.initial_states,
                                     {.optimizer = config, .threads = threads}, cpu(),
                                     DeterminismMode::Strict);
      for (int64_t t = 1; t <= kOptimizerSteps; ++t) session.step(batch(dtype, t));
      out.kernel = kernel_variants(session.plan());
      const std::string where = std::string(dtype_name(dtype)) + " at " + std::to_string(threads) +
                                " threads: parameter p";
      for (size_t i = 0; i < want.size(); ++i) {
        const Tensor& got = session.state("p" + std::to_string(i));
        if (threads == 1) at_one_thread.push_back(got);
        if (!got.bit_equal(at_one_thread[i])) {
          fail(where + std::to_string(i) + " differs from its bits at 1 thread");
        }
        for (int64_t e = 0; e < got.numel(); ++e) {
          const double d = std::abs(got.get_double(e) - want[i].get_double(e));
          max_abs = std::max(max_abs, d);
          if (config.clip_norm ? d > tol.abs + tol.rel * std::abs(want[i].get_double(e))
                               : !got.bit_equal(want[i])) {
            fail(where + std::to_string(i) + " after " + std::to_string(kOptimizerSteps) +
                 " steps differs from the reference engine's");
          }
        }
      }
    }
  }
  out.max_abs = max_abs;
  out.tolerance =
      config.clip_norm ? "f32 abs=1e-06 rel=1e-05, f64 abs=1e-14 rel=1e-12" : "bit-exact";
  if (out.outcome == Outcome::Pass) {
    out.message = std::string("f32 and f64 parameters after ") + std::to_string(kOptimizerSteps) +
                  " steps match the reference engine's (" + out.tolerance +
                  ") with the same bits at 1, 2, 3, 4 and 8 threads";
  }
  return out;
}

// The transformer block trained as a regression: per dtype, the loss bits of every step and the
// final parameters at each thread count against those at 1 thread; the loss must fall by half.
CaseOutcome check_transformer_training() {
  const train::TrainingOptions options{
      .optimizer = {.kind = Kind::AdamW,
                    .schedule = {.kind = ScheduleKind::WarmupCosine,
                                 .base_lr = 3e-3,
                                 .total_steps = kTrainingSteps,
                                 .warmup_steps = 10,
                                 .min_lr = 3e-4},
                    .weight_decay = 0.01,
                    .clip_norm = 1.0}};
  CaseOutcome out;
  out.outcome = Outcome::Pass;
  out.tolerance = "bit-exact";
  std::ostringstream summary;
  for (const DType dtype : {DType::F32, DType::F64}) {
    TransformerBlockConfig config = kTransformerBlock;
    config.batch = 2;
    config.dtype = dtype;
    const TrainingProblem p = transformer_block_regression(config);
    std::vector<double> first_losses;
    std::vector<Tensor> first_parameters;
    for (const int threads : kGradientThreadCounts) {
      train::TrainingOptions o = options;
      o.threads = threads;
      train::TrainingSession session(p.forward, p.loss, p.initial_states, o, cpu(),
                                     DeterminismMode::Strict);
      std::vector<double> losses;
      for (int64_t s = 0; s < kTrainingSteps; ++s) losses.push_back(session.step(p.batch));
      out.kernel = kernel_variants(session.plan());
      std::vector<Tensor> parameters;
      for (const std::string& name : session.parameter_names()) {
        parameters.push_back(session.state(name));
      }
      if (threads == 1) {
        first_losses = losses;
        first_parameters = parameters;
        summary << dtype_name(dtype) << " loss " << losses.front() << " -> " << losses.back()
                << "; ";
        if (!(losses.back() < 0.5 * losses.front()) && out.outcome == Outcome::Pass) {
          out.outcome = Outcome::FailNumeric;
          out.message = std::string(dtype_name(dtype)) + ": the loss did not fall by half in " +
                        std::to_string(kTrainingSteps) + " steps (" + summary.str() + ")";
        }
        continue;
      }
      // Loss values compare as doubles: equal doubles of an f32 loss are equal f32 bits.
      bool same = losses == first_losses;
      for (size_t i = 0; i < parameters.size(); ++i) {
        same = same && parameters[i].bit_equal(first_parameters[i]);
      }
      if (!same && out.outcome == Outcome::Pass) {
        out.outcome = Outcome::FailNumeric;
        out.message = std::string(dtype_name(dtype)) + " at " + std::to_string(threads) +
                      " threads: the losses or parameters differ from those at 1 thread";
      }
    }
  }
  if (out.outcome == Outcome::Pass) {
    out.message = summary.str() + "identical loss bits at every step and identical parameters " +
                  "at 1, 2, 3, 4 and 8 threads";
  }
  return out;
}

struct NamedOptimizer {
  std::string name;
  train::OptimizerConfig config;
};

std::vector<NamedOptimizer> optimizers() {
  const train::Schedule step{
      .kind = ScheduleKind::Step, .base_lr = 0.1, .step_size = 10, .gamma = 0.5};
  const train::Schedule cosine{
      .kind = ScheduleKind::Cosine, .base_lr = 0.02, .total_steps = 40, .min_lr = 1e-4};
  const train::Schedule warmup{.kind = ScheduleKind::WarmupCosine,
                               .base_lr = 0.01,
                               .total_steps = 40,
                               .warmup_steps = 8,
                               .min_lr = 0.001};
  return {
      {"sgd(schedule=constant)", {.kind = Kind::Sgd, .schedule = {.base_lr = 0.05}}},
      {"sgd(momentum=0.9,dampening=0.25,schedule=step)",
       {.kind = Kind::Sgd, .schedule = step, .momentum = 0.9, .dampening = 0.25}},
      {"sgd(momentum=0.8,nesterov,weight_decay=0.01,clip_norm=1,schedule=cosine)",
       {.kind = Kind::Sgd,
        .schedule = cosine,
        .momentum = 0.8,
        .nesterov = true,
        .weight_decay = 0.01,
        .clip_norm = 1.0}},
      {"adam(schedule=constant)", {.kind = Kind::Adam, .schedule = {.base_lr = 1e-3}}},
      {"adam(beta1=0.8,beta2=0.95,epsilon=1e-6,weight_decay=0.05,schedule=warmup-cosine)",
       {.kind = Kind::Adam,
        .schedule = warmup,
        .beta1 = 0.8,
        .beta2 = 0.95,
        .epsilon = 1e-6,
        .weight_decay = 0.05}},
      {"adamw(weight_decay=0.1,clip_norm=5,schedule=step)",
       {.kind = Kind::AdamW, .schedule = step, .weight_decay = 0.1, .clip_norm = 5.0}},
      {"adamw(weight_decay=0.01,schedule=cosine)",
       {.kind = Kind::AdamW, .schedule = cosine, .weight_decay = 0.01}},
  };
}

}  // namespace

void optimizer_cases(std::vector<GradientCase>& out) {
  for (NamedOptimizer& o : optimizers()) {
    GradientCase c;
    c.family = "optimizers";
    c.op = train::optimizer_name(o.config.kind);
    c.id = "optimizer:" + o.name + "(steps=" + std::to_string(kOptimizerSteps) + ")";
    c.on_cpu = [config = o.config] { return check_optimizer(config); };
    c.cpu_params = engine_params();
    out.push_back(std::move(c));
  }
  GradientCase block;
  block.family = "optimizers";
  block.op = "adamw";
  block.id = "training:transformer-block(adamw,clip_norm=1,schedule=warmup-cosine,steps=" +
             std::to_string(kTrainingSteps) + ")";
  block.on_cpu = check_transformer_training;
  block.cpu_params = engine_params();
  out.push_back(std::move(block));
}

}  // namespace volta::conformance::gradients
