#pragma once
// Helpers shared by the engine's Boost.Test suites.

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "volta/ir/graph.h"
#include "volta/ir/random.h"
#include "volta/ir/verify.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta::test {

// A graph of one node whose operands are graph inputs named in0, in1, ... (an invalid
// TypeInfo slot is not possible, so absent optional inputs are given as std::nullopt).
inline Graph single_op_graph(OpKind op, const std::vector<std::optional<TypeInfo>>& inputs,
                             Attributes attrs = {}, int num_outputs = 1) {
  Graph g;
  std::vector<ValueId> ids;
  for (size_t i = 0; i < inputs.size(); ++i) {
    ids.push_back(inputs[i]
                      ? g.add_input("in" + std::to_string(i), inputs[i]->dtype, inputs[i]->shape)
                      : kNoValue);
  }
  g.set_outputs(g.add_node(op, ids, std::move(attrs), "op", num_outputs));
  return g;
}

// Compiles (Strict, optimizations off so the op itself runs) and executes on the CPU.
inline std::vector<Tensor> run_cpu(const Graph& graph, const std::vector<Tensor>& inputs,
                                   int threads = 1) {
  static const std::unique_ptr<Backend> cpu = make_backend("cpu");
  ExecutionPlan plan = compile(graph, *cpu, DeterminismMode::Strict, {.optimize = false});
  const std::unique_ptr<ExecutionContext> ctx_context = cpu->make_context({.threads = threads});
  ExecutionContext& ctx = *ctx_context;
  return execute(plan, *cpu, ctx, inputs);
}

// Builds the single-op graph from the inputs' types and runs it.
inline std::vector<Tensor> run_op(OpKind op, const std::vector<Tensor>& inputs,
                                  Attributes attrs = {}, int num_outputs = 1, int threads = 1) {
  std::vector<std::optional<TypeInfo>> types;
  types.reserve(inputs.size());
  for (const Tensor& t : inputs) types.push_back(TypeInfo{t.dtype(), t.shape()});
  return run_cpu(single_op_graph(op, types, std::move(attrs), num_outputs), inputs, threads);
}

// A tensor holding `values` (converted to the dtype) in row-major order.
inline Tensor filled(DType dtype, Shape shape, const std::vector<double>& values) {
  Tensor t(dtype, std::move(shape));
  BOOST_REQUIRE_EQUAL(static_cast<int64_t>(values.size()), t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) t.set_double(i, values[static_cast<size_t>(i)]);
  return t;
}

// Uniform values in [lo, hi) under `seed`: counter-based, so the same on every machine.
inline Tensor uniform(DType dtype, const Shape& shape, uint64_t seed, double lo = -3.0,
                      double hi = 3.0) {
  return random_tensor(dtype, shape, seed, lo, hi);
}

// Element-wise |got - want| <= atol + rtol * |want|, NaN where NaN, same infinities.
inline void check_close(const Tensor& got, const Tensor& want, double atol = 1e-6,
                        double rtol = 1e-6) {
  BOOST_REQUIRE_EQUAL(static_cast<int>(got.dtype()), static_cast<int>(want.dtype()));
  BOOST_REQUIRE_EQUAL(got.shape().str(), want.shape().str());
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double g = got.get_double(i), w = want.get_double(i);
    if (std::isnan(w)) {
      BOOST_CHECK_MESSAGE(std::isnan(g), "element " << i << ": got " << g << ", want NaN");
    } else if (std::isinf(w)) {
      BOOST_CHECK_MESSAGE(g == w, "element " << i << ": got " << g << ", want " << w);
    } else {
      BOOST_CHECK_MESSAGE(std::abs(g - w) <= atol + rtol * std::abs(w),
                          "element " << i << ": got " << g << ", want " << w);
    }
  }
}

}  // namespace volta::test
