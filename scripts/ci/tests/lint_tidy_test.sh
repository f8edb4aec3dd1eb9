#!/usr/bin/env bash
# The lint lane's clang-tidy cache (scripts/ci/lint_tidy.sh) on synthetic sources: a reused
# result with findings still fails the lane, an edited header re-lints exactly the files that
# include it, an edited .clang-tidy re-lints every file, and a crash is never stored. A
# clang-tidy in front of the real one logs the files it is run on. Exit 77 (skipped) when
# clang-tidy or the clang++ beside it is missing.
set -euo pipefail
lint_tidy="$(cd "$(dirname "$0")/.." && pwd)/lint_tidy.sh"
real_tidy=$(command -v clang-tidy) || { echo "lint_tidy_test: no clang-tidy" >&2; exit 77; }
real_clangxx="$(dirname "$(readlink -f "$real_tidy")")/clang++"
[ -x "$real_clangxx" ] || { echo "lint_tidy_test: no $real_clangxx" >&2; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/src" "$tmp/build"
cat >"$tmp/bin/clang-tidy" <<SHIM
#!/usr/bin/env bash
file="\${*: -1}"
[ "\$file" = --version ] || echo "\$file" >>"$tmp/tidy.log"
[ "\$file" = "\${CRASH_ON:-}" ] && exit 139
exec "$real_tidy" "\$@"
SHIM
chmod +x "$tmp/bin/clang-tidy"
ln -s "$real_clangxx" "$tmp/bin/clang++"
export PATH="$tmp/bin:$PATH"

cat >"$tmp/src/.clang-tidy" <<'CFG'
Checks: '-*,modernize-use-nullptr'
HeaderFilterRegex: '.*'
CFG
echo 'inline int add(int a, int b) { return a + b; }' >"$tmp/src/add.h"
printf '#include "add.h"\nint three() { return add(1, 2); }\n' >"$tmp/src/uses_header.cpp"
printf 'int* null_pointer = 0;\n' >"$tmp/src/finding.cpp"
printf 'int four() { return 4; }\n' >"$tmp/src/clean.cpp"
printf 'int five() { return 5; }\n' >"$tmp/src/not_in_db.cpp"
{
  echo "["
  sep=""
  for f in uses_header finding clean; do
    printf '%s{"directory": "%s", "file": "%s",\n' "$sep" "$tmp/build" "$tmp/src/$f.cpp"
    printf ' "command": "/usr/bin/c++ -std=c++20 -I%s -o %s.o -c %s"}\n' \
      "$tmp/src" "$f" "$tmp/src/$f.cpp"
    sep=","
  done
  echo "]"
} >"$tmp/build/compile_commands.json"

cd "$tmp"
files=(src/uses_header.cpp src/finding.cpp src/clean.cpp src/not_in_db.cpp)
failures=0
# check NAME EXPECTED_STATUS EXPECTED_RELINTED: runs the lane, compares its exit status and the
# files clang-tidy ran on (sorted, space-separated) with the expected ones.
check() {
  local name=$1 want_status=$2 want_linted=$3 status=0 linted
  : >tidy.log
  "$lint_tidy" build cache "${files[@]}" >stdout 2>stderr || status=$?
  linted=$(sort tidy.log | tr '\n' ' ' | sed 's/ $//')
  if [ "$status" -ne "$want_status" ] || [ "$linted" != "$want_linted" ]; then
    echo "FAIL $name: exit $status (want $want_status), clang-tidy ran on '$linted'" \
      "(want '$want_linted')" >&2
    sed 's/^/  stderr: /' stderr >&2
    failures=$((failures + 1))
  else
    echo "ok   $name"
  fi
}
expect_in_stderr() {
  if ! grep -qF -- "$2" stderr; then
    echo "FAIL $1: stderr lacks '$2'" >&2
    sed 's/^/  stderr: /' stderr >&2
    failures=$((failures + 1))
  fi
}
all="src/clean.cpp src/finding.cpp src/not_in_db.cpp src/uses_header.cpp"

check "cold cache: every file is linted, the finding fails the lane" 1 "$all"
expect_in_stderr cold "finding.cpp:1:21: warning: use nullptr [modernize-use-nullptr]"
expect_in_stderr cold "lint: clang-tidy reported the findings above"
cp stderr cold.stderr

check "warm cache: only the file outside the database is linted, the reused finding fails" 1 \
  src/not_in_db.cpp
if ! cmp -s cold.stderr stderr; then
  echo "FAIL warm: its messages differ from the cold run's" >&2
  failures=$((failures + 1))
fi

touch src/*.cpp src/add.h
check "touched (unchanged) files are still hits" 1 src/not_in_db.cpp

echo 'inline int* no_pointer() { return 0; }' >>src/add.h
check "edited header: only its includer is linted, and its new finding fails" 1 \
  "src/not_in_db.cpp src/uses_header.cpp"
expect_in_stderr header "add.h:2:35: warning: use nullptr [modernize-use-nullptr]"

echo '// a comment only, which -E drops' >>src/add.h
check "comment-only header edit: its includer is linted" 1 \
  "src/not_in_db.cpp src/uses_header.cpp"

sed -i 's|= 0;|= 0;  // NOLINT|' src/finding.cpp
sed -i 's|return 0; }|return 0; }  // NOLINT|' src/add.h
check "NOLINT added: the edited files are linted and the lane passes" 0 \
  "src/finding.cpp src/not_in_db.cpp src/uses_header.cpp"

echo '# edited' >>src/.clang-tidy
check "edited .clang-tidy: every file is linted" 0 "$all"

echo '# edited again' >>src/.clang-tidy
CRASH_ON=src/clean.cpp check "crash: the lane fails" 1 "$all"
expect_in_stderr crash "src/clean.cpp (exit 139)"
expect_in_stderr crash "lint: clang-tidy crashed on the files above"
check "a crash is not stored: the crashed file is linted again" 0 \
  "src/clean.cpp src/not_in_db.cpp"

if [ "$failures" -ne 0 ]; then
  echo "lint_tidy_test: $failures failure(s)" >&2
  exit 1
fi
echo "lint_tidy_test: all passed"
