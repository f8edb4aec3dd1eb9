// The op table's part for element gathers and scatters, TopK, OneHot, Trilu (family
// Indexing) and Tile, Pad, DepthToSpace, SpaceToDepth, ReverseSequence (family Movement).
// Shape-like ONNX inputs (TopK's k, Tile's repeats, Pad's pads, OneHot's depth) are
// attributes here; data (indices, updates, Pad's constant value, OneHot's values) stays input.

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

std::vector<TypeInfo> tile(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  const std::vector<int64_t>& repeats = ctx.attrs.get_ints("repeats");
  if (static_cast<int>(repeats.size()) != x.rank()) {
    shape_fail("repeats " + Shape(repeats).str() + " has " +
               str(static_cast<int64_t>(repeats.size())) + " entries for an input of rank " +
               str(x.rank()));
  }
  Shape out = x;
  for (int d = 0; d < x.rank(); ++d) out[d] *= repeats[static_cast<size_t>(d)];
  return {{ctx.input(0).dtype, out}};
}

std::vector<TypeInfo> pad(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  const std::vector<int64_t>& pads = ctx.attrs.get_ints("pads");
  const std::string& mode = ctx.attrs.get_string("mode");
  if (static_cast<int>(pads.size()) != 2 * x.rank()) {
    shape_fail("pads " + Shape(pads).str() + " has " + str(static_cast<int64_t>(pads.size())) +
               " entries; an input of rank " + str(x.rank()) + " takes " + str(2 * x.rank()) +
               " (all begins, then all ends)");
  }
  if (ctx.has_input(1)) {
    if (mode != "constant") {
      shape_fail("a constant value is only used by mode \"constant\", not \"" + mode + "\"");
    }
    if (ctx.input(1).shape.numel() != 1) {
      shape_fail("the constant value must hold one element, got shape " + ctx.input(1).shape.str());
    }
  }
  Shape out = x;
  for (int d = 0; d < x.rank(); ++d) {
    out[d] = x[d] + pads[static_cast<size_t>(d)] +
             pads[static_cast<size_t>(d) + static_cast<size_t>(x.rank())];
    if (out[d] < 0) {
      shape_fail("pads " + Shape(pads).str() + " crop axis " + str(d) + " of " + x.str() +
                 " below zero");
    }
    if (x[d] == 0 && out[d] > 0 && mode != "constant") {
      shape_fail("mode \"" + mode + "\" cannot pad axis " + str(d) + " of " + x.str() +
                 ": it has no elements to repeat");
    }
  }
  return {{ctx.input(0).dtype, out}};
}

void check_nchw(const Shape& x, std::string_view op) {
  if (x.rank() != 4) shape_fail(std::string(op) + " needs a 4-D [N,C,H,W] input, got " + x.str());
}

std::vector<TypeInfo> depth_to_space(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  check_nchw(x, "DepthToSpace");
  const int64_t b = ctx.attrs.get_int("blocksize");
  if (x[1] % (b * b) != 0) {
    shape_fail("channels " + str(x[1]) + " of " + x.str() +
               " are not a multiple of blocksize^2 = " + str(b * b));
  }
  return {{ctx.input(0).dtype, Shape{x[0], x[1] / (b * b), x[2] * b, x[3] * b}}};
}

std::vector<TypeInfo> space_to_depth(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  check_nchw(x, "SpaceToDepth");
  const int64_t b = ctx.attrs.get_int("blocksize");
  if (x[2] % b != 0 || x[3] % b != 0) {
    shape_fail("height and width of " + x.str() + " are not multiples of blocksize " + str(b));
  }
  return {{ctx.input(0).dtype, Shape{x[0], x[1] * b * b, x[2] / b, x[3] / b}}};
}

std::vector<TypeInfo> reverse_sequence(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  if (x.rank() < 2) shape_fail("ReverseSequence needs an input of rank >= 2, got " + x.str());
  const int64_t batch_axis = ctx.attrs.get_int("batch_axis");
  if (batch_axis == ctx.attrs.get_int("time_axis")) {
    shape_fail("batch_axis and time_axis are both " + str(batch_axis));
  }
  const Shape want{x[static_cast<int>(batch_axis)]};
  if (ctx.input(1).shape != want) {
    shape_fail("sequence_lens " + ctx.input(1).shape.str() + " must have shape " + want.str() +
               " (one length per batch entry of " + x.str() + ")");
  }
  return {ctx.input(0)};
}

AttrSpec string_attr(std::string_view name, const char* def,
                     std::vector<std::string_view> allowed) {
  return {name,         AttrType::String, AttrValue{std::string(def)},
          std::nullopt, std::nullopt,     std::move(allowed)};
}

AttrSpec int_attr(std::string_view name, int64_t def, std::optional<double> min = std::nullopt,
                  std::optional<double> max = std::nullopt) {
  return {name, AttrType::Int, AttrValue{def}, min, max};
}

AttrSpec required_min(std::string_view name, AttrType type, double min) {
  return {name, type, std::nullopt, min};
}

// Element gathers and scatters: data of any type, i32/i64 indices.
OpSchema indexing(OpKind kind, std::string_view name, std::vector<InputSpec> inputs,
                  std::vector<AttrSpec> attrs, ShapeFn infer, int onnx_since,
                  std::string_view summary) {
  return OpSchema{.kind = kind,
                  .name = name,
                  .family = OpFamily::Indexing,
                  .inputs = std::move(inputs),
                  .outputs = {{"output", 'T'}},
                  .type_params = {{'T', kAllTypes}, {'I', kIndexTypes}},
                  .attrs = std::move(attrs),
                  .infer = infer,
                  .summary = summary,
                  .nan_mode = NanMode::PassThrough,
                  .onnx_since = onnx_since};
}

}  // namespace

void add_indexing_schemas(std::vector<OpSchema>& t) {
  using K = OpKind;
  const InputSpec data{"data", 'T'};
  const InputSpec indices{"indices", 'I', false, false, InputDomain::Index};
  const InputSpec updates{"updates", 'T'};
  const AttrSpec reduction = string_attr("reduction", "none", {"none", "add", "mul"});

  t.push_back(indexing(K::GatherElements, "GatherElements", {data, indices}, {axis_attr(0)},
                       gather_elements, 11,
                       "out[p] = data[p with p[axis] = indices[p]]; negative indices count "
                       "from the end"));
  t.push_back(indexing(K::GatherND, "GatherND", {data, indices}, {int_attr("batch_dims", 0, 0.0)},
                       gather_nd, 11,
                       "slices of data at the index tuples in the last axis of indices, after "
                       "batch_dims shared leading axes"));
  OpSchema elements =
      indexing(K::ScatterElements, "ScatterElements", {data, indices, updates},
               {axis_attr(0), reduction}, scatter_elements, 11,
               "data with data[p with p[axis] = indices[p]] = updates[p] (or += / *=), applied in "
               "index order: with duplicates the last update wins");
  OpSchema nd =
      indexing(K::ScatterND, "ScatterND", {data, indices, updates}, {reduction}, scatter_nd, 11,
               "data with the slices at the index tuples of indices set to "
               "updates (or += / *=), applied in index order");
  for (OpSchema* s : {&elements, &nd}) {
    s->nan_mode = NanMode::Propagate;  // add / mul propagate; "none" copies NaN bits
    s->accumulator = Accumulator::InputType;
    s->aliasing = Aliasing::InPlaceInput0;
    t.push_back(std::move(*s));
  }
  t.push_back(OpSchema{
      .kind = K::TopK,
      .name = "TopK",
      .family = OpFamily::Indexing,
      .inputs = {{"X", 'T'}},
      .outputs = {{"Values", 'T'}, {"Indices", 'I'}},
      .type_params = {{'T', kNumericTypes}, {'I', {DType::I64}}},
      .attrs = {required_min("k", AttrType::Int, 0.0), axis_attr(-1), flag("largest", 1),
                flag("sorted", 1)},
      .infer = top_k,
      .summary = "the k largest (largest=0: smallest) elements along axis and their indices, "
                 "always sorted; ties keep the lower index first; NaN ranks above every number",
      .nan_mode = NanMode::FirstNanWins,
      .tie_break = TieBreak::FirstIndex,
      .onnx_since = 1});
  t.push_back(OpSchema{
      .kind = K::OneHot,
      .name = "OneHot",
      .family = OpFamily::Indexing,
      .inputs = {{"indices", 'I'}, {"values", 'T'}},
      .outputs = {{"output", 'T'}},
      .type_params = {{'T', kAllTypes}, {'I', kNumericTypes}},
      .attrs = {required_min("depth", AttrType::Int, 1.0), axis_attr(-1)},
      .infer = one_hot,
      .summary = "values[1] where the new axis equals the index (float indices truncate; "
                 "negative ones count from depth), values[0] elsewhere; out-of-range and NaN "
                 "indices give an all-off line",
      .differentiability = D::NotDifferentiable,
      .nan_mode = NanMode::PassThrough,
      .onnx_since = 9});
  t.push_back(OpSchema{.kind = K::Trilu,
                       .name = "Trilu",
                       .family = OpFamily::Indexing,
                       .inputs = {{"input", 'T'}},
                       .outputs = {{"output", 'T'}},
                       .type_params = {{'T', kAllTypes}},
                       .attrs = {flag("upper", 1), int_attr("k", 0)},
                       .infer = trilu,
                       .summary = "keep the upper (j - i >= k) or lower (j - i <= k) triangle "
                                  "of the last two axes, zero the rest",
                       .nan_mode = NanMode::PassThrough,
                       .aliasing = Aliasing::InPlaceInput0,
                       .onnx_since = 14});

  const std::vector<OutputSpec> one_out = {{"output", 'T'}};
  t.push_back(movement(K::Tile, "Tile", {{"input", 'T'}}, one_out,
                       {required_min("repeats", AttrType::Ints, 0.0)}, tile, Aliasing::None, 1,
                       "repeat the input repeats[d] times along each axis d"));
  t.push_back(movement(K::Pad, "Pad", {{"data", 'T'}, {"constant_value", 'T', true}}, one_out,
                       {required("pads", AttrType::Ints),
                        string_attr("mode", "constant", {"constant", "reflect", "edge"})},
                       pad, Aliasing::None, 1,
                       "pad (negative pads crop) with constant_value (default 0), the mirror "
                       "image without the edge (reflect) or the edge element (edge)"));
  t.push_back(movement(
      K::DepthToSpace, "DepthToSpace", {{"input", 'T'}}, one_out,
      {required_min("blocksize", AttrType::Int, 1.0), string_attr("mode", "DCR", {"DCR", "CRD"})},
      depth_to_space, Aliasing::None, 1,
      "[N,C,H,W] -> [N,C/b^2,H*b,W*b]; DCR reads channel (i*b+j)*C'+c, CRD "
      "reads c*b^2+i*b+j"));
  t.push_back(movement(K::SpaceToDepth, "SpaceToDepth", {{"input", 'T'}}, one_out,
                       {required_min("blocksize", AttrType::Int, 1.0)}, space_to_depth,
                       Aliasing::None, 1,
                       "[N,C,H,W] -> [N,C*b^2,H/b,W/b], block offset (i,j) to channel "
                       "(i*b+j)*C+c"));
  t.push_back(movement(
      K::ReverseSequence, "ReverseSequence",
      {{"input", 'T'}, {"sequence_lens", 'I', false, false, InputDomain::Index}}, one_out,
      {int_attr("batch_axis", 1, 0.0, 1.0), int_attr("time_axis", 0, 0.0, 1.0)}, reverse_sequence,
      Aliasing::None, 10, "reverse the first sequence_lens[b] time steps of each batch entry b"));
}

}  // namespace volta::op_table
