// Lowerings of ONNX's sequence ops onto sequences known at import time (lowering.h's Sequence):
// a sequence is the list of the values it holds, so building, indexing and erasing cost nothing
// at run time, and SplitToSequence and ConcatFromSequence become Split and Concat. Positions
// must be known at import time (from constants, or from given graph inputs, on whose values
// the plan is then specialized), as every shape argument is.

#include <string>

#include "lowering.h"

namespace volta::onnx {
namespace {

// A position into a sequence of n: in [-n, n - 1], or [-n, n] where `end` allows n.
size_t position(LoweringContext& ctx, int i, size_t n, bool end) {
  const int64_t count = static_cast<int64_t>(n);
  const int64_t p = ctx.constant_int(i, "the position");
  const int64_t hi = end ? count : count - 1;
  if (p < -count || p > hi) {
    ctx.invalid("position " + std::to_string(p) + " is outside [" + std::to_string(-count) + ", " +
                std::to_string(hi) + "] for a sequence of " + std::to_string(n));
  }
  return static_cast<size_t>(p < 0 ? p + count : p);
}

void require_element(LoweringContext& ctx, const Sequence& s, int i) {
  const DType d = ctx.input_type(i).dtype;
  if (d != s.dtype) {
    ctx.invalid("the tensor is " + std::string(dtype_name(d)) + " but the sequence holds " +
                std::string(dtype_name(s.dtype)));
  }
}

void lower_sequence_empty(LoweringContext& ctx) {
  const DType dtype = ctx.has_attr("dtype")
                          ? attr_dtype(ctx, ctx.attr_int("dtype", std::nullopt), "dtype")
                          : DType::F32;
  ctx.set_output_sequence(0, Sequence{dtype, {}});
}

void lower_sequence_construct(LoweringContext& ctx) {
  Sequence s{ctx.input_type(0).dtype, {}};
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    require_element(ctx, s, i);
    s.items.push_back(ctx.input(i));
  }
  ctx.set_output_sequence(0, std::move(s));
}

void lower_sequence_insert(LoweringContext& ctx) {
  Sequence s = ctx.input_sequence(0);
  require_element(ctx, s, 1);
  const size_t at = ctx.has_input(2) ? position(ctx, 2, s.items.size(), true) : s.items.size();
  s.items.insert(s.items.begin() + static_cast<std::ptrdiff_t>(at), ctx.input(1));
  ctx.set_output_sequence(0, std::move(s));
}

void lower_sequence_erase(LoweringContext& ctx) {
  Sequence s = ctx.input_sequence(0);
  if (s.items.empty()) ctx.invalid("cannot erase from an empty sequence");
  const size_t at = ctx.has_input(1) ? position(ctx, 1, s.items.size(), false) : s.items.size() - 1;
  s.items.erase(s.items.begin() + static_cast<std::ptrdiff_t>(at));
  ctx.set_output_sequence(0, std::move(s));
}

void lower_sequence_at(LoweringContext& ctx) {
  const Sequence& s = ctx.input_sequence(0);
  if (s.items.empty()) ctx.invalid("cannot index an empty sequence");
  ctx.set_output(0, s.items[position(ctx, 1, s.items.size(), false)]);
}

void lower_sequence_length(LoweringContext& ctx) {
  Tensor n(DType::I64, Shape{});
  n.set_double(0, static_cast<double>(ctx.input_sequence(0).items.size()));
  ctx.set_output_constant(0, std::move(n));
}

// Concat along `axis`, or with new_axis=1 a stack: each tensor unsqueezed at `axis` first.
void lower_concat_from_sequence(LoweringContext& ctx) {
  const Sequence& s = ctx.input_sequence(0);
  if (s.items.empty()) ctx.invalid("cannot concatenate an empty sequence");
  const int64_t axis = ctx.attr_int("axis", std::nullopt);
  const bool stack = attr_flag(ctx, "new_axis", 0);
  std::vector<ValueId> parts = s.items;
  if (stack) {
    const int rank = ctx.type_of(parts.front()).shape.rank() + 1;
    if (axis < -rank || axis >= rank) {
      ctx.invalid("axis " + std::to_string(axis) + " is outside [" + std::to_string(-rank) + ", " +
                  std::to_string(rank - 1) + "] for new_axis=1");
    }
    for (ValueId& v : parts) v = ctx.add(OpKind::Unsqueeze, {v}, {{"axes", Ints{axis}}});
  }
  ctx.set_output(0, ctx.add(OpKind::Concat, std::move(parts), {{"axis", axis}}));
}

// SplitToSequence: without `split`, pieces of 1 (squeezed unless keepdims=1); a scalar split
// gives pieces of that size (the last may be shorter); a 1-D split gives its sizes.
void lower_split_to_sequence(LoweringContext& ctx) {
  const TypeInfo x = ctx.input_type(0);
  const int64_t axis_attr = ctx.attr_int("axis", 0);
  const std::optional<int> axis = normalize_axis(axis_attr, x.shape.rank());
  if (!axis) {
    ctx.invalid("axis " + std::to_string(axis_attr) + " is out of range for " + x.shape.str());
  }
  const int64_t length = x.shape[*axis];
  const bool keepdims = attr_flag(ctx, "keepdims", 1);
  Ints sizes;
  bool squeeze = false;
  if (!ctx.has_input(1)) {
    sizes.assign(static_cast<size_t>(length), 1);
    squeeze = !keepdims;
  } else {
    const Tensor& split = ctx.constant_input(1, "split");
    const Ints given = ctx.constant_ints(1, "split");
    if (split.shape().rank() == 0) {
      if (given.front() < 1)
        ctx.invalid("split must be positive; got " + std::to_string(given.front()));
      for (int64_t at = 0; at < length; at += given.front()) {
        sizes.push_back(std::min(given.front(), length - at));
      }
    } else {
      int64_t total = 0;
      for (const int64_t n : given) {
        if (n < 0) ctx.invalid("split sizes must be >= 0; got " + std::to_string(n));
        total += n;
      }
      if (total != length) {
        ctx.invalid("split sizes sum to " + std::to_string(total) + "; axis " +
                    std::to_string(*axis) + " of " + x.shape.str() + " has " +
                    std::to_string(length));
      }
      sizes = given;
    }
  }
  Sequence s{x.dtype, {}};
  if (!sizes.empty()) {
    s.items =
        ctx.add_node(OpKind::Split, {ctx.input(0)}, {{"axis", int64_t{*axis}}, {"split", sizes}},
                     static_cast<int>(sizes.size()));
  }
  if (squeeze) {
    for (ValueId& v : s.items) v = ctx.add(OpKind::Squeeze, {v}, {{"axes", Ints{*axis}}});
  }
  ctx.set_output_sequence(0, std::move(s));
}

}  // namespace

void register_movement_sequence_lowerings(LoweringTable& table) {
  table.add_composite("SequenceEmpty", OpFamily::Movement, 11, &lower_sequence_empty);
  table.add_composite("SequenceConstruct", OpFamily::Movement, 11, &lower_sequence_construct);
  table.add_composite("SequenceInsert", OpFamily::Movement, 11, &lower_sequence_insert);
  table.add_composite("SequenceErase", OpFamily::Movement, 11, &lower_sequence_erase);
  table.add_composite("SequenceAt", OpFamily::Movement, 11, &lower_sequence_at);
  table.add_composite("SequenceLength", OpFamily::Movement, 11, &lower_sequence_length);
  table.add_composite("ConcatFromSequence", OpFamily::Movement, 11, &lower_concat_from_sequence);
  table.add_composite("SplitToSequence", OpFamily::Movement, 11, &lower_split_to_sequence);
}

}  // namespace volta::onnx
