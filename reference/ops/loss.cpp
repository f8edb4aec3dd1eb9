#include "ref_util.h"

namespace volta::reference {

void register_loss(RefTable& table) { (void)table; }

}  // namespace volta::reference
