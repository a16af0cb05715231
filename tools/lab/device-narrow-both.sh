#!/usr/bin/env bash
# One call on a GPU machine, one build: narrow rows (brc413, brc10k) at NARROW_ROWS (default
# 1e9) on the GPU beside DuckDB (REPS runs each, default 2), then the same files on the CPU
# executor (all threads), then q1 at ROWS (default 1e8) on the CPU executor beside DuckDB and by
# threads (1 to all, SCALING_REPS runs each, default 3), with lscpu and core_probe.c first and a
# --profile of each narrow-row run. For a call that has room for one build only (sm_90).
# Carry .duck (duckq, libduckdb.so.xz). Tables go to $OUT/narrow-both.md.
set -u
OUT=${OUT:-/tmp/device-out}
NARROW_ROWS=${NARROW_ROWS:-1e9}
ROWS=${ROWS:-1e8}
REPS=${REPS:-2}
mkdir -p "$OUT"
. "$(dirname "$0")/duckdb-peer.sh"
t0=$(date +%s)
if [ ! -x build-gpu/warpcsv ]; then
  { cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90-real -DWARPCSV_TESTS=OFF \
      -DWARPCSV_MPI=OFF && cmake --build build-gpu -j"$(nproc)" --target warpcsv; } >"$OUT/build.log" 2>&1 ||
    { tail -30 "$OUT/build.log"; exit 1; }
fi
echo "build $(( $(date +%s) - t0 )) s"
W=build-gpu/warpcsv
bench() {  # bench LABEL DEVICE ROWS QUERIES [NO_DUCKDB]
  echo "### $1"
  ROWS=$3 DEVICE=$2 THREADS=$(nproc) REPS=$REPS QUERIES="$4" WARPCSV=$W DUCKQ=$ROOT/.peers/duckq NO_DUCKDB=${5:-0} \
    GEN_GROUPBY=scripts/gen_groupby.c BENCH_DIR=/dev/shm scripts/bench.sh 2>&1
}
Q='groupby station | agg min(temp) as lo, round(mean(temp), 1) as mean, max(temp) as hi'
n_rows=$(awk "BEGIN{printf \"%d\", $NARROW_ROWS}")
{
  echo "### the cores"
  lscpu | grep -E 'Model name|^CPU\(s\)|Thread|Core|Socket|MHz|L2|L3'
  cc -O2 -pthread -o /tmp/core_probe tools/lab/core_probe.c && /tmp/core_probe "$(nproc)"
  bench "GPU, narrow rows" gpu "$NARROW_ROWS" "brc413 brc10k"
  bench "CPU executor, narrow rows" cpu "$NARROW_ROWS" "brc413 brc10k" 1
  for dev in gpu cpu; do
    for n in 413 10000; do
      echo "#### --profile, $dev, $n stations"
      /usr/bin/time -f "whole process %e s, %U s user, peak RSS %M KiB" "$W" --device $dev --profile -d ';' \
        --no-header --names station,temp "$Q" "/dev/shm/stations_${n_rows}_${n}_1.csv" 2>&1 >/dev/null
    done
  done
  rm -f /dev/shm/stations_*
  bench "CPU executor, q1" cpu "$ROWS" "q1"
  f=/dev/shm/groupby_$(awk "BEGIN{printf \"%d\", $ROWS}")_100_1.csv
  echo "### q1 by threads, $ROWS rows"
  for t in 1 2 4 8 16; do
    for rep in $(seq "${SCALING_REPS:-3}"); do
      /usr/bin/time -f "threads $t: %e s, %U s user" "$W" --device cpu --threads "$t" \
        'groupby id1 | agg sum(v1) as v1' "$f" 2>&1 >/dev/null
    done
  done
  "$W" --device cpu --trace "$OUT/q1-trace.json" 'groupby id1 | agg sum(v1) as v1' "$f" >/dev/null &&
    xz -f "$OUT/q1-trace.json"
} | tee "$OUT/narrow-both.md"
