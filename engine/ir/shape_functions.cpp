#include "shape_functions.h"

#include <algorithm>
#include <numeric>

#include "size_limit.h"
#include "volta/ir/graph.h"
#include "volta/ir/op_helpers.h"

namespace volta {
namespace {

[[noreturn]] void shape_fail(const std::string& message) { throw ShapeError(message); }

int axis_in(int64_t axis, int rank, std::string_view what = "axis") {
  std::optional<int> a = normalize_axis(axis, rank);
  if (!a) {
    shape_fail(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " +
               std::to_string(rank) + " (valid: [" + std::to_string(-rank) + ", " +
               std::to_string(rank - 1) + "])");
  }
  return *a;
}

std::string ints_str(const std::vector<int64_t>& v) { return Shape(v).str(); }

Shape broadcast_all(const InferContext& ctx, int first) {
  Shape out = ctx.input(first).shape;
  for (int i = first + 1; i < static_cast<int>(ctx.inputs.size()); ++i) {
    std::optional<Shape> b = broadcast_shapes(out, ctx.input(i).shape);
    if (!b) {
      shape_fail("input " + std::to_string(i) + " shape " + ctx.input(i).shape.str() +
                 " does not broadcast with " + out.str());
    }
    out = *b;
  }
  return out;
}

// `given` (the attribute `name`) as a permutation of `rank` axes, negative entries counted from
// the end.
std::vector<int> checked_perm(const std::vector<int64_t>& given, int rank, std::string_view name) {
  if (static_cast<int>(given.size()) != rank) {
    shape_fail(std::string(name) + " " + ints_str(given) + " has " + std::to_string(given.size()) +
               " entries for rank " + std::to_string(rank));
  }
  std::vector<int> perm(static_cast<size_t>(rank));
  std::vector<char> seen(static_cast<size_t>(rank), 0);
  for (int i = 0; i < rank; ++i) {
    const int a = axis_in(given[static_cast<size_t>(i)], rank, std::string(name) + " entry");
    if (seen[static_cast<size_t>(a)]++)
      shape_fail(std::string(name) + " " + ints_str(given) + " is not a permutation");
    perm[static_cast<size_t>(i)] = a;
  }
  return perm;
}

}  // namespace

bool ReduceAxes::reduces(int axis) const {
  return std::find(axes.begin(), axes.end(), axis) != axes.end();
}

ReduceAxes resolve_reduce_axes(const AttrReader& attrs, int rank) {
  ReduceAxes out;
  const std::vector<int64_t>& given = attrs.get_ints("axes");
  if (given.empty()) {
    if (attrs.get_int("noop_with_empty_axes") != 0) {
      out.noop = true;
      return out;
    }
    out.axes.resize(static_cast<size_t>(rank));
    std::iota(out.axes.begin(), out.axes.end(), 0);
    return out;
  }
  for (int64_t a : given) out.axes.push_back(axis_in(a, rank, "reduce axis"));
  std::sort(out.axes.begin(), out.axes.end());
  if (std::adjacent_find(out.axes.begin(), out.axes.end()) != out.axes.end()) {
    shape_fail("reduce axes " + ints_str(given) + " name an axis twice");
  }
  return out;
}

std::vector<SliceRange> resolve_slice(const AttrReader& attrs, const Shape& input) {
  const std::vector<int64_t>& starts = attrs.get_ints("starts");
  const std::vector<int64_t>& ends = attrs.get_ints("ends");
  std::vector<int64_t> axes = attrs.get_ints("axes");
  std::vector<int64_t> steps = attrs.get_ints("steps");
  if (axes.empty()) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    shape_fail("starts, ends, axes and steps must have equal lengths (got " +
               std::to_string(starts.size()) + ", " + std::to_string(ends.size()) + ", " +
               std::to_string(axes.size()) + ", " + std::to_string(steps.size()) + ")");
  }
  std::vector<SliceRange> out;
  out.reserve(static_cast<size_t>(input.rank()));
  for (int i = 0; i < input.rank(); ++i) out.push_back({0, 1, input[i]});
  std::vector<char> seen(static_cast<size_t>(input.rank()), 0);
  for (size_t k = 0; k < starts.size(); ++k) {
    const int axis = axis_in(axes[k], input.rank(), "slice axis");
    if (seen[static_cast<size_t>(axis)]++)
      shape_fail("slice axes repeat axis " + std::to_string(axis));
    const int64_t dim = input[axis];
    const int64_t step = steps[k];
    if (step == 0) shape_fail("slice step must not be 0 (axis " + std::to_string(axis) + ")");
    auto clamp = [&](int64_t v, int64_t lo, int64_t hi) {
      if (v < 0) v += dim;
      return std::clamp(v, lo, hi);
    };
    int64_t start, end;
    if (step > 0) {
      start = clamp(starts[k], 0, dim);
      end = clamp(ends[k], 0, dim);
    } else {
      start = clamp(starts[k], -1, dim - 1);
      end = clamp(ends[k], -1, dim - 1);
      // Large negative bounds clamp to -1, meaning "before the first element".
      if (starts[k] < -dim) start = -1;
      if (ends[k] < -dim) end = -1;
    }
    const int64_t span = step > 0 ? end - start : start - end;
    const int64_t abs_step = step > 0 ? step : -step;
    const int64_t count = span <= 0 ? 0 : (span + abs_step - 1) / abs_step;
    out[static_cast<size_t>(axis)] = {count == 0 ? 0 : start, step, count};
  }
  return out;
}

std::vector<int> resolve_perm(const AttrReader& attrs, int rank) {
  const std::vector<int64_t>& given = attrs.get_ints("perm");
  if (!given.empty()) return checked_perm(given, rank, "perm");
  std::vector<int> perm(static_cast<size_t>(rank));
  for (int i = 0; i < rank; ++i) perm[static_cast<size_t>(i)] = rank - 1 - i;
  return perm;
}

MatMulPerms resolve_matmul_perms(const AttrReader& attrs, int rank_a, int rank_b) {
  if (rank_a < 2 || rank_b < 2) {
    shape_fail("PermutedMatMul needs A and B of rank >= 2, got ranks " + std::to_string(rank_a) +
               " and " + std::to_string(rank_b));
  }
  const int rank_y = std::max(rank_a, rank_b);
  MatMulPerms perms{.a = checked_perm(attrs.get_ints("perm_a"), rank_a, "perm_a"),
                    .b = checked_perm(attrs.get_ints("perm_b"), rank_b, "perm_b"),
                    .y = checked_perm(attrs.get_ints("perm_y"), rank_y, "perm_y")};
  if (perms.y.back() != rank_y - 1) {
    shape_fail("perm_y " + ints_str(attrs.get_ints("perm_y")) +
               " must leave the product's last axis last (Y's rows stay contiguous)");
  }
  return perms;
}

Shape permute_shape(const Shape& s, const std::vector<int>& perm) {
  Shape out = s;
  for (int i = 0; i < s.rank(); ++i) out[i] = s[perm[static_cast<size_t>(i)]];
  return out;
}

std::vector<int64_t> resolve_split(const AttrReader& attrs, int64_t dim, int num_outputs) {
  std::vector<int64_t> sizes = attrs.get_ints("split");
  if (sizes.empty()) {
    if (num_outputs <= 0 || dim % num_outputs != 0) {
      shape_fail("cannot split a dimension of " + std::to_string(dim) + " evenly into " +
                 std::to_string(num_outputs) + " outputs; give the split attribute");
    }
    return std::vector<int64_t>(static_cast<size_t>(num_outputs), dim / num_outputs);
  }
  if (static_cast<int>(sizes.size()) != num_outputs) {
    shape_fail("split " + ints_str(sizes) + " has " + std::to_string(sizes.size()) + " sizes for " +
               std::to_string(num_outputs) + " outputs");
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) shape_fail("split sizes must be >= 0, got " + ints_str(sizes));
    total += s;
  }
  if (total != dim) {
    shape_fail("split sizes " + ints_str(sizes) + " sum to " + std::to_string(total) +
               ", the axis has " + std::to_string(dim));
  }
  return sizes;
}

namespace shape_fn {

std::vector<TypeInfo> same_as_input0(const InferContext& ctx) { return {ctx.input(0)}; }

std::vector<TypeInfo> broadcast(const InferContext& ctx) {
  return {{ctx.input(0).dtype, broadcast_all(ctx, 0)}};
}

std::vector<TypeInfo> broadcast_to_bool(const InferContext& ctx) {
  return {{DType::Bool, broadcast_all(ctx, 0)}};
}

std::vector<TypeInfo> where(const InferContext& ctx) {
  return {{ctx.input(1).dtype, broadcast_all(ctx, 0)}};
}

std::vector<TypeInfo> cast(const InferContext& ctx) {
  const std::string& to = ctx.attrs.get_string("to");
  std::optional<DType> d = parse_dtype(to);
  if (!d) shape_fail("Cast to '" + to + "' is not supported (f32, f64, i64, i32, bool)");
  return {{*d, ctx.input(0).shape}};
}

std::vector<TypeInfo> bit_cast(const InferContext& ctx) {
  const std::string& to = ctx.attrs.get_string("to");
  const std::optional<DType> d = parse_dtype(to);
  if (!d) shape_fail("BitCast to '" + to + "' is not a Volta dtype");
  const DType from = ctx.input(0).dtype;
  if (dtype_size(*d) != dtype_size(from)) {
    shape_fail("BitCast from " + std::string(dtype_name(from)) + " (" +
               std::to_string(8 * dtype_size(from)) + " bits) to " + to + " (" +
               std::to_string(8 * dtype_size(*d)) +
               " bits): the two types must have the same width");
  }
  return {{*d, ctx.input(0).shape}};
}

std::vector<TypeInfo> matmul(const InferContext& ctx) {
  const Shape& a = ctx.input(0).shape;
  const Shape& b = ctx.input(1).shape;
  if (a.rank() == 0 || b.rank() == 0) {
    shape_fail("MatMul needs inputs of rank >= 1, got " + a.str() + " and " + b.str());
  }
  const int64_t k_a = a[a.rank() - 1];
  const int64_t k_b = b.rank() == 1 ? b[0] : b[b.rank() - 2];
  if (k_a != k_b) {
    shape_fail("inner dimensions differ: A is " + a.str() + ", B is " + b.str() + " (" +
               std::to_string(k_a) + " != " + std::to_string(k_b) + ")");
  }
  Shape batch_a(std::vector<int64_t>(a.dims().begin(), a.dims().end() - std::min(a.rank(), 2)));
  Shape batch_b(std::vector<int64_t>(b.dims().begin(), b.dims().end() - std::min(b.rank(), 2)));
  std::optional<Shape> batch = broadcast_shapes(batch_a, batch_b);
  if (!batch) {
    shape_fail("batch dimensions " + batch_a.str() + " and " + batch_b.str() +
               " do not broadcast (A is " + a.str() + ", B is " + b.str() + ")");
  }
  std::vector<int64_t> dims = batch->dims();
  if (a.rank() >= 2) dims.push_back(a[a.rank() - 2]);
  if (b.rank() >= 2) dims.push_back(b[b.rank() - 1]);
  return {{ctx.input(0).dtype, Shape(dims)}};
}

std::vector<TypeInfo> gemm(const InferContext& ctx) {
  const Shape& a = ctx.input(0).shape;
  const Shape& b = ctx.input(1).shape;
  if (a.rank() != 2 || b.rank() != 2) {
    shape_fail("Gemm needs 2-D A and B, got " + a.str() + " and " + b.str());
  }
  const bool ta = ctx.attrs.get_int("transA") != 0;
  const bool tb = ctx.attrs.get_int("transB") != 0;
  const int64_t m = ta ? a[1] : a[0], ka = ta ? a[0] : a[1];
  const int64_t kb = tb ? b[1] : b[0], n = tb ? b[0] : b[1];
  if (ka != kb) {
    shape_fail("inner dimensions differ: op(A) is [" + std::to_string(m) + "," +
               std::to_string(ka) + "], op(B) is [" + std::to_string(kb) + "," + std::to_string(n) +
               "]");
  }
  const Shape out{m, n};
  if (ctx.has_input(2)) {
    std::optional<Shape> c = broadcast_shapes(ctx.input(2).shape, out);
    if (!c || *c != out) {
      shape_fail("C of shape " + ctx.input(2).shape.str() + " does not broadcast to " + out.str());
    }
  }
  return {{ctx.input(0).dtype, out}};
}

std::vector<TypeInfo> softmax(const InferContext& ctx) {
  axis_in(ctx.attrs.get_int("axis"), ctx.input(0).shape.rank());
  return {ctx.input(0)};
}

std::vector<TypeInfo> layer_normalization(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  const int axis = axis_in(ctx.attrs.get_int("axis"), x.rank());
  const Shape normalized(std::vector<int64_t>(x.dims().begin() + axis, x.dims().end()));
  for (int i = 1; i <= 2; ++i) {
    if (!ctx.has_input(i)) continue;
    std::optional<Shape> b = broadcast_shapes(ctx.input(i).shape, normalized);
    if (!b || *b != normalized) {
      shape_fail(std::string(i == 1 ? "Scale" : "B") + " of shape " + ctx.input(i).shape.str() +
                 " does not broadcast to the normalized shape " + normalized.str());
    }
  }
  std::vector<TypeInfo> out = {ctx.input(0)};
  Shape stats = x;
  for (int i = axis; i < x.rank(); ++i) stats[i] = 1;
  for (int i = 1; i < ctx.num_outputs; ++i) out.push_back({ctx.input(0).dtype, stats});
  return out;
}

std::vector<TypeInfo> reduce(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  const ReduceAxes axes = resolve_reduce_axes(ctx.attrs, x.rank());
  if (axes.noop) return {ctx.input(0)};
  const bool keep = ctx.attrs.get_int("keepdims") != 0;
  std::vector<int64_t> dims;
  for (int i = 0; i < x.rank(); ++i) {
    if (!axes.reduces(i)) {
      dims.push_back(x[i]);
    } else if (keep) {
      dims.push_back(1);
    }
  }
  return {{ctx.input(0).dtype, Shape(dims)}};
}

std::vector<TypeInfo> arg_reduce(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  const int axis = axis_in(ctx.attrs.get_int("axis"), x.rank());
  if (x[axis] == 0) {
    shape_fail("cannot take the index of an extreme over an empty axis " + std::to_string(axis) +
               " of " + x.str());
  }
  std::vector<int64_t> dims = x.dims();
  if (ctx.attrs.get_int("keepdims") != 0) {
    dims[static_cast<size_t>(axis)] = 1;
  } else {
    dims.erase(dims.begin() + axis);
  }
  return {{DType::I64, Shape(dims)}};
}

std::vector<TypeInfo> cumsum(const InferContext& ctx) {
  axis_in(ctx.attrs.get_int("axis"), ctx.input(0).shape.rank());
  return {ctx.input(0)};
}

std::vector<TypeInfo> reshape(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  const std::vector<int64_t>& target = ctx.attrs.get_ints("shape");
  const bool allow_zero = ctx.attrs.get_int("allowzero") != 0;
  std::vector<int64_t> dims(target.size());
  int infer_at = -1;
  int64_t known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t d = target[i];
    if (d == 0 && !allow_zero) {
      if (static_cast<int>(i) >= x.rank()) {
        shape_fail("shape " + ints_str(target) + " copies dim " + std::to_string(i) +
                   " (0) but the input " + x.str() + " has rank " + std::to_string(x.rank()));
      }
      d = x[static_cast<int>(i)];
    }
    if (d == -1) {
      if (infer_at >= 0) shape_fail("shape " + ints_str(target) + " has more than one -1");
      infer_at = static_cast<int>(i);
      continue;
    }
    if (d < 0) shape_fail("shape " + ints_str(target) + " has a negative dim " + std::to_string(d));
    const std::optional<int64_t> product = bounded_product(known, d);
    if (!product) shape_fail("shape " + ints_str(target) + " has more than 2^48 elements");
    dims[i] = d;
    known = *product;
  }
  if (infer_at >= 0) {
    if (allow_zero && known == 0)
      shape_fail("shape " + ints_str(target) + " mixes 0 and -1 with allowzero");
    if (known == 0 || x.numel() % known != 0) {
      shape_fail("cannot infer the -1 in " + ints_str(target) + " for " +
                 std::to_string(x.numel()) + " elements");
    }
    dims[static_cast<size_t>(infer_at)] = x.numel() / known;
  } else if (known != x.numel()) {
    shape_fail("shape " + ints_str(target) + " holds " + std::to_string(known) +
               " elements, the input " + x.str() + " holds " + std::to_string(x.numel()));
  }
  return {{ctx.input(0).dtype, Shape(dims)}};
}

std::vector<TypeInfo> transpose(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  return {{ctx.input(0).dtype, permute_shape(x, resolve_perm(ctx.attrs, x.rank()))}};
}

std::vector<TypeInfo> concat(const InferContext& ctx) {
  const Shape& first = ctx.input(0).shape;
  const int axis = axis_in(ctx.attrs.get_int("axis"), first.rank());
  Shape out = first;
  for (int i = 1; i < static_cast<int>(ctx.inputs.size()); ++i) {
    const Shape& s = ctx.input(i).shape;
    bool ok = s.rank() == first.rank();
    for (int d = 0; ok && d < s.rank(); ++d) ok = d == axis || s[d] == first[d];
    if (!ok) {
      shape_fail("input " + std::to_string(i) + " shape " + s.str() + " differs from " +
                 first.str() + " outside axis " + std::to_string(axis));
    }
    out[axis] += s[axis];
  }
  return {{ctx.input(0).dtype, out}};
}

std::vector<TypeInfo> split(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  const int axis = axis_in(ctx.attrs.get_int("axis"), x.rank());
  const std::vector<int64_t> sizes = resolve_split(ctx.attrs, x[axis], ctx.num_outputs);
  std::vector<TypeInfo> out;
  for (int64_t s : sizes) {
    Shape part = x;
    part[axis] = s;
    out.push_back({ctx.input(0).dtype, part});
  }
  return out;
}

std::vector<TypeInfo> slice(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  const std::vector<SliceRange> ranges = resolve_slice(ctx.attrs, x);
  Shape out = x;
  for (int i = 0; i < x.rank(); ++i) out[i] = ranges[static_cast<size_t>(i)].count;
  return {{ctx.input(0).dtype, out}};
}

std::vector<TypeInfo> gather(const InferContext& ctx) {
  const Shape& data = ctx.input(0).shape;
  if (data.rank() == 0) shape_fail("Gather needs data of rank >= 1, got a scalar");
  const int axis = axis_in(ctx.attrs.get_int("axis"), data.rank());
  std::vector<int64_t> dims(data.dims().begin(), data.dims().begin() + axis);
  for (int64_t d : ctx.input(1).shape.dims()) dims.push_back(d);
  dims.insert(dims.end(), data.dims().begin() + axis + 1, data.dims().end());
  return {{ctx.input(0).dtype, Shape(dims)}};
}

std::vector<TypeInfo> expand(const InferContext& ctx) {
  const Shape target(ctx.attrs.get_ints("shape"));
  for (int64_t d : target.dims()) {
    if (d < 0) shape_fail("Expand shape " + target.str() + " has a negative dim");
  }
  std::optional<Shape> out = broadcast_shapes(ctx.input(0).shape, target);
  if (!out) {
    shape_fail("input " + ctx.input(0).shape.str() + " does not broadcast with " + target.str());
  }
  return {{ctx.input(0).dtype, *out}};
}

std::vector<TypeInfo> squeeze(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  const std::vector<int64_t>& given = ctx.attrs.get_ints("axes");
  std::vector<char> drop(static_cast<size_t>(x.rank()), 0);
  for (int64_t a : given) {
    const int axis = axis_in(a, x.rank(), "squeeze axis");
    if (x[axis] != 1) {
      shape_fail("cannot squeeze axis " + std::to_string(axis) + " of " + x.str() +
                 ": its size is " + std::to_string(x[axis]) + ", not 1");
    }
    drop[static_cast<size_t>(axis)] = 1;
  }
  std::vector<int64_t> dims;
  for (int i = 0; i < x.rank(); ++i) {
    const bool squeezed = given.empty() ? x[i] == 1 : drop[static_cast<size_t>(i)] != 0;
    if (!squeezed) dims.push_back(x[i]);
  }
  return {{ctx.input(0).dtype, Shape(dims)}};
}

std::vector<TypeInfo> unsqueeze(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  const std::vector<int64_t>& given = ctx.attrs.get_ints("axes");
  if (given.empty()) shape_fail("Unsqueeze needs at least one axis");
  const int rank = x.rank() + static_cast<int>(given.size());
  std::vector<char> inserted(static_cast<size_t>(rank), 0);
  for (int64_t a : given) {
    const int axis = axis_in(a, rank, "unsqueeze axis");
    if (inserted[static_cast<size_t>(axis)]++) {
      shape_fail("unsqueeze axes " + ints_str(given) + " name axis " + std::to_string(axis) +
                 " twice");
    }
  }
  std::vector<int64_t> dims;
  dims.reserve(static_cast<size_t>(rank));
  int next = 0;
  for (int i = 0; i < rank; ++i) dims.push_back(inserted[static_cast<size_t>(i)] ? 1 : x[next++]);
  return {{ctx.input(0).dtype, Shape(dims)}};
}

std::vector<TypeInfo> flatten(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  const int64_t axis_attr = ctx.attrs.get_int("axis");
  if (axis_attr < -x.rank() || axis_attr > x.rank()) {
    shape_fail("Flatten axis " + std::to_string(axis_attr) + " is out of range for rank " +
               std::to_string(x.rank()) + " (valid: [" + std::to_string(-x.rank()) + ", " +
               std::to_string(x.rank()) + "])");
  }
  const int axis = static_cast<int>(axis_attr < 0 ? axis_attr + x.rank() : axis_attr);
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < x.rank(); ++i) (i < axis ? outer : inner) *= x[i];
  return {{ctx.input(0).dtype, Shape{outer, inner}}};
}

std::vector<TypeInfo> constant(const InferContext& ctx) {
  const Tensor& value = ctx.attrs.get_tensor("value");
  return {{value.dtype(), value.shape()}};
}

void require_rank_at_least(const Shape& x, int rank, std::string_view layout) {
  if (x.rank() < rank) {
    shape_fail("input of shape " + x.str() + " has rank " + std::to_string(x.rank()) +
               "; the op needs rank >= " + std::to_string(rank) + " (" + std::string(layout) + ")");
  }
}

void require_per_channel(const InferContext& ctx, int first, int last) {
  const int64_t channels = ctx.input(0).shape[1];
  for (int i = first; i <= last; ++i) {
    const Shape& s = ctx.input(i).shape;
    if (s != Shape{channels}) {
      shape_fail("input " + std::to_string(i) + " '" +
                 std::string(op_schema(ctx.node.op).inputs[static_cast<size_t>(i)].name) +
                 "' has shape " + s.str() + "; it must be [C] = [" + std::to_string(channels) +
                 "] for the input of shape " + ctx.input(0).shape.str());
    }
  }
}

}  // namespace shape_fn
}  // namespace volta
