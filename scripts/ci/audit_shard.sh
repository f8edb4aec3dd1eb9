#!/usr/bin/env bash
# One shard of a distributed audit: build, then run SUITE on BACKEND into its own database.
# Usage: scripts/ci/audit_shard.sh SUITE BACKEND OUT.db
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ $# -ne 3 ]; then
  echo "usage: scripts/ci/audit_shard.sh SUITE BACKEND OUT.db" >&2
  exit 2
fi
scripts/ci/bootstrap.sh
scripts/ci/build.sh relassert >/dev/null
build/relassert/tools/volta-audit/volta-audit run "$1" --backend "$2" --db "$3" || true
