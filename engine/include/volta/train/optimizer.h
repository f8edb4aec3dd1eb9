#pragma once
// Optimizers as graph nodes. An optimizer step is a chain of ordinary elementwise nodes appended
// to a training graph: each parameter and moment is a state the step updates in place, and
// the values that change from step to step (the learning rate of the schedule, Adam's bias
// corrections) enter as one small input tensor computed on the host in double and rounded once,
// so one compiled plan serves every step. governance/training-policy.md writes the exact
// operation order of each optimizer down; engine/train/tests check it over many steps.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "volta/ir/graph.h"

namespace volta::train {

// The learning rate at step t (t = 1 for the first step), in double.
struct Schedule {
  enum class Kind : uint8_t {
    Constant,      // base_lr
    Step,          // base_lr * gamma^floor((t - 1) / step_size)
    Cosine,        // min_lr + (base_lr - min_lr) * (1 + cos(pi * min(t - 1, total) / total)) / 2
    WarmupCosine,  // base_lr * t / warmup for t <= warmup, then Cosine over the remaining steps
  };
  Kind kind = Kind::Constant;
  double base_lr = 1e-3;
  int64_t step_size = 1;    // Step
  double gamma = 0.1;       // Step
  int64_t total_steps = 1;  // Cosine, WarmupCosine: the steps the decay spans
  int64_t warmup_steps = 0;
  double min_lr = 0;  // Cosine, WarmupCosine

  // Throws VoltaError(InvalidArgument) naming the field and what it must be.
  void validate() const;
  double learning_rate(int64_t step) const;
};

struct OptimizerConfig {
  enum class Kind : uint8_t { Sgd, Adam, AdamW };
  Kind kind = Kind::Sgd;
  Schedule schedule = {};
  // Sgd.
  double momentum = 0;
  double dampening = 0;
  bool nesterov = false;
  // Adam, AdamW.
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  // Sgd and Adam add weight_decay * p to the gradient; AdamW decays p by (1 - lr * weight_decay).
  double weight_decay = 0;
  // Gradients are scaled by min(1, max_norm / (global norm + 1e-6)) first, when set.
  std::optional<double> clip_norm = {};

  void validate() const;  // VoltaError(InvalidArgument) naming the field
};

std::string optimizer_name(OptimizerConfig::Kind kind);  // "sgd", "adam", "adamw"
// "constant", "step", "cosine", "warmup-cosine"
std::string schedule_name(Schedule::Kind kind);
// The inverses; an unknown name is VoltaError(InvalidArgument) listing the names there are.
OptimizerConfig::Kind parse_optimizer_kind(std::string_view name);
Schedule::Kind parse_schedule_kind(std::string_view name);

// What append_optimizer added to a graph.
struct OptimizerGraph {
  ValueId hyper;                 // the per-step input (hyper_parameters' tensor)
  std::vector<ValueId> moments;  // new states, zero at the start, in order of creation
  // The global L2 norm of the gradients before clipping (a 0-d value; what clipping scales by):
  // sqrt of the sum over parameters, in their order, of ReduceSumSquare. Nothing reads it unless
  // clipping is on or the caller makes it an output; otherwise dead-code elimination drops it.
  ValueId gradient_norm;
};

// Appends the optimizer step for `parameters` (states of `graph`) given their `gradients`
// (values of `graph`, same dtype and shape), sets each parameter's and moment's state update,
// and adds the input "optimizer.hyper". Every parameter must share one float dtype. Moments
// are named "<optimizer>.<moment>/<parameter>", e.g. "adam.m/fc.weight".
OptimizerGraph append_optimizer(Graph& graph, std::span<const ValueId> parameters,
                                std::span<const ValueId> gradients, const OptimizerConfig& config);

// The per-step input for step `step` (1 for the first), in `dtype`: each entry computed in
// double and rounded once.
//   Sgd:          [lr, momentum_t, 1 - dampening_t]   (at step 1: [lr, 0, 1], which starts the
//                                                      momentum buffer at the gradient)
//   Adam, AdamW:  [lr, lr / (1 - beta1^t), sqrt(1 - beta2^t), 1 - lr * weight_decay]
Tensor hyper_parameters(const OptimizerConfig& config, int64_t step, DType dtype);

}  // namespace volta::train
