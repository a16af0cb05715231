#!/usr/bin/env bash
# One call on a GPU machine for the result side: a native build with tests,
# the GPU differential tests, then q10 (one group per row, nearly) at 1e7
# rows on the GPU against the CPU executor's bytes, and on ROWS rows (default
# 1e8) with --profile and peak RSS. Logs go to $OUT.
set -u
OUT=${OUT:-/tmp/device-out}
ROWS=${ROWS:-100000000}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
nvidia-smi -L >"$OUT/machine.txt" 2>&1
cc -O2 -pthread -o /dev/shm/gen_groupby scripts/gen_groupby.c
(/dev/shm/gen_groupby 10000000 100 1 /dev/shm/g1e7.csv 8 && /dev/shm/gen_groupby "$ROWS" 100 1 /dev/shm/gbig.csv 8) &
gen=$!
t0=$(date +%s)
if ! { cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=native -DWARPCSV_WERROR=ON &&
       cmake --build build-gpu -j"$(nproc)"; } >"$OUT/build.log" 2>&1; then
  tail -60 "$OUT/build.log"
  exit 1
fi
echo "build $(( $(date +%s) - t0 )) s"
timeout 240 build-gpu/tests/gpu_tests >"$OUT/gpu_tests.txt" 2>&1
echo "gpu_tests rc=$?"; tail -4 "$OUT/gpu_tests.txt"
grep -B3 -A12 FAILED "$OUT/gpu_tests.txt" | head -60
wait $gen
W=build-gpu/warpcsv
Q10='groupby id1, id2, id3, id4, id5, id6 | agg sum(v3) as v3, count() as count'
for dev in cpu gpu; do
  /usr/bin/time -f "$dev 1e7 whole %e s, peak RSS %M KiB" "$W" --device $dev --profile "$Q10" /dev/shm/g1e7.csv \
    >/dev/shm/q10_$dev.csv 2>"$OUT/q10_1e7_$dev.txt"
  tail -1 "$OUT/q10_1e7_$dev.txt"
done
cmp /dev/shm/q10_cpu.csv /dev/shm/q10_gpu.csv && echo "q10 1e7: gpu bytes = cpu bytes"
cat "$OUT/q10_1e7_gpu.txt"
for i in 1 2; do
  /usr/bin/time -f "gpu $ROWS whole %e s, peak RSS %M KiB" "$W" --device gpu --profile "$Q10" /dev/shm/gbig.csv \
    2>"$OUT/q10_big_$i.txt" | md5sum
  tail -1 "$OUT/q10_big_$i.txt"
done
cat "$OUT/q10_big_2.txt"
