#!/usr/bin/env bash
# One call on a GPU machine: gpu-check (build for sm_90,
# GPU differential tests, compute-sanitizer, q1 on 1e8 rows), then bench.sh
# side by side with DuckDB with --device gpu and with all GPUs listed, then the whole ctest
# suite. Logs and summaries go to $OUT. Carry .peers/duckq and
# .peers/libduckdb.so.xz for DuckDB.
set -u
OUT=${OUT:-/tmp/device-out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
nvidia-smi -L >"$OUT/machine.txt" 2>&1
nvidia-smi topo -m >>"$OUT/machine.txt" 2>&1
nproc >>"$OUT/machine.txt"
[ -f .peers/libduckdb.so.xz ] && (cd .peers && xz -dkf libduckdb.so.xz)
SKIP_CTEST=1 BENCH_ROWS=${BENCH_ROWS:-100000000} timeout 330 scripts/gpu-check.sh >"$OUT/gpu-check.txt" 2>&1
echo "gpu-check rc=$?" >>"$OUT/gpu-check.txt"
G1=/dev/shm/warpcsv_g1_${BENCH_ROWS:-100000000}.csv
W=build-gpu/warpcsv
# More warm in-process runs of q1 (gpu-check did 3 per device): 3 processes x 3 warm runs.
for dev in gpu $( [ "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')" -gt 1 ] && echo 0,1 ); do
  for i in 1 2 3; do
    WARPCSV_BENCH_DEVICE=$dev WARPCSV_BENCH_FILE="$G1" timeout 60 build-gpu/tests/gpu_tests '[.bench]' -s 2>&1 |
      grep '^bench: run [1-9]'
  done
done >"$OUT/inprocess.txt"
# --device gpu keeps a 5 GB file on GPU 0; the GPUs listed is the 2-GPU run.
n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
ALL_GPUS=""
[ "$n" -gt 1 ] && ALL_GPUS=$(seq -s, 0 $((n - 1)))
ln -sf "$G1" "/dev/shm/groupby_${BENCH_ROWS:-100000000}_100_1.csv"  # bench.sh's name for the same table
{
  echo "== process start alone: warpcsv --version"
  /usr/bin/time -f "%e s" "$W" --version
  for dev in cpu gpu $ALL_GPUS; do
    for q in 'groupby id1 | agg sum(v1)' 'groupby id3 | agg sum(v1), mean(v3)'; do
      echo "== --device $dev: $q"
      /usr/bin/time -f "whole process %e s" timeout 60 "$W" --device "$dev" --profile "$q" "$G1" 2>&1 >/dev/null
    done
  done
} >"$OUT/profiles.txt" 2>&1
if [ -x .peers/duckq ]; then
  for dev in gpu $ALL_GPUS; do
    DEVICE=$dev ROWS=${BENCH_ROWS:-100000000} THREADS=$(nproc) REPS=2 QUERIES="q1 q3" WARPCSV=$W \
      DUCKQ=.peers/duckq GEN_GROUPBY=build-gpu/gen_groupby_check BENCH_DIR=/dev/shm \
      timeout 150 scripts/bench.sh >"$OUT/bench-${dev//,/_}.txt" 2>&1
  done
fi
# The DuckDB oracle with the GPUs (db-benchmark questions and the sales table);
# needs the generators of ../shared/datagen, carried as .peers/datagen.
if [ -x .peers/duckq ] && [ -d .peers/datagen ]; then
  SHARED=$PWD/.peers DEVICE=gpu WARPCSV=$W DUCKQ=.peers/duckq timeout 200 scripts/check-duckdb.sh 12345 1e6 \
    >"$OUT/check-duckdb-gpu.txt" 2>&1
  echo "check-duckdb (device gpu) rc=$?" >>"$OUT/check-duckdb-gpu.txt"
fi
# Bounded memory with standard input (a stream: the CPU executor) and with a file.
{
  echo "== stdin, --device auto (CPU for streams)"
  cat "$G1" | /usr/bin/time -f "peak RSS %M KiB, %e s" "$W" -q 'groupby id1 | agg sum(v1)' >/dev/null
  echo "== file, --device gpu"
  /usr/bin/time -f "peak RSS %M KiB, %e s" "$W" --device gpu -q 'groupby id1 | agg sum(v1)' "$G1" >/dev/null
} >"$OUT/memory.txt" 2>&1
(cd build-gpu && timeout 200 ctest -j"$(nproc)" --output-on-failure >"$OUT/ctest.txt" 2>&1)
tail -3 "$OUT/ctest.txt"
cat "$OUT/gpu-check.txt" | sed -n '/---- warpcsv gpu-check summary/,$p'
awk '{ k = $NF; sub(/\)/, "", k); g[k] += $6; n[k]++; v[k] = v[k] sprintf(" %.1f", $6) } END { for (k in g) printf "in-process q1 --device %s mean %.1f GB/s:%s\n", k, g[k] / n[k], v[k] }' "$OUT/inprocess.txt"
cat "$OUT"/bench-*.txt | grep -E '^\|' || true
tail -25 "$OUT/check-duckdb-gpu.txt" 2>/dev/null
cat "$OUT/memory.txt" "$OUT/profiles.txt"
# The device returns at most 8 files: fold the small ones into one.
cat "$OUT/machine.txt" "$OUT/memory.txt" "$OUT/profiles.txt" "$OUT/inprocess.txt" >"$OUT/run-notes.txt" 2>/dev/null &&
  rm -f "$OUT/machine.txt" "$OUT/memory.txt" "$OUT/profiles.txt" "$OUT/inprocess.txt"
