#include "cpu_kernel.h"

namespace volta::cpu {

void register_resize_kernels(KernelTable& table) { (void)table; }

}  // namespace volta::cpu
