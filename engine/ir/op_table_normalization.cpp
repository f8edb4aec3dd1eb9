// The op table's part for BatchNormalization, InstanceNormalization, MeanVarianceNormalization,
// LRN, Hardmax, the losses and Einsum: their schemas, shape functions and Einsum's equation.

#include <algorithm>
#include <array>
#include <string>

#include "op_table_builders.h"
#include "volta/ir/einsum.h"
#include "volta/ir/graph.h"

namespace volta {
namespace {

[[noreturn]] void shape_fail(const std::string& message) { throw ShapeError(message); }

int checked_axis(int64_t axis, int rank) {
  const std::optional<int> a = normalize_axis(axis, rank);
  if (!a) {
    shape_fail("axis " + std::to_string(axis) + " is out of range for rank " +
               std::to_string(rank) + " (valid: [" + std::to_string(-rank) + ", " +
               std::to_string(rank - 1) + "])");
  }
  return *a;
}

void require_rank_at_least(const Shape& x, int rank, std::string_view layout) {
  if (x.rank() < rank) {
    shape_fail("input of shape " + x.str() + " has rank " + std::to_string(x.rank()) +
               "; the op needs rank >= " + std::to_string(rank) + " (" + std::string(layout) + ")");
  }
}

// Per-channel operands (scale, bias, statistics) hold one value per channel of axis 1.
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

std::vector<TypeInfo> per_channel_normalization(const InferContext& ctx) {
  require_rank_at_least(ctx.input(0).shape, 2, "[N, C, D1, ...]");
  require_per_channel(ctx, 1, static_cast<int>(ctx.inputs.size()) - 1);
  return {ctx.input(0)};
}

std::vector<TypeInfo> mean_variance_normalization(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  std::vector<int> axes;
  for (int64_t a : ctx.attrs.get_ints("axes")) axes.push_back(checked_axis(a, x.rank()));
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) {
    shape_fail("axes " + Shape(ctx.attrs.get_ints("axes")).str() + " name an axis twice");
  }
  return {ctx.input(0)};
}

std::vector<TypeInfo> lrn(const InferContext& ctx) {
  require_rank_at_least(ctx.input(0).shape, 2, "[N, C, D1, ...]");
  return {ctx.input(0)};
}

std::vector<TypeInfo> hardmax(const InferContext& ctx) {
  checked_axis(ctx.attrs.get_int("axis"), ctx.input(0).shape.rank());
  return {ctx.input(0)};
}

// Scores or log-probabilities [N, C, d1, ...], labels [N, d1, ...], weights [C].
std::vector<TypeInfo> loss(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  const Shape& labels = ctx.input(1).shape;
  require_rank_at_least(x, 2, "[N, C, d1, ...]");
  std::vector<int64_t> sample_dims = x.dims();
  sample_dims.erase(sample_dims.begin() + 1);
  if (labels != Shape(sample_dims)) {
    shape_fail("labels of shape " + labels.str() + " do not match the input of shape " + x.str() +
               " (expected " + Shape(sample_dims).str() + ", the input without axis 1)");
  }
  if (ctx.has_input(2)) require_per_channel(ctx, 2, 2);
  if (ctx.attrs.get_ints("ignore_index").size() > 1) {
    shape_fail("ignore_index holds " + std::to_string(ctx.attrs.get_ints("ignore_index").size()) +
               " labels; it is empty (no label ignored) or holds one label");
  }
  const bool reduced = ctx.attrs.get_string("reduction") != "none";
  std::vector<TypeInfo> out = {{ctx.input(0).dtype, reduced ? Shape{} : labels}};
  if (ctx.num_outputs > 1) out.push_back(ctx.input(0));  // log_prob
  return out;
}

std::vector<TypeInfo> einsum(const InferContext& ctx) {
  std::vector<Shape> shapes;
  for (size_t i = 0; i < ctx.inputs.size(); ++i)
    shapes.push_back(ctx.input(static_cast<int>(i)).shape);
  const EinsumEquation eq = parse_einsum_equation(ctx.attrs.get_string("equation"), shapes);
  return {{ctx.input(0).dtype, eq.output_shape()}};
}

// ---- Einsum equations -----------------------------------------------------------------------

constexpr int kEllipsis = -1;  // a term token standing for "..."

// One term: its letters (as chars) and at most one kEllipsis, in order.
std::vector<int> parse_term(std::string_view term, std::string_view equation) {
  std::vector<int> tokens;
  bool has_ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    const char c = term[i];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      tokens.push_back(c);
    } else if (term.substr(i, 3) == "...") {
      if (has_ellipsis) {
        shape_fail("einsum term '" + std::string(term) + "' of '" + std::string(equation) +
                   "' has two ellipses; a term may hold one");
      }
      has_ellipsis = true;
      tokens.push_back(kEllipsis);
      i += 2;
    } else {
      shape_fail("einsum equation '" + std::string(equation) + "' holds '" + std::string(1, c) +
                 "'; supported: letters a-z A-Z, ',', '->', '...' and spaces");
    }
  }
  return tokens;
}

}  // namespace

Shape EinsumEquation::output_shape() const {
  std::vector<int64_t> dims;
  for (int l : output_labels) dims.push_back(label_extent[static_cast<size_t>(l)]);
  return Shape(dims);
}

std::vector<int64_t> EinsumEquation::label_strides(int operand, const Shape& shape) const {
  std::vector<int64_t> strides(label_extent.size(), 0);
  const std::vector<int64_t> axis_strides = shape.strides();
  const std::vector<int>& axes = operand_axes[static_cast<size_t>(operand)];
  for (size_t a = 0; a < axes.size(); ++a) {
    if (shape[static_cast<int>(a)] != 1) strides[static_cast<size_t>(axes[a])] += axis_strides[a];
  }
  return strides;
}

EinsumEquation parse_einsum_equation(std::string_view equation, std::span<const Shape> operands) {
  std::string eq;
  for (char c : equation) {
    if (c != ' ') eq += c;
  }
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::vector<int>> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(parse_term(std::string_view(lhs).substr(start, comma - start), equation));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != operands.size()) {
    shape_fail("einsum equation '" + std::string(equation) + "' has " +
               std::to_string(terms.size()) + " input terms for " +
               std::to_string(operands.size()) + " inputs");
  }

  // Letters are numbered in order of first appearance; the ellipsis axes follow them.
  std::array<int, 128> letter_label{};
  letter_label.fill(-1);
  std::array<int, 128> letter_count{};
  int letters = 0;
  std::vector<int> ellipsis_rank(terms.size(), 0);
  int max_ellipsis = 0;
  for (size_t k = 0; k < terms.size(); ++k) {
    int named = 0;
    bool has_ellipsis = false;
    for (int t : terms[k]) {
      if (t == kEllipsis) {
        has_ellipsis = true;
        continue;
      }
      ++named;
      ++letter_count[static_cast<size_t>(t)];
      if (letter_label[static_cast<size_t>(t)] < 0)
        letter_label[static_cast<size_t>(t)] = letters++;
    }
    const int rank = operands[k].rank();
    if (has_ellipsis ? named > rank : named != rank) {
      shape_fail("einsum term " + std::to_string(k) + " of '" + std::string(equation) + "' names " +
                 std::to_string(named) + " axes" + (has_ellipsis ? " besides its ellipsis" : "") +
                 ", but input " + std::to_string(k) + " has shape " + operands[k].str());
    }
    ellipsis_rank[k] = rank - named;
    max_ellipsis = std::max(max_ellipsis, ellipsis_rank[k]);
  }

  EinsumEquation out;
  out.label_extent.assign(static_cast<size_t>(letters) + static_cast<size_t>(max_ellipsis), -1);
  for (size_t k = 0; k < terms.size(); ++k) {
    std::vector<int>& axes = out.operand_axes.emplace_back();
    for (int t : terms[k]) {
      if (t == kEllipsis) {
        for (int e = max_ellipsis - ellipsis_rank[k]; e < max_ellipsis; ++e) {
          axes.push_back(letters + e);
        }
      } else {
        axes.push_back(letter_label[static_cast<size_t>(t)]);
      }
    }
    for (size_t a = 0; a < axes.size(); ++a) {
      const int64_t dim = operands[k][static_cast<int>(a)];
      int64_t& extent = out.label_extent[static_cast<size_t>(axes[a])];
      const bool ellipsis_axis = axes[a] >= letters;
      if (extent < 0 || (ellipsis_axis && extent == 1)) {
        extent = dim;
      } else if (dim != extent && !(ellipsis_axis && dim == 1)) {
        shape_fail("einsum equation '" + std::string(equation) + "': axis " + std::to_string(a) +
                   " of input " + std::to_string(k) + " (shape " + operands[k].str() +
                   ") has extent " + std::to_string(dim) + " where another axis with its " +
                   (ellipsis_axis ? "ellipsis position" : "label") + " has " +
                   std::to_string(extent) +
                   (ellipsis_axis ? " (ellipsis axes broadcast only from extent 1)" : ""));
      }
    }
  }

  if (arrow == std::string::npos) {
    for (int e = 0; e < max_ellipsis; ++e) out.output_labels.push_back(letters + e);
    for (size_t c = 0; c < letter_count.size(); ++c) {
      if (letter_count[c] == 1) out.output_labels.push_back(letter_label[c]);
    }
  } else {
    const std::vector<int> rhs = parse_term(std::string_view(eq).substr(arrow + 2), equation);
    std::array<bool, 128> seen{};
    for (int t : rhs) {
      if (t == kEllipsis) {
        for (int e = 0; e < max_ellipsis; ++e) out.output_labels.push_back(letters + e);
        continue;
      }
      const auto c = static_cast<size_t>(t);
      if (letter_label[c] < 0 || seen[c]) {
        shape_fail("einsum output '" + eq.substr(arrow + 2) + "' of '" + std::string(equation) +
                   "' names '" + std::string(1, static_cast<char>(t)) +
                   (seen[c] ? "' twice" : "', which no input term has"));
      }
      seen[c] = true;
      out.output_labels.push_back(letter_label[c]);
    }
  }
  for (int l = 0; l < static_cast<int>(out.label_extent.size()); ++l) {
    if (std::find(out.output_labels.begin(), out.output_labels.end(), l) ==
        out.output_labels.end()) {
      out.summed_labels.push_back(l);
    }
  }
  return out;
}

namespace op_table {

void add_normalization_schemas(std::vector<OpSchema>& t) {
  using K = OpKind;
  using F = OpFamily;
  const AttrSpec epsilon = {"epsilon", AttrType::Float, AttrValue{1e-5}, 0.0, kInf};
  const AttrSpec reduction = {"reduction",  AttrType::String, AttrValue{std::string("mean")},
                              std::nullopt, std::nullopt,     {"none", "sum", "mean"}};

  t.push_back(OpSchema{
      .kind = K::BatchNormalization,
      .name = "BatchNormalization",
      .family = F::Normalization,
      .inputs = {{"X", 'T'},
                 {"scale", 'T'},
                 {"B", 'T'},
                 {"input_mean", 'T'},
                 {"input_var", 'T', false, false, InputDomain::Positive}},
      .outputs = {{"Y", 'T'}},
      .type_params = {{'T', kFloatTypes}},
      .attrs = {epsilon},
      .infer = per_channel_normalization,
      .summary = "inference: (X - input_mean) / sqrt(input_var + epsilon) * scale + B, per "
                 "channel of axis 1",
      .onnx_since = 1});
  t.push_back(OpSchema{.kind = K::InstanceNormalization,
                       .name = "InstanceNormalization",
                       .family = F::Normalization,
                       .inputs = {{"input", 'T'}, {"scale", 'T'}, {"B", 'T'}},
                       .outputs = {{"output", 'T'}},
                       .type_params = {{'T', kFloatTypes}},
                       .attrs = {epsilon},
                       .infer = per_channel_normalization,
                       .summary = "normalize each [n, c] plane over axes 2.. by its mean and "
                                  "biased variance (+ epsilon), then * scale[c] + B[c]",
                       .accumulator = Accumulator::InputType,
                       .onnx_since = 1});
  t.push_back(OpSchema{
      .kind = K::MeanVarianceNormalization,
      .name = "MeanVarianceNormalization",
      .family = F::Normalization,
      .inputs = {{"X", 'T'}},
      .outputs = {{"Y", 'T'}},
      .type_params = {{'T', kFloatTypes}},
      .attrs = {{"axes", AttrType::Ints, AttrValue{std::vector<int64_t>{0, 2, 3}}},
                {"epsilon", AttrType::Float, AttrValue{1e-9}, 0.0, kInf}},
      .infer = mean_variance_normalization,
      .summary = "(X - mean) / (sqrt(biased variance) + epsilon) over axes (ONNX adds 1e-9, the "
                 "default)",
      .accumulator = Accumulator::Wide,
      .onnx_since = 9});
  t.push_back(OpSchema{.kind = K::LRN,
                       .name = "LRN",
                       .family = F::Normalization,
                       .inputs = {{"X", 'T'}},
                       .outputs = {{"Y", 'T'}},
                       .type_params = {{'T', kFloatTypes}},
                       .attrs = {{"alpha", AttrType::Float, AttrValue{1e-4}},
                                 {"beta", AttrType::Float, AttrValue{0.75}},
                                 {"bias", AttrType::Float, AttrValue{1.0}},
                                 {"size", AttrType::Int, std::nullopt, 1.0, std::nullopt}},
                       .infer = lrn,
                       .summary = "X / (bias + alpha / size * sum of X^2 over channels "
                                  "[c - floor((size-1)/2), c + ceil((size-1)/2)])^beta",
                       .accumulator = Accumulator::InputType,
                       .onnx_since = 1});
  t.push_back(OpSchema{.kind = K::Hardmax,
                       .name = "Hardmax",
                       .family = F::Normalization,
                       .inputs = {{"input", 'T'}},
                       .outputs = {{"output", 'T'}},
                       .type_params = {{'T', kFloatTypes}},
                       .attrs = {axis_attr(-1)},
                       .infer = hardmax,
                       .summary = "1 at the first maximum along axis (a NaN counts as the "
                                  "maximum), 0 elsewhere",
                       .differentiability = D::NotDifferentiable,
                       .nan_mode = NanMode::FirstNanWins,
                       .tie_break = TieBreak::FirstIndex,
                       .onnx_since = 1});

  const std::vector<AttrSpec> loss_attrs = {
      reduction, {"ignore_index", AttrType::Ints, AttrValue{std::vector<int64_t>{}}}};
  t.push_back(OpSchema{
      .kind = K::SoftmaxCrossEntropyLoss,
      .name = "SoftmaxCrossEntropyLoss",
      .family = F::Loss,
      .inputs = {{"scores", 'T'},
                 {"labels", 'I', false, false, InputDomain::Index},
                 {"weights", 'T', true, false, InputDomain::Positive}},
      .outputs = {{"output", 'T'}, {"log_prob", 'T', true}},
      .type_params = {{'T', kFloatTypes}, {'I', kIndexTypes}},
      .attrs = loss_attrs,
      .infer = loss,
      .summary = "NegativeLogLikelihoodLoss of LogSoftmax(scores) along axis 1; log_prob is that "
                 "LogSoftmax",
      .accumulator = Accumulator::Wide,
      .onnx_since = 12});
  t.push_back(OpSchema{
      .kind = K::NegativeLogLikelihoodLoss,
      .name = "NegativeLogLikelihoodLoss",
      .family = F::Loss,
      .inputs = {{"input", 'T'},
                 {"target", 'I', false, false, InputDomain::Index},
                 {"weight", 'T', true, false, InputDomain::Positive}},
      .outputs = {{"loss", 'T'}},
      .type_params = {{'T', kFloatTypes}, {'I', kIndexTypes}},
      .attrs = loss_attrs,
      .infer = loss,
      .summary = "-input[n, target, d...] * weight[target]; 0 where target is ignore_index (an "
                 "empty or one-label list); reduction none, sum, or mean = sum / sum of weights",
      .accumulator = Accumulator::Wide,
      .onnx_since = 12});
  t.push_back(OpSchema{.kind = K::Einsum,
                       .name = "Einsum",
                       .family = F::Linalg,
                       .inputs = {{"Inputs", 'T', false, true}},
                       .outputs = {{"Output", 'T'}},
                       .type_params = {{'T', kNumericTypes}},
                       .attrs = {required("equation", AttrType::String)},
                       .infer = einsum,
                       .summary = "Einstein summation (numpy grammar: implicit or explicit output, "
                                  "diagonals, ellipsis broadcasting)",
                       .accumulator = Accumulator::InputType,
                       .onnx_since = 12});
}

}  // namespace op_table
}  // namespace volta
