#!/usr/bin/env bash
# Verifies the CUDA backend on a GPU machine that has the NVIDIA driver and nothing else of
# Volta's: unpacks the bundle scripts/ci/cuda_bundle.sh wrote, runs the cuda-labelled test
# binaries, every suite on the cuda backend into one SQLite file, and the CUDA benchmarks, then
# prints the gate table and a summary. Needs bash, tar and xz; no compiler, no network.
# Usage: scripts/ci/cuda_verify.sh [BUNDLE_DIR] [--out DIR] [--quick]
#   BUNDLE_DIR  where volta-cuda.tar.xz is (default build/cuda-bundle)
#   --out DIR   where the results go (default $OUT when set, else ./cuda-verify-out), seven
#               files (the device tool brings back eight at most): volta-cuda-results.db,
#               summary.txt (doctor, verdicts, gate), tests.log, suites.log, benchmarks.json,
#               benchmarks.txt, peers.txt
#   --quick     the device tests and the parity suite only
# Exit status: 0 when every test passed or was skipped with its reason and every suite ran.
set -uo pipefail

bundle=build/cuda-bundle
out="${OUT:-$PWD/cuda-verify-out}"
quick=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift ;;
    --quick) quick=1 ;;
    -*) echo "cuda_verify.sh: unknown option '$1' (supported: --out DIR, --quick)" >&2; exit 2 ;;
    *) bundle="$1" ;;
  esac
  shift
done
archive="$bundle/volta-cuda.tar.xz"
if [ ! -f "$archive" ]; then
  echo "cuda_verify.sh: no bundle at $archive (build it with scripts/ci/cuda_bundle.sh)" >&2
  exit 2
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/volta-cuda.XXXXXX")
trap 'rm -rf "$work"' EXIT
started=$(date +%s)
elapsed() { echo "$(($(date +%s) - started)) s"; }

tar -C "$work" -xJf "$archive" || { echo "cuda_verify.sh: cannot unpack $archive" >&2; exit 2; }
export LD_LIBRARY_PATH="$work/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export VOLTA_SOURCE_DIR="$work/src"
export VOLTA_CLI="$work/bin/volta"
db="$out/volta-cuda-results.db"
rm -f "$db"
failures=()
summary="$out/summary.txt"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }

note "== bundle"
cat "$work/MANIFEST.txt" | tee -a "$summary"
note "== machine"
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader \
    2>&1 || echo "nvidia-smi: not available"; } | tee -a "$summary"
"$work/bin/volta" doctor 2>&1 | tee -a "$summary"

# ---- the cuda-labelled test binaries, judged as CTest would (skip and pass expressions)
note "== tests ($(elapsed))"
: >"$out/tests.log"
while IFS=$'\x1f' read -r name skip pass exe args; do
  read -r -a argv <<<"$args"
  log=$( (cd "$work" && timeout 120 "$work/$exe" "${argv[@]}") 2>&1)
  rc=$?
  { echo "---- $name (exit $rc)"; echo "$log"; } >>"$out/tests.log"
  if [ -n "$skip" ] && grep -Pq -- "$skip" <<<"$log"; then
    verdict="SKIPPED: $(grep -Po -- "(?:$skip).*" <<<"$log" | head -1)"
  elif [ -n "$pass" ]; then
    # CTest's '.' matches a newline too: (?s) makes Perl's do the same.
    if grep -Pzq -- "(?s)$pass" <<<"$log"; then verdict=PASS; else verdict="FAIL (output unmatched)"; fi
  elif [ "$rc" -eq 0 ]; then
    verdict=PASS
  else
    verdict="FAIL (exit $rc)"
  fi
  [[ "$verdict" == FAIL* ]] && failures+=("test $name")
  note "$(printf '%-28s %s' "$name" "$verdict")"
  [[ "$verdict" == FAIL* ]] && grep -E "error|fail" <<<"$log" | head -8 | tee -a "$summary"
done <"$work/tests.tsv"

# ---- the suites on the cuda backend, one results database
audit() { (cd "$work" && "$work/bin/volta-audit" "$@"); }
run_suite() {
  local what="$*"
  note "== suite: $what ($(elapsed))"
  # Bounded, so that a hung suite leaves time for the rest (the whole script: 8 minutes).
  if (cd "$work" && timeout 200 "$work/bin/volta-audit" run "$@" --db "$db") >>"$out/suites.log" 2>&1; then
    note "ran"
  else
    note "exit $? (the gate below judges the rows; suites.log has the output)"
    tail -5 "$out/suites.log" | tee -a "$summary"
  fi
}
# In one process (--no-isolate): a case forked per process would initialise the CUDA driver
# per case (a fifth of a second each, minutes over the suites); a crash then ends the suite,
# and its log says where.
run_suite parity --backend cuda --no-isolate
if [ "$quick" -eq 0 ]; then
  run_suite numerics --backend cuda --no-isolate
  run_suite onnx --backend cuda --data "$work/onnx-data" --no-isolate
  # 100 replays, 3 fresh processes, plan stability and batch invariance of every subject the
  # backend has kernels for (gate determinism-cuda).
  run_suite determinism --backend cuda --data "$work/onnx-data" --no-isolate
fi

# ---- the CUDA benchmarks (volta-perf's cuda/ family), as JSON
if [ "$quick" -eq 0 ]; then
  note "== benchmarks ($(elapsed))"
  perf=("$work/bin/volta-perf" --volta_onnx_data="$work/onnx-data" --benchmark_filter='^cuda/')
  if listed=$("${perf[@]}" --benchmark_list_tests 2>&1) && grep -q '^cuda/' <<<"$listed"; then
    (cd "$work" && timeout 240 "${perf[@]}" --benchmark_min_time=0.2 \
      --benchmark_out="$out/benchmarks.json" --benchmark_out_format=json) 2>&1 |
      tee "$out/benchmarks.txt" | grep -E "^cuda/|ERROR" | tee -a "$summary"
  else
    note "volta-perf lists no cuda/ benchmarks: $(tail -3 <<<"$listed")"
  fi
  # The peers (PyTorch on this device, where python3 has it) and the issue's ratios.
  if python3 -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 3)' \
      2>/dev/null; then
    note "== peers and ratios ($(elapsed))"
    volta_json=()
    [ -s "$out/benchmarks.json" ] && volta_json=(--volta-json "$out/benchmarks.json")
    (cd "$work/src/perf/peers" && timeout 180 python3 cuda_peer.py "${volta_json[@]}") 2>&1 |
      tee "$out/peers.txt" | tee -a "$summary"
  else
    note "== peers: python3 with PyTorch and CUDA is not here; no ratios to peers"
  fi
fi

note "== gate ($(elapsed))"
audit gate --db "$db" 2>&1 | tee -a "$summary"
note "== done in $(elapsed); results in $out"
if [ "${#failures[@]}" -gt 0 ]; then
  note "FAILED: ${failures[*]}"
  exit 1
fi
