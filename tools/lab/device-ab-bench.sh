#!/usr/bin/env bash
# One call on a GPU machine: the current build (build-gpu, made when missing)
# against an older commit's (its `git archive` at .duck/old-src.tar.gz, built
# for sm_90 into /tmp/old/build when missing; the two build at once), on the
# GPU and on the CPU executor (CPU_QUERIES, empty for none), with DuckDB for
# the current one (NO_DUCKDB=1: none), on QUERIES at ROWS rows
# (scripts/bench.sh). TESTS, a gpu_tests filter ("[gpu]" for all), runs those
# tests of the current build first. PROFILE=1 ends with one --profile run of
# each build on each narrow-row file made. VARIANTS ("label:NAME=value ...")
# runs the current build again on the GPU under each such environment setting.
# NCU_ROWS (e.g. 1e8) ends with ncu's duration of every kernel of a few batches
# of each build on narrow rows of 413 stations (ncu-batches.txt). The current
# build gets ptxas's register and spill report (ptxas.txt).
# OLD=0 leaves the older build out.
# Logs and tables go to $OUT. Carry .duck (duckq, libduckdb.so.xz, old-src.tar.gz).
set -u
OUT=${OUT:-/tmp/device-out}
ROWS=${ROWS:-1e8}
QUERIES=${QUERIES:-q1 q3 brc413 brc10k}
CPU_QUERIES=${CPU_QUERIES-q1 brc413}
REPS=${REPS:-3}
mkdir -p "$OUT"
. "$(dirname "$0")/duckdb-peer.sh"
TESTS=${TESTS:-}
TARGETS=warpcsv
[ -n "$TESTS" ] && TARGETS="warpcsv gpu_tests"
if [ ! -x build-gpu/warpcsv ]; then
  { cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90-real \
      -DCMAKE_CUDA_FLAGS="-lineinfo -Xptxas -v" -DWARPCSV_TESTS="$([ -n "$TESTS" ] && echo ON || echo OFF)" &&
    cmake --build build-gpu -j"$(nproc)" --target $TARGETS; } >"$OUT/new-build.log" 2>&1 &
fi
if [ "${OLD:-1}" = 1 ] && [ ! -x /tmp/old/build/warpcsv ]; then
  mkdir -p /tmp/old && tar xzf .duck/old-src.tar.gz -C /tmp/old
  { cmake -S /tmp/old -B /tmp/old/build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90-real \
      -DWARPCSV_TESTS=OFF && cmake --build /tmp/old/build -j"$(nproc)" --target warpcsv; } >"$OUT/old-build.log" 2>&1 &
fi
wait
[ -x build-gpu/warpcsv ] || { tail -30 "$OUT/new-build.log"; exit 1; }
grep -A2 -E "Compiling entry function '.*k_rows" "$OUT/new-build.log" >"$OUT/ptxas.txt" 2>/dev/null
[ "${OLD:-1}" = 0 ] || [ -x /tmp/old/build/warpcsv ] || { tail -30 "$OUT/old-build.log"; exit 1; }
if [ -n "$TESTS" ]; then
  t0=$(date +%s)
  timeout 400 build-gpu/tests/gpu_tests "$TESTS" >"$OUT/gpu_tests.log" 2>&1
  echo "gpu_tests $TESTS: rc=$? in $(( $(date +%s) - t0 )) s: $(grep -E 'test cases|All tests passed' "$OUT/gpu_tests.log" | tr '\n' ' ')"
fi
bench() {  # bench LABEL DEVICE BINARY QUERIES [NO_DUCKDB]
  echo "### $1"
  ROWS=$ROWS DEVICE=$2 REPS=$REPS QUERIES="$4" WARPCSV=$3 DUCKQ=$ROOT/.peers/duckq NO_DUCKDB=${5:-0} \
    GEN_GROUPBY=scripts/gen_groupby.c scripts/bench.sh 2>&1
}
{
  bench "current, GPU" gpu build-gpu/warpcsv "$QUERIES" "${NO_DUCKDB:-0}"
  [ "${OLD:-1}" = 0 ] || bench "previous, GPU" gpu /tmp/old/build/warpcsv "$QUERIES" 1
  for v in ${VARIANTS:-}; do
    (export "${v#*:}"; bench "current, GPU, ${v#*:}" gpu build-gpu/warpcsv "$QUERIES" 1)
  done
  if [ -n "$CPU_QUERIES" ]; then
    bench "current, CPU executor" cpu build-gpu/warpcsv "$CPU_QUERIES" 1
    [ "${OLD:-1}" = 0 ] || bench "previous, CPU executor" cpu /tmp/old/build/warpcsv "$CPU_QUERIES" 1
  fi
  [ "${PROFILE:-0}" = 1 ] && for f in /dev/shm/stations_*.csv /tmp/stations_*.csv; do
    [ -f "$f" ] || continue
    for w in build-gpu/warpcsv /tmp/old/build/warpcsv ${VARIANTS:-}; do
      [ -x "${w%%:*}" ] || case $w in *:*) ;; *) continue ;; esac
      case $w in *:*) env=${w#*:} w=build-gpu/warpcsv ;; *) env= ;; esac
      echo "### --profile, $w $env, $f"
      env $env /usr/bin/time -f "whole process %e s, peak RSS %M KiB" "$w" --device gpu --profile -d ';' --no-header \
        --names station,temp 'groupby station | agg min(temp) as lo, round(mean(temp), 1) as mean, max(temp) as hi' \
        "$f" 2>&1 >/dev/null
    done
  done
  if [ -n "${NCU_ROWS:-}" ]; then
    n=$(awk "BEGIN{printf \"%d\", $NCU_ROWS}")
    f=/dev/shm/stations_${n}_413_1.csv
    [ -s "$f" ] || { cc -O2 -pthread -o /tmp/gen_stations scripts/gen_stations.c -lm &&
      /tmp/gen_stations "$n" 413 1 "$f" "$(nproc)"; }
    for w in build-gpu/warpcsv /tmp/old/build/warpcsv; do
      [ -x "$w" ] || continue
      echo "### ncu, every kernel of 3 batches, $w"
      timeout 200 ncu --clock-control none --launch-skip 40 --launch-count 36 --section SpeedOfLight "$w" \
        --device gpu -d ';' --no-header --names station,temp 'groupby station | agg min(temp) as lo, round(mean(temp), 1) as mean, max(temp) as hi' "$f" 2>&1 |
        grep -E '^  [a-z_].*\(|Duration' | sed -E 's/\(warpcsv::.*//; s/<unnamed>:://' 
    done
  fi
} | tee "$OUT/bench.md"
