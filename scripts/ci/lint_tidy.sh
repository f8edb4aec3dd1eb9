#!/usr/bin/env bash
# clang-tidy for the lint lane (scripts/ci/lint.sh): runs it over FILE... with the compile
# database in DB_DIR, one file per invocation so that one crash cannot hide the findings of the
# files after it, and fails with lint.sh's messages when it crashes on a file or reports a
# finding. A file's result (its findings, or that it had none) is stored in CACHE_DIR under a
# key of everything clang-tidy reads for it, and reused while that key is unchanged: a reused
# finding fails the lane as a fresh one does; a crash is never stored.
# Usage: scripts/ci/lint_tidy.sh DB_DIR CACHE_DIR FILE...   (FILEs relative to the current dir)
#
# The key is the sha256 of
#  - `clang-tidy --version` and the flags given to it here;
#  - every .clang-tidy from the file's directory up to / (the nearest applies, and its parents
#    do through InheritParentConfig);
#  - the file's compile database entries (directory and command; clang-tidy runs each);
#  - the translation unit each command preprocesses to (-E, line markers kept), run with the
#    clang++ installed beside clang-tidy, so that it takes the `#if __clang__` branches that
#    clang-tidy parses: any change to an included header, or a header now found elsewhere,
#    changes it;
#  - the bytes of every file that translation unit names, because -E drops the comments
#    (NOLINT) and spacing that findings and their line and column numbers depend on.
# A file without a database entry, or whose preprocessing fails, is linted without the cache.
# The key holds absolute paths, so entries are reused only by a checkout in the same directory.
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: scripts/ci/lint_tidy.sh DB_DIR CACHE_DIR FILE..." >&2
  exit 2
fi
db_dir=$1
cache_dir=$2
shift 2
[ $# -eq 0 ] && exit 0

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$cache_dir" "$work/results" "$work/entries"

# Fixed in the function below, and part of every key.
tidy_flags="--quiet --extra-arg=-Wno-unknown-warning-option"
tidy_version=$(clang-tidy --version 2>/dev/null || true)
clangxx=""
if tidy_path=$(command -v clang-tidy); then
  clangxx="$(dirname "$(readlink -f "$tidy_path")")/clang++"
  [ -x "$clangxx" ] || clangxx=""
fi

# python3 (which Debian's clang-tidy depends on) reads the database. For FILE number i it
# writes entries/i.key (the file's database entries, as they are written there) and, per entry
# k, entries/i.k.dir and entries/i.k.args (the command's arguments, NUL-separated, without the
# compiler, output and dependency-file options: what -E needs).
printf '%s\0' "$@" | python3 -c '
import json, os, shlex, sys
db_dir, work = sys.argv[1], sys.argv[2]
with open(os.path.join(db_dir, "compile_commands.json")) as f:
    entries = json.load(f)
by_file = {}
for e in entries:
    path = os.path.realpath(os.path.join(e["directory"], e["file"]))
    by_file.setdefault(path, []).append(e)
with_value = {"-o", "-MF", "-MT", "-MQ", "-MJ"}
dropped = {"-c", "-M", "-MM", "-MD", "-MMD", "-MP"}
files = sys.stdin.buffer.read().split(b"\0")[:-1]
for i, name in enumerate(files):
    found = by_file.get(os.path.realpath(name.decode()), [])
    base = os.path.join(work, "entries", str(i))
    with open(base + ".key", "w") as f:
        json.dump(found, f, sort_keys=True)
    for k, e in enumerate(found):
        args = e["arguments"] if "arguments" in e else shlex.split(e["command"])
        kept, skip = [], False
        for a in args[1:]:
            if skip:
                skip = False
            elif a in with_value:
                skip = True
            elif a not in dropped and not (a.startswith("-o") and len(a) > 2):
                kept.append(a)
        with open(f"{base}.{k}.dir", "w") as f:
            f.write(e["directory"])
        with open(f"{base}.{k}.args", "wb") as f:
            f.write(b"".join(a.encode() + b"\0" for a in kept))
' "$db_dir" "$work"

# Prints FILE number $1's cache key; fails when it cannot be computed.
cache_key() {
  local i=$1 file=$2 dir entry argv material="$work/entries/$1.material"
  [ -n "$clangxx" ] && [ -f "$work/entries/$i.0.dir" ] || return 1
  {
    printf 'clang-tidy %s\n%s\n' "$tidy_version" "$tidy_flags"
    dir=$(cd "$(dirname "$file")" && pwd -P) || return 1
    while :; do
      if [ -f "$dir/.clang-tidy" ]; then
        printf 'config %s\n' "$dir/.clang-tidy"
        cat "$dir/.clang-tidy" || return 1
      fi
      [ "$dir" = / ] && break
      dir=$(dirname "$dir")
    done
    printf 'entries\n'
    cat "$work/entries/$i.key" || return 1
    for entry in "$work/entries/$i".*.dir; do
      entry=${entry%.dir}
      dir=$(cat "$entry.dir") || return 1
      mapfile -d '' argv <"$entry.args" || return 1
      (cd "$dir" && "$clangxx" "${argv[@]}" -E -Wno-unknown-warning-option) >"$entry.tu" \
        2>/dev/null || return 1
      printf 'translation unit %s\n' "$(sha256sum <"$entry.tu")"
      sed -nE 's/^# [0-9]+ "([^<].*)"( [0-9])*$/\1/p' "$entry.tu" | sort -u >"$entry.names" ||
        return 1
      rm -f "$entry.tu"
      (cd "$dir" && xargs -d '\n' -r sha256sum --) <"$entry.names" || return 1
    done
  } >"$material" || return 1
  sha256sum <"$material" | cut -d' ' -f1
}

# Lints FILE number $1 into results/i: a line `exit STATUS`, then clang-tidy's output.
lint_one() {
  local i=$1 file=$2 key="" rc=0 result="$work/results/$1"
  key=$(cache_key "$i" "$file") || key=""
  if [ -n "$key" ] && cp "$cache_dir/$key" "$result.tmp" 2>/dev/null; then
    mv "$result.tmp" "$result"
    return 0
  fi
  # shellcheck disable=SC2086  # tidy_flags is a fixed list of words
  clang-tidy -p "$db_dir" $tidy_flags "$file" >"$result.out" 2>/dev/null || rc=$?
  { echo "exit $rc"; cat "$result.out"; } >"$result.tmp" || return 0
  rm -f "$result.out"
  if [ -n "$key" ] && [ "$rc" -le 1 ]; then
    # Written whole, then renamed: a concurrent run never reads half an entry.
    if ! cp "$result.tmp" "$cache_dir/$key.$$" ||
      ! mv -f "$cache_dir/$key.$$" "$cache_dir/$key"; then
      rm -f "$cache_dir/$key.$$"
    fi
  fi
  mv "$result.tmp" "$result"
}

export db_dir cache_dir work tidy_flags tidy_version clangxx
export -f cache_key lint_one
files=("$@")
# A file whose job failed has no result and fails the lane below.
# shellcheck disable=SC2016  # expanded by the bash that xargs starts
for i in "${!files[@]}"; do printf '%s\0%s\0' "$i" "${files[$i]}"; done |
  xargs -0 -n 2 -P "$(nproc 2>/dev/null || echo 2)" \
    bash -c 'set -o pipefail; lint_one "$1" "$2" || true' _ || true

out="$work/out"
crashed="$work/crashed"
: >"$out"
: >"$crashed"
for i in "${!files[@]}"; do
  result="$work/results/$i"
  rc=$(head -n 1 "$result" 2>/dev/null || true)
  case "$rc" in
    "exit 0" | "exit 1") tail -n +2 "$result" >>"$out" ;;
    "exit "*) echo "${files[$i]} (${rc})" >>"$crashed" ;;
    *) echo "${files[$i]} (no result)" >>"$crashed" ;;
  esac
done
if [ -s "$crashed" ]; then
  cat "$crashed" >&2
  echo "lint: clang-tidy crashed on the files above" >&2
  exit 1
fi
if grep -qE "(warning|error):" "$out"; then
  grep -E "(warning|error):" "$out" | sort -u >&2
  echo "lint: clang-tidy reported the findings above" >&2
  exit 1
fi
