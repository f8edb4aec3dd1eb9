#pragma once
// The numerics policy's rules, parsed from governance/numerics-policy.md: the doc is the test
// input of the NaN/Inf matrix. Grammar (one rule per line between the RULES markers):
//   - `Op1, Op2(attr=value)`: If CONDITION, the result is RESULT.
// The doc's "Rule grammar" section is the user-facing description of the same grammar.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "volta/ir/graph.h"

namespace volta::conformance {

inline constexpr std::string_view kRulesBegin = "<!-- BEGIN RULES -->";
inline constexpr std::string_view kRulesEnd = "<!-- END RULES -->";

// A value class a condition places or a result names.
enum class ValueClass : uint8_t {
  NaN,
  PosInf,
  NegInf,
  PosZero,
  NegZero,
  Subnormal,  // a positive subnormal
  Largest,    // the largest finite value
  Lowest,     // the lowest finite value
  True,
  False,
  Number,  // a decimal magnitude; Value::number holds it
};

struct Value {
  ValueClass cls = ValueClass::NaN;
  double number = 0;  // ValueClass::Number only
  std::string text;   // as written in the rule
};

// Where a condition places its value.
enum class Subject : uint8_t {
  X,        // input 0 at an element position (elementwise)
  Y,        // input 1
  Z,        // input 2
  RowElem,  // an element of the row (row-wise ops, last axis)
  AllX,     // every element of input 0
};

struct Clause {
  Subject subject = Subject::X;
  Value value;
};

enum class ResultKind : uint8_t {
  Value,         // a value class or a decimal number, exact in the output dtype
  SameAsX,       // `x`: the input element unchanged, bitwise
  Finite,        // not NaN, not Inf
  Error,         // the kernel rejects the input
  IndexOfFirst,  // `the index of the first V` (row-wise arg-reductions)
};

struct RuleResult {
  ResultKind kind = ResultKind::Value;
  Value value;  // Value and IndexOfFirst
  std::string text;
};

// One op a rule names, with the attributes written after it, `Cast(to=i32)`, and optionally
// the dtypes it is limited to, `Exp[f32]` or `Cast(to=f32)[f64]`.
struct RuleOp {
  OpKind op;
  Attributes attrs;
  std::vector<DType> dtypes;  // `Exp[f32]`: the rule holds for these dtypes only; empty: all
  std::string text;           // as written, e.g. "Cast(to=i32)"
};

struct Rule {
  std::vector<RuleOp> ops;
  std::vector<Clause> clauses;  // one or two
  RuleResult result;
  std::string sentence;  // "If x is NaN, the result is NaN."
  int line = 0;          // 1-based line in the doc
};

struct PolicyError {
  int line = 0;  // 1-based; 0: the doc as a whole (missing markers)
  std::string message;
  std::string str() const;  // "line 12: cannot parse ..."
};

struct Policy {
  std::vector<Rule> rules;
  std::vector<PolicyError> errors;  // unparseable rules, unknown ops, missing markers
};

// Parses the rules between kRulesBegin and kRulesEnd. Never throws: every problem is an entry
// of `errors` naming the line and what was expected. Missing markers are an error too.
Policy parse_policy(std::string_view doc);

// One rule line (without its line number) or a message saying what was expected.
struct ParsedLine {
  std::optional<Rule> rule;
  std::string error;
};
ParsedLine parse_rule_line(std::string_view line);

// Ops of the op table that no rule names, in op-table order.
std::vector<OpKind> ops_without_rule(const Policy& policy);

inline constexpr std::string_view kPolicyFile = "governance/numerics-policy.md";

// The checked-in conformance/harness/tolerances.tsv, for the docs' tolerance section.
std::string_view tolerances_tsv();

// Reads governance/numerics-policy.md under `source_dir` and parses it; throws VoltaError
// (InvalidArgument) when the file cannot be read or has errors, listing them.
Policy load_policy(const std::string& source_dir);

std::string_view subject_text(Subject s);

}  // namespace volta::conformance
