#!/usr/bin/env bash
# One call on a GPU machine with binaries built here (tools/lab/build-carry.sh with TESTS=1):
# scripts/gpu-check.sh on build-carry/new without building (no ctest, no foreign-arch check), the
# [gpu] suite named by GPU_TESTS_FILTER (default: all but its two longest cases, "random files" and
# "top N per group", about 230 s of its 400 s on an H100: give them a call of their own), many
# groups, sanitizers, --trace, ranks and q1 at BENCH_ROWS (default 2e7). Logs go straight to
# $OUT/gpu-check, so a call cut by its time limit still brings back what ran. Then, on an H200
# with time left (NARROW=auto; 1: on any GPU; 0: never), 1e9 narrow rows beside DuckDB, one run
# each (tools/lab/device-carried-ab.sh). Carry build-carry/new, build-carry/lib and .duck.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
OUT=${OUT:-/tmp/device-out}
mkdir -p "$OUT"
export PATH=$PATH:/usr/local/cuda/bin NCCL_NVLS_ENABLE=0
C=build-carry
ldd "$C/new/warpcsv" | grep -q 'not found' && export LD_LIBRARY_PATH=$ROOT/$C/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
{ nvidia-smi -L; nproc; } >"$OUT/gpus.txt" 2>&1
rm -rf "$C/new/gpu-check" && mkdir -p "$OUT/gpu-check" && ln -s "$OUT/gpu-check" "$C/new/gpu-check"
start=$(date +%s)
BUILD_DIR=$ROOT/$C/new SKIP_BUILD=1 SKIP_CTEST=1 SKIP_FOREIGN=1 BENCH_ROWS=${BENCH_ROWS:-2e7} \
  GPU_TESTS_TIMEOUT=${GPU_TESTS_TIMEOUT:-300} \
  GPU_TESTS_FILTER=${GPU_TESTS_FILTER:-'[gpu]~"gpu: random files*"~"gpu: top N per group*"'} \
  scripts/gpu-check.sh >"$OUT/gpu-check.log" 2>&1
elapsed=$(( $(date +%s) - start ))
echo "gpu-check took $elapsed s" >>"$OUT/gpu-check.log"
narrow=${NARROW:-auto}
[ "$narrow" = auto ] && { grep -q H200 "$OUT/gpus.txt" && [ "$elapsed" -lt "${NARROW_BEFORE:-330}" ] && narrow=1 || narrow=0; }
if [ "$narrow" = 1 ]; then
  BUILDS=new ROWS=1e9 REPS=1 OUT=$OUT timeout "${NARROW_LIMIT:-200}" tools/lab/device-carried-ab.sh >"$OUT/narrow.log" 2>&1
fi
