#include "lowering.h"

namespace volta::onnx {

void register_core_lowerings(LoweringTable& table) { (void)table; }

}  // namespace volta::onnx
