// The `subgradients` family: inputs placed exactly on the non-smooth points of a rule, where
// finite differences are meaningless, held to the subgradient the rule documents
// (engine/autograd/vjp_*.cpp): Relu and Abs at 0 take 0, LeakyRelu at 0 the identity side, Clip
// at its bounds passes the gradient, Max and Min give a tie to the first input, ReduceMax and
// ReduceMin share a tied gradient equally.

#include <cmath>

#include "gradient_cases.h"

namespace volta::conformance::gradients {
namespace {

using K = OpKind;

Tensor vector_of(const std::vector<double>& v, Shape shape) {
  Tensor t(DType::F64, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) t.set_double(static_cast<int64_t>(i), v[i]);
  return t;
}

// A unary op at the given points whose documented derivative is `slope(x)`.
OpGradientCase unary(std::string id, K op, const Attributes& attrs, const std::vector<double>& x,
                     double (*slope)(double, const Attributes&)) {
  const Shape shape{static_cast<int64_t>(x.size())};
  OpGradientCase c{
      std::move(id), op, {TypeInfo{DType::F32, shape}}, {vector_of(x, shape)}, attrs, 1, {0}};
  c.documented = [slope, attrs](const std::vector<Tensor>& in, const std::vector<Tensor>& r) {
    Tensor g(DType::F64, in[0].shape());
    for (int64_t e = 0; e < g.numel(); ++e) {
      g.set_double(e, r[0].get_double(e) * slope(in[0].get_double(e), attrs));
    }
    return std::vector<Tensor>{g};
  };
  return c;
}

// Max or Min of two same-shaped inputs with ties: the first input takes a tied gradient.
OpGradientCase tied_extremum(K op) {
  const Shape shape{6};
  const std::vector<double> a = {1, -0.5, 2, 0.25, -1, 0}, b = {1, 0.5, -2, 0.25, -1.5, 0};
  OpGradientCase c{std::string(op_name(op)) + "(ties,shape=[6]x[6])",
                   op,
                   {TypeInfo{DType::F32, shape}, TypeInfo{DType::F32, shape}},
                   {vector_of(a, shape), vector_of(b, shape)},
                   {},
                   1,
                   {0, 1}};
  const bool max = op == K::Max;
  c.documented = [max](const std::vector<Tensor>& in, const std::vector<Tensor>& r) {
    Tensor ga(DType::F64, in[0].shape()), gb(DType::F64, in[1].shape());
    for (int64_t e = 0; e < ga.numel(); ++e) {
      const double x = in[0].get_double(e), y = in[1].get_double(e);
      const bool first = max ? x >= y : x <= y;
      ga.set_double(e, first ? r[0].get_double(e) : 0.0);
      gb.set_double(e, first ? 0.0 : r[0].get_double(e));
    }
    return std::vector<Tensor>{ga, gb};
  };
  return c;
}

// ReduceMax or ReduceMin over the rows of a [3, 4] input, rows with 1, 2 and 4 tied extremes.
OpGradientCase tied_reduction(K op) {
  const Shape shape{3, 4};
  const double e = op == K::ReduceMax ? 2.0 : -2.0;
  const std::vector<double> x = {e, 0.5, -0.5, 1, e, 0, e, 0.25, e, e, e, e};
  OpGradientCase c{std::string(op_name(op)) + "(axes=[1],keepdims=0,ties,shape=[3,4])",
                   op,
                   {TypeInfo{DType::F32, shape}},
                   {vector_of(x, shape)},
                   {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}},
                   1,
                   {0}};
  c.documented = [e](const std::vector<Tensor>& in, const std::vector<Tensor>& r) {
    Tensor g(DType::F64, in[0].shape());
    for (int64_t row = 0; row < 3; ++row) {
      int ties = 0;
      for (int64_t j = 0; j < 4; ++j) ties += in[0].get_double(row * 4 + j) == e ? 1 : 0;
      for (int64_t j = 0; j < 4; ++j) {
        const bool hit = in[0].get_double(row * 4 + j) == e;
        g.set_double(row * 4 + j, hit ? r[0].get_double(row) / ties : 0.0);
      }
    }
    return std::vector<Tensor>{g};
  };
  return c;
}

}  // namespace

void subgradient_cases(std::vector<GradientCase>& out) {
  const std::vector<double> at_zero = {0, -0.0, 1.5, -1.5, 0, 0.25, -0.25, 0};
  const auto add = [&](OpGradientCase c) {
    out.push_back(gradient_case("subgradients", std::move(c)));
  };
  add(unary("Relu(at=0,shape=[8])", K::Relu, {}, at_zero,
            [](double x, const Attributes&) { return x > 0 ? 1.0 : 0.0; }));
  add(unary("Abs(at=0,shape=[8])", K::Abs, {}, at_zero, [](double x, const Attributes&) {
    return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0;
  }));
  add(unary("LeakyRelu(alpha=0.2,at=0,shape=[8])", K::LeakyRelu, {{"alpha", 0.2}}, at_zero,
            [](double x, const Attributes&) { return x >= 0 ? 1.0 : 0.2; }));
  add(unary("Clip(max=0.5,min=-0.5,at=bounds,shape=[8])", K::Clip, {{"min", -0.5}, {"max", 0.5}},
            {-0.5, 0.5, -1, 1, 0, 0.5, -0.5, 0.25},
            [](double x, const Attributes&) { return x >= -0.5 && x <= 0.5 ? 1.0 : 0.0; }));
  add(tied_extremum(K::Max));
  add(tied_extremum(K::Min));
  add(tied_reduction(K::ReduceMax));
  add(tied_reduction(K::ReduceMin));
}

}  // namespace volta::conformance::gradients
