// The op table's part for family Pooling: MaxPool, AveragePool, LpPool and their global forms
// (window attributes: op_table_window.h).

#include <string>

#include "op_table_window.h"
#include "volta/ir/graph.h"

namespace volta::op_table {
namespace {

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

AttrSpec p_attr() { return {"p", AttrType::Int, AttrValue{int64_t{2}}, 1.0}; }

OpSchema pool(OpKind kind, std::string_view name, std::vector<AttrSpec> attrs, ShapeFn infer,
              std::string_view summary) {
  return OpSchema{.kind = kind,
                  .name = name,
                  .family = OpFamily::Pooling,
                  .inputs = {{"X", 'T', D::Differentiable}},
                  .outputs = {{"Y", 'T'}},
                  .type_params = {{'T', kFloatTypes}},
                  .attrs = std::move(attrs),
                  .infer = infer,
                  .summary = summary,
                  .accumulator = Accumulator::Wide};
}

}  // namespace

void add_pooling_schemas(std::vector<OpSchema>& t) {
  using K = OpKind;
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
