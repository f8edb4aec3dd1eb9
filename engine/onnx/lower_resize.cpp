#include "lowering.h"

namespace volta::onnx {

void register_resize_lowerings(LoweringTable& table) { (void)table; }

}  // namespace volta::onnx
