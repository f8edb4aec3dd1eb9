// The op table's part for family Indexing: element gathers and scatters, TopK, OneHot, Trilu.
// Shape-like ONNX inputs (TopK's k, OneHot's depth) are attributes here; data (indices, updates,
// OneHot's values) stays input.

#include <string>

#include "op_table_builders.h"

namespace volta::op_table {
namespace {

[[noreturn]] void shape_fail(const std::string& message) { throw ShapeError(message); }

std::string str(int64_t v) { return std::to_string(v); }

int axis_in(int64_t axis, int rank, std::string_view what = "axis") {
  const std::optional<int> a = normalize_axis(axis, rank);
  if (!a) {
    shape_fail(std::string(what) + " " + str(axis) + " is out of range for rank " + str(rank) +
               " (valid: [" + str(-rank) + ", " + str(rank - 1) + "])");
  }
  return *a;
}

// GatherElements and ScatterElements: indices (and updates) have data's rank and, off the
// indexed axis, at most data's extent, so every index position names one data element.
int check_element_indices(const Shape& data, const Shape& indices, int64_t axis_attr) {
  if (data.rank() == 0) shape_fail("data must have rank >= 1, got a scalar");
  if (indices.rank() != data.rank()) {
    shape_fail("indices " + indices.str() + " must have the rank of data " + data.str());
  }
  const int axis = axis_in(axis_attr, data.rank());
  for (int d = 0; d < data.rank(); ++d) {
    if (d != axis && indices[d] > data[d]) {
      shape_fail("indices " + indices.str() + " exceed data " + data.str() + " on axis " + str(d) +
                 " (only axis " + str(axis) + " is indexed)");
    }
  }
  return axis;
}

std::vector<TypeInfo> gather_elements(const InferContext& ctx) {
  check_element_indices(ctx.input(0).shape, ctx.input(1).shape, ctx.attrs.get_int("axis"));
  return {{ctx.input(0).dtype, ctx.input(1).shape}};
}

void check_reduction_dtype(const InferContext& ctx) {
  const std::string& reduction = ctx.attrs.get_string("reduction");
  if (reduction != "none" && ctx.input(0).dtype == DType::Bool) {
    shape_fail("reduction \"" + reduction +
               "\" needs numeric data (f32, f64, i32, i64); bool supports only \"none\"");
  }
}

std::vector<TypeInfo> scatter_elements(const InferContext& ctx) {
  check_element_indices(ctx.input(0).shape, ctx.input(1).shape, ctx.attrs.get_int("axis"));
  if (ctx.input(2).shape != ctx.input(1).shape) {
    shape_fail("updates " + ctx.input(2).shape.str() + " must have the shape of indices " +
               ctx.input(1).shape.str());
  }
  check_reduction_dtype(ctx);
  return {ctx.input(0)};
}

// GatherND / ScatterND: the last axis of indices holds tuples of k leading data indices.
int64_t index_tuple_size(const Shape& data, const Shape& indices, int64_t batch_dims) {
  if (data.rank() == 0 || indices.rank() == 0) {
    shape_fail("data " + data.str() + " and indices " + indices.str() + " must have rank >= 1");
  }
  if (batch_dims >= std::min(data.rank(), indices.rank())) {
    shape_fail("batch_dims " + str(batch_dims) + " must be below the ranks of data " + data.str() +
               " and indices " + indices.str());
  }
  const int64_t k = indices[indices.rank() - 1];
  if (k < 1 || k > data.rank() - batch_dims) {
    shape_fail("the last axis of indices " + indices.str() + " holds " + str(k) + "-tuples; data " +
               data.str() + " with batch_dims " + str(batch_dims) + " takes 1 to " +
               str(data.rank() - batch_dims));
  }
  for (int d = 0; d < batch_dims; ++d) {
    if (data[d] != indices[d]) {
      shape_fail("batch axis " + str(d) + " differs: data " + data.str() + ", indices " +
                 indices.str());
    }
  }
  return k;
}

std::vector<TypeInfo> gather_nd(const InferContext& ctx) {
  const Shape& data = ctx.input(0).shape;
  const Shape& indices = ctx.input(1).shape;
  const int64_t k = index_tuple_size(data, indices, ctx.attrs.get_int("batch_dims"));
  const int b = static_cast<int>(ctx.attrs.get_int("batch_dims"));
  std::vector<int64_t> dims(indices.dims().begin(), indices.dims().end() - 1);
  dims.insert(dims.end(), data.dims().begin() + b + k, data.dims().end());
  return {{ctx.input(0).dtype, Shape(dims)}};
}

std::vector<TypeInfo> scatter_nd(const InferContext& ctx) {
  const Shape& data = ctx.input(0).shape;
  const Shape& indices = ctx.input(1).shape;
  const int64_t k = index_tuple_size(data, indices, 0);
  std::vector<int64_t> want(indices.dims().begin(), indices.dims().end() - 1);
  want.insert(want.end(), data.dims().begin() + k, data.dims().end());
  if (ctx.input(2).shape != Shape(want)) {
    shape_fail("updates " + ctx.input(2).shape.str() + " must have shape " + Shape(want).str() +
               " (indices.shape[:-1] + data.shape[" + str(k) + ":])");
  }
  check_reduction_dtype(ctx);
  return {ctx.input(0)};
}

std::vector<TypeInfo> top_k(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  if (x.rank() == 0) shape_fail("TopK needs an input of rank >= 1, got a scalar");
  const int axis = axis_in(ctx.attrs.get_int("axis"), x.rank());
  const int64_t k = ctx.attrs.get_int("k");
  if (k > x[axis]) {
    shape_fail("k = " + str(k) + " exceeds the " + str(x[axis]) + " elements of axis " + str(axis) +
               " of " + x.str());
  }
  Shape out = x;
  out[axis] = k;
  return {{ctx.input(0).dtype, out}, {DType::I64, out}};
}

std::vector<TypeInfo> one_hot(const InferContext& ctx) {
  const Shape& indices = ctx.input(0).shape;
  const Shape& values = ctx.input(1).shape;
  if (values != Shape{2}) shape_fail("values must have shape [2] (off, on), got " + values.str());
  const int rank = indices.rank() + 1;
  const int axis = axis_in(ctx.attrs.get_int("axis"), rank);
  std::vector<int64_t> dims = indices.dims();
  dims.insert(dims.begin() + axis, ctx.attrs.get_int("depth"));
  return {{ctx.input(1).dtype, Shape(dims)}};
}

std::vector<TypeInfo> trilu(const InferContext& ctx) {
  if (ctx.input(0).shape.rank() < 2) {
    shape_fail("Trilu needs an input of rank >= 2, got " + ctx.input(0).shape.str());
  }
  return {ctx.input(0)};
}

// Element gathers and scatters: data of any type, i32/i64 indices.
OpSchema indexing(OpKind kind, std::string_view name, std::vector<InputSpec> inputs,
                  std::vector<AttrSpec> attrs, ShapeFn infer, std::string_view summary) {
  return OpSchema{.kind = kind,
                  .name = name,
                  .family = OpFamily::Indexing,
                  .inputs = std::move(inputs),
                  .outputs = {{"output", 'T'}},
                  .type_params = {{'T', kCoreTypes}, {'I', kIndexTypes}},
                  .attrs = std::move(attrs),
                  .infer = infer,
                  .summary = summary,
                  .nan_mode = NanMode::PassThrough};
}

}  // namespace

void add_indexing_schemas(std::vector<OpSchema>& t) {
  using K = OpKind;
  const InputSpec data{"data", 'T', D::Differentiable};
  const InputSpec indices{"indices", 'I', D::IntegerIndex, false, false, InputDomain::Index};
  const InputSpec updates{"updates", 'T', D::Differentiable};
  const AttrSpec reduction = string_attr("reduction", "none", {"none", "add", "mul", "max", "min"});

  t.push_back(indexing(K::GatherElements, "GatherElements", {data, indices}, {axis_attr(0)},
                       gather_elements,
                       "out[p] = data[p with p[axis] = indices[p]]; negative indices count "
                       "from the end"));
  t.push_back(indexing(K::GatherND, "GatherND", {data, indices}, {int_attr("batch_dims", 0, 0.0)},
                       gather_nd,
                       "slices of data at the index tuples in the last axis of indices, after "
                       "batch_dims shared leading axes"));
  OpSchema elements =
      indexing(K::ScatterElements, "ScatterElements", {data, indices, updates},
               {axis_attr(0), reduction}, scatter_elements,
               "data with data[p with p[axis] = indices[p]] = updates[p] (or +=, *=, max, min: "
               "NaN propagates), applied in index order: with duplicates the last update wins");
  OpSchema nd =
      indexing(K::ScatterND, "ScatterND", {data, indices, updates}, {reduction}, scatter_nd,
               "data with the slices at the index tuples of indices set to "
               "updates (or +=, *=, max, min: NaN propagates), applied in index order");
  for (OpSchema* s : {&elements, &nd}) {
    s->nan_mode = NanMode::Propagate;  // add, mul, max, min propagate; "none" copies NaN bits
    s->accumulator = Accumulator::InputType;
    s->aliasing = Aliasing::InPlaceInput0;
    t.push_back(std::move(*s));
  }
  t.push_back(OpSchema{
      .kind = K::TopK,
      .name = "TopK",
      .family = OpFamily::Indexing,
      .inputs = {{"X", 'T', D::Differentiable}},
      .outputs = {{"Values", 'T'}, {"Indices", 'I'}},
      .type_params = {{'T', kNumericTypes | kNarrowIntegerTypes}, {'I', {DType::I64}}},
      .attrs = {required_min("k", AttrType::Int, 0.0), axis_attr(-1), flag("largest", 1),
                flag("sorted", 1)},
      .infer = top_k,
      .summary = "the k largest (largest=0: smallest) elements along axis and their indices, "
                 "always sorted; ties keep the lower index first; NaN ranks above every number",
      .nan_mode = NanMode::FirstNanWins,
      .tie_break = TieBreak::FirstIndex});
  t.push_back(OpSchema{
      .kind = K::OneHot,
      .name = "OneHot",
      .family = OpFamily::Indexing,
      .inputs = {{"indices", 'I', D::IntegerIndex}, {"values", 'T', D::NotDifferentiable}},
      .outputs = {{"output", 'T'}},
      .type_params = {{'T', kCoreTypes}, {'I', kNumericTypes}},
      .attrs = {required_min("depth", AttrType::Int, 1.0), axis_attr(-1)},
      .infer = one_hot,
      .summary = "values[1] where the new axis equals the index (float indices truncate; "
                 "negative ones count from depth), values[0] elsewhere; out-of-range and NaN "
                 "indices give an all-off line",
      .nan_mode = NanMode::PassThrough});
  t.push_back(OpSchema{.kind = K::Trilu,
                       .name = "Trilu",
                       .family = OpFamily::Indexing,
                       .inputs = {{"input", 'T', D::Differentiable}},
                       .outputs = {{"output", 'T'}},
                       .type_params = {{'T', kCoreTypes}},
                       .attrs = {flag("upper", 1), int_attr("k", 0)},
                       .infer = trilu,
                       .summary = "keep the upper (j - i >= k) or lower (j - i <= k) triangle "
                                  "of the last two axes, zero the rest",
                       .nan_mode = NanMode::PassThrough,
                       .aliasing = Aliasing::InPlaceInput0});
}

}  // namespace volta::op_table
