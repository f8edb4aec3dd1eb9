// ONNX lowerings of the reductions (Reduce*, ArgMax/ArgMin, CumSum) onto the internal ops of
// the same names; ReduceLogSum becomes Log(ReduceSum), CumProd a chain of Muls. Shape-like
// inputs (ReduceSum's axes, CumSum's and CumProd's axis) must be known at import time; they
// become attributes of the internal op.

#include <string>
#include <vector>

#include "lowering.h"

namespace volta::onnx {
namespace {

// Reduce*: axes are an attribute up to version 17 (ReduceSum: 11); from version 18 (ReduceSum:
// 13) an optional input, whose absence or emptiness reduces every axis, or none with
// noop_with_empty_axes.
Attributes reduce_attrs(LoweringContext& ctx, bool axes_as_input) {
  Attributes attrs = {{"keepdims", ctx.attr_int("keepdims", 1)}};
  if (axes_as_input) {
    attrs["axes"] = ctx.has_input(1) ? ctx.constant_ints(1, "axes") : Ints{};
    attrs["noop_with_empty_axes"] = ctx.attr_int("noop_with_empty_axes", 0);
  } else {
    attrs["axes"] = ctx.attr_ints("axes", Ints{});
  }
  return attrs;
}

template <OpKind Op>
void lower_reduce(LoweringContext& ctx) {
  // ReduceMax and ReduceMin 20 take bool: any and all, computed on 0 / 1 and read back as
  // `> 0`. An empty set reduces to int32's lowest (ReduceMax) or highest (ReduceMin) value, so
  // it reads as false or true: the bool type's minimum and maximum, as ONNX defines them.
  if constexpr (Op == OpKind::ReduceMax || Op == OpKind::ReduceMin) {
    if (ctx.since_version() >= 20 && ctx.input_type(0).dtype == DType::Bool) {
      const ValueId ints =
          ctx.add(OpKind::Cast, {ctx.input(0)}, {{"to", std::string(dtype_name(DType::I32))}});
      Attributes attrs = reduce_attrs(ctx, true);
      const ValueId reduced = ctx.add(Op, {ints}, std::move(attrs));
      return ctx.set_output(
          0, ctx.add(OpKind::Greater, {reduced, scalar_constant(ctx, DType::I32, 0)}));
    }
  }
  require_dtype(ctx, Op, ctx.input_type(0).dtype);
  const int axes_input_since = Op == OpKind::ReduceSum ? 13 : 18;
  ctx.set_output(
      0, ctx.add(Op, {ctx.input(0)}, reduce_attrs(ctx, ctx.since_version() >= axes_input_since)));
}

// ReduceLogSum = log(ReduceSum(x)): no internal op of its own.
void lower_reduce_log_sum(LoweringContext& ctx) {
  const DType dtype = ctx.input_type(0).dtype;
  if (!(kFloatTypes | kHalfTypes).contains(dtype)) {
    ctx.unsupported("input of dtype " + std::string(dtype_name(dtype)) +
                    "; supported: " + (kFloatTypes | kHalfTypes).str() +
                    " (the log of an integer sum is not an integer)");
  }
  const ValueId sum =
      ctx.add(OpKind::ReduceSum, {ctx.input(0)}, reduce_attrs(ctx, ctx.since_version() >= 18));
  ctx.set_output(0, ctx.add(OpKind::Log, {sum}));
}

// ArgMax / ArgMin: select_last_index exists from version 12.
template <OpKind Op>
void lower_arg_reduce(LoweringContext& ctx) {
  require_dtype(ctx, Op, ctx.input_type(0).dtype);
  Attributes attrs = {{"axis", ctx.attr_int("axis", 0)}, {"keepdims", ctx.attr_int("keepdims", 1)}};
  if (ctx.since_version() >= 12) {
    attrs["select_last_index"] = ctx.attr_int("select_last_index", 0);
  }
  ctx.set_output(0, ctx.add(Op, {ctx.input(0)}, std::move(attrs)));
}

// CumSum: the axis is a (scalar) input.
void lower_cumsum(LoweringContext& ctx) {
  require_dtype(ctx, OpKind::CumSum, ctx.input_type(0).dtype);
  const Ints axis = ctx.constant_ints(1, "axis");
  if (axis.size() != 1) {
    ctx.invalid("axis must hold one value; got " + std::to_string(axis.size()));
  }
  ctx.set_output(0, ctx.add(OpKind::CumSum, {ctx.input(0)},
                            {{"axis", axis[0]},
                             {"exclusive", ctx.attr_int("exclusive", 0)},
                             {"reverse", ctx.attr_int("reverse", 0)}}));
}

// The longest axis CumProd unrolls.
constexpr int64_t kMaxCumProdLength = 1024;

// CumProd (26), which has no internal op: the running product unrolled along the axis, one Mul
// per element in index order (from the end when reversed), as numpy.cumprod multiplies in ONNX's
// reference; exclusive shifts it by one, starting from 1.
void lower_cumprod(LoweringContext& ctx) {
  const TypeInfo x = ctx.input_type(0);
  require_dtype(ctx, OpKind::Mul, x.dtype);
  const int64_t rank = x.shape.rank();
  int64_t axis = ctx.constant_int(1, "axis");
  if (axis < -rank || axis >= rank) {
    ctx.invalid("axis " + std::to_string(axis) + " is outside [-" + std::to_string(rank) + ", " +
                std::to_string(rank - 1) + "] for input " + x.shape.str());
  }
  if (axis < 0) axis += rank;
  const bool exclusive = attr_flag(ctx, "exclusive");
  const bool reverse = attr_flag(ctx, "reverse");
  const int64_t length = x.shape[axis];
  if (length > kMaxCumProdLength) {
    ctx.unsupported("an axis of " + std::to_string(length) + " elements; supported: at most " +
                    std::to_string(kMaxCumProdLength) + " (the product is unrolled)");
  }
  if (length == 0) {
    ctx.set_output(0, ctx.input(0));
    return;
  }
  const auto element = [&](int64_t k) {
    return ctx.add(OpKind::Slice, {ctx.input(0)},
                   {{"starts", Ints{k}}, {"ends", Ints{k + 1}}, {"axes", Ints{axis}}});
  };
  Ints one_element = x.shape.dims();
  one_element[static_cast<size_t>(axis)] = 1;
  std::vector<ValueId> out(static_cast<size_t>(length));
  ValueId running = kNoValue;  // the product up to the current element
  for (int64_t i = 0; i < length; ++i) {
    const int64_t k = reverse ? length - 1 - i : i;
    if (exclusive) {
      out[static_cast<size_t>(k)] =
          i == 0 ? ctx.add(OpKind::Expand, {scalar_constant(ctx, x.dtype, 1.0)},
                           {{"shape", one_element}})
                 : running;
      if (i + 1 == length) break;
    }
    const ValueId v = element(k);
    running = i == 0 ? v : ctx.add(OpKind::Mul, {running, v});
    if (!exclusive) out[static_cast<size_t>(k)] = running;
  }
  ctx.set_output(0, length == 1 ? out[0] : ctx.add(OpKind::Concat, out, {{"axis", axis}}));
}

}  // namespace

void register_reduction_lowerings(LoweringTable& table) {
  using K = OpKind;
  table.add("ReduceSum", OpKind::ReduceSum, 1, &lower_reduce<K::ReduceSum>);
  table.add("ReduceMean", OpKind::ReduceMean, 1, &lower_reduce<K::ReduceMean>);
  table.add("ReduceMax", OpKind::ReduceMax, 1, &lower_reduce<K::ReduceMax>);
  table.add("ReduceMin", OpKind::ReduceMin, 1, &lower_reduce<K::ReduceMin>);
  table.add("ReduceProd", OpKind::ReduceProd, 1, &lower_reduce<K::ReduceProd>);
  table.add("ReduceSumSquare", OpKind::ReduceSumSquare, 1, &lower_reduce<K::ReduceSumSquare>);
  table.add("ReduceL1", OpKind::ReduceL1, 1, &lower_reduce<K::ReduceL1>);
  table.add("ReduceL2", OpKind::ReduceL2, 1, &lower_reduce<K::ReduceL2>);
  table.add("ReduceLogSumExp", OpKind::ReduceLogSumExp, 1, &lower_reduce<K::ReduceLogSumExp>);
  table.add_composite("ReduceLogSum", OpFamily::Reduction, 1, &lower_reduce_log_sum);
  table.add("ArgMax", OpKind::ArgMax, 1, &lower_arg_reduce<K::ArgMax>);
  table.add("ArgMin", OpKind::ArgMin, 1, &lower_arg_reduce<K::ArgMin>);
  table.add("CumSum", OpKind::CumSum, 11, &lower_cumsum);
  table.add_composite("CumProd", OpFamily::Reduction, 26, &lower_cumprod);
}

}  // namespace volta::onnx
