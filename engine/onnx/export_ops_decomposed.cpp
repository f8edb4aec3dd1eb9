// ONNX export rules of the ops opset 17 does not have: Gelu (ONNX opset 20) and the internal
// FusedMatMul and PermutedMatMul are written as their definitions; the backward-only
// ConvGradFilter is refused.

#include <array>
#include <cmath>
#include <numbers>

#include "export_writer.h"
#include "lowering.h"

namespace volta::onnx {

void emit_gelu(ModelWriter& w, const Node& node, const std::string& x, DType dtype,
               const std::string& out, std::string_view approximate) {
  const std::string base = w.node_name(node);
  // Each step's output: a fresh value, or `out` for the last one.
  auto step = [&](std::string_view op, std::vector<std::string> inputs, std::string_view part,
                  bool last = false) {
    std::string y = last ? out : w.fresh_name(base + "." + std::string(part));
    w.add_node(op, std::move(inputs), {y}, base + "/" + std::string(part));
    return y;
  };
  auto constant = [&](double v) { return w.scalar_initializer(dtype, v); };
  const bool tanh_form = approximate == "tanh";
  // Below the floor the result is -0 (x * Phi(x) underflows), but -inf * 0 would be NaN: the
  // input is clamped there, as Volta's kernels clamp it. NaN compares false and stays NaN.
  const std::string floor = constant(tanh_form ? -30.0 : -40.0);
  const std::string xc =
      step("Where", {step("Less", {x, floor}, "below_floor"), floor, x}, "clamped");
  std::string phi_term;  // erf(x / sqrt(2)), or tanh(sqrt(2 / pi) * (x + 0.044715 x^3))
  if (tanh_form) {
    const std::string cube = step("Mul", {step("Mul", {xc, xc}, "square"), xc}, "cube");
    const std::string inner =
        step("Add", {xc, step("Mul", {cube, constant(0.044715)}, "cubic")}, "inner");
    const std::string u =
        step("Mul", {inner, constant(std::sqrt(2.0 / std::numbers::pi))}, "scaled");
    phi_term = step("Tanh", {u}, "tanh");
  } else {
    phi_term = step("Erf", {step("Div", {xc, constant(std::numbers::sqrt2)}, "div")}, "erf");
  }
  const std::string one_plus = step("Add", {phi_term, constant(1.0)}, "one_plus");
  step("Mul", {step("Mul", {xc, one_plus}, "times_x"), constant(0.5)}, "half", true);
}

namespace {

using K = OpKind;

// f16 and bf16 compute Gelu in f32 and round once: the definition runs between two Casts, so
// that no step of it rounds to the 16-bit type.
void emit_gelu_node(ModelWriter& w, const Node& node) {
  const DType dtype = w.graph().value(node.inputs[0]).dtype;
  const std::string approximate = AttrReader(node).get_string("approximate");
  if (!is_half(dtype)) {
    emit_gelu(w, node, w.name_of(node.inputs[0]), dtype, w.name_of(node.outputs[0]), approximate);
    return;
  }
  const std::string base = w.node_name(node);
  const std::string wide = w.fresh_name(base + ".f32");
  const std::string result = w.fresh_name(base + ".gelu_f32");
  set_attribute(w.add_node("Cast", {w.name_of(node.inputs[0])}, {wide}, base + "/widen"), "to",
                onnx_from_dtype(DType::F32));
  emit_gelu(w, node, wide, DType::F32, result, approximate);
  set_attribute(w.add_node("Cast", {result}, {w.name_of(node.outputs[0])}, base + "/round"), "to",
                onnx_from_dtype(dtype));
}

// activation(MatMul(A, B) + bias), the Add reading bias first when bias_first says so: the
// ops the gemm-epilogue-fusion pass fused, which it computes bit for bit.
void emit_fused_matmul(ModelWriter& w, const Node& node) {
  const AttrReader attrs(node);
  const std::string base = w.node_name(node);
  const std::string& activation = attrs.get_string("activation");
  const std::string out = w.name_of(node.outputs[0]);
  const std::string product = w.fresh_name(base + ".matmul");
  w.add_node("MatMul", {w.name_of(node.inputs[0]), w.name_of(node.inputs[1])}, {product},
             base + "/matmul");
  const std::string& bias = w.name_of(node.inputs[2]);
  const std::string sum = activation == "none" ? out : w.fresh_name(base + ".bias_add");
  w.add_node(
      "Add",
      attrs.get_int("bias_first") != 0 ? std::vector{bias, product} : std::vector{product, bias},
      {sum}, base + "/bias_add");
  if (activation == "relu") {
    w.add_node("Relu", {sum}, {out}, base + "/relu");
  } else if (activation == "gelu" || activation == "gelu_tanh") {
    emit_gelu(w, node, sum, w.graph().value(node.inputs[0]).dtype, out,
              activation == "gelu" ? "none" : "tanh");
  }
}

// Transpose(MatMul(Transpose(A, perm_a), Transpose(B, perm_b)), perm_y): the ops the
// matmul-transpose-folding pass folded, which it computes bit for bit. An identity permutation
// is written as no Transpose at all.
void emit_permuted_matmul(ModelWriter& w, const Node& node) {
  const AttrReader attrs(node);
  const std::string base = w.node_name(node);
  const auto is_identity = [&](std::string_view perm_name) {
    const Ints& perm = attrs.get_ints(perm_name);
    for (size_t i = 0; i < perm.size(); ++i) {
      if (perm[i] != static_cast<int64_t>(i)) return false;
    }
    return true;
  };
  const auto transpose = [&](const std::string& x, std::string_view perm_name,
                             const std::string& y) {
    set_attribute(w.add_node("Transpose", {x}, {y}, base + "/" + std::string(perm_name)), "perm",
                  attrs.get_ints(perm_name));
  };
  std::array<std::string, 2> factors;
  for (size_t i = 0; i < factors.size(); ++i) {
    const std::string_view perm_name = i == 0 ? "perm_a" : "perm_b";
    factors[i] = w.name_of(node.inputs[i]);
    if (is_identity(perm_name)) continue;
    std::string stem = base;
    stem.append(".").append(perm_name);
    const std::string y = w.fresh_name(stem);
    transpose(factors[i], perm_name, y);
    factors[i] = y;
  }
  const std::string out = w.name_of(node.outputs[0]);
  const bool y_identity = is_identity("perm_y");
  const std::string product = y_identity ? out : w.fresh_name(base + ".matmul");
  w.add_node("MatMul", {factors[0], factors[1]}, {product}, base + "/matmul");
  if (!y_identity) transpose(product, "perm_y", out);
}

}  // namespace

void add_decomposed_rules(std::vector<ExportRule>& rules) {
  rules.push_back(
      {K::Gelu,
       &emit_gelu_node,
       {"Less", "Where", "Div", "Erf", "Add", "Mul", "Tanh", "Cast"},
       "ONNX's Gelu is opset 20: x * 0.5 * (1 + erf(x / sqrt(2))), or with "
       "approximate=tanh x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))), x "
       "clamped below at -40 (tanh: -30) where the result is -0 as in Volta; f16 and bf16 "
       "between Casts to f32 and back, as Volta computes them"});
  rules.push_back({K::FusedMatMul,
                   &emit_fused_matmul,
                   {"MatMul", "Add", "Relu", "Less", "Where", "Div", "Erf", "Mul", "Tanh"},
                   "internal (the gemm-epilogue-fusion pass): the MatMul, Add and activation "
                   "it fused"});
  rules.push_back({K::PermutedMatMul,
                   &emit_permuted_matmul,
                   {"Transpose", "MatMul"},
                   "internal (the matmul-transpose-folding pass): the Transposes and MatMul it "
                   "folded"});
  rules.push_back({K::ConvGradFilter,
                   nullptr,
                   {},
                   "ConvGradFilter is backward-only (made by the Conv VJP rules) and has no ONNX "
                   "op; supported: inference graphs, every op of onnx_export_table() but "
                   "ConvGradFilter"});
}

}  // namespace volta::onnx
