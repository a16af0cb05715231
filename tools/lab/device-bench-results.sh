#!/usr/bin/env bash
# One call on a GPU machine after result-side work: a build (CUDA_ARCHS,
# default 90-real), the GPU differential tests (TESTS, default all) while the
# tables are generated, compute-sanitizer on q10 over 1e6 rows (four runs of text), q10 at
# 1e7 rows on the GPU (one worker and two) against the CPU's bytes, q10 at
# ROWS (default 1e8) with --profile and peak RSS, then scripts/bench.sh on
# QUERIES (default: the few-groups q1 and q3, q10, the sales example and the
# holistic mix) beside DuckDB (DUCKDB=0: warpcsv alone). Logs and the bench
# table go to $OUT. Carry .duck (duckq and libduckdb.so.xz).
set -u
OUT=${OUT:-/tmp/device-out}
ROWS=${ROWS:-1e8}
QUERIES=${QUERIES:-q1 q3 q10 sales hmix}
TESTS=${TESTS:-[gpu]}
mkdir -p "$OUT" .peers
export NCCL_NVLS_ENABLE=0
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
if [ "${DUCKDB:-1}" = 1 ]; then
  cp .duck/duckq .peers/ && xz -dkc .duck/libduckdb.so.xz >.peers/libduckdb.so
  export LD_LIBRARY_PATH=$ROOT/.peers
fi
W=build-gpu/warpcsv
t0=$(date +%s)
if ! { cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DWARPCSV_WERROR=ON \
         -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90-real}" &&
       cmake --build build-gpu -j"$(nproc)"; } >"$OUT/build.log" 2>&1; then
  tail -40 "$OUT/build.log"
  exit 1
fi
echo "build $(( $(date +%s) - t0 )) s"
cc -O2 -pthread -o /dev/shm/gen_groupby scripts/gen_groupby.c
(
  t=$(date +%s)
  timeout "${TEST_TIMEOUT:-300}" build-gpu/tests/gpu_tests "$TESTS" >"$OUT/gpu_tests.txt" 2>&1
  echo "gpu_tests '$TESTS' rc=$? $(( $(date +%s) - t )) s: $(grep -E 'All tests passed|test cases' "$OUT/gpu_tests.txt" | tr '\n' ' ')"
  grep -B3 -A12 FAILED "$OUT/gpu_tests.txt" | head -40
) >"$OUT/tests-summary.txt" 2>&1 &
tests=$!
n=$(awk "BEGIN{printf \"%d\", $ROWS}")
FILE=/dev/shm/groupby_${n}_100_1.csv
SMALL=/dev/shm/groupby_10000000_100_1.csv
TINY=/dev/shm/groupby_1000000_100_1.csv
[ -s "$FILE" ] || /dev/shm/gen_groupby "$n" 100 1 "$FILE" "$(nproc)" >/dev/null
[ -s "$SMALL" ] || /dev/shm/gen_groupby 10000000 100 1 "$SMALL" "$(nproc)" >/dev/null
[ -s "$TINY" ] || /dev/shm/gen_groupby 1000000 100 1 "$TINY" 4 >/dev/null
wait $tests
cat "$OUT/tests-summary.txt"
Q10='groupby id1, id2, id3, id4, id5, id6 | agg sum(v3) as v3, count() as count'
for tool in memcheck racecheck; do
  timeout "${SAN_TIMEOUT:-150}" compute-sanitizer --tool $tool --error-exitcode 9 "$W" --device gpu -o /dev/shm/san.csv "$Q10" \
    "$TINY" >"$OUT/san-$tool.log" 2>&1
  echo "compute-sanitizer $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/san-$tool.log" | tail -1)"
done
"$W" --device cpu -o /dev/shm/cpu.csv "$Q10" "$TINY"
cmp -s /dev/shm/cpu.csv /dev/shm/san.csv && echo "sanitized run: the CPU's bytes" || echo "sanitized run: DIFFERS"
/usr/bin/time -f "q10 1e7 cpu %e s" "$W" --device cpu -o /dev/shm/cpu.csv "$Q10" "$SMALL"
for dev in gpu 0,0; do
  /usr/bin/time -f "q10 1e7 --device $dev %e s" "$W" --device "$dev" -o /dev/shm/gpu.csv "$Q10" "$SMALL"
  cmp -s /dev/shm/cpu.csv /dev/shm/gpu.csv && echo "q10 1e7 --device $dev: the CPU's bytes" ||
    echo "q10 1e7 --device $dev: DIFFERS"
done
rm -f /dev/shm/cpu.csv /dev/shm/gpu.csv /dev/shm/san.csv
for dev in gpu 0,0; do
  /usr/bin/time -f "q10 whole %e s, peak RSS %M KiB" "$W" --device "$dev" --profile "$Q10" "$FILE" \
    2>"$OUT/q10_profile_${dev//,/_}.txt" >/dev/null
  grep -E "q10 whole|result|post|scan  |finalize" "$OUT/q10_profile_${dev//,/_}.txt"
done
ROWS=$ROWS DEVICE=gpu REPS=${REPS:-1} QUERIES="$QUERIES" WARPCSV=$W DUCKQ=$ROOT/.peers/duckq \
  NO_DUCKDB=$([ "${DUCKDB:-1}" = 1 ] && echo 0 || echo 1) timeout "${BENCH_TIMEOUT:-420}" scripts/bench.sh 2>&1 |
  tee "$OUT/bench.md"
