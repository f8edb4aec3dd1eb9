#!/usr/bin/env bash
# Regenerates conformance/onnx/expectations.tsv, and the ONNX coverage sections of README.md
# and governance/onnx-coverage.md, from a fresh run of the onnx suite on both backends.
# Lines whose outcome still holds keep their category, reason, issue and expiry; new ones are
# categorized by rule and need a human read before committing (git diff shows them).
# Usage: scripts/onnx_expectations.sh [--preset NAME] [--fresh]
#   --preset: the build to run (default release); --fresh: draft every line anew, dropping the
#   fields humans gave existing lines (use it while the file is still all drafted).
set -euo pipefail
cd "$(dirname "$0")/.."

preset=release
fresh=()
while [ $# -gt 0 ]; do
  case "$1" in
    --preset) preset="$2"; shift ;;
    --fresh) fresh=(--fresh) ;;
    *) echo "onnx_expectations.sh: unknown argument '$1' (supported: --preset NAME, --fresh)" >&2
       exit 2 ;;
  esac
  shift
done

cmake --preset "$preset" >/dev/null
cmake --build "build/$preset" --target volta-audit volta-onnx-expectations
audit="build/$preset/tools/volta-audit/volta-audit"
draft="build/$preset/conformance/onnx/volta-onnx-expectations"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
db="$scratch/onnx.db"

# Judged against the old file; the unexpected results are what the new file fixes.
"$audit" run onnx --db "$db" >/dev/null 2>"$scratch/run.log" || true
status=0
if ! "$draft" --db "$db" --file conformance/onnx/expectations.tsv "${fresh[@]}"; then
  echo "onnx_expectations.sh: some results cannot be expected (ERROR, CRASH, TIMEOUT: listed" \
       "at the end of conformance/onnx/expectations.tsv); fix them" >&2
  status=1
fi
# Judged against the new file: only those can still be unexpected.
"$audit" run onnx --db "$db" >/dev/null 2>"$scratch/rerun.log" || status=1
if ! "$audit" docs sync --db "$db"; then
  echo "onnx_expectations.sh: docs sync could not regenerate every section (see above)" >&2
  status=1
fi
exit "$status"
