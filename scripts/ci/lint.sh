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
sources=$(git ls-files '*.cpp')
out=$(mktemp)
# -p uses the preset's flags; warnings from system headers are not ours.
if ! echo "$sources" | xargs -P "$(nproc 2>/dev/null || echo 2)" -n 4 \
    clang-tidy -p "build/$preset" --quiet --extra-arg=-Wno-unknown-warning-option >"$out" 2>/dev/null; then
  :
fi
if grep -qE "(warning|error):" "$out"; then
  grep -E "(warning|error):" "$out" | sort -u >&2
  echo "lint: clang-tidy reported the findings above" >&2
  rm -f "$out"
  exit 1
fi
rm -f "$out"
echo "lint: clang-format and clang-tidy are clean"
