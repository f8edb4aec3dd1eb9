#include "volta/conformance/parity_cases.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <stdexcept>

#include "case_list.h"
#include "volta/ir/printer.h"
#include "volta/ir/random.h"

namespace volta::conformance::cases {
namespace {

std::string case_id(OpKind op, const Types& types, const Attributes& attrs, int num_outputs) {
  std::string id = std::string(op_name(op)) + "(";
  for (const auto& [name, value] : attrs) id += name + "=" + attr_value_str(value) + ",";
  if (num_outputs != 1) id += "outputs=" + std::to_string(num_outputs) + ",";
  std::string shapes;
  std::vector<DType> dtypes;  // distinct, in operand order: "dtype=bool/f64" for Where
  for (const auto& t : types) {
    shapes += (shapes.empty() ? "" : "x") + (t ? t->shape.str() : std::string("_"));
    if (t && std::find(dtypes.begin(), dtypes.end(), t->dtype) == dtypes.end()) {
      dtypes.push_back(t->dtype);
    }
  }
  if (!types.empty()) id += "shape=" + shapes + ",";
  for (size_t i = 0; i < dtypes.size(); ++i) {
    id += (i == 0 ? "dtype=" : "/") + std::string(dtype_name(dtypes[i]));
  }
  if (!dtypes.empty()) id += ",";
  if (id.back() == ',') {
    id.back() = ')';
  } else {
    id += ")";
  }
  return id;
}

// Values from the operand's domain, seeded by the case id so every case is reproducible.
Tensor domain_tensor(const TypeInfo& type, InputDomain domain, uint64_t seed, uint64_t stream) {
  const bool integer = is_integer(type.dtype);
  switch (domain) {
    case InputDomain::Positive:
      return random_tensor(type.dtype, type.shape, seed, integer ? 1 : 0.05, integer ? 20 : 3,
                           stream);
    case InputDomain::NonZero: {
      Tensor t =
          random_tensor(type.dtype, type.shape, seed, integer ? 1 : 0.25, integer ? 20 : 3, stream);
      for (int64_t i = 0; i < t.numel(); ++i) {
        if (counter_uniform(seed, stream + 1000, static_cast<uint64_t>(i)) < 0.5) {
          if (integer)
            t.set_int(i, -t.get_int(i));
          else
            t.set_double(i, -t.get_double(i));
        }
      }
      return t;
    }
    case InputDomain::Any:
    case InputDomain::Index:
      return random_tensor(type.dtype, type.shape, seed, integer ? -20 : -3, integer ? 20 : 3,
                           stream);
  }
  return Tensor(type.dtype, type.shape);
}

// Every dtype but f32, which the shape grids use.
const std::vector<DType> kOtherDTypes = [] {
  std::vector<DType> other = all_dtypes();
  other.erase(std::find(other.begin(), other.end(), DType::F32));
  return other;
}();

}  // namespace

void CaseList::add(OpKind op, Types types, Attributes attrs, int num_outputs,
                   std::vector<std::optional<Tensor>> fixed) {
  const OpSchema& schema = op_schema(op);
  ParityCase c{case_id(op, types, attrs, num_outputs), op, Graph{}, {}};
  StableHasher h;
  h.text(c.id);
  const uint64_t seed = h.digest();
  std::vector<ValueId> ids;
  for (size_t i = 0; i < types.size(); ++i) {
    if (!types[i]) {
      ids.push_back(kNoValue);
      continue;
    }
    ids.push_back(c.graph.add_input("in" + std::to_string(i), types[i]->dtype, types[i]->shape));
    if (i < fixed.size() && fixed[i]) {
      c.inputs.push_back(*fixed[i]);
    } else {
      const InputSpec& spec = schema.inputs[std::min(i, schema.inputs.size() - 1)];
      c.inputs.push_back(domain_tensor(*types[i], spec.domain, seed, i));
    }
  }
  c.graph.set_outputs(c.graph.add_node(op, ids, std::move(attrs), "op", num_outputs));
  out_.push_back(std::move(c));
}

void unary_cases(CaseList& cases, OpKind op) {
  const OpSchema& s = op_schema(op);
  const DTypeSet types = s.type_params.front().allowed;
  for (const Shape& shape : {Shape{}, Shape{0}, Shape{1}, Shape{7}, Shape{3, 5}, Shape{2, 3, 4},
                             Shape{kChunk - 1}, Shape{kChunk + 1}, Shape{3 * kChunk + 5}}) {
    cases.add(op, {f32(shape)});
  }
  for (DType d : kOtherDTypes) {
    if (types.contains(d)) cases.add(op, {of(d, {3, 5})});
  }
}

void binary_cases(CaseList& cases, OpKind op) {
  const DTypeSet types = op_schema(op).type_params.front().allowed;
  const DType main = types.contains(DType::F32) ? DType::F32 : DType::Bool;
  const std::vector<std::pair<Shape, Shape>> pairs = {{{3, 5}, {3, 5}},
                                                      {{3, 5}, {}},
                                                      {{}, {3, 5}},
                                                      {{3, 5}, {5}},
                                                      {{3, 5}, {3, 1}},
                                                      {{3, 1}, {1, 4}},
                                                      {{0, 5}, {5}},
                                                      {{2, 1, 3, 4}, {5, 1, 4}},
                                                      {{1}, {1}},
                                                      {{kChunk + 1}, {kChunk + 1}},
                                                      {{2, kChunk + 3}, {kChunk + 3}}};
  for (const auto& [a, b] : pairs) cases.add(op, {of(main, a), of(main, b)});
  for (DType d : kOtherDTypes) {
    if (d != main && types.contains(d)) {
      cases.add(op, {of(d, {3, 5}), of(d, {3, 5})});
      cases.add(op, {of(d, {3, 1}), of(d, {1, 4})});
    }
  }
}

Tensor tensor_of(DType dtype, const std::vector<double>& v, std::optional<Shape> shape) {
  Tensor t(dtype, shape ? *shape : Shape{static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.set_double(static_cast<int64_t>(i), v[i]);
  return t;
}

Tensor special(DType dtype) {
  return tensor_of(
      dtype, {kNaN, kInf,  -kInf,  0.0,  -0.0, 0.5,   -0.5,  1.5,  -1.5,  2.5,   -2.5,   1.0,
              -1.0, 1e-30, -1e-30, 1e-8, 3e38, -3e38, 1e-45, 88.0, -88.0, 0.999, -0.999, 4e15});
}

Tensor spaced(DType dtype, int64_t count, double lo, double hi) {
  std::vector<double> v(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    v[static_cast<size_t>(i)] =
        lo + (hi - lo) * static_cast<double>(i) / static_cast<double>(count - 1);
  }
  return tensor_of(dtype, v);
}

void special_cases(CaseList& cases, OpKind op, const Attributes& attrs) {
  for (DType d : {DType::F32, DType::F64}) {
    cases.add(op, {of(d, kSpecialShape)}, attrs, 1, {special(d)});
  }
}

void float_unary(CaseList& cases, OpKind op) {
  unary_cases(cases, op);
  special_cases(cases, op);
}

Tensor ints(DType d, const Shape& shape, int64_t lo, int64_t hi, uint64_t seed) {
  const Tensor r =
      random_tensor(DType::I64, shape, seed, static_cast<double>(lo), static_cast<double>(hi));
  Tensor out(d, shape);
  for (int64_t i = 0; i < r.numel(); ++i) out.set_int(i, r.get_int(i));
  return out;
}

Tensor indices(DType d, const Shape& shape, int64_t n, uint64_t seed) {
  return ints(d, shape, -n, n, seed);
}

}  // namespace volta::conformance::cases

namespace volta::conformance {
namespace {

// Each family file declares the cases of its family's ops and no other.
struct FamilyFile {
  OpFamily family;
  void (*add)(cases::CaseList& cases);
};
constexpr FamilyFile kFamilyFiles[] = {
    {OpFamily::Elementwise, cases::elementwise_cases},
    {OpFamily::Activation, cases::activation_cases},
    {OpFamily::Logical, cases::logical_cases},
    {OpFamily::Linalg, cases::linalg_cases},
    {OpFamily::Normalization, cases::normalization_cases},
    {OpFamily::Reduction, cases::reduction_cases},
    {OpFamily::Movement, cases::movement_cases},
    {OpFamily::Convolution, cases::convolution_cases},
    {OpFamily::Pooling, cases::pooling_cases},
    {OpFamily::Indexing, cases::indexing_cases},
    {OpFamily::Loss, cases::loss_cases},
    {OpFamily::Resampling, cases::resampling_cases},
};
static_assert(std::size(kFamilyFiles) == kOpFamilyCount, "one case file per family");

}  // namespace

std::vector<ParityCase> parity_cases() {
  std::vector<ParityCase> out;
  cases::CaseList cases(out);
  for (const FamilyFile& file : kFamilyFiles) {
    const size_t first = out.size();
    file.add(cases);
    for (size_t i = first; i < out.size(); ++i) {
      if (op_schema(out[i].op).family != file.family) {
        throw std::logic_error("parity case " + out[i].id + " is declared in cases_" +
                               std::string(op_family_name(file.family)) + ".cpp");
      }
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const ParityCase& a, const ParityCase& b) {
    return op_index(a.op) < op_index(b.op);
  });
  return out;
}

std::vector<ParityCase> parity_cases(OpKind op) {
  std::vector<ParityCase> all = parity_cases();
  std::vector<ParityCase> out;
  for (ParityCase& c : all) {
    if (c.op == op) out.push_back(std::move(c));
  }
  return out;
}

}  // namespace volta::conformance
