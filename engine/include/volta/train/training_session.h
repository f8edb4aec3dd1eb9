#pragma once
// Training on the single truth path: the forward, its backward (build_training_graph) and the
// optimizer step (append_optimizer) form one graph, compiled once into one plan. Each step is
// one execute of that plan: the parameters and optimizer moments are states the session keeps
// and the plan updates in place; the batch and the step's hyper-parameters are its inputs.
// There is no eager path and no second executor.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "volta/plan/execution_plan.h"
#include "volta/runtime/backend.h"
#include "volta/train/optimizer.h"

namespace volta::train {

// The graph a session compiles: the forward, its backward and the optimizer step. Its inputs are
// the forward's then "optimizer.hyper" (hyper_parameters); its outputs are the loss and the
// global gradient norm (OptimizerGraph::gradient_norm); its
// states are the forward's then the optimizer's moments (zero at the start). The trainable
// parameters are the forward's float states that the loss depends on and that the forward does
// not update itself; any other state (a BatchNormalization's running mean, read only by a
// running-mean output) is bound and left as it is.
struct TrainingStepGraph {
  Graph graph;
  std::vector<ValueId> parameters;  // the trainable states, in forward order
  DType dtype = DType::F32;         // theirs, and the hyper-parameters'
};
// Throws VoltaError(InvalidArgument) for a loss that is not one float element, a loss that
// depends on no trainable state, and whatever build_training_graph and append_optimizer refuse.
TrainingStepGraph build_training_step(const Graph& forward, ValueId loss,
                                      const OptimizerConfig& optimizer);
// The states a step graph binds at the start: `forward_states` (indexed like the forward's
// states), then every optimizer moment at zero.
std::vector<Tensor> initial_step_states(const TrainingStepGraph& step,
                                        std::vector<Tensor> forward_states);

struct TrainingOptions {
  OptimizerConfig optimizer = {};
  int threads = 1;
};

class TrainingSession {
 public:
  // Compiles build_training_step(forward, loss, options.optimizer). Graph::thaw_parameter makes
  // a C++-built graph's weights states; an ONNX import with ImportOptions::trainable makes its
  // float initializers states. `initial_states` holds every forward state's starting value,
  // indexed like forward.states(). Throws VoltaError naming what is wrong (see
  // build_training_step; and a plan the backend cannot run in `mode`).
  TrainingSession(const Graph& forward, ValueId loss, std::vector<Tensor> initial_states,
                  const TrainingOptions& options, const Backend& backend, DeterminismMode mode);
  ~TrainingSession();
  TrainingSession(const TrainingSession&) = delete;
  TrainingSession& operator=(const TrainingSession&) = delete;

  // One optimizer step on `batch` (the forward's inputs, in order): returns the loss at the
  // parameters before the step, then leaves the parameters and moments updated.
  double step(std::span<const Tensor> batch);
  int64_t steps_taken() const { return steps_; }
  // The global L2 norm of the last step's gradients, before any clipping (0 before a step).
  double last_gradient_norm() const { return gradient_norm_; }

  // Resuming a checkpoint: overwrite state `name` (a parameter or an optimizer moment) with
  // `value`, and set the steps taken so the next step is steps_taken + 1 (its learning rate and
  // bias corrections). Throw VoltaError(InvalidArgument) naming an unknown state, a dtype or
  // shape that differs, or a negative count.
  void restore(std::string_view name, const Tensor& value);
  void resume_at(int64_t steps_taken);

  // Every state (trainable parameters, other forward states, optimizer moments) by name.
  // Throws VoltaError(InvalidArgument) naming the states there are for an unknown name.
  const Tensor& state(std::string_view name) const;
  std::vector<std::string> state_names() const;
  std::vector<std::string> parameter_names() const;  // the trainable ones, in forward order
  // The optimizer's moments, in step-graph order: the states past the forward's. A forward
  // state that is no parameter (one the loss does not read) is in neither list.
  std::vector<std::string> optimizer_state_names() const;

  const ExecutionPlan& plan() const { return plan_; }

 private:
  const Backend& backend_;
  OptimizerConfig optimizer_;
  ExecutionPlan plan_;
  std::unique_ptr<ExecutionContext> ctx_;
  std::vector<Tensor> states_;  // indexed like plan_.graph.states()
  std::vector<Tensor*> bindings_;
  std::vector<std::string> parameter_names_;
  DType dtype_ = DType::F32;
  size_t forward_states_ = 0;
  int64_t steps_ = 0;
  double gradient_norm_ = 0;
};

}  // namespace volta::train
