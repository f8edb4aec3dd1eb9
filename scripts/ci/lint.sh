#!/usr/bin/env bash
# Lint lane: clang-format must leave every C++ and CUDA file unchanged, and clang-tidy (the
# checks in .clang-tidy) must be quiet over the compile database of the given preset (default
# relassert) for the C++ files.
set -euo pipefail
cd "$(dirname "$0")/../.."
preset="${1:-relassert}"

files=$(git ls-files '*.cpp' '*.h' '*.cu' '*.cuh')
unformatted=$(clang-format --dry-run $files 2>&1 | grep -c "warning:" || true)
if [ "$unformatted" -ne 0 ]; then
  clang-format --dry-run $files 2>&1 | grep "warning:" | cut -d: -f1 | sort -u >&2
  echo "lint: clang-format would change the files above: run clang-format -i on them" >&2
  exit 1
fi

[ -f "build/$preset/compile_commands.json" ] || scripts/ci/build.sh "$preset" >/dev/null
# clang-tidy 14 (Debian 12) corrupts its own heap while analysing these files, whatever the
# checks: a front-end bug, not a finding. They are still compiled with -Werror by GCC.
tidy_skip=(
  engine/backends/cpu/kernels/elementwise_cast.cpp
)
sources=$(git ls-files '*.cpp' | grep -vxF -f <(printf '%s\n' "${tidy_skip[@]}"))
# Each file's clang-tidy result, findings included, is cached (scripts/ci/lint_tidy.sh says
# what the key covers) beside ccache's, in ~/.cache/volta-clang-tidy, so that a fresh clone on
# a machine that has linted before (a CI runner) reuses it: a cold lint is ~17 minutes of a CI
# run. VOLTA_TIDY_CACHE names another directory; removing the directory clears it.
tidy_cache="${VOLTA_TIDY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/volta-clang-tidy}"
# shellcheck disable=SC2086  # one file name per word, as git ls-files prints them
scripts/ci/lint_tidy.sh "build/$preset" "$tidy_cache" $sources
echo "lint: clang-format and clang-tidy are clean"
