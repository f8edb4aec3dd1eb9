// The op table's part for Resize and Det.

#include "op_table_builders.h"

namespace volta::op_table {

void add_resize_schemas(std::vector<OpSchema>& t) { (void)t; }

}  // namespace volta::op_table
