// Algebraic laws that hold exactly (or within a stated tolerance) on both the CPU engine and
// the reference engine, checked on random shapes and values including specials.

#include <rapidcheck.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

#include "properties_internal.h"
#include "volta/ir/printer.h"

namespace volta::conformance::props {
namespace {

using K = OpKind;
using Ints = std::vector<int64_t>;

Shape small_shape(int min_rank, int max_rank, int64_t max_dim) {
  const int rank = *rc::gen::inRange(min_rank, max_rank + 1);
  Ints dims;
  for (int i = 0; i < rank; ++i) dims.push_back(*rc::gen::inRange<int64_t>(0, max_dim + 1));
  return Shape(dims);
}

// A broadcast partner of `shape`: leading dims dropped, others kept or set to 1.
Shape partner(const Shape& shape) {
  const int drop = *rc::gen::inRange(0, shape.rank() + 1);
  Ints dims(shape.dims().begin() + drop, shape.dims().end());
  for (int64_t& d : dims) {
    if (*rc::gen::inRange(0, 3) == 0) d = 1;
  }
  return Shape(dims);
}

// A numeric dtype the op allows, or bool for ops of bool alone (And, Or, Xor).
DType draw_dtype(OpKind op) {
  const DTypeSet allowed = op_schema(op).type_params.front().allowed;
  std::vector<DType> types;
  for (DType d : {DType::F32, DType::F64, DType::I32, DType::I64}) {
    if (allowed.contains(d)) types.push_back(d);
  }
  if (types.empty() && allowed.contains(DType::Bool)) types.push_back(DType::Bool);
  return types[*rc::gen::inRange<size_t>(0, types.size())];
}

// Values in [-3, 3) (integers in [-20, 20)) with NaN, +/-Inf, +/-0 and subnormals at random
// positions of float tensors.
Tensor draw_values(DType dtype, const Shape& shape, uint64_t stream) {
  const auto seed = *rc::gen::inRange<uint32_t>(0, 1U << 30);
  Tensor t = domain_values(dtype, shape, InputDomain::Any, seed, stream);
  if (!is_floating(dtype) || t.numel() == 0) return t;
  const double specials[] = {std::numeric_limits<double>::quiet_NaN(),
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(),
                             0.0,
                             -0.0,
                             dtype == DType::F32 ? 1e-40 : 1e-310};
  const int count = *rc::gen::inRange(0, 5);
  for (int i = 0; i < count; ++i) {
    const int64_t at = *rc::gen::inRange<int64_t>(0, t.numel());
    t.set_double(at, specials[*rc::gen::inRange(0, 6)]);
  }
  return t;
}

Tensor finite_values(DType dtype, const Shape& shape, uint64_t stream) {
  const auto seed = *rc::gen::inRange<uint32_t>(0, 1U << 30);
  return domain_values(dtype, shape, InputDomain::Any, seed, stream);
}

// Runs `graph` on both engines; every output of each must satisfy `check`, which returns
// "" or what is wrong.
template <typename Check>
void on_both(const Graph& graph, const std::vector<Tensor>& inputs, const std::string& what,
             Check check) {
  for (const bool engine : {true, false}) {
    const std::vector<Tensor> out =
        engine ? run_engine(graph, inputs) : run_reference(graph, inputs);
    const std::string problem = check(out);
    if (!problem.empty()) {
      std::string message = engine ? "engine, " : "reference, ";
      message += what;
      message += ": ";
      message += problem;
      fail_case(message);
    }
  }
}

std::string shapes_str(const std::vector<Tensor>& inputs) {
  std::string s;
  for (const Tensor& t : inputs) {
    s += (s.empty() ? "" : " x ") + std::string(dtype_name(t.dtype())) + t.shape().str();
  }
  return s;
}

// op(a, b) == op(b, a) bitwise (NaN payloads aside). Max and Min keep their first operand on
// ties (numerics policy), so max(+0, -0) and max(-0, +0) differ in sign by design: zeros are
// compared by value for them.
void commutes(OpKind op) {
  const bool ties_keep_first = op == OpKind::Max || op == OpKind::Min;
  const DType dtype = draw_dtype(op);
  Shape a = small_shape(0, 4, 6);
  Shape b = partner(a);
  if (*rc::gen::inRange(0, 2) == 1) std::swap(a, b);
  const std::vector<Tensor> inputs = {draw_values(dtype, a, 0), draw_values(dtype, b, 1)};
  Graph g;
  const ValueId x = g.add_input("a", dtype, a);
  const ValueId y = g.add_input("b", dtype, b);
  g.set_outputs({g.add(op, {x, y}), g.add(op, {y, x})});
  on_both(g, inputs, shapes_str(inputs), [ties_keep_first](const std::vector<Tensor>& out) {
    Tensor swapped = out[1];
    for (int64_t i = 0; ties_keep_first && i < swapped.numel(); ++i) {
      if (is_floating(swapped.dtype()) && swapped.get_double(i) == 0.0 &&
          out[0].get_double(i) == 0.0) {
        swapped.set_double(i, out[0].get_double(i));
      }
    }
    return bitwise_difference(out[0], swapped);
  });
}

// op(x, x) == x bitwise.
void idempotent(OpKind op) {
  const DType dtype = draw_dtype(op);
  const Shape shape = small_shape(0, 4, 6);
  const std::vector<Tensor> inputs = {draw_values(dtype, shape, 0)};
  Graph g;
  const ValueId x = g.add_input("x", dtype, shape);
  g.set_outputs({g.add(op, {x, x})});
  on_both(g, inputs, shapes_str(inputs),
          [&](const std::vector<Tensor>& out) { return bitwise_difference(out[0], inputs[0]); });
}

void neg_neg_is_identity() {
  const DType dtype = draw_dtype(K::Neg);
  const Shape shape = small_shape(0, 4, 6);
  const std::vector<Tensor> inputs = {draw_values(dtype, shape, 0)};
  Graph g;
  const ValueId x = g.add_input("x", dtype, shape);
  g.set_outputs({g.add(K::Neg, {g.add(K::Neg, {x})})});
  on_both(g, inputs, shapes_str(inputs),
          [&](const std::vector<Tensor>& out) { return bitwise_difference(out[0], inputs[0]); });
}

void abs_is_nonnegative() {
  const DType dtype = draw_dtype(K::Abs);
  const Shape shape = small_shape(0, 4, 6);
  const std::vector<Tensor> inputs = {draw_values(dtype, shape, 0)};
  Graph g;
  g.set_outputs({g.add(K::Abs, {g.add_input("x", dtype, shape)})});
  on_both(g, inputs, shapes_str(inputs), [&](const std::vector<Tensor>& out) -> std::string {
    for (int64_t i = 0; i < out[0].numel(); ++i) {
      const double v = out[0].get_double(i);
      const double in = inputs[0].get_double(i);
      if ((!std::isnan(v) && std::signbit(v)) || std::isnan(v) != std::isnan(in)) {
        return "index " + std::to_string(i) + ": Abs(" + std::to_string(in) +
               ") = " + std::to_string(v);
      }
    }
    return "";
  });
}

// An elementwise law: `holds(in, out)` for every element of op(x) (x, y the same tensor for
// binary ops), on random shapes and values with specials.
template <typename Holds>
void elementwise_law(OpKind op, bool binary, Holds holds) {
  const DType dtype = draw_dtype(op);
  const Shape shape = small_shape(0, 4, 6);
  const std::vector<Tensor> inputs = {draw_values(dtype, shape, 0)};
  Graph g;
  const ValueId x = g.add_input("x", dtype, shape);
  g.set_outputs({binary ? g.add(op, {x, x}) : g.add(op, {x})});
  on_both(g, inputs, shapes_str(inputs), [&](const std::vector<Tensor>& out) -> std::string {
    for (int64_t i = 0; i < out[0].numel(); ++i) {
      const double in = inputs[0].get_double(i);
      const double v = out[0].get_double(i);
      if (!holds(in, v)) {
        std::ostringstream os;
        os.precision(17);
        os << "index " << i << ": " << op_name(op) << "(" << in << ") = " << v;
        return os.str();
      }
    }
    return "";
  });
}

bool nan_or(double v, bool ok) { return std::isnan(v) || ok; }

std::vector<int64_t> random_perm(int rank) {
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  std::iota(perm.begin(), perm.end(), 0);
  for (int i = rank - 1; i > 0; --i) {
    std::swap(perm[static_cast<size_t>(i)], perm[*rc::gen::inRange<size_t>(0, i + 1)]);
  }
  return perm;
}

void transpose_inverse_is_identity() {
  const DType dtype = draw_dtype(K::Transpose);
  const Shape shape = small_shape(0, 5, 7);
  const Ints perm = random_perm(shape.rank());
  Ints inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = int64_t(i);
  const std::vector<Tensor> inputs = {draw_values(dtype, shape, 0)};
  Graph g;
  const ValueId x = g.add_input("x", dtype, shape);
  const ValueId t = g.add(K::Transpose, {x}, {{"perm", perm}});
  g.set_outputs({g.add(K::Transpose, {t}, {{"perm", inverse}})});
  on_both(g, inputs, shapes_str(inputs) + " perm " + attr_value_str(perm),
          [&](const std::vector<Tensor>& out) { return bitwise_difference(out[0], inputs[0]); });
}

void reshape_round_trip() {
  const DType dtype = draw_dtype(K::Reshape);
  const Shape shape = small_shape(0, 4, 6);
  // Through a rank-2 view whose first dim divides the element count, then back.
  const int64_t n = shape.numel();
  Ints mid = {n, 1};
  if (n > 0) {
    const int64_t d = *rc::gen::inRange<int64_t>(1, n + 1);
    if (n % d == 0) mid = {d, n / d};
  }
  const std::vector<Tensor> inputs = {draw_values(dtype, shape, 0)};
  Graph g;
  const ValueId x = g.add_input("x", dtype, shape);
  const ValueId r = g.add(K::Reshape, {x}, {{"shape", mid}, {"allowzero", int64_t{1}}});
  g.set_outputs({g.add(K::Reshape, {r}, {{"shape", shape.dims()}, {"allowzero", int64_t{1}}})});
  on_both(g, inputs, shapes_str(inputs) + " via " + attr_value_str(mid),
          [&](const std::vector<Tensor>& out) { return bitwise_difference(out[0], inputs[0]); });
}

void concat_split_is_identity() {
  const DType dtype = draw_dtype(K::Concat);
  const Shape base = small_shape(1, 4, 5);
  const int axis = *rc::gen::inRange(0, base.rank());
  const int parts = *rc::gen::inRange(1, 4);
  std::vector<Tensor> inputs;
  Ints sizes;
  Graph g;
  std::vector<ValueId> ids;
  for (int i = 0; i < parts; ++i) {
    Shape s = base;
    s[axis] = *rc::gen::inRange<int64_t>(0, 6);
    sizes.push_back(s[axis]);
    inputs.push_back(draw_values(dtype, s, static_cast<uint64_t>(i)));
    ids.push_back(g.add_input("x" + std::to_string(i), dtype, s));
  }
  const ValueId c = g.add(K::Concat, ids, {{"axis", int64_t{axis}}});
  g.set_outputs(
      g.add_node(K::Split, {c}, {{"axis", int64_t{axis}}, {"split", sizes}}, "split", parts));
  on_both(g, inputs, shapes_str(inputs) + " axis " + std::to_string(axis),
          [&](const std::vector<Tensor>& out) -> std::string {
            for (size_t i = 0; i < out.size(); ++i) {
              const std::string d = bitwise_difference(out[i], inputs[i]);
              if (!d.empty()) return "part " + std::to_string(i) + " " + d;
            }
            return "";
          });
}

// Rows of Softmax over the last axis sum to 1 for finite inputs, large magnitudes included.
void softmax_rows_sum_to_one() {
  const DType dtype = *rc::gen::element(DType::F32, DType::F64);
  const int64_t rows = *rc::gen::inRange<int64_t>(1, 5);
  const int64_t n = *rc::gen::element<int64_t>(1, 2, 7, 8, 33, 4095, 4096, 4097);
  const double scale = *rc::gen::element(1.0, 100.0, 1e4, 1e30);
  Tensor x = finite_values(dtype, Shape{rows, n}, 0);
  for (int64_t i = 0; i < x.numel(); ++i) x.set_double(i, x.get_double(i) * scale);
  Graph g;
  g.set_outputs({g.add(K::Softmax, {g.add_input("x", dtype, x.shape())}, {{"axis", int64_t{-1}}})});
  const double tol = dtype == DType::F32 ? 1e-5 : 1e-12;
  on_both(g, {x}, shapes_str({x}) + " scale " + std::to_string(scale),
          [&](const std::vector<Tensor>& out) -> std::string {
            for (int64_t r = 0; r < rows; ++r) {
              double sum = 0;
              for (int64_t i = 0; i < n; ++i) sum += out[0].get_double(r * n + i);
              if (!(std::fabs(sum - 1) <= tol)) {
                return "row " + std::to_string(r) + " sums to " + std::to_string(sum);
              }
            }
            return "";
          });
}

// LayerNormalization with scale 1 and bias 0: every row has mean 0 and variance
// v / (v + epsilon), v the row's variance (1 - epsilon / v: just under 1).
double row_variance(const Tensor& x, int64_t row, int64_t n) {
  double mean = 0, var = 0;
  for (int64_t i = 0; i < n; ++i) mean += x.get_double(row * n + i);
  mean /= static_cast<double>(n);
  for (int64_t i = 0; i < n; ++i) {
    const double d = x.get_double(row * n + i) - mean;
    var += d * d;
  }
  return var / static_cast<double>(n);
}

void layer_norm_standardizes() {
  const DType dtype = *rc::gen::element(DType::F32, DType::F64);
  const int64_t rows = *rc::gen::inRange<int64_t>(1, 5);
  const int64_t n = *rc::gen::element<int64_t>(16, 33, 255, 4095, 4097);
  const double scale = *rc::gen::element(1.0, 1e-1, 1e3);
  Tensor x = finite_values(dtype, Shape{rows, n}, 0);
  const double shift = *rc::gen::inRange(-100, 101);
  for (int64_t i = 0; i < x.numel(); ++i) x.set_double(i, x.get_double(i) * scale + shift);
  Tensor one(dtype, Shape{n});
  const Tensor zero(dtype, Shape{n});
  for (int64_t i = 0; i < n; ++i) one.set_double(i, 1.0);
  Graph g;
  const ValueId in = g.add_input("x", dtype, x.shape());
  const ValueId s = g.add_input("scale", dtype, Shape{n});
  const ValueId b = g.add_input("bias", dtype, Shape{n});
  constexpr double kEpsilon = 1e-5;
  g.set_outputs(
      {g.add(K::LayerNormalization, {in, s, b}, {{"axis", int64_t{-1}}, {"epsilon", kEpsilon}})});
  const double tol = dtype == DType::F32 ? 1e-3 : 1e-9;
  on_both(g, {x, one, zero}, shapes_str({x}) + " scale " + std::to_string(scale),
          [&](const std::vector<Tensor>& out) -> std::string {
            for (int64_t r = 0; r < rows; ++r) {
              double mean = 0, var = 0;
              for (int64_t i = 0; i < n; ++i) mean += out[0].get_double(r * n + i);
              mean /= static_cast<double>(n);
              for (int64_t i = 0; i < n; ++i) {
                const double d = out[0].get_double(r * n + i) - mean;
                var += d * d;
              }
              var /= static_cast<double>(n);
              const double v = row_variance(x, r, n);
              const double expected = v / (v + kEpsilon);
              if (!(std::fabs(mean) <= tol && std::fabs(var - expected) <= tol)) {
                return "row " + std::to_string(r) + ": mean " + std::to_string(mean) +
                       ", variance " + std::to_string(var) + " (expected " +
                       std::to_string(expected) + ")";
              }
            }
            return "";
          });
}

}  // namespace

std::vector<Property> algebraic_properties() {
  // The laws a trait states, for every op of the table that has it (OpSchema::traits).
  std::vector<Property> out;
  for (const OpSchema& s : all_op_schemas()) {
    const OpKind op = s.kind;
    if (s.traits.has(OpTrait::Commutative)) {
      out.push_back({op, "commutes-bitwise", [op] { commutes(op); }});
    }
    if (s.traits.has(OpTrait::Idempotent)) {
      out.push_back({op, "self-is-identity", [op] { idempotent(op); }});
    }
  }
  // The laws of one op each.
  std::vector<Property> laws = {
      {K::Neg, "neg-neg-is-identity", neg_neg_is_identity},
      {K::Relu, "nonnegative",
       [] {
         elementwise_law(K::Relu, false, [](double in, double v) {
           return std::isnan(in) == std::isnan(v) && nan_or(v, v >= 0);
         });
       }},
      {K::Sigmoid, "in-unit-interval",
       [] {
         elementwise_law(K::Sigmoid, false, [](double in, double v) {
           return std::isnan(in) == std::isnan(v) && nan_or(v, v >= 0 && v <= 1);
         });
       }},
      {K::Tanh, "in-unit-ball",
       [] {
         elementwise_law(K::Tanh, false, [](double in, double v) {
           return std::isnan(in) == std::isnan(v) && nan_or(v, v >= -1 && v <= 1);
         });
       }},
      {K::IsNaN, "is-nan-exactly",
       [] {
         elementwise_law(K::IsNaN, false,
                         [](double in, double v) { return (v != 0) == std::isnan(in); });
       }},
      {K::Equal, "self-is-not-nan",
       [] {
         elementwise_law(K::Equal, true,
                         [](double in, double v) { return (v != 0) == !std::isnan(in); });
       }},
      {K::Sub, "self-is-positive-zero",
       [] {
         // x - x is +0 for finite x (round to nearest), NaN for NaN and +/-Inf.
         elementwise_law(K::Sub, true, [](double in, double v) {
           return std::isfinite(in) ? v == 0 && !std::signbit(v) : std::isnan(v);
         });
       }},
      {K::Abs, "nonnegative", abs_is_nonnegative},
      {K::Transpose, "inverse-perm-is-identity", transpose_inverse_is_identity},
      {K::Reshape, "round-trip-is-identity", reshape_round_trip},
      {K::Concat, "split-is-identity", concat_split_is_identity},
      {K::Softmax, "rows-sum-to-one", softmax_rows_sum_to_one},
      {K::LayerNormalization, "standardizes-rows", layer_norm_standardizes}};
  for (Property& p : laws) out.push_back(std::move(p));
  return out;
}

}  // namespace volta::conformance::props
