// Lowerings of the ai.onnx.ml domain's gathers: ArrayFeatureExtractor (a Gather on the last
// axis) and TreeEnsemble (opset 5), whose trees are walked by gathers over tables made at import
// time from its attributes. Neither has an internal op of its own.

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <tuple>
#include <vector>

#include "lowering.h"

namespace volta::onnx {
namespace {

using K = OpKind;

// ArrayFeatureExtractor: X[..., indices] with the indices flattened; a 1-D X gives one row
// ([1, count]), as ONNX's reference and ONNX Runtime do.
void lower_array_feature_extractor(LoweringContext& ctx) {
  const TypeInfo& x = ctx.input_type(0);
  const TypeInfo& indices = ctx.input_type(1);
  if (x.shape.rank() == 0) ctx.invalid("X is a scalar; ArrayFeatureExtractor takes rank >= 1");
  if (indices.dtype != DType::I64) {
    ctx.invalid("Y is " + std::string(dtype_name(indices.dtype)) + "; the indices are i64");
  }
  const int64_t count = indices.shape.numel();
  const ValueId flat = ctx.add(K::Reshape, {ctx.input(1)}, {{"shape", Ints{count}}});
  ValueId z = ctx.add(K::Gather, {ctx.input(0), flat}, {{"axis", int64_t{x.shape.rank() - 1}}});
  if (x.shape.rank() == 1) z = ctx.add(K::Reshape, {z}, {{"shape", Ints{1, count}}});
  ctx.set_output(0, z);
}

// ---- TreeEnsemble ----------------------------------------------------------------------------

enum class Mode : uint8_t { Leq, Lt, Gte, Gt, Eq, Neq, Member };
constexpr int kModes = 7;

// The ensemble as its attributes give it, checked: interior nodes 0..M-1 and leaves 0..L-1.
struct Ensemble {
  std::vector<double> splits;
  std::vector<int64_t> features, true_ids, false_ids, true_leafs, false_leafs;
  std::vector<Mode> modes;
  std::vector<int64_t> missing_tracks_true;
  std::vector<std::vector<double>> members;  // per node: its set (BRANCH_MEMBER only)
  std::vector<double> leaf_weights;
  std::vector<int64_t> leaf_targets, roots;
  int64_t targets = 0;
  int64_t nodes() const { return static_cast<int64_t>(modes.size()); }
  int64_t leaves() const { return static_cast<int64_t>(leaf_weights.size()); }
};

std::vector<double> tensor_values(const Tensor& t) {
  std::vector<double> values(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) values[static_cast<size_t>(i)] = t.get_double(i);
  return values;
}

// Reads and checks every attribute (each is read, so none is left unread).
Ensemble read_ensemble(LoweringContext& ctx, int64_t features) {
  Ensemble e;
  e.splits = tensor_values(ctx.attr_tensor("nodes_splits"));
  e.features = ctx.attr_ints("nodes_featureids", std::nullopt);
  e.true_ids = ctx.attr_ints("nodes_truenodeids", std::nullopt);
  e.false_ids = ctx.attr_ints("nodes_falsenodeids", std::nullopt);
  e.true_leafs = ctx.attr_ints("nodes_trueleafs", std::nullopt);
  e.false_leafs = ctx.attr_ints("nodes_falseleafs", std::nullopt);
  for (const double m : tensor_values(ctx.attr_tensor("nodes_modes"))) {
    if (!(m >= 0 && m < kModes)) {
      ctx.invalid("nodes_modes holds " + std::to_string(m) + "; modes are 0 (BRANCH_LEQ) to 6 " +
                  "(BRANCH_MEMBER)");
    }
    e.modes.push_back(static_cast<Mode>(static_cast<int>(m)));
  }
  const auto count = static_cast<size_t>(e.nodes());
  if (count == 0) ctx.invalid("nodes_modes is empty: an ensemble has at least one node");
  const auto same_length = [&](const auto& values, const char* name) {
    if (values.size() != count) {
      ctx.invalid(std::string(name) + " has " + std::to_string(values.size()) +
                  " entries, nodes_modes " + std::to_string(count) +
                  ": every nodes_* has one per node");
    }
  };
  same_length(e.splits, "nodes_splits");
  same_length(e.features, "nodes_featureids");
  same_length(e.true_ids, "nodes_truenodeids");
  same_length(e.false_ids, "nodes_falsenodeids");
  same_length(e.true_leafs, "nodes_trueleafs");
  same_length(e.false_leafs, "nodes_falseleafs");
  e.missing_tracks_true =
      ctx.attr_ints("nodes_missing_value_tracks_true", std::vector<int64_t>(count, 0));
  same_length(e.missing_tracks_true, "nodes_missing_value_tracks_true");
  if (ctx.has_attr("nodes_hitrates")) {
    same_length(tensor_values(ctx.attr_tensor("nodes_hitrates")), "nodes_hitrates");
  }

  e.leaf_weights = tensor_values(ctx.attr_tensor("leaf_weights"));
  e.leaf_targets = ctx.attr_ints("leaf_targetids", std::nullopt);
  if (e.leaf_weights.empty() || e.leaf_targets.size() != e.leaf_weights.size()) {
    ctx.invalid("leaf_weights has " + std::to_string(e.leaf_weights.size()) +
                " entries, leaf_targetids " + std::to_string(e.leaf_targets.size()) +
                ": one per leaf, at least one leaf");
  }
  const int64_t most_target = *std::max_element(e.leaf_targets.begin(), e.leaf_targets.end());
  e.targets = ctx.attr_int("n_targets", most_target + 1);
  e.roots = ctx.attr_ints("tree_roots", std::nullopt);
  if (e.roots.empty()) ctx.invalid("tree_roots is empty: an ensemble has at least one tree");

  const auto in_range = [&](int64_t v, int64_t end, const std::string& what) {
    if (v < 0 || v >= end) {
      ctx.invalid(what + " is " + std::to_string(v) + "; it must lie in [0, " +
                  std::to_string(end) + ")");
    }
  };
  for (const int64_t t : e.leaf_targets) in_range(t, e.targets, "a leaf_targetids entry");
  for (const int64_t r : e.roots) in_range(r, e.nodes(), "a tree_roots entry");
  for (size_t i = 0; i < count; ++i) {
    const std::string node = "node " + std::to_string(i) + "'s ";
    in_range(e.features[i], features, node + "feature id");
    for (const auto& [leaf, id, side] : {std::tuple(e.true_leafs[i], e.true_ids[i], "true"),
                                         std::tuple(e.false_leafs[i], e.false_ids[i], "false")}) {
      if (leaf != 0 && leaf != 1) ctx.invalid(node + side + " leaf flag is not 0 or 1");
      in_range(id, leaf != 0 ? e.leaves() : e.nodes(),
               node + side + (leaf != 0 ? " leaf id" : " node id"));
    }
  }

  // The sets of the BRANCH_MEMBER nodes, in node order, each ended by a NaN.
  e.members.resize(count);
  std::vector<double> values;
  if (ctx.has_attr("membership_values")) {
    values = tensor_values(ctx.attr_tensor("membership_values"));
  }
  size_t next = 0;
  for (size_t i = 0; i < count; ++i) {
    if (e.modes[i] != Mode::Member) continue;
    for (;; ++next) {
      if (next == values.size()) {
        ctx.invalid(
            "membership_values holds fewer NaN-ended sets than there are BRANCH_MEMBER "
            "nodes");
      }
      if (std::isnan(values[next])) break;
      e.members[i].push_back(values[next]);
    }
    ++next;
  }
  if (next != values.size()) {
    ctx.invalid("membership_values holds more values than the BRANCH_MEMBER nodes' NaN-ended sets");
  }
  return e;
}

// The deepest tree walked: each level is one round of about ten nodes in the graph. Trees that
// gradient boosting and random forests grow are far shallower.
constexpr int64_t kMaxTreeDepth = 1024;

// The rounds a walk needs: the most interior nodes on a path from a root to a leaf. A node
// reached again on its own path is a cycle: I-INVALID-MODEL; a path deeper than kMaxTreeDepth is
// I-UNSUPPORTED (and bounds the recursion).
int64_t walk_rounds(LoweringContext& ctx, const Ensemble& e) {
  const auto too_deep = [&] {
    ctx.unsupported("a tree deeper than " + std::to_string(kMaxTreeDepth) +
                    " interior nodes; supported: trees up to that depth");
  };
  std::vector<int64_t> depth(static_cast<size_t>(e.nodes()), -1);  // -1 unknown, 0 on the path
  const auto visit = [&](auto& self, int64_t node, int64_t level) -> int64_t {
    int64_t& d = depth[static_cast<size_t>(node)];
    if (d == 0) ctx.invalid("the trees have a cycle through node " + std::to_string(node));
    if (d > 0) return d;
    if (level > kMaxTreeDepth) too_deep();
    d = 0;
    int64_t below = 0;
    const auto i = static_cast<size_t>(node);
    if (e.true_leafs[i] == 0) below = std::max(below, self(self, e.true_ids[i], level + 1));
    if (e.false_leafs[i] == 0) below = std::max(below, self(self, e.false_ids[i], level + 1));
    return d = below + 1;
  };
  int64_t rounds = 0;
  for (const int64_t root : e.roots) rounds = std::max(rounds, visit(visit, root, 1));
  if (rounds > kMaxTreeDepth) too_deep();  // a subtree first reached higher up, then lower
  return rounds;
}

// A 1-D constant of `dtype` over the walk's positions (node i at i, leaf j at M + j): a node's
// value, or `of_leaf` of the position for a leaf.
template <class OfLeaf>
ValueId position_table(LoweringContext& ctx, DType dtype, const Ensemble& e,
                       const std::vector<double>& per_node, OfLeaf of_leaf) {
  Tensor t(dtype, Shape{e.nodes() + e.leaves()});
  for (int64_t i = 0; i < e.nodes(); ++i) t.set_double(i, per_node[static_cast<size_t>(i)]);
  for (int64_t p = e.nodes(); p < t.numel(); ++p) t.set_double(p, of_leaf(p));
  return ctx.constant(std::move(t));
}

ValueId gather(LoweringContext& ctx, ValueId table, ValueId index) {
  return ctx.add(K::Gather, {table, index}, {{"axis", int64_t{0}}});
}

// The comparison of each mode but BRANCH_MEMBER; BRANCH_NEQ negates its Equal (so NaN is
// unequal, as in IEEE and ONNX's reference).
constexpr K kCompare[kModes - 1] = {K::LessOrEqual, K::Less,  K::GreaterOrEqual,
                                    K::Greater,     K::Equal, K::Equal};

// BRANCH_MEMBER: whether `value` [N, trees] is in the set of the node at `at`, a row of
// `members` [M + L, S] padded with NaN (which equals nothing).
ValueId member_test(LoweringContext& ctx, ValueId members, ValueId at, ValueId value) {
  const ValueId set = gather(ctx, members, at);
  const ValueId hits =
      ctx.add(K::Equal, {ctx.add(K::Unsqueeze, {value}, {{"axes", Ints{2}}}), set});
  const ValueId any = ctx.add(
      K::ReduceMax, {ctx.add(K::Cast, {hits}, {{"to", std::string(dtype_name(DType::F32))}})},
      {{"axes", Ints{2}}, {"keepdims", int64_t{0}}});
  return ctx.add(K::Greater, {any, scalar_constant(ctx, DType::F32, 0.0)});
}

// SOFTMAX_ZERO on scores [N, T], as ONNX's reference classifiers compute it: a softmax over the
// row's nonzero scores (|s| > 1e-7) against the row's max over all of them; a score within
// 1e-7 of zero becomes s e^-max (0 for a zero), and a row whose sum is 0 becomes 0.5 everywhere.
ValueId softmax_zero(LoweringContext& ctx, ValueId scores, DType dtype) {
  const auto constant = [&](double v) { return scalar_constant(ctx, dtype, v); };
  const Attributes per_row = {{"axes", Ints{1}}, {"keepdims", int64_t{1}}};
  const ValueId max = ctx.add(K::ReduceMax, {scores}, per_row);
  const ValueId nonzero = ctx.add(K::Or, {ctx.add(K::Greater, {scores, constant(1e-7)}),
                                          ctx.add(K::Less, {scores, constant(-1e-7)})});
  const ValueId exp_minus_max = ctx.add(K::Exp, {ctx.add(K::Neg, {max})});
  const ValueId e = ctx.add(K::Where, {nonzero, ctx.add(K::Exp, {ctx.add(K::Sub, {scores, max})}),
                                       ctx.add(K::Mul, {scores, exp_minus_max})});
  const ValueId sum = ctx.add(K::ReduceSum, {e}, per_row);
  return ctx.add(K::Where, {ctx.add(K::Equal, {sum, constant(0.0)}), constant(0.5),
                            ctx.add(K::Div, {e, sum})});
}

// PROBIT: sqrt(2) erfinv(2 s - 1) with Winitzki's approximation of erfinv (a = 0.147), the
// formula of ONNX's reference classifiers and of ONNX Runtime: with x = 2 s - 1 and
// l = ln((1 - x)(1 + x)), erfinv(x) = sign(x) sqrt(-v + sqrt(v^2 - l / a)), v = 2 / (pi a) + l / 2.
// A score of 0 or 1 gives -inf or +inf (l = -inf), as ONNX Runtime does; ONNX's reference
// returns 0 there. Outside [0, 1] the result is NaN.
ValueId probit(LoweringContext& ctx, ValueId scores, DType dtype) {
  constexpr double kA = 0.147;
  const auto constant = [&](double v) { return scalar_constant(ctx, dtype, v); };
  const ValueId x = ctx.add(K::Sub, {ctx.add(K::Mul, {scores, constant(2.0)}), constant(1.0)});
  const ValueId l = ctx.add(K::Log, {ctx.add(K::Mul, {ctx.add(K::Sub, {constant(1.0), x}),
                                                      ctx.add(K::Add, {constant(1.0), x})})});
  const ValueId v = ctx.add(
      K::Add, {constant(2.0 / (std::numbers::pi * kA)), ctx.add(K::Mul, {l, constant(0.5)})});
  const ValueId root = ctx.add(
      K::Sqrt, {ctx.add(K::Sub, {ctx.add(K::Mul, {v, v}), ctx.add(K::Div, {l, constant(kA)})})});
  const ValueId magnitude = ctx.add(K::Sqrt, {ctx.add(K::Sub, {root, v})});
  const ValueId sign =
      ctx.add(K::Where, {ctx.add(K::Less, {x, constant(0.0)}), constant(-1.0), constant(1.0)});
  return ctx.add(K::Mul, {ctx.add(K::Mul, {sign, magnitude}), constant(std::numbers::sqrt2)});
}

// post_transform (ONNX's numbering: 1 SOFTMAX, 2 LOGISTIC, 3 SOFTMAX_ZERO, 4 PROBIT) on the
// aggregated scores [N, T]. ONNX's reference TreeEnsemble ignores the attribute; these are the
// transforms of its reference classifiers. ONNX Runtime 1.32 applies LOGISTIC for 1 and SOFTMAX
// for 2, the reverse of the spec's numbering; Volta follows the spec.
ValueId post_transform(LoweringContext& ctx, int64_t transform, ValueId scores, DType dtype) {
  switch (transform) {
    case 1:
      return ctx.add(K::Softmax, {scores}, {{"axis", int64_t{-1}}});
    case 2:
      return ctx.add(K::Sigmoid, {scores});
    case 3:
      return softmax_zero(ctx, scores, dtype);
    case 4:
      return probit(ctx, scores, dtype);
    default:
      return scores;
  }
}

// TreeEnsemble: each sample walks every tree in lockstep. The walk's position is an index into
// the interior nodes (0..M-1) and then the leaves (M..M+L-1), where a leaf leads to itself; each
// round gathers the position's feature, split and children and takes the true child where the
// node's comparison holds (or, for NaN, where the node tracks missing values to true). After
// as many rounds as the deepest tree has interior nodes on a path, every walk is at a leaf; the
// leaves' weights are then aggregated per target, trees in order, and post-transformed.
void lower_tree_ensemble(LoweringContext& ctx) {
  const TypeInfo& x = ctx.input_type(0);
  if (x.dtype != DType::F32 && x.dtype != DType::F64 && x.dtype != DType::F16) {
    ctx.unsupported("X is " + std::string(dtype_name(x.dtype)) +
                    "; TreeEnsemble takes f32, f64 and f16");
  }
  if (x.shape.rank() != 2) {
    ctx.invalid("X has rank " + std::to_string(x.shape.rank()) + "; TreeEnsemble takes [N, F]");
  }
  const int64_t aggregate = ctx.attr_int("aggregate_function", 1);
  if (aggregate < 0 || aggregate > 3) {
    ctx.invalid("aggregate_function is " + std::to_string(aggregate) +
                "; it is 0 (AVERAGE), 1 (SUM), 2 (MIN) or 3 (MAX)");
  }
  const int64_t transform = ctx.attr_int("post_transform", 0);
  if (transform < 0 || transform > 4) {
    ctx.invalid("post_transform is " + std::to_string(transform) +
                "; it is 0 (NONE), 1 (SOFTMAX), 2 (LOGISTIC), 3 (SOFTMAX_ZERO) or 4 (PROBIT)");
  }
  const Ensemble e = read_ensemble(ctx, x.shape[1]);
  const int64_t rounds = walk_rounds(ctx, e);
  const DType dtype = x.dtype;
  const int64_t n = x.shape[0], trees = static_cast<int64_t>(e.roots.size());
  const auto m = static_cast<double>(e.nodes());

  // The tables: children (a leaf's are itself), features and splits (a leaf's are never
  // used), and per mode in use whether a node has it.
  std::vector<double> true_next, false_next, features;
  for (int64_t i = 0; i < e.nodes(); ++i) {
    const auto k = static_cast<size_t>(i);
    true_next.push_back(static_cast<double>(e.true_ids[k]) + (e.true_leafs[k] != 0 ? m : 0));
    false_next.push_back(static_cast<double>(e.false_ids[k]) + (e.false_leafs[k] != 0 ? m : 0));
    features.push_back(static_cast<double>(e.features[k]));
  }
  const auto itself = [](int64_t p) { return static_cast<double>(p); };
  const auto unused = [](int64_t) { return 0.0; };
  const ValueId true_step = position_table(ctx, DType::I64, e, true_next, itself);
  const ValueId false_step = position_table(ctx, DType::I64, e, false_next, itself);
  const ValueId feature_table = position_table(ctx, DType::I64, e, features, unused);
  const ValueId split_table = position_table(ctx, dtype, e, e.splits, unused);

  std::vector<bool> used(kModes, false);
  for (const Mode mode : e.modes) used[static_cast<size_t>(mode)] = true;
  const bool mixed = std::count(used.begin(), used.end(), true) > 1;
  const bool tracks = std::any_of(e.missing_tracks_true.begin(), e.missing_tracks_true.end(),
                                  [](int64_t v) { return v != 0; });
  std::vector<ValueId> mode_tables(kModes, kNoValue);
  for (int mode = 0; mode < kModes; ++mode) {
    if (!used[static_cast<size_t>(mode)] || !mixed) continue;
    std::vector<double> is_mode;
    for (const Mode node_mode : e.modes) is_mode.push_back(static_cast<int>(node_mode) == mode);
    mode_tables[static_cast<size_t>(mode)] = position_table(ctx, DType::Bool, e, is_mode, unused);
  }
  ValueId track_table = kNoValue;
  if (tracks) {
    std::vector<double> flags(e.missing_tracks_true.begin(), e.missing_tracks_true.end());
    track_table = position_table(ctx, DType::Bool, e, flags, unused);
  }
  ValueId member_table = kNoValue;  // [M + L, S]: each node's set, padded with NaN
  if (used[static_cast<size_t>(Mode::Member)]) {
    size_t widest = 1;
    for (const auto& set : e.members) widest = std::max(widest, set.size());
    Tensor t(dtype, Shape{e.nodes() + e.leaves(), static_cast<int64_t>(widest)});
    for (int64_t i = 0; i < t.numel(); ++i) t.set_double(i, std::nan(""));
    for (size_t i = 0; i < e.members.size(); ++i) {
      for (size_t s = 0; s < e.members[i].size(); ++s) {
        t.set_double(static_cast<int64_t>(i * widest + s), e.members[i][s]);
      }
    }
    member_table = ctx.constant(std::move(t));
  }

  // The walk: positions [N, trees], starting at the roots.
  Tensor roots(DType::I64, Shape{1, trees});
  for (int64_t t = 0; t < trees; ++t) roots.set_int(t, e.roots[static_cast<size_t>(t)]);
  ValueId at = ctx.add(K::Expand, {ctx.constant(std::move(roots))}, {{"shape", Ints{n, trees}}});
  for (int64_t round = 0; round < rounds; ++round) {
    const ValueId value = ctx.add(K::GatherElements, {ctx.input(0), gather(ctx, feature_table, at)},
                                  {{"axis", int64_t{1}}});
    const ValueId split = gather(ctx, split_table, at);
    ValueId holds = kNoValue;
    for (int mode = 0; mode < kModes; ++mode) {
      if (!used[static_cast<size_t>(mode)]) continue;
      ValueId test = static_cast<Mode>(mode) == Mode::Member
                         ? member_test(ctx, member_table, at, value)
                         : ctx.add(kCompare[mode], {value, split});
      if (static_cast<Mode>(mode) == Mode::Neq) test = ctx.add(K::Not, {test});
      if (mixed) {
        test = ctx.add(K::And, {gather(ctx, mode_tables[static_cast<size_t>(mode)], at), test});
      }
      holds = holds == kNoValue ? test : ctx.add(K::Or, {holds, test});
    }
    if (tracks) {
      holds = ctx.add(
          K::Or,
          {holds, ctx.add(K::And, {ctx.add(K::IsNaN, {value}), gather(ctx, track_table, at)})});
    }
    at = ctx.add(K::Where, {holds, gather(ctx, true_step, at), gather(ctx, false_step, at)});
  }

  // The leaves reached: their weights, and a mask [N, trees, targets] of the targets they feed.
  const ValueId leaf = ctx.add(K::Sub, {at, scalar_constant(ctx, DType::I64, m)});
  Tensor weights(dtype, Shape{e.leaves()});
  Tensor targets(DType::I64, Shape{e.leaves()});
  for (int64_t j = 0; j < e.leaves(); ++j) {
    weights.set_double(j, e.leaf_weights[static_cast<size_t>(j)]);
    targets.set_int(j, e.leaf_targets[static_cast<size_t>(j)]);
  }
  ValueId weight = gather(ctx, ctx.constant(std::move(weights)), leaf);
  const ValueId target = gather(ctx, ctx.constant(std::move(targets)), leaf);
  Tensor ids(DType::I64, Shape{e.targets});
  for (int64_t t = 0; t < e.targets; ++t) ids.set_int(t, t);
  const ValueId feeds = ctx.add(K::Equal, {ctx.add(K::Unsqueeze, {target}, {{"axes", Ints{2}}}),
                                           ctx.constant(std::move(ids))});
  // AVERAGE divides each weight by the tree count before the sum, as ONNX's reference does;
  // a target no tree feeds is 0 (SUM, AVERAGE), or the type's largest (MIN) or lowest (MAX).
  if (aggregate == 0) {
    weight = ctx.add(K::Div, {weight, scalar_constant(ctx, dtype, static_cast<double>(trees))});
  }
  double absent = 0;
  K reduce = K::ReduceSum;
  const double largest = dtype == DType::F64   ? std::numeric_limits<double>::max()
                         : dtype == DType::F32 ? std::numeric_limits<float>::max()
                                               : 65504.0;  // f16
  if (aggregate == 2) {
    absent = largest;
    reduce = K::ReduceMin;
  } else if (aggregate == 3) {
    absent = -largest;
    reduce = K::ReduceMax;
  }
  const ValueId spread =
      ctx.add(K::Where, {feeds, ctx.add(K::Unsqueeze, {weight}, {{"axes", Ints{2}}}),
                         scalar_constant(ctx, dtype, absent)});
  const ValueId scores = ctx.add(reduce, {spread}, {{"axes", Ints{1}}, {"keepdims", int64_t{0}}});
  ctx.set_output(0, post_transform(ctx, transform, scores, dtype));
}

}  // namespace

void register_indexing_ml_lowerings(LoweringTable& table) {
  table.add_ml_composite("ArrayFeatureExtractor", OpFamily::Indexing, 1,
                         &lower_array_feature_extractor);
  table.add_ml_composite("TreeEnsemble", OpFamily::Indexing, 5, &lower_tree_ensemble);
}

}  // namespace volta::onnx
