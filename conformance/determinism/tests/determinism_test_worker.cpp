// The suite's fresh worker process for its tests: what `volta-audit __determinism-worker` runs
// (determinism_worker_main), without building volta-audit.
#include <cstdio>
#include <exception>

#include "volta/conformance/determinism_suite.h"

int main(int argc, char** argv) {
  try {
    return volta::conformance::determinism_worker_main({argv + 1, argv + argc});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "determinism_test_worker: %s\n", e.what());
    return 1;
  }
}
