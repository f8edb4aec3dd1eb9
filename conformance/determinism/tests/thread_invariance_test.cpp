// Determinism level 2: CPU outputs are bit-identical for 1, 2, 3, 4 and 8 threads.
#define BOOST_TEST_MODULE thread_invariance
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "volta/ir/random.h"
#include "volta/model/builtin_models.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta {
namespace {

void check_thread_invariance(const TransformerBlockConfig& config) {
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  const Graph graph = transformer_block_graph(config);
  const ExecutionPlan plan = compile(graph, *cpu, DeterminismMode::Strict);
  const Value& x = graph.value(graph.inputs()[0]);
  const std::vector<Tensor> inputs = {random_tensor(x.dtype, x.shape, 42, -1, 1)};

  const std::unique_ptr<ExecutionContext> single_context = cpu->make_context({.threads = 1});
  ExecutionContext& single = *single_context;
  const std::vector<Tensor> baseline = execute(plan, *cpu, single, inputs);
  BOOST_REQUIRE_EQUAL(baseline.size(), 1u);
  for (int64_t i = 0; i < baseline[0].numel(); ++i) {
    BOOST_REQUIRE(std::isfinite(baseline[0].get_double(i)));
  }
  for (int threads : {2, 3, 4, 8}) {
    const std::unique_ptr<ExecutionContext> ctx_context = cpu->make_context({.threads = threads});
    ExecutionContext& ctx = *ctx_context;
    for (int repeat = 0; repeat < 3; ++repeat) {
      const std::vector<Tensor> out = execute(plan, *cpu, ctx, inputs);
      BOOST_CHECK_MESSAGE(
          out[0].bit_equal(baseline[0]),
          threads << " threads (repeat " << repeat << ") differ from 1 thread in at least one bit");
    }
  }
}

BOOST_AUTO_TEST_CASE(small_transformer_block) { check_thread_invariance({}); }

// Large enough that GEMMs span several cache blocks and rows span several reduction leaves.
BOOST_AUTO_TEST_CASE(wide_transformer_block) {
  check_thread_invariance({.batch = 2, .seq = 64, .d_model = 256, .heads = 8, .d_ff = 1024});
}

BOOST_AUTO_TEST_CASE(f64_transformer_block) {
  check_thread_invariance(
      {.batch = 1, .seq = 16, .d_model = 64, .heads = 4, .d_ff = 128, .dtype = DType::F64});
}

}  // namespace
}  // namespace volta
