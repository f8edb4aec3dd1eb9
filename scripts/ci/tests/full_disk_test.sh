#!/usr/bin/env bash
# A full disk (governance/reliability.md): the results database and a checkpoint on a real
# small filesystem, a tmpfs mounted in a private mount namespace, filled so that only FREE KiB
# are left for each FREE in a list (0 up to more than a run needs). Each write then meets
# ENOSPC wherever it falls. What must hold every time: the command ends with an exit status
# (never a signal) and, when it fails, a message that says the disk is full; the database
# passes PRAGMA integrity_check with its first run's rows unchanged; the checkpoint is the
# previous one byte for byte (a failed save leaves neither a torn file nor its temporary); and
# once space is freed the same commands succeed, so nothing was lost.
# Exit 77 (CTest: SKIPPED, with the reason) where no tmpfs can be mounted: not root and no
# user namespaces, or a container without CAP_SYS_ADMIN.
# Usage: full_disk_test.sh VOLTA_AUDIT VOLTA
set -euo pipefail
audit="$1"
volta="$2"
fail() { echo "full_disk_test: $1" >&2; exit 1; }
# shellcheck source=scripts/ci/tests/volta_cli.sh
. "$(dirname "$0")/volta_cli.sh"

if [ "${VOLTA_FULL_DISK_NAMESPACE:-}" != 1 ]; then
  # Re-run this script in a mount namespace of its own, so the tmpfs vanishes with it.
  if [ "$(id -u)" = 0 ]; then ns=(unshare --mount --propagation private); else ns=(unshare -rm); fi
  if ! "${ns[@]}" mount -t tmpfs -o size=1m tmpfs /tmp 2>/dev/null; then
    echo "full_disk_test: SKIPPED: cannot mount a tmpfs in a private mount namespace" \
      "(${ns[*]}: not root, no user namespaces, or no CAP_SYS_ADMIN in this container)"
    exit 77
  fi
  VOLTA_FULL_DISK_NAMESPACE=1 exec "${ns[@]}" "$0" "$@"
fi

tmp=$(mktemp -d)
trap 'umount "$tmp/disk" 2>/dev/null || true; rm -rf "$tmp"' EXIT
disk="$tmp/disk"
mkdir "$disk"
mount -t tmpfs -o size=8m tmpfs "$disk"
db="$disk/results.db"
ckpt="$disk/model.ckpt"
data="$tmp/data.txt"  # off the full disk: only what Volta writes is under test
write_training_text "$data"
query() { audit_value "$audit" "$db" "$1"; }
free_kib() { df -k --output=avail "$disk" | tail -1 | tr -d ' '; }
# Fills the disk but $1 KiB (tmpfs counts whole 4 KiB pages).
fill_but() {
  rm -f "$disk/filler"
  local fill=$(($(free_kib) - $1))
  [ "$fill" -le 0 ] || dd if=/dev/zero of="$disk/filler" bs=1k count="$fill" status=none 2>/dev/null || true
}
# Runs "$@", which may fail only as a full disk does: an exit status, not a signal, and a
# message that says so. Sets outcome to ok or full.
outcome=""
may_fail_full() {
  local out status=0
  out=$("$@" 2>&1) || status=$?
  outcome=ok
  [ "$status" = 0 ] && return
  [ "$status" -lt 128 ] || fail "'$*' died of signal $((status - 128)) on a full disk: $(tail -3 <<<"$out")"
  grep -qiE "disk is full|no space left" <<<"$out" ||
    fail "'$*' failed on a full disk without saying so: $(tail -3 <<<"$out")"
  outcome=full
  last_error=$(grep -iE -m1 "disk is full|no space left" <<<"$out" | cut -c1-240)
}

# ---- the results database ----
run=("$audit" run parity --backend cpu --no-isolate --db "$db")
"${run[@]}" >/dev/null 2>&1 || fail "the first run failed: $("${run[@]}" 2>&1 | tail -3)"
snapshot="SELECT count(*), sum(length(message)), sum(duration_ms), group_concat(outcome, '') \
FROM result WHERE run_id = 1"
before=$(query "$snapshot")
full=0
done_runs=0
for free in 0 4 8 16 32 64 128 256 512 1024 2048 3072 4096; do
  fill_but "$free"
  may_fail_full "${run[@]}"
  if [ "$outcome" = full ]; then full=$((full + 1)); else done_runs=$((done_runs + 1)); fi
  rm -f "$disk/filler"
  [ "$(query 'PRAGMA integrity_check')" = ok ] || fail "$free KiB free: integrity_check: $(query 'PRAGMA integrity_check')"
  [ "$(query "$snapshot")" = "$before" ] || fail "$free KiB free: the first run's rows changed"
done
"${run[@]}" >/dev/null 2>&1 || fail "the run after freeing space failed: $("${run[@]}" 2>&1 | tail -3)"
[ "$(query "SELECT count(*) FROM run WHERE status = 'running'")" = 0 ] || fail "a run was left 'running'"
[ "$full" -gt 0 ] || fail "no run met the full disk: the test proved nothing"
echo "results database: $full runs refused on a full disk with its error, $done_runs fitted," \
  "integrity_check ok and the first run's rows unchanged after each, 0 rows lost"
echo "  e.g. $last_error"

# ---- checkpoints ----
train=("$volta" train --data "$data" --steps 8)
"${train[@]}" --stop-at 2 --save "$ckpt" >/dev/null 2>&1 || fail "the first training run failed"
saved=$(sha256sum "$ckpt" | cut -d' ' -f1)
ckpt_kib=$(($(stat -c %s "$ckpt") / 1024))
full=0
for free in 0 4 64 $((ckpt_kib / 2)) $((ckpt_kib - 8)); do
  fill_but "$free"
  may_fail_full "${train[@]}" --resume "$ckpt" --stop-at 4 --save "$ckpt"
  [ "$outcome" = full ] || fail "a $ckpt_kib KiB checkpoint was saved in $free KiB"
  full=$((full + 1))
  rm -f "$disk/filler"
  [ "$(sha256sum "$ckpt" | cut -d' ' -f1)" = "$saved" ] || fail "$free KiB free: the checkpoint changed"
  leftovers=$(find "$disk" -mindepth 1 -not -name 'results.db*' -not -name model.ckpt)
  [ -z "$leftovers" ] || fail "$free KiB free: a failed save left $leftovers"
done
"${train[@]}" --resume "$ckpt" --stop-at 4 --save "$ckpt" >/dev/null 2>&1 ||
  fail "the resume after freeing space failed"
"$volta" eval --checkpoint "$ckpt" --data "$data" >/dev/null || fail "the new checkpoint does not load"
echo "checkpoints: $full saves of a $ckpt_kib KiB checkpoint refused on a full disk with its error," \
  "the previous checkpoint byte-identical and no temporary left each time; the save after" \
  "freeing space loads"
echo "  e.g. $last_error"
