#include "lowering.h"

namespace volta::onnx {

void register_spatial_lowerings(LoweringTable& table) { (void)table; }

}  // namespace volta::onnx
