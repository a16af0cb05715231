#!/usr/bin/env bash
# One call on a GPU machine after result-side work: the default build, the
# GPU differential tests, q10 with --profile and peak RSS, then
# scripts/bench.sh side by side with DuckDB on QUERIES (default: the
# few-groups q1 and q3, q10, the sales example and the holistic mix) at ROWS
# (default 1e8). Logs and the bench table go to $OUT. Carry .duck (duckq and
# libduckdb.so.xz).
set -u
OUT=${OUT:-/tmp/device-out}
ROWS=${ROWS:-1e8}
QUERIES=${QUERIES:-q1 q3 q10 sales hmix}
mkdir -p "$OUT" .peers
export NCCL_NVLS_ENABLE=0
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
cp .duck/duckq .peers/ && xz -dkc .duck/libduckdb.so.xz >.peers/libduckdb.so
export LD_LIBRARY_PATH=$ROOT/.peers
t0=$(date +%s)
if ! { cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DWARPCSV_WERROR=ON &&
       cmake --build build-gpu -j"$(nproc)"; } >"$OUT/build.log" 2>&1; then
  tail -40 "$OUT/build.log"
  exit 1
fi
echo "build $(( $(date +%s) - t0 )) s"
timeout 200 build-gpu/tests/gpu_tests >"$OUT/gpu_tests.txt" 2>&1
echo "gpu_tests rc=$? $(tail -2 "$OUT/gpu_tests.txt" | head -1)"
grep -B3 -A12 FAILED "$OUT/gpu_tests.txt" | head -40
n=$(awk "BEGIN{printf \"%d\", $ROWS}")
FILE=/dev/shm/groupby_${n}_100_1.csv
[ -s "$FILE" ] || { cc -O2 -pthread -o /dev/shm/gen_groupby scripts/gen_groupby.c &&
                    /dev/shm/gen_groupby "$n" 100 1 "$FILE" "$(nproc)"; }
Q10='groupby id1, id2, id3, id4, id5, id6 | agg sum(v3) as v3, count() as count'
/usr/bin/time -f "q10 whole %e s, peak RSS %M KiB" build-gpu/warpcsv --device gpu --profile "$Q10" "$FILE" \
  2>"$OUT/q10_profile.txt" >/dev/null
grep -E "q10 whole|result|post|scan  |finalize" "$OUT/q10_profile.txt"
ROWS=$ROWS DEVICE=gpu REPS=1 QUERIES="$QUERIES" WARPCSV=build-gpu/warpcsv DUCKQ=$ROOT/.peers/duckq \
  timeout 420 scripts/bench.sh 2>&1 | tee "$OUT/bench.md"
