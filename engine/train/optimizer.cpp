#include "volta/train/optimizer.h"

#include <cmath>
#include <string>
#include <string_view>

#include "volta/error.h"

namespace volta::train {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) fail(ErrorCode::InvalidArgument, what);
}

bool in_unit_interval(double x) { return std::isfinite(x) && x >= 0 && x < 1; }

// Positions in the per-step input (hyper_parameters).
enum SgdHyper : int64_t { kSgdLr, kSgdMomentum, kSgdGradientFactor, kSgdHyperCount };
enum AdamHyper : int64_t { kAdamLr, kAdamStepSize, kAdamBias2Sqrt, kAdamDecay, kAdamHyperCount };

// Builds the step's nodes: scalars are 0-d values that broadcast against any parameter.
class StepBuilder {
 public:
  StepBuilder(Graph& graph, DType dtype, std::string prefix)
      : g_(graph), dtype_(dtype), prefix_(std::move(prefix)) {}

  // A constant, rounded once from double to the parameters' dtype.
  ValueId constant(const std::string& name, double value) {
    Tensor t(dtype_, Shape{});
    t.set_double(0, value);
    return g_.add_parameter(g_.unique_name(prefix_ + "." + name), std::move(t));
  }
  // Entry `index` of the per-step input, as a 0-d value.
  ValueId hyper(ValueId hyper_input, int64_t index, const std::string& name) {
    Tensor i(DType::I64, Shape{});
    i.set_int(0, index);
    const ValueId at = g_.add_parameter(g_.unique_name(prefix_ + ".index." + name), std::move(i));
    return g_.add(OpKind::Gather, {hyper_input, at}, {}, g_.unique_name(prefix_ + "." + name));
  }
  ValueId op(OpKind op, std::vector<ValueId> inputs, const std::string& name) {
    return g_.add(op, std::move(inputs), {}, g_.unique_name(name));
  }

 private:
  Graph& g_;
  DType dtype_;
  std::string prefix_;
};

// sqrt(sum_i sum(g_i^2)), the sum over parameters in their order.
ValueId global_norm(Graph& graph, StepBuilder& b, std::span<const ValueId> gradients) {
  ValueId total = kNoValue;
  for (const ValueId g : gradients) {
    const ValueId ss = graph.add(OpKind::ReduceSumSquare, {g}, {{"keepdims", int64_t{0}}},
                                 graph.unique_name("grad_norm.sumsq/" + graph.value(g).name));
    total = total.valid() ? b.op(OpKind::Add, {total, ss}, "grad_norm.total") : ss;
  }
  return b.op(OpKind::Sqrt, {total}, "grad_norm");
}

// min(1, max_norm / (norm + 1e-6)).
ValueId clip_scale(StepBuilder& b, ValueId norm, double max_norm) {
  const ValueId coef =
      b.op(OpKind::Div,
           {b.constant("max_norm", max_norm),
            b.op(OpKind::Add, {norm, b.constant("norm_epsilon", 1e-6)}, "clip.norm_eps")},
           "clip.coef");
  return b.op(OpKind::Min, {coef, b.constant("one", 1)}, "clip.scale");
}

}  // namespace

std::string optimizer_name(OptimizerConfig::Kind kind) {
  switch (kind) {
    case OptimizerConfig::Kind::Sgd:
      return "sgd";
    case OptimizerConfig::Kind::Adam:
      return "adam";
    case OptimizerConfig::Kind::AdamW:
      return "adamw";
  }
  return "?";
}

OptimizerConfig::Kind parse_optimizer_kind(std::string_view name) {
  std::string known;
  for (const auto kind :
       {OptimizerConfig::Kind::Sgd, OptimizerConfig::Kind::Adam, OptimizerConfig::Kind::AdamW}) {
    if (name == optimizer_name(kind)) return kind;
    known += (known.empty() ? "" : ", ") + optimizer_name(kind);
  }
  fail(ErrorCode::InvalidArgument,
       "unknown optimizer '" + std::string(name) + "'; the optimizers are " + known);
}

void OptimizerConfig::validate() const {
  schedule.validate();
  require(std::isfinite(weight_decay) && weight_decay >= 0,
          "weight_decay " + std::to_string(weight_decay) + " must be finite and >= 0");
  if (clip_norm) {
    require(std::isfinite(*clip_norm) && *clip_norm > 0,
            "clip_norm " + std::to_string(*clip_norm) + " must be finite and > 0");
  }
  if (kind == Kind::Sgd) {
    require(std::isfinite(momentum) && momentum >= 0,
            "sgd momentum " + std::to_string(momentum) + " must be finite and >= 0");
    require(std::isfinite(dampening) && dampening >= 0 && dampening <= 1,
            "sgd dampening " + std::to_string(dampening) + " must be in [0, 1]");
    require(!nesterov || (momentum > 0 && dampening == 0),
            "sgd nesterov needs momentum > 0 and dampening 0 (momentum " +
                std::to_string(momentum) + ", dampening " + std::to_string(dampening) + ")");
    return;
  }
  require(in_unit_interval(beta1),
          optimizer_name(kind) + " beta1 " + std::to_string(beta1) + " must be in [0, 1)");
  require(in_unit_interval(beta2),
          optimizer_name(kind) + " beta2 " + std::to_string(beta2) + " must be in [0, 1)");
  require(std::isfinite(epsilon) && epsilon > 0,
          optimizer_name(kind) + " epsilon " + std::to_string(epsilon) + " must be > 0");
}

Tensor hyper_parameters(const OptimizerConfig& config, int64_t step, DType dtype) {
  const double lr = config.schedule.learning_rate(step);
  if (config.kind == OptimizerConfig::Kind::Sgd) {
    Tensor t(dtype, Shape{kSgdHyperCount});
    t.set_double(kSgdLr, lr);
    // At step 1 the buffer (zero) takes the gradient itself: 0 * buf + 1 * g.
    t.set_double(kSgdMomentum, step == 1 ? 0.0 : config.momentum);
    t.set_double(kSgdGradientFactor, step == 1 ? 1.0 : 1.0 - config.dampening);
    return t;
  }
  const auto t_steps = static_cast<double>(step);
  Tensor t(dtype, Shape{kAdamHyperCount});
  t.set_double(kAdamLr, lr);
  t.set_double(kAdamStepSize, lr / (1.0 - std::pow(config.beta1, t_steps)));
  t.set_double(kAdamBias2Sqrt, std::sqrt(1.0 - std::pow(config.beta2, t_steps)));
  t.set_double(kAdamDecay, 1.0 - lr * config.weight_decay);
  return t;
}

OptimizerGraph append_optimizer(Graph& graph, std::span<const ValueId> parameters,
                                std::span<const ValueId> gradients, const OptimizerConfig& config) {
  config.validate();
  require(!parameters.empty(), "the optimizer has no parameters to update");
  require(parameters.size() == gradients.size(),
          "the optimizer got " + std::to_string(parameters.size()) + " parameters and " +
              std::to_string(gradients.size()) + " gradients");
  const DType dtype = graph.value(parameters[0]).dtype;
  for (size_t i = 0; i < parameters.size(); ++i) {
    const Value& p = graph.value(parameters[i]);
    require(p.kind == ValueKind::State,
            "optimizer parameter '" + p.name + "' is not a state (a trainable value is)");
    require(p.dtype == dtype && kFloatTypes.contains(dtype),
            "optimizer parameter '" + p.name + "' is " + std::string(dtype_name(p.dtype)) +
                "; every parameter must share one float dtype (" + std::string(dtype_name(dtype)) +
                ")");
    const Value& g = graph.value(gradients[i]);
    require(g.dtype == p.dtype && g.shape == p.shape,
            "gradient '" + g.name + "' does not match parameter '" + p.name + "'");
  }

  const std::string name = optimizer_name(config.kind);
  StepBuilder b(graph, dtype, name);
  const bool sgd = config.kind == OptimizerConfig::Kind::Sgd;
  OptimizerGraph out;
  out.hyper = graph.add_input("optimizer.hyper", dtype,
                              Shape{sgd ? int64_t{kSgdHyperCount} : int64_t{kAdamHyperCount}});
  // Adam reads the learning rate only through step_size and decay, computed on the host.
  const ValueId lr = sgd ? b.hyper(out.hyper, kSgdLr, "lr") : kNoValue;
  out.gradient_norm = global_norm(graph, b, gradients);
  const ValueId scale =
      config.clip_norm ? clip_scale(b, out.gradient_norm, *config.clip_norm) : kNoValue;
  const ValueId weight_decay =
      config.weight_decay != 0 ? b.constant("weight_decay", config.weight_decay) : kNoValue;

  // Constants and per-step entries are made once and shared by every parameter's chain.
  struct {
    ValueId momentum_t, gradient_factor, momentum;
  } s{};
  struct {
    ValueId step_size, bias2_sqrt, decay, beta1, one_minus_beta1, beta2, one_minus_beta2, eps;
  } a{};
  if (sgd && config.momentum != 0) {
    s.momentum_t = b.hyper(out.hyper, kSgdMomentum, "momentum_t");
    s.gradient_factor = b.hyper(out.hyper, kSgdGradientFactor, "gradient_factor");
    if (config.nesterov) s.momentum = b.constant("momentum", config.momentum);
  } else if (!sgd) {
    a.step_size = b.hyper(out.hyper, kAdamStepSize, "step_size");
    a.bias2_sqrt = b.hyper(out.hyper, kAdamBias2Sqrt, "bias2_sqrt");
    if (config.kind == OptimizerConfig::Kind::AdamW && weight_decay.valid()) {
      a.decay = b.hyper(out.hyper, kAdamDecay, "decay");
    }
    a.beta1 = b.constant("beta1", config.beta1);
    a.one_minus_beta1 = b.constant("one_minus_beta1", 1.0 - config.beta1);
    a.beta2 = b.constant("beta2", config.beta2);
    a.one_minus_beta2 = b.constant("one_minus_beta2", 1.0 - config.beta2);
    a.eps = b.constant("epsilon", config.epsilon);
  }

  for (size_t i = 0; i < parameters.size(); ++i) {
    const ValueId p = parameters[i];
    const Value pv = graph.value(p);
    // "<optimizer>.<what>/<parameter>", the moments' naming.
    const auto node_name = [&](std::string_view what) {
      std::string n = name;
      n.append(".").append(what).append("/").append(pv.name);
      return n;
    };
    auto moment = [&](const std::string& m) {
      const ValueId v = graph.add_state(node_name(m), dtype, pv.shape);
      out.moments.push_back(v);
      return v;
    };
    ValueId g = gradients[i];
    if (scale.valid()) g = b.op(OpKind::Mul, {g, scale}, "clip.grad/" + pv.name);
    // L2 weight decay joins the gradient (Sgd, Adam); AdamW decays the parameter below.
    if (weight_decay.valid() && config.kind != OptimizerConfig::Kind::AdamW) {
      g = b.op(OpKind::Add, {g, b.op(OpKind::Mul, {p, weight_decay}, node_name("decay"))},
               node_name("grad"));
    }
    ValueId next = kNoValue;
    if (sgd) {
      if (config.momentum != 0) {
        const ValueId buf = moment("momentum");
        const ValueId buf_next =
            b.op(OpKind::Add,
                 {b.op(OpKind::Mul, {buf, s.momentum_t}, node_name("buf_scaled")),
                  b.op(OpKind::Mul, {g, s.gradient_factor}, node_name("grad_scaled"))},
                 node_name("buf_next"));
        graph.set_state_update(buf, buf_next);
        g = config.nesterov
                ? b.op(OpKind::Add,
                       {g, b.op(OpKind::Mul, {buf_next, s.momentum}, node_name("lookahead"))},
                       node_name("nesterov"))
                : buf_next;
      }
      next = b.op(OpKind::Sub, {p, b.op(OpKind::Mul, {g, lr}, node_name("delta"))},
                  node_name("p_next"));
    } else {
      const ValueId m = moment("m");
      const ValueId v = moment("v");
      const ValueId m_next =
          b.op(OpKind::Add,
               {b.op(OpKind::Mul, {m, a.beta1}, node_name("m_scaled")),
                b.op(OpKind::Mul, {g, a.one_minus_beta1}, node_name("g_scaled"))},
               node_name("m_next"));
      const ValueId g2 = b.op(OpKind::Mul, {g, g}, node_name("g2"));
      const ValueId v_next =
          b.op(OpKind::Add,
               {b.op(OpKind::Mul, {v, a.beta2}, node_name("v_scaled")),
                b.op(OpKind::Mul, {g2, a.one_minus_beta2}, node_name("g2_scaled"))},
               node_name("v_next"));
      const ValueId denom =
          b.op(OpKind::Add,
               {b.op(OpKind::Div, {b.op(OpKind::Sqrt, {v_next}, node_name("v_sqrt")), a.bias2_sqrt},
                     node_name("v_hat_sqrt")),
                a.eps},
               node_name("denom"));
      const ValueId base =
          a.decay.valid() ? b.op(OpKind::Mul, {p, a.decay}, node_name("decayed")) : p;
      const ValueId delta = b.op(
          OpKind::Mul, {b.op(OpKind::Div, {m_next, denom}, node_name("direction")), a.step_size},
          node_name("delta"));
      next = b.op(OpKind::Sub, {base, delta}, node_name("p_next"));
      graph.set_state_update(m, m_next);
      graph.set_state_update(v, v_next);
    }
    graph.set_state_update(p, next);
  }
  return out;
}

}  // namespace volta::train
