#!/usr/bin/env bash
# GPU check: builds warpcsv with CUDA (the portable default: sm_80 and sm_90
# machine code, compute_75 PTX; CUDA_ARCHS=native for this GPU alone), lists
# the GPU code the binary holds (cuobjdump), runs the whole ctest suite and
# the GPU differential tests, runs compute-sanitizer (memcheck, racecheck) on a
# small pipeline, checks that a build for another GPU generation is refused at
# start-up (auto answers on the CPU, --device gpu exits 4), checks --trace on
# the GPU, generates a db-benchmark group-by table, measures the host's
# ceilings for reading it into staging memory with and without the GPUs
# copying in (tools/lab/read_copy_ceiling.cu) and for warpcsv's feed with no
# kernels (tools/lab/feed_ceiling.cu), times q1 in-process and as a
# whole process (checking its bytes against the CPU executor), and prints a
# summary table. Logs go to build-gpu/gpu-check; when $OUT is set,
# the summary and a tarball of the logs are copied there too.
#
#   scripts/gpu-check.sh                 # 1e8 rows (5.2 GB in /dev/shm)
#   BENCH_ROWS=10000000 scripts/gpu-check.sh
#   CUDA_ARCHS=native BUILD_DIR=build-native scripts/gpu-check.sh
#   SKIP_BUILD=1 SKIP_CTEST=1 SKIP_FOREIGN=1 scripts/gpu-check.sh
#   GPU_TESTS_FILTER='gpu: lookup joins*' SKIP_MANY=1 BENCH_ROWS=0 scripts/gpu-check.sh  # shorter
#   SKIP_BUILD=1 SKIP_GPU_TESTS=1 scripts/gpu-check.sh  # the rest, after a call that built and ran them
#   BUILD_DIR=build-carry/new SKIP_BUILD=1 SKIP_CTEST=1 GPU_TESTS_TIMEOUT=400 scripts/gpu-check.sh
#       # binaries built elsewhere (tools/lab/build-carry.sh with TESTS=1): no build on the GPU machine
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD_DIR:-$ROOT/build-gpu}
LOG=$BUILD/gpu-check
JOBS=${JOBS:-$(nproc)}
ARCHS=${CUDA_ARCHS:-}
ROWS=$(awk "BEGIN { printf \"%d\", ${BENCH_ROWS:-100000000} }")  # 2e7 too
DATA_DIR=${BENCH_DIR:-/dev/shm}
mkdir -p "$LOG"
SUMMARY="$LOG/summary.txt"
: >"$SUMMARY"
row() { printf '%-28s %s\n' "$1" "$2" | tee -a "$SUMMARY"; }
CHECK_START=$(date +%s)
step() { echo "== [$(( $(date +%s) - CHECK_START )) s] $*" >&2; }  # seconds since the start: where a cut run stood

# ---- build -------------------------------------------------------------------
build_ok=skipped
if [ -z "${SKIP_BUILD:-}" ]; then
  step "build ($BUILD, GPU code ${ARCHS:-default}, -j$JOBS)"
  t0=$(date +%s)
  if cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DWARPCSV_WERROR=ON \
       ${ARCHS:+-DCMAKE_CUDA_ARCHITECTURES=$ARCHS} >"$LOG/build.log" 2>&1 &&
     cmake --build "$BUILD" -j"$JOBS" >>"$LOG/build.log" 2>&1; then
    build_ok="yes ($(( $(date +%s) - t0 )) s)"
  else
    build_ok=NO
    tail -40 "$LOG/build.log" >&2
  fi
fi
WARPCSV="$BUILD/warpcsv"
GPU_TESTS="$BUILD/tests/gpu_tests"
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
grep -q 'CUDA executor ON' "$LOG/build.log" 2>/dev/null && cuda=ON || cuda="?"
gpu_code=$(grep -o 'GPU code for .*' "$LOG/build.log" 2>/dev/null | tail -1)
# The GPU code inside the binary, as the driver will see it.
elf_ptx=skipped
if command -v cuobjdump >/dev/null && [ -x "$WARPCSV" ]; then
  cuobjdump --list-elf --list-ptx "$WARPCSV" >"$LOG/cuobjdump.txt" 2>&1
  elf_ptx="$(grep -Eo 'sm_[0-9]+a?' "$LOG/cuobjdump.txt" | sort -u | tr '\n' ' ')"
  elf_ptx="elf: $(grep -i 'elf' "$LOG/cuobjdump.txt" | grep -Eo 'sm_[0-9]+a?' | sort -u | tr '\n' ' ')ptx: $(grep -i 'ptx' "$LOG/cuobjdump.txt" | grep -Eo 'sm_[0-9]+a?' | sort -u | tr '\n' ' ')"
fi

# ---- the whole test suite ----------------------------------------------------
ctest_result=skipped
if [ -z "${SKIP_CTEST:-}" ] && [ -d "$BUILD" ]; then
  step "ctest"
  # gpu_tests runs on its own below (the GPU differential tests), with its log kept.
  (cd "$BUILD" && ctest -j"$JOBS" -E gpu_tests --output-on-failure) >"$LOG/ctest.log" 2>&1
  ctest_result=$(grep -E 'tests passed' "$LOG/ctest.log" | tail -1)
  [ -n "$ctest_result" ] || ctest_result="no summary (see ctest.log)"
  grep -E '^\s+[0-9]+ - ' "$LOG/ctest.log" >&2 || true
fi

# ---- GPU differential tests --------------------------------------------------
diff_result=skipped
if [ -z "${SKIP_GPU_TESTS:-}" ] && [ -x "$GPU_TESTS" ]; then
  step "gpu differential tests"
  # With each case's seconds (-d yes): what a call's time limit must allow for.
  timeout "${GPU_TESTS_TIMEOUT:-1200}" "$GPU_TESTS" "${GPU_TESTS_FILTER:-[gpu]}" -d yes >"$LOG/gpu_tests.log" 2>&1
  rc=$?
  diff_result="$(grep -E 'All tests passed|test cases:|assertions:' "$LOG/gpu_tests.log" | tr '\n' ' ')"
  grep -q 'gpu_tests: skipped' "$LOG/gpu_tests.log" && diff_result="SKIPPED ($(grep -o 'skipped: .*' "$LOG/gpu_tests.log")) $diff_result"
  [ $rc -eq 0 ] || { diff_result="FAILED rc=$rc $diff_result"; tail -60 "$LOG/gpu_tests.log" >&2; }
fi

SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)

# ---- many groups at small batches ---------------------------------------------
# 300k string keys at --chunk-size 4096: many table growths and merges. Each
# setting runs alone under a timeout, so the check goes on and the summary
# says which one stops (rc 124) or differs; memcheck looks for a device fault.
many_result=skipped
if [ -z "${SKIP_MANY:-}" ] && [ -x "$WARPCSV" ] && [ "$gpus" -gt 0 ]; then
  step "many groups at small batches"
  MANY="$LOG/many.csv"
  awk 'BEGIN { print "k,v,x"; for (i = 0; i < 300000; i++) printf "key%d,%d,%d.25\n", (i * 7919) % 300007, i % 1000 - 500, i % 97 }' >"$MANY"
  mq='groupby k | agg sum(v), mean(x), count(), max(x)'
  "$WARPCSV" --device cpu "$mq" "$MANY" >"$LOG/many_cpu.csv" 2>&1
  many_result=""
  for dev in 0 $( [ "$gpus" -gt 1 ] && echo 0,1 ); do
    t0=$(date +%s.%N)
    timeout 60 "$WARPCSV" --device "$dev" --chunk-size 4096 --profile "$mq" "$MANY" >"$LOG/many_gpu.csv" \
      2>"$LOG/many_profile_${dev//,/_}.txt"
    rc=$?
    t1=$(date +%s.%N)
    same=$(cmp -s "$LOG/many_cpu.csv" "$LOG/many_gpu.csv" && echo same || echo DIFFERENT)
    many_result="$many_result --device $dev: rc=$rc $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f s", b - a }') $same;"
  done
  if [ -x "$SAN" ]; then
    timeout 300 "$SAN" --tool memcheck --error-exitcode 9 "$WARPCSV" --device 0 --chunk-size 4096 "$mq" "$MANY" \
      >"$LOG/many_memcheck.log" 2>&1
    many_result="$many_result memcheck rc=$? $(grep -Eo 'ERROR SUMMARY: [0-9]+ errors' "$LOG/many_memcheck.log" | tail -1)"
    # Holistic lists (one GPU): they grow over the small batches, then are sorted on the GPU.
    hq='groupby k | agg median(v), count_distinct(x), quantile(v, 0.9)'
    "$WARPCSV" --device cpu "$hq" "$MANY" >"$LOG/many_lists_cpu.csv" 2>&1
    timeout 300 "$SAN" --tool memcheck --log-file "$LOG/many_lists_memcheck.log" --error-exitcode 9 "$WARPCSV" \
      --device 0 --chunk-size 4096 "$hq" "$MANY" >"$LOG/many_lists_gpu.csv" 2>"$LOG/many_lists_gpu.err"
    rc=$?
    same=$(cmp -s "$LOG/many_lists_cpu.csv" "$LOG/many_lists_gpu.csv" && echo same || echo DIFFERENT)
    many_result="$many_result; holistic lists memcheck rc=$rc $same $(grep -Eo 'ERROR SUMMARY: [0-9]+ errors' "$LOG/many_lists_memcheck.log" | tail -1)"
    # A 1 MiB group table: spilled to the host after every few batches.
    timeout 300 "$SAN" --tool memcheck --log-file "$LOG/many_spill_memcheck.log" --error-exitcode 9 "$WARPCSV" \
      --device 0 --chunk-size 65536 --gpu-memory-limit 1M --profile "$mq" "$MANY" >"$LOG/many_spill_gpu.csv" \
      2>"$LOG/many_spill_gpu.err"
    rc=$?
    same=$(cmp -s "$LOG/many_cpu.csv" "$LOG/many_spill_gpu.csv" && echo same || echo DIFFERENT)
    spills=$(grep -Eo 'spill groups to the host \([0-9]+ times' "$LOG/many_spill_gpu.err" | grep -Eo '[0-9]+' | head -1)
    many_result="$many_result; --gpu-memory-limit 1M (${spills:-no} spills) memcheck rc=$rc $same $(grep -Eo 'ERROR SUMMARY: [0-9]+ errors' "$LOG/many_spill_memcheck.log" | tail -1)"
  fi
fi

# ---- compute-sanitizer on a small pipeline -----------------------------------
san_result=skipped
SMALL="$LOG/small.csv"
if [ -x "$SAN" ] && [ -x "$WARPCSV" ] && [ "$gpus" -gt 0 ]; then
  step "compute-sanitizer"
  {
    echo 'k,v,d,s'
    for i in $(seq 1 3000); do
      echo "k$((i % 37)),$((i * 7 % 1001 - 500)),$((i % 13)).$((i % 7))5,\"t,$((i % 5))\"\"x\""
    done
  } >"$SMALL"
  # The errors a log counts, or ?: memcheck ends with "ERROR SUMMARY: N errors",
  # racecheck with "RACECHECK SUMMARY: N hazards".
  sanitizer_count() {
    local n
    n=$(grep -Eo '(ERROR SUMMARY|RACECHECK SUMMARY): [0-9]+' "$1" | grep -Eo '[0-9]+$' | tail -1)
    echo "${n:-?}"
  }
  san_errors=0
  for tool in memcheck racecheck; do
    timeout 300 "$SAN" --tool "$tool" --error-exitcode 9 "$WARPCSV" --device gpu --chunk-size 4096 \
      'filter v > -400 | groupby k, s | agg count(), sum(v), var(d), min(d), max(v), corr(v, d)' \
      "$SMALL" >"$LOG/sanitizer_$tool.log" 2>&1
    n=$(sanitizer_count "$LOG/sanitizer_$tool.log")
    [ "$n" = "?" ] && tail -20 "$LOG/sanitizer_$tool.log" >&2
    san_errors="$san_errors+$tool:$n"
  done
  # Narrow rows with UTF-8 names and no quotes: the row kernel splits them at their delimiters.
  NARROW="$LOG/narrow.csv"
  awk 'BEGIN { split("Oslo,Z\303\274rich,S\303\243o Paulo,Ny,Reykjav\303\255k,Llanfairpwllgwyngyll", n, ",");
    for (i = 0; i < 20000; i++) printf "%s;%d.%d\n", n[i % 6 + 1], i % 61 - 30, i % 10 }' >"$NARROW"
  NQ='groupby station | agg min(temp), mean(temp), max(temp), count()'
  for tool in memcheck racecheck; do
    timeout 300 "$SAN" --tool "$tool" --error-exitcode 9 "$WARPCSV" --device gpu --chunk-size 4096 -d ';' \
      --no-header --names station,temp "$NQ" "$NARROW" >"$LOG/sanitizer_narrow_$tool.log" 2>&1
    san_errors="$san_errors+narrow $tool:$(sanitizer_count "$LOG/sanitizer_narrow_$tool.log")"
  done
  "$WARPCSV" --device cpu -d ';' --no-header --names station,temp "$NQ" "$NARROW" >"$LOG/narrow_cpu.csv" 2>&1
  "$WARPCSV" --device gpu -d ';' --no-header --names station,temp "$NQ" "$NARROW" >"$LOG/narrow_gpu.csv" 2>&1
  cmp -s "$LOG/narrow_cpu.csv" "$LOG/narrow_gpu.csv" || san_errors="$san_errors (narrow cpu!=gpu!)"
  # 2,000 stations: past the first batch, more groups than the blocks keep states for, so the
  # rows update the batch's states of their groups in the GPU's memory.
  MANY="$LOG/narrow2000.csv"
  awk 'BEGIN { for (i = 0; i < 200000; i++) printf "st\303\251%d;%d.%d\n", (i * 7919) % 2000, i % 61 - 30, i % 10 }' >"$MANY"
  timeout 300 "$SAN" --tool memcheck --error-exitcode 9 --log-file "$LOG/sanitizer_many_memcheck.log" "$WARPCSV" \
    --device gpu --chunk-size 65536 -d ';' --no-header --names station,temp "$NQ" "$MANY" >"$LOG/many_gpu.csv"
  san_errors="$san_errors+narrow 2000 memcheck:$(sanitizer_count "$LOG/sanitizer_many_memcheck.log")"
  "$WARPCSV" --device cpu -d ';' --no-header --names station,temp "$NQ" "$MANY" >"$LOG/many_cpu.csv" 2>&1
  cmp -s "$LOG/many_cpu.csv" "$LOG/many_gpu.csv" || san_errors="$san_errors (narrow 2000 cpu!=gpu!)"
  # A lookup join (the table copied through the pinned slots) and holistic
  # lists of a string and numbers (the string listed as its bytes).
  LOOKUP="$LOG/lookup.csv"
  { echo 'k,name'; for i in $(seq 0 36); do echo "k$i,\"n$((i % 5)),x\""; done; } >"$LOOKUP"
  JQ="join '$LOOKUP' on k | groupby name | agg count_distinct(s), median(v), quantile(d, 0.9), count()"
  timeout 300 "$SAN" --tool memcheck --error-exitcode 9 "$WARPCSV" --device gpu --chunk-size 4096 "$JQ" "$SMALL" \
    >"$LOG/sanitizer_join_lists.log" 2>&1
  san_errors="$san_errors+join/lists memcheck:$(sanitizer_count "$LOG/sanitizer_join_lists.log")"
  "$WARPCSV" --device cpu "$JQ" "$SMALL" >"$LOG/join_cpu.csv" 2>&1
  "$WARPCSV" --device gpu "$JQ" "$SMALL" >"$LOG/join_gpu.csv" 2>&1
  cmp -s "$LOG/join_cpu.csv" "$LOG/join_gpu.csv" || san_errors="$san_errors (join/lists cpu!=gpu!)"
  san_result=${san_errors#0+}
  "$WARPCSV" --device cpu 'filter v > -400 | groupby k, s | agg count(), sum(v), var(d), min(d), max(v), corr(v, d)' \
    "$SMALL" >"$LOG/small_cpu.csv" 2>&1
  "$WARPCSV" --device gpu 'filter v > -400 | groupby k, s | agg count(), sum(v), var(d), min(d), max(v), corr(v, d)' \
    "$SMALL" >"$LOG/small_gpu.csv" 2>&1
  cmp -s "$LOG/small_cpu.csv" "$LOG/small_gpu.csv" && san_result="$san_result (cpu==gpu)" ||
    san_result="$san_result (cpu!=gpu!)"
fi

# ---- --trace on the GPU --------------------------------------------------------
trace_result=skipped
if [ -x "$WARPCSV" ] && [ "$gpus" -gt 0 ] && [ -f "$SMALL" ] && "$WARPCSV" --help | grep -q -- '--trace'; then
  step "--trace on the GPU"
  timeout 120 "$WARPCSV" --device 0 --chunk-size 16K --trace "$LOG/trace_gpu.json" \
    'groupby k | agg count(), sum(v)' "$SMALL" >/dev/null 2>"$LOG/trace_gpu.err"
  rc=$?
  if command -v python3 >/dev/null; then
    trace_result="rc=$rc $(python3 -c '
import json, sys, collections
t = json.load(open(sys.argv[1]))["traceEvents"]
x = [e for e in t if e.get("ph") == "X"]
by = collections.Counter((e["pid"], e["name"].split(" ")[0]) for e in x)
print(len(x), "events;", ", ".join("pid %s %s: %d" % (p, n, c) for (p, n), c in sorted(by.items(), key=str)[:12]))
' "$LOG/trace_gpu.json" 2>&1 | tail -1)"
  else
    trace_result="rc=$rc $(grep -o '"ph":"X"' "$LOG/trace_gpu.json" | wc -l) events"
  fi
fi

# ---- ranks of mpirun sharing the GPU ------------------------------------------
# Two and three ranks on one GPU (and two on the CPU) give one process's bytes.
ranks_result=skipped
if [ -x "$WARPCSV" ] && [ "$gpus" -gt 0 ] && [ -f "$SMALL" ] && command -v mpirun >/dev/null &&
   grep -q 'MPI ranks ON' "$LOG/build.log" 2>/dev/null; then
  step "ranks sharing the GPU"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  same=0 differ=0
  for p in 'groupby k | agg count(), sum(v), mean(d)' 'groupby k, s | agg median(v), count_distinct(d)' \
           'filter v > 0 | groupby s | agg sum(d)'; do
    "$WARPCSV" --device cpu "$p" "$SMALL" >"$LOG/ranks_one.csv" 2>&1
    for run in "2 gpu" "3 gpu" "2 cpu"; do
      set -- $run
      timeout 120 mpirun -np "$1" --bind-to none --oversubscribe "$WARPCSV" --device "$2" --chunk-size 16K \
        "$p" "$SMALL" >"$LOG/ranks_n.csv" 2>>"$LOG/ranks.err"
      if cmp -s "$LOG/ranks_one.csv" "$LOG/ranks_n.csv"; then same=$((same + 1)); else differ=$((differ + 1)); fi
    done
  done
  ranks_result="$same runs the same bytes as one process, $differ differ"
fi

# ---- benchmark: db-benchmark G1 table, q1 ------------------------------------
q1_inproc=skipped
q1_whole=skipped
q1_same=skipped
if [ -x "$WARPCSV" ] && [ "$gpus" -gt 0 ] && [ "$ROWS" != 0 ]; then
  step "generate $ROWS rows"
  GEN="$BUILD/gen_groupby_check"
  cc -O2 -pthread -o "$GEN" "$ROOT/scripts/gen_groupby.c"
  G1="$DATA_DIR/warpcsv_g1_$ROWS.csv"
  [ -s "$G1" ] || "$GEN" "$ROWS" 100 1 "$G1" "$JOBS"
  size=$(stat -c %s "$G1")
  step "host ceilings: reading the file, and reading while the GPUs copy in"
  NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  "$NVCC" -O2 -std=c++17 -o "$BUILD/read_copy_ceiling" "$ROOT/tools/lab/read_copy_ceiling.cu" >"$LOG/ceiling.log" 2>&1 &&
    "$BUILD/read_copy_ceiling" "$G1" "$JOBS" "$gpus" >>"$LOG/ceiling.log" 2>&1
  read_ceiling=$(tail -1 "$LOG/ceiling.log")
  # The feed as warpcsv runs it (its readers and slots for these GPUs), with
  # no kernels: the second of two rounds (the first pays for first touches).
  # 13 and 7 per GPU: kReadersPerGpu and 1 + kSlotsInFlightPerGpu in
  # src/cuda/staging.cpp (read_helpers, pin_count); keep them together.
  readers=$(( JOBS - 1 < 13 * gpus ? JOBS - 1 : 13 * gpus ))
  "$NVCC" -O2 -std=c++17 -arch=native -Xcompiler -mavx2,-mclflushopt -o "$BUILD/feed_ceiling" \
    "$ROOT/tools/lab/feed_ceiling.cu" >"$LOG/feed.log" 2>&1 &&
    "$BUILD/feed_ceiling" "$G1" $((readers + gpus)) $((readers + 7 * gpus)) "$gpus" 00 >>"$LOG/feed.log" 2>&1
  feed_ceiling=$(tail -1 "$LOG/feed.log")
  step "q1 in-process ($size bytes)"
  # The runs after the first (which starts CUDA): best and worst GB/s (seconds).
  warm_runs() {
    grep -E '^bench: run [1-9]' "$1" | awk '{ r = $6 " GB/s (" $4 " s)"; if (!n || $6 > bv) { bv = $6; b = r }
      if (!n || $6 < wv) { wv = $6; w = r }; n++ } END { if (n) print "best " b ", worst " w " of " n }'
  }
  WARPCSV_BENCH_FILE="$G1" timeout 300 "$GPU_TESTS" '[.bench]' -s >"$LOG/bench_inproc.log" 2>&1
  q1_inproc=$(warm_runs "$LOG/bench_inproc.log")
  # A warm run's costs besides streaming the bytes (its --profile).
  q1_fixed=$(awk '/^  open\+infer / { oi = $3 } /^  scan / { sc = $3 } /^  gpu: read\+copy\+kernels / { rc = $4 }
    END { if (sc) printf "open+infer %.1f ms, scan beyond read+copy+kernels %.1f ms", oi * 1e3, (sc - rc) * 1e3 }' \
    "$LOG/bench_inproc.log")
  [ -n "$q1_inproc" ] || { q1_inproc="failed (see bench_inproc.log)"; tail -20 "$LOG/bench_inproc.log" >&2; }
  if [ "$gpus" -gt 1 ]; then  # --device gpu keeps a 5 GB file on GPU 0; list them all
    all=$(seq -s, 0 $((gpus - 1)))
    WARPCSV_BENCH_DEVICE=$all WARPCSV_BENCH_FILE="$G1" timeout 300 "$GPU_TESTS" '[.bench]' -s \
      >"$LOG/bench_inproc_all.log" 2>&1
    q1_inproc_all=$(warm_runs "$LOG/bench_inproc_all.log")
  fi
  step "q1 whole process"
  t0=$(date +%s.%N)
  timeout 120 "$WARPCSV" --device gpu 'groupby id1 | agg sum(v1)' "$G1" >"$LOG/q1_gpu.csv" 2>"$LOG/q1_gpu.err"
  t1=$(date +%s.%N)
  q1_whole=$(awk -v a="$t0" -v b="$t1" -v s="$size" 'BEGIN { printf "%.1f GB/s (%.2f s)", s / (b - a) / 1e9, b - a }')
  timeout 300 "$WARPCSV" --device cpu 'groupby id1 | agg sum(v1)' "$G1" >"$LOG/q1_cpu.csv" 2>&1
  # Where the time goes (per-stage timing on stderr).
  timeout 120 "$WARPCSV" --device gpu --profile 'groupby id1 | agg sum(v1)' "$G1" >/dev/null 2>"$LOG/q1_profile.txt"
  cmp -s "$LOG/q1_cpu.csv" "$LOG/q1_gpu.csv" && q1_same="identical bytes" || q1_same="DIFFERENT"
  for q in 'groupby id1, id2 | agg sum(v1)' 'groupby id3 | agg sum(v1), mean(v3)' \
           'groupby id4 | agg mean(v1), mean(v2), mean(v3)' 'groupby id6 | agg sum(v1), sum(v2), sum(v3)' \
           'groupby id3 | agg max(v1) - min(v2) as range_v1_v2' 'groupby id2, id4 | agg corr(v1, v2) as r2' \
           'groupby id4, id5 | agg median(v3), std(v3)'; do
    t0=$(date +%s.%N)
    timeout 120 "$WARPCSV" --device gpu --profile "$q" "$G1" >"$LOG/q_gpu.csv" 2>>"$LOG/q_gpu.err"
    t1=$(date +%s.%N)
    printf '%-70s %s\n' "$q" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f s", b - a }')" >>"$LOG/queries.txt"
  done
fi

# ---- a build for another GPU generation --------------------------------------
# Machine code for a GPU generation this machine does not have, and no PTX:
# the start-up check must refuse the GPU by name (--device gpu: exit 4) and
# --device auto (on the G1 table, large enough for the GPUs) must answer on
# the CPU with the CPU executor's bytes.
foreign_result=skipped
if [ -z "${SKIP_FOREIGN:-}" ] && [ -x "$WARPCSV" ] && [ "$gpus" -gt 0 ] && [ -s "$LOG/q1_cpu.csv" ]; then
  cc_major=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | cut -d. -f1)
  other=$([ "${cc_major:-9}" = 8 ] && echo 90-real || echo 80-real)
  FOREIGN="$BUILD-$other"
  step "build for $other only ($FOREIGN)"
  if cmake -S "$ROOT" -B "$FOREIGN" -DCMAKE_BUILD_TYPE=Release -DWARPCSV_TESTS=OFF \
       -DCMAKE_CUDA_ARCHITECTURES="$other" >"$LOG/foreign_build.log" 2>&1 &&
     cmake --build "$FOREIGN" -j"$JOBS" --target warpcsv >>"$LOG/foreign_build.log" 2>&1; then
    timeout 120 "$FOREIGN/warpcsv" --device gpu 'groupby id1 | agg sum(v1)' "$G1" >/dev/null 2>"$LOG/foreign_gpu.err"
    rc_gpu=$?
    timeout 300 "$FOREIGN/warpcsv" --device auto 'groupby id1 | agg sum(v1)' "$G1" >"$LOG/foreign_auto.csv" \
      2>"$LOG/foreign_auto.err"
    rc_auto=$?
    same=$(cmp -s "$LOG/q1_cpu.csv" "$LOG/foreign_auto.csv" && echo same || echo DIFFERENT)
    foreign_result="$other: --device gpu rc=$rc_gpu, auto rc=$rc_auto $same bytes as the CPU"
    { echo "--device gpu:"; cat "$LOG/foreign_gpu.err"; echo "--device auto:"; cat "$LOG/foreign_auto.err"; } \
      >"$LOG/foreign_messages.txt"
    [ "$rc_gpu" = 4 ] && [ "$rc_auto" = 0 ] && [ "$same" = same ] || foreign_result="FAILED $foreign_result"
  else
    foreign_result="build FAILED (see foreign_build.log)"
  fi
fi

# ---- summary -----------------------------------------------------------------
echo "---- warpcsv gpu-check summary" | tee -a "$SUMMARY"
row "machine" "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1) x$gpus, $(nproc) cores"
row "build (CUDA $cuda)" "$build_ok; ${gpu_code:-GPU code ?}"
row "GPU code in the binary" "$elf_ptx"
row "ctest (all but gpu_tests)" "$ctest_result"
row "gpu diff tests" "$diff_result"
row "sanitizer errors" "$san_result"
row "300k groups, 4 KiB batches" "$many_result"
row "build for another GPU" "$foreign_result"
row "--trace on the GPU" "$trace_result"
row "ranks sharing the GPU" "$ranks_result"
row "host ceiling (no scan)" "${read_ceiling:-skipped}"
row "feed ceiling (no kernels)" "${feed_ceiling:-skipped}"
row "q1 in-process (warm runs)" "$q1_inproc"
row "q1 in-process, fixed costs" "${q1_fixed:-skipped}"
[ -n "${q1_inproc_all:-}" ] && row "q1 in-process, all GPUs listed" "$q1_inproc_all"
row "q1 whole process" "$q1_whole"
row "q1 gpu vs cpu bytes" "$q1_same"
[ -f "$LOG/queries.txt" ] && { echo "whole-process times, other queries (--device gpu):"; cat "$LOG/queries.txt"; } | tee -a "$SUMMARY"
[ -f "$LOG/q1_profile.txt" ] && { echo "q1 --profile:"; cat "$LOG/q1_profile.txt"; } | tee -a "$SUMMARY"
[ -f "$LOG/foreign_messages.txt" ] && { echo "build for another GPU, messages:"; cat "$LOG/foreign_messages.txt"; } | tee -a "$SUMMARY"
if [ -n "${OUT:-}" ] && [ -d "$OUT" ]; then
  cp "$SUMMARY" "$OUT/gpu-check-summary.txt"
  tar czf "$OUT/gpu-check-logs.tgz" -C "$LOG" --exclude small.csv --exclude q_gpu.csv . 2>/dev/null
fi
case "$build_ok $diff_result $q1_same $foreign_result" in
  *NO*|*FAILED*|*DIFFERENT*) exit 1 ;;
esac
exit 0
