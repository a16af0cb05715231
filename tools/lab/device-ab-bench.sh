#!/usr/bin/env bash
# One call on a GPU machine: the current build (build-gpu, made when missing)
# against an older commit's (its `git archive` at .duck/old-src.tar.gz, built
# for sm_90 into /tmp/old/build when missing), on the GPU and on the CPU
# executor, with DuckDB for the current one, on QUERIES at ROWS rows
# (scripts/bench.sh). Logs and tables go to $OUT. Carry .duck (duckq,
# libduckdb.so.xz, old-src.tar.gz).
set -u
OUT=${OUT:-/tmp/device-out}
ROWS=${ROWS:-1e8}
QUERIES=${QUERIES:-q1 q3 brc413 brc10k}
CPU_QUERIES=${CPU_QUERIES:-q1 brc413}
REPS=${REPS:-3}
mkdir -p "$OUT" .peers
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
cp .duck/duckq .peers/ && xz -dkc .duck/libduckdb.so.xz >.peers/libduckdb.so
export LD_LIBRARY_PATH=$ROOT/.peers
if [ ! -x build-gpu/warpcsv ]; then
  { cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90-real &&
    cmake --build build-gpu -j"$(nproc)" --target warpcsv; } >"$OUT/new-build.log" 2>&1 || { tail -30 "$OUT/new-build.log"; exit 1; }
fi
if [ ! -x /tmp/old/build/warpcsv ]; then
  mkdir -p /tmp/old && tar xzf .duck/old-src.tar.gz -C /tmp/old
  { cmake -S /tmp/old -B /tmp/old/build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90-real &&
    cmake --build /tmp/old/build -j"$(nproc)" --target warpcsv; } >"$OUT/old-build.log" 2>&1 || { tail -30 "$OUT/old-build.log"; exit 1; }
fi
bench() {  # bench LABEL DEVICE BINARY QUERIES [NO_DUCKDB]
  echo "### $1"
  ROWS=$ROWS DEVICE=$2 REPS=$REPS QUERIES="$4" WARPCSV=$3 DUCKQ=$ROOT/.peers/duckq NO_DUCKDB=${5:-0} \
    GEN_GROUPBY=scripts/gen_groupby.c scripts/bench.sh 2>&1
}
{
  bench "current, GPU" gpu build-gpu/warpcsv "$QUERIES"
  bench "previous, GPU" gpu /tmp/old/build/warpcsv "$QUERIES" 1
  bench "current, CPU executor" cpu build-gpu/warpcsv "$CPU_QUERIES" 1
  bench "previous, CPU executor" cpu /tmp/old/build/warpcsv "$CPU_QUERIES" 1
} | tee "$OUT/bench.md"
