#include "volta/ir/printer.h"

#include <cstdio>
#include <ostream>

namespace volta {
namespace {

std::string type_text(const Value& v) { return std::string(dtype_name(v.dtype)) + v.shape.str(); }

std::string ref(const Graph& g, ValueId id) {
  if (!id.valid()) return "_";
  if (!g.has_value(id)) return "%<bad:" + std::to_string(id.index) + ">";
  return "%" + std::to_string(id.index);
}

}  // namespace

void StableHasher::bytes(const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) {
    state_ ^= p[i];
    state_ *= 1099511628211ull;
  }
}
void StableHasher::text(std::string_view s) {
  u64(s.size());
  bytes(s.data(), s.size());
}
void StableHasher::u64(uint64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));
  bytes(b, 8);
}

std::string hash_hex(uint64_t hash) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(hash));
  return buf;
}

std::string to_text(const Graph& g) {
  std::string out;
  for (ValueId v : g.inputs()) {
    out += "input " + ref(g, v) + " \"" + g.value(v).name + "\": " + type_text(g.value(v)) + "\n";
  }
  for (ValueId v : g.parameters()) {
    const Tensor& t = g.parameter_data(v);
    StableHasher h;
    h.bytes(t.data(), t.nbytes());
    out += "param " + ref(g, v) + " \"" + g.value(v).name + "\": " + type_text(g.value(v)) + " #" +
           hash_hex(h.digest()) + "\n";
  }
  for (ValueId v : g.states()) {
    out += "state " + ref(g, v) + " \"" + g.value(v).name + "\": " + type_text(g.value(v)) + "\n";
  }
  for (const Node& n : g.nodes()) {
    std::string outs;
    for (ValueId v : n.outputs) {
      if (!outs.empty()) outs += ", ";
      outs += ref(g, v);
      if (g.has_value(v)) outs += ": " + type_text(g.value(v));
    }
    std::string ins;
    for (ValueId v : n.inputs) ins += (ins.empty() ? "" : ", ") + ref(g, v);
    std::string attrs;
    for (const auto& [name, value] : n.attrs) {
      attrs += attrs.empty() ? " {" : ", ";
      attrs += name;
      attrs += '=';
      attrs += attr_value_str(value);
    }
    if (!attrs.empty()) attrs += "}";
    out += outs;
    out += " = ";
    out += op_name(n.op);
    out += "(" + ins + ")";
    out += attrs;
    out += "  # " + n.name + "\n";
  }
  std::string outs;
  for (ValueId v : g.outputs()) outs += (outs.empty() ? "" : ", ") + ref(g, v);
  out += "return " + outs + "\n";
  for (const StateUpdate& u : g.state_updates()) {
    out += "update " + ref(g, u.state) + " <- " + ref(g, u.value) + "\n";
  }
  return out;
}

std::ostream& operator<<(std::ostream& os, OpKind op) { return os << op_name(op); }
std::ostream& operator<<(std::ostream& os, OpFamily family) { return os << op_family_name(family); }
std::ostream& operator<<(std::ostream& os, DType dtype) { return os << dtype_name(dtype); }
std::ostream& operator<<(std::ostream& os, ErrorCode code) { return os << error_code_name(code); }
std::ostream& operator<<(std::ostream& os, const Shape& shape) { return os << shape.str(); }

uint64_t hash_tensors(std::span<const Tensor> tensors) {
  StableHasher h;
  for (const Tensor& t : tensors) {
    h.text(dtype_name(t.dtype()));
    h.text(t.shape().str());
    h.bytes(t.data(), t.nbytes());
  }
  return h.digest();
}

uint64_t ir_hash(const Graph& graph) {
  StableHasher h;
  h.text(to_text(graph));  // parameter contents enter through their digests in the text
  return h.digest();
}

}  // namespace volta
