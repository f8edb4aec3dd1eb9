// ONNX export: every exported model passes the ONNX checker and ONNX's strict type and shape
// inference, and imported back into Volta it computes what the graph computed, bit for bit
// (within a stated tolerance only where ONNX 17 needs a decomposition: Gelu). Refusals name the
// node, the op and what is supported.
#define BOOST_TEST_MODULE onnx_export
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <unistd.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "volta/error.h"
#include "volta/ir/random.h"
#include "volta/model/builtin_models.h"
#include "volta/onnx/export.h"
#include "volta/onnx/model.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta::onnx {
namespace {

namespace fs = std::filesystem;

const Backend& cpu() {
  static const std::unique_ptr<Backend> backend = make_backend("cpu");
  return *backend;
}

// The checker, then ONNX's own type and shape inference in strict mode: it fails on a type
// an op does not accept and on value_info that disagrees with what ONNX infers.
::onnx::ModelProto checked(const std::string& bytes) {
  ::onnx::ModelProto model;
  BOOST_REQUIRE(model.ParseFromString(bytes));
  ::onnx::checker::check_model(model);
  ::onnx::ShapeInferenceOptions strict(/*check_type_val=*/true, /*strict_mode_val=*/1);
  ::onnx::ModelProto inferred = model;
  ::onnx::shape_inference::InferShapes(inferred, ::onnx::OpSchemaRegistry::Instance(), strict);
  return model;
}

std::vector<Tensor> run_graph(const Graph& graph, std::span<const Tensor> inputs,
                              std::vector<Tensor> states = {}) {
  const ExecutionPlan plan = compile(graph, cpu(), DeterminismMode::Strict);
  const std::unique_ptr<ExecutionContext> ctx = cpu().make_context({.threads = 1});
  std::vector<Tensor*> bound(states.size());
  for (size_t i = 0; i < states.size(); ++i) bound[i] = &states[i];
  return execute(plan, cpu(), *ctx, inputs, bound);
}

// The exported model imported by Volta's ONNX importer, run on the CPU backend.
std::vector<Tensor> run_exported(const std::string& bytes, std::span<const Tensor> inputs) {
  const Model model = Model::parse(bytes, "exported.onnx");
  ImportOptions options;
  options.evaluator = make_backend_evaluator(cpu(), DeterminismMode::Strict);
  return run_graph(model.import_for(inputs, options).graph, inputs);
}

// Bit for bit; or, with `tolerance`, within tolerance * max(1, |want|) (NaN where want is NaN).
std::string disagreement(const Tensor& got, const Tensor& want, double tolerance) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    return "got " + std::string(dtype_name(got.dtype())) + " " + got.shape().str() + ", want " +
           std::string(dtype_name(want.dtype())) + " " + want.shape().str();
  }
  if (tolerance == 0.0 || !is_floating(want.dtype())) {
    return got.bit_equal(want) ? "" : "not bit-identical";
  }
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = got.get_double(i);
    const double w = want.get_double(i);
    const bool ok = std::isnan(w)
                        ? std::isnan(g)
                        : g == w || std::fabs(g - w) <= tolerance * std::max(1.0, std::fabs(w));
    if (!ok) {
      return "element " + std::to_string(i) + ": " + std::to_string(g) + " vs " + std::to_string(w);
    }
  }
  return "";
}

// The largest |got - want| / max(1, |want|).
double max_relative_difference(const Tensor& got, const Tensor& want) {
  double worst = 0.0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double w = want.get_double(i);
    worst = std::max(worst, std::fabs(got.get_double(i) - w) / std::max(1.0, std::fabs(w)));
  }
  return worst;
}

template <class F>
void expect_refusal(F&& f, const std::vector<std::string>& phrases) {
  try {
    f();
    BOOST_ERROR("expected a refusal");
  } catch (const VoltaError& e) {
    BOOST_TEST(error_code_name(e.code()) == error_code_name(ErrorCode::InvalidArgument));
    for (const std::string& phrase : phrases) {
      BOOST_TEST(e.message().find(phrase) != std::string::npos,
                 "'" << phrase << "' in: " << e.message());
    }
  }
}

const ::onnx::TensorProto* find_initializer(const ::onnx::ModelProto& model,
                                            const std::string& name) {
  for (const auto& init : model.graph().initializer()) {
    if (init.name() == name) return &init;
  }
  return nullptr;
}

std::vector<std::string> op_types(const ::onnx::ModelProto& model) {
  std::vector<std::string> out;
  for (const auto& node : model.graph().node()) out.push_back(node.op_type());
  return out;
}

// ---- The table ------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(every_op_is_exported_or_refused_with_a_reason) {
  const std::span<const OpExport> table = onnx_export_table();
  BOOST_REQUIRE_EQUAL(table.size(), static_cast<size_t>(kOpCount));
  std::set<std::string_view> refused;
  for (size_t i = 0; i < table.size(); ++i) {
    BOOST_TEST(op_index(table[i].op) == static_cast<int>(i));
    if (table[i].onnx_ops.empty()) {
      refused.insert(op_name(table[i].op));
      BOOST_TEST(!table[i].note.empty(), op_name(table[i].op) << " is refused without a reason");
    }
    // Every ONNX op named exists at opset 17.
    for (std::string_view onnx_op : table[i].onnx_ops) {
      BOOST_TEST(::onnx::OpSchemaRegistry::Schema(std::string(onnx_op), 17, "") != nullptr,
                 onnx_op << " (for " << op_name(table[i].op) << ") is not an opset 17 op");
    }
  }
  // ConvGradFilter has no ONNX op; the bitwise ops are opset 18's, BitCast opset 26's.
  BOOST_TEST(refused == (std::set<std::string_view>{"ConvGradFilter", "BitwiseAnd", "BitwiseOr",
                                                    "BitwiseXor", "BitwiseNot", "BitCast"}));
}

// ---- The built-in models ----------------------------------------------------------------------

void check_built_in_model(std::string_view name, double tolerance) {
  const BuiltInModel* m = find_built_in_model(name);
  BOOST_REQUIRE(m != nullptr);
  const Graph graph = m->graph(m->default_batch);
  const std::string bytes = export_onnx(graph, {});
  const ::onnx::ModelProto model = checked(bytes);
  BOOST_TEST(model.opset_import(0).version() == 17);
  BOOST_TEST(model.producer_name() == "volta");
  BOOST_TEST(model.graph().input_size() == 1);
  BOOST_TEST(model.graph().input(0).name() == "x");
  // Parameters are initializers of exactly their bytes.
  for (ValueId p : graph.parameters()) {
    const Tensor& data = graph.parameter_data(p);
    const ::onnx::TensorProto* init = find_initializer(model, graph.value(p).name);
    BOOST_REQUIRE(init != nullptr);
    BOOST_TEST(init->raw_data() ==
               std::string(static_cast<const char*>(data.data()), data.nbytes()));
    BOOST_TEST(std::vector<int64_t>(init->dims().begin(), init->dims().end()) ==
               data.shape().dims());
  }
  const std::vector<Tensor> inputs = {m->input(m->default_batch)};
  const std::vector<Tensor> want = run_graph(graph, inputs);
  const std::vector<Tensor> got = run_exported(bytes, inputs);
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    BOOST_TEST(disagreement(got[i], want[i], tolerance) == "", name << " output " << i);
    BOOST_TEST_MESSAGE(name << " output " << i << ": largest relative difference "
                            << max_relative_difference(got[i], want[i]));
  }
}

BOOST_AUTO_TEST_CASE(mlp_and_cnn_round_trip_bit_for_bit) {
  check_built_in_model("mlp", 0.0);
  check_built_in_model("cnn", 0.0);
}

// Gelu is ONNX opset 20: the export writes its definition, x * 0.5 * (1 + erf(x / sqrt(2))), as
// five ops, each rounded, where Volta's kernel rounds once. The rest of the block is bit-exact
// (the parity sweep below checks each op), so the block agrees within 1e-6 of max(1, |y|).
BOOST_AUTO_TEST_CASE(transformer_block_round_trips_within_the_gelu_decomposition) {
  check_built_in_model("transformer-block", 1e-6);
  const std::vector<std::string> ops =
      op_types(checked(export_onnx(find_built_in_model("transformer-block")->graph(1), {})));
  BOOST_TEST(std::count(ops.begin(), ops.end(), "Erf") == 1);
  BOOST_TEST(std::count(ops.begin(), ops.end(), "Gelu") == 0);
}

// The regression problem's block holds its weights as states: the caller's values become the
// initializers, byte for byte.
BOOST_AUTO_TEST_CASE(states_become_initializers_of_the_values_given) {
  TransformerBlockConfig config;
  TrainingProblem problem = transformer_block_regression(config);
  const std::string bytes = export_onnx(problem.forward, problem.initial_states);
  const ::onnx::ModelProto model = checked(bytes);
  for (size_t i = 0; i < problem.initial_states.size(); ++i) {
    const Tensor& value = problem.initial_states[i];
    const ::onnx::TensorProto* init =
        find_initializer(model, problem.forward.value(problem.forward.states()[i]).name);
    BOOST_REQUIRE(init != nullptr);
    BOOST_TEST(init->raw_data() ==
               std::string(static_cast<const char*>(value.data()), value.nbytes()));
  }
  BOOST_TEST(model.graph().input_size() == 2);  // x and target; no state is an input
  const std::vector<Tensor> want =
      run_graph(problem.forward, problem.batch, problem.initial_states);
  const std::vector<Tensor> got = run_exported(bytes, problem.batch);
  BOOST_TEST(disagreement(got.at(0), want.at(0), 1e-6) == "");
}

// ---- The ops of the tiny transformer LM ---------------------------------------------------------

// The LM's inference graph (volta/model/transformer_lm.h): byte tokens -> Gather (token
// embedding) + position embedding -> pre-LN attention with an additive causal mask -> Gelu MLP
// -> final LayerNorm -> LM head; its weights are states.
struct LmGraph {
  Graph graph;
  std::vector<Tensor> states;
};

LmGraph lm_like_graph(int64_t batch, int64_t seq, int64_t vocab, int64_t d, int64_t heads) {
  LmGraph lm;
  Graph& g = lm.graph;
  uint64_t stream = 0;
  auto state = [&](const std::string& name, const Shape& shape, double scale) {
    lm.states.push_back(random_tensor(DType::F32, shape, 5, -scale, scale, ++stream));
    return g.add_state(name, DType::F32, shape);
  };
  auto linear = [&](ValueId x, const std::string& name, int64_t in, int64_t out) {
    const ValueId y = g.add(OpKind::MatMul, {x, state(name + ".weight", Shape{in, out}, 0.3)});
    return g.add(OpKind::Add, {y, state(name + ".bias", Shape{out}, 0.1)});
  };
  auto norm = [&](ValueId x, const std::string& name) {
    return g.add(OpKind::LayerNormalization,
                 {x, state(name + ".scale", Shape{d}, 1.0), state(name + ".bias", Shape{d}, 0.1)},
                 {{"axis", int64_t{-1}}, {"epsilon", 1e-5}}, name);
  };
  const int64_t hd = d / heads;
  auto heads_of = [&](ValueId x, std::vector<int64_t> perm) {
    const ValueId r =
        g.add(OpKind::Reshape, {x}, {{"shape", std::vector<int64_t>{batch, seq, heads, hd}}});
    return g.add(OpKind::Transpose, {r}, {{"perm", std::move(perm)}});
  };
  const ValueId tokens = g.add_input("tokens", DType::I64, Shape{batch, seq});
  const ValueId embedded =
      g.add(OpKind::Gather, {state("embed.weight", Shape{vocab, d}, 1.0), tokens},
            {{"axis", int64_t{0}}}, "embed");
  const ValueId h0 = g.add(OpKind::Add, {embedded, state("pos.weight", Shape{seq, d}, 0.5)});
  const ValueId ln = norm(h0, "ln1");
  const ValueId q = heads_of(linear(ln, "q", d, d), {0, 2, 1, 3});
  const ValueId k = heads_of(linear(ln, "k", d, d), {0, 2, 3, 1});
  const ValueId v = heads_of(linear(ln, "v", d, d), {0, 2, 1, 3});
  Tensor scale(DType::F32, Shape{});
  scale.set_double(0, 1.0 / std::sqrt(static_cast<double>(hd)));
  Tensor mask(DType::F32, Shape{seq, seq});
  for (int64_t i = 0; i < seq; ++i) {
    for (int64_t j = 0; j < seq; ++j) {
      mask.set_double(i * seq + j, j <= i ? 0.0 : -std::numeric_limits<double>::infinity());
    }
  }
  ValueId scores = g.add(OpKind::Mul, {g.add(OpKind::MatMul, {q, k}),
                                       g.add_parameter("attn.scale", std::move(scale))});
  scores = g.add(OpKind::Add, {scores, g.add_parameter("attn.causal_mask", std::move(mask))});
  const ValueId probs = g.add(OpKind::Softmax, {scores}, {{"axis", int64_t{-1}}});
  ValueId ctx = g.add(OpKind::MatMul, {probs, v});
  ctx = g.add(OpKind::Transpose, {ctx}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
  ctx = g.add(OpKind::Reshape, {ctx}, {{"shape", std::vector<int64_t>{batch, seq, d}}});
  const ValueId h1 = g.add(OpKind::Add, {h0, linear(ctx, "o", d, d)});
  const ValueId ff = g.add(OpKind::Gelu, {linear(norm(h1, "ln2"), "up", d, 4 * d)});
  const ValueId h2 = g.add(OpKind::Add, {h1, linear(ff, "down", 4 * d, d)});
  g.set_outputs(
      {g.add(OpKind::MatMul, {norm(h2, "ln_f"), state("head.weight", Shape{d, vocab}, 0.3)}, {},
             "logits")});
  return lm;
}

BOOST_AUTO_TEST_CASE(the_language_models_ops_export) {
  const LmGraph lm = lm_like_graph(2, 8, 256, 32, 4);
  const std::string bytes = export_onnx(lm.graph, lm.states);
  const ::onnx::ModelProto model = checked(bytes);
  BOOST_TEST(model.graph().input(0).type().tensor_type().elem_type() == ::onnx::TensorProto::INT64);
  Tensor tokens(DType::I64, Shape{2, 8});
  for (int64_t i = 0; i < tokens.numel(); ++i) tokens.set_int(i, (i * 37 + 11) % 256);
  const std::vector<Tensor> inputs = {tokens};
  const std::vector<Tensor> want = run_graph(lm.graph, inputs, lm.states);
  const std::vector<Tensor> got = run_exported(bytes, inputs);
  BOOST_TEST(disagreement(got.at(0), want.at(0), 1e-6) == "");
  BOOST_TEST_MESSAGE("LM logits: largest relative difference "
                     << max_relative_difference(got.at(0), want.at(0)));
}

// Graph outputs that are inputs or repeat another output are written through Identity, so
// every ONNX output is its own node output.
BOOST_AUTO_TEST_CASE(outputs_that_are_inputs_or_repeats_round_trip) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{2, 3});
  const ValueId y = g.add(OpKind::Relu, {x}, {}, "y");
  g.set_outputs({x, y, y});
  const std::string bytes = export_onnx(g, {});
  const ::onnx::ModelProto model = checked(bytes);
  std::set<std::string> names;
  for (const auto& out : model.graph().output()) names.insert(out.name());
  BOOST_TEST(names.size() == 3u);
  const std::vector<Tensor> inputs = {random_tensor(DType::F32, Shape{2, 3}, 3, -1.0, 1.0)};
  const std::vector<Tensor> want = run_graph(g, inputs);
  const std::vector<Tensor> got = run_exported(bytes, inputs);
  BOOST_REQUIRE_EQUAL(got.size(), 3u);
  for (size_t i = 0; i < 3; ++i) BOOST_TEST(got[i].bit_equal(want[i]));
}

// The checks the exports pass can fail: a declared shape ONNX infers otherwise is rejected.
BOOST_AUTO_TEST_CASE(the_checks_reject_a_wrong_declared_shape) {
  ::onnx::ModelProto model;
  BOOST_REQUIRE(model.ParseFromString(export_onnx(mlp_graph(2), {})));
  BOOST_REQUIRE(model.graph().value_info_size() > 0);
  model.mutable_graph()
      ->mutable_value_info(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_value(3);
  BOOST_CHECK_THROW(checked(model.SerializeAsString()), std::exception);
}

// ---- Refusals
// -------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(conv_grad_filter_is_refused_naming_the_node) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F32, Shape{1, 2, 5, 5});
  const ValueId dy = g.add_input("dy", DType::F32, Shape{1, 3, 3, 3});
  g.set_outputs({g.add(OpKind::ConvGradFilter, {x, dy},
                       {{"kernel_shape", std::vector<int64_t>{3, 3}}}, "conv1.grad_w")});
  expect_refusal([&] { export_onnx(g, {}); },
                 {"node 'conv1.grad_w' (ConvGradFilter)", "backward-only", "supported:"});
}

BOOST_AUTO_TEST_CASE(only_opset_17_is_written) {
  const Graph g = mlp_graph(2);
  for (int64_t opset : {16, 18}) {
    expect_refusal([&] { export_onnx(g, {}, {.opset = opset}); },
                   {"opset " + std::to_string(opset), "supported: opset 17"});
  }
}

BOOST_AUTO_TEST_CASE(training_graphs_and_wrong_state_values_are_refused) {
  Graph g;
  const ValueId w = g.add_state("w", DType::F32, Shape{3});
  const ValueId x = g.add_input("x", DType::F32, Shape{3});
  const ValueId y = g.add(OpKind::Mul, {x, w});
  g.set_outputs({y});
  expect_refusal([&] { export_onnx(g, {}); }, {"1 states but 0 values"});
  const std::vector<Tensor> wrong = {Tensor(DType::F32, Shape{4})};
  expect_refusal([&] { export_onnx(g, wrong); }, {"state 'w' is f32 [3]", "f32 [4]"});
  g.set_state_update(w, g.add(OpKind::Add, {w, x}));
  const std::vector<Tensor> right = {Tensor(DType::F32, Shape{3})};
  expect_refusal([&] { export_onnx(g, right); }, {"updates state 'w'", "supported: inference"});
}

BOOST_AUTO_TEST_CASE(mean_and_inv_std_dev_of_f64_data_are_refused) {
  Graph g;
  const ValueId x = g.add_input("x", DType::F64, Shape{2, 4});
  const ValueId s = g.add_input("s", DType::F64, Shape{4});
  const std::vector<ValueId> outs = g.add_node(OpKind::LayerNormalization, {x, s}, {}, "ln", 2);
  g.set_outputs({outs[0], outs[1]});
  expect_refusal([&] { export_onnx(g, {}); }, {"node 'ln' (LayerNormalization)", "f32"});
  g.set_outputs({outs[0]});  // Y alone is fine
  checked(export_onnx(g, {}));
}

// ---- Files
// ------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(files_are_written_atomically) {
  const fs::path dir =
      fs::temp_directory_path() / ("volta_export_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path file = dir / "mlp.onnx";
  const Graph mlp = mlp_graph(4);
  export_onnx_file(mlp, file, {});
  const Model loaded = Model::load(file);
  BOOST_TEST(loaded.producer() == "volta");
  const auto size = fs::file_size(file);

  // A refused graph leaves the previous file as it was, and no temporary beside it.
  Graph bad;
  const ValueId x = bad.add_input("x", DType::F32, Shape{1, 1, 3, 3});
  bad.set_outputs(
      {bad.add(OpKind::ConvGradFilter, {x, x}, {{"kernel_shape", std::vector<int64_t>{1, 1}}})});
  expect_refusal([&] { export_onnx_file(bad, file, {}); }, {"ConvGradFilter"});
  BOOST_TEST(fs::file_size(file) == size);
  BOOST_TEST(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}) == 1);

  // An unwritable place is a clear error naming it.
  expect_refusal([&] { export_onnx_file(mlp, dir / "missing" / "m.onnx", {}); },
                 {"cannot create", "missing"});
  fs::remove_all(dir);
}

}  // namespace
}  // namespace volta::onnx
