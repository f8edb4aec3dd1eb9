#!/usr/bin/env bash
# Fuzz lane (governance/reliability.md): builds the fuzz targets (the fuzz preset: clang, libFuzzer,
# ASan, UBSan) and runs each for SECONDS (default 20), one per core at a time, then prints per
# target the executions, the coverage (edges) and the findings. Exit 1 when any target found a
# crash, leak, timeout or out-of-memory: its input is kept under build/PRESET/findings/TARGET/ to
# minimize, fix and add to the target's corpus folder. CI runs a 15-second smoke (test.sh); the
# nightly workflow 600 s.
# Usage: scripts/ci/fuzz.sh [SECONDS] [TARGET...]
# VOLTA_FUZZ_PRESET=fuzz-optimized builds at -O1 (nightly): more executions a second for a build
# three times as long as the default preset's (-O0, CI's smoke).
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-20}"
shift || true
case "$seconds" in
  '' | *[!0-9]*) echo "fuzz: SECONDS must be a whole number, not '$seconds'" >&2; exit 2 ;;
esac

scripts/ci/bootstrap.sh
preset="${VOLTA_FUZZ_PRESET:-fuzz}"
VOLTA_WERROR="${VOLTA_WERROR:-ON}" cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" --target volta_fuzz_targets

build="build/$preset"
onnx_data=/usr/share/libonnx-testdata/data
mapfile -t manifests < <(find "$build" -name '*.corpus' -not -path '*/CMakeFiles/*' | sort)
if [ "${#manifests[@]}" -eq 0 ]; then
  echo "fuzz: $build has no fuzz target manifests (*.corpus): nothing was fuzzed" >&2
  exit 1
fi
if [ "$#" -gt 0 ]; then
  wanted=" $* "
  selected=()
  for m in "${manifests[@]}"; do
    [[ "$wanted" == *" $(basename "$m" .corpus) "* ]] && selected+=("$m")
  done
  [ "${#selected[@]}" -eq "$#" ] || {
    echo "fuzz: unknown target among '$*'; targets: $(for m in "${manifests[@]}"; do basename "$m" .corpus; done | tr '\n' ' ')" >&2
    exit 2
  }
  manifests=("${selected[@]}")
fi

# The real files a target starts from besides its committed corpus: the repository's files its
# manifest names, and for the ONNX targets the backend test data's models and tensor files.
collect_seeds() {
  local target="$1" manifest="$2" dir="$3"
  rm -rf "$dir"
  mkdir -p "$dir"
  local n=0 path file
  while IFS= read -r path; do
    [ -n "$path" ] || continue
    while IFS= read -r -d '' file; do
      cp "$file" "$dir/seed-$n"
      n=$((n + 1))
    done < <(find "$path" -type f -print0)
  done < <(tail -n +2 "$manifest")
  local pattern=""
  case "$target" in
    onnx_model_fuzz) pattern='model.onnx' ;;
    tensor_file_fuzz) pattern='*.pb' ;;
  esac
  if [ -n "$pattern" ] && [ -d "$onnx_data" ]; then
    while IFS= read -r -d '' file; do
      cp "$file" "$dir/seed-$n"
      n=$((n + 1))
    done < <(find "$onnx_data" -name "$pattern" -size -64k -print0)
  fi
}

# Fuzzes one target (its manifest $1) and writes its summary row to $rows/TARGET; a finding
# also leaves $rows/TARGET.failed.
fuzz_one() {
  local manifest="$1"
  local target exe corpus work seeds findings log status=0
  target=$(basename "$manifest" .corpus)
  exe="$(dirname "$manifest")/$target"
  corpus=$(head -n 1 "$manifest")
  work="$build/corpora/$target"     # what the fuzzer found, kept between runs
  seeds="$build/seeds/$target"
  findings="$build/findings/$target"
  log="$build/logs/$target.log"
  mkdir -p "$work" "$findings" "$(dirname "$log")"
  collect_seeds "$target" "$manifest" "$seeds"
  echo "fuzz: $target for ${seconds}s"
  # -rss_limit_mb and -timeout: a finding is an input that needs more than 2 GiB or 10 s.
  "$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$findings/" "$work" "$corpus" "$seeds" >"$log" 2>&1 || status=$?
  local execs edges units found verdict="none"
  execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || true)
  edges=$(grep -o ' cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || true)
  units=$(grep -o ' corp: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || true)
  found=$(find "$findings" -type f | wc -l)
  if [ "$status" -ne 0 ] || [ "$found" -ne 0 ]; then
    verdict="$found kept in $findings (exit $status; log $log)"
    : >"$rows/$target.failed"
    grep -m 3 -E 'ERROR|SUMMARY|uncaught|deadly' "$log" >&2 || tail -20 "$log" >&2
  fi
  printf '%-24s %12s %8s %8s  %s\n' "$target" "${execs:-?}" "${edges:-?}" "${units:-?}" \
    "$verdict" >"$rows/$target"
}

# One target per core at a time: each runs its own fixed time, so the lane takes
# ceil(targets / cores) x SECONDS rather than targets x SECONDS.
rows=$(mktemp -d)
trap 'rm -rf "$rows"' EXIT
parallel="$(nproc 2>/dev/null || echo 2)"
for manifest in "${manifests[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
  fuzz_one "$manifest" &
done
wait
failed=0
printf '%-24s %12s %8s %8s  %s\n' target executions edges corpus findings
for manifest in "${manifests[@]}"; do
  target=$(basename "$manifest" .corpus)
  cat "$rows/$target" 2>/dev/null || { echo "$target: no result (its job failed)"; failed=1; }
  if [ -e "$rows/$target.failed" ]; then failed=1; fi
done
if [ "$failed" -ne 0 ]; then
  echo "fuzz: findings above; reproduce with the target and the kept input, minimize with" \
       "-minimize_crash=1, fix, and add the input to the target's corpus folder" >&2
  exit 1
fi
echo "fuzz: no findings"
