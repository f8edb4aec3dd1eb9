#!/usr/bin/env bash
# Installs the Debian packages Volta's build needs, only those missing, then the interop tests'
# pinned PyPI packages in build/interop-venv (scripts/ci/interop_venv.sh; tests only, the
# product has no Python dependency). Idempotent and silent when everything is present. Needs
# root (or sudo) only when a Debian package is missing.
# Usage: scripts/ci/bootstrap.sh [--peers | --coverage]
#   --peers     also the perf peers' Debian packages (PyTorch, for `volta-audit perf`'s torch
#               lanes; about 180 packages, so the test lane leaves them out and reports those
#               lanes SKIPPED)
#   --coverage  also gcovr, for scripts/ci/coverage.sh
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config
  lld                   # the linker (CMakeLists.txt: about a third of GNU ld's link time)
  libboost-test-dev     # unit and conformance tests (Boost.Test)
  librapidcheck-dev     # property-based tests
  libbenchmark-dev      # perf/ (Google Benchmark)
  libsqlite3-dev        # the results store
  libonnx-dev libprotobuf-dev  # engine/onnx: ONNX import via the ONNX library's protobuf types
  libonnx-testdata      # conformance/onnx: the ONNX backend test data (1,072 model tests)
  clang-format clang-tidy  # scripts/ci/lint.sh
  clang libclang-rt-dev    # scripts/ci/fuzz.sh: libFuzzer, ASan and UBSan for the fuzz targets
  ccache                # compiler cache: the build uses it as the compiler launcher when present
  python3-venv          # scripts/ci/interop_venv.sh: the interop tests' virtual environment
)
case "${1:-}" in
  --peers) packages+=(python3-torch) ;;  # the torch peer lanes, in /usr/bin/python3
  --coverage) packages+=(gcovr) ;;       # scripts/ci/coverage.sh's report
  "") ;;
  *) echo "bootstrap: unknown argument '$1' (supported: --peers, --coverage)" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    as_root=()
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
  else
    echo "bootstrap: missing Debian packages: ${missing[*]}" >&2
    echo "bootstrap: run as root, or install them: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi

  echo "bootstrap: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" apt-get update -qq
  "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "bootstrap: done"
fi

"$(dirname "$0")/interop_venv.sh"
