#include "volta/train/training_session.h"

#include <cstddef>
#include <cstring>
#include <string>

#include "volta/autograd/autograd.h"
#include "volta/error.h"
#include "volta/runtime/runtime.h"

namespace volta::train {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) fail(ErrorCode::InvalidArgument, what);
}

// Which values `loss` is computed from (itself included).
std::vector<bool> values_feeding(const Graph& graph, ValueId loss) {
  std::vector<bool> feeds(static_cast<size_t>(graph.num_values()), false);
  feeds[static_cast<size_t>(loss.index)] = true;
  for (int n = graph.num_nodes() - 1; n >= 0; --n) {
    const Node& node = graph.node(n);
    bool used = false;
    for (const ValueId o : node.outputs) {
      used = used || (o.valid() && feeds[static_cast<size_t>(o.index)]);
    }
    if (!used) continue;
    for (const ValueId in : node.inputs) {
      if (in.valid()) feeds[static_cast<size_t>(in.index)] = true;
    }
  }
  return feeds;
}

}  // namespace

TrainingStepGraph build_training_step(const Graph& forward, ValueId loss,
                                      const OptimizerConfig& optimizer) {
  require(forward.has_value(loss),
          "the loss %" + std::to_string(loss.index) + " is not a value of the forward graph");
  const Value& l = forward.value(loss);
  require(kFloatTypes.contains(l.dtype) && l.shape.numel() == 1,
          "the loss '" + l.name + "' is " + std::string(dtype_name(l.dtype)) + " " + l.shape.str() +
              "; training needs a float value of one element");
  TrainingStepGraph out;
  const std::vector<ValueId> updated = state_update_values(forward);
  const std::vector<bool> feeds_loss = values_feeding(forward, loss);
  for (size_t i = 0; i < forward.states().size(); ++i) {
    const ValueId s = forward.states()[i];
    if (!updated[i].valid() && kFloatTypes.contains(forward.value(s).dtype) &&
        feeds_loss[static_cast<size_t>(s.index)]) {
      out.parameters.push_back(s);
    }
  }
  require(!out.parameters.empty(),
          "the loss depends on no trainable state; make the forward's weights states "
          "(Graph::thaw_parameter for a C++-built graph, ImportOptions::trainable for ONNX)");
  out.dtype = forward.value(out.parameters[0]).dtype;
  TrainingGraph t = build_training_graph(forward, loss, out.parameters);
  const OptimizerGraph step = append_optimizer(t.graph, out.parameters, t.gradients, optimizer);
  t.graph.set_outputs({t.loss, step.gradient_norm});
  out.graph = std::move(t.graph);
  return out;
}

std::vector<Tensor> initial_step_states(const TrainingStepGraph& step,
                                        std::vector<Tensor> forward_states) {
  std::vector<Tensor> states = std::move(forward_states);
  for (size_t i = states.size(); i < step.graph.states().size(); ++i) {
    const Value& m = step.graph.value(step.graph.states()[i]);
    states.emplace_back(m.dtype, m.shape);
  }
  return states;
}

TrainingSession::TrainingSession(const Graph& forward, ValueId loss,
                                 std::vector<Tensor> initial_states, const TrainingOptions& options,
                                 const Backend& backend, DeterminismMode mode)
    : backend_(backend), optimizer_(options.optimizer) {
  require(initial_states.size() == forward.states().size(),
          "the training session got " + std::to_string(initial_states.size()) +
              " initial states; the forward graph has " + std::to_string(forward.states().size()));
  forward_states_ = forward.states().size();
  TrainingStepGraph built = build_training_step(forward, loss, optimizer_);
  for (const ValueId p : built.parameters) parameter_names_.push_back(forward.value(p).name);
  dtype_ = built.dtype;
  states_ = initial_step_states(built, std::move(initial_states));
  check_graph_states(built.graph, [&] {
    std::vector<Tensor*> b;
    for (Tensor& t : states_) b.push_back(&t);
    return b;
  }());
  plan_ = compile(std::move(built.graph), backend_, mode);
  ctx_ = backend_.make_context({.threads = options.threads});
  for (Tensor& t : states_) bindings_.push_back(&t);
}

TrainingSession::~TrainingSession() = default;

double TrainingSession::step(std::span<const Tensor> batch) {
  const size_t batch_inputs = plan_.graph.inputs().size() - 1;  // the last is optimizer.hyper
  require(batch.size() == batch_inputs, "the training step got " + std::to_string(batch.size()) +
                                            " batch tensors; the forward has " +
                                            std::to_string(batch_inputs) + " inputs");
  std::vector<Tensor> inputs(batch.begin(), batch.end());
  inputs.push_back(hyper_parameters(optimizer_, steps_ + 1, dtype_));
  const std::vector<Tensor> outputs = execute(plan_, backend_, *ctx_, inputs, bindings_);
  ++steps_;
  gradient_norm_ = outputs.at(1).get_double(0);
  return outputs.at(0).get_double(0);
}

void TrainingSession::restore(std::string_view name, const Tensor& value) {
  const std::span<const ValueId> ids = plan_.graph.states();
  for (size_t i = 0; i < ids.size(); ++i) {
    const Value& v = plan_.graph.value(ids[i]);
    if (v.name != name) continue;
    require(value.dtype() == v.dtype && value.shape() == v.shape,
            "state '" + v.name + "' is " + std::string(dtype_name(v.dtype)) + " " + v.shape.str() +
                "; the value to restore is " + std::string(dtype_name(value.dtype())) + " " +
                value.shape().str());
    // In place: the plan's bindings point at states_.
    std::memcpy(states_[i].data(), value.data(), value.nbytes());
    return;
  }
  state(name);  // throws, naming the states there are
}

void TrainingSession::resume_at(int64_t steps_taken) {
  require(steps_taken >= 0,
          "a session resumes at steps taken >= 0, not " + std::to_string(steps_taken));
  steps_ = steps_taken;
}

const Tensor& TrainingSession::state(std::string_view name) const {
  const std::span<const ValueId> ids = plan_.graph.states();
  for (size_t i = 0; i < ids.size(); ++i) {
    if (plan_.graph.value(ids[i]).name == name) return states_[i];
  }
  std::string known;
  for (const std::string& n : state_names()) known += (known.empty() ? "" : ", ") + n;
  fail(ErrorCode::InvalidArgument,
       "the training session has no state '" + std::string(name) + "'; it has: " + known);
}

std::vector<std::string> TrainingSession::state_names() const {
  std::vector<std::string> names;
  for (const ValueId id : plan_.graph.states()) names.push_back(plan_.graph.value(id).name);
  return names;
}

std::vector<std::string> TrainingSession::parameter_names() const { return parameter_names_; }

std::vector<std::string> TrainingSession::optimizer_state_names() const {
  std::vector<std::string> names = state_names();
  names.erase(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(forward_states_));
  return names;
}

}  // namespace volta::train
