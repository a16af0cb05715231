#!/usr/bin/env bash
# One call on a GPU machine for narrow rows on the GPU: builds warpcsv (sm_90, with line info and
# ptxas's register report), generates narrow rows of 413 and 10,000 stations (gen_stations.c) at
# ROWS (default 1e9) in /dev/shm, runs each twice with --profile and peak RSS, then bench.sh beside
# DuckDB (all cores, one run) (RUNS=0 skips these), then profiles the row kernels of one batch with
# ncu on NCU_ROWS (default 1e8) rows of 413 stations (NCU=0 skips it, NCU=brief keeps the row
# kernel's summary sections alone): the reports' text and the row kernel's per-instruction samples
# come back in ncu.tar.xz. TESTS=1 first builds and runs the GPU differential tests (gpu_tests
# "[gpu]", log in gpu_tests.log). DUCKDB=0 leaves DuckDB out. Carry .duck (duckq, libduckdb.so.xz).
set -u
OUT=${OUT:-/tmp/device-out}
ROWS=$(awk "BEGIN{printf \"%d\", ${ROWS:-1e9}}")
NCU_ROWS=$(awk "BEGIN{printf \"%d\", ${NCU_ROWS:-1e8}}")
mkdir -p "$OUT"
. "$(dirname "$0")/duckdb-peer.sh"
BUILD=build-gpu
t0=$(date +%s)
TARGETS=warpcsv
[ "${TESTS:-0}" = 1 ] && TARGETS="warpcsv gpu_tests"
{
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DWARPCSV_TESTS="$([ "${TESTS:-0}" = 1 ] && echo ON || echo OFF)" -DCMAKE_CUDA_FLAGS="-lineinfo -Xptxas -v" &&
    cmake --build "$BUILD" -j"$(nproc)" --target $TARGETS
} >"$OUT/narrow-build.log" 2>&1 || { tail -30 "$OUT/narrow-build.log"; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
grep -E "ptxas info|ptxas warning" "$OUT/narrow-build.log" >"$OUT/ptxas.txt"
rm -f "$OUT/narrow-build.log"
W=$BUILD/warpcsv
if [ "${TESTS:-0}" = 1 ]; then
  t0=$(date +%s)
  timeout 400 "$BUILD/tests/gpu_tests" "[gpu]" >"$OUT/gpu_tests.log" 2>&1
  echo "gpu_tests rc=$? in $(( $(date +%s) - t0 )) s: $(grep -E 'test cases|All tests passed' "$OUT/gpu_tests.log" | tr '\n' ' ')"
fi
cc -O2 -pthread -o /dev/shm/gen_stations scripts/gen_stations.c -lm
file_of() { echo "/dev/shm/stations_$1_$2_1.csv"; }  # the names bench.sh gives them
[ "${RUNS:-1}" = 0 ] || for n in 413 10000; do
  f=$(file_of "$ROWS" "$n")
  t0=$(date +%s.%N)
  [ -s "$f" ] || /dev/shm/gen_stations "$ROWS" "$n" 1 "$f" "$(nproc)"
  echo "generated $f: $(stat -c %s "$f") bytes in $(awk "BEGIN{print $(date +%s.%N) - $t0}") s"
done
Q='groupby station | agg min(temp) as lo, round(mean(temp), 1) as mean, max(temp) as hi'
[ "${RUNS:-1}" = 0 ] || {
  for n in 413 10000; do
    for rep in 1 2; do
      echo "== $n stations, $ROWS rows, run $rep"
      /usr/bin/time -f "whole process %e s, peak RSS %M KiB" "$W" --device gpu --profile -d ';' --no-header \
        --names station,temp "$Q" "$(file_of "$ROWS" "$n")" 2>&1 >"$OUT/narrow-$n.csv"
    done
  done
  [ "${DUCKDB:-1}" = 0 ] && exit 0
  echo "### bench.sh, $ROWS rows"
  ROWS=$ROWS DEVICE=gpu THREADS=$(nproc) REPS=1 QUERIES="brc413 brc10k" WARPCSV=$W DUCKQ=$ROOT/.peers/duckq \
    BENCH_DIR=/dev/shm scripts/bench.sh 2>&1
} | tee "$OUT/narrow.txt"
[ "${NCU:-1}" = 0 ] && exit 0
f=$(file_of "$NCU_ROWS" 413)
[ -s "$f" ] || /dev/shm/gen_stations "$NCU_ROWS" 413 1 "$f" "$(nproc)"
N=/tmp/ncu
mkdir -p $N
run_ncu() {  # run_ncu REPORT ncu-args...
  local rep=$1
  shift
  timeout 300 ncu --clock-control none "$@" -o "$N/$rep" "$W" --device gpu -d ';' --no-header \
    --names station,temp "$Q" "$f" >/dev/null 2>"$N/$rep.log"
  ncu -i "$N/$rep.ncu-rep" --page details >"$N/$rep-details.txt" 2>&1
}
if [ "${NCU:-full}" = brief ]; then
  run_ncu rows --kernel-name regex:k_rows --launch-skip 4 --launch-count 1 --section SpeedOfLight \
    --section WarpStateStats --section InstructionStats --section MemoryWorkloadAnalysis --section SchedulerStats
else
  # Every kernel of a few batches, duration and throughput only.
  run_ncu batch --launch-skip 40 --launch-count 24 --section SpeedOfLight
  # The row kernel in full, with its source.
  run_ncu rows --kernel-name regex:k_rows --launch-skip 4 --launch-count 1 --set full --import-source yes
  ncu -i "$N/rows.ncu-rep" --page source --csv --print-source cuda,sass >"$N/rows-cuda-sass.csv" 2>&1
fi
rm -f $N/*.ncu-rep
XZ_OPT="-T0 -6" tar cJf "$OUT/ncu.tar.xz" -C $N .
ls -la "$OUT" $N
