#!/usr/bin/env bash
# One call on a GPU machine for the large-input numbers (docs/performance.md,
# "1e9 rows"): builds warpcsv (sm_90), generates the 1e9-row group-by table
# (52 GB) in /dev/shm, then q1 and q3 with --device gpu (--profile, peak RSS)
# and bench.sh side by side with DuckDB (all cores, one run each). Carry
# .peers/duckq and .peers/libduckdb.so.xz. Logs go to $OUT.
#
#   ROWS=1e9 tools/lab/device-big.sh
#   Q10=1 ROWS=1e9 tools/lab/device-big.sh   # q10 alone (1e9 groups: spills), under a timeout
set -u
OUT=${OUT:-/tmp/device-out}
mkdir -p "$OUT"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
ROWS=$(awk "BEGIN{printf \"%d\", ${ROWS:-1e9}}")
BUILD=build-gpu
[ -f .peers/libduckdb.so.xz ] && (cd .peers && xz -dkf libduckdb.so.xz)
{
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DWARPCSV_TESTS=OFF &&
    cmake --build "$BUILD" -j"$(nproc)" --target warpcsv
} >"$OUT/big-build.log" 2>&1 || { tail -30 "$OUT/big-build.log"; exit 1; }
W=$BUILD/warpcsv
cc -O2 -pthread -o /dev/shm/gen_groupby scripts/gen_groupby.c
FILE=/dev/shm/groupby_${ROWS}_100_1.csv
start=$(date +%s.%N)
[ -s "$FILE" ] || /dev/shm/gen_groupby "$ROWS" 100 1 "$FILE" "$(nproc)"
echo "generated $(stat -c %s "$FILE") bytes in $(awk "BEGIN{print $(date +%s.%N) - $start}") s" | tee "$OUT/big.txt"
free -g | tee -a "$OUT/big.txt"
if [ -n "${Q10:-}" ]; then
  # Groups past the GPU's table go to spill files in $TMPDIR: the room there, and --profile's bytes.
  df -h "${TMPDIR:-/tmp}" | tee -a "$OUT/big.txt"
  echo "== q10, default limits, output to /dev/null" | tee -a "$OUT/big.txt"
  timeout "${Q10_TIMEOUT:-450}" /usr/bin/time -f "whole process %e s, peak RSS %M KiB" "$W" --device gpu --profile \
    'groupby id1, id2, id3, id4, id5, id6 | agg sum(v3), count()' "$FILE" 2>&1 >/dev/null | tee -a "$OUT/big.txt"
  exit 0
fi
for q in 'groupby id1 | agg sum(v1) as v1' 'groupby id3 | agg sum(v1) as v1, mean(v3) as v3'; do
  for dev in gpu 0 gpu 0; do  # gpu: all GPUs for a file this large; 0: GPU 0 alone (alternating, twice)
    echo "== --device $dev: $q" | tee -a "$OUT/big.txt"
    /usr/bin/time -f "whole process %e s, peak RSS %M KiB" "$W" --device "$dev" --profile "$q" "$FILE" \
      2>&1 >"$OUT/big-out-$dev.csv" | tee -a "$OUT/big.txt"
  done
  cmp -s "$OUT/big-out-gpu.csv" "$OUT/big-out-0.csv" && echo "1 GPU and 2 GPUs: identical bytes" | tee -a "$OUT/big.txt"
done
if [ -x .peers/duckq ]; then
  DEVICE=gpu ROWS=$ROWS THREADS=$(nproc) REPS=1 QUERIES="q1 q3" WARPCSV=$W DUCKQ=.peers/duckq \
    GEN_GROUPBY=/dev/shm/gen_groupby BENCH_DIR=/dev/shm scripts/bench.sh 2>&1 | tee "$OUT/big-bench.txt"
fi
rm -f "$OUT"/big-out-*.csv "$OUT/big-build.log"
