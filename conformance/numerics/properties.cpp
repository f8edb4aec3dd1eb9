#include "volta/conformance/properties.h"

#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <regex>
#include <sstream>

#include "properties_internal.h"
#include "volta/conformance/parity_cases.h"
#include "volta/conformance/tolerance.h"
#include "volta/ir/printer.h"
#include "volta/ir/random.h"
#include "volta/reference/reference.h"
#include "volta/runtime/registry.h"
#include "volta/runtime/runtime.h"

namespace volta::conformance::props {
namespace {

constexpr uint64_t kDefaultSeed = 0x566f6c7461505250;  // "VoltaPRP"
// Grid cases up to this many input elements are "small"; larger ones (chunk edges, big
// GEMMs) are drawn one time in three, so CI stays fast and every kernel body still sees them.
constexpr int64_t kSmallElements = 4096;

const Backend& cpu() {
  static const std::unique_ptr<Backend> backend = make_backend("cpu");
  return *backend;
}

int64_t input_elements(const ParityCase& c) {
  int64_t n = 0;
  for (const Tensor& t : c.inputs) n += t.numel();
  return n;
}

// The parity grid of every op, each sorted by size so RapidCheck shrinks toward small cases.
const std::vector<ParityCase>& grid(OpKind op) {
  static const std::vector<std::vector<ParityCase>> grids = [] {
    std::vector<std::vector<ParityCase>> out(static_cast<size_t>(kOpCount));
    for (ParityCase& c : parity_cases()) out[static_cast<size_t>(op_index(c.op))].push_back(c);
    for (auto& cases : out) {
      std::stable_sort(cases.begin(), cases.end(), [](const ParityCase& a, const ParityCase& b) {
        return input_elements(a) < input_elements(b);
      });
    }
    return out;
  }();
  return grids[static_cast<size_t>(op_index(op))];
}

// The special values drawn into float operands. The largest/lowest finite values are left to
// the numerics matrix: the engine (float accumulation) and the reference (double) legitimately
// differ on where naive formulas overflow.
enum class Special { NaN, PosInf, NegInf, PosZero, NegZero, Subnormal };
constexpr int kSpecialCount = 6;
constexpr const char* kSpecialNames[] = {"NaN", "+Inf", "-Inf", "+0", "-0", "subnormal"};

double special_value(Special s, DType dtype) {
  const bool f32 = dtype == DType::F32;
  switch (s) {
    case Special::NaN:
      return std::numeric_limits<double>::quiet_NaN();
    case Special::PosInf:
      return std::numeric_limits<double>::infinity();
    case Special::NegInf:
      return -std::numeric_limits<double>::infinity();
    case Special::PosZero:
      return 0.0;
    case Special::NegZero:
      return -0.0;
    case Special::Subnormal:
      return f32 ? std::numeric_limits<float>::denorm_min() * 3
                 : std::numeric_limits<double>::denorm_min() * 3;
  }
  return 0.0;
}

const InputSpec& input_spec(OpKind op, size_t i) {
  const OpSchema& schema = op_schema(op);
  return schema.inputs[std::min(i, schema.inputs.size() - 1)];
}

// Random shapes: ranks 0-4, dims mostly small with empty and size-1 dims, or one long axis
// around the elementwise chunk (16384) or the reduction leaf (4096) so their edges are drawn.
Shape random_shape() {
  if (*rc::gen::inRange(0, 8) == 7) {
    const int64_t n =
        *rc::gen::element<int64_t>(4095, 4096, 4097, 16383, 16384, 16385, (2 * 16384) + 7);
    return Shape{n};
  }
  const int rank = *rc::gen::inRange(0, 5);
  std::vector<int64_t> dims;
  dims.reserve(static_cast<size_t>(rank));
  for (int i = 0; i < rank; ++i) {
    dims.push_back(
        *rc::gen::weightedOneOf<int64_t>({{3, rc::gen::inRange<int64_t>(1, 10)},
                                          {1, rc::gen::just<int64_t>(1)},
                                          {1, rc::gen::element<int64_t>(0, 15, 16, 17, 33)}}));
  }
  return Shape(dims);
}

// A shape `other` broadcasts with: trailing dims kept or set to 1, leading dims dropped.
Shape broadcast_partner(const Shape& shape) {
  const int drop = *rc::gen::inRange(0, shape.rank() + 1);
  std::vector<int64_t> dims(shape.dims().begin() + drop, shape.dims().end());
  for (int64_t& d : dims) {
    if (*rc::gen::inRange(0, 4) == 0) d = 1;
  }
  return Shape(dims);
}

bool has_trait(OpKind op, OpTrait trait) { return op_schema(op).traits.has(trait); }

// Redraws the axis attributes of an axis op for `rank`.
void redraw_axes(Attributes& attrs, int rank) {
  if (attrs.contains("axis")) {
    if (rank == 0) discard_case("an axis op needs rank >= 1");
    attrs["axis"] = int64_t{*rc::gen::inRange(-rank, rank)};
  }
  if (attrs.contains("axes")) {
    std::vector<int64_t> axes;
    for (int a = 0; a < rank; ++a) {
      if (*rc::gen::inRange(0, 2) == 1) axes.push_back(a);
    }
    if (axes.empty()) discard_case("no axis drawn");
    attrs["axes"] = axes;
  }
  if (attrs.contains("perm")) {
    std::vector<int64_t> perm(static_cast<size_t>(rank));
    std::iota(perm.begin(), perm.end(), 0);
    for (int i = rank - 1; i > 0; --i) {
      std::swap(perm[static_cast<size_t>(i)], perm[*rc::gen::inRange<size_t>(0, i + 1)]);
    }
    attrs["perm"] = perm;
  }
}

// One drawn case: a grid case (shapes, dtypes, attributes) with fresh values; for the
// elementwise ops also the grid case's dtypes and attributes on random (broadcast) shapes, and
// for the axis ops random shapes with redrawn axes.
struct Drawn {
  Graph graph;
  std::vector<Tensor> inputs;
  std::string what;  // the counterexample's description
};

Drawn draw_case(OpKind op) {
  const std::vector<ParityCase>& cases = grid(op);
  if (cases.empty()) fail_case(std::string(op_name(op)) + " has no parity grid to draw from");
  const auto small =
      static_cast<size_t>(std::count_if(cases.begin(), cases.end(), [](const ParityCase& c) {
        return input_elements(c) <= kSmallElements;
      }));
  // inRange shrinks toward its low end: toward "small" and the smallest case.
  const bool large = small < cases.size() && (small == 0 || *rc::gen::inRange(0, 3) == 2);
  const size_t index =
      large ? *rc::gen::inRange(small, cases.size()) : *rc::gen::inRange<size_t>(0, small);
  const ParityCase& base = cases[index];
  const Node& node = base.graph.node(0);
  Drawn d;
  d.what = "grid case " + base.id;
  d.inputs = base.inputs;

  const size_t arity = node.inputs.size();
  const bool reshape = redraws_shapes(op, arity) && *rc::gen::inRange(0, 2) == 1;
  std::vector<Shape> shapes;
  for (const Tensor& t : base.inputs) shapes.push_back(t.shape());
  Attributes attrs = node.attrs;
  if (reshape) {
    shapes[0] = random_shape();
    if (has_trait(op, OpTrait::AxisAttribute)) redraw_axes(attrs, shapes[0].rank());
    if (arity == 2) {
      shapes[1] = broadcast_partner(shapes[0]);
      if (*rc::gen::inRange(0, 2) == 1) std::swap(shapes[0], shapes[1]);
    }
  }
  // Fresh values from each operand's domain; value seed 0 keeps the grid's (and index
  // operands always keep theirs, so they stay in range).
  const auto value_seed = *rc::gen::inRange<uint32_t>(0, 1U << 30);
  std::vector<ValueId> ids;
  size_t present = 0;
  for (size_t i = 0; i < arity; ++i) {
    if (!node.inputs[i].valid()) {
      ids.push_back(kNoValue);
      continue;
    }
    const Value& v = base.graph.value(node.inputs[i]);
    const size_t k = present++;
    ids.push_back(d.graph.add_input("in" + std::to_string(i), v.dtype, shapes[k]));
    const InputDomain domain = input_spec(op, i).domain;
    if (reshape || (value_seed != 0 && domain != InputDomain::Index && is_floating(v.dtype))) {
      d.inputs[k] = domain_values(v.dtype, shapes[k], domain, value_seed, i);
    }
  }
  try {
    d.graph.set_outputs(
        d.graph.add_node(op, ids, attrs, "op", static_cast<int>(node.outputs.size())));
  } catch (const VoltaError&) {
    discard_case("the op rejects the drawn shapes");
  }
  if (reshape) {
    d.what += " redrawn as";
    for (const Shape& s : shapes) d.what += " " + s.str();
    for (const auto& [name, value] : attrs) d.what += " " + name + "=" + attr_value_str(value);
  }
  d.what += " value seed " + std::to_string(value_seed);

  // Specials at random positions of the float operands (index operands stay valid).
  std::vector<size_t> float_inputs;
  for (size_t k = 0; k < d.inputs.size(); ++k) {
    if (is_floating(d.inputs[k].dtype()) && d.inputs[k].numel() > 0) float_inputs.push_back(k);
  }
  if (float_inputs.empty()) return d;
  const int count = *rc::gen::inRange(0, 6);
  for (int s = 0; s < count; ++s) {
    const size_t k = float_inputs[*rc::gen::inRange<size_t>(0, float_inputs.size())];
    Tensor& t = d.inputs[k];
    const int64_t at = *rc::gen::inRange<int64_t>(0, t.numel());
    const auto special = static_cast<Special>(*rc::gen::inRange(0, kSpecialCount));
    t.set_double(at, special_value(special, t.dtype()));
    d.what += ", input " + std::to_string(k) + "[" + std::to_string(at) +
              "]=" + kSpecialNames[static_cast<int>(special)];
  }
  return d;
}

void check_engine_matches_reference(OpKind op, const Tamper& tamper) {
  const Drawn d = draw_case(op);
  const ExecutionPlan plan = compile(d.graph, cpu(), DeterminismMode::Strict);
  const std::unique_ptr<ExecutionContext> one_context = cpu().make_context({.threads = 1});
  ExecutionContext& one = *one_context;
  const std::unique_ptr<ExecutionContext> three_context = cpu().make_context({.threads = 3});
  ExecutionContext& three = *three_context;
  one.set_poison(std::byte{0xff});
  three.set_poison(std::byte{0x00});
  // A kernel may reject values (R-KERNEL-FAILURE, e.g. Cast of NaN to an integer): both
  // engines must then reject them with the same code.
  std::vector<Tensor> got, again, want;
  std::optional<VoltaError> engine_error, reference_error;
  try {
    got = execute(plan, cpu(), one, d.inputs);
    again = execute(plan, cpu(), three, d.inputs);
  } catch (const VoltaError& e) {
    engine_error = e;
  }
  try {
    want = reference::evaluate(d.graph, d.inputs);
  } catch (const VoltaError& e) {
    reference_error = e;
  }
  if (engine_error || reference_error) {
    if (engine_error && reference_error && engine_error->code() == reference_error->code()) return;
    fail_case(d.what + ": engine " + (engine_error ? engine_error->what() : "accepts it") +
              ", reference " + (reference_error ? reference_error->what() : "accepts it"));
  }
  for (size_t i = 0; i < got.size(); ++i) {
    if (!got[i].bit_equal(again[i])) {
      fail_case(d.what + ": output " + std::to_string(i) +
                " differs between 1 thread (poison 0xff) and 3 threads (poison 0x00): " +
                bitwise_difference(got[i], again[i]));
    }
  }
  if (got.size() != want.size()) {
    fail_case(d.what + ": the engine returns " + std::to_string(got.size()) +
              " outputs, the reference " + std::to_string(want.size()));
  }
  if (tamper) tamper(got);
  const OpFamily family = op_schema(op).family;
  for (size_t i = 0; i < want.size(); ++i) {
    const Tolerance tol =
        ToleranceTable::builtin().lookup(family, want[i].dtype(), "cpu:reference");
    const Comparison cmp = compare(got[i], want[i], tol);
    if (!cmp.passed()) {
      fail_case(d.what + ": output " + std::to_string(i) + " " +
                std::string(mismatch_name(cmp.mismatch)) + " mismatch (" + tol.str() +
                "): " + cmp.detail);
    }
  }
}

class SilentListener : public rc::detail::TestListener {
 public:
  void onTestCaseFinished(const rc::detail::CaseDescription& /*description*/) override {}
  void onShrinkTried(const rc::detail::CaseDescription& /*shrink*/, bool /*accepted*/) override {}
  void onTestFinished(const rc::detail::TestMetadata& /*metadata*/,
                      const rc::detail::TestResult& /*result*/) override {}
};

uint64_t property_seed(uint64_t base, const std::string& case_id) {
  StableHasher h;
  h.u64(base == 0 ? kDefaultSeed : base);
  h.text(case_id);
  return h.digest();
}

int env_iterations(int fallback) {
  const char* text = std::getenv("VOLTA_PROPERTY_ITERATIONS");
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const long n = std::strtol(text, &end, 10);
  if (*end != '\0' || n < 1 || n > 1000000) {
    fail(ErrorCode::InvalidArgument, "VOLTA_PROPERTY_ITERATIONS='" + std::string(text) +
                                         "' is not an iteration count (supported: 1 to 1000000)");
  }
  return static_cast<int>(n);
}

}  // namespace

void fail_case(const std::string& message) {
  throw rc::detail::CaseResult(rc::detail::CaseResult::Type::Failure, message);
}

void discard_case(const std::string& message) {
  throw rc::detail::CaseResult(rc::detail::CaseResult::Type::Discard, message);
}

bool redraws_shapes(OpKind op, size_t arity) {
  return ((has_trait(op, OpTrait::UnaryElementwise) || has_trait(op, OpTrait::AxisAttribute)) &&
          arity == 1) ||
         (has_trait(op, OpTrait::BroadcastingBinary) && arity == 2);
}

std::string Property::case_id() const {
  return "property:" + std::string(op_name(op)) + ":" + name;
}

Tensor domain_values(DType dtype, const Shape& shape, InputDomain domain, uint64_t seed,
                     uint64_t stream) {
  const bool integer = is_integer(dtype);
  switch (domain) {
    case InputDomain::Positive:
      return random_tensor(dtype, shape, seed, integer ? 1 : 0.05, integer ? 20 : 3, stream);
    case InputDomain::NonZero: {
      Tensor t = random_tensor(dtype, shape, seed, integer ? 1 : 0.25, integer ? 20 : 3, stream);
      for (int64_t i = 0; i < t.numel(); ++i) {
        if (counter_uniform(seed, stream + 1000, static_cast<uint64_t>(i)) >= 0.5) continue;
        if (integer) {
          t.set_int(i, -t.get_int(i));
        } else {
          t.set_double(i, -t.get_double(i));
        }
      }
      return t;
    }
    case InputDomain::Any:
    case InputDomain::Index:
      break;
  }
  return random_tensor(dtype, shape, seed, integer ? -20 : -3, integer ? 20 : 3, stream);
}

std::vector<Tensor> run_engine(const Graph& graph, const std::vector<Tensor>& inputs) {
  const ExecutionPlan plan = compile(graph, cpu(), DeterminismMode::Strict);
  const std::unique_ptr<ExecutionContext> ctx_context = cpu().make_context({.threads = 2});
  ExecutionContext& ctx = *ctx_context;
  ctx.set_poison(std::byte{0xff});
  return execute(plan, cpu(), ctx, inputs);
}

std::vector<Tensor> run_reference(const Graph& graph, const std::vector<Tensor>& inputs) {
  return reference::evaluate(graph, inputs);
}

std::string bitwise_difference(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
    return "type " + std::string(dtype_name(a.dtype())) + a.shape().str() + " vs " +
           std::string(dtype_name(b.dtype())) + b.shape().str();
  }
  const size_t width = dtype_size(a.dtype());
  const auto* pa = static_cast<const unsigned char*>(a.data());
  const auto* pb = static_cast<const unsigned char*>(b.data());
  for (int64_t i = 0; i < a.numel(); ++i) {
    const size_t at = static_cast<size_t>(i) * width;
    if (std::equal(pa + at, pa + at + width, pb + at)) continue;
    if (is_floating(a.dtype()) && std::isnan(a.get_double(i)) && std::isnan(b.get_double(i))) {
      continue;
    }
    std::ostringstream os;
    os.precision(17);
    os << "index " << i << ": " << a.get_double(i) << " vs " << b.get_double(i);
    return os.str();
  }
  return "";
}

Property engine_matches_reference(OpKind op, Tamper tamper) {
  return {op, "engine-matches-reference",
          [op, tamper = std::move(tamper)] { check_engine_matches_reference(op, tamper); }};
}

std::vector<Property> all_properties() {
  std::vector<Property> out;
  out.reserve(static_cast<size_t>(kOpCount) + 16);
  for (int i = 0; i < kOpCount; ++i)
    out.push_back(engine_matches_reference(static_cast<OpKind>(i)));
  for (Property& p : algebraic_properties()) out.push_back(std::move(p));
  return out;
}

CaseOutcome run_property(const Property& p, uint64_t seed, int iterations) {
  rc::detail::TestParams params;
  params.seed = seed;
  params.maxSuccess = iterations;
  rc::detail::TestMetadata metadata;
  metadata.id = p.case_id();
  metadata.description = p.case_id();
  SilentListener listener;
  // An explicit (empty) reproduce map: RapidCheck then never reads RC_PARAMS nor prints its
  // global configuration.
  const rc::detail::TestResult result =
      rc::detail::checkProperty(rc::detail::toProperty(p.body), metadata, params, listener, {});
  CaseOutcome out;
  const std::string header =
      "seed=" + std::to_string(seed) + " iterations=" + std::to_string(iterations);
  rc::detail::FailureResult failure;
  rc::detail::GaveUpResult gave_up;
  rc::detail::Error error;
  if (result.match(failure)) {
    out.outcome = Outcome::FailNumeric;
    out.message = header + " failed at iteration " + std::to_string(failure.numSuccess + 1) +
                  "; shrunk counterexample: " + failure.description;
  } else if (result.match(gave_up)) {
    out.outcome = Outcome::Error;
    out.message = header + " gave up after " + std::to_string(gave_up.numSuccess) +
                  " cases: " + gave_up.description;
  } else if (result.match(error)) {
    out.outcome = Outcome::Error;
    out.message = header + ": " + error.description;
  } else {
    out.outcome = Outcome::Pass;
    out.message = header;
  }
  return out;
}

CaseOutcome replay(const Property& p, const std::string& message) {
  static const std::regex pattern(R"(seed=(\d+) iterations=(\d+))");
  std::smatch m;
  if (!std::regex_search(message, m, pattern)) {
    fail(ErrorCode::InvalidArgument, "cannot replay " + p.case_id() +
                                         ": the message has no 'seed=S iterations=N' (got '" +
                                         message + "')");
  }
  return run_property(p, std::stoull(m[1].str()), std::stoi(m[2].str()));
}

}  // namespace volta::conformance::props

namespace volta::conformance {

std::vector<SuiteCase> property_cases(const PropertyOptions& options) {
  const int iterations = props::env_iterations(options.iterations);
  for (int i = 0; i < kOpCount; ++i) props::grid(static_cast<OpKind>(i));  // built once, pre-fork
  std::vector<SuiteCase> out;
  for (props::Property& p : props::all_properties()) {
    SuiteCase s;
    s.family = std::string(op_family_name(op_schema(p.op).family));
    s.op = std::string(op_name(p.op));
    s.backend = "cpu";
    s.case_id = p.case_id();
    const uint64_t seed = props::property_seed(options.seed, s.case_id);
    s.params = "seed=" + std::to_string(seed) + " iterations=" + std::to_string(iterations);
    s.body = [p = std::move(p), seed, iterations] {
      return props::run_property(p, seed, iterations);
    };
    out.push_back(std::move(s));
  }
  return out;
}

CaseOutcome replay_property(const std::string& case_id, const std::string& message) {
  for (const props::Property& p : props::all_properties()) {
    if (p.case_id() == case_id) return props::replay(p, message);
  }
  fail(ErrorCode::InvalidArgument,
       "no property case '" + case_id +
           "' (supported: property:<Op>:<name> ids listed by `volta-audit run numerics`)");
}

}  // namespace volta::conformance
