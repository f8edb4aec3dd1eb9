// Fuzz target: TensorProto files (the backend test data's input_N.pb, `volta run --input`).
// A tensor read back must round-trip: written and read again it has the same dtype, shape and
// bytes.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "volta/error.h"
#include "volta/onnx/model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const volta::onnx::NamedTensor read = volta::onnx::parse_tensor_file(
        std::string_view(reinterpret_cast<const char*>(data), size), "<fuzz input>");
    const volta::Tensor& tensor = read.tensor;
    const volta::onnx::NamedTensor again = volta::onnx::parse_tensor_file(
        volta::onnx::tensor_file_bytes(tensor, read.name), "<again>");
    if (again.name != read.name || again.tensor.dtype() != tensor.dtype() ||
        again.tensor.shape() != tensor.shape() ||
        std::memcmp(again.tensor.data(), tensor.data(), tensor.nbytes()) != 0) {
      std::abort();  // a tensor that does not survive its own file format
    }
  } catch (const volta::VoltaError&) {
    // A refusal with a diagnostic code.
  }
  return 0;
}
