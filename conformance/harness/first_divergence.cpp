#include "volta/conformance/first_divergence.h"

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <tuple>
#include <type_traits>

#include "volta/ir/dtype.h"

namespace volta::conformance {
namespace {

using Rows = std::vector<const NodeTraceRow*>;

bool before(const NodeTraceRow* x, const NodeTraceRow* y) {
  return std::tie(x->step, x->output) < std::tie(y->step, y->output);
}

Rows in_schedule_order(std::span<const NodeTraceRow> rows) {
  Rows out;
  out.reserve(rows.size());
  for (const NodeTraceRow& r : rows) out.push_back(&r);
  std::stable_sort(out.begin(), out.end(), before);
  return out;
}

std::string node_label(const NodeTraceRow& r) { return "node '" + r.node + "' (" + r.op + ")"; }

int64_t distinct_steps(const Rows& rows) {
  int64_t steps = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i == 0 || rows[i]->step != rows[i - 1]->step) ++steps;
  }
  return steps;
}

// "[2,3]" -> {2, 3}; nullopt when the text is not a shape.
std::optional<std::vector<int64_t>> parse_shape(std::string_view text) {
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') return std::nullopt;
  text = text.substr(1, text.size() - 2);
  std::vector<int64_t> dims;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view part = text.substr(0, comma);
    int64_t dim = 0;
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), dim);
    if (error != std::errc() || end != part.data() + part.size() || dim < 0) return std::nullopt;
    dims.push_back(dim);
    if (comma == std::string_view::npos) break;
    text = text.substr(comma + 1);
    if (text.empty()) return std::nullopt;  // a trailing comma
  }
  return dims;
}

std::optional<int64_t> element_count(const std::vector<int64_t>& dims) {
  int64_t count = 1;
  for (const int64_t d : dims) {
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / d) return std::nullopt;
    count *= d;
  }
  return count;
}

// The output's size in bytes from its dtype and shape, when both are known.
std::optional<int64_t> byte_size(const NodeTraceRow& r) {
  const std::optional<DType> dtype = parse_dtype(r.dtype);
  const std::optional<std::vector<int64_t>> dims = parse_shape(r.shape);
  if (!dtype || !dims) return std::nullopt;
  const std::optional<int64_t> count = element_count(*dims);
  if (!count) return std::nullopt;
  return *count * static_cast<int64_t>(dtype_size(*dtype));
}

// Row-major multi-index of `flat` in `shape`, "[1,2]"; empty when the shape does not hold
// `elements` elements.
std::string multi_index(int64_t flat, std::string_view shape, int64_t elements) {
  const std::optional<std::vector<int64_t>> dims = parse_shape(shape);
  if (!dims || element_count(*dims) != elements) return "";
  std::vector<int64_t> index(dims->size());
  for (size_t i = dims->size(); i-- > 0;) {
    index[i] = flat % (*dims)[i];
    flat /= (*dims)[i];
  }
  std::string out = "[";
  for (size_t i = 0; i < index.size(); ++i) {
    if (i > 0) out += ",";
    out += std::to_string(index[i]);
  }
  return out + "]";
}

template <class Bits>
Bits bits_at(std::span<const std::byte> data, size_t element) {
  Bits bits;
  std::memcpy(&bits, data.data() + element * sizeof(Bits), sizeof(Bits));
  return bits;
}

// "0.5 (0x3f000000)": the element's value as its dtype reads it, and its bits.
std::string element_text(DType dtype, std::span<const std::byte> data, size_t element) {
  return visit_dtype(dtype, [&]<class T>(TypeTag<T>) {
    uint64_t bits = 0;  // little-endian: the element's bytes are the low bytes
    std::memcpy(&bits, data.data() + element * sizeof(T), sizeof(T));
    char text[64];
    if constexpr (std::is_same_v<T, bool>) {
      std::snprintf(text, sizeof text, "%s", bits != 0 ? "true" : "false");
    } else if constexpr (std::is_integral_v<T>) {
      T value;
      std::memcpy(&value, &bits, sizeof value);
      if constexpr (std::is_signed_v<T>) {
        std::snprintf(text, sizeof text, "%" PRId64, static_cast<int64_t>(value));
      } else {
        std::snprintf(text, sizeof text, "%" PRIu64, static_cast<uint64_t>(value));
      }
    } else {
      double value = 0;
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        T raw;
        std::memcpy(&raw, &bits, sizeof raw);
        value = raw;
      } else {
        value = T::from_bits(static_cast<uint16_t>(bits)).to_float();
      }
      // The digits that identify a value of the type: 5 for f16, 4 for bf16, 9, 17.
      const int digits = dtype == DType::F16    ? 5
                         : dtype == DType::BF16 ? 4
                         : dtype == DType::F32  ? 9
                                                : 17;
      std::snprintf(text, sizeof text, "%.*g", digits, value);
    }
    char hex[24];
    std::snprintf(hex, sizeof hex, "0x%0*" PRIx64, static_cast<int>(2 * sizeof(T)), bits);
    return std::string(text) + " (" + hex + ")";
  });
}

std::string hash_only(const NodeTraceRow& r) {
  const std::string cap = "the " + std::to_string(kTraceDataCap) + "-byte trace cap";
  if (const std::optional<int64_t> bytes = byte_size(r)) {
    return std::to_string(*bytes) + " bytes, above " + cap;
  }
  return "above " + cap;
}

std::string first_element(const NodeTraceRow& a, const NodeTraceRow& b) {
  if (!a.data && !b.data) return "outputs are traced by hash only: " + hash_only(a);
  if (!a.data || !b.data) {
    const bool in_a = !a.data;
    return std::string("run ") + (in_a ? "A" : "B") + " traced this output by hash only (" +
           hash_only(in_a ? a : b) + "); run " + (in_a ? "B" : "A") + " kept its bytes";
  }
  if (a.dtype != b.dtype) return "dtypes differ: " + a.dtype + " vs " + b.dtype;
  if (a.shape != b.shape) return "shapes differ: " + a.shape + " vs " + b.shape;
  if (a.data->size() != b.data->size()) {
    return "sizes differ: " + std::to_string(a.data->size()) + " vs " +
           std::to_string(b.data->size()) + " bytes";
  }
  const std::span<const std::byte> x(*a.data), y(*b.data);
  const std::optional<DType> dtype = parse_dtype(a.dtype);
  if (!dtype) {
    const auto [at, unused] = std::mismatch(x.begin(), x.end(), y.begin());
    return "dtype '" + a.dtype + "' cannot be decoded (supported: " + kAllTypes.str() +
           "); first differing byte at offset " + std::to_string(at - x.begin());
  }
  const size_t width = dtype_size(*dtype);
  if (x.size() % width != 0) {
    return std::to_string(x.size()) + " bytes are not a whole number of " + a.dtype + " elements";
  }
  const size_t elements = x.size() / width;
  for (size_t e = 0; e < elements; ++e) {
    if (std::memcmp(x.data() + e * width, y.data() + e * width, width) == 0) continue;
    std::string out = "element " + std::to_string(e);
    if (const std::string index =
            multi_index(static_cast<int64_t>(e), a.shape, static_cast<int64_t>(elements));
        !index.empty()) {
      out += " " + index;
    }
    return out + ": " + element_text(*dtype, x, e) + " vs " + element_text(*dtype, y, e);
  }
  return "the traced bytes are identical; only the hashes differ";
}

// A row one run has at a position where the other has nothing that matches it.
Divergence only_in_one(const NodeTraceRow& present, bool in_a, const Rows& other, size_t other_at,
                       int64_t steps_a, int64_t steps_b) {
  Divergence d;
  d.subject = present.subject;
  NodeTraceRow missing;
  missing.subject = present.subject;
  missing.step = present.step;
  d.a = in_a ? present : missing;
  d.b = in_a ? missing : present;
  const std::string here = in_a ? "A" : "B";
  const std::string there = in_a ? "B" : "A";
  const int step = present.step;
  const bool other_has_step = (other_at < other.size() && other[other_at]->step == step) ||
                              (other_at > 0 && other[other_at - 1]->step == step);
  std::string why;
  if (other_has_step) {
    why = node_label(present) + " traces output " + std::to_string(present.output) + " in run " +
          here + " only";
  } else if (other_at >= other.size()) {
    why = "run A traced " + std::to_string(steps_a) + " steps, run B " + std::to_string(steps_b) +
          "; run " + here + "'s step " + std::to_string(step) + " is " + node_label(present);
  } else {
    why = "run " + here + " has " + node_label(present) + ", run " + there + " has no step " +
          std::to_string(step);
  }
  d.plan_difference = "plans differ at step " + std::to_string(step) + ": " + why;
  return d;
}

struct Walk {
  std::optional<Divergence> divergence;
  int64_t compared = 0;  // output hashes compared, up to the divergence
};

// Walks both schedules in step order; the first position where they disagree, in plan or in
// bits, is the divergence.
Walk walk(const Rows& a, const Rows& b) {
  Walk w;
  const int64_t steps_a = distinct_steps(a), steps_b = distinct_steps(b);
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j >= b.size() || (i < a.size() && before(a[i], b[j]))) {
      w.divergence = only_in_one(*a[i], true, b, j, steps_a, steps_b);
      return w;
    }
    if (i >= a.size() || before(b[j], a[i])) {
      w.divergence = only_in_one(*b[j], false, a, i, steps_a, steps_b);
      return w;
    }
    const NodeTraceRow& x = *a[i++];
    const NodeTraceRow& y = *b[j++];
    if (x.node != y.node || x.op != y.op) {
      w.divergence = Divergence{x.subject, x, y,
                                "plans differ at step " + std::to_string(x.step) + ": " +
                                    node_label(x) + " vs " + node_label(y),
                                ""};
      return w;
    }
    ++w.compared;
    if (x.hash != y.hash) {
      w.divergence = Divergence{x.subject, x, y, "", first_element(x, y)};
      return w;
    }
  }
  return w;
}

std::string kernel_text(const NodeTraceRow& r) {
  return r.kernel + (r.determinism.empty() ? "" : " (" + r.determinism + ")");
}

std::string origin_text(const NodeTraceRow& r) {
  return r.origin.empty() ? "the frontend that built the graph" : r.origin;
}

// One run's row of a plan difference.
std::string plan_row(std::string_view run, const NodeTraceRow& r) {
  std::string out = "  run " + std::string(run) + ": ";
  if (r.node.empty() && r.op.empty()) return out + "no such step or output\n";
  return out + node_label(r) + ", output " + std::to_string(r.output) + ", kernel " +
         kernel_text(r) + ", produced by: " + origin_text(r) + "\n";
}

std::map<std::string_view, Rows> by_subject(std::span<const NodeTraceRow> rows) {
  std::map<std::string_view, Rows> out;
  for (const NodeTraceRow& r : rows) out[r.subject].push_back(&r);
  for (auto& [subject, subject_rows] : out) {
    std::stable_sort(subject_rows.begin(), subject_rows.end(), before);
  }
  return out;
}

}  // namespace

std::optional<Divergence> first_divergence(std::span<const NodeTraceRow> a,
                                           std::span<const NodeTraceRow> b) {
  return walk(in_schedule_order(a), in_schedule_order(b)).divergence;
}

std::string describe(const Divergence& d) {
  std::string out = "subject " + d.subject + ": ";
  if (!d.plan_difference.empty()) {
    out += d.plan_difference + "\n";
    out +=
        "  the runs executed different plans: compare their plan hashes (plan-stability) "
        "before their outputs\n";
    return out + plan_row("A", d.a) + plan_row("B", d.b);
  }
  out += "first divergence at step " + std::to_string(d.a.step) + ": " + node_label(d.a) + "\n";
  if (d.a.kernel == d.b.kernel && d.a.determinism == d.b.determinism) {
    out += "  kernel: " + kernel_text(d.a) + " in both runs\n";
  } else {
    out += "  kernel: run A " + kernel_text(d.a) + ", run B " + kernel_text(d.b) + "\n";
  }
  out += "  produced by: " + origin_text(d.a) + "\n";
  out += "  output " + std::to_string(d.a.output) + ": " + d.a.dtype + " " + d.a.shape + "\n";
  out += "  hash: run A " + d.a.hash + ", run B " + d.b.hash + "\n";
  return out + "  first element: " + d.first_element + "\n";
}

TraceDiff diff_traces(std::span<const NodeTraceRow> a, std::span<const NodeTraceRow> b) {
  const std::map<std::string_view, Rows> in_a = by_subject(a);
  const std::map<std::string_view, Rows> in_b = by_subject(b);
  TraceDiff diff;
  for (const auto& [subject, rows_a] : in_a) {
    const auto found = in_b.find(subject);
    if (found == in_b.end()) {
      diff.only_in_a.emplace_back(subject);
      continue;
    }
    ++diff.subjects;
    Walk w = walk(rows_a, found->second);
    diff.outputs += w.compared;
    if (w.divergence) diff.divergences.push_back(std::move(*w.divergence));
  }
  for (const auto& [subject, rows_b] : in_b) {
    if (!in_a.contains(subject)) diff.only_in_b.emplace_back(subject);
  }
  return diff;
}

}  // namespace volta::conformance
