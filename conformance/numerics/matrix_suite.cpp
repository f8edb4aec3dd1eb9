#include "volta/conformance/matrix_suite.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <set>

#include "volta/conformance/parity_cases.h"
#include "volta/error.h"
#include "volta/ir/op_schema.h"
#include "volta/ir/printer.h"
#include "volta/ir/random.h"
#include "volta/reference/reference.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta::conformance {
namespace {

bool boolean_value(const Value& v) {
  return v.cls == ValueClass::True || v.cls == ValueClass::False;
}

int subject_input(Subject s) {
  switch (s) {
    case Subject::Y:
      return 1;
    case Subject::Z:
      return 2;
    default:
      return 0;
  }
}

const InputSpec& input_spec(const OpSchema& schema, size_t i) {
  return schema.inputs[std::min(i, schema.inputs.size() - 1)];
}

DTypeSet input_types(const OpSchema& schema, size_t i) {
  return schema.find_type_param(input_spec(schema, i).type_param)->allowed;
}

// The dtype an input takes in a cell of dtype `cell`: the cell's when its type parameter
// allows it, else bool (Where's condition), else the first the parameter allows.
DType input_dtype(const OpSchema& schema, size_t i, DType cell) {
  const DTypeSet allowed = input_types(schema, i);
  if (allowed.contains(cell)) return cell;
  if (allowed.contains(DType::Bool)) return DType::Bool;
  for (DType d : {DType::I64, DType::I32, DType::F32, DType::F64}) {
    if (allowed.contains(d)) return d;
  }
  return cell;
}

// The dtypes a rule runs at for one op: f32 and f64 where any input allows them (bool for
// the boolean ops), narrowed by the rule's `[dtype]` suffix; any other dtype (f16, bf16, the
// integers) only where the suffix names it. Empty with `why` otherwise.
std::vector<DType> cell_dtypes(const Rule& rule, const RuleOp& op, std::string& why) {
  const OpSchema& schema = op_schema(op.op);
  std::vector<DType> out;
  const auto any_input_takes = [&](DType d) {
    for (size_t i = 0; i < schema.inputs.size(); ++i) {
      if (input_types(schema, i).contains(d)) return true;
    }
    return false;
  };
  for (int code = 0; code < kDTypeCount; ++code) {
    const auto d = static_cast<DType>(code);
    const bool named = std::ranges::find(op.dtypes, d) != op.dtypes.end();
    if (d == DType::Bool || (d != DType::F32 && d != DType::F64 && !named)) continue;
    // An op without inputs (Constant): x is its tensor attribute, any float dtype.
    if (any_input_takes(d) || schema.inputs.empty()) out.push_back(d);
  }
  if (out.empty() && any_input_takes(DType::Bool)) out.push_back(DType::Bool);
  if (!op.dtypes.empty()) {
    std::erase_if(out, [&](DType d) { return std::ranges::find(op.dtypes, d) == op.dtypes.end(); });
  }
  // Every clause's value must fit the dtype of the input it is placed in.
  std::erase_if(out, [&](DType d) {
    return std::ranges::any_of(rule.clauses, [&](const Clause& c) {
      if (schema.inputs.empty()) return boolean_value(c.value);
      const DType in = input_dtype(schema, static_cast<size_t>(subject_input(c.subject)), d);
      return boolean_value(c.value) != (in == DType::Bool);
    });
  });
  if (out.empty()) why = "no dtype of the op takes the rule's values (dtype suffix, bool values)";
  return out;
}

// The smallest positive normal and the largest finite value of a float dtype.
double smallest_normal(DType d) {
  if (d == DType::F32) return std::numeric_limits<float>::min();
  if (d == DType::F16) return 0x1p-14;
  if (d == DType::BF16) return std::numeric_limits<float>::min();  // f32's exponent range
  return std::numeric_limits<double>::min();
}
double largest_finite(DType d) {
  if (d == DType::F32) return std::numeric_limits<float>::max();
  if (d == DType::F16) return 65504.0;
  if (d == DType::BF16) return BFloat16::from_bits(0x7F7F).to_float();
  return std::numeric_limits<double>::max();
}

double value_of(const Value& v, DType d) {
  switch (v.cls) {
    case ValueClass::NaN:
      return std::numeric_limits<double>::quiet_NaN();
    case ValueClass::PosInf:
      return std::numeric_limits<double>::infinity();
    case ValueClass::NegInf:
      return -std::numeric_limits<double>::infinity();
    case ValueClass::PosZero:
      return 0.0;
    case ValueClass::NegZero:
      return -0.0;
    case ValueClass::Subnormal:
      return smallest_normal(d) / 4;
    case ValueClass::Largest:
      return largest_finite(d);
    case ValueClass::Lowest:
      return -largest_finite(d);
    case ValueClass::True:
      return 1;
    case ValueClass::False:
      return 0;
    case ValueClass::Number:
      return v.number;
  }
  return 0;
}

// The value rounded to the dtype, as the tensor would hold it.
double rounded(double v, DType d) {
  Tensor t(d, Shape{1});
  t.set_double(0, v);
  return t.get_double(0);
}

bool matches(double got, const Value& want, DType out) {
  switch (want.cls) {
    case ValueClass::NaN:
      return std::isnan(got);
    case ValueClass::PosZero:
    case ValueClass::NegZero:
      return got == 0 && std::signbit(got) == (want.cls == ValueClass::NegZero);
    case ValueClass::Subnormal:
      return std::fpclassify(static_cast<float>(got)) == FP_SUBNORMAL ||
             std::fpclassify(got) == FP_SUBNORMAL;
    case ValueClass::True:
      return got != 0;
    case ValueClass::False:
      return got == 0;
    default:
      return got == rounded(value_of(want, out), out);
  }
}

std::string show(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == 0) return std::signbit(v) ? "-0" : "+0";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// Benign values from the input's domain, seeded by the cell id.
Tensor benign(DType d, const Shape& shape, InputDomain domain, uint64_t seed, uint64_t stream) {
  Tensor t(d, shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double u = counter_uniform(seed, stream, static_cast<uint64_t>(i));
    double v = 0;
    switch (domain) {
      case InputDomain::Positive:
        v = 0.05 + 2.95 * u;
        break;
      case InputDomain::NonZero:
        v = (u < 0.5 ? -1 : 1) * (0.25 + 5.5 * std::abs(u - 0.5));
        break;
      default:
        v = -3 + 6 * u;
    }
    if (d == DType::Bool) v = u < 0.5 ? 0 : 1;
    if (is_integer(d)) {
      t.set_int(i, static_cast<int64_t>(std::floor(v)));  // wraps into an unsigned dtype
    } else {
      t.set_double(i, v);
    }
  }
  return t;
}

struct Built {
  Graph graph;
  std::vector<Tensor> inputs;
  std::vector<int64_t> offsets;  // elementwise: checked offsets; row-wise: the offset per row
  int64_t rows = 0;              // row-wise only
  std::string shape;
};

Attributes attributes_for(const MatrixCell& cell, bool row) {
  Attributes attrs = cell.op.attrs;
  const OpSchema& schema = op_schema(cell.op.op);
  if (!row) return attrs;
  // Row-wise: the op works on the last axis unless the rule says otherwise.
  if (const AttrSpec* a = schema.find_attr("axis"); a && !attrs.contains("axis")) {
    attrs["axis"] = int64_t{-1};
  }
  if (const AttrSpec* a = schema.find_attr("axes"); a && !attrs.contains("axes")) {
    attrs["axes"] = std::vector<int64_t>{-1};
  }
  return attrs;
}

uint64_t seed_of(const std::string& id) {
  StableHasher h;
  h.text(id);
  return h.digest();
}

Graph one_node(const MatrixCell& cell, const std::vector<std::optional<TypeInfo>>& types,
               Attributes attrs, int num_outputs) {
  Graph g;
  std::vector<ValueId> ids;
  for (size_t i = 0; i < types.size(); ++i) {
    ids.push_back(types[i] ? g.add_input("in" + std::to_string(i), types[i]->dtype, types[i]->shape)
                           : kNoValue);
  }
  g.set_outputs(g.add_node(cell.op.op, ids, std::move(attrs), "op", num_outputs));
  return g;
}

// A Cast to u8, u16, u32 or u64: a negative benign value has no value there.
bool casts_to_unsigned(const MatrixCell& cell) {
  if (cell.op.op != OpKind::Cast) return false;
  const auto to = cell.op.attrs.find("to");
  if (to == cell.op.attrs.end()) return false;
  const auto* name = std::get_if<std::string>(&to->second);
  const std::optional<DType> dtype = name ? parse_dtype(*name) : std::nullopt;
  return dtype && is_unsigned(*dtype);
}

Built build_elementwise(const MatrixCell& cell) {
  const OpSchema& schema = op_schema(cell.op.op);
  int inputs = schema.min_inputs();
  for (const Clause& c : cell.rule.clauses) inputs = std::max(inputs, subject_input(c.subject) + 1);
  Built b;
  b.offsets.assign(std::begin(kMatrixOffsets), std::end(kMatrixOffsets));
  b.offsets.push_back(kMatrixElements - 1);
  const uint64_t seed = seed_of(cell.id);
  std::vector<std::optional<TypeInfo>> types;
  for (int i = 0; i < inputs; ++i) {
    const auto at = static_cast<size_t>(i);
    const DType d = input_dtype(schema, at, cell.dtype);
    types.push_back(TypeInfo{d, Shape{kMatrixElements}});
    b.inputs.push_back(benign(d, Shape{kMatrixElements}, input_spec(schema, at).domain, seed, at));
  }
  if (casts_to_unsigned(cell)) {  // benign values it can convert: their magnitudes
    Tensor& x = b.inputs[0];
    for (int64_t i = 0; i < x.numel(); ++i) x.set_double(i, std::abs(x.get_double(i)));
  }
  for (const Clause& c : cell.rule.clauses) {
    Tensor& t = b.inputs[static_cast<size_t>(subject_input(c.subject))];
    for (int64_t o : b.offsets) t.set_double(o, value_of(c.value, t.dtype()));
  }
  b.graph = one_node(cell, types, attributes_for(cell, false), std::max(1, schema.min_outputs()));
  b.shape = "[" + std::to_string(kMatrixElements) + "]";
  return b;
}

Built build_rows(const MatrixCell& cell, int64_t length) {
  const OpSchema& schema = op_schema(cell.op.op);
  Built b;
  for (int64_t o : kMatrixOffsets) {
    if (o < length - 1) b.offsets.push_back(o);
  }
  b.offsets.push_back(length - 1);
  b.rows = static_cast<int64_t>(b.offsets.size());
  const uint64_t seed = seed_of(cell.id + std::to_string(length));
  std::vector<std::optional<TypeInfo>> types;
  for (int i = 0; i < schema.min_inputs(); ++i) {
    const auto at = static_cast<size_t>(i);
    const DType d = input_dtype(schema, at, cell.dtype);
    const Shape shape = i == 0 ? Shape{b.rows, length} : Shape{length};
    types.push_back(TypeInfo{d, shape});
    b.inputs.push_back(benign(d, shape, input_spec(schema, at).domain, seed, at));
  }
  Tensor& x = b.inputs[0];
  for (int64_t r = 0; r < b.rows; ++r) {
    x.set_double(r * length + b.offsets[static_cast<size_t>(r)],
                 value_of(cell.rule.clauses[0].value, x.dtype()));
  }
  b.graph = one_node(cell, types, attributes_for(cell, true), std::max(1, schema.min_outputs()));
  b.shape = "[" + std::to_string(b.rows) + ", " + std::to_string(length) + "]";
  return b;
}

// "shape=[2,3]x[3],attrs=..." of a one-node graph, for failure messages.
std::string describe(const Graph& g) {
  std::string text = "shape=";
  const Node& node = g.node(0);
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    text += (i == 0 ? "" : "x") +
            (node.inputs[i] == kNoValue ? std::string("_") : g.value(node.inputs[i]).shape.str());
  }
  for (const auto& [name, value] : node.attrs) text += "," + name + "=" + attr_value_str(value);
  return text;
}

// A parity case's attributes that the rule did not choose and the schema does not require:
// fewer means the case is closer to the op's defaults, which is what a rule speaks about.
int extra_attrs(const MatrixCell& cell, const Node& node) {
  const OpSchema& schema = op_schema(cell.op.op);
  int extra = 0;
  for (const auto& [name, value] : node.attrs) {
    const AttrSpec* spec = schema.find_attr(name);
    const bool required = spec != nullptr && !spec->default_value;
    if (!required && !cell.op.attrs.contains(name)) ++extra;
  }
  return extra;
}

// Every element of x (input 0, and every value of a variadic first operand) is the value;
// the other inputs and the attributes come from the op's parity grid: the case at the cell's
// dtype with no empty input and the fewest attributes beyond the rule's and the required.
std::optional<Built> build_whole(const MatrixCell& cell, std::string& why) {
  std::vector<ParityCase> candidates;
  const OpSchema& schema = op_schema(cell.op.op);
  for (ParityCase& c : parity_cases(cell.op.op)) {
    if (!schema.inputs.empty() && (c.inputs.empty() || c.inputs[0].dtype() != cell.dtype)) {
      continue;
    }
    if (std::ranges::any_of(c.inputs, [](const Tensor& t) { return t.numel() == 0; })) continue;
    candidates.push_back(std::move(c));
  }
  std::ranges::stable_sort(candidates, {},
                           [&](const ParityCase& c) { return extra_attrs(cell, c.graph.node(0)); });
  const bool variadic_x = schema.inputs.size() == 1 && schema.inputs[0].variadic;
  // First with the op's defaults for every attribute the rule does not set and the schema
  // does not require (a rule speaks about the op as written), then with the case's own.
  for (const bool defaults : {true, false}) {
    for (const ParityCase& c : candidates) {
      const Node& node = c.graph.node(0);
      Attributes attrs;
      for (const auto& [k, v] : node.attrs) {
        const AttrSpec* spec = schema.find_attr(k);
        const bool keep = !defaults || spec == nullptr || !spec->default_value ||
                          attr_type_of(v) == AttrType::Tensor;
        if (keep) attrs[k] = v;
      }
      for (const auto& [k, v] : cell.op.attrs) attrs[k] = v;
      if (schema.inputs.empty()) {
        // No inputs: x is the tensor attribute (Constant's value), at the cell's dtype.
        for (auto& [name, value] : attrs) {
          if (attr_type_of(value) != AttrType::Tensor) continue;
          Tensor x(cell.dtype, std::get<Tensor>(value).shape());
          for (int64_t i = 0; i < x.numel(); ++i) {
            x.set_double(i, value_of(cell.rule.clauses[0].value, x.dtype()));
          }
          value = std::move(x);
        }
      }
      std::vector<std::optional<TypeInfo>> types;
      for (ValueId id : node.inputs) {
        if (id == kNoValue) {
          types.emplace_back();
        } else {
          types.push_back(TypeInfo{c.graph.value(id).dtype, c.graph.value(id).shape});
        }
      }
      Built b;
      try {
        b.graph = one_node(cell, types, attrs, static_cast<int>(node.outputs.size()));
      } catch (const VoltaError&) {
        continue;  // the rule's attributes do not fit this case's shapes
      }
      b.inputs = c.inputs;
      for (size_t k = 0; k < b.inputs.size(); ++k) {
        if (k != 0 && !variadic_x) continue;
        Tensor& x = b.inputs[k];
        for (int64_t i = 0; i < x.numel(); ++i) {
          x.set_double(i, value_of(cell.rule.clauses[0].value, x.dtype()));
        }
      }
      b.shape = describe(b.graph);
      return b;
    }
  }
  why = "no parity case of " + std::string(op_name(cell.op.op)) + " at " +
        std::string(dtype_name(cell.dtype)) +
        " with non-empty inputs that takes the rule's attributes";
  return std::nullopt;
}

CaseOutcome failed(Outcome o, std::string message) {
  CaseOutcome out;
  out.outcome = o;
  out.message = std::move(message);
  return out;
}

// Checks one output element; empty when it holds, else "got G, expected E".
std::string check(const MatrixCell& cell, const Tensor& out, int64_t at, double x,
                  std::optional<int64_t> index) {
  const RuleResult& r = cell.rule.result;
  const double got = out.get_double(at);
  bool ok = false;
  std::string want = r.text;
  switch (r.kind) {
    case ResultKind::Value:
      ok = matches(got, r.value, out.dtype());
      break;
    case ResultKind::SameAsX:
      ok = (std::isnan(got) && std::isnan(x)) || (got == x && std::signbit(got) == std::signbit(x));
      want = "x = " + show(x);
      break;
    case ResultKind::Finite:
      ok = std::isfinite(got);
      break;
    case ResultKind::IndexOfFirst:
      ok = index && got == static_cast<double>(*index);
      want = index ? std::to_string(*index) : "an index (the row holds no " + r.value.text + ")";
      break;
    case ResultKind::Error:
      break;
  }
  return ok ? std::string() : "got " + show(got) + ", expected " + want;
}

bool same_class(double v, const Value& want, DType d) {
  return want.cls == ValueClass::NaN ? std::isnan(v) : v == rounded(value_of(want, d), d);
}

// The row-wise checks: returns the first failure.
std::string check_rows(const MatrixCell& cell, const Built& b, const Tensor& out) {
  const Tensor& x = b.inputs[0];
  const int64_t length = x.shape()[1];
  const int64_t per = b.rows == 0 ? 0 : out.numel() / b.rows;
  const bool cumulative = cell.op.op == OpKind::CumSum && per == length;
  for (int64_t r = 0; r < b.rows; ++r) {
    const int64_t offset = b.offsets[static_cast<size_t>(r)];
    std::optional<int64_t> first;
    if (cell.rule.result.kind == ResultKind::IndexOfFirst) {
      for (int64_t i = 0; i < length && !first; ++i) {
        if (same_class(x.get_double(r * length + i), cell.rule.result.value, x.dtype())) first = i;
      }
    }
    for (int64_t j = cumulative ? offset : 0; j < per; ++j) {
      const std::string bad = check(cell, out, r * per + j, 0, first);
      if (!bad.empty()) {
        return "row " + std::to_string(r) + " (value at offset " + std::to_string(offset) +
               "), output element " + std::to_string(j) + ": " + bad;
      }
    }
  }
  return {};
}

std::string check_outputs(const MatrixCell& cell, const Built& b, const Tensor& out) {
  const Subject subject = cell.rule.clauses.front().subject;
  if (subject == Subject::RowElem) return check_rows(cell, b, out);
  if (subject == Subject::AllX) {
    for (int64_t i = 0; i < out.numel(); ++i) {
      const std::string bad = check(cell, out, i, 0, std::nullopt);
      if (!bad.empty()) return "output element " + std::to_string(i) + ": " + bad;
    }
    return {};
  }
  for (int64_t o : b.offsets) {
    const std::string bad = check(cell, out, o, b.inputs[0].get_double(o), std::nullopt);
    if (!bad.empty()) return "offset " + std::to_string(o) + ": " + bad;
  }
  return {};
}

std::vector<Built> build(const MatrixCell& cell, std::string& why) {
  std::vector<Built> out;
  switch (cell.rule.clauses.front().subject) {
    case Subject::RowElem:
      for (int64_t length : kMatrixRowLengths) out.push_back(build_rows(cell, length));
      break;
    case Subject::AllX:
      if (std::optional<Built> b = build_whole(cell, why)) out.push_back(std::move(*b));
      break;
    default:
      out.push_back(build_elementwise(cell));
  }
  return out;
}

// "Relu[f32] If x is NaN, the result is NaN.": stable across runs, unique per rule x op x dtype.
std::string cell_id(const RuleOp& op, DType dtype, const Rule& rule) {
  std::string id = op.text;
  id += "[";
  id += dtype_name(dtype);
  id += "] ";
  id += rule.sentence;
  return id;
}

std::string line_of(const MatrixCell& cell) {
  return "policy line " + std::to_string(cell.rule.line) + ": ";
}

}  // namespace

std::vector<MatrixCell> matrix_cells(const Policy& policy) {
  std::vector<MatrixCell> cells;
  std::set<std::string> seen;
  for (const Rule& rule : policy.rules) {
    for (const RuleOp& op : rule.ops) {
      std::string why;
      for (DType d : cell_dtypes(rule, op, why)) {
        MatrixCell cell{cell_id(op, d, rule), op, d, rule};
        if (seen.insert(cell.id).second) cells.push_back(std::move(cell));
      }
    }
  }
  return cells;
}

std::vector<std::string> matrix_problems(const Policy& policy) {
  std::vector<std::string> problems;
  std::set<std::string> seen;
  for (const Rule& rule : policy.rules) {
    for (const RuleOp& op : rule.ops) {
      std::string why;
      const std::vector<DType> dtypes = cell_dtypes(rule, op, why);
      const std::string where = "line " + std::to_string(rule.line) + ": " + op.text + ": ";
      if (dtypes.empty()) problems.push_back(where + why);
      for (DType d : dtypes) {
        const std::string id = cell_id(op, d, rule);
        if (!seen.insert(id).second) {
          std::string problem = where;
          problem += "repeats the rule ";
          problem += id;
          problems.push_back(std::move(problem));
        }
      }
    }
  }
  return problems;
}

Evaluate backend_evaluator(const Backend& backend, int threads) {
  return [&backend, threads](const Graph& graph, std::span<const Tensor> inputs) {
    const ExecutionPlan plan = compile(graph, backend, DeterminismMode::Strict);
    const std::unique_ptr<ExecutionContext> ctx_context =
        backend.make_context({.threads = threads});
    ExecutionContext& ctx = *ctx_context;
    return execute(plan, backend, ctx, inputs);
  };
}

Evaluate reference_evaluator() {
  return [](const Graph& graph, std::span<const Tensor> inputs) {
    return reference::evaluate(graph, inputs);
  };
}

CaseOutcome run_matrix_cell(const MatrixCell& cell, const Evaluate& evaluate) {
  std::string why;
  const std::vector<Built> builds = build(cell, why);
  if (builds.empty()) return failed(Outcome::Error, line_of(cell) + why);
  const bool want_error = cell.rule.result.kind == ResultKind::Error;
  for (const Built& b : builds) {
    std::vector<Tensor> outputs;
    try {
      outputs = evaluate(b.graph, b.inputs);
    } catch (const VoltaError& e) {
      // A backend without a kernel for the op (the CUDA backend's coverage grows op by op)
      // cannot check the rule at all: UNSUPPORTED, as the parity suite says it.
      if (e.code() == ErrorCode::MissingKernel) {
        return failed(Outcome::Unsupported, line_of(cell) + "shape " + b.shape + ": " + e.what());
      }
      // "The result is an error" is the op refusing its data at run time; a graph or plan the
      // engine refused before running it proves nothing about the op's rule.
      if (want_error && e.code() == ErrorCode::KernelFailure) continue;
      if (want_error) {
        return failed(Outcome::FailNumeric,
                      line_of(cell) + "shape " + b.shape + ": expected the kernel to refuse the " +
                          "data (" + std::string(error_code_name(ErrorCode::KernelFailure)) +
                          "), got " + e.what());
      }
      return failed(Outcome::Error, line_of(cell) + "shape " + b.shape + ": " + e.what());
    }
    if (want_error) {
      return failed(Outcome::FailNumeric, line_of(cell) + "shape " + b.shape +
                                              ": the op returned normally, expected an error");
    }
    const std::string bad = check_outputs(cell, b, outputs.at(0));
    if (!bad.empty()) {
      return failed(Outcome::FailNumeric, line_of(cell) + "shape " + b.shape + ", " + bad);
    }
  }
  CaseOutcome out;
  out.outcome = Outcome::Pass;
  return out;
}

std::vector<SuiteCase> matrix_suite(const Policy& policy, std::string_view backend, int threads) {
  if (backend != "cpu" && backend != "reference" && backend != "cuda") {
    fail(ErrorCode::InvalidArgument, "the numerics suite has no backend '" + std::string(backend) +
                                         "' (supported: " + std::string(kMatrixBackends) + ")");
  }
  // A backend this binary was not built with, or one with no device here, is a precondition
  // the cells declare.
  const std::optional<std::string> unavailable =
      backend == "reference" ? std::nullopt : backend_unavailable(backend);
  std::vector<SuiteCase> out;
  for (MatrixCell& cell : matrix_cells(policy)) {
    SuiteCase s;
    s.family = std::string(op_family_name(op_schema(cell.op.op).family));
    s.op = std::string(op_name(cell.op.op));
    s.backend = std::string(backend);
    s.case_id = cell.id;
    auto shared = std::make_shared<MatrixCell>(std::move(cell));
    if (backend == "cuda") s.precondition = std::string(kCudaPrecondition);
    if (unavailable) {
      s.body = [why = *unavailable, name = std::string(backend)] {
        std::string message = why;
        message += ": the matrix's ";
        message += name;
        message += name == "cuda" ? " cells need that backend and a CUDA device"
                                  : " cells need that backend";
        return failed(Outcome::Skipped, message);
      };
    } else if (backend == "reference") {
      s.body = [shared] { return run_matrix_cell(*shared, reference_evaluator()); };
    } else {
      s.body = [shared, name = std::string(backend), threads] {
        const std::unique_ptr<Backend> engine = make_backend(name);
        return run_matrix_cell(*shared, backend_evaluator(*engine, threads));
      };
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace volta::conformance
