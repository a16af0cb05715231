#!/usr/bin/env bash
# Builds warpcsv for sm_90 here (no GPU needed, nvcc is enough), from the working tree into
# build-carry/new and from an older commit (OLD, default HEAD~1) into build-carry/old, with
# libfmt beside them for a machine that lacks it, so that a GPU machine's call carries the
# binaries (`carry: ["build-carry", ".duck"]`, ~20 MB) and spends no device time building:
# tools/lab/device-carried-ab.sh. About 7 minutes on two cores for both.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
OLD=${OLD:-HEAD~1}
C=build-carry
mkdir -p "$C/new" "$C/old" "$C/lib"
flags=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90-real -DWARPCSV_TESTS=OFF -DWARPCSV_MPI=OFF)
cmake -S . -B "$C/build-new" "${flags[@]}" >/dev/null && cmake --build "$C/build-new" -j"$(nproc)" --target warpcsv
cp "$C/build-new/warpcsv" "$C/new/"
rm -rf "$C/src-old" && mkdir -p "$C/src-old" && git archive "$OLD" | tar x -C "$C/src-old"
cmake -S "$C/src-old" -B "$C/build-old" "${flags[@]}" >/dev/null && cmake --build "$C/build-old" -j"$(nproc)" --target warpcsv
cp "$C/build-old/warpcsv" "$C/old/"
cp -L "$(ldd "$C/new/warpcsv" | awk '/libfmt/ { print $3 }')" "$C/lib/"
echo "carry build-carry/new, build-carry/old and build-carry/lib: $(du -sh "$C/new" "$C/old" "$C/lib" | awk '{print $1}' | tr '\n' ' ')"
