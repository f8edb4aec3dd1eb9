#include "volta/conformance/numerics_policy.h"

#include <charconv>
#include <fstream>
#include <sstream>

#include "tolerances_tsv.h"
#include "volta/error.h"
#include "volta/ir/op_schema.h"

namespace volta::conformance {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

bool consume(std::string_view& s, std::string_view prefix) {
  if (!s.starts_with(prefix)) return false;
  s.remove_prefix(prefix.size());
  return true;
}

// A whole decimal number ("1e4", "-1e30", "89", "0.5"), nothing after it.
std::optional<double> parse_decimal(std::string_view s) {
  if (s.empty() || s.starts_with('+')) return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

constexpr std::string_view kValues =
    "NaN, +Inf, -Inf, +0, -0, subnormal, the largest finite value, the lowest finite value, "
    "true, false or a decimal number";

std::optional<Value> parse_value(std::string_view s) {
  struct Named {
    std::string_view text;
    ValueClass cls;
  };
  static constexpr Named kNamed[] = {{"NaN", ValueClass::NaN},
                                     {"+Inf", ValueClass::PosInf},
                                     {"-Inf", ValueClass::NegInf},
                                     {"+0", ValueClass::PosZero},
                                     {"-0", ValueClass::NegZero},
                                     {"subnormal", ValueClass::Subnormal},
                                     {"the largest finite value", ValueClass::Largest},
                                     {"the lowest finite value", ValueClass::Lowest},
                                     {"true", ValueClass::True},
                                     {"false", ValueClass::False}};
  for (const Named& n : kNamed) {
    if (s == n.text) return Value{n.cls, 0, std::string(s)};
  }
  if (const std::optional<double> d = parse_decimal(s)) {
    return Value{ValueClass::Number, *d, std::string(s)};
  }
  return std::nullopt;
}

std::optional<Clause> parse_clause(std::string_view s, std::string& error) {
  struct Lead {
    std::string_view text;
    Subject subject;
  };
  static constexpr Lead kLeads[] = {{"x is ", Subject::X},
                                    {"y is ", Subject::Y},
                                    {"z is ", Subject::Z},
                                    {"an element of the row is ", Subject::RowElem},
                                    {"every element of x is ", Subject::AllX}};
  for (const Lead& lead : kLeads) {
    std::string_view rest = s;
    if (!consume(rest, lead.text)) continue;
    if (std::optional<Value> v = parse_value(rest)) return Clause{lead.subject, *v};
    error = "value '" + std::string(rest) + "' after '" + std::string(lead.text) + "' (expected " +
            std::string(kValues) + ")";
    return std::nullopt;
  }
  error = "condition '" + std::string(s) +
          "' (expected 'x is V', 'y is V', 'z is V', 'an element of the row is V' or "
          "'every element of x is V')";
  return std::nullopt;
}

std::optional<RuleResult> parse_result(std::string_view s, std::string& error) {
  RuleResult r;
  r.text = std::string(s);
  std::string_view rest = s;
  if (s == "x") {
    r.kind = ResultKind::SameAsX;
  } else if (s == "finite") {
    r.kind = ResultKind::Finite;
  } else if (s == "an error") {
    r.kind = ResultKind::Error;
  } else if (consume(rest, "the index of the first ")) {
    const std::optional<Value> v = parse_value(rest);
    if (!v) {
      error = "value '" + std::string(rest) + "' after 'the index of the first' (expected " +
              std::string(kValues) + ")";
      return std::nullopt;
    }
    r.kind = ResultKind::IndexOfFirst;
    r.value = *v;
  } else if (const std::optional<Value> v = parse_value(s)) {
    r.kind = ResultKind::Value;
    r.value = *v;
  } else {
    error = "result '" + std::string(s) + "' (expected " + std::string(kValues) +
            ", x, finite, an error or 'the index of the first V')";
    return std::nullopt;
  }
  return r;
}

// Splits on ", " outside parentheses and brackets.
std::vector<std::string_view> split_top(std::string_view s) {
  std::vector<std::string_view> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(' || s[i] == '[') ++depth;
    if (s[i] == ')' || s[i] == ']') --depth;
    if (s[i] == ',' && depth == 0) {
      parts.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  parts.push_back(trim(s.substr(start)));
  return parts;
}

// An attribute value converted to the type the op schema declares for it.
std::optional<AttrValue> parse_attr(const AttrSpec& spec, std::string_view text) {
  const auto number = [](std::string_view t) { return parse_decimal(trim(t)); };
  const auto list = [&](std::string_view t) -> std::optional<std::vector<double>> {
    if (!consume(t, "[") || !t.ends_with(']')) return std::nullopt;
    t.remove_suffix(1);
    std::vector<double> out;
    if (trim(t).empty()) return out;
    for (std::string_view part : split_top(t)) {
      const std::optional<double> v = number(part);
      if (!v) return std::nullopt;
      out.push_back(*v);
    }
    return out;
  };
  switch (spec.type) {
    case AttrType::Int:
      if (const auto v = number(text); v && *v == static_cast<double>(static_cast<int64_t>(*v))) {
        return AttrValue(static_cast<int64_t>(*v));
      }
      return std::nullopt;
    case AttrType::Float:
      if (const auto v = number(text)) return AttrValue(*v);
      return std::nullopt;
    case AttrType::String:
      return AttrValue(std::string(text));
    case AttrType::Ints:
      if (const auto v = list(text)) {
        std::vector<int64_t> ints;
        for (double d : *v) ints.push_back(static_cast<int64_t>(d));
        return AttrValue(ints);
      }
      return std::nullopt;
    case AttrType::Floats:
      if (const auto v = list(text)) return AttrValue(*v);
      return std::nullopt;
    case AttrType::Tensor:
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<RuleOp> parse_op_ref(std::string_view text, std::string& error) {
  RuleOp ref;
  if (const size_t open = text.rfind('['); text.ends_with(']') && open != std::string_view::npos) {
    for (std::string_view d : split_top(text.substr(open + 1, text.size() - open - 2))) {
      const std::optional<DType> dtype = parse_dtype(d);
      if (!dtype) {
        error = "dtype '" + std::string(d) + "' in '" + std::string(text) + "' (expected one of " +
                kAllTypes.str() + ")";
        return std::nullopt;
      }
      ref.dtypes.push_back(*dtype);
    }
    text = trim(text.substr(0, open));
  }
  ref.text = std::string(text);  // without the dtype suffix: the cell id names the dtype
  std::string_view name = text;
  std::string_view args;
  if (const size_t open = text.find('('); open != std::string_view::npos) {
    if (!text.ends_with(')')) {
      error = "op '" + std::string(text) + "' (expected Op or Op(attr=value, ...))";
      return std::nullopt;
    }
    name = text.substr(0, open);
    args = text.substr(open + 1, text.size() - open - 2);
  }
  const std::optional<OpKind> op = parse_op(name);
  if (!op) {
    error = "op '" + std::string(name) + "' is not in the op table";
    return std::nullopt;
  }
  ref.op = *op;
  if (args.empty()) return ref;
  for (std::string_view arg : split_top(args)) {
    const size_t eq = arg.find('=');
    const std::string_view attr = trim(arg.substr(0, eq));
    const AttrSpec* spec = op_schema(*op).find_attr(attr);
    if (eq == std::string_view::npos || spec == nullptr) {
      error = "attribute '" + std::string(arg) + "' of " + std::string(name) +
              " (expected attr=value with an attribute of the op's schema)";
      return std::nullopt;
    }
    const std::optional<AttrValue> v = parse_attr(*spec, trim(arg.substr(eq + 1)));
    if (!v) {
      error = "value of " + std::string(name) + " attribute '" + std::string(attr) +
              "' (expected a " + std::string(attr_type_name(spec->type)) + ")";
      return std::nullopt;
    }
    ref.attrs[std::string(attr)] = *v;
  }
  return ref;
}

}  // namespace

std::string PolicyError::str() const {
  return line == 0 ? message : "line " + std::to_string(line) + ": " + message;
}

std::string_view tolerances_tsv() { return kTolerancesTsv; }

std::string_view subject_text(Subject s) {
  switch (s) {
    case Subject::X:
      return "x";
    case Subject::Y:
      return "y";
    case Subject::Z:
      return "z";
    case Subject::RowElem:
      return "an element of the row";
    case Subject::AllX:
      return "every element of x";
  }
  return "x";
}

ParsedLine parse_rule_line(std::string_view line) {
  constexpr std::string_view kShape = "expected - `Op1, Op2`: If CONDITION, the result is RESULT.";
  ParsedLine out;
  std::string_view s = trim(line);
  if (!consume(s, "- `")) {
    out.error = std::string(kShape);
    return out;
  }
  const size_t close = s.find("`: ");
  if (close == std::string_view::npos) {
    out.error = "no closing \"`: \" after the op list (" + std::string(kShape) + ")";
    return out;
  }
  Rule rule;
  for (std::string_view op_text : split_top(s.substr(0, close))) {
    std::optional<RuleOp> op = parse_op_ref(op_text, out.error);
    if (!op) return out;
    rule.ops.push_back(std::move(*op));
  }
  std::string_view sentence = s.substr(close + 3);
  rule.sentence = std::string(sentence);
  const size_t comma = sentence.find(", the result is ");
  if (!consume(sentence, "If ") || comma == std::string_view::npos || !sentence.ends_with('.')) {
    out.error = "sentence '" + rule.sentence + "' (" + std::string(kShape) + ")";
    return out;
  }
  std::string_view condition = sentence.substr(0, comma - 3);
  std::string_view result = sentence.substr(comma - 3 + 16);
  result.remove_suffix(1);
  const size_t and_at = condition.find(" and ");
  std::vector<std::string_view> clauses = {condition.substr(0, and_at)};
  if (and_at != std::string_view::npos) clauses.push_back(condition.substr(and_at + 5));
  for (std::string_view c : clauses) {
    std::optional<Clause> clause = parse_clause(c, out.error);
    if (!clause) return out;
    rule.clauses.push_back(std::move(*clause));
  }
  const bool row = rule.clauses.front().subject == Subject::RowElem;
  const bool all = rule.clauses.front().subject == Subject::AllX;
  if ((row || all) && rule.clauses.size() != 1) {
    out.error =
        "'" + std::string(subject_text(rule.clauses.front().subject)) + "' takes no second clause";
    return out;
  }
  std::optional<RuleResult> r = parse_result(result, out.error);
  if (!r) return out;
  if (r->kind == ResultKind::IndexOfFirst && !row) {
    out.error = "'the index of the first V' needs the condition 'an element of the row is V'";
    return out;
  }
  if (r->kind == ResultKind::SameAsX && (row || all)) {
    out.error = "the result 'x' needs an elementwise condition ('x is V')";
    return out;
  }
  rule.result = std::move(*r);
  out.rule = std::move(rule);
  return out;
}

Policy parse_policy(std::string_view doc) {
  Policy policy;
  bool inside = false;
  bool seen_begin = false;
  bool seen_end = false;
  int number = 0;
  size_t start = 0;
  while (start <= doc.size()) {
    size_t end = doc.find('\n', start);
    if (end == std::string_view::npos) end = doc.size();
    const std::string_view line = trim(doc.substr(start, end - start));
    start = end + 1;
    ++number;
    if (line == kRulesBegin) {
      inside = seen_begin = true;
      continue;
    }
    if (line == kRulesEnd) {
      inside = false;
      seen_end = true;
      continue;
    }
    if (!inside || !line.starts_with("- `")) continue;
    ParsedLine parsed = parse_rule_line(line);
    if (!parsed.rule) {
      policy.errors.push_back({number, "cannot parse " + parsed.error});
      continue;
    }
    parsed.rule->line = number;
    policy.rules.push_back(std::move(*parsed.rule));
  }
  if (!seen_begin || !seen_end) {
    policy.errors.push_back({0, "the rules markers " + std::string(kRulesBegin) + " and " +
                                    std::string(kRulesEnd) + " are missing"});
  }
  return policy;
}

std::vector<OpKind> ops_without_rule(const Policy& policy) {
  std::vector<bool> covered(kOpCount, false);
  for (const Rule& rule : policy.rules) {
    for (const RuleOp& op : rule.ops) covered[static_cast<size_t>(op_index(op.op))] = true;
  }
  std::vector<OpKind> missing;
  for (int i = 0; i < kOpCount; ++i) {
    if (!covered[static_cast<size_t>(i)]) missing.push_back(static_cast<OpKind>(i));
  }
  return missing;
}

Policy load_policy(const std::string& source_dir) {
  const std::string path = source_dir + "/" + std::string(kPolicyFile);
  std::ifstream in(path);
  if (!in) fail(ErrorCode::InvalidArgument, "cannot read the numerics policy " + path);
  std::stringstream text;
  text << in.rdbuf();
  Policy policy = parse_policy(text.str());
  if (!policy.errors.empty()) {
    std::string all;
    for (const PolicyError& e : policy.errors) all += "\n  " + e.str();
    fail(ErrorCode::InvalidArgument, path + " has rules that do not parse:" + all);
  }
  return policy;
}

}  // namespace volta::conformance
