#include "ref_ops.h"

namespace volta::reference {

void register_elementwise(RefTable& table) { (void)table; }

}  // namespace volta::reference
