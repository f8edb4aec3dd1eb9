#pragma once
// Internal to the importer: TensorProto <-> Tensor, through the ONNX library's types.

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <string>
#include <string_view>

#include "volta/ir/tensor.h"

namespace volta::onnx {

// The tensor a TensorProto holds (raw_data, the typed repeated fields, or external data in a
// file of `model_dir`, the folder of the model file; empty for a model parsed from bytes).
// I-UNSUPPORTED for element types Volta lacks and for external data without a model folder;
// I-INVALID-MODEL when the data does not match the dims, and for external data whose location
// leaves the model's folder (an absolute path, a `..`, a symlink out of it), whose file is
// missing, or whose offset and length do not fit it. `what` names the tensor in messages.
Tensor tensor_from_proto(const ::onnx::TensorProto& proto, std::string_view what,
                         const std::filesystem::path& model_dir = {});
::onnx::TensorProto proto_from_tensor(const Tensor& tensor, std::string_view name);

}  // namespace volta::onnx
