#pragma once
// Where volta-audit finds what it runs besides itself: the source tree (expectations, policies,
// governance files, peer scripts), this build's `volta` CLI (the training suite drives it; the
// perf onnxruntime peer lane exports its model with it) and the interop venv
// (scripts/ci/bootstrap.sh; the training suite's interop cases, the onnxruntime peer lane).
// A path may not exist; each caller says what that means for it.

#include <filesystem>

namespace volta::audit {

// $VOLTA_SOURCE_DIR, else the source tree this binary was built from. The override lets a
// relocated binary (the CUDA bundle, scripts/ci/cuda_bundle.sh) read the copy of the tree's
// files that travels with it; committed_inputs still checks each file against the commit.
std::filesystem::path source_dir();

// $VOLTA_CLI, else `volta` beside volta-audit, else the build tree's tools/volta/volta.
std::filesystem::path volta_cli_path();

// $VOLTA_INTEROP_VENV, else build/interop-venv in source_dir().
std::filesystem::path interop_venv_path();

}  // namespace volta::audit
