#!/usr/bin/env bash
# Folds shard databases into one, checks the docs contract against it and prints the gate.
# Usage: scripts/ci/audit_merge.sh [--release] OUT.db SHARD.db...
set -euo pipefail
cd "$(dirname "$0")/../.."
release=()
if [ "${1:-}" = "--release" ]; then release=(--release); shift; fi
if [ $# -lt 2 ]; then
  echo "usage: scripts/ci/audit_merge.sh [--release] OUT.db SHARD.db..." >&2
  exit 2
fi
out="$1"; shift
scripts/ci/bootstrap.sh
scripts/ci/build.sh relassert >/dev/null
audit=build/relassert/tools/volta-audit/volta-audit
"$audit" merge "$@" -o "$out"
"$audit" docs check --db "$out" || true
"$audit" gate "${release[@]}" --db "$out"
