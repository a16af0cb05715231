#!/usr/bin/env bash
# Runs warpcsv as ranks of mpirun: run_rank_tests.sh BINARY DATA_DIR MPIRUN STOP_AT_EXCHANGE_LIBRARY
#
# Every pipeline gives the same bytes (stdout, -o, --rejects) and exit code under
# `mpirun -np 1..4` as one process, over random tables with quoted newlines, CRLF and
# several files at tiny chunk sizes and over the messy sales sample; a bad row on any rank
# ends every rank with one message and exit 3; standard input is refused with exit 2; a
# rank killed mid-run ends the run within seconds. Prints PASS/FAIL per check.
set -u
W=$1
DATA=$2
MPIRUN=$3
STOP_AT_EXCHANGE=$(realpath "${4:?the stop_at_exchange library}")
if ! command -v "$MPIRUN" >/dev/null; then
  echo "run_rank_tests: no $MPIRUN; skipped"
  exit 77
fi
# Root in a container, and more ranks than this machine's cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export LC_ALL=C
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
pass() { passed=$((passed + 1)); echo "PASS $1"; }
fail() {
  failed=$((failed + 1))
  echo "FAIL $1"
  shift
  for f in "$@"; do [ -f "$f" ] && { echo "--- $f"; head -c 2000 "$f"; }; done
}
ranks() { timeout 120 "$MPIRUN" -np "$@"; }

# --- data ---------------------------------------------------------------------------------
# A random table: quoted strings with commas, doubled quotes and line breaks, decimals,
# dates, empty fields.
gen_table() {  # seed rows line_end
  awk -v seed="$1" -v rows="$2" -v eol="$3" 'BEGIN {
    srand(seed);
    printf "id,grp,amount,day,note%s", eol;
    split("north|south|\"east, far\"|\"we\"\"st\"|\"cen\ntral\"|", g, "|");
    for (i = 0; i < rows; i++) {
      note = rand() < 0.1 ? "\"line one" eol "line, two\"" : (rand() < 0.2 ? "" : "n" int(rand() * 50));
      amount = rand() < 0.05 ? "" : sprintf("%.2f", rand() * 100);
      printf "%d,%s,%s,2024-%02d-%02d,%s%s", i, g[1 + int(rand() * 6)], amount, 1 + int(rand() * 12),
             1 + int(rand() * 28), note, eol;
    }
  }'
}
gen_table 1 3000 $'\n' > "$tmp/t.csv"
gen_table 2 2000 $'\r\n' > "$tmp/crlf.csv"
# The same table in three files (one compressed), and a copy of it as one file.
gen_table 3 900 $'\n' > "$tmp/part1.csv"
gen_table 4 20 $'\n' > "$tmp/part2.csv"
gen_table 5 1500 $'\n' > "$tmp/part3.csv"
gzip -c "$tmp/part2.csv" > "$tmp/part2.csv.gz"

PIPELINES=(
  'groupby grp | agg sum(amount), count(), min(day), max(note), mean(amount)'
  'groupby grp, day | agg count_distinct(note), median(amount), quantile(id, 0.9)'
  'agg sum(amount), count(), count_distinct(grp)'
  'filter amount > 50 | select id, grp, note'
  'sort amount desc, id | limit 7'
  'distinct grp'
  'distinct grp, upper(note) as n | filter n != "N1"'
  'groupby grp | agg first(note), last(id), first(day)'
  'groupby grp | top 2 by amount desc | select grp, amount'
  'groupby grp | agg sum(amount) as s | filter s > 1000 | sort s desc'
  'assert amount < 90 or amount is null'
)

# Same bytes and exit code as one process, for -np 1..4.
same_as_one() {  # name, warpcsv arguments...
  local name=$1
  shift
  "$W" "$@" >"$tmp/one.out" 2>"$tmp/one.err"
  local want=$?
  local np
  for np in 1 2 3 4; do
    ranks "$np" "$W" "$@" >"$tmp/ranks.out" 2>"$tmp/ranks.err"
    local got=$?
    if [ "$got" != "$want" ] || ! cmp -s "$tmp/one.out" "$tmp/ranks.out"; then
      fail "$name (-np $np: exit $got, one process $want)" "$tmp/one.out" "$tmp/ranks.out" "$tmp/ranks.err"
      return
    fi
  done
  pass "$name"
}

# --- same bytes -----------------------------------------------------------------------------
for p in "${PIPELINES[@]}"; do
  for chunk in 64 1K; do
    same_as_one "random table, chunk $chunk: $p" --chunk-size "$chunk" "$p" "$tmp/t.csv"
  done
  same_as_one "CRLF table: $p" --chunk-size 100 "$p" "$tmp/crlf.csv"
  same_as_one "three files, one gzip: $p" --chunk-size 64 "$p" "$tmp/part1.csv" "$tmp/part2.csv.gz" "$tmp/part3.csv"
done
same_as_one "messy sales sample" --chunk-size 64 'groupby region, status | agg sum(amount), count(), median(quantity)' \
  "$DATA/sales_sample.csv"
same_as_one "messy sales sample rows" --chunk-size 64 'filter quantity > 5 | select order_id, customer, amount' \
  "$DATA/sales_sample.csv"
printf 'region,manager\nwest,Ann\neast,Bo\nnorth,"Cy, Jr"\n' >"$tmp/managers.csv"
same_as_one "a lookup join before the agg" --chunk-size 64 \
  "join '$tmp/managers.csv' on region | groupby manager | agg sum(amount), count()" "$DATA/sales_sample.csv"
same_as_one "json output" --chunk-size 64 -f json 'select id, note | limit 40' "$tmp/t.csv"

# Many groups: each rank's range goes out in several chunks, and rank 0 merges the ranges.
awk 'BEGIN { srand(9); print "id,grp,v"; for (i = 0; i < 200000; i++)
  printf "%d,\"g %d\",%.2f\n", int(rand() * 150000), int(rand() * 3), rand() * 10 }' >"$tmp/many.csv"
same_as_one "150k groups of two keys" 'groupby id, grp | agg sum(v), count(), max(grp)' "$tmp/many.csv"
same_as_one "150k groups, then a filter and a limit" \
  'groupby id | agg sum(v) as s | filter s > 5 | sort s desc, id | limit 20' "$tmp/many.csv"

# Bad rows skipped: the same rows out, the same rejects in the same order.
awk 'NR % 97 == 50 { print "x,y"; next } { print }' "$tmp/t.csv" >"$tmp/bad.csv"
"$W" --chunk-size 64 --bad-rows skip --rejects "$tmp/rej.txt" 'groupby grp | agg count()' "$tmp/bad.csv" \
  >"$tmp/one.out" 2>"$tmp/one.err"
mv "$tmp/rej.txt" "$tmp/rej_one.txt"
ok=1
for np in 2 4; do
  ranks "$np" "$W" --chunk-size 64 --bad-rows skip --rejects "$tmp/rej.txt" -o "$tmp/out.csv" \
    'groupby grp | agg count()' "$tmp/bad.csv" 2>"$tmp/ranks.err" || ok=0
  cmp -s "$tmp/one.out" "$tmp/out.csv" && cmp -s "$tmp/rej_one.txt" "$tmp/rej.txt" &&
    cmp -s "$tmp/one.err" "$tmp/ranks.err" || ok=0
  rm -f "$tmp/out.csv" "$tmp/rej.txt"
done
if [ $ok = 1 ]; then pass "bad rows skipped: -o, --rejects and the notice as one process"; else
  fail "bad rows skipped" "$tmp/one.err" "$tmp/ranks.err"; fi

# A column widened by a value past the inference sample, on a later rank.
awk 'BEGIN { print "k,v"; for (i = 0; i < 120000; i++) print i % 13 "," (i == 100000 ? "2.5" : i % 1000) }' \
  >"$tmp/widen.csv"
same_as_one "a widening met by a later rank" --chunk-size 64K 'groupby k | agg sum(v), count()' "$tmp/widen.csv"

# --- what rank 0 shows ----------------------------------------------------------------------
ranks 3 "$W" --chunk-size 64 --explain 'groupby grp | agg count()' "$tmp/t.csv" >"$tmp/explain.txt" 2>&1
if grep -q "rank 2: .*bytes \[" "$tmp/explain.txt" && [ "$(grep -c "^  ranks: 3" "$tmp/explain.txt")" = 1 ] &&
   grep -q "groups are exchanged by hash" "$tmp/explain.txt"; then
  pass "--explain shows each rank's bytes and the exchange by hash, once"
else fail "--explain" "$tmp/explain.txt"; fi
ranks 3 "$W" --chunk-size 64 --profile 'groupby grp | agg count()' "$tmp/t.csv" >/dev/null 2>"$tmp/profile.txt"
if grep -q "rank 2: scan" "$tmp/profile.txt" && [ "$(grep -c "^profile:" "$tmp/profile.txt")" = 1 ]; then
  pass "--profile has a line per rank, from rank 0 alone"
else fail "--profile" "$tmp/profile.txt"; fi

# --- failures -------------------------------------------------------------------------------
awk 'NR == 2500 { print "2500,north,oops,2024-01-01,x"; next } { print }' "$tmp/t.csv" >"$tmp/badval.csv"
"$W" --chunk-size 64 --schema amount:decimal 'groupby grp | agg sum(amount)' "$tmp/badval.csv" 2>"$tmp/one.err" >/dev/null
want=$?
ranks 4 "$W" --chunk-size 64 --schema amount:decimal 'groupby grp | agg sum(amount)' "$tmp/badval.csv" \
  2>"$tmp/ranks.err" >/dev/null
got=$?
if [ $want = 3 ] && [ $got = 3 ] && [ "$(grep -c '^warpcsv:' "$tmp/ranks.err")" = 1 ] &&
   grep -qF "$(cat "$tmp/one.err")" "$tmp/ranks.err"; then
  pass "a bad row on a later rank: exit 3, the one process's message, once"
else fail "a bad row on a later rank (exit $got)" "$tmp/one.err" "$tmp/ranks.err"; fi

ranks 2 "$W" 'agg count()' <"$tmp/t.csv" >/dev/null 2>"$tmp/ranks.err"
got=$?
if [ $got = 2 ] && grep -q "standard input and pipes cannot be shared between ranks" "$tmp/ranks.err"; then
  pass "standard input with two ranks: exit 2"
else fail "standard input with two ranks (exit $got)" "$tmp/ranks.err"; fi

# A rank that dies at once, and one killed while the others wait for it: the run ends.
start=$(date +%s)
ranks 3 sh -c 'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then kill -9 $$; fi; exec "$0" "$@"' "$W" \
  'groupby grp | agg count()' "$tmp/t.csv" >/dev/null 2>&1
got=$?
if [ $got != 0 ] && [ $got != 124 ] && [ $(($(date +%s) - start)) -lt 30 ]; then
  pass "a rank dead at start ends the run (exit $got)"
else fail "a rank dead at start (exit $got)"; fi
# Rank 1 stops itself at its first exchange (STOP_AT_EXCHANGE, preloaded), is held there a second
# while the others wait for it, and is killed.
rm -f "$tmp/pid1"
start=$(date +%s)
ranks 3 sh -c 'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then echo $$ > "'"$tmp"'/pid1"; export LD_PRELOAD="'"$STOP_AT_EXCHANGE"'"; fi
  exec "$0" "$@"' "$W" --chunk-size 64 'groupby grp | agg count()' "$tmp/t.csv" >/dev/null 2>"$tmp/kill.err" &
launcher=$!
stopped=0
for _ in $(seq 600); do
  pid=$(cat "$tmp/pid1" 2>/dev/null)
  if [ -n "$pid" ] && read -r _ _ state _ 2>/dev/null <"/proc/$pid/stat" && [ "$state" = T ]; then
    stopped=1
    break
  fi
  kill -0 $launcher 2>/dev/null || break
  sleep 0.05
done
sleep 1
[ $stopped = 1 ] && kill -9 "$pid"
# A hang says where each process waits before the launcher's limit ends it.
for _ in $(seq 600); do kill -0 $launcher 2>/dev/null || break; sleep 0.1; done
if kill -0 $launcher 2>/dev/null; then
  echo "--- still running 60 s after the kill:"
  ps -eo pid,ppid,stat,wchan:30,etime,args | grep -E "mpirun|mpiexec|prte|orted|warpcsv" | grep -v grep
fi
wait $launcher
got=$?
if [ $stopped = 1 ] && [ $got != 0 ] && [ $got != 124 ] && [ $(($(date +%s) - start)) -lt 30 ]; then
  pass "a rank killed mid-run ends the run (exit $got)"
else fail "a rank killed mid-run (stopped at its exchange: $stopped, exit $got)" "$tmp/kill.err"; fi

echo "$passed passed, $failed failed"
[ $failed = 0 ]
