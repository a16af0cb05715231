#!/usr/bin/env bash
# A short GPU-machine check of the final code: build for sm_90, the GPU
# differential tests, then bench.sh (DuckDB side by side) on 1 GPU and on all
# GPUs, with --profile of q1 and q3. For the full check use gpu-check.sh.
set -u
OUT=${OUT:-/tmp/device-out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0
cd "$(dirname "$0")/../.."
[ -f .peers/libduckdb.so.xz ] && (cd .peers && xz -dkf libduckdb.so.xz)
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j"$(nproc)" >>"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
timeout 120 build-gpu/tests/gpu_tests '[gpu]' >"$OUT/gpu_tests.log" 2>&1; echo "gpu_tests rc=$?"; tail -2 "$OUT/gpu_tests.log"
ROWS=100000000
for dev in 0 gpu; do
  DEVICE=$dev ROWS=$ROWS THREADS=$(nproc) REPS=2 QUERIES="q1 q3" WARPCSV=build-gpu/warpcsv DUCKQ=.peers/duckq \
    GEN_GROUPBY=scripts/gen_groupby.c BENCH_DIR=/dev/shm timeout 100 scripts/bench.sh 2>&1 | grep -E '^\|' | tee "$OUT/bench-$dev.txt"
done
F=/dev/shm/groupby_${ROWS}_100_1.csv
for dev in 0 gpu; do
  for q in 'groupby id1 | agg sum(v1)' 'groupby id3 | agg sum(v1), mean(v3)'; do
    echo "== --device $dev: $q"
    build-gpu/warpcsv --device "$dev" --profile "$q" "$F" 2>&1 >/dev/null
  done
done | tee "$OUT/profiles.txt"
