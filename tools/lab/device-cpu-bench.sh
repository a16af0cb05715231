#!/usr/bin/env bash
# One call on a GPU machine for the CPU executor on all its cores: the
# current source and an older commit's (.duck/old-src.tar.gz, from `git
# archive`), both built without CUDA, side by side with DuckDB on the same
# threads: narrow rows (brc413, brc10k) at NARROW_ROWS (default 1e9), the
# db-benchmark questions QUERIES (default q1 q2 q3 q5) at ROWS (default 1e8),
# then q1 at 1, 2, 4, 8 and 16 threads (current only, SCALING_REPS runs each; SCALING=0 skips it), then (PROFILE=1)
# `--profile` of every question in QUERIES on all threads and a `--trace` of brc10k and
# q3, to see which stages hold a question back; first, what fresh memory costs
# (first_touch_probe.c), and how a core's speed holds up with all of them busy (core_probe.c). Carry .duck (duckq, libduckdb.so.xz, old-src.tar.gz). REPS: runs
# of each (default 1). CHUNKS (e.g. "512K 1M 4M") adds q1 on all threads at those
# --chunk-size values (partition sizes; windows hold four a thread), and a --trace of q1.
# Tables go to $OUT.
set -u
OUT=${OUT:-/tmp/device-out}
ROWS=${ROWS:-1e8}
NARROW_ROWS=${NARROW_ROWS:-1e9}
QUERIES=${QUERIES:-q1 q2 q3 q5}
mkdir -p "$OUT"
. "$(dirname "$0")/duckdb-peer.sh"
mkdir -p /tmp/old && tar xzf .duck/old-src.tar.gz -C /tmp/old
build() {  # build SOURCE DIR
  cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release -DWARPCSV_CUDA=OFF -DWARPCSV_TESTS=OFF -DWARPCSV_MPI=OFF &&
    cmake --build "$2" -j8 --target warpcsv
}
eval "$(sed -n '/^pipeline_of() {/,/^}/p' scripts/bench.sh)"  # the questions' pipelines
t0=$(date +%s)
build . build-cpu-only >"$OUT/new-build.log" 2>&1 &
build /tmp/old /tmp/old/build-cpu >"$OUT/old-build.log" 2>&1 &
wait
[ -x build-cpu-only/warpcsv ] && [ -x /tmp/old/build-cpu/warpcsv ] || { tail -20 "$OUT"/*-build.log; exit 1; }
echo "builds $(( $(date +%s) - t0 )) s"
bench() {  # bench LABEL BINARY ROWS QUERIES [NO_DUCKDB]
  echo "### $1"
  ROWS=$3 DEVICE=cpu THREADS=$(nproc) REPS=${REPS:-1} QUERIES="$4" WARPCSV=$2 DUCKQ=$ROOT/.peers/duckq NO_DUCKDB=${5:-0} \
    GEN_GROUPBY=scripts/gen_groupby.c BENCH_DIR=/dev/shm scripts/bench.sh 2>&1
}
{
  echo "### the cores (lscpu; tools/lab/core_probe.c: one thread's loop alone and with the others busy)"
  lscpu | grep -E 'Model name|^CPU\(s\)|Thread|Core|Socket|NUMA node\(s\)|MHz|L2|L3'
  cc -O2 -pthread -o /tmp/core_probe tools/lab/core_probe.c && /tmp/core_probe "$(nproc)"
  echo "### first touch of fresh memory (tools/lab/first_touch_probe.c), 256 MiB"
  cc -O2 -o /tmp/first_touch_probe tools/lab/first_touch_probe.c &&
    /tmp/first_touch_probe 256 0 && /tmp/first_touch_probe 256 1
  bench "current, narrow rows" build-cpu-only/warpcsv "$NARROW_ROWS" "brc413 brc10k"
  bench "previous, narrow rows" /tmp/old/build-cpu/warpcsv "$NARROW_ROWS" "brc413 brc10k" 1
  if [ "${PROFILE:-0}" = 1 ]; then  # where the threads of the 10,000-station run wait
    build-cpu-only/warpcsv --device cpu --trace "$OUT/brc10k-trace.json" -d ';' --no-header --names station,temp \
      "$(pipeline_of brc10k)" /dev/shm/stations_$(awk "BEGIN{printf \"%d\", $NARROW_ROWS}")_10000_1.csv >/dev/null &&
      xz -f "$OUT/brc10k-trace.json"
  fi
  rm -f /dev/shm/stations_*
  bench "current, db-benchmark" build-cpu-only/warpcsv "$ROWS" "$QUERIES"
  bench "previous, db-benchmark" /tmp/old/build-cpu/warpcsv "$ROWS" "$QUERIES" 1
  f=/dev/shm/groupby_$(awk "BEGIN{printf \"%d\", $ROWS}")_100_1.csv
  if [ "${SCALING:-1}" != 0 ]; then
    echo "### q1 by threads (current), $ROWS rows"
    for t in 1 2 4 8 16; do
      for rep in $(seq "${SCALING_REPS:-1}"); do
        /usr/bin/time -f "threads $t: %e s, %U s user, %M KiB" build-cpu-only/warpcsv --device cpu --threads "$t" \
          'groupby id1 | agg sum(v1) as v1' "$f" 2>&1 >/dev/null
      done
    done
  fi
  if [ -n "${CHUNKS:-}" ]; then
    echo "### q1 on $(nproc) threads by --chunk-size (current), $ROWS rows"
    for c in $CHUNKS; do
      /usr/bin/time -f "--chunk-size $c: %e s, %U s user, %M KiB" build-cpu-only/warpcsv --device cpu --chunk-size "$c" \
        'groupby id1 | agg sum(v1) as v1' "$f" 2>&1 >/dev/null
    done
    build-cpu-only/warpcsv --device cpu --trace "$OUT/q1-trace.json" 'groupby id1 | agg sum(v1) as v1' "$f" >/dev/null &&
      xz -f "$OUT/q1-trace.json"
  fi
  if [ "${PROFILE:-0}" = 1 ]; then
    echo "### --profile on $(nproc) threads (current), $ROWS rows"
    for q in $QUERIES; do
      echo "#### $q"
      pipeline=$(pipeline_of "$q")
      /usr/bin/time -f "%e s, %U s user, %M KiB" build-cpu-only/warpcsv --device cpu --profile "$pipeline" "$f" 2>&1 >/dev/null
    done
    build-cpu-only/warpcsv --device cpu --trace "$OUT/q3-trace.json" \
      "$(pipeline_of q3)" "$f" >/dev/null && xz -f "$OUT/q3-trace.json"
  fi
} | tee "$OUT/cpu-bench.md"
