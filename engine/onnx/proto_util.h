#pragma once
// Internal to the importer: TensorProto <-> Tensor, through the ONNX library's types.

#include <onnx/onnx_pb.h>

#include <string>
#include <string_view>

#include "volta/ir/tensor.h"

namespace volta::onnx {

// The tensor a TensorProto holds (raw_data or the typed repeated fields). I-UNSUPPORTED for
// element types Volta lacks and for external data; I-INVALID-MODEL when the data does not
// match the dims. `what` names the tensor in messages.
Tensor tensor_from_proto(const ::onnx::TensorProto& proto, std::string_view what);
::onnx::TensorProto proto_from_tensor(const Tensor& tensor, std::string_view name);

}  // namespace volta::onnx
