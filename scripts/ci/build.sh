#!/usr/bin/env bash
# Installs what is missing (bootstrap.sh), then configures and builds one preset (default
# relassert). Warnings are errors unless VOLTA_WERROR=OFF is set: CI never sets it.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/ci/bootstrap.sh
preset="${1:-relassert}"
export VOLTA_WERROR="${VOLTA_WERROR:-ON}"
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
