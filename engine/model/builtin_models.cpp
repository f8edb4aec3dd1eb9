#include "volta/model/builtin_models.h"

#include <cmath>

#include "volta/ir/random.h"

namespace volta {

Graph transformer_block_graph(const TransformerBlockConfig& c) {
  if (c.heads <= 0 || c.d_model % c.heads != 0) {
    fail(ErrorCode::InvalidArgument, "transformer block: d_model " + std::to_string(c.d_model) +
                                         " must be a positive multiple of heads " +
                                         std::to_string(c.heads));
  }
  const int64_t head_dim = c.d_model / c.heads;
  Graph g;
  uint64_t stream = 0;
  auto param = [&](const std::string& name, const Shape& shape, double scale) {
    return g.add_parameter(name, random_tensor(c.dtype, shape, c.seed, -scale, scale, ++stream));
  };
  auto ones = [&](const std::string& name, int64_t n, double value) {
    Tensor t(c.dtype, Shape{n});
    for (int64_t i = 0; i < n; ++i) t.set_double(i, value);
    return g.add_parameter(name, std::move(t));
  };
  auto linear = [&](ValueId x, const std::string& name, int64_t in, int64_t out) {
    const double scale = 1.0 / std::sqrt(static_cast<double>(in));
    ValueId y = g.add(OpKind::MatMul, {x, param(name + ".weight", Shape{in, out}, scale)}, {},
                      name + ".matmul");
    return g.add(OpKind::Add, {y, param(name + ".bias", Shape{out}, 0.1)}, {}, name);
  };
  auto layer_norm = [&](ValueId x, const std::string& name) {
    return g.add(OpKind::LayerNormalization,
                 {x, ones(name + ".scale", c.d_model, 1.0), ones(name + ".bias", c.d_model, 0.0)},
                 {{"axis", int64_t{-1}}, {"epsilon", 1e-5}}, name);
  };
  auto split_heads = [&](ValueId x, const std::string& name, std::vector<int64_t> perm) {
    ValueId r = g.add(OpKind::Reshape, {x},
                      {{"shape", std::vector<int64_t>{c.batch, c.seq, c.heads, head_dim}}},
                      name + ".reshape");
    return g.add(OpKind::Transpose, {r}, {{"perm", std::move(perm)}}, name + ".heads");
  };

  const ValueId x = g.add_input("x", c.dtype, Shape{c.batch, c.seq, c.d_model});
  const ValueId ln1 = layer_norm(x, "ln1");
  const ValueId q = split_heads(linear(ln1, "attn.q", c.d_model, c.d_model), "q", {0, 2, 1, 3});
  const ValueId k = split_heads(linear(ln1, "attn.k", c.d_model, c.d_model), "k", {0, 2, 3, 1});
  const ValueId v = split_heads(linear(ln1, "attn.v", c.d_model, c.d_model), "v", {0, 2, 1, 3});

  Tensor scale(c.dtype, Shape{});
  scale.set_double(0, 1.0 / std::sqrt(static_cast<double>(head_dim)));
  ValueId scores = g.add(OpKind::MatMul, {q, k}, {}, "attn.scores");
  scores = g.add(OpKind::Mul, {scores, g.add_parameter("attn.scale", std::move(scale))}, {},
                 "attn.scaled");
  Tensor causal(DType::Bool, Shape{c.seq, c.seq});
  for (int64_t i = 0; i < c.seq; ++i) {
    for (int64_t j = 0; j < c.seq; ++j) causal.set_int(i * c.seq + j, j <= i ? 1 : 0);
  }
  Tensor masked(c.dtype, Shape{});
  masked.set_double(0, -1e9);
  scores = g.add(OpKind::Where,
                 {g.add_parameter("attn.causal", std::move(causal)), scores,
                  g.add_parameter("attn.masked", std::move(masked))},
                 {}, "attn.masked_scores");
  const ValueId probs = g.add(OpKind::Softmax, {scores}, {{"axis", int64_t{-1}}}, "attn.probs");
  ValueId attn = g.add(OpKind::MatMul, {probs, v}, {}, "attn.context");
  attn =
      g.add(OpKind::Transpose, {attn}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}}, "attn.merge");
  attn = g.add(OpKind::Reshape, {attn},
               {{"shape", std::vector<int64_t>{c.batch, c.seq, c.d_model}}}, "attn.merged");
  attn = linear(attn, "attn.out", c.d_model, c.d_model);
  const ValueId h = g.add(OpKind::Add, {x, attn}, {}, "residual1");

  ValueId ff = linear(layer_norm(h, "ln2"), "mlp.up", c.d_model, c.d_ff);
  ff = g.add(OpKind::Gelu, {ff}, {}, "mlp.gelu");
  ff = linear(ff, "mlp.down", c.d_ff, c.d_model);
  g.set_outputs({g.add(OpKind::Add, {h, ff}, {}, "residual2")});
  return g;
}

}  // namespace volta
