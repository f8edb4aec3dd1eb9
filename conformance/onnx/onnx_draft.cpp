#include "volta/conformance/onnx_draft.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>

#include "volta/conformance/onnx_coverage.h"
#include "volta/conformance/onnx_suite.h"
#include "volta/error.h"

namespace volta::conformance {
namespace {

struct Topic {
  std::string_view name;
  std::initializer_list<std::string_view> ops;
};

// Unsupported by design, by the ops a test's model uses (checked in this order).
const std::array<Topic, 8> kByDesign = {{
    {"training preview ops (ai.onnx.preview.training)",
     {"Adagrad", "Adam", "Momentum", "Gradient"}},
    {"strings",
     {"StringNormalizer", "TfIdfVectorizer", "RegexFullMatch", "StringConcat", "StringSplit"}},
    {"sequences",
     {"SequenceAt", "SequenceConstruct", "SequenceEmpty", "SequenceErase", "SequenceInsert",
      "SequenceLength", "SequenceMap", "SplitToSequence", "ConcatFromSequence"}},
    {"optional", {"Optional", "OptionalHasElement", "OptionalGetElement"}},
    {"control flow", {"Loop", "If", "Scan"}},
    {"random ops",
     {"Bernoulli", "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
      "Multinomial"}},
    {"quantization",
     {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "QLinearConv", "QLinearMatMul",
      "ConvInteger", "MatMulInteger"}},
    {"image decoding", {"ImageDecoder"}},
}};

// Element types Volta does not have yet (tracked in #4 and #19), as ONNX spells them.
constexpr std::array<std::string_view, 21> kOtherDtypes = {
    "UINT8",          "INT8",       "INT16",     "UINT16",       "UINT32",         "UINT64",
    "FLOAT16",        "BFLOAT16",   "COMPLEX",   "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
    "FLOAT8E5M2FNUZ", "FLOAT8E8M0", "UINT4",     "INT4",         "UINT2",          "INT2",
    "FLOAT4E2M1",     "FLOAT6E2M3", "FLOAT6E3M2"};

bool contains(std::string_view text, std::string_view word) {
  return text.find(word) != std::string_view::npos;
}

// A word of the diagnostic in upper case ("INT8" is not in "UINT8").
bool names_type(std::string_view message, std::string_view type) {
  for (size_t at = message.find(type); at != std::string_view::npos;
       at = message.find(type, at + 1)) {
    const bool left = at == 0 || !std::isalnum(static_cast<unsigned char>(message[at - 1]));
    const size_t end = at + type.size();
    const bool right =
        end == message.size() || !std::isalnum(static_cast<unsigned char>(message[end]));
    if (left && right) return true;
  }
  return false;
}

std::vector<std::string> ops_of(const std::string& params) {
  std::vector<std::string> ops;
  const size_t at = params.find("ops=");
  if (at == std::string::npos) return ops;
  std::string_view list = std::string_view(params).substr(at + 4);
  while (!list.empty()) {
    const size_t comma = std::min(list.find(','), list.size());
    ops.emplace_back(list.substr(0, comma));
    list.remove_prefix(std::min(comma + 1, list.size()));
  }
  return ops;
}

std::string one_line(std::string_view text) {
  constexpr size_t kMax = 300;
  std::string out;
  for (char c : text) out += (c == '\t' || c == '\n' || c == '\r') ? ' ' : c;
  if (out.size() > kMax) out = out.substr(0, kMax - 3) + "...";
  return out;
}

std::string add_days(std::string_view today, int days) {
  using namespace std::chrono;
  const int y = std::stoi(std::string(today.substr(0, 4)));
  const unsigned m = static_cast<unsigned>(std::stoi(std::string(today.substr(5, 2))));
  const unsigned d = static_cast<unsigned>(std::stoi(std::string(today.substr(8, 2))));
  const year_month_day date{sys_days{year{y} / month{m} / day{d}} + std::chrono::days{days}};
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", static_cast<int>(date.year()),
                static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()));
  return buf;
}

int lifetime_days(OnnxCategory c) {
  switch (c) {
    case OnnxCategory::UnsupportedByDesign:
      return 365;
    case OnnxCategory::NotYetImplemented:
      return 180;
    case OnnxCategory::Failing:
      return 90;
  }
  return 90;
}

struct Result {
  Outcome outcome;
  std::string message;
};

struct Line {
  std::string test, backend;
  Outcome outcome;
  OnnxCategory category;
  std::string reason, issue, expires;
};

std::string format_line(const Line& l) {
  return l.test + "\t" + l.backend + "\t" + std::string(outcome_name(l.outcome)) + "\t" +
         std::string(onnx_category_name(l.category)) + "\t" + l.reason + "\t" + l.issue + "\t" +
         l.expires + "\n";
}

bool is_bug(Outcome o) {
  return o == Outcome::Error || o == Outcome::Crash || o == Outcome::Timeout;
}

}  // namespace

OnnxClassification classify_onnx_failure(std::string_view test_id, std::span<const std::string> ops,
                                         Outcome outcome, std::string_view message) {
  if (outcome != Outcome::Unsupported) return {OnnxCategory::Failing, ""};
  for (const Topic& topic : kByDesign) {
    for (const std::string& op : ops) {
      if (std::find(topic.ops.begin(), topic.ops.end(), op) != topic.ops.end()) {
        return {OnnxCategory::UnsupportedByDesign, std::string(topic.name)};
      }
    }
  }
  if (names_type(message, "STRING")) return {OnnxCategory::UnsupportedByDesign, "strings"};
  if (contains(message, "seq(")) return {OnnxCategory::UnsupportedByDesign, "sequences"};
  if (contains(message, "optional(")) return {OnnxCategory::UnsupportedByDesign, "optional"};
  if (contains(message, "ai.onnx.preview.training")) {
    return {OnnxCategory::UnsupportedByDesign, "training preview ops (ai.onnx.preview.training)"};
  }
  // Dropout in training mode draws a random mask.
  if (contains(test_id, "training_dropout")) {
    return {OnnxCategory::UnsupportedByDesign, "random ops"};
  }
  for (std::string_view type : kOtherDtypes) {
    if (names_type(message, type)) return {OnnxCategory::NotYetImplemented, "dtype"};
  }
  return {OnnxCategory::NotYetImplemented, "op"};
}

std::string newest_onnx_commit(const Database& db, std::string_view suite) {
  Statement q = db.prepare(
      "SELECT run.commit_sha FROM run WHERE run.status = 'complete' AND EXISTS (SELECT 1 FROM "
      "result r JOIN test_case c ON c.id = r.case_ref WHERE r.run_id = run.id AND c.suite = "
      ":suite) ORDER BY run.started_at DESC, run.id DESC LIMIT 1");
  q.bind(q.parameter_index(":suite"), suite);
  return q.step() ? q.column_text(0) : "";
}

OnnxDraft draft_onnx_expectations(const Database& db, std::string_view commit,
                                  std::span<const OnnxExpectation> existing, std::string_view today,
                                  const OnnxCorpus& corpus) {
  const std::string suite(corpus.suite);
  const int64_t floor = corpus.floor;
  // Every complete run: a draft reads outcomes, which no expectation decides.
  Statement q = db.prepare(
      "WITH complete_run AS (SELECT * FROM run WHERE commit_sha = :commit "
      "AND status = 'complete')," +
      onnx_evidence_ctes("complete_run", suite) +
      " SELECT case_id, params, backend, outcome, message FROM onnx_evidence"
      " WHERE outcome <> 'MISSING' ORDER BY case_id, backend");
  q.bind(q.parameter_index(":commit"), commit);
  std::map<std::string, std::map<std::string, Result>> by_test;  // test -> backend -> result
  std::map<std::string, std::string> params;
  std::map<std::string, int64_t> tests_per_backend;
  while (q.step()) {
    const std::string test = q.column_text(0), backend = q.column_text(2);
    params[test] = q.column_text(1);
    by_test[test][backend] = {*parse_outcome(q.column_text(3)), q.column_text(4)};
    ++tests_per_backend[backend];
  }
  for (std::string_view backend : kOnnxBackends) {
    const int64_t n = tests_per_backend[std::string(backend)];
    if (n < floor) {
      std::string why = "commit " + std::string(commit.substr(0, 12)) + " has " + suite;
      why += " results for " + std::to_string(n) + " tests on backend " + std::string(backend);
      why += ", fewer than the corpus floor of " + std::to_string(floor);
      why += ": draft from a full run (`volta-audit run " + suite + "`), or lines would be lost";
      fail(ErrorCode::InvalidArgument, why);
    }
  }

  OnnxDraft draft;
  std::vector<bool> used(existing.size(), false);
  auto kept_fields = [&](const std::string& test, const std::string& backend,
                         Outcome outcome) -> const OnnxExpectation* {
    for (size_t i = 0; i < existing.size(); ++i) {
      const OnnxExpectation& e = existing[i];
      if (e.pattern == test && e.outcome == outcome &&
          (e.backend == backend || e.backend == "*" || backend == "*")) {
        used[i] = true;
        return &e;
      }
    }
    return nullptr;
  };

  std::vector<Line> lines;
  std::string bugs;
  for (const auto& [test, results] : by_test) {
    std::vector<std::pair<std::string, Result>> open;  // backend -> an expectable non-pass
    for (const auto& [backend, r] : results) {
      if (is_bug(r.outcome)) {
        bugs.append("# ").append(outcome_name(r.outcome)).append("\t").append(backend);
        bugs.append("\t").append(test).append("\t").append(one_line(r.message)).append("\n");
        ++draft.bugs;
      } else if (r.outcome != Outcome::Pass && r.outcome != Outcome::Skipped) {
        open.emplace_back(backend, r);
      }
    }
    // The same outcome on every backend: one line for all.
    if (open.size() == kOnnxBackends.size() &&
        std::all_of(open.begin(), open.end(), [&](const auto& o) {
          return o.second.outcome == open.front().second.outcome;
        })) {
      open.resize(1);
      open.front().first = "*";
    }
    const std::vector<std::string> ops = ops_of(params[test]);
    for (const auto& [backend, r] : open) {
      Line line{test, backend, r.outcome, OnnxCategory::Failing, "", std::string(corpus.issue), ""};
      if (const OnnxExpectation* e = kept_fields(test, backend, r.outcome)) {
        line.category = e->category;
        line.reason = e->reason;
        line.issue = e->issue;
        line.expires = e->expires;
        ++draft.kept;
      } else {
        const OnnxClassification c = classify_onnx_failure(test, ops, r.outcome, r.message);
        line.category = c.category;
        line.reason = one_line((c.topic.empty() ? "" : c.topic + ": ") + r.message);
        line.expires = add_days(today, lifetime_days(c.category));
      }
      lines.push_back(std::move(line));
    }
  }
  for (size_t i = 0; i < existing.size(); ++i) {
    if (used[i]) continue;
    const OnnxExpectation& e = existing[i];
    draft.dropped.push_back(
        "line " + std::to_string(e.line) + " (" + e.pattern + ", " + e.backend + ", " +
        std::string(outcome_name(e.outcome)) + "): " +
        (e.pattern.find('*') != std::string::npos
             ? "wildcard lines are not carried over; the tests it covered are listed one by one"
             : "the test no longer has that outcome"));
  }

  draft.text =
      "# Expectations of the " + suite + " suite:\n# " + std::string(corpus.title) +
      ".\n"
      "# Every ONNX backend test that is not expected to pass on a backend. A test without a\n"
      "# line must pass; a listed test that passes is an unexpected pass and fails the\n# " +
      suite +
      "-conformance gate, as does a line past its expiry.\n"
      "# Columns (tab-separated): test pattern ('*' wildcard), backend (cpu, reference or *),\n"
      "# outcome (UNSUPPORTED, FAIL_NUMERIC, FAIL_SHAPE, FAIL_DTYPE), category\n"
      "# (unsupported-by-design, not-yet-implemented, failing), reason, issue, expires.\n"
      "# Regenerate with scripts/onnx_expectations.sh --suite " +
      suite +
      "\n# (conformance/onnx/README.md): it keeps the category, reason, issue and expiry of\n"
      "# every line whose outcome still holds.\n";
  for (OnnxCategory category : {OnnxCategory::UnsupportedByDesign, OnnxCategory::NotYetImplemented,
                                OnnxCategory::Failing}) {
    std::string block;
    int64_t n = 0;
    for (const Line& line : lines) {
      if (line.category != category) continue;
      block += format_line(line);
      ++n;
    }
    draft.text += "\n# " + std::string(onnx_category_name(category)) + ": " + std::to_string(n) +
                  " line(s)\n" + block;
    draft.lines += n;
  }
  if (!bugs.empty()) {
    draft.text +=
        "\n# Bugs, not expectations: ERROR, CRASH and TIMEOUT always fail the gate. Fix these.\n" +
        bugs;
  }
  return draft;
}

}  // namespace volta::conformance
