// Lowerings of the ONNX gathers, scatters, TopK, OneHot and Trilu, and of NonZero, Compress,
// Unique and NonMaxSuppression, whose output shapes depend on values known at import time, and
// TensorScatter (a KV-cache write) as a ScatterElements with in-graph indices.
// Shape-like inputs (TopK's K, OneHot's depth, Trilu's k) must be known at import time and become
// attributes; data inputs stay inputs.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "lowering.h"

namespace volta::onnx {
namespace {

// ScatterElements / ScatterND "reduction": version 16 on ("max" and "min" from 18); earlier
// versions replace.
std::string reduction(LoweringContext& ctx) {
  if (ctx.since_version() < 16) return "none";
  std::string r = ctx.attr_string("reduction", "none");
  const bool extremes = ctx.since_version() >= 18;
  if (r != "none" && r != "add" && r != "mul" && !(extremes && (r == "max" || r == "min"))) {
    ctx.invalid("reduction \"" + r + "\"; version " + std::to_string(ctx.since_version()) +
                " takes \"none\", \"add\", \"mul\"" + (extremes ? ", \"max\", \"min\"" : ""));
  }
  return r;
}

void lower_gather_elements(LoweringContext& ctx) {
  ctx.set_output(0, ctx.add(OpKind::GatherElements, {ctx.input(0), ctx.input(1)},
                            {{"axis", ctx.attr_int("axis", 0)}}));
}

void lower_gather_nd(LoweringContext& ctx) {
  const int64_t batch_dims = ctx.since_version() >= 12 ? ctx.attr_int("batch_dims", 0) : 0;
  ctx.set_output(
      0, ctx.add(OpKind::GatherND, {ctx.input(0), ctx.input(1)}, {{"batch_dims", batch_dims}}));
}

// ScatterElements, and the deprecated Scatter (versions 9 and 11) it renames.
void lower_scatter_elements(LoweringContext& ctx) {
  const std::string r = ctx.op_type() == "Scatter" ? "none" : reduction(ctx);
  ctx.set_output(0, ctx.add(OpKind::ScatterElements, {ctx.input(0), ctx.input(1), ctx.input(2)},
                            {{"axis", ctx.attr_int("axis", 0)}, {"reduction", r}}));
}

void lower_scatter_nd(LoweringContext& ctx) {
  ctx.set_output(0, ctx.add(OpKind::ScatterND, {ctx.input(0), ctx.input(1), ctx.input(2)},
                            {{"reduction", reduction(ctx)}}));
}

// Version 1 takes k as an attribute, 10 as input K; 11 adds largest and sorted. Volta always
// returns sorted results, which sorted=0 (order unspecified) allows.
void lower_top_k(LoweringContext& ctx) {
  const int64_t k =
      ctx.since_version() < 10 ? ctx.attr_int("k", std::nullopt) : ctx.constant_int(1, "K");
  if (k < 0) ctx.invalid("k must be >= 0; got " + std::to_string(k));
  Attributes attrs{{"k", k}, {"axis", ctx.attr_int("axis", -1)}};
  if (ctx.since_version() >= 11) {
    attrs["largest"] = ctx.attr_int("largest", 1);
    attrs["sorted"] = ctx.attr_int("sorted", 1);
  }
  const std::vector<ValueId> outs = ctx.add_node(OpKind::TopK, {ctx.input(0)}, std::move(attrs), 2);
  ctx.set_output(0, outs[0]);
  ctx.set_output(1, outs[1]);
}

// depth is cast to int64 as ONNX specifies. Version 9 leaves negative indices all-off;
// version 11 counts them from depth, as the internal op does: version 9's negative indices
// are first replaced by depth (out of range).
void lower_one_hot(LoweringContext& ctx) {
  const double depth_value = ctx.constant_scalar(1, "depth");
  if (!(depth_value >= 1) || !std::isfinite(depth_value)) {
    ctx.invalid("depth must be a positive number; got " + std::to_string(depth_value));
  }
  const auto depth = static_cast<int64_t>(depth_value);
  ValueId indices = ctx.input(0);
  if (ctx.since_version() < 11) {
    // An index is negative after truncation when it is below the value just above -1.
    const DType dtype = ctx.input_type(0).dtype;
    Tensor bound(dtype, Shape{});
    bound.set_double(0, dtype == DType::F32   ? static_cast<double>(std::nextafter(-1.0F, 0.0F))
                        : dtype == DType::F64 ? std::nextafter(-1.0, 0.0)
                                              : 0.0);
    Tensor past_end(dtype, Shape{});
    past_end.set_double(0, static_cast<double>(depth));
    const ValueId negative = ctx.add(OpKind::Less, {indices, ctx.constant(bound)});
    indices = ctx.add(OpKind::Where, {negative, ctx.constant(past_end), indices});
  }
  ctx.set_output(0, ctx.add(OpKind::OneHot, {indices, ctx.input(2)},
                            {{"depth", depth}, {"axis", ctx.attr_int("axis", -1)}}));
}

void lower_trilu(LoweringContext& ctx) {
  const int64_t k = ctx.has_input(1) ? ctx.constant_int(1, "k") : 0;
  ctx.set_output(
      0, ctx.add(OpKind::Trilu, {ctx.input(0)}, {{"upper", ctx.attr_int("upper", 1)}, {"k", k}}));
}

// The indices of the non-zero elements, one row per axis: a data-dependent shape, so the
// input must be known at import time.
Tensor nonzero_indices(const Tensor& t) {
  const Shape& shape = t.shape();
  std::vector<int64_t> flat;
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (t.get_double(i) != 0.0) flat.push_back(i);
  }
  const int64_t rank = shape.rank();
  const auto count = static_cast<int64_t>(flat.size());
  Tensor out(DType::I64, Shape{rank, count});
  for (int64_t j = 0; j < count; ++j) {
    int64_t rest = flat[static_cast<size_t>(j)];
    for (int64_t d = rank - 1; d >= 0; --d) {
      out.set_int(d * count + j, rest % shape[static_cast<int>(d)]);
      rest /= shape[static_cast<int>(d)];
    }
  }
  return out;
}

void lower_nonzero(LoweringContext& ctx) {
  ctx.set_output_constant(0, nonzero_indices(ctx.constant_input(
                                 0, "the input (its non-zero count is the output shape)")));
}

// Compress = Gather of the positions where the (import-time) condition holds.
void lower_compress(LoweringContext& ctx) {
  const Tensor& condition = ctx.constant_input(1, "condition (it decides the output shape)");
  ValueId data = ctx.input(0);
  int64_t axis = 0;
  if (ctx.has_attr("axis")) {
    axis = ctx.attr_int("axis", {});
  } else {
    data = ctx.add(OpKind::Reshape, {data}, {{"shape", Ints{-1}}});
  }
  const Shape shape = ctx.type_of(data).shape;
  const int64_t rank = shape.rank();
  if (axis < -rank || axis >= rank) ctx.invalid("axis out of range");
  const int64_t extent = shape[static_cast<int>(axis < 0 ? axis + rank : axis)];
  if (condition.numel() > extent) ctx.invalid("condition is longer than the axis");
  Ints picked;
  for (int64_t i = 0; i < condition.numel(); ++i) {
    if (condition.get_double(i) != 0.0) picked.push_back(i);
  }
  ctx.set_output(0, ctx.add(OpKind::Gather,
                            {data, ctx.constant(Tensor::from<int64_t>(
                                       Shape{static_cast<int64_t>(picked.size())}, picked))},
                            {{"axis", axis}}));
}

// ---- Unique: its output shapes are its input's unique count, so it is computed here ----------

// Unique's items: the slices of X along the axis (X's elements when there is none), each read as
// `outer` runs of `inner` contiguous elements, numpy.unique's order of a slice's elements.
struct UniqueItems {
  int64_t count;  // the axis' extent
  int64_t outer;  // the product of the dims before the axis
  int64_t inner;  // the product of the dims after it

  int64_t size() const { return outer * inner; }
  // The flat index in X of element k of item `item`.
  int64_t element(int64_t item, int64_t k) const {
    return (k / inner * count + item) * inner + k % inner;
  }
};

// numpy.unique's order: ascending, -0 equal to 0, NaN after every number and equal to NaN.
template <class T>
int compare_values(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    const bool a_nan = std::isnan(a);
    if (a_nan || std::isnan(b)) return a_nan == std::isnan(b) ? 0 : (a_nan ? 1 : -1);
  }
  return a < b ? -1 : (b < a ? 1 : 0);
}

// Items compared element by element, in order.
template <class T>
int compare_items(const std::vector<T>& values, const UniqueItems& items, int64_t a, int64_t b) {
  for (int64_t k = 0; k < items.size(); ++k) {
    const int c = compare_values(values[static_cast<size_t>(items.element(a, k))],
                                 values[static_cast<size_t>(items.element(b, k))]);
    if (c != 0) return c;
  }
  return 0;
}

struct UniqueGroups {
  Ints first;    // each unique item's first occurrence in X ("indices")
  Ints inverse;  // each item's unique item ("inverse_indices")
  Ints counts;
};

// Groups equal items, in ascending order or (sorted = false) in the order of first occurrence.
template <class T>
UniqueGroups group_items(const std::vector<T>& values, const UniqueItems& items, bool sorted) {
  Ints order(static_cast<size_t>(items.count));
  std::iota(order.begin(), order.end(), int64_t{0});
  // Stable, so each group starts with its first occurrence.
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return compare_items(values, items, a, b) < 0; });
  UniqueGroups groups;
  groups.inverse.resize(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || compare_items(values, items, order[i - 1], order[i]) != 0) {
      groups.first.push_back(order[i]);
      groups.counts.push_back(0);
    }
    groups.inverse[static_cast<size_t>(order[i])] = static_cast<int64_t>(groups.first.size()) - 1;
    ++groups.counts.back();
  }
  if (sorted) return groups;
  Ints by_first(groups.first.size());
  std::iota(by_first.begin(), by_first.end(), int64_t{0});
  std::sort(by_first.begin(), by_first.end(), [&groups](int64_t a, int64_t b) {
    return groups.first[static_cast<size_t>(a)] < groups.first[static_cast<size_t>(b)];
  });
  UniqueGroups in_order;
  Ints position(by_first.size());
  for (size_t p = 0; p < by_first.size(); ++p) {
    const auto g = static_cast<size_t>(by_first[p]);
    in_order.first.push_back(groups.first[g]);
    in_order.counts.push_back(groups.counts[g]);
    position[g] = static_cast<int64_t>(p);
  }
  for (int64_t g : groups.inverse) in_order.inverse.push_back(position[static_cast<size_t>(g)]);
  return in_order;
}

// X's values, exactly: integers and bool as int64, floats as double.
template <class T>
std::vector<T> values_of(const Tensor& x) {
  std::vector<T> values(static_cast<size_t>(x.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      values[static_cast<size_t>(i)] = x.get_double(i);
    } else {
      values[static_cast<size_t>(i)] = x.get_int(i);
    }
  }
  return values;
}

// The items `picked`, in that order, as a tensor of shape `shape`.
Tensor gather_items(const Tensor& x, const UniqueItems& items, const Ints& picked, Shape shape) {
  Tensor y(x.dtype(), std::move(shape));
  const size_t run = static_cast<size_t>(items.inner) * dtype_size(x.dtype());
  if (run == 0) return y;
  const auto* from = static_cast<const std::byte*>(x.data());
  auto* to = static_cast<std::byte*>(y.data());
  for (int64_t o = 0; o < items.outer; ++o) {
    for (int64_t item : picked) {
      std::memcpy(to, from + static_cast<size_t>(o * items.count + item) * run, run);
      to += run;
    }
  }
  return y;
}

Tensor int64_vector(const Ints& values) {
  return Tensor::from<int64_t>(Shape{static_cast<int64_t>(values.size())}, values);
}

void lower_unique(LoweringContext& ctx) {
  const Shape shape = ctx.input_type(0).shape;
  check_constant_size(ctx, shape);
  const int64_t sorted = ctx.attr_int("sorted", 1);
  if (sorted != 0 && sorted != 1)
    ctx.invalid("sorted must be 0 or 1; got " + std::to_string(sorted));
  UniqueItems items{shape.numel(), 1, 1};
  std::optional<int> axis;
  if (ctx.has_attr("axis")) {
    const int64_t attr = ctx.attr_int("axis", std::nullopt);
    axis = normalize_axis(attr, shape.rank());
    if (!axis) {
      ctx.invalid("axis " + std::to_string(attr) + " is out of range for X " + shape.str());
    }
    const std::vector<int64_t>& dims = shape.dims();
    items.count = dims[static_cast<size_t>(*axis)];
    items.outer = Shape(Ints(dims.begin(), dims.begin() + *axis)).numel();
    items.inner = Shape(Ints(dims.begin() + *axis + 1, dims.end())).numel();
  }
  const Tensor& x = ctx.constant_input(0, "X (its unique count is the output shape)");
  const UniqueGroups groups = is_floating(x.dtype())
                                  ? group_items(values_of<double>(x), items, sorted == 1)
                                  : group_items(values_of<int64_t>(x), items, sorted == 1);
  const auto unique = static_cast<int64_t>(groups.first.size());
  Shape y_shape{unique};
  if (axis) {
    y_shape = shape;
    y_shape[*axis] = unique;
  }
  ctx.set_output_constant(0, gather_items(x, items, groups.first, y_shape));
  ctx.set_output_constant(1, int64_vector(groups.first));
  ctx.set_output_constant(2, int64_vector(groups.inverse));
  ctx.set_output_constant(3, int64_vector(groups.counts));
}

// ---- NonMaxSuppression: its output shape is the number of boxes selected -----------------------

// A box's extent, in the f32 arithmetic of ONNX's reference implementation.
struct BoxExtent {
  float x_min, x_max, y_min, y_max;
};

// The reference implementation's ordering of two corner coordinates.
std::pair<float, float> ordered(float a, float b) {
  return a >= b ? std::pair{b, a} : std::pair{a, b};
}

BoxExtent box_extent(const float* box, bool center_point) {
  if (center_point) {  // [x_center, y_center, width, height]
    const float half_width = box[2] / 2;
    const float half_height = box[3] / 2;
    return {box[0] - half_width, box[0] + half_width, box[1] - half_height, box[1] + half_height};
  }
  // [y1, x1, y2, x2], any two diagonal corners.
  const auto [x_min, x_max] = ordered(box[1], box[3]);
  const auto [y_min, y_max] = ordered(box[0], box[2]);
  return {x_min, x_max, y_min, y_max};
}

// Whether `candidate`'s IoU with `kept` is strictly above the threshold; boxes that do not
// overlap, or of no area, never suppress.
bool suppresses(const BoxExtent& candidate, const BoxExtent& kept, float iou_threshold) {
  const float x_min = std::max(candidate.x_min, kept.x_min);
  const float x_max = std::min(candidate.x_max, kept.x_max);
  if (x_max <= x_min) return false;
  const float y_min = std::max(candidate.y_min, kept.y_min);
  const float y_max = std::min(candidate.y_max, kept.y_max);
  if (y_max <= y_min) return false;
  const float intersection = (x_max - x_min) * (y_max - y_min);
  if (intersection <= 0) return false;
  const float candidate_area =
      (candidate.x_max - candidate.x_min) * (candidate.y_max - candidate.y_min);
  const float kept_area = (kept.x_max - kept.x_min) * (kept.y_max - kept.y_min);
  const float union_area = candidate_area + kept_area - intersection;
  if (candidate_area <= 0 || kept_area <= 0 || union_area <= 0) return false;
  return intersection / union_area > iou_threshold;
}

struct ScoredBox {
  float score;
  int64_t box;
};

// Highest score first, equal scores by box index (the reference implementation's order); NaN
// scores, which no threshold keeps, after every number.
bool ranks_before(const ScoredBox& a, const ScoredBox& b) {
  const bool a_nan = std::isnan(a.score);
  const bool b_nan = std::isnan(b.score);
  if (a_nan != b_nan) return b_nan;
  if (!a_nan && a.score != b.score) return a.score > b.score;
  return a.box < b.box;
}

// An optional scalar input; nullptr when absent or empty (the reference implementation's
// default).
const Tensor* optional_scalar(LoweringContext& ctx, int i, std::string_view what) {
  if (!ctx.has_input(i)) return nullptr;
  const Tensor& t = ctx.constant_input(i, what);
  if (t.numel() == 0) return nullptr;
  if (t.numel() != 1) {
    ctx.invalid(std::string(what) + " must be a scalar; got shape " + t.shape().str());
  }
  return &t;
}

// The import-time budget of IoU comparisons, as check_constant_size's of elements.
constexpr int64_t kMaxBoxComparisons = int64_t{1} << 28;

struct NmsProblem {
  int64_t batches, classes, boxes;
  int64_t max_per_class;
  float iou_threshold;
  std::optional<float> score_threshold;
  bool center_point;
};

// The selected [batch, class, box] triples, class by class, each class's in selection order.
Ints select_boxes(const NmsProblem& p, const float* boxes, const float* scores) {
  Ints selected;
  std::vector<BoxExtent> extents(static_cast<size_t>(p.boxes));
  std::vector<ScoredBox> ranked;
  std::vector<BoxExtent> kept;
  for (int64_t b = 0; b < p.batches; ++b) {
    for (int64_t i = 0; i < p.boxes; ++i) {
      extents[static_cast<size_t>(i)] = box_extent(boxes + (b * p.boxes + i) * 4, p.center_point);
    }
    for (int64_t c = 0; c < p.classes; ++c) {
      const float* class_scores = scores + (b * p.classes + c) * p.boxes;
      ranked.clear();
      for (int64_t i = 0; i < p.boxes; ++i) {
        if (!p.score_threshold || class_scores[i] > *p.score_threshold) {
          ranked.push_back({class_scores[i], i});
        }
      }
      std::sort(ranked.begin(), ranked.end(), ranks_before);
      kept.clear();
      for (const ScoredBox& candidate : ranked) {
        if (static_cast<int64_t>(kept.size()) >= p.max_per_class) break;
        const BoxExtent& extent = extents[static_cast<size_t>(candidate.box)];
        if (std::none_of(kept.begin(), kept.end(), [&](const BoxExtent& k) {
              return suppresses(extent, k, p.iou_threshold);
            })) {
          kept.push_back(extent);
          selected.insert(selected.end(), {b, c, candidate.box});
        }
      }
    }
  }
  return selected;
}

void lower_non_max_suppression(LoweringContext& ctx) {
  const int64_t center_point_box = ctx.attr_int("center_point_box", 0);
  if (center_point_box != 0 && center_point_box != 1) {
    ctx.invalid(
        "center_point_box must be 0 ([y1, x1, y2, x2]) or 1 ([x_center, y_center, width, "
        "height]); got " +
        std::to_string(center_point_box));
  }
  const TypeInfo boxes_type = ctx.input_type(0);
  const TypeInfo scores_type = ctx.input_type(1);
  const Shape& bs = boxes_type.shape;
  const Shape& ss = scores_type.shape;
  if (boxes_type.dtype != DType::F32 || scores_type.dtype != DType::F32) {
    ctx.invalid("boxes and scores must be float; got " + std::string(dtype_name(boxes_type.dtype)) +
                " and " + std::string(dtype_name(scores_type.dtype)));
  }
  if (bs.rank() != 3 || bs[2] != 4 || ss.rank() != 3 || ss[0] != bs[0] || ss[2] != bs[1]) {
    ctx.invalid("boxes " + bs.str() + " and scores " + ss.str() +
                " must have shapes [num_batches, spatial_dimension, 4] and [num_batches, "
                "num_classes, spatial_dimension]");
  }
  check_constant_size(ctx, bs);
  check_constant_size(ctx, ss);
  NmsProblem p{.batches = bs[0],
               .classes = ss[1],
               .boxes = bs[1],
               .max_per_class = 0,
               .iou_threshold = 0,
               .score_threshold = std::nullopt,
               .center_point = center_point_box == 1};
  if (const Tensor* t = optional_scalar(ctx, 2, "max_output_boxes_per_class")) {
    p.max_per_class = std::clamp<int64_t>(t->get_int(0), 0, p.boxes);
  }
  if (const Tensor* t = optional_scalar(ctx, 3, "iou_threshold")) {
    p.iou_threshold = static_cast<float>(t->get_double(0));
    if (!(p.iou_threshold >= 0 && p.iou_threshold <= 1)) {
      ctx.invalid("iou_threshold must be in [0, 1]; got " + std::to_string(p.iou_threshold));
    }
  }
  if (const Tensor* t = optional_scalar(ctx, 4, "score_threshold")) {
    p.score_threshold = static_cast<float>(t->get_double(0));
  }
  // Each candidate is compared with at most max_per_class kept boxes.
  const int64_t comparisons = ss.numel() * p.max_per_class;
  if (comparisons > kMaxBoxComparisons) {
    ctx.unsupported(
        "selecting up to " + std::to_string(p.max_per_class) + " of " + std::to_string(p.boxes) +
        " boxes per class for " + std::to_string(p.batches * p.classes) +
        " (batch, class) pairs at import time takes up to " + std::to_string(comparisons) +
        " IoU comparisons; supported: up to " + std::to_string(kMaxBoxComparisons));
  }
  const std::string what = "(the boxes it selects are the output shape)";
  const Tensor& boxes = ctx.constant_input(0, "boxes " + what);
  const Tensor& scores = ctx.constant_input(1, "scores " + what);
  const Ints selected = select_boxes(p, boxes.data_as<float>(), scores.data_as<float>());
  ctx.set_output_constant(
      0, Tensor::from<int64_t>(Shape{static_cast<int64_t>(selected.size()) / 3, 3}, selected));
}

// TensorScatter 24: present = past with update written along `axis` from each batch row's
// write index on (modulo the cache length under circular): a ScatterElements whose indices,
// write_indices[b] + s for update position s, are built in the graph, write_indices being a
// runtime value (the decode step's positions).
void lower_tensor_scatter(LoweringContext& ctx) {
  const TypeInfo& past = ctx.input_type(0);
  const TypeInfo& update = ctx.input_type(1);
  require_dtype(ctx, OpKind::ScatterElements, past.dtype);
  const std::string mode = ctx.attr_string("mode", "linear");
  if (mode != "linear" && mode != "circular") {
    ctx.unsupported("mode '" + mode + "'; supported: linear, circular");
  }
  const int rank = past.shape.rank();
  const int64_t axis_attr = ctx.attr_int("axis", -2);
  const int64_t axis = axis_attr < 0 ? axis_attr + rank : axis_attr;
  if (rank < 2 || axis <= 0 || axis >= rank) {
    ctx.invalid("axis " + std::to_string(axis_attr) + " for a cache of rank " +
                std::to_string(rank) + "; it must name a non-batch axis");
  }
  if (update.dtype != past.dtype || update.shape.rank() != rank) {
    ctx.invalid("update " + type_text(update) + " must have past_cache's dtype and rank (" +
                std::string(dtype_name(past.dtype)) + past.shape.str() + ")");
  }
  for (int a = 0; a < rank; ++a) {
    const bool ok = a == axis ? update.shape[a] <= past.shape[a] : update.shape[a] == past.shape[a];
    if (!ok) {
      ctx.invalid("update of shape " + update.shape.str() + " does not fit past_cache of shape " +
                  past.shape.str() + " (it may be shorter only along axis " + std::to_string(axis) +
                  ")");
    }
  }
  const int64_t length = update.shape[static_cast<int>(axis)];
  Ints iota_shape(static_cast<size_t>(rank), 1);
  iota_shape[static_cast<size_t>(axis)] = length;
  Ints positions(static_cast<size_t>(length));
  std::iota(positions.begin(), positions.end(), int64_t{0});
  ValueId indices = ctx.constant(Tensor::from<int64_t>(Shape(iota_shape), positions));
  if (ctx.num_inputs() > 2 && ctx.has_input(2)) {
    const TypeInfo& writes = ctx.input_type(2);
    const Ints want = {past.shape[0]};
    if (writes.dtype != DType::I64 || writes.shape.dims() != want) {
      ctx.invalid("write_indices " + type_text(writes) + " must be i64 of shape " +
                  Shape(want).str());
    }
    Ints batch_shape(static_cast<size_t>(rank), 1);
    batch_shape[0] = past.shape[0];
    const ValueId starts = ctx.add(OpKind::Reshape, {ctx.input(2)}, {{"shape", batch_shape}});
    indices = ctx.add(OpKind::Add, {starts, indices});
    if (mode == "circular") {
      const ValueId cache_length =
          scalar_constant(ctx, DType::I64, static_cast<double>(past.shape[static_cast<int>(axis)]));
      indices = ctx.add(OpKind::Mod, {indices, cache_length}, {{"fmod", int64_t{0}}});
    }
  }  // Absent write_indices: every row writes from 0, and length <= the cache's, so no wrap.
  indices = ctx.add(OpKind::Expand, {indices}, {{"shape", update.shape.dims()}});
  ctx.set_output(0, ctx.add(OpKind::ScatterElements, {ctx.input(0), indices, ctx.input(1)},
                            {{"axis", axis}, {"reduction", std::string("none")}}));
}

}  // namespace

void register_indexing_lowerings(LoweringTable& table) {
  table.add("GatherElements", OpKind::GatherElements, 11, &lower_gather_elements);
  table.add("GatherND", OpKind::GatherND, 11, &lower_gather_nd);
  table.add("ScatterElements", OpKind::ScatterElements, 11, &lower_scatter_elements);
  table.add("Scatter", OpKind::ScatterElements, 9, &lower_scatter_elements);
  table.add("ScatterND", OpKind::ScatterND, 11, &lower_scatter_nd);
  table.add_composite("TensorScatter", OpFamily::Indexing, 24, &lower_tensor_scatter);
  table.add("TopK", OpKind::TopK, 1, &lower_top_k);
  table.add("OneHot", OpKind::OneHot, 9, &lower_one_hot);
  table.add("Trilu", OpKind::Trilu, 14, &lower_trilu);
  table.add_composite("NonZero", OpFamily::Indexing, 9, &lower_nonzero);
  table.add_composite("Compress", OpFamily::Indexing, 9, &lower_compress);
  table.add_composite("Unique", OpFamily::Indexing, 11, &lower_unique);
  table.add_composite("NonMaxSuppression", OpFamily::Indexing, 10, &lower_non_max_suppression);
}

}  // namespace volta::onnx
