#!/usr/bin/env bash
# Coverage lane (governance/reliability.md): builds the coverage preset (gcov at -O1 with
# assertions), runs the tests but the slow and perf ones, and reports line and branch coverage
# of engine/ and conformance/ (tests, fuzz targets and generated files left out) per component,
# with the least-covered files. The report is build/coverage/report/ (coverage.txt, summary.json,
# index.html); the target is >= 85 % of lines in engine/ and in conformance/.
# Usage: scripts/ci/coverage.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/ci/bootstrap.sh --coverage
VOLTA_WERROR="${VOLTA_WERROR:-ON}" cmake --preset coverage >/dev/null
cmake --build --preset coverage
find build/coverage -name '*.gcda' -delete  # counts from this run only
ctest --preset coverage -LE 'slow|perf' -j "$(nproc 2>/dev/null || echo 2)" || \
  echo "coverage: some tests failed; the report still counts what ran" >&2

report=build/coverage/report
mkdir -p "$report"
gcovr --root . --object-directory build/coverage --gcov-executable gcov \
  --filter 'engine/' --filter 'conformance/' --filter 'reference/' --filter 'tools/' \
  --exclude '.*/tests/.*' --exclude '.*/fuzz/.*' --exclude 'build/.*' \
  --exclude-unreachable-branches --print-summary \
  --txt "$report/coverage.txt" --json-summary-pretty --json-summary "$report/summary.json" \
  --html-details "$report/index.html" >"$report/summary.txt"
cat "$report/summary.txt"

# Per component (the first two path levels) and the ten least-covered files of 50+ lines.
python3 - "$report/summary.json" <<'PY'
import collections, json, sys
files = json.load(open(sys.argv[1]))["files"]
def pct(covered, total): return 100.0 * covered / total if total else 100.0
parts = collections.defaultdict(lambda: [0, 0, 0, 0])
for f in files:
    top = f["filename"].split("/")[0]
    key = "/".join(f["filename"].split("/")[:2]) if top == "engine" else top
    for k in (key, top + "/ (all)"):
        p = parts[k]
        p[0] += f["line_covered"]; p[1] += f["line_total"]
        p[2] += f["branch_covered"]; p[3] += f["branch_total"]
print(f"{'component':28} {'lines':>16} {'branches':>18}")
for k in sorted(parts):
    lc, lt, bc, bt = parts[k]
    print(f"{k:28} {pct(lc, lt):6.1f}% of {lt:6d} {pct(bc, bt):6.1f}% of {bt:7d}")
print("\nleast-covered files (50+ lines):")
for f in sorted((f for f in files if f["line_total"] >= 50), key=lambda f: f["line_percent"])[:10]:
    print(f"  {f['line_percent']:5.1f}%  {f['filename']} ({f['line_total']} lines)")
for top in ("engine", "conformance"):
    lc, lt, _, _ = parts[top + "/ (all)"]
    verdict = "meets" if pct(lc, lt) >= 85 else "is below"
    print(f"coverage: {top}/ lines {pct(lc, lt):.1f}% {verdict} the 85% target")
PY
