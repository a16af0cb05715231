#!/usr/bin/env bash
# One call on a GPU machine for what holds the CPU executor back on many
# cores: narrow rows (NARROW_ROWS, default 2e8, 413 stations) at 1, 2, 4, 8
# and 16 threads, warpcsv and DuckDB, whole process with user and system
# seconds; a --trace of the 16-thread run (per-partition spans, to see the
# threads' idle time at each window's end); lscpu; and `perf record` of the
# 16-thread run when perf is there. BINARIES (space-separated, default: a
# CPU-only build of this tree) are timed side by side; CHUNKS (e.g. "1M 8M") adds runs
# on all threads at those partition sizes. Carry .duck for DuckDB.
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
if [ -z "${BINARIES:-}" ]; then
  t0=$(date +%s)
  cmake -S . -B build-cpu-only -DCMAKE_BUILD_TYPE=Release -DWARPCSV_CUDA=OFF -DWARPCSV_TESTS=OFF \
    -DWARPCSV_MPI=OFF >"$OUT/build.log" 2>&1 && cmake --build build-cpu-only -j"$(nproc)" --target warpcsv >>"$OUT/build.log" 2>&1 ||
    { tail -20 "$OUT/build.log"; exit 1; }
  echo "build $(( $(date +%s) - t0 )) s"
  BINARIES=build-cpu-only/warpcsv
fi
cc -O2 -pthread -o /tmp/gen_stations scripts/gen_stations.c -lm
F=/dev/shm/stations_${ROWS}_413.csv
/tmp/gen_stations "$ROWS" 413 1 "$F" "$(nproc)"
Q='groupby station | agg min(temp) as lo, round(mean(temp), 1) as mean, max(temp) as hi'
O=(-d ';' --no-header --names station,temp)
SQL="SELECT station, min(temp) AS lo, round(avg(temp), 1) AS mean, max(temp) AS hi FROM read_csv('$F', delim=';', header=false, columns={'station': 'VARCHAR', 'temp': 'DECIMAL(3,1)'}) GROUP BY station"
{
  echo "### $ROWS narrow rows ($(stat -c %s "$F") bytes), whole process: wall, user, sys seconds"
  for t in $THREAD_LIST; do
    for b in $BINARIES; do
      /usr/bin/time -f "$b threads $t: %e s wall, %U user, %S sys, %M KiB" "$b" --device cpu --threads "$t" "${O[@]}" "$Q" "$F" 2>&1 >/dev/null
    done
    [ -x .peers/duckq ] && /usr/bin/time -f "duckdb threads $t: %e s wall, %U user, %S sys, %M KiB" .peers/duckq "SET threads=$t; $SQL" 2>&1 >/dev/null
  done
  for c in ${CHUNKS:-}; do  # partition sizes on all threads
    for b in $BINARIES; do
      /usr/bin/time -f "$b threads $(nproc) --chunk-size $c: %e s wall, %U user, %S sys, %M KiB" "$b" --device cpu \
        --chunk-size "$c" "${O[@]}" "$Q" "$F" 2>&1 >/dev/null
    done
  done
} | tee "$OUT/scaling.txt"
first=${BINARIES%% *}
"$first" --device cpu --threads "$(nproc)" --trace "$OUT/trace16.json" --profile "${O[@]}" "$Q" "$F" >/dev/null 2>"$OUT/profile16.txt"
if command -v perf >/dev/null; then
  perf record -F 999 -g -o /tmp/perf.data "$first" --device cpu --threads "$(nproc)" "${O[@]}" "$Q" "$F" >/dev/null 2>"$OUT/perf-record.log"
  perf report -i /tmp/perf.data --no-children --sort symbol 2>/dev/null | head -60 >"$OUT/perf-symbols.txt"
else
  echo "no perf here" >"$OUT/perf-symbols.txt"
fi
xz -9 "$OUT/trace16.json"
