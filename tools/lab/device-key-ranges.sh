#!/usr/bin/env bash
# One call on a GPU machine for the key-range exchange of several GPUs'
# groups: an sm_90 build, the GPU differential tests named by TESTS,
# compute-sanitizer on a run with two workers on GPU 0, then db-benchmark
# questions at ROWS (default 1e8) with one worker and with WORKERS (default
# 0,0) on GPU 0: --profile, whole process time, peak RSS, and the bytes
# compared. Logs go to $OUT.
set -u
OUT=${OUT:-/tmp/device-out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
BUILD=build-gpu
ROWS=$(awk "BEGIN { printf \"%d\", ${ROWS:-1e8} }")
WORKERS=${WORKERS:-0,0}
TESTS=${TESTS:-gpu: workers that exchange*}
nvidia-smi -L >"$OUT/machine.txt" 2>&1
t0=$(date +%s)
{ cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DWARPCSV_WERROR=ON -DCMAKE_CUDA_ARCHITECTURES=90-real &&
  cmake --build "$BUILD" -j"$(nproc)" --target warpcsv gpu_tests unit_tests; } >"$OUT/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s" | tee "$OUT/summary.txt"
W=$BUILD/warpcsv
cc -O2 -pthread -o "$BUILD/gen_groupby" scripts/gen_groupby.c
(
  t=$(date +%s)
  timeout 240 "$BUILD/tests/gpu_tests" "$TESTS" >"$OUT/gpu_tests.log" 2>&1
  echo "gpu_tests '$TESTS' rc=$? $(( $(date +%s) - t )) s: $(grep -E 'All tests passed|test cases' "$OUT/gpu_tests.log" | tr '\n' ' ')"
  "$BUILD/tests/unit_tests" '[key_ranges]' 2>&1 | tail -1
) >>"$OUT/summary.txt" 2>&1 &
tests_pid=$!
# The table meanwhile (16 threads), and a small one for the sanitizers.
G=/dev/shm/g_$ROWS.csv
[ -s "$G" ] || "$BUILD/gen_groupby" "$ROWS" 100 1 "$G" "$(nproc)" >/dev/null
S=/dev/shm/g_small.csv
[ -s "$S" ] || "$BUILD/gen_groupby" 200000 100 1 "$S" 4 >/dev/null
wait $tests_pid
Q10='groupby id1, id2, id3, id4, id5, id6 | agg sum(v3), count()'
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 "$W" --device "$WORKERS" --chunk-size 1M \
    -o "$OUT/san-$tool.csv" "$Q10" "$S" >"$OUT/san-$tool.log" 2>&1
  echo "compute-sanitizer $tool rc=$? $(grep -E 'ERROR SUMMARY' "$OUT/san-$tool.log" | tail -1)" >>"$OUT/summary.txt"
done
"$W" --device cpu -o "$OUT/small-cpu.csv" "$Q10" "$S"
for tool in memcheck racecheck; do
  cmp -s "$OUT/small-cpu.csv" "$OUT/san-$tool.csv" && echo "sanitized $tool run: the CPU's bytes" ||
    echo "sanitized $tool run: DIFFERS from the CPU"
done >>"$OUT/summary.txt"
rm -f "$OUT"/san-*.csv "$OUT/small-cpu.csv"
# One worker against several on GPU 0, each question twice.
for q in q1 q3 q10; do
  case $q in
    q1) P='groupby id1 | agg sum(v1)' ;;
    q3) P='groupby id3 | agg sum(v1), mean(v3)' ;;
    q10) P=$Q10 ;;
  esac
  for dev in gpu "$WORKERS"; do
    for rep in 1 2; do
      /usr/bin/time -f "$q --device $dev: %e s, peak RSS %M KiB" timeout 120 "$W" --device "$dev" --profile \
        -o /dev/shm/out-$q-${dev//,/_}.csv "$P" "$G" 2>"$OUT/profile-$q-${dev//,/_}.txt"
      tail -1 "$OUT/profile-$q-${dev//,/_}.txt" >>"$OUT/summary.txt"
    done
  done
  cmp -s /dev/shm/out-$q-gpu.csv /dev/shm/out-$q-${WORKERS//,/_}.csv && echo "$q: the same bytes" ||
    echo "$q: bytes DIFFER"
  rm -f /dev/shm/out-$q-*.csv
done >>"$OUT/summary.txt" 2>&1
cat "$OUT/summary.txt"
