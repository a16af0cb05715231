#!/usr/bin/env bash
# Builds warpcsv for sm_90 here (no GPU needed, nvcc is enough), from the working tree into
# build-carry/new and from an older commit (OLD, default HEAD~1; OLD=none: no older build) into
# build-carry/old, with libfmt beside them for a machine that lacks it, so that a GPU machine's
# call carries the binaries (`carry: ["build-carry/new", "build-carry/old", "build-carry/lib",
# ".duck"]`, ~20 MB) and spends no device time building: tools/lab/device-carried-ab.sh. About
# 7 minutes on two cores for both. TESTS=1 also builds the GPU differential tests into
# build-carry/new/tests (12 MB more), for scripts/gpu-check.sh with BUILD_DIR=build-carry/new.
# CUDA_FLAGS (e.g. "-lineinfo") go to nvcc for both builds: for ncu's per-line samples.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
OLD=${OLD:-HEAD~1}
C=build-carry
mkdir -p "$C/new" "$C/old" "$C/lib"
flags=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90-real -DWARPCSV_MPI=OFF
       "-DCMAKE_CUDA_FLAGS=${CUDA_FLAGS:-}")
if [ "${TESTS:-0}" = 1 ]; then
  cmake -S . -B "$C/build-new" "${flags[@]}" -DWARPCSV_TESTS=ON >/dev/null
  cmake --build "$C/build-new" -j"$(nproc)" --target warpcsv gpu_tests
  mkdir -p "$C/new/tests" && cp "$C/build-new/tests/gpu_tests" "$C/new/tests/"
else
  cmake -S . -B "$C/build-new" "${flags[@]}" -DWARPCSV_TESTS=OFF >/dev/null
  cmake --build "$C/build-new" -j"$(nproc)" --target warpcsv
  rm -rf "$C/new/tests"
fi
cp "$C/build-new/warpcsv" "$C/new/"
flags+=(-DWARPCSV_TESTS=OFF)
if [ "$OLD" != none ]; then
  rm -rf "$C/src-old" && mkdir -p "$C/src-old" && git archive "$OLD" | tar x -C "$C/src-old"
  cmake -S "$C/src-old" -B "$C/build-old" "${flags[@]}" >/dev/null
  cmake --build "$C/build-old" -j"$(nproc)" --target warpcsv
  cp "$C/build-old/warpcsv" "$C/old/"
fi
cp -L "$(ldd "$C/new/warpcsv" | awk '/libfmt/ { print $3 }')" "$C/lib/"
echo "carry build-carry/new, build-carry/old and build-carry/lib: $(du -sh "$C/new" "$C/old" "$C/lib" | awk '{print $1}' | tr '\n' ' ')"
