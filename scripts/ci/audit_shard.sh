#!/usr/bin/env bash
# One shard of a distributed audit: build, then run SUITE on BACKEND into its own database.
# The determinism shard also runs its plan-stability family from a Debug build on the same
# machine: the plan-stability gate compares a Debug and an optimized build's plans per machine.
# SUITE perf runs the perf double pass (`volta-audit perf`) with the release preset's volta-perf,
# starting from the baseline database VOLTA_PERF_BASELINES names when it exists, and leaves
# its result there for the next release.
# Usage: scripts/ci/audit_shard.sh SUITE BACKEND OUT.db
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ $# -ne 3 ]; then
  echo "usage: scripts/ci/audit_shard.sh SUITE BACKEND OUT.db" >&2
  exit 2
fi
scripts/ci/bootstrap.sh
scripts/ci/build.sh relassert >/dev/null
if [ "$1" = perf ]; then
  # Baselines measured by earlier commits on this machine fingerprint (a release's cache):
  # without them the run records candidates and the perf gate is NOT VERIFIED.
  if [ -n "${VOLTA_PERF_BASELINES:-}" ] && [ -f "$VOLTA_PERF_BASELINES" ]; then
    cp "$VOLTA_PERF_BASELINES" "$3"
  else
    echo "audit_shard.sh: no perf baseline database (VOLTA_PERF_BASELINES); this run records" \
      "candidate baselines and the perf gate says NOT VERIFIED" >&2
  fi
  VOLTA_WERROR="${VOLTA_WERROR:-ON}" cmake --preset release >/dev/null
  cmake --build --preset release --target volta-perf >/dev/null
  build/relassert/tools/volta-audit/volta-audit perf --perf-binary build/release/perf/volta-perf \
    --db "$3" || true
  # This run's samples are the next commit's baselines on this fingerprint.
  if [ -n "${VOLTA_PERF_BASELINES:-}" ]; then cp "$3" "$VOLTA_PERF_BASELINES"; fi
  exit 0
fi
# The current ONNX release's tests are generated from the interop venv first.
if [ "$1" = onnx-current ]; then scripts/ci/onnx_current_data.sh || true; fi
build/relassert/tools/volta-audit/volta-audit run "$1" --backend "$2" --db "$3" || true
if [ "$1" = determinism ]; then
  VOLTA_WERROR="${VOLTA_WERROR:-ON}" cmake --preset debug >/dev/null
  cmake --build --preset debug --target volta-audit >/dev/null
  build/debug/tools/volta-audit/volta-audit run determinism --family plan-stability --db "$3" || true
fi
