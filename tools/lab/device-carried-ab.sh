#!/usr/bin/env bash
# One short call on a GPU machine with binaries built here (tools/lab/build-carry.sh): narrow
# rows (brc413, brc10k) at ROWS (default 2e8) with build-carry/new beside DuckDB and with
# build-carry/old, REPS runs each (default 2), then --profile of each on each file. No build,
# so it fits a call of a minute or two. Carry build-carry/new, build-carry/old, build-carry/lib
# and .duck (BUILDS=new: the new build alone, no build-carry/old). Tables go to $OUT/carried-ab.txt.
set -u
OUT=${OUT:-/tmp/device-out}
ROWS=${ROWS:-2e8}
DEVICE=${DEVICE:-gpu}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0
. "$(dirname "$0")/duckdb-peer.sh"
C=$ROOT/build-carry
ldd "$C/new/warpcsv" | grep -q 'not found' && export LD_LIBRARY_PATH=$C/lib:$LD_LIBRARY_PATH
Q='groupby station | agg min(temp) as lo, round(mean(temp), 1) as mean, max(temp) as hi'
n=$(awk "BEGIN{printf \"%d\", $ROWS}")
{
  for w in ${BUILDS:-new old}; do
    echo "### $w"
    ROWS=$ROWS DEVICE=$DEVICE THREADS=$(nproc) REPS=${REPS:-2} QUERIES="brc413 brc10k" WARPCSV=$C/$w/warpcsv \
      DUCKQ=$ROOT/.peers/duckq NO_DUCKDB=$([ $w = new ] && echo 0 || echo 1) BENCH_DIR=/dev/shm \
      timeout 300 scripts/bench.sh 2>&1 | grep -E '^\||bench:'
  done
  for f in /dev/shm/stations_${n}_413_1.csv /dev/shm/stations_${n}_10000_1.csv; do
    for w in ${BUILDS:-new old}; do
      echo "## --profile, $w, $f"
      "$C/$w/warpcsv" --device "$DEVICE" --profile -d ';' --no-header --names station,temp "$Q" "$f" 2>&1 >/dev/null |
        grep -E 'read\+copy|busy|in all'
    done
  done
  nvidia-smi -L 2>/dev/null
} | tee "$OUT/carried-ab.txt"
