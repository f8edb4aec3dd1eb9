// The op table's part for Conv, ConvTranspose and pooling.
//
// Layout is NCHW with 1 to 3 spatial dims. Window attributes are explicit: the ONNX importer
// resolves auto_pad, ConvTranspose's output_shape and the like into pads before it builds
// these ops, so kernels only ever see kernel_shape, strides, dilations and pads. An empty
// strides / dilations list means all ones, empty pads all zeros; pads are [begin..., end...].

#include <string>

#include "op_table_builders.h"
#include "volta/ir/graph.h"

namespace volta::op_table {
namespace {

[[noreturn]] void shape_fail(const std::string& message) { throw ShapeError(message); }

std::string ints_str(const std::vector<int64_t>& v) { return Shape(v).str(); }

// Spatial dims of an [N, C, D1, ..., Dn] input, 1 <= n <= 3.
int spatial_rank(const Shape& x, std::string_view op) {
  if (x.rank() < 3 || x.rank() > 5) {
    shape_fail(std::string(op) + " needs an input [N, C, D1...Dn] with 1 to 3 spatial dims, got " +
               x.str());
  }
  return x.rank() - 2;
}

// One entry per spatial axis (`count` per axis for pads), or `fill` everywhere when empty.
std::vector<int64_t> per_axis(const AttrReader& attrs, std::string_view name, int spatial,
                              int64_t fill, int count = 1) {
  const std::vector<int64_t>& given = attrs.get_ints(name);
  const auto want = static_cast<size_t>(spatial) * static_cast<size_t>(count);
  if (given.empty()) return std::vector<int64_t>(want, fill);
  if (given.size() != want) {
    shape_fail(std::string(name) + " " + ints_str(given) + " has " + std::to_string(given.size()) +
               " entries, the input has " + std::to_string(spatial) + " spatial dims (expected " +
               std::to_string(want) + ")");
  }
  return given;
}

struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads;
  int64_t extent(int a) const {  // the dilated kernel's span along spatial axis a
    const auto i = static_cast<size_t>(a);
    return (kernel[i] - 1) * dilations[i] + 1;
  }
  int64_t pad_begin(int a) const { return pads[static_cast<size_t>(a)]; }
  int64_t pad_end(int a) const { return pads[static_cast<size_t>(a) + kernel.size()]; }
};

Window read_window(const AttrReader& attrs, std::vector<int64_t> kernel) {
  const int spatial = static_cast<int>(kernel.size());
  for (int64_t k : kernel) {
    if (k < 1) shape_fail("kernel " + ints_str(kernel) + " has a dim below 1");
  }
  return Window{std::move(kernel), per_axis(attrs, "strides", spatial, 1),
                per_axis(attrs, "dilations", spatial, 1), per_axis(attrs, "pads", spatial, 0, 2)};
}

// The kernel's spatial dims from W, checked against kernel_shape when that is given.
std::vector<int64_t> conv_kernel(const AttrReader& attrs, const Shape& w) {
  std::vector<int64_t> kernel(w.dims().begin() + 2, w.dims().end());
  const std::vector<int64_t>& given = attrs.get_ints("kernel_shape");
  if (!given.empty() && given != kernel) {
    shape_fail("kernel_shape " + ints_str(given) + " differs from the spatial dims " +
               ints_str(kernel) + " of W " + w.str());
  }
  return kernel;
}

void check_weights(const Shape& x, const Shape& w, std::string_view w_layout) {
  if (w.rank() != x.rank()) {
    shape_fail("W " + w.str() + " must have the input's rank " + std::to_string(x.rank()) + " (" +
               std::string(w_layout) + ")");
  }
}

// `w_in` is the input channel count W implies, `out` the output's.
void check_channels(const Shape& x, const Shape& w, int64_t group, int64_t w_in, int64_t out,
                    std::string_view w_layout) {
  if (x[1] % group != 0 || out % group != 0) {
    shape_fail("group " + std::to_string(group) + " must divide the input channels " +
               std::to_string(x[1]) + " and the output channels " + std::to_string(out));
  }
  if (w_in != x[1]) {
    shape_fail("W " + w.str() + " (" + std::string(w_layout) + ") does not match " +
               std::to_string(x[1]) + " input channels with group " + std::to_string(group));
  }
}

void check_bias(const InferContext& ctx, int64_t channels_out) {
  if (ctx.has_input(2) && ctx.input(2).shape != Shape{channels_out}) {
    shape_fail("B " + ctx.input(2).shape.str() + " must be [" + std::to_string(channels_out) +
               "], one value per output channel");
  }
}

std::vector<TypeInfo> conv_shape(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  const Shape& w = ctx.input(1).shape;
  const int spatial = spatial_rank(x, "Conv");
  const int64_t group = ctx.attrs.get_int("group");
  check_weights(x, w, "[M, C/group, k...]");
  check_channels(x, w, group, w[1] * group, w[0], "[M, C/group, k...]");
  check_bias(ctx, w[0]);
  const Window win = read_window(ctx.attrs, conv_kernel(ctx.attrs, w));
  Shape out = x;
  out[1] = w[0];
  for (int a = 0; a < spatial; ++a) {
    const int64_t padded = x[a + 2] + win.pad_begin(a) + win.pad_end(a);
    if (padded < win.extent(a)) {
      shape_fail("spatial axis " + std::to_string(a) + ": the dilated kernel spans " +
                 std::to_string(win.extent(a)) + " but the padded input has " +
                 std::to_string(padded));
    }
    out[a + 2] = (padded - win.extent(a)) / win.strides[static_cast<size_t>(a)] + 1;
  }
  return {{ctx.input(0).dtype, out}};
}

std::vector<TypeInfo> conv_transpose_shape(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  const Shape& w = ctx.input(1).shape;
  const int spatial = spatial_rank(x, "ConvTranspose");
  const int64_t group = ctx.attrs.get_int("group");
  check_weights(x, w, "[C, M/group, k...]");
  const int64_t channels_out = w[1] * group;
  check_channels(x, w, group, w[0], channels_out, "[C, M/group, k...]");
  check_bias(ctx, channels_out);
  const Window win = read_window(ctx.attrs, conv_kernel(ctx.attrs, w));
  const std::vector<int64_t> output_padding = per_axis(ctx.attrs, "output_padding", spatial, 0);
  Shape out = x;
  out[1] = channels_out;
  for (int a = 0; a < spatial; ++a) {
    const auto i = static_cast<size_t>(a);
    if (x[a + 2] < 1) shape_fail("ConvTranspose needs non-empty spatial dims, got " + x.str());
    out[a + 2] = win.strides[i] * (x[a + 2] - 1) + output_padding[i] + win.extent(a) -
                 win.pad_begin(a) - win.pad_end(a);
    if (out[a + 2] < 0) {
      shape_fail("spatial axis " + std::to_string(a) + ": pads " + ints_str(win.pads) +
                 " remove more than the full output of " +
                 std::to_string(out[a + 2] + win.pad_begin(a) + win.pad_end(a)));
    }
  }
  return {{ctx.input(0).dtype, out}};
}

// Whether some tap of the window starting at `start` falls inside [0, size).
bool window_overlaps(int64_t start, int64_t size, int64_t kernel, int64_t dilation) {
  const int64_t first = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
  return first < kernel && start + first * dilation < size;
}

// MaxPool, AveragePool, LpPool. With ceil_mode the last window may run past the padded
// input, but it must start inside the input or the begin padding (as in PyTorch and the
// ONNX reference). A window holding only padding has no value to pool and is rejected.
std::vector<TypeInfo> pool_shape(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  const int spatial = spatial_rank(x, op_name(ctx.node.op));
  const std::vector<int64_t>& kernel = ctx.attrs.get_ints("kernel_shape");
  if (static_cast<int>(kernel.size()) != spatial) {
    shape_fail("kernel_shape " + ints_str(kernel) + " has " + std::to_string(kernel.size()) +
               " entries, the input " + x.str() + " has " + std::to_string(spatial) +
               " spatial dims");
  }
  const Window win = read_window(ctx.attrs, kernel);
  const bool ceil_mode = ctx.attrs.get_int("ceil_mode") != 0;
  Shape out = x;
  for (int a = 0; a < spatial; ++a) {
    const int64_t size = x[a + 2];
    const int64_t stride = win.strides[static_cast<size_t>(a)];
    const int64_t span = size + win.pad_begin(a) + win.pad_end(a) - win.extent(a);
    if (span < 0) {
      shape_fail("spatial axis " + std::to_string(a) + ": the dilated kernel spans " +
                 std::to_string(win.extent(a)) + " but the padded input has " +
                 std::to_string(span + win.extent(a)));
    }
    int64_t n = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
    if (ceil_mode && (n - 1) * stride >= size + win.pad_begin(a)) --n;
    for (int64_t o = 0; o < n; ++o) {
      if (!window_overlaps(o * stride - win.pad_begin(a), size, kernel[static_cast<size_t>(a)],
                           win.dilations[static_cast<size_t>(a)])) {
        shape_fail("spatial axis " + std::to_string(a) + ": the window of output " +
                   std::to_string(o) + " covers only padding (input " + std::to_string(size) +
                   ", pads " + ints_str(win.pads) + ", kernel " + ints_str(kernel) +
                   "); supported: every window overlaps the input");
      }
    }
    out[a + 2] = n;
  }
  std::vector<TypeInfo> types = {{ctx.input(0).dtype, out}};
  if (ctx.num_outputs > 1) types.push_back({DType::I64, out});
  return types;
}

std::vector<TypeInfo> global_pool_shape(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  spatial_rank(x, op_name(ctx.node.op));
  Shape out = x;
  for (int a = 2; a < x.rank(); ++a) {
    if (x[a] == 0)
      shape_fail(std::string(op_name(ctx.node.op)) + " over empty spatial dims " + x.str());
    out[a] = 1;
  }
  return {{ctx.input(0).dtype, out}};
}

AttrSpec ints_min(std::string_view name, double min) {
  return {name, AttrType::Ints, AttrValue{std::vector<int64_t>{}}, min};
}

std::vector<AttrSpec> window_attrs(bool kernel_required) {
  AttrSpec kernel = ints_min("kernel_shape", 1.0);
  if (kernel_required) kernel.default_value = std::nullopt;
  return {std::move(kernel), ints_min("strides", 1.0), ints_min("dilations", 1.0),
          ints_min("pads", 0.0)};
}

AttrSpec group_attr() { return {"group", AttrType::Int, AttrValue{int64_t{1}}, 1.0}; }
AttrSpec p_attr() { return {"p", AttrType::Int, AttrValue{int64_t{2}}, 1.0}; }

OpSchema conv_like(OpKind kind, std::string_view name, std::vector<AttrSpec> attrs, ShapeFn infer,
                   std::string_view summary) {
  return OpSchema{.kind = kind,
                  .name = name,
                  .family = OpFamily::Convolution,
                  .inputs = {{"X", 'T'}, {"W", 'T'}, {"B", 'T', true}},
                  .outputs = {{"Y", 'T'}},
                  .type_params = {{'T', kFloatTypes}},
                  .attrs = std::move(attrs),
                  .infer = infer,
                  .summary = summary,
                  .accumulator = Accumulator::InputType};
}

OpSchema pool(OpKind kind, std::string_view name, std::vector<AttrSpec> attrs, ShapeFn infer,
              std::string_view summary) {
  return OpSchema{.kind = kind,
                  .name = name,
                  .family = OpFamily::Pooling,
                  .inputs = {{"X", 'T'}},
                  .outputs = {{"Y", 'T'}},
                  .type_params = {{'T', kFloatTypes}},
                  .attrs = std::move(attrs),
                  .infer = infer,
                  .summary = summary,
                  .accumulator = Accumulator::Wide};
}

}  // namespace

void add_spatial_schemas(std::vector<OpSchema>& t) {
  using K = OpKind;
  std::vector<AttrSpec> conv_attrs = window_attrs(false);
  conv_attrs.push_back(group_attr());
  t.push_back(conv_like(K::Conv, "Conv", conv_attrs, conv_shape,
                        "N-D convolution (cross-correlation), NCHW, 1-3 spatial dims: groups, "
                        "strides, dilations, pads [begin..., end...], optional bias"));
  conv_attrs.push_back(ints_min("output_padding", 0.0));
  t.push_back(conv_like(K::ConvTranspose, "ConvTranspose", conv_attrs, conv_transpose_shape,
                        "transposed convolution (the gradient of Conv w.r.t. its input): W is "
                        "[C, M/group, k...]; pads trim the full output, output_padding extends "
                        "its end"));

  std::vector<AttrSpec> pool_attrs = window_attrs(true);
  pool_attrs.push_back(flag("ceil_mode", 0));
  std::vector<AttrSpec> max_attrs = pool_attrs;
  max_attrs.push_back(flag("storage_order", 0));
  OpSchema max_pool =
      pool(K::MaxPool, "MaxPool", max_attrs, pool_shape,
           "window maximum (padding never wins; NaN propagates); optional Indices: flat index "
           "into X of the first maximum in window order (storage_order 1: column-major)");
  max_pool.outputs.push_back({"Indices", 'I', true});
  max_pool.type_params.push_back({'I', {DType::I64}});
  max_pool.accumulator = Accumulator::None;
  t.push_back(std::move(max_pool));
  std::vector<AttrSpec> avg_attrs = pool_attrs;
  avg_attrs.push_back(flag("count_include_pad", 0));
  t.push_back(pool(K::AveragePool, "AveragePool", avg_attrs, pool_shape,
                   "window mean over the input elements (count_include_pad: over the window "
                   "positions inside the padded input)"));
  std::vector<AttrSpec> lp_attrs = pool_attrs;
  lp_attrs.push_back(p_attr());
  t.push_back(pool(K::LpPool, "LpPool", lp_attrs, pool_shape,
                   "window p-norm (sum |x|^p)^(1/p) over the input elements"));

  t.push_back(pool(K::GlobalAveragePool, "GlobalAveragePool", {}, global_pool_shape,
                   "mean over all spatial dims: [N, C, 1...]"));
  OpSchema global_max = pool(K::GlobalMaxPool, "GlobalMaxPool", {}, global_pool_shape,
                             "maximum over all spatial dims (NaN propagates): [N, C, 1...]");
  global_max.accumulator = Accumulator::None;
  t.push_back(std::move(global_max));
  t.push_back(pool(K::GlobalLpPool, "GlobalLpPool", {p_attr()}, global_pool_shape,
                   "p-norm over all spatial dims: [N, C, 1...]"));
}

}  // namespace volta::op_table
