#!/usr/bin/env bash
# Release compatibility (governance/reliability.md, governance/release-checklist.md): builds an
# older Volta (the newest v* release tag before HEAD, or --old REV) beside this tree and checks
# both directions, so that a rollback loses nothing:
#   new reads old: the new volta-audit migrates a results database the old one wrote, its rows
#     unchanged, and appends a run stamped with the new version; the new volta evaluates and
#     resumes a checkpoint the old one saved.
#   old after new: the old volta still evaluates and resumes the new checkpoint when only its
#     minor format version is newer; the old volta-audit refuses the migrated database (newer
#     schema) and the old volta a checkpoint of a newer major version, each naming why, and both
#     files are byte-identical afterwards.
# Both sides use their own CLI, so REV must take the options used here (volta-audit run
# --no-isolate, volta train --save/--resume, volta eval --digest; since 0.1.0).
# Usage: scripts/ci/compat_verify.sh [--old REV] [--new BUILD_DIR]
#   --old: a tag or commit (default: the newest v* tag that is an ancestor of HEAD, not HEAD);
#   --new: the current tree's build folder (default build/relassert, configured and built here).
# The old tree is a git worktree in build/compat/src and builds (relassert flags, no CUDA, no
# perf) in build/compat/old; ccache makes a rerun cheap. Exit 0: every check held.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
# shellcheck source=scripts/ci/tests/volta_cli.sh
. scripts/ci/tests/volta_cli.sh
old_rev=""
new_build=build/relassert
while [ $# -gt 0 ]; do
  case "$1" in
    --old) old_rev="${2:?--old needs a tag or commit}"; shift 2 ;;
    --new) new_build="${2:?--new needs a build folder}"; shift 2 ;;
    *) echo "compat_verify: unknown argument '$1' (usage: compat_verify.sh [--old REV] [--new BUILD_DIR])" >&2; exit 2 ;;
  esac
done
if [ -z "$old_rev" ]; then
  old_rev=$(git describe --tags --abbrev=0 --match 'v*' HEAD~1 2>/dev/null) || {
    echo "compat_verify: no release tag (v*) before HEAD; pass --old REV (a tag or commit)" >&2
    exit 2
  }
fi
old_sha=$(git rev-parse --verify --quiet "$old_rev^{commit}") || {
  echo "compat_verify: '$old_rev' is not a commit of this repository" >&2
  exit 2
}

failures=0
check() {  # check DESCRIPTION COMMAND...: runs the command, prints PASS or FAIL
  local what="$1"
  shift
  if "$@"; then echo "PASS  $what"; else echo "FAIL  $what"; failures=$((failures + 1)); fi
}
quiet() {  # quiet COMMAND...: its output only when it fails
  local out
  out=$("$@" 2>&1) || { echo "$out" | tail -5 | sed 's/^/  /'; return 1; }
}

# ---- the two builds ----
scripts/ci/bootstrap.sh
src=build/compat/src
if [ ! -e "$src/.git" ]; then
  rm -rf "$src"
  git worktree prune
  git worktree add --detach "$src" "$old_sha" >/dev/null
fi
git -C "$src" checkout --quiet --detach "$old_sha"
old_build=$root/build/compat/old
cmake -S "$src" -B "$old_build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DVOLTA_ASSERTIONS=ON -DVOLTA_CUDA=OFF -DVOLTA_BUILD_PERF=OFF >/dev/null
cmake --build "$old_build" --target volta volta-audit
if [ ! -f "$new_build/CMakeCache.txt" ]; then cmake --preset relassert >/dev/null; fi
cmake --build "$new_build" --target volta volta-audit
old_volta=$old_build/tools/volta/volta
old_audit=$old_build/tools/volta-audit/volta-audit
new_volta=$root/$new_build/tools/volta/volta
new_audit=$root/$new_build/tools/volta-audit/volta-audit
echo "old: $("$old_volta" --version) [$old_rev]"
echo "new: $("$new_volta" --version)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
data=$work/data.txt
write_training_text "$data"
sha() { sha256sum "$1" | cut -d' ' -f1; }
# The files beside database $1 but SQLite's WAL index (-shm) and an empty -wal, which any
# reader of a WAL database may create and which hold nothing of the database's.
files_beside() {
  find "$(dirname "$1")" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort | while read -r f; do
    [ "$f" = "$(basename "$1")-shm" ] && continue
    [ "$f" = "$(basename "$1")-wal" ] && [ ! -s "$1-wal" ] && continue
    echo "$f"
  done | tr '\n' ' '
}
# The rows the old build wrote (runs up to id $2, training runs up to id $3), one line each, by
# Python's sqlite3 so that both builds' files are read alike: what must survive a migration.
snapshot() {
  python3 - "$1" "$2" "$3" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
for row in db.execute(
    "SELECT r.id, r.commit_sha, r.status, r.suites, r.started_at, r.ended_at, "
    "(SELECT count(*) || ':' || group_concat(x.case_ref || x.outcome || x.verdict || "
    "x.output_hash || x.message, ',') FROM result x WHERE x.run_id = r.id), "
    "(SELECT group_concat(i.name || i.sha256, ',') FROM run_input i WHERE i.run_id = r.id) "
    "FROM run r WHERE r.id <= ? ORDER BY r.id", (int(sys.argv[2]),)):
    print("run", *row)
for row in db.execute(
    "SELECT t.id, t.commit_sha, t.status, t.seed, t.config, (SELECT count(*) || ':' || "
    "group_concat(s.step || '=' || s.loss, ',') FROM training_step s WHERE s.run_id = t.id) "
    "FROM training_run t WHERE t.id <= ? ORDER BY t.id", (int(sys.argv[3]),)):
    print("training_run", *row)
PY
}
refuses() {  # refuses NEEDLE COMMAND...: exits non-zero and says NEEDLE
  local out
  if out=$("${@:2}" 2>&1); then echo "  ran, expected a refusal: $out"; return 1; fi
  grep -q -- "$1" <<<"$out" || { echo "  refusal without '$1': $out"; return 1; }
  echo "  $(grep -m1 -- "$1" <<<"$out" | cut -c1-200)"
}

# ---- what the old build writes ----
old_db=$work/old/results.db
mkdir -p "$work/old" "$work/new" "$work/major"
quiet "$old_audit" run parity --backend cpu --no-isolate --db "$old_db"
quiet "$old_volta" train --data "$data" --steps 6 --save "$work/old/model.ckpt" --db "$old_db"
old_digest=$("$old_volta" eval --checkpoint "$work/old/model.ckpt" --data "$data" --digest)
old_runs=$(audit_value "$old_audit" "$old_db" "SELECT max(id) FROM run")
old_training=$(audit_value "$old_audit" "$old_db" "SELECT max(id) FROM training_run")
before=$(snapshot "$old_db" "$old_runs" "$old_training")
old_schema=$(audit_value "$old_audit" "$old_db" "PRAGMA user_version")

# ---- new reads old ----
new_db=$work/new/results.db
cp "$old_db" "$new_db"
check "the new volta-audit migrates the old database (schema $old_schema) and appends a run" \
  quiet "$new_audit" run parity --backend cpu --no-isolate --db "$new_db"
new_schema=$(audit_value "$new_audit" "$new_db" "PRAGMA user_version")
echo "  schema $old_schema -> $new_schema"
check "the old build's $old_runs run(s) and $old_training training run(s) are unchanged after it" \
  test "$(snapshot "$new_db" "$old_runs" "$old_training")" = "$before"
new_version=$("$new_volta" --version | cut -d' ' -f2)
if [ "$(audit_value "$new_audit" "$new_db" \
  "SELECT count(*) FROM pragma_table_info('run') WHERE name = 'volta_version'")" = 1 ]; then
  check "the appended run records the new version ($new_version)" test "$(audit_value \
    "$new_audit" "$new_db" "SELECT volta_version FROM run ORDER BY id DESC LIMIT 1")" = "$new_version"
fi
new_digest=""
evaluate_old_checkpoint() {
  new_digest=$("$new_volta" eval --checkpoint "$work/old/model.ckpt" --data "$data" --digest 2>&1)
}
check "the new volta evaluates the old checkpoint" evaluate_old_checkpoint
# Information, not a check: a release may change a kernel's bits (the determinism suites pin
# them per commit), and then the digests differ.
if [ "$new_digest" = "$old_digest" ]; then
  echo "  the same loss and logits digest in both builds: $(tail -1 <<<"$new_digest")"
else
  echo "  the builds' loss or logits differ (a kernel changed between them):"
  echo "    old: $old_digest"
  echo "    new: $new_digest"
fi
check "the new volta resumes the old checkpoint" quiet "$new_volta" train --data "$data" \
  --steps 8 --resume "$work/old/model.ckpt" --save "$work/new/model.ckpt" --db "$new_db"

# ---- old after new ----
check "the old volta evaluates the new checkpoint (format $(grep -a -o '"format_version":"[0-9.]*"' "$work/new/model.ckpt" | cut -d'"' -f4))" \
  quiet "$old_volta" eval --checkpoint "$work/new/model.ckpt" --data "$data"
check "the old volta resumes the new checkpoint" quiet "$old_volta" train --data "$data" \
  --steps 10 --resume "$work/new/model.ckpt" --save "$work/old/rolled-back.ckpt"
db_sha=$(sha "$new_db")
db_files=$(files_beside "$new_db")
if [ "$new_schema" -gt "$old_schema" ]; then
  check "the old volta-audit refuses the new database (schema $new_schema) for writing" \
    refuses "newer than this build" "$old_audit" run parity --backend cpu --no-isolate --db "$new_db"
  check "the old volta-audit refuses the new database for reading" \
    refuses "newer than this build" "$old_audit" query --db "$new_db" --sql "SELECT 1"
  check "the new database is byte-identical, nothing but an empty WAL and its index beside it" \
    test "$(sha "$new_db") $(files_beside "$new_db")" = "$db_sha $db_files"
else
  echo "SKIP  the old volta-audit and the newer schema: both builds use schema $new_schema"
fi
major=$work/major/model.ckpt
LC_ALL=C sed 's/"format_version":"1\.[0-9]"/"format_version":"2.0"/' "$work/new/model.ckpt" >"$major"
major_sha=$(sha "$major")
check "the old volta refuses a checkpoint of a newer major version (2.0)" \
  refuses "CK-NEWER-MAJOR" "$old_volta" eval --checkpoint "$major" --data "$data"
check "the new volta refuses it too" \
  refuses "CK-NEWER-MAJOR" "$new_volta" eval --checkpoint "$major" --data "$data"
check "the refused checkpoint is byte-identical" test "$(sha "$major")" = "$major_sha"

if [ "$failures" -gt 0 ]; then
  echo "compat_verify: $failures check(s) failed between $old_rev and the tree" >&2
  exit 1
fi
echo "compat_verify: every check held between $old_rev ($(git rev-parse --short "$old_sha")) and the tree"
