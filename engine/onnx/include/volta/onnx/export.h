#pragma once
// ONNX export: a Volta graph as an ONNX model of the default domain at opset 17, serialized
// with the ONNX library's own protobuf types (the importer's, engine/onnx/README.md).
//
// - Graph inputs become ONNX inputs and graph outputs ONNX outputs, with their dtypes and
//   (static) shapes; every node output is declared in value_info.
// - Parameters become initializers, and so do states: an inference graph's states are its
//   weights, and the caller passes their values (`states`, indexed like graph.states()). A
//   graph that updates a state (a training step) is refused.
// - Each node becomes the ONNX op of the same name with its attributes (the op table's
//   defaults written out), except where ONNX differs: attributes that opset 17 takes as inputs
//   (Reshape's shape, Slice's starts, Clip's bounds, TopK's k, ...) become int64 or data
//   initializers, and the ops ONNX 17 lacks are written as their exact definitions (Gelu,
//   FusedMatMul). Backward-only ops (ConvGradFilter) are refused. onnx_export_table() lists all.
// - Initializer data is raw_data, little-endian: exactly the tensor's bytes.
// - ONNX float attributes are f32: a double attribute (LeakyRelu's alpha, an epsilon) is
//   written as the nearest f32, which is what an f32 kernel computes with anyway.
//
// Every refusal is VoltaError(InvalidArgument) naming the node, its op and what is supported.

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "volta/ir/graph.h"

namespace volta::onnx {

struct ExportOptions {
  int64_t opset = 17;  // of the default domain; the only one written, others are refused
  std::string producer_name = "volta";
  std::string producer_version = {};
  std::string graph_name = "volta";
};

// The serialized ModelProto of `graph`. `states` holds each state's value, indexed like
// graph.states() (empty for a graph without states); each must match its state's dtype and
// shape.
std::string export_onnx(const Graph& graph, std::span<const Tensor> states,
                        const ExportOptions& options = {});

// export_onnx written to `file` atomically: a temporary file beside it, fsync, rename. A
// failure leaves any previous file intact and no temporary behind.
void export_onnx_file(const Graph& graph, const std::filesystem::path& file,
                      std::span<const Tensor> states, const ExportOptions& options = {});
// A serialized model written to `file` the same way (a fine-tuned model: fine_tune.h).
void write_onnx_file(std::string_view bytes, const std::filesystem::path& file);

// How each op of the op table is exported: the ONNX ops it becomes, or why it cannot be.
struct OpExport {
  OpKind op;
  std::vector<std::string_view> onnx_ops;  // empty: refused
  std::string_view note;                   // the input forms or decomposition; why refused
};
// Every op of the op table, in OpKind order.
std::span<const OpExport> onnx_export_table();

}  // namespace volta::onnx
