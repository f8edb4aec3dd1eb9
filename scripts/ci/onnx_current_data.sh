#!/usr/bin/env bash
# Generates the onnx-current suite's data: the backend test data of the onnx release pinned in
# scripts/ci/interop-requirements.txt (node tests and model tests), and ONNX 1.12's PyTorch
# exports (libonnx-testdata) converted to opset 18 by that release's version converter, from the
# interop venv that scripts/ci/bootstrap.sh creates, into build/onnx-current-data (or
# $VOLTA_ONNX_CURRENT_DATA).
# Idempotent: data whose stamp records the same onnx version and generator is kept, silently.
# Exit 0 with the data in place; exit 1, saying why, when the venv (and so onnx) is missing.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${VOLTA_ONNX_CURRENT_DATA:-build/onnx-current-data}"
venv="${VOLTA_INTEROP_VENV:-build/interop-venv}"
python="$venv/bin/python"
generator=scripts/ci/onnx_current_data.py

if [ ! -x "$python" ]; then
  why="$(cat "$venv.unavailable" 2>/dev/null || echo "run scripts/ci/bootstrap.sh")"
  echo "onnx_current_data: no interop venv at $venv: $why" >&2
  exit 1
fi
version="$("$python" -c 'import onnx; print(onnx.__version__)' 2>/dev/null)" || {
  echo "onnx_current_data: the interop venv $venv has no onnx package (rerun" \
       "scripts/ci/interop_venv.sh)" >&2
  exit 1
}
want="onnx $version $(sha256sum "$generator" | cut -d' ' -f1)"
stamp="$out/volta-data.stamp"
if [ -d "$out/node" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  exit 0
fi

rm -rf "$out" "$out.partial"
mkdir -p "$(dirname "$out")"
start=$SECONDS
# Into a scratch folder first: an interrupted run leaves no partial corpus behind.
"$python" -W ignore "$generator" "$out.partial" >"$out.log"
echo "$want" >"$out.partial/volta-data.stamp"
mv "$out.partial" "$out"
echo "onnx_current_data: onnx $version test data in $out in $((SECONDS - start)) s:" \
  "$(find "$out/node" -mindepth 1 -maxdepth 1 -type d | wc -l) node tests; $(tr '\n' ';' <"$out.log")"
rm -f "$out.log"
