#!/usr/bin/env bash
# Lint lane: clang-format must leave every C++ file unchanged, and clang-tidy (the checks in
# .clang-tidy) must be quiet over the compile database of the given preset (default relassert).
set -euo pipefail
cd "$(dirname "$0")/../.."
preset="${1:-relassert}"

files=$(git ls-files '*.cpp' '*.h')
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
out=$(mktemp)
crashed=$(mktemp)
# One file per invocation, so one crash cannot hide the findings of the files after it.
export preset out crashed
echo "$sources" | xargs -P "$(nproc 2>/dev/null || echo 2)" -I{} sh -c '
  clang-tidy -p "build/$preset" --quiet --extra-arg=-Wno-unknown-warning-option "{}" \
    >>"$out" 2>/dev/null
  rc=$?
  [ $rc -gt 1 ] && echo "{} (exit $rc)" >>"$crashed"
  exit 0'
if [ -s "$crashed" ]; then
  cat "$crashed" >&2
  echo "lint: clang-tidy crashed on the files above" >&2
  rm -f "$out" "$crashed"
  exit 1
fi
if grep -qE "(warning|error):" "$out"; then
  grep -E "(warning|error):" "$out" | sort -u >&2
  echo "lint: clang-tidy reported the findings above" >&2
  rm -f "$out" "$crashed"
  exit 1
fi
rm -f "$out" "$crashed"
echo "lint: clang-format and clang-tidy are clean"
