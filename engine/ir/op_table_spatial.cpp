// The op table's part for Conv, ConvTranspose and pooling.

#include "op_table_builders.h"

namespace volta::op_table {

void add_spatial_schemas(std::vector<OpSchema>& t) { (void)t; }

}  // namespace volta::op_table
