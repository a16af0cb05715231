#!/usr/bin/env bash
# One call on a GPU machine for what holds the CPU executor back on many
# cores: narrow rows (NARROW_ROWS, default 2e8; STATIONS, default 413) at
# THREAD_LIST threads (default 1 2 4 8 16), warpcsv and DuckDB, REPS times
# each (default 1), whole process with user and system seconds; a --trace of
# the run on all threads (per-partition spans, to see the threads' idle time
# at each window's end); lscpu; and `perf record` of that run when perf is
# there. BINARIES (space-separated, default: a CPU-only build of this tree,
# and with OLD=1 one of .duck/old-src.tar.gz, from `git archive`) are timed
# side by side; CHUNKS (e.g. "1M 8M") adds runs on all threads at those
# partition sizes. Carry .duck for DuckDB.
set -u
OUT=${OUT:-/tmp/device-out}
ROWS=$(awk "BEGIN { printf \"%d\", ${NARROW_ROWS:-2e8} }")
THREAD_LIST=${THREAD_LIST:-1 2 4 8 16}
mkdir -p "$OUT" .peers
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
if [ -f .duck/duckq ]; then
  cp .duck/duckq .peers/ && xz -dkc .duck/libduckdb.so.xz >.peers/libduckdb.so
  export LD_LIBRARY_PATH=$ROOT/.peers
fi
lscpu >"$OUT/lscpu.txt" 2>&1
build() {  # build SOURCE DIR
  cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release -DWARPCSV_CUDA=OFF -DWARPCSV_TESTS=OFF -DWARPCSV_MPI=OFF &&
    cmake --build "$2" -j"$(nproc)" --target warpcsv
}
if [ -z "${BINARIES:-}" ]; then
  t0=$(date +%s)
  build . build-cpu-only >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
  BINARIES=build-cpu-only/warpcsv
  if [ "${OLD:-0}" = 1 ]; then
    mkdir -p /tmp/old && tar xzf .duck/old-src.tar.gz -C /tmp/old
    build /tmp/old /tmp/old/build >"$OUT/old-build.log" 2>&1 || { tail -20 "$OUT/old-build.log"; exit 1; }
    BINARIES="$BINARIES /tmp/old/build/warpcsv"
  fi
  echo "builds $(( $(date +%s) - t0 )) s"
fi
cc -O2 -pthread -o /tmp/gen_stations scripts/gen_stations.c -lm
Q='groupby station | agg min(temp) as lo, round(mean(temp), 1) as mean, max(temp) as hi'
O=(-d ';' --no-header --names station,temp)
for stations in ${STATIONS:-413}; do
F=/dev/shm/stations_${ROWS}_${stations}.csv
/tmp/gen_stations "$ROWS" "$stations" 1 "$F" "$(nproc)"
SQL="SELECT station, min(temp) AS lo, round(avg(temp), 1) AS mean, max(temp) AS hi FROM read_csv('$F', delim=';', header=false, columns={'station': 'VARCHAR', 'temp': 'DECIMAL(3,1)'}) GROUP BY station"
{
  echo "### $ROWS narrow rows of $stations stations ($(stat -c %s "$F") bytes), whole process: wall, user, sys seconds"
  for t in $THREAD_LIST; do
    for ((rep = 0; rep < ${REPS:-1}; rep++)); do
      for b in $BINARIES; do
        /usr/bin/time -f "$b threads $t: %e s wall, %U user, %S sys, %M KiB" "$b" --device cpu --threads "$t" "${O[@]}" "$Q" "$F" 2>&1 >/dev/null
      done
      [ -x .peers/duckq ] && /usr/bin/time -f "duckdb threads $t: %e s wall, %U user, %S sys, %M KiB" .peers/duckq "SET threads=$t; $SQL" 2>&1 >/dev/null
    done
  done
  for c in ${CHUNKS:-}; do  # partition sizes on all threads
    for b in $BINARIES; do
      /usr/bin/time -f "$b threads $(nproc) --chunk-size $c: %e s wall, %U user, %S sys, %M KiB" "$b" --device cpu \
        --chunk-size "$c" "${O[@]}" "$Q" "$F" 2>&1 >/dev/null
    done
  done
} | tee -a "$OUT/scaling.txt"
first=${BINARIES%% *}
"$first" --device cpu --threads "$(nproc)" --trace "$OUT/trace-$stations.json" --profile "${O[@]}" "$Q" "$F" >/dev/null 2>"$OUT/profile-$stations.txt"
xz -9 "$OUT/trace-$stations.json"
if command -v perf >/dev/null; then
  perf record -F 999 -g -o /tmp/perf.data "$first" --device cpu --threads "$(nproc)" "${O[@]}" "$Q" "$F" >/dev/null 2>"$OUT/perf-record.log"
  perf report -i /tmp/perf.data --no-children --sort symbol 2>/dev/null | head -60 >"$OUT/perf-symbols-$stations.txt"
fi
rm -f "$F"
done
