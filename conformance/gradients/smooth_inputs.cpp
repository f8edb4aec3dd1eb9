#include "smooth_inputs.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "volta/ir/random.h"

namespace volta::conformance::gradients {
namespace {

using K = OpKind;

struct Domain {
  double lo = -2, hi = 2;
  bool both_signs = false;  // +-[lo, hi]: away from 0
  bool distinct = false;    // pairwise distinct over every differentiated input
  std::vector<double> kinks = {};
};

Domain domain_of(const Node& node, int input) {
  const AttrReader a(node);
  switch (node.op) {
    case K::Sqrt:
    case K::Log:
      return {.lo = 0.2, .hi = 3};
    case K::Pow:
      return input == 0 ? Domain{.lo = 0.5, .hi = 2} : Domain{};
    case K::Div:
      return input == 1 ? Domain{.lo = 0.5, .hi = 2, .both_signs = true} : Domain{};
    case K::BatchNormalization:  // the variance: positive, as the square root needs
      return input == 4 ? Domain{.lo = 0.5, .hi = 2} : Domain{};
    case K::Reciprocal:
      return {.lo = 0.5, .hi = 2, .both_signs = true};
    case K::Tan:
      return {.lo = -1.2, .hi = 1.2};
    case K::Asin:
    case K::Acos:
    case K::Atanh:
      return {.lo = -0.9, .hi = 0.9};
    case K::Acosh:
      return {.lo = 1.2, .hi = 3};
    case K::Max:
    case K::Min:
    case K::ReduceMax:
    case K::ReduceMin:
    case K::TopK:
      return {.distinct = true};
    case K::Abs:
    case K::Relu:
    case K::LeakyRelu:
    case K::Elu:
    case K::Selu:
    case K::Celu:
    case K::ReduceL1:
    case K::ReduceL2:
      return {.kinks = {0.0}};
    case K::PRelu:
      return input == 0 ? Domain{.kinks = {0.0}} : Domain{};
    case K::ThresholdedRelu:
      return {.kinks = {a.get_float("alpha")}};
    case K::Shrink:
      return {.kinks = {-a.get_float("lambd"), a.get_float("lambd")}};
    case K::HardSigmoid: {
      const double alpha = a.get_float("alpha"), beta = a.get_float("beta");
      return {.kinks = {-beta / alpha, (1 - beta) / alpha}};
    }
    case K::HardSwish:
      return {.kinks = {-3.0, 3.0}};
    case K::Clip:
      return {.kinks = {a.get_float("min"), a.get_float("max")}};
    default:
      return {};
  }
}

double away_from_kinks(double v, const std::vector<double>& kinks) {
  for (double k : kinks) {
    if (std::isfinite(k) && std::abs(v - k) < kKinkMargin)
      v = v < k ? k - kKinkMargin : k + kKinkMargin;
  }
  return v;
}

double f32_representable(double v) { return static_cast<double>(static_cast<float>(v)); }

}  // namespace

std::vector<Tensor> smooth_values(const Graph& graph, const Node& node,
                                  const std::vector<int>& trainable, uint64_t seed) {
  std::vector<Tensor> out;
  out.reserve(trainable.size());
  for (const int i : trainable) {
    out.emplace_back(DType::F64, graph.value(node.inputs[static_cast<size_t>(i)]).shape);
  }
  // Distinct values: the total count spread evenly over [lo, hi], shuffled by seeded keys.
  int64_t total = 0;
  for (const Tensor& t : out) total += t.numel();
  std::vector<int64_t> order;
  if (!trainable.empty() && domain_of(node, trainable.front()).distinct) {
    order.resize(static_cast<size_t>(total));
    std::iota(order.begin(), order.end(), 0);
    std::ranges::sort(order, [&](int64_t a, int64_t b) {
      return counter_random_u64(seed, 7, static_cast<uint64_t>(a)) <
             counter_random_u64(seed, 7, static_cast<uint64_t>(b));
    });
  }
  int64_t next = 0;
  for (size_t k = 0; k < out.size(); ++k) {
    const Domain d = domain_of(node, trainable[k]);
    Tensor& t = out[k];
    for (int64_t e = 0; e < t.numel(); ++e, ++next) {
      double v = 0;
      if (d.distinct) {
        const auto rank = static_cast<double>(order[static_cast<size_t>(next)]);
        v = d.lo + (d.hi - d.lo) * (rank + 0.5) / static_cast<double>(total);
      } else {
        const auto stream = static_cast<uint64_t>(trainable[k]);
        const double u = counter_uniform(seed, stream, static_cast<uint64_t>(e));
        v = d.lo + (d.hi - d.lo) * u;
        if (d.both_signs && counter_uniform(seed, stream + 100, static_cast<uint64_t>(e)) < 0.5) {
          v = -v;
        }
      }
      t.set_double(e, f32_representable(away_from_kinks(v, d.kinks)));
    }
  }
  return out;
}

}  // namespace volta::conformance::gradients
