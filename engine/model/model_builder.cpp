#include "volta/model/model_builder.h"

#include <cmath>
#include <utility>

#include "volta/ir/random.h"

namespace volta::model {
namespace {

constexpr double kEmbeddingBound = 0.02 * 1.7320508075688772;  // std 0.02: 0.02 * sqrt(3)
constexpr double kLayerNormEpsilon = 1e-5;

std::vector<int64_t> dims(std::initializer_list<int64_t> values) { return values; }

}  // namespace

std::string join_name(std::string_view prefix, std::string_view leaf) {
  if (prefix.empty()) return std::string(leaf);
  std::string name(prefix);
  name += '.';
  name += leaf;
  return name;
}

uint64_t weight_stream(std::string_view name) {
  uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a 64: offset basis and prime
  for (const char c : name) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

Tensor initial_weight(const WeightSpec& spec, uint64_t seed) {
  if (spec.init.kind == WeightInit::Kind::Uniform) {
    const double b = spec.init.value;
    return random_tensor(spec.dtype, spec.shape, seed, -b, b, weight_stream(spec.name));
  }
  Tensor t(spec.dtype, spec.shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_double(i, spec.init.value);
  return t;
}

ModelBuilder::ModelBuilder(Graph& graph, DType dtype, WeightStorage storage, uint64_t seed)
    : graph_(graph), dtype_(dtype), storage_(storage), seed_(seed) {}

ValueId ModelBuilder::weight(const std::string& name, const Shape& shape, WeightInit init) {
  WeightSpec spec{.name = name, .dtype = dtype_, .shape = shape, .init = init};
  const ValueId id = storage_ == WeightStorage::States
                         ? graph_.add_state(name, dtype_, shape)
                         : graph_.add_parameter(name, initial_weight(spec, seed_));
  weights_.push_back(std::move(spec));
  return id;
}

ValueId ModelBuilder::constant(const std::string& name, Tensor data) {
  return graph_.add_parameter(name, std::move(data));
}

Tensor ModelBuilder::scalar(double value) const {
  Tensor t(dtype_, Shape{});
  t.set_double(0, value);
  return t;
}

ValueId ModelBuilder::linear(ValueId x, const std::string& name, int64_t in, int64_t out,
                             bool bias) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(in));
  const ValueId w = weight(join_name(name, "weight"), Shape{in, out}, WeightInit::uniform(bound));
  if (!bias) return graph_.add(OpKind::MatMul, {x, w}, {}, name);
  const ValueId y = graph_.add(OpKind::MatMul, {x, w}, {}, join_name(name, "matmul"));
  const ValueId b = weight(join_name(name, "bias"), Shape{out}, WeightInit::constant(0));
  return graph_.add(OpKind::Add, {y, b}, {}, name);
}

ValueId ModelBuilder::embedding(ValueId ids, const std::string& name, int64_t rows, int64_t dim) {
  const ValueId table =
      weight(join_name(name, "weight"), Shape{rows, dim}, WeightInit::uniform(kEmbeddingBound));
  return graph_.add(OpKind::Gather, {table, ids}, {{"axis", int64_t{0}}}, name);
}

ValueId ModelBuilder::layer_norm(ValueId x, const std::string& name, int64_t dim) {
  const ValueId scale = weight(join_name(name, "scale"), Shape{dim}, WeightInit::constant(1));
  const ValueId bias = weight(join_name(name, "bias"), Shape{dim}, WeightInit::constant(0));
  return graph_.add(OpKind::LayerNormalization, {x, scale, bias},
                    {{"axis", int64_t{-1}}, {"epsilon", kLayerNormEpsilon}}, name);
}

ValueId ModelBuilder::causal_self_attention(ValueId x, const std::string& name,
                                            const AttentionShape& s) {
  if (s.heads <= 0 || s.d_model % s.heads != 0) {
    fail(ErrorCode::InvalidArgument,
         "attention '" + name + "': d_model " + std::to_string(s.d_model) +
             " must be a positive multiple of heads " + std::to_string(s.heads));
  }
  const int64_t head_dim = s.d_model / s.heads;
  const auto n = [&](std::string_view leaf) { return join_name(name, leaf); };
  // [batch, seq, d_model] -> [batch, heads, seq, head_dim] (K: [batch, heads, head_dim, seq],
  // so the scores are one MatMul without a transposed operand).
  const auto heads = [&](std::string_view which, std::vector<int64_t> perm) {
    const std::string layer = n(which);
    const ValueId y = linear(x, layer, s.d_model, s.d_model);
    const ValueId split =
        graph_.add(OpKind::Reshape, {y}, {{"shape", dims({s.batch, s.seq, s.heads, head_dim})}},
                   join_name(layer, "reshape"));
    return graph_.add(OpKind::Transpose, {split}, {{"perm", std::move(perm)}},
                      join_name(layer, "heads"));
  };
  const ValueId q = heads("q", {0, 2, 1, 3});
  const ValueId k = heads("k", {0, 2, 3, 1});
  const ValueId v = heads("v", {0, 2, 1, 3});

  ValueId scores = graph_.add(OpKind::MatMul, {q, k}, {}, n("scores"));
  const ValueId scale =
      constant(n("scale"), scalar(1.0 / std::sqrt(static_cast<double>(head_dim))));
  scores = graph_.add(OpKind::Mul, {scores, scale}, {}, n("scaled"));
  Tensor mask(dtype_, Shape{s.seq, s.seq});
  for (int64_t query = 0; query < s.seq; ++query) {
    for (int64_t key = 0; key < s.seq; ++key) {
      mask.set_double(query * s.seq + key, key <= query ? 0.0 : kMaskedScore);
    }
  }
  scores = graph_.add(OpKind::Add, {scores, constant(n("mask"), std::move(mask))}, {},
                      n("masked_scores"));
  const ValueId probs = graph_.add(OpKind::Softmax, {scores}, {{"axis", int64_t{-1}}}, n("probs"));
  ValueId context = graph_.add(OpKind::MatMul, {probs, v}, {}, n("context"));
  context = graph_.add(OpKind::Transpose, {context}, {{"perm", dims({0, 2, 1, 3})}}, n("merge"));
  context = graph_.add(OpKind::Reshape, {context}, {{"shape", dims({s.batch, s.seq, s.d_model})}},
                       n("merged"));
  return linear(context, n("out"), s.d_model, s.d_model);
}

ValueId ModelBuilder::gelu_mlp(ValueId x, const std::string& name, int64_t d_model, int64_t d_ff) {
  ValueId h = linear(x, join_name(name, "up"), d_model, d_ff);
  h = graph_.add(OpKind::Gelu, {h}, {{"approximate", std::string("none")}},
                 join_name(name, "gelu"));
  return linear(h, join_name(name, "down"), d_ff, d_model);
}

ValueId ModelBuilder::pre_ln_block(ValueId x, const std::string& name, const AttentionShape& s,
                                   int64_t d_ff) {
  const auto n = [&](std::string_view leaf) { return join_name(name, leaf); };
  const ValueId attn = causal_self_attention(layer_norm(x, n("ln1"), s.d_model), n("attn"), s);
  const ValueId h = graph_.add(OpKind::Add, {x, attn}, {}, n("residual1"));
  const ValueId mlp = gelu_mlp(layer_norm(h, n("ln2"), s.d_model), n("mlp"), s.d_model, d_ff);
  return graph_.add(OpKind::Add, {h, mlp}, {}, n("residual2"));
}

}  // namespace volta::model
