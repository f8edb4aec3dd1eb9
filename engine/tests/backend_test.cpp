// The backend contract: the registry (backends by name, a test-only one added here without
// touching the core), contexts made by their backend, memory spaces, and kernel workspace
// planned into the arena and handed to the kernel that declared it. Also the CPU backend's
// kernel table, which takes each op's kernels from the registrar of the op's family only.

#define BOOST_TEST_MODULE backend_test
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cpu_kernel.h"
#include "expect_error.h"
#include "volta/backends/cpu.h"
#include "volta/ir/random.h"
#include "volta/model/builtin_models.h"
#include "volta/runtime/forwarding_backend.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta {
namespace {

using test::expect_error;

// The CPU backend, except that Relu runs a kernel that asks for 1000 bytes of workspace and
// checks, when it runs, that it got them: a region of the arena of the declared size that
// overlaps neither its input nor its output, which it scribbles over.
class ScratchRelu final : public ForwardingBackend {
 public:
  static constexpr int64_t kScratch = 1000;
  ScratchRelu() : ForwardingBackend(make_backend("cpu"), "test-scratch-relu") {}

  KernelSelection select_kernel(const Graph& graph, const Node& node) const override {
    if (node.op != OpKind::Relu) return inner().select_kernel(graph, node);
    return KernelChoice{"f32_relu_with_scratch", KernelDeterminism::BitExact, this, kScratch};
  }

  void run_kernel(const KernelChoice& kernel, const Node& node,
                  std::span<const ConstTensorView> inputs, std::span<const TensorView> outputs,
                  MemoryRegion workspace, ExecutionContext& ctx) const override {
    if (kernel.impl != this) {
      return inner().run_kernel(kernel, node, inputs, outputs, workspace, ctx);
    }
    ++runs;
    seen_bytes = workspace.bytes;
    const auto* w = workspace.data;
    const auto apart = [&](const void* data, int64_t bytes) {
      const auto* p = static_cast<const std::byte*>(data);
      return p + bytes <= w || w + workspace.bytes <= p;
    };
    const int64_t bytes = outputs[0].numel() * 4;
    disjoint = apart(inputs[0].data, bytes) && apart(outputs[0].data, bytes);
    std::memset(workspace.data, 0x7f, static_cast<size_t>(workspace.bytes));
    const float* x = inputs[0].as<float>();
    float* y = outputs[0].as<float>();
    for (int64_t i = 0; i < outputs[0].numel(); ++i) y[i] = x[i] > 0 ? x[i] : 0.0f;
  }

  mutable int runs = 0;
  mutable int64_t seen_bytes = -1;
  mutable bool disjoint = false;
};

// x[64] -> Relu "relu" -> Neg "neg" -> output.
Graph relu_neg() {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{64});
  const ValueId r = g.add(OpKind::Relu, {x}, {}, "relu");
  g.set_outputs({g.add(OpKind::Neg, {r}, {}, "neg")});
  return g;
}

std::unique_ptr<Backend> make_test_only_backend() {
  return std::make_unique<ForwardingBackend>(make_backend("cpu"), "test-only");
}
// Registered from this test binary only: the core does not know it.
VOLTA_REGISTER_BACKEND("test-only", "the CPU backend under another name (backend_test)",
                       make_test_only_backend);

BOOST_AUTO_TEST_CASE(backends_are_made_by_name_and_a_new_one_registers_without_the_core) {
  BOOST_TEST(make_backend("cpu")->name() == "cpu");
  BOOST_TEST(has_backend("cpu"));
  std::vector<std::string> names;
  for (const BackendInfo& b : available_backends()) {
    names.push_back(b.name);
    BOOST_TEST(!b.description.empty());
  }
  BOOST_TEST(std::ranges::is_sorted(names));
  BOOST_TEST(std::ranges::count(names, "cpu") == 1);
  BOOST_TEST(std::ranges::count(names, "test-only") == 1);
  // The test-only backend runs a plan like any other, through the same registry.
  const std::unique_ptr<Backend> test_only = make_backend("test-only");
  const ExecutionPlan plan = compile(relu_neg(), *test_only, DeterminismMode::Strict);
  BOOST_TEST(plan.backend == "test-only");
  const std::unique_ptr<ExecutionContext> ctx = test_only->make_context({.threads = 2});
  const Tensor x = random_tensor(DType::F32, Shape{64}, 5, -1, 1);
  BOOST_TEST(execute(plan, *test_only, *ctx, std::vector<Tensor>{x})[0].numel() == 64);
}

BOOST_AUTO_TEST_CASE(an_unknown_backend_names_the_ones_built_in) {
  std::string built;
  for (const BackendInfo& b : available_backends()) built += (built.empty() ? "" : ", ") + b.name;
  expect_error([] { make_backend("tpu"); }, ErrorCode::UnknownBackend,
               "no backend 'tpu' in this binary (backends built into it: " + built + ")");
  expect_error([] { register_backend("cpu", "again", make_test_only_backend); },
               ErrorCode::InvalidArgument, "backend 'cpu' is registered twice");
}

BOOST_AUTO_TEST_CASE(a_context_is_made_by_its_backend_and_checked_by_it) {
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  const std::unique_ptr<ExecutionContext> ctx =
      cpu->make_context({.threads = 3, .schedule = {.reverse_task_order = true}});
  BOOST_TEST(ctx->backend() == "cpu");
  BOOST_TEST(ctx->options().threads == 3);
  BOOST_TEST(cpu_context(*ctx).num_threads() == 3);
  BOOST_TEST(cpu_context(*ctx).pool().schedule().reverse_task_order);
  expect_error([&] { cpu->make_context({.threads = 0}); }, ErrorCode::InvalidArgument,
               "thread count must be in [1, 1024], got 0");

  // Another kind of context is refused where the CPU backend would use it.
  class OtherContext final : public ExecutionContext {
   public:
    OtherContext() : ExecutionContext("elsewhere", {}) {}
  };
  OtherContext other;
  const ExecutionPlan plan = compile(relu_neg(), *cpu, DeterminismMode::Strict);
  const std::vector<Tensor> inputs = {Tensor(DType::F32, Shape{64})};
  expect_error([&] { execute(plan, *cpu, other, inputs); }, ErrorCode::BackendMismatch,
               "an execution context made by backend 'elsewhere' given to the CPU backend: make "
               "one with its make_context()");
}

BOOST_AUTO_TEST_CASE(host_inputs_are_read_in_place_and_device_views_are_refused) {
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  const std::unique_ptr<ExecutionContext> ctx = cpu->make_context({});
  const Tensor x = random_tensor(DType::F32, Shape{64}, 9, -1, 1);
  const ConstTensorView imported = cpu->import_tensor(*ctx, x);
  BOOST_TEST(imported.data == x.data());
  BOOST_TEST((imported.space == MemorySpace::Host));
  BOOST_TEST(cpu->export_tensor(*ctx, imported).bit_equal(x));

  const ExecutionPlan plan = compile(relu_neg(), *cpu, DeterminismMode::Strict);
  const PlannedStep& step = plan.steps[0];
  Tensor y(DType::F32, Shape{64});
  const std::vector<ConstTensorView> device_input = {
      ConstTensorView(DType::F32, Shape{64}, x.data(), MemorySpace::Device)};
  const std::vector<TensorView> output = {{DType::F32, Shape{64}, y.data(), MemorySpace::Host}};
  expect_error(
      [&] {
        cpu->run_kernel(step.kernel, plan.graph.node(step.node), device_input, output, {}, *ctx);
      },
      ErrorCode::MemorySpaceMismatch,
      "node 'relu' (Relu) on backend 'cpu': input 0 is a view of device memory; the CPU "
      "backend's kernels read host memory only");
  expect_error([&] { cpu->export_tensor(*ctx, device_input[0]); }, ErrorCode::MemorySpaceMismatch,
               "the CPU backend exports host memory only, got a view of device memory");
}

// Tensor::copy_of (what the CPU backend exports with) copies a host view's bytes into storage
// of its own, and refuses device memory and a view without data.
BOOST_AUTO_TEST_CASE(a_tensor_copies_a_host_view_and_refuses_others) {
  const Tensor x = random_tensor(DType::F32, Shape{3, 5}, 4, -1, 1);
  const Tensor copy = Tensor::copy_of(x.view());
  BOOST_TEST(copy.bit_equal(x));
  BOOST_TEST(copy.data() != x.data());
  BOOST_TEST(Tensor::copy_of(ConstTensorView(DType::I64, Shape{0, 4}, nullptr)).numel() == 0);
  expect_error(
      [&] {
        Tensor::copy_of(ConstTensorView(DType::F32, Shape{3, 5}, x.data(), MemorySpace::Device));
      },
      ErrorCode::MemorySpaceMismatch,
      "Tensor::copy_of: the view is in device memory; a backend exports it to the host");
  expect_error([] { Tensor::copy_of(ConstTensorView(DType::F32, Shape{2}, nullptr)); },
               ErrorCode::InvalidArgument, "Tensor::copy_of: a view of [2] without data");
}

BOOST_AUTO_TEST_CASE(a_kernels_workspace_is_planned_and_handed_to_it) {
  const ScratchRelu backend;
  const ExecutionPlan plan = compile(relu_neg(), backend, DeterminismMode::Strict);
  BOOST_REQUIRE_EQUAL(plan.steps.size(), 2u);
  BOOST_TEST(plan.steps[0].kernel.workspace_bytes == ScratchRelu::kScratch);
  BOOST_REQUIRE(plan.memory.workspaces[0].has_value());
  BOOST_TEST(!plan.memory.workspaces[1].has_value());
  // Counted: the relu output (256 bytes) and 1024 bytes of scratch are live at step 0.
  BOOST_TEST(plan.memory.peak_live_bytes >= 256 + 1024);
  BOOST_TEST(describe_plan(plan).find("workspace=1000@") != std::string::npos, describe_plan(plan));

  const std::unique_ptr<ExecutionContext> ctx = backend.make_context({.threads = 2});
  const Tensor x = random_tensor(DType::F32, Shape{64}, 11, -1, 1);
  const std::vector<Tensor> got = execute(plan, backend, *ctx, std::vector<Tensor>{x});
  BOOST_TEST(backend.runs == 1);
  BOOST_TEST(backend.seen_bytes == ScratchRelu::kScratch);
  BOOST_TEST(backend.disjoint);
  // The scribbled scratch changed nothing the plan computes.
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  const ExecutionPlan plain = compile(relu_neg(), *cpu, DeterminismMode::Strict);
  const std::unique_ptr<ExecutionContext> cpu_ctx = cpu->make_context({});
  BOOST_TEST(got[0].bit_equal(execute(plain, *cpu, *cpu_ctx, std::vector<Tensor>{x})[0]));
}

// The CPU's own scratch is planned too: an im2col Conv's column matrix (and its GEMM calls' shared
// op(B) panels) is the step's workspace, counted in peak_live_bytes; the GEMM tasks' packing is the
// workers' scratch, which the context reserves before the run. Poison patterns and thread counts
// change no bit, so no kernel reads scratch it did not write.
BOOST_AUTO_TEST_CASE(the_cpu_backends_conv_and_gemm_scratch_is_planned) {
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  const int64_t batch = 2, size = 32;
  const ExecutionPlan plan = compile(cnn_graph(batch, size), *cpu, DeterminismMode::Strict);
  int64_t conv_steps = 0;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const Node& node = plan.graph.node(plan.steps[s].node);
    if (node.op != OpKind::Conv) continue;
    if (plan.steps[s].kernel.variant.find("depthwise") != std::string::npos) {
      // A depthwise Conv computes each plane directly: no column matrix, no GEMM.
      BOOST_TEST(plan.steps[s].kernel.workspace_bytes == 0);
      BOOST_TEST(plan.steps[s].kernel.worker_scratch_bytes == 0);
      continue;
    }
    ++conv_steps;
    const Shape& w = plan.graph.value(node.inputs[1]).shape;
    const Shape& y = plan.graph.value(node.outputs[0]).shape;
    // im2col: rows C * kh * kw by the output plane, for every image of the step.
    const int64_t column_bytes = batch * w[1] * w[2] * w[3] * y[2] * y[3] * 4;
    BOOST_TEST(plan.steps[s].kernel.workspace_bytes >= column_bytes, node.name);
    BOOST_REQUIRE(plan.memory.workspaces[s].has_value());
    BOOST_TEST(plan.memory.peak_live_bytes >= plan.steps[s].kernel.workspace_bytes + y.numel() * 4);
    BOOST_TEST(plan.steps[s].kernel.worker_scratch_bytes > 0);
  }
  BOOST_TEST(conv_steps == 2);
  BOOST_TEST(plan.worker_scratch_bytes > 0);

  const Tensor x = random_tensor(DType::F32, Shape{batch, 3, size, size}, 5, -1, 1);
  std::vector<Tensor> first;
  for (const int threads : {1, 3}) {
    for (const std::byte poison : {std::byte{0x00}, std::byte{0xff}}) {
      const std::unique_ptr<ExecutionContext> ctx = cpu->make_context({.threads = threads});
      ctx->set_poison(poison);
      const std::vector<Tensor> got = execute(plan, *cpu, *ctx, std::vector<Tensor>{x});
      BOOST_TEST(cpu_context(*ctx).pool().worker_scratch_bytes() == plan.worker_scratch_bytes);
      if (first.empty()) first = got;
      BOOST_TEST(got[0].bit_equal(first[0]), "threads " << threads);
    }
  }
}

// Other kernels whose buffers grow with the data declare them too: GatherND its tuple offsets
// and SoftmaxCrossEntropyLoss without its log_prob output the log_prob (planned workspace,
// rounded to 64 bytes), Det one matrix per task (worker scratch). Each runs in that space.
BOOST_AUTO_TEST_CASE(data_sized_buffers_are_declared_at_selection) {
  const std::unique_ptr<Backend> cpu = make_backend("cpu");
  const auto plan_of = [&](OpKind op, std::vector<TypeInfo> types, Attributes attrs) {
    Graph g;
    std::vector<ValueId> ids;
    for (size_t i = 0; i < types.size(); ++i) {
      ids.push_back(g.add_input("in" + std::to_string(i), types[i].dtype, types[i].shape));
    }
    g.set_outputs({g.add(op, ids, std::move(attrs), "op")});
    return compile(g, *cpu, DeterminismMode::Strict, {.optimize = false});
  };
  const ExecutionPlan gather =
      plan_of(OpKind::GatherND, {{DType::F32, Shape{5, 6}}, {DType::I64, Shape{7, 1}}},
              {{"batch_dims", 0}});
  BOOST_TEST(gather.steps[0].kernel.workspace_bytes == 7 * 8);
  BOOST_TEST(gather.memory.workspaces[0]->size == 64);
  const ExecutionPlan loss =
      plan_of(OpKind::SoftmaxCrossEntropyLoss, {{DType::F32, Shape{8, 10}}, {DType::I64, Shape{8}}},
              {{"reduction", std::string("mean")}});
  BOOST_TEST(loss.steps[0].kernel.workspace_bytes == 8 * 10 * 4);
  const ExecutionPlan det = plan_of(OpKind::Det, {{DType::F64, Shape{4, 5, 5}}}, {});
  BOOST_TEST(det.steps[0].kernel.worker_scratch_bytes == 5 * 5 * 8);
  BOOST_TEST(det.worker_scratch_bytes == 5 * 5 * 8);

  const std::unique_ptr<ExecutionContext> ctx = cpu->make_context({.threads = 2});
  ctx->set_poison(std::byte{0xff});
  const Tensor data = random_tensor(DType::F32, Shape{5, 6}, 3, -1, 1);
  Tensor rows(DType::I64, Shape{7, 1});
  for (int64_t i = 0; i < 7; ++i) rows.data_as<int64_t>()[i] = (i * 3) % 5;
  const Tensor gathered = execute(gather, *cpu, *ctx, std::vector<Tensor>{data, rows})[0];
  for (int64_t i = 0; i < 7; ++i) {
    for (int64_t j = 0; j < 6; ++j) {
      BOOST_TEST(gathered.data_as<float>()[i * 6 + j] ==
                 data.data_as<float>()[(i * 3) % 5 * 6 + j]);
    }
  }
  Tensor identities(DType::F64, Shape{4, 5, 5});
  for (int64_t b = 0; b < 4; ++b) {
    for (int64_t i = 0; i < 5; ++i) identities.data_as<double>()[b * 25 + i * 6] = double(b + 1);
  }
  const Tensor dets = execute(det, *cpu, *ctx, std::vector<Tensor>{identities})[0];
  for (int64_t b = 0; b < 4; ++b) {
    BOOST_TEST(dets.data_as<double>()[b] == std::pow(double(b + 1), 5));
  }
}

// Runs `body`, which must throw std::logic_error with exactly `message`.
template <class Body>
void expect_logic_error(Body&& body, const std::string& message) {
  try {
    body();
    BOOST_ERROR("expected std::logic_error \"" << message << "\", nothing was thrown");
  } catch (const std::logic_error& e) {
    BOOST_CHECK_EQUAL(std::string(e.what()), message);
  }
}

KernelSelection select_nothing(const cpu::KernelQuery& /*query*/) {
  return KernelUnsupported{"a test kernel"};
}

size_t at(OpKind op) { return static_cast<size_t>(op_index(op)); }

BOOST_AUTO_TEST_CASE(a_cpu_kernel_registered_by_another_familys_registrar_is_refused) {
  // The backend's own registrars register their own families' ops: its table builds.
  BOOST_TEST(make_backend("cpu")->capabilities()[at(OpKind::Det)].supported);
  // Det is linalg: the resampling registrar may not register it.
  const cpu::KernelFamilyFile det_in_resampling[] = {
      {OpFamily::Resampling, [](cpu::KernelTable& table) {
         table[at(OpKind::Det)] = {&select_nothing, kFloatTypes};
       }}};
  expect_logic_error(
      [&] { cpu::build_kernel_table(det_in_resampling); },
      "CPU kernels: Det (family linalg) is registered by register_resampling_kernels "
      "(kernels/resampling[_<part>].cpp)");
  // Nor is a family's registrar listed under another family: its first op is named.
  const cpu::KernelFamilyFile linalg_as_loss[] = {
      {OpFamily::Resampling, cpu::register_resampling_kernels},
      {OpFamily::Loss, cpu::register_linalg_kernels}};
  expect_logic_error([&] { cpu::build_kernel_table(linalg_as_loss); },
                     "CPU kernels: MatMul (family linalg) is registered by "
                     "register_loss_kernels (kernels/loss[_<part>].cpp)");
  // And an op two registrars register.
  const cpu::KernelFamilyFile linalg_twice[] = {{OpFamily::Linalg, cpu::register_linalg_kernels},
                                                {OpFamily::Linalg, cpu::register_linalg_kernels}};
  expect_logic_error([&] { cpu::build_kernel_table(linalg_twice); },
                     "CPU kernels: MatMul is registered twice, the second time by "
                     "register_linalg_kernels");
  // The same registrars, each under its own family, build.
  const cpu::KernelFamilyFile own_families[] = {
      {OpFamily::Linalg, cpu::register_linalg_kernels},
      {OpFamily::Resampling, cpu::register_resampling_kernels}};
  const cpu::KernelTable table = cpu::build_kernel_table(own_families);
  BOOST_TEST(table[at(OpKind::Det)].select != nullptr);
  BOOST_TEST(table[at(OpKind::GridSample)].select != nullptr);
  BOOST_TEST(table[at(OpKind::Relu)].select == nullptr);
}

}  // namespace
}  // namespace volta
