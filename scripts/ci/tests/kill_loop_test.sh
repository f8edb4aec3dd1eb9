#!/usr/bin/env bash
# Kill loops (governance/reliability.md): `volta-audit run` and `volta train
# --save-every 1` are each killed with SIGKILL at KILLS moments drawn uniformly over a run's
# length. After every kill the results database passes PRAGMA integrity_check and its earlier
# run's rows are unchanged, and the checkpoint is a whole one (it loads: every tensor's SHA-256
# checked); at the end no run is left 'running' (each killed run is 'incomplete', each killed
# training run 'interrupted') and the database takes another complete run.
# Usage: kill_loop_test.sh VOLTA_AUDIT VOLTA [KILLS]   (KILLS default 50)
set -euo pipefail
audit="$1"
volta="$2"
kills="${3:-50}"
fail() { echo "kill_loop_test: $1" >&2; exit 1; }
# shellcheck source=scripts/ci/tests/volta_cli.sh
. "$(dirname "$0")/volta_cli.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
db="$tmp/results.db"
query() { audit_value "$audit" "$db" "$1"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# Kills "$@" (started in the background) after a uniform random delay in [0, $1) ms.
kill_at_random() {
  local span="$1"
  shift
  "$@" >/dev/null 2>&1 &
  local pid=$!
  local delay=$(((RANDOM * 32768 + RANDOM) % span))
  sleep "$(awk -v d="$delay" 'BEGIN { printf "%.3f", d / 1000 }')"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

# ---- results database: volta-audit run ----
run=("$audit" run parity --backend cpu --no-isolate --db "$db")
start=$(now_ms)
"${run[@]}" >/dev/null 2>&1 || fail "the first run failed: $("${run[@]}" 2>&1 | tail -3)"
span=$(($(now_ms) - start + 200))
snapshot="SELECT count(*), sum(length(message)), sum(duration_ms), group_concat(outcome, '') \
FROM result WHERE run_id = 1"
before=$(query "$snapshot")
for i in $(seq "$kills"); do
  kill_at_random "$span" "${run[@]}"
  [ "$(query 'PRAGMA integrity_check')" = ok ] || fail "kill $i: integrity_check: $(query 'PRAGMA integrity_check')"
  [ "$(query "$snapshot")" = "$before" ] || fail "kill $i: the first run's rows changed"
done
"${run[@]}" >/dev/null 2>&1 || fail "the run after the kills failed"
[ "$(query "SELECT count(*) FROM run WHERE status = 'running'")" = 0 ] ||
  fail "runs left 'running': $(query "SELECT group_concat(id) FROM run WHERE status = 'running'")"
incomplete=$(query "SELECT count(*) FROM run WHERE status = 'incomplete'")
complete=$(query "SELECT count(*) FROM run WHERE status = 'complete'")
# A kill before the run's first row leaves no run; one after its last, a complete run.
[ "$incomplete" -gt 0 ] || fail "no kill landed inside a run: the loop proved nothing"
[ "$complete" -ge 2 ] || fail "$complete complete runs; the first and the last must be"
echo "volta-audit run: $kills kills over ${span} ms runs: $incomplete runs killed mid-way and" \
  "marked incomplete, $((complete - 2)) finished first, 0 rows lost"

# ---- checkpoints: volta train --save-every 1 ----
data="$tmp/data.txt"
write_training_text "$data"
ckpt="$tmp/model.ckpt"
train=("$volta" train --data "$data" --steps 40 --save-every 1 --save "$ckpt" --db "$db")
start=$(now_ms)
"${train[@]}" >/dev/null 2>&1 || fail "the first training run failed: $("${train[@]}" 2>&1 | tail -3)"
span=$(($(now_ms) - start + 200))
whole=0
for i in $(seq "$kills"); do
  kill_at_random "$span" "${train[@]}"
  if [ -e "$ckpt" ]; then
    "$volta" export --checkpoint "$ckpt" --onnx "$tmp/model.onnx" >/dev/null 2>&1 ||
      fail "kill $i: the checkpoint does not load: $("$volta" export --checkpoint "$ckpt" --onnx "$tmp/model.onnx" 2>&1 | tail -2)"
    whole=$((whole + 1))
  fi
  [ "$(query 'PRAGMA integrity_check')" = ok ] || fail "training kill $i: integrity_check failed"
  [ "$(query "$snapshot")" = "$before" ] || fail "training kill $i: the first run's rows changed"
done
"$audit" run parity --backend cpu --no-isolate --filter 'Add*' --db "$db" >/dev/null 2>&1 || true
[ "$(query "SELECT count(*) FROM training_run WHERE status = 'running'")" = 0 ] ||
  fail "training runs left 'running'"
echo "volta train: $kills kills over ${span} ms runs, $whole checkpoints checked whole, none torn"
