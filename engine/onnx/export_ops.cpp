// ONNX export rules of the ops that are one ONNX op: the same name and attributes (most ops), or
// an attribute that opset 17 takes as an input instead (Reshape's shape, Slice's starts, ...),
// written as an initializer. The importer's lowerings (lower_*.cpp) are the inverse of these.

#include <algorithm>
#include <cmath>
#include <limits>

#include "export_writer.h"
#include "lowering.h"
#include "proto_util.h"

namespace volta::onnx {

void set_attribute(::onnx::NodeProto& node, std::string_view name, const AttrValue& value) {
  ::onnx::AttributeProto& attr = *node.add_attribute();
  attr.set_name(std::string(name));
  switch (attr_type_of(value)) {
    case AttrType::Int:
      attr.set_type(::onnx::AttributeProto::INT);
      attr.set_i(std::get<int64_t>(value));
      break;
    case AttrType::Float:
      attr.set_type(::onnx::AttributeProto::FLOAT);
      attr.set_f(static_cast<float>(std::get<double>(value)));
      break;
    case AttrType::String:
      attr.set_type(::onnx::AttributeProto::STRING);
      attr.set_s(std::get<std::string>(value));
      break;
    case AttrType::Ints:
      attr.set_type(::onnx::AttributeProto::INTS);
      for (int64_t v : std::get<Ints>(value)) attr.add_ints(v);
      break;
    case AttrType::Floats:
      attr.set_type(::onnx::AttributeProto::FLOATS);
      for (double v : std::get<std::vector<double>>(value)) attr.add_floats(static_cast<float>(v));
      break;
    case AttrType::Tensor:
      attr.set_type(::onnx::AttributeProto::TENSOR);
      *attr.mutable_t() = proto_from_tensor(std::get<Tensor>(value), "");
      break;
  }
}

void set_schema_attributes(::onnx::NodeProto& proto, const Node& node,
                           std::initializer_list<std::string_view> skip) {
  for (const AttrSpec& spec : op_schema(node.op).attrs) {
    if (std::find(skip.begin(), skip.end(), spec.name) != skip.end()) continue;
    const auto given = node.attrs.find(spec.name);
    const AttrValue* value = given != node.attrs.end() ? &given->second
                             : spec.default_value      ? &*spec.default_value
                                                       : nullptr;
    if (value == nullptr) continue;
    if (const auto* ints = std::get_if<Ints>(value); ints && ints->empty()) continue;
    if (const auto* floats = std::get_if<std::vector<double>>(value); floats && floats->empty()) {
      continue;
    }
    set_attribute(proto, spec.name, *value);
  }
}

std::vector<std::string> input_names(const ModelWriter& writer, const Node& node) {
  std::vector<std::string> names;
  for (ValueId v : node.inputs) names.push_back(writer.name_of(v));
  while (!names.empty() && names.back().empty()) names.pop_back();
  return names;
}

std::vector<std::string> output_names(const ModelWriter& writer, const Node& node) {
  std::vector<std::string> names;
  names.reserve(static_cast<size_t>(writer.used_outputs(node)));
  for (int i = 0; i < writer.used_outputs(node); ++i) {
    names.push_back(writer.name_of(node.outputs[static_cast<size_t>(i)]));
  }
  return names;
}

namespace {

using K = OpKind;

// ---- 1:1 --------------------------------------------------------------------------------

::onnx::NodeProto& emit_as(ModelWriter& w, const Node& node, std::string_view op_type,
                           std::vector<std::string> inputs) {
  return w.add_node(op_type, std::move(inputs), output_names(w, node), w.node_name(node));
}

void emit_same(ModelWriter& w, const Node& node) {
  set_schema_attributes(emit_as(w, node, op_name(node.op), input_names(w, node)), node);
}

// LayerNormalization's Mean and InvStdDev are f32 in ONNX (stash_type 1) whatever X is.
void emit_layer_normalization(ModelWriter& w, const Node& node) {
  const DType dtype = w.graph().value(node.inputs[0]).dtype;
  if (dtype != DType::F32 && w.used_outputs(node) > 1) {
    w.refuse(node,
             "Mean / InvStdDev of " + std::string(dtype_name(dtype)) +
                 " data are read, but ONNX declares them f32; supported: f32 data, or Y alone");
  }
  emit_same(w, node);
}

// ---- Attributes that opset 17 takes as inputs ----------------------------------------------

Ints ints_attr(const Node& node, std::string_view name) { return AttrReader(node).get_ints(name); }

std::string stem(const ModelWriter& w, const Node& node, std::string_view what) {
  return w.node_name(node) + "." + std::string(what);
}

void emit_cast(ModelWriter& w, const Node& node) {
  const std::string to = AttrReader(node).get_string("to");
  const std::optional<DType> dtype = parse_dtype(to);
  if (!dtype) w.refuse(node, "unknown target dtype '" + to + "'");
  set_attribute(emit_as(w, node, "Cast", input_names(w, node)), "to", onnx_from_dtype(*dtype));
}

// direction is LEFT or RIGHT in ONNX, left or right in the op table.
void emit_bit_shift(ModelWriter& w, const Node& node) {
  const bool left = AttrReader(node).get_string("direction") == "left";
  set_attribute(emit_as(w, node, "BitShift", input_names(w, node)), "direction",
                std::string(left ? "LEFT" : "RIGHT"));
}

void emit_reshape(ModelWriter& w, const Node& node) {
  const std::string shape = w.ints_initializer(ints_attr(node, "shape"), stem(w, node, "shape"));
  ::onnx::NodeProto& p = emit_as(w, node, "Reshape", {w.name_of(node.inputs[0]), shape});
  set_schema_attributes(p, node, {"shape"});
}

// Squeeze's axes are optional (none: every size-1 axis); Unsqueeze's are required.
void emit_squeeze_like(ModelWriter& w, const Node& node) {
  const Ints axes = ints_attr(node, "axes");
  std::vector<std::string> inputs = {w.name_of(node.inputs[0])};
  if (!axes.empty() || node.op == K::Unsqueeze) {
    inputs.push_back(w.ints_initializer(axes, stem(w, node, "axes")));
  }
  emit_as(w, node, op_name(node.op), std::move(inputs));
}

// Volta's Reduce* all take axes as an attribute; ONNX 17 takes ReduceSum's as an input. Empty
// axes with noop_with_empty_axes are the identity, which only ReduceSum could say in ONNX 17.
void emit_reduce(ModelWriter& w, const Node& node) {
  const AttrReader attrs(node);
  const Ints& axes = attrs.get_ints("axes");
  if (axes.empty() && attrs.get_int("noop_with_empty_axes") != 0) {
    emit_as(w, node, "Identity", {w.name_of(node.inputs[0])});
    return;
  }
  if (node.op == K::ReduceSum) {
    std::vector<std::string> inputs = {w.name_of(node.inputs[0])};
    if (!axes.empty()) inputs.push_back(w.ints_initializer(axes, stem(w, node, "axes")));
    set_schema_attributes(emit_as(w, node, "ReduceSum", std::move(inputs)), node, {"axes"});
    return;
  }
  set_schema_attributes(emit_as(w, node, op_name(node.op), {w.name_of(node.inputs[0])}), node,
                        {"noop_with_empty_axes"});
}

// Slice: starts, ends, then axes and steps when given (axes spelled out when only steps are).
void emit_slice(ModelWriter& w, const Node& node) {
  const Ints starts = ints_attr(node, "starts");
  Ints axes = ints_attr(node, "axes");
  const Ints steps = ints_attr(node, "steps");
  if (axes.empty() && !steps.empty()) {
    for (size_t a = 0; a < starts.size(); ++a) axes.push_back(static_cast<int64_t>(a));
  }
  std::vector<std::string> inputs = {
      w.name_of(node.inputs[0]), w.ints_initializer(starts, stem(w, node, "starts")),
      w.ints_initializer(ints_attr(node, "ends"), stem(w, node, "ends"))};
  if (!axes.empty()) inputs.push_back(w.ints_initializer(axes, stem(w, node, "axes")));
  if (!steps.empty()) inputs.push_back(w.ints_initializer(steps, stem(w, node, "steps")));
  emit_as(w, node, "Slice", std::move(inputs));
}

// Split 13 divides evenly only when the axis divides; the outputs' sizes always say it.
void emit_split(ModelWriter& w, const Node& node) {
  const int rank = w.graph().value(node.inputs[0]).shape.rank();
  const int64_t axis = AttrReader(node).get_int("axis");
  const int a = static_cast<int>(axis < 0 ? axis + rank : axis);
  Ints sizes;
  for (ValueId out : node.outputs) sizes.push_back(w.graph().value(out).shape[a]);
  std::vector<std::string> outputs;
  for (ValueId out : node.outputs) outputs.push_back(w.name_of(out));
  ::onnx::NodeProto& p = w.add_node(
      "Split", {w.name_of(node.inputs[0]), w.ints_initializer(sizes, stem(w, node, "split"))},
      std::move(outputs), w.node_name(node));
  set_attribute(p, "axis", axis);
}

// An attribute of ints written as a 1-D int64 input after the data (Tile's repeats, Expand's
// shape, Pad's pads).
template <const char* kAttr>
void emit_ints_input(ModelWriter& w, const Node& node) {
  std::vector<std::string> inputs = {
      w.name_of(node.inputs[0]), w.ints_initializer(ints_attr(node, kAttr), stem(w, node, kAttr))};
  for (size_t i = 1; i < node.inputs.size(); ++i) inputs.push_back(w.name_of(node.inputs[i]));
  while (inputs.back().empty()) inputs.pop_back();
  set_schema_attributes(emit_as(w, node, op_name(node.op), std::move(inputs)), node, {kAttr});
}
constexpr char kRepeats[] = "repeats";
constexpr char kShape[] = "shape";
constexpr char kPads[] = "pads";

// Clip 13's bounds are optional inputs of X's dtype; an infinite bound is left out. Volta
// clips integers to ceil(min) and floor(max) within the dtype's range: those are written.
void emit_clip(ModelWriter& w, const Node& node) {
  const DType dtype = w.graph().value(node.inputs[0]).dtype;
  const AttrReader attrs(node);
  std::vector<std::string> inputs = {w.name_of(node.inputs[0])};
  for (const char* bound : {"min", "max"}) {
    double value = attrs.get_float(bound);
    if (std::isnan(value)) w.refuse(node, std::string(bound) + " is NaN; supported: numbers");
    if (std::isinf(value)) {
      inputs.emplace_back();
      continue;
    }
    Tensor t(dtype, Shape{});
    if (is_integer(dtype)) {
      const bool min = std::string_view(bound) == "min";
      const double rounded = min ? std::ceil(value) : std::floor(value);
      const int64_t lowest = dtype == DType::I64 ? std::numeric_limits<int64_t>::lowest()
                                                 : std::numeric_limits<int32_t>::lowest();
      const int64_t highest = dtype == DType::I64 ? std::numeric_limits<int64_t>::max()
                                                  : std::numeric_limits<int32_t>::max();
      t.set_int(0, rounded <= static_cast<double>(lowest)    ? lowest
                   : rounded >= static_cast<double>(highest) ? highest
                                                             : static_cast<int64_t>(rounded));
    } else {
      t.set_double(0, value);
    }
    inputs.push_back(w.scalar_initializer(t));
  }
  while (inputs.back().empty()) inputs.pop_back();
  emit_as(w, node, "Clip", std::move(inputs));
}

void emit_top_k(ModelWriter& w, const Node& node) {
  const Ints k = {AttrReader(node).get_int("k")};
  std::vector<std::string> outputs;
  for (ValueId out : node.outputs) outputs.push_back(w.name_of(out));
  ::onnx::NodeProto& p =
      w.add_node("TopK", {w.name_of(node.inputs[0]), w.ints_initializer(k, stem(w, node, "k"))},
                 std::move(outputs), w.node_name(node));
  set_schema_attributes(p, node, {"k"});
}

// ONNX 1.12 infers OneHot only for indices of rank >= 1: scalar indices go through [1].
void emit_one_hot(ModelWriter& w, const Node& node) {
  const AttrReader attrs(node);
  const std::string depth =
      w.int_scalar_initializer(attrs.get_int("depth"), stem(w, node, "depth"));
  const std::string values = w.name_of(node.inputs[1]);
  if (w.graph().value(node.inputs[0]).shape.rank() > 0) {
    set_schema_attributes(emit_as(w, node, "OneHot", {w.name_of(node.inputs[0]), depth, values}),
                          node, {"depth"});
    return;
  }
  const std::string base = w.node_name(node);
  const Ints one = {1};
  const std::string indices = w.fresh_name(base + ".indices");
  w.add_node("Reshape", {w.name_of(node.inputs[0]), w.ints_initializer(one, base + ".rank1")},
             {indices}, base + "/rank1");
  const std::string hot = w.fresh_name(base + ".rank2");
  ::onnx::NodeProto& p = w.add_node("OneHot", {indices, depth, values}, {hot}, base);
  set_schema_attributes(p, node, {"depth"});
  const Ints out = {attrs.get_int("depth")};
  w.add_node("Reshape", {hot, w.ints_initializer(out, base + ".shape")},
             {w.name_of(node.outputs[0])}, base + "/rank0");
}

// Trilu's k and CumSum's axis: a rank-0 int64 input after the data.
template <const char* kAttr>
void emit_int_input(ModelWriter& w, const Node& node) {
  const std::string value =
      w.int_scalar_initializer(AttrReader(node).get_int(kAttr), stem(w, node, kAttr));
  set_schema_attributes(emit_as(w, node, op_name(node.op), {w.name_of(node.inputs[0]), value}),
                        node, {kAttr});
}
constexpr char kK[] = "k";
constexpr char kAxis[] = "axis";

Ints per_axis(const Ints& given, size_t spatial, int64_t fill) {
  return given.empty() ? Ints(spatial, fill) : given;
}

// ONNX 1.12 sizes a ceil_mode pool as ceil((in + pads - extent) / stride) + 1; Volta, like
// PyTorch and later ONNX versions, drops a last window that would start in the end padding.
// So ceil_mode is written as whichever of 0 and 1 gives the node's output size on every axis by
// 1.12's rule: the windows are then the node's.
int64_t onnx_ceil_mode(ModelWriter& w, const Node& node) {
  const AttrReader attrs(node);
  if (attrs.get_int("ceil_mode") == 0) return 0;
  const Shape& x = w.graph().value(node.inputs[0]).shape;
  const Shape& y = w.graph().value(node.outputs[0]).shape;
  const Ints& kernel = attrs.get_ints("kernel_shape");
  const size_t spatial = kernel.size();
  const Ints strides = per_axis(attrs.get_ints("strides"), spatial, 1);
  const Ints dilations = per_axis(attrs.get_ints("dilations"), spatial, 1);
  const Ints pads = per_axis(attrs.get_ints("pads"), 2 * spatial, 0);
  bool floor_fits = true;
  bool ceil_fits = true;
  for (size_t a = 0; a < spatial; ++a) {
    const int64_t span = x[static_cast<int>(a) + 2] + pads[a] + pads[a + spatial] -
                         (kernel[a] - 1) * dilations[a] - 1;
    const int64_t out = y[static_cast<int>(a) + 2];
    floor_fits = floor_fits && out == span / strides[a] + 1;
    ceil_fits = ceil_fits && out == (span + strides[a] - 1) / strides[a] + 1;
  }
  if (floor_fits) return 0;
  if (ceil_fits) return 1;
  w.refuse(node, "ceil_mode output " + y.str() +
                     " matches neither ceil_mode 0 nor ONNX 1.12's ceil_mode 1 on every axis; "
                     "supported: pools whose last windows start inside the input or begin "
                     "padding on all axes, or on none");
}

// MaxPool 12, AveragePool 11 and LpPool 11: ONNX 17's AveragePool and LpPool have no
// dilations, and LpPool no ceil_mode.
void emit_pool(ModelWriter& w, const Node& node) {
  const AttrReader attrs(node);
  if (node.op != K::MaxPool) {
    for (int64_t d : attrs.get_ints("dilations")) {
      if (d != 1) {
        w.refuse(node, "dilations " + Shape(attrs.get_ints("dilations")).str() +
                           "; supported at opset 17: dilations of 1 (ONNX adds them in opset " +
                           (node.op == K::LpPool ? "18)" : "19)"));
      }
    }
  }
  const int64_t ceil_mode = onnx_ceil_mode(w, node);
  if (node.op == K::LpPool && ceil_mode != 0) {
    w.refuse(node,
             "ceil_mode 1 adds a window; supported at opset 17: ceil_mode 0 (LpPool has "
             "ceil_mode from opset 18)");
  }
  ::onnx::NodeProto& p = emit_as(w, node, op_name(node.op), input_names(w, node));
  set_schema_attributes(p, node, {"ceil_mode", node.op == K::MaxPool ? "" : "dilations"});
  if (node.op != K::LpPool) set_attribute(p, "ceil_mode", ceil_mode);
}

// ONNX's MeanVarianceNormalization has no epsilon: it adds 1e-9, Volta's default. Its function
// body (ONNX 1.12) types that constant float, so it takes f32 data only; and it reads empty
// axes as every axis where Volta normalizes each element alone.
void emit_mean_variance_normalization(ModelWriter& w, const Node& node) {
  const AttrReader attrs(node);
  const DType dtype = w.graph().value(node.inputs[0]).dtype;
  if (dtype != DType::F32) {
    w.refuse(node, std::string(dtype_name(dtype)) +
                       " data; supported: f32 (ONNX's function body adds a float epsilon)");
  }
  if (attrs.get_float("epsilon") != 1e-9) {
    w.refuse(node, "epsilon " + std::to_string(attrs.get_float("epsilon")) +
                       "; supported: 1e-9, the constant ONNX's MeanVarianceNormalization adds");
  }
  if (attrs.get_ints("axes").empty()) {
    w.refuse(node, "empty axes (each element its own group); supported: one or more axes");
  }
  set_schema_attributes(emit_as(w, node, op_name(node.op), input_names(w, node)), node,
                        {"epsilon"});
}

// The losses' ignore_index: Volta's list of none or one label, ONNX's optional int.
void emit_loss(ModelWriter& w, const Node& node) {
  ::onnx::NodeProto& p = emit_as(w, node, op_name(node.op), input_names(w, node));
  set_schema_attributes(p, node, {"ignore_index"});
  const Ints ignore = ints_attr(node, "ignore_index");
  if (!ignore.empty()) set_attribute(p, "ignore_index", ignore.front());
}

// Resize 13: X, roi, scales, sizes. Scales (f32 in ONNX) when the node has them, since they
// drive the coordinate transform; the sizes ONNX computes from them must be the node's.
void emit_resize(ModelWriter& w, const Node& node) {
  const AttrReader attrs(node);
  const Shape& x = w.graph().value(node.inputs[0]).shape;
  if (x.rank() == 0) {  // no axis to resample; ONNX would read the empty sizes as absent
    emit_as(w, node, "Identity", {w.name_of(node.inputs[0])});
    return;
  }
  if (attrs.get_string("coordinate_transformation_mode") == "half_pixel_symmetric") {
    w.refuse(node,
             "coordinate_transformation_mode half_pixel_symmetric; supported: the modes of "
             "Resize 13 (opset 19 adds it)");
  }
  if (attrs.get_int("antialias") != 0 && attrs.get_string("mode") != "nearest") {
    w.refuse(node, "antialias 1; supported: antialias 0 (Resize 13 has none; opset 18 adds it)");
  }
  const std::vector<double>& scales = attrs.get_floats("scales");
  const std::vector<double>& roi = attrs.get_floats("roi");
  const bool crop = attrs.get_string("coordinate_transformation_mode") == "tf_crop_and_resize";
  std::string roi_name;
  if (crop) {
    Tensor t(DType::F64, Shape{static_cast<int64_t>(roi.size())});
    for (size_t i = 0; i < roi.size(); ++i) t.set_double(static_cast<int64_t>(i), roi[i]);
    roi_name = w.add_initializer(t, stem(w, node, "roi"));
  }
  std::vector<std::string> inputs = {w.name_of(node.inputs[0]), roi_name};
  const Ints& sizes = attrs.get_ints("sizes");
  if (scales.empty()) {
    inputs.emplace_back();
    inputs.push_back(w.ints_initializer(sizes, stem(w, node, "sizes")));
  } else {
    Tensor t(DType::F32, Shape{static_cast<int64_t>(scales.size())});
    for (size_t a = 0; a < scales.size(); ++a) {
      t.set_double(static_cast<int64_t>(a), scales[a]);
      double extent = static_cast<double>(x[static_cast<int>(a)]);
      if (crop) extent *= roi[scales.size() + a] - roi[a];
      const auto size = static_cast<int64_t>(
          std::floor(std::max(0.0, extent * t.get_double(static_cast<int64_t>(a)))));
      if (size != sizes[a]) {
        w.refuse(node, "scales " + std::to_string(scales[a]) + " of axis " + std::to_string(a) +
                           " give " + std::to_string(size) +
                           " elements in ONNX (f32 scales), the node has " +
                           std::to_string(sizes[a]) +
                           "; supported: sizes = floor(input * f32(scale))");
      }
    }
    inputs.push_back(w.add_initializer(t, stem(w, node, "scales")));
  }
  set_schema_attributes(emit_as(w, node, "Resize", std::move(inputs)), node,
                        {"sizes", "scales", "roi", "antialias"});
}

// GridSample 16 samples X of rank 4 only; version 20 (after opset 17) adds volumes.
void emit_grid_sample(ModelWriter& w, const Node& node) {
  const int rank = w.graph().value(node.inputs[0]).shape.rank();
  if (rank != 4) {
    w.refuse(node, "X of rank " + std::to_string(rank) +
                       "; supported: rank 4 (GridSample 16; version 20, after opset 17, adds "
                       "volumes)");
  }
  emit_same(w, node);
}

// GatherND, ScatterND and ReverseSequence take int64 indices only: int32 ones are cast.
template <int kIndices>
void emit_with_int64_indices(ModelWriter& w, const Node& node) {
  std::vector<std::string> inputs = input_names(w, node);
  if (w.graph().value(node.inputs[kIndices]).dtype != DType::I64) {
    const std::string cast = w.fresh_name(inputs[kIndices] + ".i64");
    set_attribute(w.add_node("Cast", {inputs[kIndices]}, {cast}, w.node_name(node) + "/i64"), "to",
                  int64_t{::onnx::TensorProto::INT64});
    inputs[kIndices] = cast;
  }
  set_schema_attributes(emit_as(w, node, op_name(node.op), std::move(inputs)), node);
}

// ONNX's Celu is float-only.
void emit_celu(ModelWriter& w, const Node& node) {
  const DType dtype = w.graph().value(node.inputs[0]).dtype;
  if (dtype != DType::F32) {
    w.refuse(node,
             std::string(dtype_name(dtype)) + " data; supported: f32 (ONNX's Celu is float-only)");
  }
  emit_same(w, node);
}

// ONNX adds the scatters' "max" and "min" reductions at opset 18.
void emit_scatter(ModelWriter& w, const Node& node) {
  const std::string& reduction = AttrReader(node).get_string("reduction");
  if (reduction == "max" || reduction == "min") {
    w.refuse(node, "reduction \"" + reduction +
                       "\"; supported: \"none\", \"add\", \"mul\" (opset 18 adds max and min)");
  }
  if (node.op == OpKind::ScatterND) {
    emit_with_int64_indices<1>(w, node);
  } else {
    emit_same(w, node);
  }
}

ExportRule same(OpKind op) { return {op, &emit_same, {op_name(op)}, {}}; }

// The ops that are the ONNX op of the same name, with the same inputs and attributes.
// clang-format off
constexpr OpKind kSameAsOnnx[] = {
    K::Add, K::Sub, K::Mul, K::Div, K::Pow, K::Neg, K::Abs, K::Sqrt, K::Reciprocal, K::Exp,
    K::Log, K::Erf, K::Tanh, K::Sigmoid, K::Relu, K::LeakyRelu, K::Min, K::Max, K::Where,
    K::Equal, K::Less, K::Greater, K::Not, K::And, K::Or, K::MatMul, K::Gemm, K::Softmax,
    K::LogSoftmax, K::ArgMax, K::ArgMin, K::Transpose, K::Concat, K::Gather, K::Flatten,
    K::Identity, K::Constant, K::Sin, K::Cos, K::Tan, K::Asin, K::Acos, K::Atan, K::Sinh,
    K::Cosh, K::Asinh, K::Acosh, K::Atanh, K::Floor, K::Ceil, K::Round, K::Sign, K::Mod,
    K::Elu, K::Selu, K::HardSigmoid, K::HardSwish, K::Softplus, K::Softsign, K::PRelu,
    K::ThresholdedRelu, K::Shrink, K::IsNaN, K::IsInf, K::Xor, K::LessOrEqual,
    K::GreaterOrEqual, K::Conv, K::ConvTranspose, K::GlobalAveragePool, K::GlobalMaxPool,
    K::GlobalLpPool, K::BatchNormalization, K::InstanceNormalization, K::LRN, K::Hardmax,
    K::Einsum, K::GatherElements, K::DepthToSpace, K::SpaceToDepth,
    K::Det};
// clang-format on

}  // namespace

void add_direct_rules(std::vector<ExportRule>& rules) {
  for (OpKind op : kSameAsOnnx) rules.push_back(same(op));
  rules.push_back({K::LayerNormalization,
                   &emit_layer_normalization,
                   {"LayerNormalization"},
                   "Mean and InvStdDev only for f32 data (ONNX declares them f32)"});
  rules.push_back({K::Cast, &emit_cast, {"Cast"}, "to: the ONNX element type"});
  rules.push_back({K::BitShift, &emit_bit_shift, {"BitShift"}, "direction as LEFT or RIGHT"});
  for (OpKind op : {K::BitwiseAnd, K::BitwiseOr, K::BitwiseXor, K::BitwiseNot}) {
    rules.push_back({op, nullptr, {}, "(opset 18 adds it); the export writes opset 17"});
  }
  rules.push_back({K::BitCast, nullptr, {}, "(opset 26 adds it); the export writes opset 17"});
  rules.push_back({K::Reshape, &emit_reshape, {"Reshape"}, "shape as an int64 input"});
  rules.push_back({K::Squeeze, &emit_squeeze_like, {"Squeeze"}, "axes as an int64 input"});
  rules.push_back({K::Unsqueeze, &emit_squeeze_like, {"Unsqueeze"}, "axes as an int64 input"});
  rules.push_back({K::ReduceSum,
                   &emit_reduce,
                   {"ReduceSum", "Identity"},
                   "axes as an int64 input; empty axes with noop_with_empty_axes: Identity"});
  for (OpKind op : {K::ReduceMean, K::ReduceMax, K::ReduceMin, K::ReduceProd, K::ReduceSumSquare,
                    K::ReduceL1, K::ReduceL2, K::ReduceLogSumExp}) {
    rules.push_back({op,
                     &emit_reduce,
                     {op_name(op), "Identity"},
                     "empty axes with noop_with_empty_axes (an opset 18 attribute): Identity"});
  }
  rules.push_back({K::CumSum, &emit_int_input<kAxis>, {"CumSum"}, "axis as an int64 input"});
  rules.push_back({K::Slice, &emit_slice, {"Slice"}, "starts, ends, axes, steps as int64 inputs"});
  rules.push_back(
      {K::Split, &emit_split, {"Split"}, "split (the outputs' sizes) as an int64 input"});
  rules.push_back({K::Expand, &emit_ints_input<kShape>, {"Expand"}, "shape as an int64 input"});
  rules.push_back({K::Tile, &emit_ints_input<kRepeats>, {"Tile"}, "repeats as an int64 input"});
  rules.push_back({K::Pad, &emit_ints_input<kPads>, {"Pad"}, "pads as an int64 input"});
  rules.push_back({K::Clip, &emit_clip, {"Clip"}, "min and max as inputs of X's dtype"});
  rules.push_back({K::TopK, &emit_top_k, {"TopK"}, "k as an int64 input"});
  rules.push_back({K::OneHot,
                   &emit_one_hot,
                   {"OneHot", "Reshape"},
                   "depth as an int64 input; scalar indices reshaped to [1] and back"});
  rules.push_back({K::Trilu, &emit_int_input<kK>, {"Trilu"}, "k as an int64 input"});
  rules.push_back({K::Celu, &emit_celu, {"Celu"}, "f32 only (ONNX's Celu is float-only)"});
  rules.push_back({K::GatherND,
                   &emit_with_int64_indices<1>,
                   {"GatherND", "Cast"},
                   "int32 indices cast to int64"});
  rules.push_back({K::ScatterND,
                   &emit_scatter,
                   {"ScatterND", "Cast"},
                   "int32 indices cast to int64; reduction max and min refused (opset 18)"});
  rules.push_back({K::ScatterElements,
                   &emit_scatter,
                   {"ScatterElements"},
                   "reduction max and min refused (opset 18)"});
  rules.push_back({K::ReverseSequence,
                   &emit_with_int64_indices<1>,
                   {"ReverseSequence", "Cast"},
                   "int32 sequence_lens cast to int64"});
  rules.push_back({K::MaxPool,
                   &emit_pool,
                   {"MaxPool"},
                   "ceil_mode as ONNX 1.12 sizes it (0 where the extra window is dropped)"});
  rules.push_back({K::AveragePool,
                   &emit_pool,
                   {"AveragePool"},
                   "dilations only of 1 (opset 19 adds them); ceil_mode as for MaxPool"});
  rules.push_back({K::LpPool,
                   &emit_pool,
                   {"LpPool"},
                   "dilations only of 1, ceil_mode only where it adds no window (opset 18 adds "
                   "them)"});
  rules.push_back({K::MeanVarianceNormalization,
                   &emit_mean_variance_normalization,
                   {"MeanVarianceNormalization"},
                   "f32 only, epsilon only 1e-9 (ONNX's constant), one or more axes"});
  rules.push_back({K::SoftmaxCrossEntropyLoss,
                   &emit_loss,
                   {"SoftmaxCrossEntropyLoss"},
                   "ignore_index: an int"});
  rules.push_back({K::NegativeLogLikelihoodLoss,
                   &emit_loss,
                   {"NegativeLogLikelihoodLoss"},
                   "ignore_index: an int"});
  rules.push_back({K::GridSample, &emit_grid_sample, {"GridSample"}, "X of rank 4"});
  rules.push_back({K::Resize,
                   &emit_resize,
                   {"Resize", "Identity"},
                   "roi, scales (f32) or sizes as inputs; scales must give the node's sizes; "
                   "antialias 0 (Resize 13); a scalar: Identity"});
}

}  // namespace volta::onnx
