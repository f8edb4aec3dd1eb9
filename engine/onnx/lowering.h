#pragma once
// Internal to the ONNX importer: how one ONNX node is lowered onto internal ops. Each
// lower_<family>.cpp registers the ONNX ops of its family (the family they are reported under);
// the importer calls the lowerings in node order. Backends never see ONNX opset numbers: a lowering
// reads since_version() and maps every version it accepts onto the stable internal ops.

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "volta/ir/graph.h"
#include "volta/ir/op_schema.h"
#include "volta/onnx/model.h"

namespace volta::onnx {

// Integer lists, as ONNX attributes and Volta's shapes and attributes hold them.
using Ints = std::vector<int64_t>;

// An ONNX sequence (seq(tensor)) known at import time: its element type and its tensors in
// order. Sequences live only inside the graph, never at its inputs or outputs: the sequence
// ops' lowerings build and read them, and each element is an ordinary value of the graph.
struct Sequence {
  DType dtype = DType::F32;
  std::vector<ValueId> items;
};

class LoweringContext {
 public:
  virtual ~LoweringContext() = default;

  // ---- The ONNX node ---------------------------------------------------------------------
  virtual const std::string& op_type() const = 0;
  // The node's name, or "<op_type>_<index>" when the model leaves it unnamed.
  virtual const std::string& node_name() const = 0;
  // The version of the op's ONNX schema in force for the model's opset: Softmax in an
  // opset-15 model is version 13. Lowerings branch on this, never on the model opset.
  virtual int since_version() const = 0;

  // ---- Inputs, in ONNX order (an empty name is an absent optional input) ------------------
  virtual int num_inputs() const = 0;
  virtual bool has_input(int i) const = 0;
  // The internal value of input i; I-INVALID-MODEL when a required input is absent.
  virtual ValueId input(int i) = 0;
  virtual const TypeInfo& input_type(int i) = 0;
  // The value of input i when it must be known at import time (Reshape's shape, Slice's
  // starts, Clip's bounds, TopK's k, ...). Known when it comes from initializers, Constant
  // nodes and shapes, or from graph inputs whose values were given: the plan is then
  // specialized on those inputs' values. Otherwise I-NOT-STATIC naming the input and `what`.
  virtual const Tensor& constant_input(int i, std::string_view what) = 0;
  // constant_input as integers (any integer dtype, scalar or 1-D), as the one integer of a
  // scalar or one-element input, or as one number.
  std::vector<int64_t> constant_ints(int i, std::string_view what);
  int64_t constant_int(int i, std::string_view what);
  double constant_scalar(int i, std::string_view what);
  // Whether input i's value is known at import time without specializing on a graph input.
  virtual bool is_constant(int i) = 0;
  // constant_input for a value this lowering built (a loop body's condition output).
  virtual const Tensor& constant_value(ValueId v, std::string_view what) = 0;

  // Input i as a sequence; I-UNSUPPORTED when it is a tensor (input() likewise refuses a
  // sequence, naming the ops that take one).
  virtual const Sequence& input_sequence(int i) = 0;

  // ---- Attributes ---------------------------------------------------------------------
  // Every attribute on the node must be read by its lowering: an attribute left unread is
  // reported as unsupported, so no attribute is ever silently ignored. A default of nullopt
  // makes the attribute required.
  virtual bool has_attr(std::string_view name) const = 0;
  virtual int64_t attr_int(std::string_view name, std::optional<int64_t> def) = 0;
  virtual double attr_float(std::string_view name, std::optional<double> def) = 0;
  virtual std::string attr_string(std::string_view name, std::optional<std::string> def) = 0;
  virtual std::vector<int64_t> attr_ints(std::string_view name,
                                         std::optional<std::vector<int64_t>> def) = 0;
  virtual std::vector<double> attr_floats(std::string_view name,
                                          std::optional<std::vector<double>> def) = 0;
  virtual std::vector<std::string> attr_strings(std::string_view name,
                                                std::optional<std::vector<std::string>> def) = 0;
  virtual Tensor attr_tensor(std::string_view name) = 0;
  // Lowers the graph attribute `name` (If's branches, FlexAttention's modifiers) into this
  // import, in this node's scope: its formal inputs bound to `inputs` (their number and element
  // types must match: I-INVALID-MODEL otherwise), its initializers and nodes join the graph,
  // the outer values stay visible to it, and its outputs' values are returned in order.
  virtual std::vector<ValueId> lower_graph_attr(std::string_view name,
                                                std::span<const ValueId> inputs = {}) = 0;
  // Marks an attribute as read when its only accepted value was checked by hand.
  virtual void consume_attr(std::string_view name) = 0;

  // ---- Outputs ------------------------------------------------------------------------
  virtual int num_outputs() const = 0;
  // Output i is declared with a non-empty name (optional outputs are often left out).
  virtual bool has_output(int i) const = 0;
  // The number of outputs to give an internal node: up to the last one the node declares.
  int declared_outputs() const;
  virtual void set_output(int i, ValueId value) = 0;
  virtual void set_output_sequence(int i, Sequence value) = 0;
  // An output fully known at import time (Shape, Size, Range, ConstantOfShape, ...): it
  // becomes a Constant node and can feed other nodes' shape arguments.
  virtual void set_output_constant(int i, Tensor value) = 0;

  // ---- Building -----------------------------------------------------------------------
  // Add internal nodes; output types are inferred from the op table. Node names derive from
  // the ONNX node's so plans and errors point back at the model. Halves on an op that takes
  // f32 but not them are computed in f32 between Casts (half_through_f32).
  virtual ValueId add(OpKind op, std::vector<ValueId> inputs, Attributes attrs = {}) = 0;
  virtual std::vector<ValueId> add_node(OpKind op, std::vector<ValueId> inputs, Attributes attrs,
                                        int num_outputs) = 0;
  virtual ValueId constant(Tensor value) = 0;
  virtual const Graph& graph() const = 0;
  TypeInfo type_of(ValueId v) const { return graph().value(v).type(); }

  // ---- Errors ------------------------------------------------------------------------
  // I-UNSUPPORTED: "node 'name' (OpType, version N): <what>". Say what is supported.
  [[noreturn]] void unsupported(const std::string& what) const;
  // I-INVALID-MODEL for input the ONNX spec forbids.
  [[noreturn]] void invalid(const std::string& what) const;
};

// Helpers the lowering files share.
// A scalar Constant node of `dtype` holding `value`.
ValueId scalar_constant(LoweringContext& ctx, DType dtype, double value);
// Whether `dtype` is a half (f16, bf16) that `allowed` lacks but computes through f32: the
// importer then casts the op's inputs of that type parameter to f32 and its outputs back, one
// rounding per result as a half kernel would (LoweringContext::add).
bool half_through_f32(DTypeSet allowed, DType dtype);
// `allowed` with the halves half_through_f32 admits.
DTypeSet importable(DTypeSet allowed);
// Refuses an input dtype the internal op has no kernel contract for (its first type parameter)
// and that it does not compute through f32.
void require_dtype(LoweringContext& ctx, OpKind op, DType dtype);
// Refuses a constant output too large to compute at import time (2^28 elements).
void check_constant_size(LoweringContext& ctx, const Shape& shape);
// A 0 / 1 attribute (`def` when absent) as a bool; any other value is I-INVALID-MODEL.
bool attr_flag(LoweringContext& ctx, std::string_view name, int64_t def = 0);
// `v` in `dtype`: v itself when it has that dtype already, else a Cast of it.
ValueId as_dtype(LoweringContext& ctx, ValueId v, DType dtype);
// A value's type as errors name it: "f32[2,3]".
std::string type_text(const TypeInfo& t);

// The Volta dtype for an ONNX TensorProto element type, or nullopt (float16, uint8, string,
// ...). onnx_type_name (volta/onnx/model.h) names any element type ("FLOAT16").
std::optional<DType> dtype_from_onnx(int64_t elem_type);
int64_t onnx_from_dtype(DType dtype);
// The dtype for an ONNX element type given in an attribute (Cast's "to"), or unsupported()
// naming it and the supported ones.
DType attr_dtype(const LoweringContext& ctx, int64_t elem_type, std::string_view what);

using LowerFn = void (*)(LoweringContext& ctx);

// One ONNX op type and how it lowers. The registry of these is the one source of Volta's ONNX
// mapping: the op table declares none (OpSchema::no_onnx_lowering only says why no ONNX op
// lowers onto an op), and onnx_lowering_test checks every op of the table against it.
// ONNX's preview domains, whose ops may still change: Volta reads opset 1 of each (ONNX 1.23).
inline constexpr std::string_view kPreviewDomain = "ai.onnx.preview";
inline constexpr std::string_view kTrainingDomain = "ai.onnx.preview.training";
inline constexpr int64_t kNewestPreviewOpset = 1;
// ONNX's classical machine-learning domain: Volta reads its opsets 1 to kNewestMlOpset (ONNX
// 1.23). Each op lowered from it has one schema version up to that opset, its min_version.
inline constexpr std::string_view kMlDomain = "ai.onnx.ml";
inline constexpr int64_t kNewestMlOpset = 5;

struct Lowering {
  std::string_view op_type;  // an op of the default domain ("ai.onnx"), unless `domain` says
  OpFamily family;           // the family its tests are reported under: onto's when it has one
  int min_version;           // the oldest schema version handled; older ones are unsupported
  LowerFn lower;
  std::optional<OpKind> onto;  // the internal op it is; nullopt: it becomes constants (Shape,
                               // Range) or a composition of other ops (Sum, RNN, ReduceLogSum)
  std::string_view domain;     // empty: the default domain; else kPreviewDomain,
                               // kTrainingDomain or kMlDomain
};

class LoweringTable {
 public:
  // An ONNX op lowered onto internal op `onto`: that op with the ONNX versions' attribute and
  // input forms resolved, perhaps with helper nodes around it (or none, as Identity).
  void add(std::string_view op_type, OpKind onto, int min_version, LowerFn lower);
  // An ONNX op that becomes constants or a composition of internal ops, reported under `family`.
  void add_composite(std::string_view op_type, OpFamily family, int min_version, LowerFn lower);
  // A composite op of a preview domain (kPreviewDomain, kTrainingDomain), read at its version 1.
  void add_preview_composite(std::string_view domain, std::string_view op_type, OpFamily family,
                             LowerFn lower);
  // A composite op of the ai.onnx.ml domain (kMlDomain), first defined in its opset
  // `min_version`.
  void add_ml_composite(std::string_view op_type, OpFamily family, int min_version, LowerFn lower);
  void add(Lowering lowering);  // throws std::logic_error on a duplicate op_type
  const Lowering* find(std::string_view op_type) const;
  const std::map<std::string, Lowering, std::less<>>& all() const { return table_; }

 private:
  std::map<std::string, Lowering, std::less<>> table_;
};

// One function per family file, lower_<family>.cpp (an oversized family in parts:
// lower_<family>_<part>.cpp); lowering_table() calls them all.
void register_elementwise_lowerings(LoweringTable& table);
void register_elementwise_quantize_lowerings(LoweringTable& table);   // (De)QuantizeLinear
void register_elementwise_optimizer_lowerings(LoweringTable& table);  // Adagrad, Adam, Momentum
void register_activation_lowerings(LoweringTable& table);
void register_logical_lowerings(LoweringTable& table);
void register_logical_loop_lowerings(LoweringTable& table);  // Loop, Scan
void register_linalg_lowerings(LoweringTable& table);
void register_linalg_quantized_lowerings(LoweringTable& table);  // MatMulInteger, QLinearMatMul
void register_linalg_rnn_lowerings(LoweringTable& table);
void register_attention_lowerings(LoweringTable& table);      // Attention, RotaryEmbedding (linalg)
void register_linalg_signal_lowerings(LoweringTable& table);  // DFT, STFT, MelWeightMatrix
void register_linalg_recurrent_lowerings(LoweringTable& table);  // LinearAttention
void register_normalization_lowerings(LoweringTable& table);
void register_reduction_lowerings(LoweringTable& table);
void register_movement_lowerings(LoweringTable& table);
void register_movement_sequence_lowerings(LoweringTable& table);  // Sequence*, SplitToSequence
void register_convolution_lowerings(LoweringTable& table);
void register_convolution_quantized_lowerings(LoweringTable& table);  // ConvInteger, QLinearConv
void register_convolution_deform_lowerings(LoweringTable& table);     // DeformConv
void register_pooling_lowerings(LoweringTable& table);
void register_pooling_roi_lowerings(LoweringTable& table);  // RoiAlign
void register_indexing_lowerings(LoweringTable& table);
// ai.onnx.ml's gathers (lower_indexing_ml.cpp).
void register_indexing_ml_lowerings(LoweringTable& table);
void register_loss_lowerings(LoweringTable& table);
void register_resampling_lowerings(LoweringTable& table);

const LoweringTable& lowering_table();

// The version of `op`'s schema in force at the model's `opset`, when `lowering` reads it;
// otherwise `problem` says why not: an opset with no such op (`invalid`: the model is
// malformed), a version older than the lowering's oldest, or a newer version whose form no
// lowering reads yet (onnx_versions.h).
struct VersionCheck {
  int version = 0;
  std::string problem;
  bool invalid = false;
};
VersionCheck check_version(std::string_view op, int64_t opset, const Lowering& lowering);

// A node's lowering for a model importing `opset` of the default domain and `domain_opset` of
// the node's domain when that is a preview or the ML domain (0: none), and the version of its
// schema in force; or, with `lowering` null or `version.problem` set, why it cannot be lowered:
// an unknown domain or op, or a version check_version refuses.
struct NodeLowering {
  const Lowering* lowering = nullptr;
  VersionCheck version;
};
NodeLowering find_lowering(std::string_view domain, std::string_view op_type, int64_t opset,
                           int64_t domain_opset);

}  // namespace volta::onnx
