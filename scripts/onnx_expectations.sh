#!/usr/bin/env bash
# Regenerates an ONNX corpus's expectations (onnx: conformance/onnx/expectations.tsv;
# onnx-current: conformance/onnx/expectations-current.tsv), and the ONNX coverage sections of
# README.md and governance/onnx-coverage.md, from a fresh run of the suite on both backends.
# Lines whose outcome still holds keep their category, reason, issue and expiry; new ones are
# categorized by rule and need a human read before committing (git diff shows them).
# Usage: scripts/onnx_expectations.sh [--suite onnx|onnx-current] [--preset NAME] [--fresh]
#   --suite: the corpus (default onnx; onnx-current first generates its data with
#   scripts/ci/onnx_current_data.sh); --preset: the build to run (default release); --fresh:
#   draft every line anew, dropping the fields humans gave existing lines (use it while the
#   file is still all drafted).
set -euo pipefail
cd "$(dirname "$0")/.."

preset=release
suite=onnx
fresh=()
while [ $# -gt 0 ]; do
  case "$1" in
    --preset) preset="$2"; shift ;;
    --suite) suite="$2"; shift ;;
    --fresh) fresh=(--fresh) ;;
    *) echo "onnx_expectations.sh: unknown argument '$1' (supported: --suite NAME," \
         "--preset NAME, --fresh)" >&2
       exit 2 ;;
  esac
  shift
done

case "$suite" in
  onnx) file=conformance/onnx/expectations.tsv ;;
  onnx-current) file=conformance/onnx/expectations-current.tsv
                scripts/ci/onnx_current_data.sh ;;
  *) echo "onnx_expectations.sh: no ONNX corpus suite '$suite' (onnx, onnx-current)" >&2
     exit 2 ;;
esac

cmake --preset "$preset" >/dev/null
cmake --build "build/$preset" --target volta-audit volta-onnx-expectations
audit="build/$preset/tools/volta-audit/volta-audit"
draft="build/$preset/conformance/onnx/volta-onnx-expectations"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
db="$scratch/onnx.db"

# Judged against the old file; the unexpected results are what the new file fixes.
"$audit" run "$suite" --db "$db" >/dev/null 2>"$scratch/run.log" || true
status=0
if ! "$draft" --db "$db" --suite "$suite" --file "$file" "${fresh[@]}"; then
  echo "onnx_expectations.sh: some results cannot be expected (ERROR, CRASH, TIMEOUT: listed" \
       "at the end of $file); fix them" >&2
  status=1
fi
# Judged against the new file: only those can still be unexpected.
"$audit" run "$suite" --db "$db" >/dev/null 2>"$scratch/rerun.log" || status=1
if ! "$audit" docs sync --db "$db"; then
  echo "onnx_expectations.sh: docs sync could not regenerate every section (see above)" >&2
  status=1
fi
exit "$status"
