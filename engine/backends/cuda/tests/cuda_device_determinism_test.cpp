// The CUDA backend's determinism on a device, the promise its kernels are built for: a plan
// replayed 100 times gives the same bits every time; a sample's outputs do not change with the
// batch it is in (batch sizes 1, 2, 3, 7, 16, 64); the tiny transformer's logits are the CPU
// backend's, bit for bit. A negative control proves the replay check can fail: a ReduceSum
// planted with a float atomicAdd kernel (atomic_sum_control.cu) that claims to be bit-exact.
//
// Without a usable device every case is skipped and the binary prints "SKIPPED: <reason>".

#define BOOST_TEST_MODULE cuda_device_determinism_test
#include <cuda_runtime_api.h>

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "device_test_support.h"
#include "volta/backends/cuda.h"
#include "volta/ir/random.h"
#include "volta/model/language_model.h"
#include "volta/model/transformer_lm.h"
#include "volta/runtime/forwarding_backend.h"

namespace volta {
namespace cuda_test {
cudaError_t launch_atomic_sum(const float* x, int64_t n, float* y, cudaStream_t stream);
}  // namespace cuda_test

namespace {

using cuda_test::DeviceOrSkip;
BOOST_TEST_GLOBAL_FIXTURE(DeviceOrSkip);
using cuda_test::cpu;
using cuda_test::device_available;
using cuda_test::gpu;

constexpr int kReplays = 100;

bool same_bits(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].bit_equal(b[i])) return false;
  }
  return true;
}

// The first of `runs` replays of the plan (one context, poisoned differently each time) whose
// outputs differ from the first run's (0: a run launched step by step, outside a CUDA graph),
// or nullopt when every replay gives the same bits.
std::optional<int> first_differing_replay(const Backend& backend, const Graph& graph,
                                          const std::vector<Tensor>& inputs, int runs) {
  const ExecutionPlan plan = compile(graph, backend, DeterminismMode::Strict);
  const std::unique_ptr<ExecutionContext> ctx = backend.make_context({});
  const std::vector<Tensor> first = execute(plan, backend, *ctx, inputs);
  for (int r = 1; r < runs; ++r) {
    ctx->set_poison(std::byte{static_cast<unsigned char>(r)});
    if (!same_bits(execute(plan, backend, *ctx, inputs), first)) return r;
  }
  if (&backend != &gpu()) return std::nullopt;  // a planted backend launches its own way
  // The first run captured the plan as a CUDA graph; every later one replayed it.
  BOOST_TEST(cuda_context(*ctx).graph_captures() == 1);
  BOOST_TEST(cuda_context(*ctx).graph_replays() == runs - 1);
  // A step observer makes every step launch at once, outside any graph: the same bits.
  const std::unique_ptr<ExecutionContext> eager = backend.make_context({});
  eager->set_step_observer(
      [](int, const Node&, const KernelChoice&, std::span<const TensorView>) {});
  if (!same_bits(execute(plan, backend, *eager, inputs), first)) return 0;
  BOOST_TEST(cuda_context(*eager).graph_captures() == 0);
  return std::nullopt;
}

// Values whose sum depends on the order it is taken in: magnitudes from 2^-10 to 2^10.
Tensor order_sensitive_values(int64_t n) {
  Tensor t = random_tensor(DType::F32, Shape{n}, 11, -1.0, 1.0);
  auto* x = t.data_as<float>();
  for (int64_t i = 0; i < n; ++i) x[i] = std::ldexp(x[i], static_cast<int>(i % 21) - 10);
  return t;
}

Graph full_sum(int64_t n) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{n});
  g.set_outputs({g.add(OpKind::ReduceSum, {x}, {{"keepdims", int64_t{0}}}, "sum")});
  return g;
}

BOOST_AUTO_TEST_CASE(plans_replay_bit_for_bit, *boost::unit_test::precondition(device_available)) {
  // Long reductions, a GEMM of odd sizes, the normalizations of a transformer.
  constexpr int64_t n = int64_t{1} << 22;
  BOOST_TEST(!first_differing_replay(gpu(), full_sum(n), {order_sensitive_values(n)}, kReplays));
  Graph mm;
  const ValueId a = mm.add_input("a", DType::F32, Shape{257, 300});
  const ValueId b = mm.add_input("b", DType::F32, Shape{300, 129});
  mm.set_outputs({mm.add(OpKind::MatMul, {a, b}, {}, "mm")});
  BOOST_TEST(!first_differing_replay(gpu(), mm,
                                     {random_tensor(DType::F32, Shape{257, 300}, 1, -1, 1),
                                      random_tensor(DType::F32, Shape{300, 129}, 2, -1, 1)},
                                     kReplays));
  Graph norm;
  const ValueId x = norm.add_input("x", DType::F32, Shape{64, 4097});
  const ValueId scale = norm.add_input("scale", DType::F32, Shape{4097});
  const ValueId ln =
      norm.add_node(OpKind::LayerNormalization, {x, scale}, {{"axis", int64_t{-1}}}, "ln")[0];
  norm.set_outputs({norm.add(OpKind::Softmax, {ln}, {{"axis", int64_t{-1}}}, "softmax")});
  BOOST_TEST(!first_differing_replay(gpu(), norm,
                                     {random_tensor(DType::F32, Shape{64, 4097}, 3, -8, 8),
                                      random_tensor(DType::F32, Shape{4097}, 4, 0.5, 2)},
                                     kReplays));
}

model::TrainedModel tiny_transformer() {
  return {.config = model::kTinyTransformer,
          .parameters = model::initial_parameters(model::kTinyTransformer)};
}

// Row r of a batch: tokens (7 r + 3 t) mod vocab, so row 0 is the same in every batch.
Tensor token_batch(int64_t batch, const model::TransformerConfig& c) {
  Tensor t(DType::I64, Shape{batch, c.seq});
  auto* tokens = t.data_as<int64_t>();
  for (int64_t r = 0; r < batch; ++r) {
    for (int64_t i = 0; i < c.seq; ++i) tokens[r * c.seq + i] = (7 * r + 3 * i) % c.vocab;
  }
  return t;
}

BOOST_AUTO_TEST_CASE(the_tiny_transformer_replays_and_gives_the_cpus_bits,
                     *boost::unit_test::precondition(device_available)) {
  const model::TrainedModel trained = tiny_transformer();
  const model::TransformerConfig& c = trained.config;
  model::LanguageModel on_gpu(trained, c.batch, 1, gpu());
  model::LanguageModel on_cpu(trained, c.batch, 4, cpu());
  const Tensor tokens = token_batch(c.batch, c);
  const Tensor first = on_gpu.logits(tokens);
  for (int r = 1; r < kReplays; ++r) {
    if (!on_gpu.logits(tokens).bit_equal(first)) {
      BOOST_ERROR("replay " << r << " of the tiny transformer differs from the first");
      break;
    }
  }
  BOOST_TEST(first.bit_equal(on_cpu.logits(tokens)),
             "the tiny transformer's logits on CUDA are not the CPU backend's bits");
}

BOOST_AUTO_TEST_CASE(a_sample_does_not_change_with_its_batch,
                     *boost::unit_test::precondition(device_available)) {
  const model::TrainedModel trained = tiny_transformer();
  const model::TransformerConfig& c = trained.config;
  const int64_t row = c.seq * c.vocab;  // logits of one sample
  std::optional<std::vector<float>> alone;
  for (const int64_t batch : {1, 2, 3, 7, 16, 64}) {
    model::LanguageModel lm(trained, batch, 1, gpu());
    const Tensor logits = lm.logits(token_batch(batch, c));
    const float* first = logits.data_as<float>();
    std::vector<float> sample(first, first + row);
    if (!alone) {
      alone = std::move(sample);
      continue;
    }
    BOOST_TEST(std::memcmp(sample.data(), alone->data(), sizeof(float) * sample.size()) == 0,
               "sample 0's logits at batch " << batch << " differ from batch 1's");
  }
}

// The negative control: the CUDA backend with a full f32 ReduceSum swapped for a float
// atomicAdd sum that claims to be bit-exact. Test-only; the production backend never sees it.
class PlantedAtomicSum final : public ForwardingBackend {
 public:
  PlantedAtomicSum() : ForwardingBackend(make_backend("cuda"), "cuda-planted-atomic-sum") {}
  KernelSelection select_kernel(const Graph& graph, const Node& node) const override {
    if (node.op == OpKind::ReduceSum && graph.value(node.outputs[0]).shape.numel() == 1) {
      return KernelChoice{"f32_reduce_sum_atomic_planted", KernelDeterminism::BitExact, this};
    }
    return inner().select_kernel(graph, node);
  }
  void run_kernel(const KernelChoice& kernel, const Node& node,
                  std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs,
                  MemoryRegion workspace, ExecutionContext& ctx) const override {
    if (kernel.impl != this) {
      inner().run_kernel(kernel, node, inputs, outputs, workspace, ctx);
      return;
    }
    // On the legacy default stream, fenced on both sides from the context's own stream.
    inner().synchronize(ctx);
    BOOST_REQUIRE(cuda_test::launch_atomic_sum(inputs[0].as<float>(), inputs[0].numel(),
                                               outputs[0].as<float>(), nullptr) == cudaSuccess);
    BOOST_REQUIRE(cudaStreamSynchronize(nullptr) == cudaSuccess);
  }
};

BOOST_AUTO_TEST_CASE(a_planted_atomic_sum_is_caught_by_the_replay,
                     *boost::unit_test::precondition(device_available)) {
  constexpr int64_t n = int64_t{1} << 22;
  const PlantedAtomicSum planted;
  const std::optional<int> caught =
      first_differing_replay(planted, full_sum(n), {order_sensitive_values(n)}, kReplays);
  BOOST_TEST(caught.has_value(), "100 replays of a float atomicAdd sum gave the same bits");
  if (caught) BOOST_TEST_MESSAGE("the planted atomic sum differed at replay " << *caught);
}

}  // namespace
}  // namespace volta
