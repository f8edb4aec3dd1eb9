// LinearAttention (27) unrolled over its (static) sequence length, as the RNN lowerings are: each
// step decays the recurrent state [B, H_kv, d_k, d_v] (gated rules), corrects the value by what
// the state already retrieves for the key (delta rules), adds the key-value outer product and
// reads the state with each query, in ONNX's reference implementation's order of operations.
// Grouped query heads read their key-value head's state: query head h = kv * G + g, so the
// queries are viewed as [B, H_kv, G, d_k] and multiply the state directly, with no repeat.

#include <cmath>
#include <string>

#include "lowering.h"

namespace volta::onnx {
namespace {

// The most steps unrolled: each is about a dozen nodes.
constexpr int64_t kMaxSteps = 1024;

class LinearAttentionLowering {
 public:
  explicit LinearAttentionLowering(LoweringContext& ctx) : ctx_(ctx) {}
  void lower();

 private:
  ValueId add(OpKind op, std::vector<ValueId> in, Attributes attrs = {}) {
    return ctx_.add(op, std::move(in), std::move(attrs));
  }
  ValueId reshape(ValueId v, Ints shape) { return add(OpKind::Reshape, {v}, {{"shape", shape}}); }
  // Step t of a [B, H, T, ...] value: [B, H, 1, ...].
  ValueId step(ValueId v, int64_t t) {
    return add(OpKind::Slice, {v}, {{"starts", Ints{t}}, {"ends", Ints{t + 1}}, {"axes", Ints{2}}});
  }
  // A packed [B, T, heads * width] input as [B, heads, T, width].
  ValueId unpack(int input, int64_t heads, int64_t width) {
    return add(OpKind::Transpose, {reshape(ctx_.input(input), {b_, t_, heads, width})},
               {{"perm", Ints{0, 2, 1, 3}}});
  }
  // A rank-3 [B, T, last] input of the model's dtype; returns last.
  int64_t check_packed(int input, std::string_view name);
  bool given(int input) const { return ctx_.num_inputs() > input && ctx_.has_input(input); }

  LoweringContext& ctx_;
  DType dtype_ = DType::F32;
  int64_t b_ = 0, t_ = 0;
};

int64_t LinearAttentionLowering::check_packed(int input, std::string_view name) {
  const TypeInfo& type = ctx_.input_type(input);
  if (type.dtype != dtype_) {
    ctx_.unsupported(std::string(name) + " of dtype " + std::string(dtype_name(type.dtype)) +
                     " with query of " + std::string(dtype_name(dtype_)) +
                     "; supported: every input of query's dtype");
  }
  if (type.shape.rank() != 3 || type.shape[0] != b_ || type.shape[1] != t_) {
    ctx_.invalid(std::string(name) + " " + type.shape.str() + " must be rank 3 [" +
                 std::to_string(b_) + ", " + std::to_string(t_) + ", ...]");
  }
  return type.shape[2];
}

void LinearAttentionLowering::lower() {
  const TypeInfo& query = ctx_.input_type(0);
  dtype_ = query.dtype;
  if (!kFloatTypes.contains(dtype_)) {
    ctx_.unsupported("query of dtype " + std::string(dtype_name(dtype_)) + "; supported: f32, f64");
  }
  const std::string rule = ctx_.attr_string("update_rule", "gated_delta");
  if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta") {
    ctx_.unsupported("update_rule '" + rule + "'; supported: linear, gated, delta, gated_delta");
  }
  const bool gated = rule == "gated" || rule == "gated_delta";
  const bool delta = rule == "delta" || rule == "gated_delta";
  const int64_t hq = ctx_.attr_int("q_num_heads", std::nullopt);
  const int64_t hkv = ctx_.attr_int("kv_num_heads", std::nullopt);
  ctx_.attr_int("chunk_size", 0);  // a tuning hint of chunked kernels: no effect on the result
  const double scale_attr = ctx_.attr_float("scale", 0.0);
  if (hq <= 0 || hkv <= 0 || hq % hkv != 0) {
    ctx_.invalid("q_num_heads " + std::to_string(hq) + " must be a positive multiple of " +
                 "kv_num_heads " + std::to_string(hkv));
  }
  if (query.shape.rank() != 3) ctx_.invalid("query " + query.shape.str() + " must be rank 3");
  b_ = query.shape[0];
  t_ = query.shape[1];
  if (t_ > kMaxSteps) {
    ctx_.unsupported("a sequence of " + std::to_string(t_) + " steps; supported: at most " +
                     std::to_string(kMaxSteps) + " (the recurrence is unrolled)");
  }
  const int64_t qk_width = check_packed(0, "query");
  const int64_t k_width = check_packed(1, "key");
  const int64_t v_width = check_packed(2, "value");
  if (qk_width % hq != 0 || v_width % hkv != 0 || k_width != hkv * (qk_width / hq)) {
    ctx_.invalid("query, key and value widths " + std::to_string(qk_width) + ", " +
                 std::to_string(k_width) + ", " + std::to_string(v_width) +
                 " do not split into q_num_heads " + std::to_string(hq) + " and kv_num_heads " +
                 std::to_string(hkv) + " heads of one d_k");
  }
  const int64_t dk = qk_width / hq;
  const int64_t dv = v_width / hkv;
  const int64_t group = hq / hkv;
  if (gated != given(4)) {
    ctx_.invalid("update_rule '" + rule + "' " + (gated ? "requires" : "forbids") +
                 " the decay input");
  }
  if (delta != given(5)) {
    ctx_.invalid("update_rule '" + rule + "' " + (delta ? "requires" : "forbids") +
                 " the beta input");
  }
  const Ints state_shape = {b_, hkv, dk, dv};
  ValueId state = ctx_.constant(Tensor(dtype_, Shape(state_shape)));
  if (given(3)) {
    const TypeInfo& past = ctx_.input_type(3);
    if (past.dtype != dtype_ || past.shape.dims() != state_shape) {
      ctx_.invalid("past_state " + type_text(past) + " must be " + std::string(dtype_name(dtype_)) +
                   Shape(state_shape).str());
    }
    state = ctx_.input(3);
  }
  // Queries [B, H_kv, T, G * d_k] (a step reshaped to [B, H_kv, G, d_k]), keys [B, H_kv, T, d_k],
  // values [B, H_kv, T, d_v].
  const ValueId q = unpack(0, hkv, group * dk);
  const ValueId k = unpack(1, hkv, dk);
  const ValueId v = unpack(2, hkv, dv);
  ValueId decay_factor = ValueId{};
  int64_t decay_width = 0;
  if (gated) {
    const int64_t width = check_packed(4, "decay");
    if (width != hkv && width != hkv * dk) {
      ctx_.invalid("decay's last dim " + std::to_string(width) + " must be kv_num_heads (" +
                   std::to_string(hkv) + ") or kv_num_heads * d_k (" + std::to_string(hkv * dk) +
                   ")");
    }
    decay_width = width / hkv;
    decay_factor = add(OpKind::Exp, {unpack(4, hkv, decay_width)});  // [B, H_kv, T, d_k or 1]
  }
  ValueId beta = ValueId{};
  int64_t beta_heads = 0;
  if (delta) {
    beta_heads = check_packed(5, "beta");
    if (beta_heads != hkv && beta_heads != 1) {
      ctx_.invalid("beta's last dim " + std::to_string(beta_heads) + " must be kv_num_heads (" +
                   std::to_string(hkv) + ") or 1");
    }
    beta = unpack(5, beta_heads, 1);  // [B, H_kv or 1, T, 1]
  }
  std::vector<ValueId> outputs;
  for (int64_t t = 0; t < t_; ++t) {
    if (gated) {
      // exp(g_t) per key dim (or head), broadcast over d_v.
      state = add(OpKind::Mul, {state, reshape(step(decay_factor, t), {b_, hkv, decay_width, 1})});
    }
    const ValueId k_row = step(k, t);  // [B, H_kv, 1, d_k]
    ValueId v_row = step(v, t);        // [B, H_kv, 1, d_v]
    if (delta) {
      const ValueId retrieved = add(OpKind::MatMul, {k_row, state});  // S^T k_t
      v_row = add(OpKind::Mul, {step(beta, t), add(OpKind::Sub, {v_row, retrieved})});
    }
    const ValueId k_col = reshape(k_row, {b_, hkv, dk, 1});
    state = add(OpKind::Add, {state, add(OpKind::Mul, {k_col, v_row})});
    const ValueId q_t = reshape(step(q, t), {b_, hkv, group, dk});
    outputs.push_back(reshape(add(OpKind::MatMul, {q_t, state}), {b_, 1, hq * dv}));
  }
  ValueId out =
      outputs.size() == 1 ? outputs.front() : add(OpKind::Concat, outputs, {{"axis", int64_t{1}}});
  const double scale = scale_attr == 0.0 ? 1.0 / std::sqrt(static_cast<double>(dk)) : scale_attr;
  out = add(OpKind::Mul, {scalar_constant(ctx_, dtype_, scale), out});
  ctx_.set_output(0, out);
  if (ctx_.has_output(1)) ctx_.set_output(1, state);
}

void lower_linear_attention(LoweringContext& ctx) { LinearAttentionLowering(ctx).lower(); }

}  // namespace

void register_linalg_recurrent_lowerings(LoweringTable& table) {
  table.add_composite("LinearAttention", OpFamily::Linalg, 27, &lower_linear_attention);
}

}  // namespace volta::onnx
