#!/usr/bin/env bash
# Creates build/interop-venv (or $VOLTA_INTEROP_VENV): a Python virtual environment with the
# pinned, hash-checked PyPI packages of scripts/ci/interop-requirements.txt (safetensors,
# onnxruntime, and onnx, whose node tests scripts/ci/onnx_current_data.sh generates) that the
# interop tests run. Only tests use Python; the product has no Python
# dependency. scripts/ci/bootstrap.sh calls it after installing Debian's python3-venv.
#
# Idempotent: a venv whose stamp records the same requirements and interpreter is kept, silently.
# Never fails the bootstrap: when the venv cannot be made (no network for pip, a wheel missing
# for this interpreter) it writes why to <venv>.unavailable and exits 0, and the interop tests
# report SKIPPED with that reason.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv="${VOLTA_INTEROP_VENV:-build/interop-venv}"
requirements=scripts/ci/interop-requirements.txt
unavailable="$venv.unavailable"
stamp="$venv/volta-requirements.stamp"

# Debian's interpreter, the one python3-venv belongs to, in preference to any other on PATH.
python=/usr/bin/python3
[ -x "$python" ] || python="$(command -v python3 || true)"
if [ -z "$python" ]; then
  mkdir -p "$(dirname "$venv")"
  echo "no python3 to create the venv with (install python3-venv)" >"$unavailable"
  echo "bootstrap: interop venv not created: no python3; the interop tests will report SKIPPED" >&2
  exit 0
fi

want="$(sha256sum "$requirements" | cut -d' ' -f1) $("$python" -c 'import platform; print(platform.python_version())')"
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  exit 0
fi

rm -rf "$venv" "$unavailable"
mkdir -p "$(dirname "$venv")"
log="$venv.log"
start=$SECONDS
echo "bootstrap: creating the interop venv $venv ($requirements)"
if "$python" -m venv "$venv" >"$log" 2>&1 &&
  "$venv/bin/python" -m pip install --no-input --disable-pip-version-check --require-hashes \
    --only-binary=:all: --retries 1 --timeout 30 -r "$requirements" >>"$log" 2>&1; then
  echo "$want" >"$stamp"
  rm -f "$log"
  echo "bootstrap: interop venv ready in $((SECONDS - start)) s"
  exit 0
fi
# Why, in one line: pip's connection error when it could not reach the index (offline), else
# its last error (no wheel for this interpreter, a hash mismatch, ...).
reason="$(grep -oE "Failed to establish a new connection: [^']*" "$log" | tail -n 1 || true)"
if [ -n "$reason" ]; then
  reason="the package index is unreachable ($reason)"
else
  reason="$(grep -E '^ERROR' "$log" | tail -n 1 || true)"
  [ -n "$reason" ] || reason="$(tail -n 1 "$log")"
fi
rm -rf "$venv"
echo "pip could not install $requirements into $venv with $python: $reason (full log: $log)" \
  >"$unavailable"
echo "bootstrap: interop venv not created: $reason; the interop tests will report SKIPPED" >&2
