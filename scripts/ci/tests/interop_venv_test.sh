#!/usr/bin/env bash
# scripts/ci/interop_venv.sh without the network and with a current stamp, in a scratch venv
# path: offline it exits 0, leaves no venv and says why in <venv>.unavailable, and an interop
# test then prints the SKIPPED line with that reason; a venv whose stamp matches is kept as it
# is, silently. (Creating the real venv needs PyPI: bootstrap.sh does it before the tests.)
# Usage: interop_venv_test.sh INTEROP_TEST_BINARY
set -euo pipefail
interop_venv="$(cd "$(dirname "$0")/.." && pwd)/interop_venv.sh"
requirements="$(cd "$(dirname "$0")/.." && pwd)/interop-requirements.txt"
test_binary="$1"
fail() { echo "interop_venv_test: $1" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export VOLTA_INTEROP_VENV="$tmp/venv"

# Offline: an index that refuses connections, no local wheels.
out=$(PIP_INDEX_URL=http://127.0.0.1:9/simple PIP_FIND_LINKS= PIP_NO_CACHE_DIR=1 \
  "$interop_venv" 2>&1) || fail "exit status $? offline (must be 0): $out"
[ ! -e "$tmp/venv" ] || fail "offline run left $tmp/venv behind"
grep -q "the package index is unreachable" "$tmp/venv.unavailable" ||
  fail "no reason in venv.unavailable: $(cat "$tmp/venv.unavailable" 2>/dev/null)"
grep -q "interop tests will report SKIPPED" <<<"$out" || fail "no notice on stderr: $out"
skipped=$("$test_binary" --log_level=message 2>&1) || fail "the interop test failed: $skipped"
grep -q "SKIPPED: no interop venv at $tmp/venv: pip could not install" <<<"$skipped" ||
  fail "the interop test did not report SKIPPED with the reason: $skipped"

# A current stamp: nothing is touched or printed.
rm -f "$tmp/venv.unavailable"
python=/usr/bin/python3
[ -x "$python" ] || python="$(command -v python3)"
mkdir -p "$tmp/venv/bin"
printf '#!/bin/sh\n' >"$tmp/venv/bin/python"
chmod +x "$tmp/venv/bin/python"
echo "$(sha256sum "$requirements" | cut -d' ' -f1) $("$python" -c 'import platform; print(platform.python_version())')" \
  >"$tmp/venv/volta-requirements.stamp"
touch "$tmp/venv/marker"
out=$(PIP_INDEX_URL=http://127.0.0.1:9/simple "$interop_venv" 2>&1) || fail "stamped run failed: $out"
[ -z "$out" ] || fail "a stamped venv printed: $out"
[ -e "$tmp/venv/marker" ] || fail "a stamped venv was recreated"
echo "interop_venv_test: offline skip and stamp reuse hold"
