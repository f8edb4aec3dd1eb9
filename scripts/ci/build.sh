#!/usr/bin/env bash
# Installs what is missing (bootstrap.sh), then configures and builds one preset (default
# relassert). Warnings are errors unless VOLTA_WERROR=OFF is set: CI never sets it.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/ci/bootstrap.sh
preset="${1:-relassert}"
export VOLTA_WERROR="${VOLTA_WERROR:-ON}"
# A cold relassert tree takes about 5.3 GiB (and the fuzz smoke's build 2.6 more): say so up
# front where the disk has less, rather than leave a linker's "No space left on device" to
# explain it.
mkdir -p build
free_gib="$(df -P -BG build | awk 'NR == 2 { sub("G", "", $4); print $4 }')"
if [ "${free_gib:-0}" -lt 8 ]; then
  echo "build.sh: warning: ${free_gib} GiB free on the disk of build/; a cold relassert build" \
    "and the fuzz smoke need about 8 GiB" >&2
fi
# CI compiles without debug info (VOLTA_DEBUG_INFO in CMakeLists.txt): a quarter less compile
# time, and no CI run starts a debugger. Said on every configure, so a tree keeps no stale value.
debug_info=ON
[ "${CI:-}" = true ] && debug_info=OFF
cmake --preset "$preset" -DVOLTA_DEBUG_INFO="$debug_info" >/dev/null
cmake --build --preset "$preset"
