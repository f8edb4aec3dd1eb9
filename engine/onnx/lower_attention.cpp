// ONNX Attention (versions 23, 24, 25), RotaryEmbedding (23) and FlexAttention (ai.onnx.preview
// 1), composed of MatMul, Softmax and elementwise and movement ops with the arithmetic of ONNX's
// reference implementation (onnx/reference/ops/op_attention.py, op_rotary_embedding.py,
// aionnx_preview/op_flex_attention.py). Both are reported under Linalg:
// attention is two batched MatMuls around a row softmax, a rotary embedding a 2x2 rotation of
// each pair of features, and the family already holds the unrolled RNNs, composites of the same
// kind.

#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "lowering.h"

namespace volta::onnx {
namespace {

using K = OpKind;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

std::string str(int64_t v) { return std::to_string(v); }

void require_float_dtype(LoweringContext& ctx, std::string_view what, DType dtype) {
  if (!(kFloatTypes | kHalfTypes).contains(dtype)) {
    ctx.unsupported(std::string(what) + " of dtype " + std::string(dtype_name(dtype)) +
                    "; supported: " + (kFloatTypes | kHalfTypes).str());
  }
}

void require_arity(LoweringContext& ctx, int max_inputs, int max_outputs) {
  if (ctx.num_inputs() > max_inputs || ctx.num_outputs() > max_outputs) {
    ctx.invalid("has " + str(ctx.num_inputs()) + " inputs and " + str(ctx.num_outputs()) +
                " outputs; version " + str(ctx.since_version()) + " takes at most " +
                str(max_inputs) + " and " + str(max_outputs));
  }
}

// np.repeat(kv, reps, axis=1) of a [batch, heads, seq, size] value: each KV head serves `reps`
// consecutive query heads.
ValueId repeat_heads(LoweringContext& ctx, ValueId kv, int64_t reps) {
  const Shape s = ctx.type_of(kv).shape;
  const ValueId x = ctx.add(K::Unsqueeze, {kv}, {{"axes", Ints{2}}});
  const ValueId wide = ctx.add(K::Expand, {x}, {{"shape", Ints{s[0], s[1], reps, s[2], s[3]}}});
  return ctx.add(K::Reshape, {wide}, {{"shape", Ints{s[0], s[1] * reps, s[2], s[3]}}});
}

// The dtype the softmax runs in: attribute softmax_precision when the node has it, else `dtype`.
DType softmax_precision(LoweringContext& ctx, DType dtype) {
  if (!ctx.has_attr("softmax_precision")) return dtype;
  const int64_t precision = ctx.attr_int("softmax_precision", std::nullopt);
  // A half softmax is computed in f32 and rounded once (half_through_f32).
  if (precision == 1 || precision == 10 || precision == 11 || precision == 16) {
    return *dtype_from_onnx(precision);
  }
  ctx.invalid("softmax_precision " + str(precision) +
              "; expected FLOAT (1), FLOAT16 (10), DOUBLE (11) or BFLOAT16 (16)");
}

// ---- Attention ---------------------------------------------------------------------------

// Inputs and outputs, in ONNX order.
enum AttentionInput { kQ, kK, kV, kMask, kPastKey, kPastValue, kNonpadKvSeqlen };
enum AttentionOutput { kY, kPresentKey, kPresentValue, kQkMatmulOutput };

class AttentionLowering {
 public:
  explicit AttentionLowering(LoweringContext& ctx) : ctx_(ctx) {}
  void lower();

 private:
  void read_attributes();
  // Q, K and V as [batch, heads, seq, head_size]; past keys and values appended.
  void read_qkv();
  ValueId split_heads(AttentionInput input, int64_t heads);
  void append_past();
  // The additive bias: attn_mask (a bool mask as 0 / -inf), plus -inf wherever the causal
  // frontier, the window or the padding of nonpad_kv_seqlen disallow a key.
  std::optional<ValueId> mask_bias();
  std::optional<ValueId> structural_bias();
  std::optional<ValueId> per_batch_structural_bias();
  ValueId scalar(double value) { return scalar_constant(ctx_, dtype_, value); }
  ValueId add(K op, std::vector<ValueId> inputs, Attributes attrs = {}) {
    return ctx_.add(op, std::move(inputs), std::move(attrs));
  }

  LoweringContext& ctx_;
  DType dtype_ = DType::F32;
  DType softmax_dtype_ = DType::F32;
  bool causal_ = false;
  bool three_d_ = false;
  int64_t mode_ = 0;
  double softcap_ = 0;
  std::optional<double> scale_;
  std::optional<int64_t> q_heads_attr_, kv_heads_attr_;
  int64_t left_window_ = -1, right_window_ = -1;

  ValueId q_ = kNoValue, k_ = kNoValue, v_ = kNoValue;
  int64_t batch_ = 0, q_heads_ = 0, kv_heads_ = 0, q_len_ = 0, kv_len_ = 0, past_len_ = 0;
  bool has_past_ = false, has_nonpad_ = false;
  // Whether a row of the bias can be all -inf: such a row's probabilities are zeros, not NaN.
  bool bias_may_mask_a_row_ = false;
};

void AttentionLowering::read_attributes() {
  const int version = ctx_.since_version();
  require_arity(ctx_, version >= 24 ? 7 : 6, 4);
  causal_ = attr_flag(ctx_, "is_causal");
  mode_ = ctx_.attr_int("qk_matmul_output_mode", 0);
  if (mode_ < 0 || mode_ > 3) {
    ctx_.invalid("qk_matmul_output_mode " + str(mode_) + "; expected 0, 1, 2 or 3");
  }
  softcap_ = ctx_.attr_float("softcap", 0.0);
  if (ctx_.has_attr("scale")) {
    scale_ = ctx_.attr_float("scale", std::nullopt);
    if (*scale_ < 0) {  // NaN in ONNX's form, which scales Q and K by sqrt(scale) each
      ctx_.unsupported("scale " + std::to_string(*scale_) + "; supported: scale >= 0");
    }
  }
  if (ctx_.has_attr("q_num_heads")) q_heads_attr_ = ctx_.attr_int("q_num_heads", std::nullopt);
  if (ctx_.has_attr("kv_num_heads")) kv_heads_attr_ = ctx_.attr_int("kv_num_heads", std::nullopt);
  if (version >= 25) {
    left_window_ = ctx_.attr_int("left_window_size", -1);
    right_window_ = ctx_.attr_int("right_window_size", -1);
    if (left_window_ < -1 || right_window_ < -1) {
      ctx_.invalid("left_window_size " + str(left_window_) + " and right_window_size " +
                   str(right_window_) + " must be -1 (unbounded) or at least 0");
    }
  }
  dtype_ = ctx_.input_type(kQ).dtype;
  require_float_dtype(ctx_, "Q", dtype_);
  softmax_dtype_ = softmax_precision(ctx_, dtype_);
}

ValueId AttentionLowering::split_heads(AttentionInput input, int64_t heads) {
  const Shape s = ctx_.input_type(input).shape;
  if (heads < 1 || s[2] % heads != 0) {
    constexpr std::array<std::string_view, 3> kNames = {"Q", "K", "V"};
    ctx_.invalid(std::string(kNames[input]) + " of shape " + s.str() + " does not split into " +
                 str(heads) + " heads");
  }
  const ValueId x = add(K::Reshape, {ctx_.input(input)}, {{"shape", Ints{s[0], s[1], heads, -1}}});
  return add(K::Transpose, {x}, {{"perm", Ints{0, 2, 1, 3}}});
}

void AttentionLowering::read_qkv() {
  const int rank = ctx_.input_type(kQ).shape.rank();
  for (AttentionInput i : {kK, kV}) {
    const TypeInfo& t = ctx_.input_type(i);
    if (t.dtype != dtype_) {
      ctx_.unsupported("K and V of dtype " + std::string(dtype_name(t.dtype)) + " with Q of " +
                       std::string(dtype_name(dtype_)) + "; supported: one dtype for Q, K and V");
    }
    if (t.shape.rank() != rank) ctx_.invalid("Q, K and V must have one rank, 3 or 4");
  }
  if (rank == 3) {
    three_d_ = true;
    if (!q_heads_attr_ || !kv_heads_attr_) {
      ctx_.invalid("3-D Q, K and V need the attributes q_num_heads and kv_num_heads");
    }
    q_ = split_heads(kQ, *q_heads_attr_);
    k_ = split_heads(kK, *kv_heads_attr_);
    v_ = split_heads(kV, *kv_heads_attr_);
  } else if (rank == 4) {
    q_ = ctx_.input(kQ);
    k_ = ctx_.input(kK);
    v_ = ctx_.input(kV);
    if (q_heads_attr_ || kv_heads_attr_) {
      if (ctx_.since_version() >= 25) {
        ctx_.invalid(
            "q_num_heads and kv_num_heads are for 3-D inputs; 4-D Q, K and V give "
            "their heads in dimension 1");
      }
      if (q_heads_attr_.value_or(ctx_.input_type(kQ).shape[1]) != ctx_.input_type(kQ).shape[1] ||
          kv_heads_attr_.value_or(ctx_.input_type(kK).shape[1]) != ctx_.input_type(kK).shape[1]) {
        ctx_.invalid("q_num_heads and kv_num_heads differ from dimension 1 of 4-D Q and K");
      }
    }
  } else {
    ctx_.invalid("Q, K and V must be 3-D or 4-D; got rank " + str(rank));
  }
  const Shape q = ctx_.type_of(q_).shape;
  const Shape k = ctx_.type_of(k_).shape;
  const Shape v = ctx_.type_of(v_).shape;
  batch_ = q[0];
  q_heads_ = q[1];
  kv_heads_ = k[1];
  q_len_ = q[2];
  if (k[0] != batch_ || v[0] != batch_ || k[3] != q[3] || v[1] != k[1] || v[2] != k[2]) {
    ctx_.invalid("Q " + q.str() + ", K " + k.str() + " and V " + v.str() +
                 " (as [batch, heads, seq, head_size]) must share the batch, Q and K the head "
                 "size, K and V the heads and the sequence");
  }
  if (q_heads_ % kv_heads_ != 0) {
    ctx_.invalid(str(q_heads_) + " query heads are not a multiple of " + str(kv_heads_) +
                 " key/value heads");
  }
  append_past();
  kv_len_ = ctx_.type_of(k_).shape[2];
}

void AttentionLowering::append_past() {
  has_past_ = ctx_.has_input(kPastKey);
  if (has_past_ != ctx_.has_input(kPastValue)) {
    ctx_.invalid("past_key and past_value must be given together");
  }
  has_nonpad_ = ctx_.since_version() >= 24 && ctx_.has_input(kNonpadKvSeqlen);
  if (has_past_ && has_nonpad_) {
    ctx_.invalid("nonpad_kv_seqlen (an external cache) cannot be combined with past_key");
  }
  if (!has_past_) return;
  const Shape k = ctx_.type_of(k_).shape;
  const Shape v = ctx_.type_of(v_).shape;
  const TypeInfo& pk = ctx_.input_type(kPastKey);
  const TypeInfo& pv = ctx_.input_type(kPastValue);
  past_len_ = pk.shape.rank() == 4 ? pk.shape[2] : -1;
  if (pk.dtype != dtype_ || pv.dtype != dtype_ || pk.shape != Shape{k[0], k[1], past_len_, k[3]} ||
      pv.shape != Shape{v[0], v[1], past_len_, v[3]}) {
    ctx_.invalid("past_key " + pk.shape.str() + " and past_value " + pv.shape.str() +
                 " must be [batch, kv_heads, past_seq, head_size] of K " + k.str() + " and V " +
                 v.str() + " (as [batch, heads, seq, head_size]) and of Q's dtype");
  }
  k_ = add(K::Concat, {ctx_.input(kPastKey), k_}, {{"axis", int64_t{2}}});
  v_ = add(K::Concat, {ctx_.input(kPastValue), v_}, {{"axis", int64_t{2}}});
}

std::optional<ValueId> AttentionLowering::mask_bias() {
  if (!ctx_.has_input(kMask)) return std::nullopt;
  bias_may_mask_a_row_ = true;
  const TypeInfo& t = ctx_.input_type(kMask);
  ValueId mask = ctx_.input(kMask);
  if (t.dtype == DType::Bool) {
    mask = add(K::Where, {mask, scalar(0.0), scalar(kNegInf)});
  } else if (t.dtype != dtype_) {
    ctx_.unsupported("attn_mask of dtype " + std::string(dtype_name(t.dtype)) + " with Q of " +
                     std::string(dtype_name(dtype_)) + "; supported: bool, or Q's dtype");
  }
  // It broadcasts to the scores [batch, q_heads, q_seq, kv_seq], and may be shorter than the
  // keys: the keys past its end are masked.
  const Shape scores{batch_, q_heads_, q_len_, kv_len_};
  const int rank = t.shape.rank();
  bool fits = rank >= 1 && rank <= 4 && t.shape[rank - 1] <= kv_len_;
  for (int d = 0; fits && d < rank - 1; ++d) {
    const int64_t want = scores[4 - rank + d];
    fits = t.shape[d] == 1 || t.shape[d] == want;
  }
  if (!fits) {
    ctx_.invalid("attn_mask " + t.shape.str() + " does not broadcast to the scores " +
                 scores.str() + " (its last dimension may be shorter than the keys)");
  }
  if (const int64_t pad = kv_len_ - t.shape[rank - 1]; pad > 0) {
    Shape pad_shape = t.shape;
    pad_shape[rank - 1] = pad;
    Tensor fill(dtype_, pad_shape);
    for (int64_t i = 0; i < fill.numel(); ++i) fill.set_double(i, kNegInf);
    mask = add(K::Concat, {mask, ctx_.constant(std::move(fill))}, {{"axis", int64_t{rank - 1}}});
  }
  return mask;
}

// Query i (at absolute position p = i + offset) attends key j iff j <= p when causal, and
// p - left <= j <= p + right for each bound the window sets. offset is the past keys' count
// (0 without them): the bias is then a constant [q_seq, kv_seq].
std::optional<ValueId> AttentionLowering::structural_bias() {
  if (has_nonpad_) return per_batch_structural_bias();
  Tensor bias(dtype_, Shape{q_len_, kv_len_});
  bool any_masked = false;
  for (int64_t i = 0; i < q_len_; ++i) {
    bool row_masked = true;
    for (int64_t j = 0; j < kv_len_; ++j) {
      const int64_t diff = i + past_len_ - j;
      const bool allowed = (!causal_ || diff >= 0) && (left_window_ < 0 || diff <= left_window_) &&
                           (right_window_ < 0 || -diff <= right_window_);
      bias.set_double(i * kv_len_ + j, allowed ? 0.0 : kNegInf);
      any_masked = any_masked || !allowed;
      row_masked = row_masked && !allowed;
    }
    bias_may_mask_a_row_ = bias_may_mask_a_row_ || row_masked;
  }
  if (!any_masked) return std::nullopt;
  return ctx_.constant(std::move(bias));
}

// With nonpad_kv_seqlen (an external cache), batch b has n_b valid keys: key j is padding iff
// j >= n_b, and the causal frontier and window use offset n_b - q_seq. Each condition is a
// comparison of n_b with a constant of (i, j): [batch, 1, q_seq, kv_seq].
std::optional<ValueId> AttentionLowering::per_batch_structural_bias() {
  bias_may_mask_a_row_ = true;
  const TypeInfo& t = ctx_.input_type(kNonpadKvSeqlen);
  if (t.dtype != DType::I64 || t.shape != Shape{batch_}) {
    ctx_.invalid("nonpad_kv_seqlen must be int64 of shape [" + str(batch_) + "]; got " +
                 std::string(dtype_name(t.dtype)) + " " + t.shape.str());
  }
  const ValueId n = add(K::Reshape, {ctx_.input(kNonpadKvSeqlen)}, {{"shape", Ints{batch_, 1, 1}}});
  // of_position(f): the constant [q_seq, kv_seq] of f(i - j + q_seq), the bound n_b is compared
  // with (i + n_b - q_seq - j is query i's distance past key j).
  auto of_position = [&](int64_t plus) {
    Tensor c(DType::I64, Shape{q_len_, kv_len_});
    for (int64_t i = 0; i < q_len_; ++i) {
      for (int64_t j = 0; j < kv_len_; ++j) c.set_int(i * kv_len_ + j, j - i + q_len_ + plus);
    }
    return ctx_.constant(std::move(c));
  };
  Tensor keys(DType::I64, Shape{kv_len_});
  for (int64_t j = 0; j < kv_len_; ++j) keys.set_int(j, j);
  ValueId allowed = add(K::Less, {ctx_.constant(std::move(keys)), n});  // [batch, 1, kv_seq]
  if (causal_) {  // distance >= 0: j - i + q_seq <= n_b
    allowed = add(K::And, {allowed, add(K::LessOrEqual, {of_position(0), n})});
  }
  if (left_window_ >= 0) {  // distance <= left: n_b <= j - i + q_seq + left
    allowed = add(K::And, {allowed, add(K::LessOrEqual, {n, of_position(left_window_)})});
  }
  if (right_window_ >= 0) {  // -distance <= right: j - i + q_seq - right <= n_b
    allowed = add(K::And, {allowed, add(K::LessOrEqual, {of_position(-right_window_), n})});
  }
  allowed = add(K::Unsqueeze, {allowed}, {{"axes", Ints{1}}});
  return add(K::Where, {allowed, scalar(0.0), scalar(kNegInf)});
}

void AttentionLowering::lower() {
  read_attributes();
  read_qkv();
  if (ctx_.has_output(kPresentKey)) ctx_.set_output(kPresentKey, k_);
  if (ctx_.has_output(kPresentValue)) ctx_.set_output(kPresentValue, v_);
  ValueId k = k_;
  ValueId v = v_;
  if (q_heads_ != kv_heads_) {
    k = repeat_heads(ctx_, k, q_heads_ / kv_heads_);
    v = repeat_heads(ctx_, v, q_heads_ / kv_heads_);
  }
  // Q and K are each scaled by sqrt(scale), rounded to Q's dtype, so that large logits do not
  // overflow before the product.
  const int64_t head_size = ctx_.type_of(q_).shape[3];
  const ValueId sqrt_scale =
      scalar(std::sqrt(scale_.value_or(1.0 / std::sqrt(static_cast<double>(head_size)))));
  const ValueId k_t =
      add(K::Transpose, {add(K::Mul, {k, sqrt_scale})}, {{"perm", Ints{0, 1, 3, 2}}});
  const ValueId qk = add(K::MatMul, {add(K::Mul, {q_, sqrt_scale}), k_t});
  ValueId capped = qk;
  if (softcap_ > 0) {  // softcap * tanh(qk / softcap); 0 (and, as ONNX's reference, < 0): none
    const ValueId cap = scalar(softcap_);
    capped = add(K::Mul, {add(K::Tanh, {add(K::Div, {qk, cap})}), cap});
  }

  std::optional<ValueId> bias = mask_bias();
  if (const std::optional<ValueId> structural = structural_bias()) {
    bias = bias ? add(K::Add, {*bias, *structural}) : *structural;
  }
  const ValueId logits = bias ? add(K::Add, {capped, *bias}) : capped;
  ValueId probs =
      add(K::Softmax, {as_dtype(ctx_, logits, softmax_dtype_)}, {{"axis", int64_t{-1}}});
  if (bias && bias_may_mask_a_row_) {
    // A query no key may be attended by has zero probabilities (Y's row is 0), decided on the
    // bias: its softmax is NaN (-inf - -inf).
    const ValueId row_max =
        add(K::ReduceMax, {*bias}, {{"axes", Ints{-1}}, {"keepdims", int64_t{1}}});
    const ValueId row_masked = add(K::Equal, {row_max, scalar(kNegInf)});
    probs = add(K::Where, {row_masked, scalar_constant(ctx_, softmax_dtype_, 0.0), probs});
  }
  probs = as_dtype(ctx_, probs, dtype_);
  if (ctx_.has_output(kQkMatmulOutput)) {
    // Mode 0 is the raw product, as the spec and ONNX's function body have it (ONNX's reference
    // implementation returns it soft-capped).
    const std::array<ValueId, 4> by_mode = {qk, capped, logits, probs};
    ctx_.set_output(kQkMatmulOutput, by_mode[static_cast<size_t>(mode_)]);
  }
  ValueId y = add(K::MatMul, {probs, v});  // [batch, q_heads, q_seq, v_head_size]
  if (three_d_) {
    y = add(K::Transpose, {y}, {{"perm", Ints{0, 2, 1, 3}}});
    y = add(K::Reshape, {y}, {{"shape", Ints{batch_, q_len_, -1}}});
  }
  ctx_.set_output(kY, y);
}

void lower_attention(LoweringContext& ctx) { AttentionLowering(ctx).lower(); }

// ---- FlexAttention (ai.onnx.preview, version 1) --------------------------------------------

// A modifier graph attribute (score_mod, prob_mod) applied to `x`: one output of x's type.
ValueId apply_modifier(LoweringContext& ctx, std::string_view name, ValueId x) {
  if (!ctx.has_attr(name)) return x;
  const std::vector<ValueId> outs = ctx.lower_graph_attr(name, std::array{x});
  if (outs.size() != 1 || ctx.type_of(outs[0]) != ctx.type_of(x)) {
    ctx.invalid(std::string(name) + " must give one output of its input's type " +
                type_text(ctx.type_of(x)) + "; it gives " + str(static_cast<int64_t>(outs.size())) +
                (outs.empty() ? "" : ", the first " + type_text(ctx.type_of(outs[0]))));
  }
  return outs[0];
}

// Q [batch, q_heads, q_seq, head_size], K [batch, kv_heads, kv_seq, head_size], V [batch,
// kv_heads, kv_seq, v_head_size], as ONNX's reference computes it: scores = (Q * s) @ (K * s)^T
// in Q's dtype, s = sqrt(scale) in f32 (scale: the attribute, else 1 / sqrt(head_size)); cast
// to the softmax dtype; score_mod; Softmax over the keys; prob_mod; @ V (cast to the softmax
// dtype); cast to V's dtype. KV heads are shared by consecutive query heads (GQA).
void lower_flex_attention(LoweringContext& ctx) {
  require_arity(ctx, 3, 1);
  const TypeInfo q = ctx.input_type(0);
  const TypeInfo k = ctx.input_type(1);
  const TypeInfo v = ctx.input_type(2);
  if (q.shape.rank() != 4 || k.shape.rank() != 4 || v.shape.rank() != 4) {
    ctx.invalid("Q, K and V must be rank 4; got " + q.shape.str() + ", " + k.shape.str() + " and " +
                v.shape.str());
  }
  require_float_dtype(ctx, "Q", q.dtype);
  if (k.dtype != q.dtype || v.dtype != q.dtype) {
    ctx.invalid("Q, K and V must share one dtype; got " + std::string(dtype_name(q.dtype)) + ", " +
                std::string(dtype_name(k.dtype)) + " and " + std::string(dtype_name(v.dtype)));
  }
  const int64_t q_heads = q.shape[1];
  const int64_t kv_heads = k.shape[1];
  if (k.shape[0] != q.shape[0] || v.shape[0] != q.shape[0] || v.shape[1] != kv_heads ||
      v.shape[2] != k.shape[2] || k.shape[3] != q.shape[3] || kv_heads == 0 ||
      q_heads % kv_heads != 0) {
    ctx.invalid("Q " + q.shape.str() + ", K " + k.shape.str() + " and V " + v.shape.str() +
                " do not agree: one batch, K and V one head count and length, Q and K one "
                "head size, and a multiple of K's heads in Q");
  }
  const double scale = ctx.has_attr("scale") ? ctx.attr_float("scale", std::nullopt)
                                             : 1.0 / std::sqrt(static_cast<double>(q.shape[3]));
  if (!(scale >= 0)) ctx.unsupported("scale " + std::to_string(scale) + "; supported: scale >= 0");
  const DType softmax_dtype = softmax_precision(ctx, q.dtype);

  const ValueId s = scalar_constant(ctx, q.dtype, std::sqrt(static_cast<float>(scale)));
  ValueId keys = ctx.input(1);
  ValueId values = ctx.input(2);
  if (q_heads != kv_heads) {
    keys = repeat_heads(ctx, keys, q_heads / kv_heads);
    values = repeat_heads(ctx, values, q_heads / kv_heads);
  }
  const ValueId k_t =
      ctx.add(K::Transpose, {ctx.add(K::Mul, {keys, s})}, {{"perm", Ints{0, 1, 3, 2}}});
  ValueId scores = ctx.add(K::MatMul, {ctx.add(K::Mul, {ctx.input(0), s}), k_t});
  scores = apply_modifier(ctx, "score_mod", as_dtype(ctx, scores, softmax_dtype));
  ValueId probs = ctx.add(K::Softmax, {scores}, {{"axis", int64_t{-1}}});
  probs = apply_modifier(ctx, "prob_mod", probs);
  ctx.set_output(
      0, as_dtype(ctx, ctx.add(K::MatMul, {probs, as_dtype(ctx, values, softmax_dtype)}), v.dtype));
}

// ---- RotaryEmbedding ---------------------------------------------------------------------

// Each pair (x1, x2) of the first rotary_embedding_dim features of a head (the two halves, or
// even and odd features when interleaved) is rotated by its position's angle:
// (cos x1 - sin x2, sin x1 + cos x2). Works in the input's layout: 4-D [batch, heads, seq,
// head_size], 3-D as [batch, seq, heads, head_size].
void lower_rotary_embedding(LoweringContext& ctx) {
  require_arity(ctx, 4, 1);
  const bool interleaved = attr_flag(ctx, "interleaved");
  const int64_t rotary_dim_attr = ctx.attr_int("rotary_embedding_dim", 0);
  // 0: not given (a 3-D input needs it).
  const int64_t num_heads = ctx.attr_int("num_heads", 0);
  const TypeInfo& xt = ctx.input_type(0);
  require_float_dtype(ctx, "input", xt.dtype);
  if (ctx.input_type(1).dtype != xt.dtype || ctx.input_type(2).dtype != xt.dtype) {
    ctx.invalid("cos_cache and sin_cache must have the input's dtype");
  }
  const Shape in = xt.shape;
  ValueId x = ctx.input(0);
  int64_t batch = 0, seq = 0, head_size = 0;
  int cache_axis = 0;  // where the caches' [batch, seq, rotary_dim / 2] get their head axis
  if (in.rank() == 3) {
    if (num_heads < 1 || in[2] % num_heads != 0) {
      ctx.invalid("a 3-D input " + in.str() + " needs num_heads dividing its hidden size");
    }
    batch = in[0];
    seq = in[1];
    head_size = in[2] / num_heads;
    x = ctx.add(K::Reshape, {x}, {{"shape", Ints{batch, seq, num_heads, head_size}}});
    cache_axis = 2;
  } else if (in.rank() == 4) {
    if (num_heads != 0 && num_heads != in[1]) {
      ctx.invalid("num_heads " + str(num_heads) + " differs from the heads of the input " +
                  in.str() + " ([batch, heads, seq, head_size])");
    }
    batch = in[0];
    seq = in[2];
    head_size = in[3];
    cache_axis = 1;
  } else {
    ctx.invalid("the input must be 3-D or 4-D; got " + in.str());
  }
  const int64_t rotary_dim = rotary_dim_attr == 0 ? head_size : rotary_dim_attr;
  if (rotary_dim < 0 || rotary_dim > head_size || rotary_dim % 2 != 0) {
    ctx.invalid("rotary_embedding_dim " + str(rotary_dim) +
                " must be even and at most the head size " + str(head_size));
  }
  const int64_t half = rotary_dim / 2;

  const Shape cache_shape{batch, seq, half};
  auto cache = [&](int input) {
    ValueId c = ctx.input(input);
    if (ctx.has_input(3)) {  // [max_position, half], gathered at position_ids [batch, seq]
      const TypeInfo& p = ctx.input_type(3);
      if (!is_integer(p.dtype) || p.shape != Shape{batch, seq}) {
        ctx.invalid("position_ids must be integers of shape " + Shape{batch, seq}.str() + "; got " +
                    std::string(dtype_name(p.dtype)) + " " + p.shape.str());
      }
      c = ctx.add(K::Gather, {c, ctx.input(3)}, {{"axis", int64_t{0}}});
    }
    if (ctx.type_of(c).shape != cache_shape) {
      ctx.invalid(
          "cos_cache and sin_cache give " + ctx.type_of(c).shape.str() +
          " per position; expected [batch, seq, rotary_embedding_dim / 2] = " + cache_shape.str());
    }
    return ctx.add(K::Unsqueeze, {c}, {{"axes", Ints{cache_axis}}});
  };
  const ValueId cos = cache(1);
  const ValueId sin = cache(2);

  auto features = [&](int64_t begin, int64_t end, int64_t step) {
    return ctx.add(
        K::Slice, {x},
        {{"starts", Ints{begin}}, {"ends", Ints{end}}, {"axes", Ints{3}}, {"steps", Ints{step}}});
  };
  const ValueId x1 = interleaved ? features(0, rotary_dim, 2) : features(0, half, 1);
  const ValueId x2 = interleaved ? features(1, rotary_dim, 2) : features(half, rotary_dim, 1);
  auto mul = [&](ValueId a, ValueId b) { return ctx.add(K::Mul, {a, b}); };
  const ValueId real = ctx.add(K::Sub, {mul(cos, x1), mul(sin, x2)});
  const ValueId imag = ctx.add(K::Add, {mul(sin, x1), mul(cos, x2)});
  ValueId rotated;
  if (interleaved) {  // back to even and odd features: [.., half, 2] flattened
    const ValueId pairs = ctx.add(K::Concat,
                                  {ctx.add(K::Unsqueeze, {real}, {{"axes", Ints{4}}}),
                                   ctx.add(K::Unsqueeze, {imag}, {{"axes", Ints{4}}})},
                                  {{"axis", int64_t{4}}});
    Shape s = ctx.type_of(real).shape;
    rotated = ctx.add(K::Reshape, {pairs}, {{"shape", Ints{s[0], s[1], s[2], rotary_dim}}});
  } else {
    rotated = ctx.add(K::Concat, {real, imag}, {{"axis", int64_t{3}}});
  }
  ValueId y = rotated;
  if (rotary_dim < head_size) {
    y = ctx.add(K::Concat, {rotated, features(rotary_dim, head_size, 1)}, {{"axis", int64_t{3}}});
  }
  if (in.rank() == 3) y = ctx.add(K::Reshape, {y}, {{"shape", in.dims()}});
  ctx.set_output(0, y);
}

}  // namespace

void register_attention_lowerings(LoweringTable& table) {
  table.add_composite("Attention", OpFamily::Linalg, 23, &lower_attention);
  table.add_composite("RotaryEmbedding", OpFamily::Linalg, 23, &lower_rotary_embedding);
  table.add_preview_composite(kPreviewDomain, "FlexAttention", OpFamily::Linalg,
                              &lower_flex_attention);
}

}  // namespace volta::onnx
