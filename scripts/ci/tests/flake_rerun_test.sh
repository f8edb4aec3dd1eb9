#!/usr/bin/env bash
# Flake lane (governance/reliability.md): runs each SUITE twice into one fresh results database,
# as the same build on the same machine, and proves zero FLAKY cases: `volta-audit query flaky`
# lists none and no gate's reason names one. Then, in a copy, one result of the second parity
# run is flipped (a planted flake) and both must catch it: the query lists that case and the
# parity-cpu-reference gate fails with "1 FLAKY case(s)".
# FLAKY counts runs of clean trees only (a dirty tree's code may change between runs), so on a
# dirty tree this exits 77 (CTest: SKIPPED) with that reason; CI's clean clone runs it.
# Usage: flake_rerun_test.sh VOLTA_AUDIT SUITE...   (SUITE: parity, onnx, numerics, ...; parity
# first or among them, for the planted case)
set -euo pipefail
audit="$1"
shift
suites=("$@")
fail() { echo "flake_rerun_test: $1" >&2; exit 1; }
# shellcheck source=scripts/ci/tests/volta_cli.sh
. "$(dirname "$0")/volta_cli.sh"
[[ " ${suites[*]} " == *" parity "* ]] || fail "the suites must include parity (the planted case)"
if "$audit" --version | grep -q -- -dirty; then
  echo "flake_rerun_test: SKIPPED: built from a dirty tree ($("$audit" --version)); FLAKY counts" \
    "runs of clean trees only"
  exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
db="$tmp/results.db"
for round in 1 2; do
  for suite in "${suites[@]}"; do
    backend=()
    [ "$suite" = parity ] && backend=(--backend cpu)
    # A run with unexpected results exits 1 and still completes; whether its rows are as
    # expected is its gate's business, not this lane's: here only a difference between the
    # two rounds counts, and every run must have completed (a suite may record one run per
    # backend).
    complete="SELECT count(*) FROM run WHERE status = 'complete' AND suites = '$suite'"
    before=0
    [ ! -e "$db" ] || before=$(audit_value "$audit" "$db" "$complete")
    "$audit" run "$suite" "${backend[@]}" --db "$db" >"$tmp/$suite-$round.log" 2>&1 || true
    if [ "$(audit_value "$audit" "$db" "$complete")" -le "$before" ] ||
      [ "$(audit_value "$audit" "$db" "SELECT count(*) FROM run WHERE status <> 'complete'")" != 0 ]; then
      fail "round $round: volta-audit run $suite did not complete: $(tail -3 "$tmp/$suite-$round.log")"
    fi
  done
done
cases=$(audit_value "$audit" "$db" "SELECT count(DISTINCT case_ref) FROM result")

flaky_rows() { "$audit" query flaky --db "$1" | awk 'NR > 1 && NF' | grep -v '^(' || true; }
gates() { "$audit" gate --db "$1" 2>&1 || true; }
found=$(flaky_rows "$db")
[ -z "$found" ] || fail "FLAKY cases between two runs of one build: $found"
if gates "$db" | grep -q "FLAKY"; then fail "a gate names a FLAKY case: $(gates "$db" | grep FLAKY)"; fi
echo "${suites[*]} run twice: $cases cases, 0 FLAKY (volta-audit query flaky and every gate)"

# The planted flake: one parity case passes in the first run and fails in the second.
planted="$tmp/planted.db"
"$audit" query --db "$db" --sql "SELECT 1" >/dev/null  # settles the WAL into the file
cp "$db" "$planted"
python3 - "$planted" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
run = db.execute("SELECT max(id) FROM run WHERE suites = 'parity'").fetchone()[0]
row = db.execute("SELECT r.id FROM result r JOIN test_case c ON c.id = r.case_ref "
                 "WHERE r.run_id = ? AND c.backend = 'cpu' AND r.outcome = 'PASS' "
                 "ORDER BY c.case_id LIMIT 1", (run,)).fetchone()[0]
db.execute("UPDATE result SET outcome = 'FAIL_NUMERIC', verdict = 'unexpected' WHERE id = ?", (row,))
db.commit()
PY
found=$(flaky_rows "$planted")
[ "$(grep -c . <<<"$found")" = 1 ] || fail "the planted flake: query flaky lists '$found'"
grep -q "PASS in run .*FAIL_NUMERIC in run" <<<"$found" || fail "the planted flake's outcomes: $found"
parity_gate=$(gates "$planted" | grep "parity-cpu-reference")
grep -q "FAIL.*1 FLAKY case(s)" <<<"$parity_gate" || fail "the parity gate missed the planted flake: $parity_gate"
echo "the planted flake caught by the query and the parity-cpu-reference gate:"
echo "  $(tr -s ' ' <<<"$found" | cut -c1-160)"
