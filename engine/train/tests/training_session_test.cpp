// TrainingSession on the built-in transformer block made trainable: the loss falls, 100 steps give
// identical loss bits (and parameters) at 1, 2, 3, 4 and 8 threads, the plan is one plan whose
// states are updated in place, and bad requests get errors that name what is wrong.

#define BOOST_TEST_MODULE training_session_test
#include "volta/train/training_session.h"

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "volta/model/builtin_models.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta::train {
namespace {

const Backend& cpu() {
  static const std::unique_ptr<Backend> backend = make_backend("cpu");
  return *backend;
}

// Adam with a warm-up cosine schedule and clipping: every part of the step is exercised.
const TrainingOptions kAdam{.optimizer = {.kind = OptimizerConfig::Kind::AdamW,
                                          .schedule = {.kind = Schedule::Kind::WarmupCosine,
                                                       .base_lr = 3e-3,
                                                       .total_steps = 100,
                                                       .warmup_steps = 10,
                                                       .min_lr = 3e-4},
                                          .weight_decay = 0.01,
                                          .clip_norm = 1.0}};

uint32_t bits(float x) {
  uint32_t b = 0;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

struct Run {
  std::vector<uint32_t> loss_bits;
  std::vector<double> losses;
  std::vector<Tensor> parameters;
};

Run train(const TransformerBlockConfig& config, int threads, int steps) {
  const TrainingProblem p = transformer_block_regression(config);
  TrainingOptions options = kAdam;
  options.threads = threads;
  TrainingSession session(p.forward, p.loss, p.initial_states, options, cpu(),
                          DeterminismMode::Strict);
  Run run;
  for (int s = 0; s < steps; ++s) {
    const double loss = session.step(p.batch);
    run.losses.push_back(loss);
    run.loss_bits.push_back(bits(static_cast<float>(loss)));  // an f32 loss: exact
  }
  for (const std::string& name : session.parameter_names()) {
    run.parameters.push_back(session.state(name));
  }
  BOOST_TEST(session.steps_taken() == steps);
  return run;
}

BOOST_AUTO_TEST_CASE(a_hundred_steps_give_the_same_loss_bits_at_every_thread_count) {
  TransformerBlockConfig config = kTransformerBlock;
  config.batch = 2;
  const Run one = train(config, 1, 100);
  BOOST_TEST_MESSAGE("transformer block, AdamW 100 steps: loss " << one.losses.front() << " -> "
                                                                 << one.losses.back());
  BOOST_TEST(one.losses.back() < 0.5 * one.losses.front(), "the loss did not fall");
  for (const int threads : {2, 3, 4, 8}) {
    const Run other = train(config, threads, 100);
    BOOST_TEST(other.loss_bits == one.loss_bits, "loss bits differ at " << threads << " threads");
    for (size_t i = 0; i < one.parameters.size(); ++i) {
      BOOST_TEST(other.parameters[i].bit_equal(one.parameters[i]),
                 "parameter " << i << " differs at " << threads << " threads");
    }
  }
}

// One compiled plan: parameters and moments are states written in place (the plan gives them no
// buffer), and the optimizer's per-step values are an input.
BOOST_AUTO_TEST_CASE(the_session_is_one_plan_with_states_updated_in_place) {
  TransformerBlockConfig config = kTransformerBlock;
  config.batch = 2;
  const TrainingProblem p = transformer_block_regression(config);
  TrainingSession session(p.forward, p.loss, p.initial_states, kAdam, cpu(),
                          DeterminismMode::Strict);
  const Graph& g = session.plan().graph;
  BOOST_TEST(session.parameter_names().size() == p.initial_states.size());
  BOOST_TEST(g.states().size() == 3 * p.initial_states.size());  // parameter, m, v
  BOOST_TEST(g.state_updates().size() == g.states().size());
  BOOST_TEST(g.value(g.inputs().back()).name == "optimizer.hyper");
  BOOST_TEST(g.outputs().size() == 2u);  // the loss and the gradient norm
  const std::vector<std::string> names = session.state_names();
  BOOST_TEST((std::find(names.begin(), names.end(), "adamw.m/ln1.scale") != names.end()));
  const Tensor before = session.state("mlp.up.weight");
  session.step(p.batch);
  BOOST_TEST(!session.state("mlp.up.weight").bit_equal(before));
  BOOST_TEST(session.state("adamw.v/mlp.up.weight").get_double(0) > 0);
}

template <typename F>
void expect_error(F&& f, ErrorCode code, const std::string& message) {
  try {
    f();
    BOOST_ERROR("no error; expected: " << message);
  } catch (const VoltaError& e) {
    BOOST_TEST(error_code_name(e.code()) == error_code_name(code));
    BOOST_TEST(std::string(e.what()).find(message) != std::string::npos,
               "'" << e.what() << "' does not say '" << message << "'");
  }
}

BOOST_AUTO_TEST_CASE(bad_requests_name_what_is_wrong) {
  TransformerBlockConfig config = kTransformerBlock;
  config.batch = 1;
  const TrainingProblem p = transformer_block_regression(config);
  const auto session = [&](const Graph& g, ValueId loss, std::vector<Tensor> states) {
    return std::make_unique<TrainingSession>(g, loss, std::move(states), kAdam, cpu(),
                                             DeterminismMode::Strict);
  };
  // The block's output, not a scalar.
  const ValueId block_out = *p.forward.find_value("residual2");
  expect_error([&] { session(p.forward, block_out, p.initial_states); }, ErrorCode::InvalidArgument,
               "the loss 'residual2' is f32 [1,16,64]; training needs a float value of one "
               "element");
  expect_error([&] { session(p.forward, p.loss, {}); }, ErrorCode::InvalidArgument,
               "the training session got 0 initial states; the forward graph has 16");
  const Graph frozen = transformer_block_graph(config);
  const ValueId frozen_loss = frozen.outputs()[0];
  expect_error([&] { session(frozen, frozen_loss, {}); }, ErrorCode::InvalidArgument,
               "loss 'residual2' is f32 [1,16,64]");
  auto s = session(p.forward, p.loss, p.initial_states);
  expect_error([&] { s->step(std::vector<Tensor>{p.batch[0]}); }, ErrorCode::InvalidArgument,
               "the training step got 1 batch tensors; the forward has 2 inputs");
  expect_error([&] { s->state("nope"); }, ErrorCode::InvalidArgument,
               "the training session has no state 'nope'; it has: ln1.scale, ln1.bias");
  BOOST_TEST(s->steps_taken() == 0);
  // A bad optimizer setting is refused before anything is compiled.
  TrainingOptions bad = kAdam;
  bad.optimizer.beta2 = 1.5;
  expect_error(
      [&] {
        TrainingSession t(p.forward, p.loss, p.initial_states, bad, cpu(), DeterminismMode::Strict);
      },
      ErrorCode::InvalidArgument, "adamw beta2 1.500000 must be in [0, 1)");
}

BOOST_AUTO_TEST_CASE(a_graph_without_trainable_states_is_refused) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{3});
  const ValueId w = g.add_parameter("w", Tensor(DType::F32, Shape{3}));
  const ValueId loss =
      g.add(OpKind::ReduceSum, {g.add(OpKind::Mul, {x, w})}, {{"keepdims", int64_t{0}}});
  g.set_outputs({loss});
  expect_error([&] { TrainingSession s(g, loss, {}, kAdam, cpu(), DeterminismMode::Strict); },
               ErrorCode::InvalidArgument,
               "the loss depends on no trainable state; make the forward's weights states "
               "(Graph::thaw_parameter for a C++-built graph, ImportOptions::trainable for ONNX)");
  // thaw_parameter makes it trainable; a second thaw of the same value is refused.
  Graph h = g;
  const Tensor w0 = h.thaw_parameter(w);
  BOOST_TEST((h.value(w).kind == ValueKind::State));
  expect_error([&] { h.thaw_parameter(w); }, ErrorCode::InvalidArgument,
               "%1 'w' is not a parameter");
  TrainingSession s(h, loss, {w0}, kAdam, cpu(), DeterminismMode::Strict);
  s.step(std::vector<Tensor>{Tensor::from<float>(Shape{3}, {1.0F, -2.0F, 0.5F})});
  BOOST_TEST(s.state("w").get_double(1) > 0);  // d loss / d w = x: w moves against it
}

}  // namespace
}  // namespace volta::train
