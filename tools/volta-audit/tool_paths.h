#pragma once
// Where volta-audit finds what it runs besides itself: this build's `volta` CLI (the training
// suite drives it; the perf onnxruntime peer lane exports its model with it) and the interop
// venv (scripts/ci/bootstrap.sh; the training suite's interop cases, the onnxruntime peer lane).
// Either path may not exist; each caller says what that means for it.

#include <filesystem>

namespace volta::audit {

// $VOLTA_CLI, else `volta` beside volta-audit, else the build tree's tools/volta/volta.
std::filesystem::path volta_cli_path();

// $VOLTA_INTEROP_VENV, else build/interop-venv in the source tree.
std::filesystem::path interop_venv_path();

}  // namespace volta::audit
