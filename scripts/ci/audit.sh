#!/usr/bin/env bash
# The release audit, from a fresh machine: install missing packages, build, run every suite
# (parity; onnx, onnx-current (the current ONNX release's tests, scripts/ci/onnx_current_data.sh)
# and the numerics matrix on the CPU backend and the reference engine, plus the
# numerics suite's CUDA cells, skipped without that backend; the gradients suite on the
# reference engine (finite differences) and the CPU backend (engine vs reference, thread
# counts); the training suite (the tiny transformer: train, save, reload, resume, kill -9,
# interop with the safetensors package and ONNX Runtime from the venv bootstrap.sh creates);
# the determinism suite, whose plan-stability family also runs from a Debug build of
# the same commit; the perf double pass with the release preset's volta-perf) into the results
# database (default ./volta-results.db), check the docs contract, and print the gate table.
# Exit status is the gate's: 0 only when every blocker passes.
# Usage: scripts/ci/audit.sh [--release] [--db PATH] [--preset NAME]
set -euo pipefail
cd "$(dirname "$0")/../.."

release=()
db=volta-results.db
preset=relassert
while [ $# -gt 0 ]; do
  case "$1" in
    --release) release=(--release) ;;
    --db) db="$2"; shift ;;
    --preset) preset="$2"; shift ;;
    *) echo "audit.sh: unknown argument '$1' (supported: --release, --db PATH, --preset NAME)" >&2
       exit 2 ;;
  esac
  shift
done

scripts/ci/bootstrap.sh --peers  # with PyTorch, the perf double pass's peer
scripts/ci/build.sh "$preset" >/dev/null
audit="build/$preset/tools/volta-audit/volta-audit"

# Suites record their rows whatever their outcome; the gate below is what judges them.
"$audit" run parity --backend cpu --db "$db" || true
"$audit" run parity --backend cuda --db "$db" || true
"$audit" run onnx --db "$db" || true
# The current ONNX release's tests, generated from the interop venv (NOT VERIFIED without it).
if scripts/ci/onnx_current_data.sh; then
  "$audit" run onnx-current --db "$db" || true
fi
"$audit" run numerics --db "$db" || true
"$audit" run numerics --backend cuda --db "$db" || true
"$audit" run gradients --db "$db" || true
"$audit" run training --db "$db" || true
"$audit" run determinism --db "$db" || true
# Plan stability holds across build types: the same plans from a Debug build (volta-audit only).
if [ "$preset" != debug ]; then
  VOLTA_WERROR="${VOLTA_WERROR:-ON}" cmake --preset debug >/dev/null
  cmake --build --preset debug --target volta-audit >/dev/null
  build/debug/tools/volta-audit/volta-audit run determinism --family plan-stability --db "$db" || true
fi
# The perf double pass times the optimized (release preset) benchmarks; baselines are this
# machine's (a machine seen for the first time records candidates and is NOT VERIFIED).
VOLTA_WERROR="${VOLTA_WERROR:-ON}" cmake --preset release >/dev/null
cmake --build --preset release --target volta-perf >/dev/null
"$audit" perf --perf-binary build/release/perf/volta-perf --db "$db" || true
"$audit" docs check --db "$db" || true
"$audit" gate "${release[@]}" --db "$db"
