#!/usr/bin/env bash
# Builds the CUDA verification bundle: everything scripts/ci/cuda_verify.sh needs on a GPU
# machine that has the NVIDIA driver and nothing of Volta's Debian dependencies. Writes
# build/cuda-bundle/volta-cuda.tar.xz (and MANIFEST.txt beside it), under 60 MiB:
#   bin/    volta, volta-audit, volta-perf and every test binary labelled `cuda` (but the host
#           emulation tests), stripped
#   lib/    the non-system shared libraries they load (found with ldd; glibc and the driver
#           stay the machine's: the CUDA runtime is linked in statically)
#   tests.tsv   the cuda-labelled tests, fields split by 0x1f: name, skip regex, pass regex
#               (each a list of Perl regexes joined by |, newlines written \n), binary, arguments
#   src/    the tracked files of this checkout (expectations, policies, governance files the
#           audit reads, found through VOLTA_SOURCE_DIR)
#   onnx-data/  the ONNX backend test data (libonnx-testdata)
# Usage: scripts/ci/cuda_bundle.sh [--preset NAME]   (default: release)
set -euo pipefail
cd "$(dirname "$0")/../.."

preset=release
while [ $# -gt 0 ]; do
  case "$1" in
    --preset) preset="$2"; shift ;;
    *) echo "cuda_bundle.sh: unknown argument '$1' (supported: --preset NAME)" >&2; exit 2 ;;
  esac
  shift
done

limit_bytes=$((60 * 1024 * 1024))
onnx_data=/usr/share/libonnx-testdata/data
out=build/cuda-bundle
build="build/$preset"

scripts/ci/bootstrap.sh
if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "cuda_bundle.sh: nvcc is not installed: the bundle's point is the CUDA backend" >&2
  exit 1
fi
export VOLTA_WERROR="${VOLTA_WERROR:-ON}"
cmake --preset "$preset" >/dev/null
if ! grep -q '^VOLTA_CUDA:BOOL=ON' "$build/CMakeCache.txt"; then
  echo "cuda_bundle.sh: $build is configured without the CUDA backend (VOLTA_CUDA=OFF)" >&2
  exit 1
fi

# The cuda-labelled tests as CTest knows them, fields split by the unit separator (0x1f; tabs
# would collapse where a field is empty): name, skip, pass, binary, arguments. CTest passes a
# test when its output matches any one expression of the list. The *_emulation_test ones run
# the kernels' code on the host, which the GPU machine would only repeat: left out.
tests_tsv=$(ctest --test-dir "$build" -L cuda -E '_emulation_test$' --show-only=json-v1 | python3 -c '
import json, sys
def regexes(props, name):
    return "|".join("(?:" + r.replace("\n", "\\n").replace("\t", "\\t") + ")"
                    for r in props.get(name, []))
for t in json.load(sys.stdin)["tests"]:
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    fields = [t["name"], regexes(props, "SKIP_REGULAR_EXPRESSION"),
              regexes(props, "PASS_REGULAR_EXPRESSION"), t["command"][0],
              " ".join(t["command"][1:])]
    print("\x1f".join(fields))
')
if [ -z "$tests_tsv" ]; then
  echo "cuda_bundle.sh: CTest lists no test labelled cuda in $build" >&2
  exit 1
fi
sep=$'\x1f'
mapfile -t test_binaries < <(cut -d "$sep" -f4 <<<"$tests_tsv" | sort -u)
targets=(volta volta-audit volta-perf)
for exe in "${test_binaries[@]}"; do
  name=$(basename "$exe")
  [[ " ${targets[*]} " == *" $name "* ]] || targets+=("$name")
done
cmake --build --preset "$preset" --target "${targets[@]}"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$stage/src"
binaries=("$build/tools/volta/volta" "$build/tools/volta-audit/volta-audit"
          "$build/perf/volta-perf" "${test_binaries[@]}")
for exe in "${binaries[@]}"; do
  strip -o "$stage/bin/$(basename "$exe")" "$exe"
done

# Shared libraries beyond glibc's own and the driver's: those the GPU machine lacks.
system_libs='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libcuda|libnvidia)[.-]'
ldd "${binaries[@]}" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
  while read -r soname path; do
    if [[ ! "$soname" =~ $system_libs ]]; then
      cp -L "$path" "$stage/lib/$soname"
      strip --strip-unneeded "$stage/lib/$soname"
    fi
  done

# tests.tsv names each binary, and the ONNX test data a test reads, relative to the bundle.
while IFS="$sep" read -r name skip pass exe args; do
  printf '%s\x1f%s\x1f%s\x1fbin/%s\x1f%s\n' "$name" "$skip" "$pass" "$(basename "$exe")" \
    "${args//$onnx_data/onnx-data}"
done <<<"$tests_tsv" >"$stage/tests.tsv"

git ls-files -z | tar --null -T - -cf - | tar -C "$stage/src" -xf -
commit=$(git rev-parse HEAD)
dirty=$(git status --porcelain --untracked-files=no | head -c1)
cp -r "$onnx_data" "$stage/onnx-data"
{
  echo "volta CUDA bundle"
  echo "commit: $commit${dirty:+ (with uncommitted changes)}"
  echo "preset: $preset"
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release && echo "$PRETTY_NAME")"
  echo "cuda architectures: $(sed -n 's/^VOLTA_CUDA_ARCHITECTURES:[A-Z]*=//p' "$build/CMakeCache.txt")"
  echo "binaries: $(ls "$stage/bin" | tr '\n' ' ')"
  echo "libraries: $(ls "$stage/lib" | tr '\n' ' ')"
  echo "tests: $(cut -d "$sep" -f1 "$stage/tests.tsv" | tr '\n' ' ')"
} >"$stage/MANIFEST.txt"

rm -rf "$out"
mkdir -p "$out"
tar -C "$stage" -cf - . | xz -T0 -6 >"$out/volta-cuda.tar.xz"
cp "$stage/MANIFEST.txt" "$out/MANIFEST.txt"
size=$(stat -c %s "$out/volta-cuda.tar.xz")
echo "size: $size bytes" >>"$out/MANIFEST.txt"
cat "$out/MANIFEST.txt"
if [ "$size" -gt "$limit_bytes" ]; then
  echo "cuda_bundle.sh: the bundle is $size bytes, over its limit of $limit_bytes (60 MiB)" >&2
  exit 1
fi
echo "wrote $out/volta-cuda.tar.xz; on the GPU machine: scripts/ci/cuda_verify.sh $out"
