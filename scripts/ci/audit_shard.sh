#!/usr/bin/env bash
# One shard of a distributed audit: build, then run SUITE on BACKEND into its own database.
# The determinism shard also runs its plan-stability family from a Debug build on the same
# machine: the plan-stability gate compares a Debug and an optimized build's plans per machine.
# SUITE perf runs the perf double pass (`volta-audit perf`) with the release preset's volta-perf.
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
  VOLTA_WERROR="${VOLTA_WERROR:-ON}" cmake --preset release >/dev/null
  cmake --build --preset release --target volta-perf >/dev/null
  build/relassert/tools/volta-audit/volta-audit perf --perf-binary build/release/perf/volta-perf \
    --db "$3" || true
  exit 0
fi
build/relassert/tools/volta-audit/volta-audit run "$1" --backend "$2" --db "$3" || true
if [ "$1" = determinism ]; then
  VOLTA_WERROR="${VOLTA_WERROR:-ON}" cmake --preset debug >/dev/null
  cmake --build --preset debug --target volta-audit >/dev/null
  build/debug/tools/volta-audit/volta-audit run determinism --family plan-stability --db "$3" || true
fi
