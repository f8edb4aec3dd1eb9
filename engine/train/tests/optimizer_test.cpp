// Optimizers and schedules: each optimizer step, run as graph nodes by the CPU engine and by the
// reference engine, against a hand-written reference of governance/training-policy.md's
// operation order over 60 steps (bit for bit in f32 and f64: every operation is one IEEE
// operation rounded to the parameter dtype); global-norm clipping; the schedules' values; and
// the errors of a bad configuration.

#define BOOST_TEST_MODULE optimizer_test
#include "volta/train/optimizer.h"

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <iomanip>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include "volta/ir/random.h"
#include "volta/model/builtin_models.h"
#include "volta/reference/reference.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"
#include "volta/train/training_session.h"

namespace volta::train {
namespace {

constexpr int64_t kSteps = 60;
const Shape kShapes[] = {Shape{2, 3}, Shape{4}};

using Kind = OptimizerConfig::Kind;
using ScheduleKind = Schedule::Kind;

// loss = sum(p0 * g0) + sum(p1 * g1): the gradient of parameter i is exactly input g_i, so the
// test chooses each step's gradients.
TrainingProblem linear_problem(DType dtype) { return gradient_fed_problem(dtype, kShapes, 5); }

// Step t's gradients: mostly in [-1, 1), every seventh step ten times larger.
std::vector<Tensor> gradients(DType dtype, int64_t step) {
  std::vector<Tensor> out;
  const double scale = step % 7 == 0 ? 10.0 : 1.0;
  for (size_t i = 0; i < std::size(kShapes); ++i) {
    out.push_back(
        random_tensor(dtype, kShapes[i], 1000 + static_cast<uint64_t>(step), -scale, scale, i));
  }
  return out;
}

// The operation order of governance/training-policy.md, written out element by element in T.
template <typename T>
class HandOptimizer {
 public:
  HandOptimizer(const OptimizerConfig& c, const std::vector<Tensor>& init) : c_(c) {
    for (const Tensor& t : init) {
      std::vector<T> p;
      for (int64_t e = 0; e < t.numel(); ++e) p.push_back(static_cast<T>(t.get_double(e)));
      params_.push_back(p);
      m_.emplace_back(p.size(), T(0));
      v_.emplace_back(p.size(), T(0));
    }
  }

  void step(const std::vector<Tensor>& grads, int64_t t) {
    const double lr = c_.schedule.learning_rate(t);
    const auto wd = static_cast<T>(c_.weight_decay);
    const bool decay_into_gradient = c_.weight_decay != 0 && c_.kind != Kind::AdamW;
    for (size_t i = 0; i < params_.size(); ++i) {
      for (size_t e = 0; e < params_[i].size(); ++e) {
        T& p = params_[i][e];
        T d = static_cast<T>(grads[i].get_double(static_cast<int64_t>(e)));
        if (decay_into_gradient) d = d + p * wd;
        if (c_.kind == Kind::Sgd) {
          if (c_.momentum != 0) {
            T& buf = m_[i][e];
            // PyTorch's form: the buffer starts as the gradient itself.
            buf = t == 1 ? d
                         : buf * static_cast<T>(c_.momentum) + d * static_cast<T>(1 - c_.dampening);
            d = c_.nesterov ? d + buf * static_cast<T>(c_.momentum) : buf;
          }
          p = p - d * static_cast<T>(lr);
          continue;
        }
        T& m = m_[i][e];
        T& v = v_[i][e];
        const auto steps = static_cast<double>(t);
        m = m * static_cast<T>(c_.beta1) + d * static_cast<T>(1 - c_.beta1);
        v = v * static_cast<T>(c_.beta2) + (d * d) * static_cast<T>(1 - c_.beta2);
        const T denom = std::sqrt(v) / static_cast<T>(std::sqrt(1 - std::pow(c_.beta2, steps))) +
                        static_cast<T>(c_.epsilon);
        const T base = c_.kind == Kind::AdamW && c_.weight_decay != 0
                           ? p * static_cast<T>(1 - lr * c_.weight_decay)
                           : p;
        p = base - (m / denom) * static_cast<T>(lr / (1 - std::pow(c_.beta1, steps)));
      }
    }
  }

  double param(size_t i, size_t e) const { return static_cast<double>(params_[i][e]); }

 private:
  OptimizerConfig c_;
  std::vector<std::vector<T>> params_, m_, v_;
};

struct NamedConfig {
  std::string name;
  OptimizerConfig config;
};

std::vector<NamedConfig> optimizer_configs() {
  const Schedule constant{.base_lr = 0.05};
  const Schedule step{.kind = ScheduleKind::Step, .base_lr = 0.1, .step_size = 10, .gamma = 0.5};
  const Schedule cosine{
      .kind = ScheduleKind::Cosine, .base_lr = 0.02, .total_steps = 50, .min_lr = 1e-4};
  const Schedule warmup{.kind = ScheduleKind::WarmupCosine,
                        .base_lr = 0.01,
                        .total_steps = 40,
                        .warmup_steps = 8,
                        .min_lr = 0.001};
  return {
      {"sgd", {.kind = Kind::Sgd, .schedule = constant}},
      {"sgd momentum dampening step",
       {.kind = Kind::Sgd, .schedule = step, .momentum = 0.9, .dampening = 0.25}},
      {"sgd nesterov weight decay cosine",
       {.kind = Kind::Sgd,
        .schedule = cosine,
        .momentum = 0.8,
        .nesterov = true,
        .weight_decay = 0.01}},
      {"adam", {.kind = Kind::Adam, .schedule = constant}},
      {"adam weight decay warm-up cosine",
       {.kind = Kind::Adam,
        .schedule = warmup,
        .beta1 = 0.8,
        .beta2 = 0.95,
        .epsilon = 1e-6,
        .weight_decay = 0.05}},
      {"adamw step", {.kind = Kind::AdamW, .schedule = step, .weight_decay = 0.1}},
      {"adamw cosine", {.kind = Kind::AdamW, .schedule = cosine, .weight_decay = 0.01}},
  };
}

const Backend& cpu() {
  static const std::unique_ptr<Backend> backend = make_backend("cpu");
  return *backend;
}

std::vector<Tensor> batch_of(DType dtype, int64_t step) { return gradients(dtype, step); }

// The training step graph run by the reference engine for `steps` steps; returns its states.
std::vector<Tensor> reference_run(const OptimizerConfig& config, DType dtype, int64_t steps) {
  const TrainingProblem problem = linear_problem(dtype);
  const TrainingStepGraph step = build_training_step(problem.forward, problem.loss, config);
  std::vector<Tensor> states = initial_step_states(step, problem.initial_states);
  std::vector<Tensor*> bind;
  bind.reserve(states.size());
  for (Tensor& t : states) bind.push_back(&t);
  for (int64_t t = 1; t <= steps; ++t) {
    std::vector<Tensor> inputs = batch_of(dtype, t);
    inputs.push_back(hyper_parameters(config, t, dtype));
    reference::evaluate(step.graph, inputs, bind);
  }
  return states;
}

BOOST_AUTO_TEST_CASE(each_optimizer_matches_the_written_operation_order_bit_for_bit) {
  for (const NamedConfig& nc : optimizer_configs()) {
    for (const DType dtype : {DType::F32, DType::F64}) {
      BOOST_TEST_CONTEXT(nc.name << " " << dtype_name(dtype)) {
        const TrainingProblem problem = linear_problem(dtype);
        TrainingSession session(problem.forward, problem.loss, problem.initial_states,
                                {.optimizer = nc.config, .threads = 2}, cpu(),
                                DeterminismMode::Strict);
        HandOptimizer<float> hand32(nc.config, problem.initial_states);
        HandOptimizer<double> hand64(nc.config, problem.initial_states);
        for (int64_t t = 1; t <= kSteps; ++t) {
          session.step(batch_of(dtype, t));
          hand32.step(gradients(dtype, t), t);
          hand64.step(gradients(dtype, t), t);
        }
        const std::vector<Tensor> ref = reference_run(nc.config, dtype, kSteps);
        bool moved = false;
        for (size_t i = 0; i < std::size(kShapes); ++i) {
          const Tensor& got = session.state("p" + std::to_string(i));
          BOOST_TEST(got.bit_equal(ref[i]), "the reference engine's p" << i << " differs");
          const Tensor& init = problem.initial_states[i];
          for (int64_t e = 0; e < got.numel(); ++e) {
            const auto ue = static_cast<size_t>(e);
            const double want = dtype == DType::F32 ? hand32.param(i, ue) : hand64.param(i, ue);
            BOOST_TEST(got.get_double(e) == want, "p" << i << "[" << e << "] engine "
                                                      << std::setprecision(17) << got.get_double(e)
                                                      << ", hand " << want);
            moved = moved || got.get_double(e) != init.get_double(e);
          }
        }
        BOOST_TEST(moved);
      }
    }
  }
}

// Clipping by the global norm over both parameters: a small max_norm engages it every step
// (checked against a float64 hand computation), a huge one leaves the run bit-identical to an
// unclipped run (the scale is exactly 1).
BOOST_AUTO_TEST_CASE(clipping_scales_by_the_global_norm) {
  const TrainingProblem problem = linear_problem(DType::F64);
  const OptimizerConfig plain{.kind = Kind::Sgd, .schedule = {.base_lr = 0.1}, .momentum = 0.5};
  OptimizerConfig clipped = plain;
  clipped.clip_norm = 0.5;
  OptimizerConfig loose = plain;
  loose.clip_norm = 1e6;
  TrainingSession a(problem.forward, problem.loss, problem.initial_states, {.optimizer = clipped},
                    cpu(), DeterminismMode::Strict);
  TrainingSession b(problem.forward, problem.loss, problem.initial_states, {.optimizer = plain},
                    cpu(), DeterminismMode::Strict);
  TrainingSession c(problem.forward, problem.loss, problem.initial_states, {.optimizer = loose},
                    cpu(), DeterminismMode::Strict);
  std::vector<Tensor> p = problem.initial_states, buf;
  for (const Tensor& t : p) buf.emplace_back(DType::F64, t.shape());
  for (int64_t t = 1; t <= 20; ++t) {
    const std::vector<Tensor> g = gradients(DType::F64, t);
    a.step(g);
    b.step(g);
    c.step(g);
    double sum_sq = 0;
    for (const Tensor& gi : g) {
      for (int64_t e = 0; e < gi.numel(); ++e) sum_sq += gi.get_double(e) * gi.get_double(e);
    }
    const double scale = std::min(1.0, 0.5 / (std::sqrt(sum_sq) + 1e-6));
    BOOST_TEST(scale < 1.0);
    for (size_t i = 0; i < p.size(); ++i) {
      for (int64_t e = 0; e < p[i].numel(); ++e) {
        const double d = g[i].get_double(e) * scale;
        const double bv = t == 1 ? d : buf[i].get_double(e) * 0.5 + d;
        buf[i].set_double(e, bv);
        p[i].set_double(e, p[i].get_double(e) - bv * 0.1);
      }
    }
  }
  for (size_t i = 0; i < p.size(); ++i) {
    const std::string name = "p" + std::to_string(i);
    for (int64_t e = 0; e < p[i].numel(); ++e) {
      const double want = p[i].get_double(e), got = a.state(name).get_double(e);
      BOOST_TEST(std::abs(got - want) <= 1e-12 * (1 + std::abs(want)),
                 name << "[" << e << "] clipped " << got << ", hand " << want);
    }
    BOOST_TEST(c.state(name).bit_equal(b.state(name)), name << ": a loose clip changed bits");
    BOOST_TEST(!a.state(name).bit_equal(b.state(name)), name << ": clipping changed nothing");
  }
}

BOOST_AUTO_TEST_CASE(schedules_give_the_documented_rates) {
  const Schedule step{.kind = ScheduleKind::Step, .base_lr = 0.1, .step_size = 3, .gamma = 0.5};
  BOOST_TEST(step.learning_rate(1) == 0.1);
  BOOST_TEST(step.learning_rate(3) == 0.1);
  BOOST_TEST(step.learning_rate(4) == 0.05);
  BOOST_TEST(step.learning_rate(7) == 0.025);
  const Schedule cosine{.kind = ScheduleKind::Cosine, .base_lr = 1, .total_steps = 4};
  BOOST_TEST(cosine.learning_rate(1) == 1.0);
  BOOST_TEST(cosine.learning_rate(2) == (1 + std::cos(std::numbers::pi / 4)) / 2);
  BOOST_TEST(std::abs(cosine.learning_rate(3) - 0.5) < 1e-15);
  BOOST_TEST(cosine.learning_rate(5) == 0.0);
  BOOST_TEST(cosine.learning_rate(9) == 0.0);  // held at min_lr after total_steps
  const Schedule warmup{.kind = ScheduleKind::WarmupCosine,
                        .base_lr = 1,
                        .total_steps = 6,
                        .warmup_steps = 2,
                        .min_lr = 0.1};
  BOOST_TEST(warmup.learning_rate(1) == 0.5);
  BOOST_TEST(warmup.learning_rate(2) == 1.0);
  BOOST_TEST(warmup.learning_rate(3) == 0.1 + 0.9 * (1 + std::cos(std::numbers::pi / 4)) / 2);
  BOOST_TEST(warmup.learning_rate(6) == 0.1);
  BOOST_TEST(warmup.learning_rate(60) == 0.1);
  BOOST_TEST(Schedule{.base_lr = 0.3}.learning_rate(1000) == 0.3);
}

// hyper_parameters rounds each entry once from double.
BOOST_AUTO_TEST_CASE(hyper_parameters_are_rounded_once_from_double) {
  const OptimizerConfig adam{
      .kind = Kind::AdamW, .schedule = {.base_lr = 0.003}, .weight_decay = 0.1};
  const Tensor h = hyper_parameters(adam, 3, DType::F32);
  BOOST_TEST(h.shape().str() == "[4]");
  BOOST_TEST(h.get_double(1) ==
             static_cast<double>(static_cast<float>(0.003 / (1 - std::pow(0.9, 3.0)))));
  BOOST_TEST(h.get_double(2) ==
             static_cast<double>(static_cast<float>(std::sqrt(1 - std::pow(0.999, 3.0)))));
  BOOST_TEST(h.get_double(3) == static_cast<double>(static_cast<float>(1 - 0.003 * 0.1)));
  const OptimizerConfig sgd{.kind = Kind::Sgd, .momentum = 0.9, .dampening = 0.1};
  const Tensor first = hyper_parameters(sgd, 1, DType::F64);
  const Tensor later = hyper_parameters(sgd, 2, DType::F64);
  BOOST_TEST(first.get_double(1) == 0.0);
  BOOST_TEST(first.get_double(2) == 1.0);
  BOOST_TEST(later.get_double(1) == 0.9);
  BOOST_TEST(later.get_double(2) == 1 - 0.1);
}

void expect_invalid(const OptimizerConfig& config, const std::string& message) {
  try {
    config.validate();
    BOOST_ERROR("accepted; expected: " << message);
  } catch (const VoltaError& e) {
    BOOST_TEST(error_code_name(e.code()) == error_code_name(ErrorCode::InvalidArgument));
    BOOST_TEST(std::string(e.what()).find(message) != std::string::npos,
               "'" << e.what() << "' does not say '" << message << "'");
  }
}

BOOST_AUTO_TEST_CASE(bad_configurations_are_named) {
  expect_invalid({.kind = Kind::Sgd, .nesterov = true}, "sgd nesterov needs momentum > 0");
  expect_invalid({.kind = Kind::Sgd, .momentum = 0.9, .dampening = 0.5, .nesterov = true},
                 "dampening 0");
  expect_invalid({.kind = Kind::Adam, .beta1 = 1.0}, "adam beta1 1.000000 must be in [0, 1)");
  expect_invalid({.kind = Kind::AdamW, .epsilon = 0}, "adamw epsilon");
  expect_invalid({.kind = Kind::Sgd, .weight_decay = -1}, "weight_decay");
  expect_invalid({.kind = Kind::Sgd, .clip_norm = 0.0}, "clip_norm");
  expect_invalid({.schedule = {.base_lr = -1}}, "base_lr");
  expect_invalid({.schedule = {.kind = ScheduleKind::Step, .step_size = 0}}, "step_size");
  expect_invalid(
      {.schedule = {.kind = ScheduleKind::WarmupCosine, .total_steps = 4, .warmup_steps = 4}},
      "total_steps 4 must exceed warmup_steps 4");
}

}  // namespace
}  // namespace volta::train
