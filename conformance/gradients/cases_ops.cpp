// The op families: every parity case (conformance/numerics/cases_<family>.cpp) of an op with a
// VJP rule becomes a gradient case, differentiated with respect to each of its float inputs that
// has a rule. A rule that lands gets its op's parity grid (empty, size-1, broadcast, tile and
// chunk edges) without an edit here. The f32 and f64 twins of a grid point are one case (both
// dtypes run on cpu), named by the parity id without its float dtypes. Differentiated inputs
// are redrawn where finite differences are valid (smooth_inputs.h); other inputs (indices,
// conditions, float inputs without a rule) keep the parity case's values.

#include <algorithm>
#include <set>

#include "gradient_cases.h"
#include "smooth_inputs.h"
#include "volta/autograd/autograd.h"
#include "volta/conformance/parity_cases.h"
#include "volta/ir/printer.h"

namespace volta::conformance::gradients {
namespace {

// "Where(shape=[3,5]x[3,5]x[5],dtype=bool/f32)" -> "Where(shape=[3,5]x[3,5]x[5],dtype=bool)".
std::string without_float_dtypes(const std::string& id) {
  const size_t at = id.rfind("dtype=");
  if (at == std::string::npos || id.back() != ')') return id;
  const std::string list = id.substr(at + 6, id.size() - at - 7);
  std::string kept;
  size_t from = 0;
  while (from <= list.size()) {
    const size_t slash = std::min(list.find('/', from), list.size());
    const std::string name = list.substr(from, slash - from);
    const std::optional<DType> d = parse_dtype(name);
    if (!d || !kFloatTypes.contains(*d)) kept += (kept.empty() ? "" : "/") + name;
    from = slash + 1;
  }
  std::string head = id.substr(0, at);  // "Op(...," or "Op("
  if (!kept.empty()) return head + "dtype=" + kept + ")";
  if (head.back() == ',') head.pop_back();
  return head + ")";
}

double f32_representable(double v) { return static_cast<double>(static_cast<float>(v)); }

bool gradient_flows(const Graph& g, const Node& node, int i) {
  const ValueId in = node.inputs[static_cast<size_t>(i)];
  if (!in.valid() || !kFloatTypes.contains(g.value(in).dtype) || !has_vjp_rule(node.op, i))
    return false;
  return std::ranges::any_of(node.outputs,
                             [&](ValueId o) { return kFloatTypes.contains(g.value(o).dtype); });
}

bool has_any_rule(OpKind op) {
  const OpSchema& s = op_schema(op);
  for (size_t i = 0; i < std::max<size_t>(s.inputs.size(), 1); ++i) {
    if (has_vjp_rule(op, static_cast<int>(i))) return true;
  }
  return false;
}

std::optional<OpGradientCase> from_parity(const ParityCase& p) {
  const Node& node = p.graph.node(0);
  OpGradientCase c{without_float_dtypes(p.id),
                   p.op,
                   {},
                   {},
                   node.attrs,
                   static_cast<int>(node.outputs.size()),
                   {}};
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (gradient_flows(p.graph, node, static_cast<int>(i)))
      c.trainable.push_back(static_cast<int>(i));
  }
  if (c.trainable.empty()) return std::nullopt;
  StableHasher h;
  h.text(c.id);
  const std::vector<Tensor> smooth = smooth_values(p.graph, node, c.trainable, h.digest());
  const auto inputs = p.graph.inputs();
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const ValueId in = node.inputs[i];
    if (!in.valid()) {
      c.operands.emplace_back();
      c.values.emplace_back();
      continue;
    }
    const Value& v = p.graph.value(in);
    c.operands.push_back(TypeInfo{v.dtype, v.shape});
    const auto t = std::ranges::find(c.trainable, static_cast<int>(i));
    if (t != c.trainable.end()) {
      c.values.push_back(smooth[static_cast<size_t>(t - c.trainable.begin())]);
      continue;
    }
    const auto at = static_cast<size_t>(std::ranges::find(inputs, in) - inputs.begin());
    Tensor value = p.inputs.at(at);
    if (kFloatTypes.contains(v.dtype)) {
      Tensor f64(DType::F64, value.shape());
      for (int64_t e = 0; e < value.numel(); ++e) {
        f64.set_double(e, f32_representable(value.get_double(e)));
      }
      value = std::move(f64);
    }
    c.values.push_back(std::move(value));
  }
  // Cast rounds to its `to` type, and finite differences of an f32 output measure that rounding:
  // its rule is held to the gradient it documents, the weights cast back to the input's type.
  if (c.op == OpKind::Cast) {
    c.documented = [](const std::vector<Tensor>&, const std::vector<Tensor>& weights) {
      return std::vector<Tensor>{weights.at(0)};
    };
  }
  return c;
}

}  // namespace

void op_family_cases(std::vector<GradientCase>& out) {
  std::set<std::string> seen;
  for (const ParityCase& p : parity_cases()) {
    if (!has_any_rule(p.op)) continue;
    std::optional<OpGradientCase> c = from_parity(p);
    if (!c || !seen.insert(c->id).second) continue;
    out.push_back(
        gradient_case(std::string(op_family_name(op_schema(p.op).family)), std::move(*c)));
  }
}

}  // namespace volta::conformance::gradients
