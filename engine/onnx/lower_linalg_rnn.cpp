// RNN, GRU and LSTM, unrolled over the (static) sequence length onto MatMul, Add, Mul and
// the gate activations. The input projection is one MatMul over the whole sequence; each
// step adds its recurrent MatMul. Gate order follows ONNX: LSTM i o f c, GRU z r h; the
// biases are [Wb, Rb] per direction. Steps run in time order for forward directions and in
// reverse time order for reverse ones; Y[t] is the hidden state computed at time t.

#include "lowering.h"

namespace volta::onnx {
namespace {

enum class Cell { Rnn, Gru, Lstm };

class Unroller {
 public:
  Unroller(LoweringContext& ctx, Cell cell) : ctx_(ctx), cell_(cell) {}
  void lower();

 private:
  int gates() const { return cell_ == Cell::Rnn ? 1 : cell_ == Cell::Gru ? 3 : 4; }
  ValueId slice(ValueId v, int64_t axis, int64_t begin, int64_t end) {
    return ctx_.add(OpKind::Slice, {v},
                    {{"starts", Ints{begin}}, {"ends", Ints{end}}, {"axes", Ints{axis}}});
  }
  // Row `index` of axis 0, without that axis.
  ValueId take(ValueId v, int64_t index) {
    return ctx_.add(OpKind::Squeeze, {slice(v, 0, index, index + 1)}, {{"axes", Ints{0}}});
  }
  ValueId gate(ValueId v, int64_t k) { return slice(v, 1, k * hidden_, (k + 1) * hidden_); }
  ValueId add(ValueId a, ValueId b) { return ctx_.add(OpKind::Add, {a, b}); }
  ValueId mul(ValueId a, ValueId b) { return ctx_.add(OpKind::Mul, {a, b}); }
  ValueId matmul(ValueId a, ValueId b) { return ctx_.add(OpKind::MatMul, {a, b}); }
  // The activation `index` of direction `dir`, after the cell clip.
  ValueId activate(ValueId v, int dir, int index);
  void read_activations(int per_direction, int directions,
                        const std::vector<std::string>& defaults);
  // Runs direction `dir`; returns Y [seq, 1, batch, H], Y_h and Y_c [1, batch, H].
  std::vector<ValueId> run_direction(int dir, bool reverse, ValueId x);

  LoweringContext& ctx_;
  Cell cell_;
  int64_t hidden_ = 0;
  int64_t seq_ = 0;
  int64_t batch_ = 0;
  int64_t layout_ = 0;
  int64_t linear_before_reset_ = 0;
  std::optional<double> clip_;
  DType dtype_ = DType::F32;
  std::vector<OpKind> activations_;
};

void Unroller::read_activations(int per_direction, int directions,
                                const std::vector<std::string>& defaults) {
  std::vector<std::string> names;
  for (int d = 0; d < directions; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  names = ctx_.attr_strings("activations", names);
  if (static_cast<int>(names.size()) != per_direction * directions) {
    ctx_.invalid("activations lists " + std::to_string(names.size()) + " functions; expected " +
                 std::to_string(per_direction * directions));
  }
  for (const std::string& n : names) {
    if (n == "Sigmoid") {
      activations_.push_back(OpKind::Sigmoid);
    } else if (n == "Tanh") {
      activations_.push_back(OpKind::Tanh);
    } else if (n == "Relu") {
      activations_.push_back(OpKind::Relu);
    } else {
      ctx_.unsupported("activation " + n + "; supported: Sigmoid, Tanh, Relu");
    }
  }
}

ValueId Unroller::activate(ValueId v, int dir, int index) {
  if (clip_) v = ctx_.add(OpKind::Clip, {v}, {{"min", -*clip_}, {"max", *clip_}});
  const size_t per_direction = cell_ == Cell::Rnn ? 1 : cell_ == Cell::Gru ? 2 : 3;
  return ctx_.add(
      activations_[static_cast<size_t>(dir) * per_direction + static_cast<size_t>(index)], {v});
}

std::vector<ValueId> Unroller::run_direction(int dir, bool reverse, ValueId x) {
  const int64_t gh = gates() * hidden_;
  auto transposed = [&](int input) {
    return ctx_.add(OpKind::Transpose, {take(ctx_.input(input), dir)}, {{"perm", Ints{1, 0}}});
  };
  const ValueId w_t = transposed(1);  // [I, G*H]
  const ValueId r_t = transposed(2);  // [H, G*H]
  ValueId xw = matmul(x, w_t);        // [seq, batch, G*H]
  std::optional<ValueId> rb;
  if (ctx_.has_input(3)) {
    const ValueId b = take(ctx_.input(3), dir);
    xw = add(xw, slice(b, 0, 0, gh));
    rb = slice(b, 0, gh, 2 * gh);
  }
  auto state = [&](int input) {
    if (ctx_.has_input(input)) {
      ValueId s = ctx_.input(input);
      if (layout_ == 1) s = ctx_.add(OpKind::Transpose, {s}, {{"perm", Ints{1, 0, 2}}});
      return take(s, dir);
    }
    return ctx_.constant(Tensor(dtype_, Shape{batch_, hidden_}));
  };
  ValueId h = state(5);
  ValueId c = cell_ == Cell::Lstm ? state(6) : kNoValue;
  std::optional<ValueId> peephole;
  if (cell_ == Cell::Lstm && ctx_.has_input(7)) peephole = take(ctx_.input(7), dir);
  // GRU's candidate gate multiplies the reset gate into the recurrent term.
  const ValueId r_t_zr = cell_ == Cell::Gru ? slice(r_t, 1, 0, 2 * hidden_) : kNoValue;
  const ValueId r_t_h = cell_ == Cell::Gru ? slice(r_t, 1, 2 * hidden_, gh) : kNoValue;
  const ValueId one = ctx_.constant([&] {
    Tensor t(dtype_, Shape{});
    t.set_double(0, 1.0);
    return t;
  }());

  std::vector<ValueId> ys(static_cast<size_t>(seq_));
  for (int64_t s = 0; s < seq_; ++s) {
    const int64_t t = reverse ? seq_ - 1 - s : s;
    const ValueId xt = take(xw, t);  // [batch, G*H]
    if (cell_ == Cell::Gru) {
      ValueId zr = add(slice(xt, 1, 0, 2 * hidden_), matmul(h, r_t_zr));
      if (rb) zr = add(zr, slice(*rb, 0, 0, 2 * hidden_));
      const ValueId z = activate(gate(zr, 0), dir, 0);
      const ValueId r = activate(gate(zr, 1), dir, 0);
      const std::optional<ValueId> rbh =
          rb ? std::optional<ValueId>(slice(*rb, 0, 2 * hidden_, gh)) : std::nullopt;
      ValueId recurrent;
      if (linear_before_reset_ != 0) {
        recurrent = matmul(h, r_t_h);
        if (rbh) recurrent = add(recurrent, *rbh);
        recurrent = mul(r, recurrent);
      } else {
        recurrent = matmul(mul(r, h), r_t_h);
        if (rbh) recurrent = add(recurrent, *rbh);
      }
      const ValueId candidate = activate(add(gate(xt, 2), recurrent), dir, 1);
      h = add(mul(ctx_.add(OpKind::Sub, {one, z}), candidate), mul(z, h));
    } else {
      ValueId pre = add(xt, matmul(h, r_t));
      if (rb) pre = add(pre, *rb);
      if (cell_ == Cell::Rnn) {
        h = activate(pre, dir, 0);
      } else {
        auto peep = [&](ValueId g, int64_t k, ValueId cell_state) {
          return peephole
                     ? add(g, mul(slice(*peephole, 0, k * hidden_, (k + 1) * hidden_), cell_state))
                     : g;
        };
        const ValueId i = activate(peep(gate(pre, 0), 0, c), dir, 0);
        const ValueId f = activate(peep(gate(pre, 2), 2, c), dir, 0);
        const ValueId candidate = activate(gate(pre, 3), dir, 1);
        c = add(mul(f, c), mul(i, candidate));
        const ValueId o = activate(peep(gate(pre, 1), 1, c), dir, 0);
        h = mul(o, activate(c, dir, 2));
      }
    }
    ys[static_cast<size_t>(t)] = ctx_.add(OpKind::Unsqueeze, {h}, {{"axes", Ints{0, 1}}});
  }
  const ValueId y = seq_ == 1 ? ys.front() : ctx_.add(OpKind::Concat, ys, {{"axis", int64_t{0}}});
  const ValueId y_h = ctx_.add(OpKind::Unsqueeze, {h}, {{"axes", Ints{0}}});
  const ValueId y_c =
      cell_ == Cell::Lstm ? ctx_.add(OpKind::Unsqueeze, {c}, {{"axes", Ints{0}}}) : kNoValue;
  return {y, y_h, y_c};
}

void Unroller::lower() {
  const std::string direction = ctx_.attr_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    ctx_.invalid("direction '" + direction + "'; expected forward, reverse or bidirectional");
  }
  const int directions = direction == "bidirectional" ? 2 : 1;
  layout_ = ctx_.since_version() >= 14 ? ctx_.attr_int("layout", 0) : 0;
  if (ctx_.has_attr("clip")) clip_ = ctx_.attr_float("clip", {});
  if (ctx_.has_attr("activation_alpha") || ctx_.has_attr("activation_beta")) {
    ctx_.unsupported(
        "activation_alpha / activation_beta; supported: activations without "
        "parameters (Sigmoid, Tanh, Relu)");
  }
  if (cell_ == Cell::Rnn) read_activations(1, directions, {"Tanh"});
  if (cell_ == Cell::Gru) read_activations(2, directions, {"Sigmoid", "Tanh"});
  if (cell_ == Cell::Lstm) read_activations(3, directions, {"Sigmoid", "Tanh", "Tanh"});
  if (cell_ == Cell::Gru) linear_before_reset_ = ctx_.attr_int("linear_before_reset", 0);
  if (cell_ == Cell::Lstm && ctx_.attr_int("input_forget", 0) != 0) {
    ctx_.unsupported("input_forget=1; supported: 0");
  }
  ValueId x = ctx_.input(0);
  if (layout_ == 1) x = ctx_.add(OpKind::Transpose, {x}, {{"perm", Ints{1, 0, 2}}});
  const TypeInfo xt = ctx_.type_of(x);
  if (xt.shape.rank() != 3) ctx_.invalid("X must be 3-D; got " + xt.shape.str());
  dtype_ = xt.dtype;
  seq_ = xt.shape[0];
  batch_ = xt.shape[1];
  const Shape r_shape = ctx_.input_type(2).shape;
  if (r_shape.rank() != 3) ctx_.invalid("R must be 3-D; got " + r_shape.str());
  hidden_ = ctx_.attr_int("hidden_size", r_shape[2]);
  if (r_shape[0] != directions || r_shape[1] != gates() * hidden_ || r_shape[2] != hidden_) {
    ctx_.invalid("R has shape " + r_shape.str() + " for " + std::to_string(directions) +
                 " direction(s) of hidden_size " + std::to_string(hidden_));
  }
  if (ctx_.has_input(4)) {
    for (int64_t len : ctx_.constant_ints(4, "sequence_lens")) {
      if (len != seq_) {
        ctx_.unsupported("sequence_lens shorter than the sequence (" + std::to_string(len) + " < " +
                         std::to_string(seq_) + "); supported: full-length sequences");
      }
    }
  }
  std::vector<ValueId> y, y_h, y_c;
  for (int d = 0; d < directions; ++d) {
    const std::vector<ValueId> out = run_direction(d, direction == "reverse" || d == 1, x);
    y.push_back(out[0]);
    y_h.push_back(out[1]);
    y_c.push_back(out[2]);
  }
  auto join = [&](const std::vector<ValueId>& parts, int64_t axis) {
    return parts.size() == 1 ? parts.front() : ctx_.add(OpKind::Concat, parts, {{"axis", axis}});
  };
  if (ctx_.has_output(0)) {
    ValueId out = join(y, 1);  // [seq, directions, batch, H]
    if (layout_ == 1) out = ctx_.add(OpKind::Transpose, {out}, {{"perm", Ints{2, 0, 1, 3}}});
    ctx_.set_output(0, out);
  }
  auto final_state = [&](const std::vector<ValueId>& parts) {
    ValueId out = join(parts, 0);  // [directions, batch, H]
    if (layout_ == 1) out = ctx_.add(OpKind::Transpose, {out}, {{"perm", Ints{1, 0, 2}}});
    return out;
  };
  if (ctx_.has_output(1)) ctx_.set_output(1, final_state(y_h));
  if (cell_ == Cell::Lstm && ctx_.has_output(2)) ctx_.set_output(2, final_state(y_c));
}

void lower_rnn(LoweringContext& ctx) { Unroller(ctx, Cell::Rnn).lower(); }
void lower_gru(LoweringContext& ctx) { Unroller(ctx, Cell::Gru).lower(); }
void lower_lstm(LoweringContext& ctx) { Unroller(ctx, Cell::Lstm).lower(); }

}  // namespace

void register_linalg_rnn_lowerings(LoweringTable& table) {
  table.add_composite("RNN", OpFamily::Linalg, 7, &lower_rnn);
  table.add_composite("GRU", OpFamily::Linalg, 7, &lower_gru);
  table.add_composite("LSTM", OpFamily::Linalg, 7, &lower_lstm);
}

}  // namespace volta::onnx
