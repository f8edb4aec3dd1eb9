#pragma once
// The machine a run happens on, as recorded in provenance and shown by `volta doctor`.

#include <string>

namespace volta {

std::string host_cpu_model();  // "model name" of /proc/cpuinfo, "unknown" where absent
std::string host_name();       // gethostname()

}  // namespace volta
