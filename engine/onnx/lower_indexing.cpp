#include "lowering.h"

namespace volta::onnx {

void register_indexing_lowerings(LoweringTable& table) { (void)table; }

}  // namespace volta::onnx
