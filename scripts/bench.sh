#!/usr/bin/env bash
# Benchmark (not a test): warpcsv and DuckDB side by side on the db-benchmark group-by table,
# same thread count, file in page cache. Per question: median whole-process time of each over
# REPS runs, the ratio, warpcsv's GB/s of CSV, and peak RSS (/usr/bin/time -f %M). Prints a
# markdown table. Without DuckDB, prints warpcsv's numbers only.
#
#   scripts/bench.sh
#
# Environment:
#   ROWS (default 1e7), K (default 100), SEED (default 1), THREADS (default nproc),
#   DEVICE (warpcsv --device, default cpu), REPS (default 3), QUERIES (default "q1 q2 q3 q5"):
#     q1..q10 of db-benchmark (q10: ~ROWS groups of six keys); hmix, holistic aggregates
#     with a string argument; distinct, the distinct (id4, id5) pairs (ints: row by row);
#     distinct3 and distinct23, of id3 and of (id2, id3) (strings: groups in the scan); sales,
#     "total sales per customer" over a sales table of ROWS rows
#     and CUSTOMERS customers (default ROWS / 10, gen_sales.c); salesfn, its revenue by month
#     (strftime) and size (case); salesjoin, its revenue by month and country, the country from
#     a lookup join with a customer file (gen_customers.c); brc413 and brc10k, min / mean / max
#     temperature per station over ROWS narrow rows ("station;temp", no header) of 413 or 10,000
#     stations (scripts/gen_stations.c),
#   RANKS (default 1): warpcsv as that many ranks of mpirun (--bind-to none), THREADS each,
#   BENCH_DIR (default /dev/shm when writable, else /tmp): where the table is generated and kept,
#   WARPCSV (binary; default build/warpcsv, built when missing),
#   DUCKQ (duckq binary; default .peers/duckq, fetched with ../shared/peers/get-duckdb.sh when
#     that exists), NO_DUCKDB=1 to skip DuckDB,
#   GEN_GROUPBY (gen_groupby binary or gen_groupby.c; default ../shared/datagen/gen_groupby.c),
#   GEN_SALES (likewise, gen_sales).
# On a machine without ../shared, pass DUCKQ and GEN_GROUPBY (a copy of the .c is enough).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SHARED=${SHARED:-$ROOT/../shared}
to_int() { awk "BEGIN{printf \"%d\", $1}"; }
ROWS=$(to_int "${ROWS:-1e7}")
K=${K:-100}
SEED=${SEED:-1}
THREADS=${THREADS:-$(nproc)}
DEVICE=${DEVICE:-cpu}
REPS=${REPS:-3}
QUERIES=${QUERIES:-q1 q2 q3 q5}
if [ -z "${BENCH_DIR:-}" ]; then
  if [ -d /dev/shm ] && [ -w /dev/shm ]; then BENCH_DIR=/dev/shm; else BENCH_DIR=/tmp; fi
fi
mkdir -p "$BENCH_DIR"

# --- warpcsv ----------------------------------------------------------------------------------
if [ -z "${WARPCSV:-}" ]; then
  WARPCSV=$ROOT/build/warpcsv
  if [ ! -x "$WARPCSV" ]; then
    echo "bench: building $WARPCSV" >&2
    cmake -S "$ROOT" -B "$ROOT/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$ROOT/build" -j "$(nproc)" --target warpcsv >/dev/null
  fi
fi

# --- DuckDB (optional) ------------------------------------------------------------------------
if [ "${NO_DUCKDB:-0}" = "1" ]; then
  DUCKQ=""
elif [ -z "${DUCKQ:-}" ]; then
  DUCKQ=$ROOT/.peers/duckq
  if [ ! -x "$DUCKQ" ] && [ -f "$SHARED/peers/get-duckdb.sh" ] && command -v npm >/dev/null; then
    (cd "$ROOT" && bash "$SHARED/peers/get-duckdb.sh" .peers) >&2 || true
  fi
  [ -x "$DUCKQ" ] || DUCKQ=""
fi
if [ -n "$DUCKQ" ] && ! "$DUCKQ" "SELECT 1" >/dev/null 2>&1; then
  echo "bench: $DUCKQ does not run; warpcsv numbers only" >&2
  DUCKQ=""
fi

# --- data -------------------------------------------------------------------------------------
# A generator binary from $1 (a binary, or a .c compiled into BENCH_DIR), else the repository's copy.
generator() {
  local gen=$1 name=$2
  [ -f "$gen" ] || gen=$ROOT/scripts/$name.c
  if [[ $gen == *.c ]]; then
    [ -f "$gen" ] || { echo "bench: no generator at $gen" >&2; exit 2; }
    cc -O2 -pthread -o "$BENCH_DIR/$name" "$gen" -lm
    gen=$BENCH_DIR/$name
  fi
  echo "$gen"
}
FILE=$BENCH_DIR/groupby_${ROWS}_${K}_${SEED}.csv
# The group-by table, unless every question reads another file.
NEEDS_GROUPBY=0
for q in $QUERIES; do
  case $q in sales | salesfn | salesjoin | brc413 | brc10k) ;; *) NEEDS_GROUPBY=1 ;; esac
done
if [ "$NEEDS_GROUPBY" = 1 ] && [ ! -s "$FILE" ]; then
  GEN=$(generator "${GEN_GROUPBY:-$SHARED/datagen/gen_groupby.c}" gen_groupby)
  echo "bench: generating $FILE" >&2
  "$GEN" "$ROWS" "$K" "$SEED" "$FILE.tmp" "$(nproc)"
  mv "$FILE.tmp" "$FILE"
fi
CUSTOMERS=$(to_int "${CUSTOMERS:-$ROWS / 10}")
SALES=$BENCH_DIR/sales_${ROWS}_${CUSTOMERS}_${SEED}.csv
if [[ " $QUERIES " == *" sales"* ]] && [ ! -s "$SALES" ]; then
  GEN=$(generator "${GEN_SALES:-$SHARED/datagen/gen_sales.c}" gen_sales)
  echo "bench: generating $SALES" >&2
  "$GEN" "$ROWS" "$SEED" "$SALES.tmp" "$CUSTOMERS" "$(nproc)"
  mv "$SALES.tmp" "$SALES"
fi
CUSTOMER_FILE=$BENCH_DIR/customers_${CUSTOMERS}_${SEED}.csv
if [[ " $QUERIES " == *" salesjoin "* ]] && [ ! -s "$CUSTOMER_FILE" ]; then
  GEN=$(generator "${GEN_CUSTOMERS:-$ROOT/scripts/gen_customers.c}" gen_customers)
  "$GEN" "$CUSTOMERS" "$SEED" "$CUSTOMER_FILE.tmp"
  mv "$CUSTOMER_FILE.tmp" "$CUSTOMER_FILE"
fi
stations_file() { echo "$BENCH_DIR/stations_${ROWS}_$1_${SEED}.csv"; }
for n in 413 10000; do
  q=brc413
  [ "$n" = 10000 ] && q=brc10k
  [[ " $QUERIES " == *" $q "* ]] || continue
  f=$(stations_file "$n")
  if [ ! -s "$f" ]; then
    GEN=$(generator "${GEN_STATIONS:-$ROOT/scripts/gen_stations.c}" gen_stations)
    echo "bench: generating $f" >&2
    "$GEN" "$ROWS" "$n" "$SEED" "$f.tmp" "$(nproc)"
    mv "$f.tmp" "$f"
  fi
done

file_of() {
  case $1 in
    sales | salesfn | salesjoin) echo "$SALES" ;;
    brc413) stations_file 413 ;;
    brc10k) stations_file 10000 ;;
    *) echo "$FILE" ;;
  esac
}
if [ "$NEEDS_GROUPBY" = 1 ]; then
  BYTES=$(stat -L -c %s "$FILE")
  cat "$FILE" >/dev/null  # into the page cache
else
  FILE=$(file_of "${QUERIES%% *}")
  BYTES=$(stat -L -c %s "$FILE")
fi
# warpcsv's options for the question's file (one word each).
options_of() {
  case $1 in
    brc413 | brc10k) echo "-d ; --no-header --names station,temp" ;;
  esac
}
pipeline_of() {
  case $1 in
    q1) echo 'groupby id1 | agg sum(v1) as v1' ;;
    q2) echo 'groupby id1, id2 | agg sum(v1) as v1' ;;
    q3) echo 'groupby id3 | agg sum(v1) as v1, mean(v3) as v3' ;;
    q4) echo 'groupby id4 | agg mean(v1) as v1, mean(v2) as v2, mean(v3) as v3' ;;
    q5) echo 'groupby id6 | agg sum(v1) as v1, sum(v2) as v2, sum(v3) as v3' ;;
    q6) echo 'groupby id4, id5 | agg median(v3) as median_v3, std(v3) as sd_v3' ;;
    q7) echo 'groupby id3 | agg max(v1) - min(v2) as range_v1_v2' ;;
    q9) echo 'groupby id2, id4 | agg corr(v1, v2) * corr(v1, v2) as r2' ;;
    q10) echo 'groupby id1, id2, id3, id4, id5, id6 | agg sum(v3) as v3, count() as count' ;;
    hmix) echo 'groupby id1 | agg count_distinct(id2) as d, quantile(v3, 0.9) as q, median(v1) as m' ;;
    q8) echo 'filter v3 is not null | groupby id6 | top 2 by v3 desc | select id6, v3 as largest2_v3' ;;
    distinct) echo 'distinct id4, id5' ;;
    distinct3) echo 'distinct id3' ;;
    distinct23) echo 'distinct id2, id3' ;;
    sales) echo 'groupby customer_id | agg sum(sales_amount) as total' ;;
    salesfn) echo 'groupby strftime(ts, "%Y-%m") as month, case when sales_amount > 1000 then "big" else "small" end as size | agg sum(sales_amount) as total, count_if(churned) as churned' ;;
    salesjoin) echo "join '$CUSTOMER_FILE' on customer_id | groupby strftime(ts, \"%Y-%m\") as month, country | agg sum(sales_amount) as revenue" ;;
    brc413 | brc10k) echo 'groupby station | agg min(temp) as lo, round(mean(temp), 1) as mean, max(temp) as hi' ;;
    *) echo "bench: unknown query $1" >&2; exit 2 ;;
  esac
}
sql_of() {
  local t="read_csv('$(file_of "$1")')"
  case $1 in
    q1) echo "SELECT id1, sum(v1) AS v1 FROM $t GROUP BY id1" ;;
    q2) echo "SELECT id1, id2, sum(v1) AS v1 FROM $t GROUP BY id1, id2" ;;
    q3) echo "SELECT id3, sum(v1) AS v1, avg(v3) AS v3 FROM $t GROUP BY id3" ;;
    q4) echo "SELECT id4, avg(v1) AS v1, avg(v2) AS v2, avg(v3) AS v3 FROM $t GROUP BY id4" ;;
    q5) echo "SELECT id6, sum(v1) AS v1, sum(v2) AS v2, sum(v3) AS v3 FROM $t GROUP BY id6" ;;
    q6) echo "SELECT id4, id5, median(v3) AS median_v3, stddev_samp(v3) AS sd_v3 FROM $t GROUP BY id4, id5" ;;
    q7) echo "SELECT id3, max(v1) - min(v2) AS range_v1_v2 FROM $t GROUP BY id3" ;;
    q9) echo "SELECT id2, id4, pow(corr(v1, v2), 2) AS r2 FROM $t GROUP BY id2, id4" ;;
    q10) echo "SELECT id1, id2, id3, id4, id5, id6, sum(v3) AS v3, count(*) AS count FROM $t GROUP BY ALL" ;;
    hmix) echo "SELECT id1, count(DISTINCT id2) AS d, quantile_cont(v3, 0.9) AS q, median(v1) AS m FROM $t GROUP BY id1" ;;
    q8) echo "SELECT id6, v3 AS largest2_v3 FROM (SELECT id6, v3, row_number() OVER (PARTITION BY id6 ORDER BY v3 DESC) AS rn FROM $t WHERE v3 IS NOT NULL) WHERE rn <= 2" ;;
    distinct) echo "SELECT DISTINCT id4, id5 FROM $t" ;;
    distinct3) echo "SELECT DISTINCT id3 FROM $t" ;;
    distinct23) echo "SELECT DISTINCT id2, id3 FROM $t" ;;
    sales) echo "SELECT customer_id, sum(sales_amount) AS total FROM $t GROUP BY customer_id" ;;
    salesfn) echo "SELECT strftime(ts, '%Y-%m') AS month, CASE WHEN sales_amount > 1000 THEN 'big' ELSE 'small' END AS size, sum(sales_amount) AS total, count_if(churned) AS churned FROM $t GROUP BY ALL" ;;
    salesjoin) echo "SELECT strftime(ts, '%Y-%m') AS month, country, sum(sales_amount) AS revenue FROM $t JOIN read_csv('$CUSTOMER_FILE') USING (customer_id) GROUP BY ALL" ;;
    brc413 | brc10k)
      echo "SELECT station, min(temp) AS lo, round(avg(temp), 1) AS mean, max(temp) AS hi FROM" \
        "read_csv('$(file_of "$1")', delim=';', header=false, columns={'station': 'VARCHAR', 'temp': 'DECIMAL(3,1)'})" \
        "GROUP BY station" ;;
  esac
}

# Runs a command REPS times; prints "median_seconds max_rss_kib". Output goes to /dev/null.
measure() {
  local times=() rss=0 i line tf=$BENCH_DIR/.bench-time.$$
  for ((i = 0; i < REPS; i++)); do
    /usr/bin/time -f '%e %M' -o "$tf" "$@" >/dev/null 2>&1 || true
    line=$(tail -n 1 "$tf")
    times+=("${line% *}")
    (( ${line#* } > rss )) && rss=${line#* }
  done
  printf '%s\n' "${times[@]}" | sort -g | awk -v r="$rss" '{a[NR]=$1} END{m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; print m, r}'
}

# RANKS > 1: warpcsv runs as that many ranks of mpirun on this host, each of THREADS threads.
LAUNCH=()
if [ "${RANKS:-1}" -gt 1 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  LAUNCH=(mpirun -np "$RANKS" --bind-to none --oversubscribe)
fi
echo "bench: $FILE ($(awk "BEGIN{printf \"%.2f\", $BYTES/1e9}") GB, $ROWS rows), threads $THREADS, device $DEVICE, ranks ${RANKS:-1}, $REPS reps" >&2
printf '\n| query | warpcsv s | GB/s | warpcsv RSS MiB |'
[ -n "$DUCKQ" ] && printf ' DuckDB s | DuckDB RSS MiB | DuckDB / warpcsv |'
printf '\n| --- | --- | --- | --- |'
[ -n "$DUCKQ" ] && printf ' --- | --- | --- |'
printf '\n'
for q in $QUERIES; do
  p=$(pipeline_of "$q")
  f=$(file_of "$q")
  b=$(stat -L -c %s "$f")
  cat "$f" >/dev/null
  # A failing run must not be timed as a fast one.
  read -r -a o <<<"$(options_of "$q")"
  "${LAUNCH[@]}" "$WARPCSV" --device "$DEVICE" --threads "$THREADS" "${o[@]}" -q "$p" "$f" >/dev/null ||
    { echo "bench: warpcsv failed on $q" >&2; exit 1; }
  read -r wt wr < <(measure "${LAUNCH[@]}" "$WARPCSV" --device "$DEVICE" --threads "$THREADS" "${o[@]}" -q "$p" "$f")
  row=$(awk -v q="$q" -v t="$wt" -v r="$wr" -v b="$b" \
    'BEGIN{printf "| %s | %.3f | %.2f | %.0f |", q, t, (t>0?b/t/1e9:0), r/1024}')
  if [ -n "$DUCKQ" ]; then
    s="SET threads=$THREADS; $(sql_of "$q")"
    read -r dt dr < <(measure "$DUCKQ" "$s")
    row+=$(awk -v t="$dt" -v r="$dr" -v w="$wt" 'BEGIN{printf " %.3f | %.0f | %.2fx |", t, r/1024, (w>0?t/w:0)}')
  fi
  echo "$row"
done
