// Fuzz target: the ONNX suite's committed TSV files, each parser fed the same bytes:
// conformance/expectations/onnx*.tsv (parse_onnx_expectations) and conformance/onnx/
// tolerances.tsv (OnnxTolerances::parse). A malformed file must be refused with a VoltaError
// naming the line.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "volta/conformance/onnx_expectations.h"
#include "volta/conformance/onnx_tolerances.h"
#include "volta/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    volta::conformance::parse_onnx_expectations(text, "<fuzz input>");
  } catch (const volta::VoltaError&) {
  }
  try {
    volta::conformance::OnnxTolerances::parse(text);
  } catch (const volta::VoltaError&) {
  }
  return 0;
}
