// A fine-tuned model as ONNX (fine_tune.h, fine_tuned_onnx): the original ModelProto with the
// trained initializers' data replaced, so every node, attribute and name stays the model's own.
#include <onnx/onnx_pb.h>

#include <map>
#include <string>

#include "volta/error.h"
#include "volta/onnx/fine_tune.h"

namespace volta::onnx {
namespace {

[[noreturn]] void refuse_tensor(const std::string& detail) {
  throw CheckpointError("CK-SHAPE-MISMATCH", detail);
}

std::string proto_type(const ::onnx::TensorProto& t) {
  std::string dims = "[";
  for (int i = 0; i < t.dims_size(); ++i) dims += (i == 0 ? "" : ",") + std::to_string(t.dims(i));
  return ::onnx::TensorProto::DataType_Name(
             static_cast<::onnx::TensorProto::DataType>(t.data_type())) +
         " " + dims + "]";
}

bool same_type(const ::onnx::TensorProto& t, const Tensor& value) {
  const bool dtype = (t.data_type() == ::onnx::TensorProto::FLOAT && value.dtype() == DType::F32) ||
                     (t.data_type() == ::onnx::TensorProto::DOUBLE && value.dtype() == DType::F64);
  return dtype && std::vector<int64_t>(t.dims().begin(), t.dims().end()) == value.shape().dims();
}

}  // namespace

std::string fine_tuned_onnx(const FineTuneModel& model, const LoadedCheckpoint& checkpoint) {
  check_fine_tune_model(model, checkpoint);
  ::onnx::ModelProto proto;
  if (!proto.ParseFromString(model.bytes)) {
    fail(ErrorCode::ImportInvalidModel, "the model '" + model.name + "' does not parse");
  }
  std::map<std::string, const CheckpointTensor*> trained;
  for (const CheckpointTensor& t : checkpoint.checkpoint.tensors) {
    if (!t.name.starts_with(kOptimizerTensorPrefix)) trained[t.name] = &t;
  }
  for (::onnx::TensorProto& init : *proto.mutable_graph()->mutable_initializer()) {
    const auto it = trained.find(init.name());
    if (it == trained.end()) continue;
    const Tensor value = tensor_of(*it->second);
    if (!same_type(init, value)) {
      refuse_tensor("tensor \"" + init.name() + "\" is " + std::string(dtype_name(value.dtype())) +
                    " " + value.shape().str() + "; the model's initializer is " + proto_type(init));
    }
    init.clear_float_data();
    init.clear_double_data();
    init.clear_external_data();
    init.set_data_location(::onnx::TensorProto::DEFAULT);
    init.set_raw_data(std::string(static_cast<const char*>(value.data()), value.nbytes()));
    trained.erase(it);
  }
  if (!trained.empty()) {
    refuse_tensor("tensor \"" + trained.begin()->first + "\" names no initializer of '" +
                  model.name + "'");
  }
  return proto.SerializeAsString();
}

}  // namespace volta::onnx
