#!/usr/bin/env bash
# Builds warpcsv and runs every test with ctest (unit, differential, CLI; GPU tests skip
# themselves without a GPU). Set-up on a fresh Debian 12 machine included: missing build
# dependencies are installed with apt-get (libzstd-dev, for .zst input, only when possible).
#
#   scripts/test.sh               configure (Release), build with all cores, run ctest
#   scripts/test.sh --build-only  install dependencies and build, no tests
#
# Environment: WARPCSV_CUDA=OFF builds without the CUDA executor (default ON when nvcc is at
# /usr/local/cuda/bin); WARPCSV_SANITIZE=1 builds with ASan/UBSan in build-sanitize/ (CPU
# only, without MPI); BUILD_DIR overrides the build directory; JOBS the number of parallel jobs.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_ONLY=0
[ "${1:-}" = "--build-only" ] && BUILD_ONLY=1

# --- dependencies -----------------------------------------------------------------------
DEPS=(cmake make g++ libcli11-dev libfmt-dev catch2 zlib1g-dev gzip libopenmpi-dev openmpi-bin)
# Optional: without libzstd-dev the build works but refuses .zst input with a message. Installed
# when missing and possible; an install that fails (no network) is a warning, not an error.
OPTIONAL_DEPS=(libzstd-dev)
missing=()
for p in "${DEPS[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
missing_optional=()
for p in "${OPTIONAL_DEPS[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing_optional+=("$p")
done
SUDO=""
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then SUDO=sudo; fi
can_install() { [ "$(id -u)" -eq 0 ] || [ -n "$SUDO" ]; }
apt_get() { $SUDO env DEBIAN_FRONTEND=noninteractive apt-get "$@"; }
updated=0
if [ ${#missing[@]} -gt 0 ]; then
  if ! can_install; then
    echo "test.sh: need root (or sudo) to apt-get install ${missing[*]}" >&2
    exit 1
  fi
  echo "test.sh: installing ${missing[*]}" >&2
  apt_get update -q
  updated=1
  apt_get install -y -q --no-install-recommends "${missing[@]}"
fi
if [ ${#missing_optional[@]} -gt 0 ]; then
  echo "test.sh: installing ${missing_optional[*]} (optional)" >&2
  if can_install && { [ "$updated" = 1 ] || apt_get update -q; } &&
     apt_get install -y -q --no-install-recommends "${missing_optional[@]}"; then
    :
  else
    echo "test.sh: could not install ${missing_optional[*]}; building without zstd input" \
         "(.zst files are refused with a message)" >&2
  fi
fi

# --- configure and build ----------------------------------------------------------------
if [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
JOBS=${JOBS:-$(nproc)}
CUDA=${WARPCSV_CUDA:-ON}
EXTRA=()
if [ "${WARPCSV_SANITIZE:-0}" = "1" ]; then
  BUILD=${BUILD_DIR:-$ROOT/build-sanitize}
  CUDA=OFF  # the sanitizers instrument host code only
  # Without MPI: the library's own allocations would be reported as leaks, and this build
  # shows that one without MPI passes every other test.
  EXTRA+=(-DWARPCSV_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWARPCSV_MPI=OFF)
  # Reports also go to files: a test that redirects stderr (CaptureStderr) would swallow them,
  # and the run would end with exit 1 and no word why. Printed below when ctest fails.
  SANITIZER_LOG=$BUILD/sanitizer-report
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:log_path=$SANITIZER_LOG}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:log_path=$SANITIZER_LOG}
else
  BUILD=${BUILD_DIR:-$ROOT/build}
  EXTRA+=(-DCMAKE_BUILD_TYPE=Release)
fi

cmake -S "$ROOT" -B "$BUILD" -DWARPCSV_CUDA="$CUDA" -DWARPCSV_WERROR="${WARPCSV_WERROR:-ON}" "${EXTRA[@]}"
cmake --build "$BUILD" -j "$JOBS"
echo "test.sh: built $BUILD/warpcsv" >&2
[ "$BUILD_ONLY" = "1" ] && exit 0

# --- tests --------------------------------------------------------------------------------
cd "$BUILD"
rm -f "${SANITIZER_LOG:-/nonexistent}".*
if ! ctest --output-on-failure -j "$JOBS"; then
  for f in "${SANITIZER_LOG:-/nonexistent}".*; do
    [ -e "$f" ] && { echo "test.sh: sanitizer report $f:" >&2; cat "$f" >&2; }
  done
  exit 1
fi
