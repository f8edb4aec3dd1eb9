#!/usr/bin/env bash
# One command from a fresh Debian machine to a tested build:
# install missing packages, configure, build, run the fast test lanes with CTest.
# Usage: scripts/ci/test.sh [preset]   (default: relassert; also dev, release, tsan)
# Slow soaks carry the CTest label `slow` and run only with VOLTA_SLOW=1. The relassert lane
# ends with the fuzz smoke (scripts/ci/fuzz.sh, VOLTA_FUZZ_SECONDS per target, default 15; 0
# leaves it out): its own clang build, each fuzz target run briefly.
set -euo pipefail
cd "$(dirname "$0")/../.."
preset="${1:-relassert}"

scripts/ci/bootstrap.sh
# The onnx-current lane's data, from the interop venv; without it that lane reports SKIPPED.
scripts/ci/onnx_current_data.sh || echo "test.sh: no onnx-current data; its lane will report SKIPPED" >&2
scripts/ci/build.sh "$preset"
scripts/ci/lint.sh "$preset"

exclude=(-LE slow)
[ "${VOLTA_SLOW:-0}" = "1" ] && exclude=()
jobs="$(nproc 2>/dev/null || echo 2)"
ctest --preset "$preset" "${exclude[@]}" -j "$jobs"

fuzz_seconds="${VOLTA_FUZZ_SECONDS:-15}"
if [ "$preset" = relassert ] && [ "$fuzz_seconds" != 0 ]; then
  scripts/ci/fuzz.sh "$fuzz_seconds"
fi
