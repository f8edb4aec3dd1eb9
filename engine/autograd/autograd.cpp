#include "volta/autograd/autograd.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "vjp.h"
#include "volta/autograd/planted_wrong_vjp.h"
#include "volta/ir/verify.h"

namespace volta {
namespace autograd {

// `stem` itself when no value has that name yet, else the graph's numbered variant of it.
std::string fresh_name(const Graph& g, const std::string& stem) {
  return g.find_value(stem) ? g.unique_name(stem) : stem;
}

VjpBuilder::VjpBuilder(Graph& graph, const Node& node, std::vector<ValueId> output_grads,
                       std::vector<char> wanted)
    : graph_(graph),
      node_(node),
      output_grads_(std::move(output_grads)),
      wanted_(std::move(wanted)),
      input_grads_(node.inputs.size(), kNoValue) {}

void VjpBuilder::set(int i, ValueId gradient) {
  const Value& in = graph_.value(input(i));
  const Value& g = graph_.value(gradient);
  if (g.dtype != in.dtype || g.shape != in.shape) {
    throw std::logic_error("VJP of " + std::string(op_name(node_.op)) + " input " +
                           std::to_string(i) + " at node '" + node_.name + "' gives " +
                           std::string(dtype_name(g.dtype)) + g.shape.str() + " for a " +
                           std::string(dtype_name(in.dtype)) + in.shape.str() + " input");
  }
  input_grads_.at(static_cast<size_t>(i)) = gradient;
}

namespace {

// The backward's reshapes name exact shapes, taken from values that may be empty: a 0 is an
// empty axis, never ONNX's "copy this dim" (allowzero = 0, the forward default).
Attributes exact_shapes(OpKind op, Attributes attrs) {
  if (op == OpKind::Reshape) attrs.try_emplace("allowzero", int64_t{1});
  return attrs;
}

}  // namespace

ValueId VjpBuilder::add(OpKind op, std::vector<ValueId> inputs, Attributes attrs) {
  const std::string name =
      fresh_name(graph_, "grad/" + node_.name + "/" + std::to_string(added_++));
  return graph_.add(op, std::move(inputs), exact_shapes(op, std::move(attrs)), name);
}

std::vector<ValueId> VjpBuilder::add_outputs(OpKind op, std::vector<ValueId> inputs,
                                             Attributes attrs, int num_outputs) {
  const std::string name =
      fresh_name(graph_, "grad/" + node_.name + "/" + std::to_string(added_++));
  return graph_.add_node(op, std::move(inputs), exact_shapes(op, std::move(attrs)), name,
                         num_outputs);
}

ValueId VjpBuilder::scalar(double v) {
  Tensor t(dtype(), Shape{});
  t.set_double(0, v);
  return constant(std::move(t));
}

ValueId VjpBuilder::constant(Tensor t) {
  return graph_.add_parameter(fresh_name(graph_, "grad/" + node_.name + "/c"), std::move(t));
}

ValueId VjpBuilder::sum_to(ValueId g, const Shape& shape) {
  const Shape from = graph_.value(g).shape;
  if (from == shape) return g;
  // Axes of `from` that broadcasting made: the leading extra ones, and those where `shape`
  // has 1 and `from` does not.
  std::vector<int64_t> axes;
  const int lead = from.rank() - shape.rank();
  for (int a = 0; a < from.rank(); ++a) {
    if (a < lead || (shape[a - lead] == 1 && from[a] != 1)) axes.push_back(a);
  }
  ValueId reduced = g;
  if (!axes.empty()) {
    reduced = add(OpKind::ReduceSum, {g}, {{"axes", axes}, {"keepdims", int64_t{0}}});
  }
  if (graph_.value(reduced).shape == shape) return reduced;
  return add(OpKind::Reshape, {reduced}, {{"shape", shape.dims()}});
}

ValueId VjpBuilder::where(ValueId condition, ValueId g) {
  return add(OpKind::Where, {condition, g, scalar(0.0)});
}

ValueId VjpBuilder::chain(OpKind op, std::vector<ValueId> inputs, Attributes attrs, ValueId output,
                          ValueId output_grad, int input) {
  const VjpEntry& entry = vjp_table()[static_cast<size_t>(op_index(op))];
  if (!has_vjp_rule(op, input)) {
    throw std::logic_error("VJP of " + std::string(op_name(node_.op)) + " at node '" + node_.name +
                           "' chains through " + std::string(op_name(op)) + " input " +
                           std::to_string(input) + ", which has no rule");
  }
  Node part{.op = op,
            .name = node_.name + "/" + std::string(op_name(op)),
            .inputs = std::move(inputs),
            .outputs = {output},
            .attrs = std::move(attrs)};
  std::vector<char> wanted(part.inputs.size(), 0);
  wanted.at(static_cast<size_t>(input)) = 1;
  VjpBuilder inner(graph_, part, {output_grad}, std::move(wanted));
  entry.rule(inner);
  return inner.input_grads().at(static_cast<size_t>(input));
}

namespace {

std::string value_ref(const Graph& g, ValueId v) {
  return "value %" + std::to_string(v.index) + " '" + g.value(v).name + "'";
}

std::string input_ref(const Node& node, int i) {
  const OpSchema& s = op_schema(node.op);
  const size_t spec = std::min(static_cast<size_t>(i), s.inputs.size() - 1);
  return "input " + std::to_string(i) + " (" + std::string(s.inputs[spec].name) + ") of node '" +
         node.name + "' (" + std::string(op_name(node.op)) + ")";
}

Differentiability input_differentiability(OpKind op, int i) {
  const OpSchema& s = op_schema(op);
  if (s.inputs.empty()) return Differentiability::NotDifferentiable;
  const size_t spec = std::min(static_cast<size_t>(i), s.inputs.size() - 1);
  return s.inputs[spec].differentiability;
}

// Whether a gradient can flow from input i of the node to its outputs.
bool flows(const Graph& g, const Node& node, int i) {
  if (input_differentiability(node.op, i) != Differentiability::Differentiable) return false;
  if (!kFloatTypes.contains(g.value(node.inputs[static_cast<size_t>(i)]).dtype)) return false;
  return std::any_of(node.outputs.begin(), node.outputs.end(),
                     [&](ValueId o) { return kFloatTypes.contains(g.value(o).dtype); });
}

// Values reachable from `from` going forward (through every input, or only the inputs a
// gradient flows through).
std::vector<char> forward_reach(const Graph& g, std::span<const ValueId> from, bool gradient_only) {
  std::vector<char> reach(static_cast<size_t>(g.num_values()), 0);
  for (ValueId v : from) reach[static_cast<size_t>(v.index)] = 1;
  for (const Node& node : g.nodes()) {
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId in = node.inputs[i];
      if (!in.valid() || !reach[static_cast<size_t>(in.index)]) continue;
      if (gradient_only && !flows(g, node, static_cast<int>(i))) continue;
      for (ValueId o : node.outputs) reach[static_cast<size_t>(o.index)] = 1;
    }
  }
  return reach;
}

// Values the loss depends on (through every input, or only those a gradient flows through).
std::vector<char> backward_reach(const Graph& g, ValueId loss, bool gradient_only) {
  std::vector<char> reach(static_cast<size_t>(g.num_values()), 0);
  reach[static_cast<size_t>(loss.index)] = 1;
  for (int n = g.num_nodes() - 1; n >= 0; --n) {
    const Node& node = g.node(n);
    const bool live = std::any_of(node.outputs.begin(), node.outputs.end(), [&](ValueId o) {
      return reach[static_cast<size_t>(o.index)] != 0;
    });
    if (!live) continue;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId in = node.inputs[i];
      if (!in.valid()) continue;
      if (gradient_only && !flows(g, node, static_cast<int>(i))) continue;
      reach[static_cast<size_t>(in.index)] = 1;
    }
  }
  return reach;
}

void check_request(const Graph& g, ValueId loss, std::span<const ValueId> trainables) {
  if (!g.has_value(loss) || !kFloatTypes.contains(g.value(loss).dtype)) {
    fail(ErrorCode::InvalidArgument,
         "the loss must be a float value of the forward graph, got " +
             (g.has_value(loss)
                  ? value_ref(g, loss) + " of " + std::string(dtype_name(g.value(loss).dtype))
                  : "value %" + std::to_string(loss.index)));
  }
  for (size_t i = 0; i < trainables.size(); ++i) {
    const ValueId t = trainables[i];
    if (!g.has_value(t)) {
      fail(ErrorCode::InvalidArgument, "trainable " + std::to_string(i) + " is value %" +
                                           std::to_string(t.index) + ", not in the graph");
    }
    const Value& v = g.value(t);
    const bool leaf =
        v.kind == ValueKind::Input || v.kind == ValueKind::Parameter || v.kind == ValueKind::State;
    if (!leaf || !kFloatTypes.contains(v.dtype)) {
      fail(ErrorCode::InvalidArgument,
           "trainable " + value_ref(g, t) +
               " must be a float graph input, parameter or state (supported: f32, f64)");
    }
    if (std::count(trainables.begin(), trainables.end(), t) > 1) {
      fail(ErrorCode::InvalidArgument, "trainable " + value_ref(g, t) + " is given twice");
    }
  }
}

// Why no gradient reaches trainable `t`: the loss does not depend on it, or the first node
// (in program order) whose input blocks every path.
[[noreturn]] void fail_unreachable(const Graph& g, ValueId t, ValueId loss) {
  const std::vector<char> from_t = forward_reach(g, std::span(&t, 1), false);
  if (!from_t[static_cast<size_t>(loss.index)]) {
    fail(ErrorCode::InvalidArgument,
         "the loss " + value_ref(g, loss) + " does not depend on trainable " + value_ref(g, t));
  }
  const std::vector<char> to_loss = backward_reach(g, loss, false);
  const std::vector<char> gradient_from_t = forward_reach(g, std::span(&t, 1), true);
  for (const Node& node : g.nodes()) {
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId in = node.inputs[i];
      if (!in.valid() || !gradient_from_t[static_cast<size_t>(in.index)]) continue;
      const bool feeds_loss = std::any_of(node.outputs.begin(), node.outputs.end(), [&](ValueId o) {
        return to_loss[static_cast<size_t>(o.index)] != 0;
      });
      if (feeds_loss && !flows(g, node, static_cast<int>(i))) {
        const Differentiability d = input_differentiability(node.op, static_cast<int>(i));
        const std::string why =
            d == Differentiability::NotDifferentiable
                ? "which the op table marks not differentiable"
            : d == Differentiability::IntegerIndex ? "which is an integer index"
            : !kFloatTypes.contains(g.value(in).dtype)
                ? "which holds " + std::string(dtype_name(g.value(in).dtype)) + " values"
                : "whose outputs are not float";
        fail(ErrorCode::InvalidArgument, "no gradient reaches trainable " + value_ref(g, t) +
                                             ": every path to the loss crosses " +
                                             input_ref(node, static_cast<int>(i)) + ", " + why);
      }
    }
  }
  fail(ErrorCode::InvalidArgument, "no gradient reaches trainable " + value_ref(g, t));
}

// A gradient contribution to a value: from the node that consumes it, at that input.
struct Contribution {
  int node = 0;
  int input = 0;
  ValueId grad;
};

// The contributions summed in consumer node order (then input order), left to right.
ValueId sum_contributions(Graph& g, std::vector<Contribution> parts, const std::string& name) {
  std::sort(parts.begin(), parts.end(), [](const Contribution& a, const Contribution& b) {
    return std::tie(a.node, a.input) < std::tie(b.node, b.input);
  });
  ValueId total = parts.front().grad;
  for (size_t i = 1; i < parts.size(); ++i) {
    total = g.add(OpKind::Add, {total, parts[i].grad}, {}, fresh_name(g, "grad/" + name + "/sum"));
  }
  return total;
}

}  // namespace

const VjpTable& vjp_table() {
  static const VjpTable table = [] {
    struct Family {
      OpFamily family;
      void (*registrar)(VjpTable&);
    };
    const Family families[] = {{OpFamily::Elementwise, register_elementwise_vjps},
                               {OpFamily::Activation, register_activation_vjps},
                               {OpFamily::Linalg, register_linalg_vjps},
                               {OpFamily::Convolution, register_convolution_vjps},
                               {OpFamily::Normalization, register_normalization_vjps},
                               {OpFamily::Reduction, register_reduction_vjps},
                               {OpFamily::Movement, register_movement_vjps},
                               {OpFamily::Pooling, register_pooling_vjps},
                               {OpFamily::Indexing, register_indexing_vjps},
                               {OpFamily::Loss, register_loss_vjps},
                               {OpFamily::Resampling, register_resampling_vjps}};
    VjpTable t{};
    for (const Family& f : families) {
      VjpTable part{};
      f.registrar(part);
      for (int op = 0; op < kOpCount; ++op) {
        const VjpEntry& e = part[static_cast<size_t>(op)];
        if (e.rule == nullptr) continue;
        const OpSchema& s = op_schema(static_cast<OpKind>(op));
        if (s.family != f.family) {
          throw std::logic_error("VJP rules: " + std::string(s.name) + " (family " +
                                 std::string(op_family_name(s.family)) + ") is registered by vjp_" +
                                 std::string(op_family_name(f.family)) + ".cpp");
        }
        for (size_t i = 0; i < s.inputs.size() && i < 32; ++i) {
          const bool last_variadic = s.inputs[i].variadic;
          if ((e.inputs >> i & 1u) && !last_variadic &&
              s.inputs[i].differentiability != Differentiability::Differentiable) {
            throw std::logic_error(
                "VJP rules: " + std::string(s.name) + " input " + std::to_string(i) + " (" +
                std::string(s.inputs[i].name) + ") is " +
                std::string(differentiability_name(s.inputs[i].differentiability)) +
                " in the op table but has a rule");
          }
        }
        t[static_cast<size_t>(op)] = e;
      }
    }
    return t;
  }();
  return table;
}

namespace {

thread_local std::optional<WrongVjp> planted;

// The planted defect (planted_wrong_vjp.h) on the gradients the rule just set.
void apply_planted_wrong_vjp(VjpBuilder& b, const std::vector<char>& wanted) {
  if (!planted || planted->op != b.node().op) return;
  for (size_t i = 0; i < wanted.size(); ++i) {
    const ValueId g = b.input_grads()[i];
    if (wanted[i] && g.valid()) b.set(static_cast<int>(i), b.neg(g));
  }
}

}  // namespace

PlantedWrongVjp::PlantedWrongVjp(OpKind op) : previous_(planted) { planted = WrongVjp{op}; }
PlantedWrongVjp::~PlantedWrongVjp() { planted = previous_; }
std::optional<WrongVjp> planted_wrong_vjp() { return planted; }

}  // namespace autograd

bool has_vjp_rule(OpKind op, int input) {
  const autograd::VjpEntry& e = autograd::vjp_table()[static_cast<size_t>(op_index(op))];
  if (e.rule == nullptr || input < 0) return false;
  return e.inputs == autograd::kAllInputs || (input < 32 && (e.inputs >> input & 1u));
}

TrainingGraph build_training_graph(const Graph& forward, ValueId loss,
                                   std::span<const ValueId> trainables) {
  using autograd::Contribution;
  verify_graph_or_throw(forward);
  autograd::check_request(forward, loss, trainables);
  const std::vector<char> active_from = autograd::forward_reach(forward, trainables, true);
  const std::vector<char> active_to = autograd::backward_reach(forward, loss, true);
  for (ValueId t : trainables) {
    if (!active_to[static_cast<size_t>(t.index)]) autograd::fail_unreachable(forward, t, loss);
  }
  const auto active = [&](ValueId v) {
    return v.valid() && active_from[static_cast<size_t>(v.index)] &&
           active_to[static_cast<size_t>(v.index)];
  };

  TrainingGraph out{forward, loss, {}};
  Graph& g = out.graph;
  std::vector<std::vector<Contribution>> parts(static_cast<size_t>(forward.num_values()));
  std::vector<ValueId> grads(static_cast<size_t>(forward.num_values()), kNoValue);
  // The seed: ones of the loss's shape.
  Tensor ones(forward.value(loss).dtype, forward.value(loss).shape);
  for (int64_t i = 0; i < ones.numel(); ++i) ones.set_double(i, 1.0);
  grads[static_cast<size_t>(loss.index)] = g.add_parameter(
      autograd::fresh_name(g, "grad/" + forward.value(loss).name + "/seed"), std::move(ones));

  const auto grad_of = [&](ValueId v) -> ValueId {
    ValueId& gv = grads[static_cast<size_t>(v.index)];
    if (!gv.valid() && !parts[static_cast<size_t>(v.index)].empty()) {
      gv = autograd::sum_contributions(g, std::move(parts[static_cast<size_t>(v.index)]),
                                       forward.value(v).name);
    }
    return gv;
  };

  for (int n = forward.num_nodes() - 1; n >= 0; --n) {
    const Node& node = forward.node(n);
    std::vector<char> wanted(node.inputs.size(), 0);
    bool any = false;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      wanted[i] = active(node.inputs[i]) && autograd::flows(forward, node, static_cast<int>(i));
      any = any || wanted[i];
    }
    if (!any) continue;
    std::vector<ValueId> output_grads;
    bool reached = false;
    for (ValueId o : node.outputs) {
      output_grads.push_back(active(o) ? grad_of(o) : kNoValue);
      reached = reached || output_grads.back().valid();
    }
    if (!reached) continue;
    const autograd::VjpEntry& entry = autograd::vjp_table()[static_cast<size_t>(op_index(node.op))];
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (wanted[i] && !has_vjp_rule(node.op, static_cast<int>(i))) {
        fail(ErrorCode::InvalidArgument,
             "no VJP rule yet for " + autograd::input_ref(node, static_cast<int>(i)) +
                 ", which a gradient must cross to reach the trainables");
      }
    }
    autograd::VjpBuilder b(g, node, std::move(output_grads), wanted);
    entry.rule(b);
    autograd::apply_planted_wrong_vjp(b, wanted);
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (!wanted[i]) continue;
      const ValueId gi = b.input_grads()[i];
      if (!gi.valid()) {
        throw std::logic_error("VJP of " + std::string(op_name(node.op)) +
                               " set no gradient for wanted " +
                               autograd::input_ref(node, static_cast<int>(i)));
      }
      parts[static_cast<size_t>(node.inputs[i].index)].push_back({n, static_cast<int>(i), gi});
    }
  }

  std::vector<ValueId> outputs = {loss};
  for (ValueId t : trainables) {
    const ValueId gv = grad_of(t);
    const ValueId named =
        g.add(OpKind::Identity, {gv}, {}, autograd::fresh_name(g, "grad/" + forward.value(t).name));
    out.gradients.push_back(named);
    outputs.push_back(named);
  }
  g.set_outputs(outputs);
  verify_graph_or_throw(g);
  return out;
}

}  // namespace volta
