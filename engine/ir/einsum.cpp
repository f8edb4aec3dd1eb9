// Einsum's equation: how the shape function, the engine's kernel and the reference engine read
// it (volta/ir/einsum.h).

#include "volta/ir/einsum.h"

#include <algorithm>
#include <array>
#include <string>

#include "volta/ir/op_schema.h"

namespace volta {
namespace {

[[noreturn]] void shape_fail(const std::string& message) { throw ShapeError(message); }

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

int64_t einsum_extent(const std::vector<int>& labels, const EinsumEquation& eq) {
  int64_t n = 1;
  for (int l : labels) n *= eq.label_extent[static_cast<size_t>(l)];
  return n;
}

std::vector<int64_t> einsum_packed_strides(const std::vector<int>& labels,
                                           const EinsumEquation& eq) {
  std::vector<int64_t> strides(eq.label_extent.size(), 0);
  int64_t stride = 1;
  for (auto l = labels.rbegin(); l != labels.rend(); ++l) {
    strides[static_cast<size_t>(*l)] = stride;
    stride *= eq.label_extent[static_cast<size_t>(*l)];
  }
  return strides;
}

std::vector<int> joined_labels(std::vector<int> a, const std::vector<int>& b,
                               const std::vector<int>& c) {
  a.insert(a.end(), b.begin(), b.end());
  a.insert(a.end(), c.begin(), c.end());
  return a;
}

EinsumGemm einsum_gemm(const EinsumEquation& eq) {
  const auto has = [&](int operand, int label) {
    const std::vector<int>& axes = eq.operand_axes[static_cast<size_t>(operand)];
    return std::find(axes.begin(), axes.end(), label) != axes.end();
  };
  EinsumGemm e;
  for (int l : eq.output_labels) {
    if (has(0, l) && has(1, l)) {
      e.batch.push_back(l);
    } else {
      (has(0, l) ? e.m : e.n).push_back(l);
    }
  }
  e.batches = einsum_extent(e.batch, eq);
  e.rows = einsum_extent(e.m, eq);
  e.cols = einsum_extent(e.n, eq);
  e.depth = einsum_extent(eq.summed_labels, eq);
  e.product_is_output = joined_labels(e.batch, e.m, e.n) == eq.output_labels;
  return e;
}

}  // namespace volta
