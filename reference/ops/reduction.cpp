#include "ref_ops.h"

namespace volta::reference {

void register_reduction(RefTable& table) { (void)table; }

}  // namespace volta::reference
