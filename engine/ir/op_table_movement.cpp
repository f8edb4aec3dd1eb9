// The op table's part for family Movement: reshapes, copies, gathers along an axis, the layout
// ops (Tile, Pad, DepthToSpace, SpaceToDepth, ReverseSequence) and Constant. Bytes are copied or
// rearranged, never computed on. Shape-like ONNX inputs (Tile's repeats, Pad's pads) are
// attributes here.

#include <string>

#include "op_table_builders.h"
#include "size_limit.h"

namespace volta::op_table {
namespace {

[[noreturn]] void shape_fail(const std::string& message) { throw ShapeError(message); }

std::string str(int64_t v) { return std::to_string(v); }

std::vector<TypeInfo> tile(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  const std::vector<int64_t>& repeats = ctx.attrs.get_ints("repeats");
  if (static_cast<int>(repeats.size()) != x.rank()) {
    shape_fail("repeats " + Shape(repeats).str() + " has " +
               str(static_cast<int64_t>(repeats.size())) + " entries for an input of rank " +
               str(x.rank()));
  }
  Shape out = x;
  for (int d = 0; d < x.rank(); ++d) {
    const std::optional<int64_t> tiled = bounded_product(x[d], repeats[static_cast<size_t>(d)]);
    if (!tiled) {
      shape_fail("repeats " + Shape(repeats).str() + " tile " + x.str() + " past 2^48 elements");
    }
    out[d] = *tiled;
  }
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

}  // namespace

void add_movement_schemas(std::vector<OpSchema>& t) {
  using K = OpKind;

  const std::vector<OutputSpec> one_out = {{"output", 'T'}};
  t.push_back(movement(K::Reshape, "Reshape", {{"data", 'T', D::Differentiable}}, one_out,
                       {required("shape", AttrType::Ints), flag("allowzero", 0)}, shape_fn::reshape,
                       Aliasing::ViewOfInput0,
                       "same elements, new shape (0 copies a dim, -1 infers one)"));
  t.push_back(with_traits(movement(K::Transpose, "Transpose", {{"data", 'T', D::Differentiable}},
                                   one_out, {ints_attr("perm")}, shape_fn::transpose,
                                   Aliasing::None, "permute axes (default: reverse them)"),
                          {OpTrait::AxisAttribute}));
  t.push_back(movement(K::Concat, "Concat", {{"inputs", 'T', D::Differentiable, false, true}},
                       one_out, {required("axis", AttrType::Int)}, shape_fn::concat, Aliasing::None,
                       "join along axis"));
  t.push_back(movement(K::Split, "Split", {{"input", 'T', D::Differentiable}},
                       {{"outputs", 'T', false, true}}, {axis_attr(0), ints_attr("split")},
                       shape_fn::split, Aliasing::None,
                       "split along axis into the given sizes, or evenly"));
  t.push_back(movement(K::Slice, "Slice", {{"data", 'T', D::Differentiable}}, one_out,
                       {required("starts", AttrType::Ints), required("ends", AttrType::Ints),
                        ints_attr("axes"), ints_attr("steps")},
                       shape_fn::slice, Aliasing::None,
                       "strided slice with ONNX clamping; negative steps allowed"));
  t.push_back(movement(K::Gather, "Gather",
                       {{"data", 'T', D::Differentiable},
                        {"indices", 'I', D::IntegerIndex, false, false, InputDomain::Index}},
                       one_out, {axis_attr(0)}, shape_fn::gather, Aliasing::None,
                       "take slices along axis at indices (negative indices count from the end)"));
  t.push_back(movement(K::Expand, "Expand", {{"input", 'T', D::Differentiable}}, one_out,
                       {required("shape", AttrType::Ints)}, shape_fn::expand, Aliasing::None,
                       "broadcast to shape (bidirectional)"));
  t.push_back(movement(K::Squeeze, "Squeeze", {{"data", 'T', D::Differentiable}}, one_out,
                       {ints_attr("axes")}, shape_fn::squeeze, Aliasing::ViewOfInput0,
                       "drop size-1 axes (all of them when axes is empty)"));
  t.push_back(movement(K::Unsqueeze, "Unsqueeze", {{"data", 'T', D::Differentiable}}, one_out,
                       {required("axes", AttrType::Ints)}, shape_fn::unsqueeze,
                       Aliasing::ViewOfInput0, "insert size-1 axes"));
  t.push_back(movement(K::Flatten, "Flatten", {{"input", 'T', D::Differentiable}}, one_out,
                       {axis_attr(1)}, shape_fn::flatten, Aliasing::ViewOfInput0,
                       "reshape to 2-D: [prod(dims[:axis]), prod(dims[axis:])]"));
  t.push_back(
      with_traits(movement(K::Identity, "Identity", {{"input", 'T', D::Differentiable}}, one_out,
                           {}, shape_fn::same_as_input0, Aliasing::ViewOfInput0, "copy"),
                  {OpTrait::UnaryElementwise}));
  t.push_back(movement(K::Constant, "Constant", {}, one_out, {required("value", AttrType::Tensor)},
                       shape_fn::constant, Aliasing::None, "a tensor given as an attribute"));
  t.push_back(movement(K::Tile, "Tile", {{"input", 'T', D::Differentiable}}, one_out,
                       {required_min("repeats", AttrType::Ints, 0.0)}, tile, Aliasing::None,
                       "repeat the input repeats[d] times along each axis d"));
  t.push_back(movement(
      K::Pad, "Pad",
      {{"data", 'T', D::Differentiable}, {"constant_value", 'T', D::NotDifferentiable, true}},
      one_out,
      {required("pads", AttrType::Ints),
       string_attr("mode", "constant", {"constant", "reflect", "edge"})},
      pad, Aliasing::None,
      "pad (negative pads crop) with constant_value (default 0), the mirror "
      "image without the edge (reflect) or the edge element (edge)"));
  t.push_back(movement(
      K::DepthToSpace, "DepthToSpace", {{"input", 'T', D::Differentiable}}, one_out,
      {required_min("blocksize", AttrType::Int, 1.0), string_attr("mode", "DCR", {"DCR", "CRD"})},
      depth_to_space, Aliasing::None,
      "[N,C,H,W] -> [N,C/b^2,H*b,W*b]; DCR reads channel (i*b+j)*C'+c, CRD "
      "reads c*b^2+i*b+j"));
  t.push_back(movement(K::SpaceToDepth, "SpaceToDepth", {{"input", 'T', D::Differentiable}},
                       one_out, {required_min("blocksize", AttrType::Int, 1.0)}, space_to_depth,
                       Aliasing::None,
                       "[N,C,H,W] -> [N,C*b^2,H/b,W/b], block offset (i,j) to channel "
                       "(i*b+j)*C+c"));
  t.push_back(movement(K::ReverseSequence, "ReverseSequence",
                       {{"input", 'T', D::Differentiable},
                        {"sequence_lens", 'I', D::IntegerIndex, false, false, InputDomain::Index}},
                       one_out,
                       {int_attr("batch_axis", 1, 0.0, 1.0), int_attr("time_axis", 0, 0.0, 1.0)},
                       reverse_sequence, Aliasing::None,
                       "reverse the first sequence_lens[b] time steps of each batch entry b"));
}

}  // namespace volta::op_table
