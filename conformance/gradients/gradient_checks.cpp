#include "gradient_checks.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <sstream>

#include "volta/conformance/gradient_suite.h"
#include "volta/conformance/tolerance.h"
#include "volta/ir/printer.h"
#include "volta/ir/random.h"
#include "volta/ir/verify.h"
#include "volta/reference/reference.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta::conformance::gradients {
namespace {

uint64_t case_seed(const std::string& id) {
  StableHasher h;
  h.text(id);
  return h.digest();
}

Tensor converted(const Tensor& t, DType dtype) {
  Tensor out(dtype, t.shape());
  for (int64_t i = 0; i < t.numel(); ++i) out.set_double(i, t.get_double(i));
  return out;
}

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// The training graph of a (verified) forward, or why there is none: autograd refuses the
// forward (UNSUPPORTED: no rule for this configuration of the op yet), or a rule built an
// invalid graph (FAIL_SHAPE: the rule is wrong).
struct Differentiated {
  std::optional<TrainingGraph> training;
  CaseOutcome refusal;
};

Differentiated differentiate(const Forward& f) {
  verify_graph_or_throw(f.graph);  // a bad forward is the suite's fault: ERROR
  Differentiated d;
  try {
    d.training = build_training_graph(f.graph, f.loss, f.trainables);
  } catch (const VoltaError& e) {
    const bool refused = e.code() == ErrorCode::InvalidArgument;
    d.refusal.outcome = refused ? Outcome::Unsupported : Outcome::FailShape;
    d.refusal.message = (refused ? "autograd refuses the forward: "
                                 : "the VJP rules built an invalid training graph: ") +
                        std::string(e.what());
  }
  return d;
}

// The reference's gradients of the f64 training graph, one per trainable.
struct ReferenceGradients {
  Forward forward;
  std::vector<Tensor> gradients;
  std::optional<CaseOutcome> refusal;
};

ReferenceGradients reference_gradients(const OpGradientCase& c) {
  ReferenceGradients r{build_forward(c, DType::F64), {}, {}};
  const Differentiated d = differentiate(r.forward);
  if (!d.training) {
    r.refusal = d.refusal;
    return r;
  }
  std::vector<Tensor> out = reference::evaluate(d.training->graph, r.forward.inputs);
  r.gradients.assign(std::make_move_iterator(out.begin() + 1), std::make_move_iterator(out.end()));
  return r;
}

double loss_at(const Forward& f, const std::vector<Tensor>& inputs) {
  return reference::evaluate(f.graph, inputs).at(0).get_double(0);
}

// The worst finite-difference disagreement of one case.
struct FdResult {
  double max_abs = 0, max_rel = 0;
  std::string failure;  // the first element or direction out of bounds, in words
  int64_t probes = 0;
};

void judge(FdResult& r, double g, double fd, const std::string& where) {
  const double err = std::abs(g - fd);
  r.max_abs = std::max(r.max_abs, err);
  if (fd != 0) r.max_rel = std::max(r.max_rel, err / std::abs(fd));
  ++r.probes;
  if (r.failure.empty() && !(err <= kFdAbs + kFdRel * std::abs(fd))) {
    r.failure = where + ": gradient " + number(g) + ", finite difference " + number(fd);
  }
}

FdResult finite_differences(const Forward& f, const std::vector<Tensor>& gradients, uint64_t seed) {
  FdResult r;
  for (size_t k = 0; k < gradients.size(); ++k) {
    const auto input = static_cast<size_t>(f.trainable_inputs[k]);
    const Tensor& x = f.inputs[input];
    const std::string name = "input " + std::to_string(input);
    if (x.numel() <= kFullJacobianElements) {
      for (int64_t e = 0; e < x.numel(); ++e) {
        std::vector<Tensor> plus = f.inputs, minus = f.inputs;
        plus[input].set_double(e, x.get_double(e) + kFdStep);
        minus[input].set_double(e, x.get_double(e) - kFdStep);
        const double fd = (loss_at(f, plus) - loss_at(f, minus)) / (2 * kFdStep);
        judge(r, gradients[k].get_double(e), fd, name + " element " + std::to_string(e));
      }
      continue;
    }
    for (int d = 0; d < kDirections; ++d) {
      const Tensor dir = random_tensor(DType::F64, x.shape(), seed, -1.0, 1.0, 500 + 10 * k + d);
      std::vector<Tensor> plus = f.inputs, minus = f.inputs;
      double dot = 0;
      for (int64_t e = 0; e < x.numel(); ++e) {
        plus[input].set_double(e, x.get_double(e) + kFdStep * dir.get_double(e));
        minus[input].set_double(e, x.get_double(e) - kFdStep * dir.get_double(e));
        dot += gradients[k].get_double(e) * dir.get_double(e);
      }
      const double fd = (loss_at(f, plus) - loss_at(f, minus)) / (2 * kFdStep);
      judge(r, dot, fd, name + " direction " + std::to_string(d));
    }
  }
  return r;
}

// A float output narrower than f64 rounds the forward: differences of it at step 1e-6 measure
// the rounding, not the derivative.
std::optional<std::string> not_differentiable_numerically(const Forward& f) {
  for (ValueId o : f.graph.node(0).outputs) {
    const DType d = f.graph.value(o).dtype;
    if (kFloatTypes.contains(d) && d != DType::F64) {
      return "the float64 forward has a " + std::string(dtype_name(d)) +
             " output, which finite differences at step 1e-6 cannot resolve";
    }
  }
  return std::nullopt;
}

CaseOutcome check_documented(const OpGradientCase& c, const ReferenceGradients& ref) {
  CaseOutcome out;
  const std::vector<Tensor> want = c.documented(ref.forward.inputs, ref.forward.weights);
  const Tolerance tol{1e-12, 1e-12, 0, "the documented subgradient, up to rounding", "documented"};
  out.outcome = Outcome::Pass;
  out.max_abs = out.max_rel = 0.0;
  out.tolerance_key = tol.key;
  out.tolerance = tol.str();
  for (size_t k = 0; k < want.size(); ++k) {
    const Comparison cmp = compare(ref.gradients.at(k), want[k], tol);
    out.max_abs = std::max(*out.max_abs, cmp.max_abs);
    out.max_rel = std::max(*out.max_rel, cmp.max_rel);
    if (!cmp.passed() && out.outcome == Outcome::Pass) {
      out.outcome = outcome_of(cmp.mismatch);
      out.message =
          "gradient " + std::to_string(k) + " against its documented subgradient: " + cmp.detail;
    }
  }
  return out;
}

std::vector<Tensor> run_engine(const ExecutionPlan& plan, const Backend& cpu,
                               const std::vector<Tensor>& inputs, int threads, std::byte poison) {
  const std::unique_ptr<ExecutionContext> ctx = cpu.make_context({.threads = threads});
  ctx->set_poison(poison);
  return execute(plan, cpu, *ctx, inputs);
}

}  // namespace

Forward build_forward(const OpGradientCase& c, DType float_type) {
  Forward f;
  std::vector<ValueId> ids;
  for (size_t i = 0; i < c.operands.size(); ++i) {
    if (!c.operands[i]) {
      ids.push_back(kNoValue);
      continue;
    }
    const bool floating = kFloatTypes.contains(c.operands[i]->dtype);
    const DType dtype = floating ? float_type : c.operands[i]->dtype;
    ids.push_back(f.graph.add_input("in" + std::to_string(i), dtype, c.operands[i]->shape));
    const auto at = static_cast<int>(f.inputs.size());
    f.inputs.push_back(floating ? converted(*c.values[i], dtype) : *c.values[i]);
    if (std::ranges::find(c.trainable, static_cast<int>(i)) != c.trainable.end()) {
      f.trainables.push_back(ids.back());
      f.trainable_inputs.push_back(at);
    }
  }
  const std::vector<ValueId> ys = f.graph.add_node(c.op, ids, c.attrs, "op", c.num_outputs);
  const uint64_t seed = case_seed(c.id);
  ValueId loss = kNoValue;
  for (size_t k = 0; k < ys.size(); ++k) {
    const Value& y = f.graph.value(ys[k]);
    if (!kFloatTypes.contains(y.dtype)) continue;
    const std::string tag = std::to_string(k);
    f.weights.push_back(
        converted(random_tensor(DType::F32, y.shape, seed, -1.0, 1.0, 100 + k), DType::F64));
    const ValueId r = f.graph.add_parameter("r" + tag, converted(f.weights.back(), y.dtype));
    // A non-finite output (a NaN grid point, a resize weight sum of 0) has no derivative:
    // it weighs 0, so the loss and its finite differences stay finite.
    Tensor zero(y.dtype, Shape{});
    const ValueId non_finite = f.graph.add(OpKind::Or,
                                           {f.graph.add(OpKind::IsNaN, {ys[k]}, {}, "nan" + tag),
                                            f.graph.add(OpKind::IsInf, {ys[k]}, {}, "inf" + tag)},
                                           {}, "non_finite" + tag);
    const ValueId finite = f.graph.add(
        OpKind::Where, {non_finite, f.graph.add_parameter("zero" + tag, std::move(zero)), ys[k]},
        {}, "finite" + tag);
    const ValueId weighted = f.graph.add(OpKind::Mul, {finite, r}, {}, "weighted" + tag);
    ValueId part =
        f.graph.add(OpKind::ReduceSum, {weighted}, {{"keepdims", int64_t{0}}}, "sum" + tag);
    if (!loss.valid()) {
      loss = part;
      continue;
    }
    const DType loss_type = f.graph.value(loss).dtype;
    if (f.graph.value(part).dtype != loss_type) {
      part = f.graph.add(OpKind::Cast, {part}, {{"to", std::string(dtype_name(loss_type))}},
                         "cast" + tag);
    }
    loss = f.graph.add(OpKind::Add, {loss, part}, {}, "loss" + tag);
  }
  f.loss = loss;
  f.graph.set_outputs({loss});
  return f;
}

CaseOutcome check_reference(const OpGradientCase& c) {
  const ReferenceGradients ref = reference_gradients(c);
  if (ref.refusal) return *ref.refusal;
  if (c.documented) return check_documented(c, ref);
  CaseOutcome out;
  if (const std::optional<std::string> why = not_differentiable_numerically(ref.forward)) {
    out.outcome = Outcome::Skipped;
    out.message = *why;
    return out;
  }
  const FdResult fd = finite_differences(ref.forward, ref.gradients, case_seed(c.id));
  out.max_abs = fd.max_abs;
  out.max_rel = fd.max_rel;
  out.tolerance_key = "finite-differences";
  out.tolerance = "abs=" + number(kFdAbs) + " rel=" + number(kFdRel) + " step=" + number(kFdStep);
  out.outcome = fd.failure.empty() ? Outcome::Pass : Outcome::FailNumeric;
  out.message =
      fd.failure.empty()
          ? std::to_string(fd.probes) + " finite-difference probe(s) agree"
          : "the float64 gradient disagrees with finite differences of the forward: " + fd.failure;
  return out;
}

CaseOutcome check_engine(const OpGradientCase& c) {
  const ReferenceGradients ref = reference_gradients(c);
  if (ref.refusal) return *ref.refusal;
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  const OpFamily family = op_schema(c.op).family;
  CaseOutcome out;
  out.outcome = Outcome::Pass;
  out.max_abs = out.max_rel = out.max_ulp = 0.0;
  StableHasher hash;
  for (const DType dtype : {DType::F32, DType::F64}) {
    const std::string tag(dtype_name(dtype));
    const Forward f = build_forward(c, dtype);
    const Differentiated d = differentiate(f);
    if (!d.training) return d.refusal;
    ExecutionPlan plan;
    try {
      plan = compile(d.training->graph, *cpu, DeterminismMode::Strict);
    } catch (const VoltaError& e) {
      out.outcome = e.code() == ErrorCode::MissingKernel ? Outcome::Unsupported : Outcome::Error;
      out.message = tag + " training graph: " + e.what();
      return out;
    }
    const std::vector<Tensor> one = run_engine(plan, *cpu, f.inputs, 1, std::byte{0xff});
    for (const int threads : kGradientThreadCounts) {
      if (threads == 1) continue;
      const std::vector<Tensor> again = run_engine(plan, *cpu, f.inputs, threads, std::byte{0x00});
      for (size_t o = 1; o < one.size(); ++o) {
        if (!again[o].bit_equal(one[o])) {
          out.outcome = Outcome::FailNumeric;
          out.message = tag + " gradient " + std::to_string(o - 1) + " at " +
                        std::to_string(threads) +
                        " threads differs from 1 thread (arena poisoned 0x00 vs 0xff): an "
                        "element depends on the thread count or is left unwritten";
          return out;
        }
      }
    }
    const Tolerance tol = ToleranceTable::builtin().lookup_gradient(family, dtype);
    for (size_t k = 0; k < ref.gradients.size(); ++k) {
      const Tensor& got = one.at(k + 1);
      hash.bytes(got.data(), got.nbytes());
      const Comparison cmp = compare(got, converted(ref.gradients[k], dtype), tol);
      out.max_abs = std::max(*out.max_abs, cmp.max_abs);
      out.max_rel = std::max(*out.max_rel, cmp.max_rel);
      out.max_ulp = std::max(*out.max_ulp, cmp.max_ulp);
      const bool first_failure = !cmp.passed() && out.outcome == Outcome::Pass;
      if (dtype == DType::F32 || first_failure) {
        out.tolerance_key = tol.key;
        out.tolerance = tol.str();
      }
      if (first_failure) {
        out.outcome = outcome_of(cmp.mismatch);
        out.message =
            tag + " gradient " + std::to_string(k) + " against the reference: " + cmp.detail;
      }
    }
  }
  out.output_hash = hash_hex(hash.digest());
  return out;
}

}  // namespace volta::conformance::gradients
