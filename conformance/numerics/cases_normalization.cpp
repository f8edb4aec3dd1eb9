#include "case_list.h"

namespace volta::conformance::cases {

void normalization_cases(CaseList& cases) { (void)cases; }

}  // namespace volta::conformance::cases
