#!/usr/bin/env bash
# Oracle check against DuckDB (not part of CI): builds warpcsv, fetches DuckDB into .peers/,
# generates the db-benchmark group-by table and the sales table with ../shared/datagen, runs
# the same questions on both, and prints a PASS/FAIL table. Strings and integers must match
# exactly, decimal sums exactly (DuckDB is made exact with ::DECIMAL casts), floats within a
# relative 1e-9. Exit status 1 when any question fails.
#
#   scripts/check-duckdb.sh [SEED] [ROWS]      defaults: SEED 1, ROWS 1000000
#
# Environment: K (groups of id1/id2/id4/id5, default 100), THREADS (default nproc), DEVICE
# (warpcsv --device, default auto), WARPCSV (a built binary: skips the build), BUILD_DIR
# (default build-duckcheck), DUCKQ (a duckq binary: skips the download), WORK (scratch
# directory, default a fresh one under /tmp, removed at the end unless KEEP=1), JOBS (build).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SHARED=${SHARED:-$ROOT/../shared}
SEED=${1:-1}
ROWS=$(python3 -c "print(int(float('${2:-${ROWS:-1000000}}')))")
K=${K:-100}
THREADS=${THREADS:-$(nproc)}
DEVICE=${DEVICE:-auto}
JOBS=${JOBS:-2}

# --- warpcsv ------------------------------------------------------------------------------
if [ -z "${WARPCSV:-}" ]; then
  BUILD=${BUILD_DIR:-$ROOT/build-duckcheck}
  echo "check-duckdb: building warpcsv in $BUILD" >&2
  cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DWARPCSV_TESTS=OFF >/dev/null
  cmake --build "$BUILD" -j "$JOBS" --target warpcsv >/dev/null
  WARPCSV=$BUILD/warpcsv
fi

# --- DuckDB -------------------------------------------------------------------------------
if [ -z "${DUCKQ:-}" ]; then
  DUCKQ=$ROOT/.peers/duckq
  if [ ! -x "$DUCKQ" ]; then
    echo "check-duckdb: fetching DuckDB into $ROOT/.peers" >&2
    (cd "$ROOT" && bash "$SHARED/peers/get-duckdb.sh" .peers) >&2
  fi
fi

# --- data -----------------------------------------------------------------------------------
if [ -z "${WORK:-}" ]; then
  WORK=$(mktemp -d /tmp/warpcsv-duckcheck-XXXXXX)
  [ "${KEEP:-0}" = "1" ] || trap 'rm -rf "$WORK"' EXIT
fi
mkdir -p "$WORK"
cc -O2 -pthread -o "$WORK/gen_groupby" "$SHARED/datagen/gen_groupby.c"
cc -O2 -pthread -o "$WORK/gen_sales" "$SHARED/datagen/gen_sales.c"
cc -O2 -o "$WORK/gen_customers" "$ROOT/scripts/gen_customers.c"
G=$WORK/groupby.csv
S=$WORK/sales.csv
"$WORK/gen_groupby" "$ROWS" "$K" "$SEED" "$G" "$THREADS"
SALES_ROWS=$(( ROWS / 4 > 1000 ? ROWS / 4 : 1000 ))
"$WORK/gen_sales" "$SALES_ROWS" "$SEED" "$S" 5000 "$THREADS"
C=$WORK/customers.csv
"$WORK/gen_customers" 5000 "$SEED" "$C"
echo "check-duckdb: seed $SEED, $ROWS rows (K=$K), $SALES_ROWS sales rows, $THREADS threads, device $DEVICE" >&2

# --- questions --------------------------------------------------------------------------------
# name | file | sorted (1: rows may come in any order) | column kinds (k: key text,
# e: exact number, f: float) | warpcsv pipeline | DuckDB SQL (FROM t)
HAVING_MIN=$(( ROWS / K * 3 ))
QUESTIONS=$(cat <<EOF
q1|$G|1|ke|groupby id1 | agg sum(v1) as v1|SELECT id1, sum(v1) FROM t GROUP BY id1
q2|$G|1|kke|groupby id1, id2 | agg sum(v1) as v1|SELECT id1, id2, sum(v1) FROM t GROUP BY id1, id2
q3|$G|1|kef|groupby id3 | agg sum(v1) as v1, mean(v3) as v3|SELECT id3, sum(v1), avg(v3) FROM t GROUP BY id3
q4|$G|1|kfff|groupby id4 | agg mean(v1) as v1, mean(v2) as v2, mean(v3) as v3|SELECT id4, avg(v1), avg(v2), avg(v3) FROM t GROUP BY id4
q5|$G|1|keee|groupby id6 | agg sum(v1) as v1, sum(v2) as v2, sum(v3) as v3|SELECT id6, sum(v1), sum(v2), sum(v3::DECIMAL(18,6)) FROM t GROUP BY id6
q6|$G|1|kkff|groupby id4, id5 | agg median(v3) as median_v3, std(v3) as sd_v3|SELECT id4, id5, median(v3), stddev_samp(v3) FROM t GROUP BY id4, id5
distinct|$G|1|keff|groupby id1 | agg count_distinct(id2) as n2, quantile(v1, 0.9) as p90, median(id4) as m4|SELECT id1, count(DISTINCT id2), quantile_cont(v1, 0.9), median(id4) FROM t GROUP BY id1
q7|$G|1|ke|groupby id3 | agg max(v1) - min(v2) as range_v1_v2|SELECT id3, max(v1) - min(v2) FROM t GROUP BY id3
q9|$G|1|kkf|groupby id2, id4 | agg corr(v1, v2) * corr(v1, v2) as r2|SELECT id2, id4, power(corr(v1, v2), 2) FROM t GROUP BY id2, id4
q10|$G|1|kkkkkkee|groupby id1, id2, id3, id4, id5, id6 | agg sum(v3) as v3, count() as count|SELECT id1, id2, id3, id4, id5, id6, sum(v3::DECIMAL(18,6)), count(*) FROM t GROUP BY ALL
filter|$G|1|keef|filter v1 >= 3 and id4 <= 50 and id2 != "id001" | groupby id1 | agg count() as n, sum(v3) as v3, var(v2) as var_v2|SELECT id1, count(*), sum(v3::DECIMAL(18,6)), var_samp(v2) FROM t WHERE v1 >= 3 AND id4 <= 50 AND id2 <> 'id001' GROUP BY id1
having|$G|1|kef|groupby id1 | agg sum(v1) as v1, std(v3) as sd | filter v1 > $HAVING_MIN|SELECT id1, sum(v1), stddev_samp(v3) FROM t GROUP BY id1 HAVING sum(v1) > $HAVING_MIN
sortlimit|$G|0|kee|groupby id3 | agg sum(v3) as v3, count() as n | sort v3 desc, id3 | limit 10|SELECT id3, sum(v3::DECIMAL(18,6)) AS s, count(*) FROM t GROUP BY id3 ORDER BY s DESC, id3 LIMIT 10
sales_region|$S|1|keeef|groupby region | agg sum(sales_amount) as total, count() as n, count(discount) as nd, mean(quantity) as q|SELECT region, sum(sales_amount::DECIMAL(18,2)), count(*), count(discount), avg(quantity) FROM t GROUP BY region
sales_top|$S|0|kek|filter churned == false and discount is not null | groupby customer_id | agg sum(sales_amount) as total, max(name) as nm | sort total desc, customer_id | limit 20|SELECT customer_id, sum(sales_amount::DECIMAL(18,2)) AS s, max(name) FROM t WHERE NOT churned AND discount IS NOT NULL GROUP BY customer_id ORDER BY s DESC, customer_id LIMIT 20
sales_distinct|$S|1|keff|groupby region | agg count_distinct(customer_id) as customers, median(sales_amount) as med, quantile(quantity, 0.25) as q1|SELECT region, count(DISTINCT customer_id), median(sales_amount::DOUBLE), quantile_cont(quantity, 0.25) FROM t GROUP BY region
q8|$G|0|ke|filter v3 is not null | groupby id6 | top 2 by v3 desc | select id6, v3 as largest2_v3|SELECT id6, v3::DECIMAL(18,6) FROM (SELECT id6, v3, row_number() OVER (PARTITION BY id6 ORDER BY v3 DESC) AS rn FROM t WHERE v3 IS NOT NULL) WHERE rn <= 2 ORDER BY id6, v3 DESC
distinct_rows|$G|0|kk|distinct id4, id5 | sort id4, id5|SELECT DISTINCT id4, id5 FROM t ORDER BY id4, id5
cast_keys|$G|1|kee|groupby try_cast(substr(id3, 3) as int) % 7 as b | agg count() as n, sum(v1) as v1|SELECT TRY_CAST(substr(id3, 3) AS INTEGER) % 7, count(*), sum(v1) FROM t GROUP BY ALL
sales_month|$S|1|kkee|groupby strftime(ts, "%Y-%m") as month, region | agg sum(sales_amount) as total, count() as n|SELECT strftime(ts, '%Y-%m'), region, sum(sales_amount::DECIMAL(18,2)), count(*) FROM t GROUP BY ALL
sales_week_hour|$S|1|kkef|groupby dow(ts) as dow, hour(ts) as h | agg count() as n, mean(quantity) as q|SELECT dayofweek(ts), hour(ts), count(*), avg(quantity) FROM t GROUP BY ALL
sales_trunc|$S|1|kee|groupby date(date_trunc("week", ts)) as wk | agg count() as n, count_if(churned) as churned|SELECT date_trunc('week', ts)::DATE, count(*), count_if(churned) FROM t GROUP BY ALL
sales_case|$S|1|kee|groupby case when sales_amount > 1000 then "big" when sales_amount > 0 then "small" else "refund" end as bucket | agg count() as n, sum(sales_amount) as total|SELECT CASE WHEN sales_amount > 1000 THEN 'big' WHEN sales_amount > 0 THEN 'small' ELSE 'refund' END, count(*), sum(sales_amount::DECIMAL(18,2)) FROM t GROUP BY ALL
sales_strings|$S|1|ke|filter name like "%an%" and starts_with(customer_id, "C00") and datediff("month", cast("2024-12-31" as timestamp), ts) between 2 and 8 | groupby upper(substr(name, 1, 3)) || "-" || replace(region, "U", "u") as k | agg count() as n|SELECT concat(upper(substr(name, 1, 3)), '-', replace(region, 'U', 'u')), count(*) FROM t WHERE name LIKE '%an%' AND starts_with(customer_id, 'C00') AND date_diff('month', TIMESTAMP '2024-12-31', ts) BETWEEN 2 AND 8 GROUP BY ALL
sales_select|$S|0|kkke|filter quantity == 20 and region == "EU" | select txn_id, customer_id, name, sales_amount|SELECT txn_id, customer_id, name, sales_amount::DECIMAL(18,2) FROM t WHERE quantity = 20 AND region = 'EU' ORDER BY txn_id
sales_join_segment|$S|1|kee|join '$C' on customer_id | groupby segment | agg sum(sales_amount) as total, count() as n|SELECT segment, sum(sales_amount::DECIMAL(18,2)), count(*) FROM t JOIN read_csv('$C') c USING (customer_id) GROUP BY segment
sales_join_month|$S|1|kke|join '$C' on customer_id | groupby strftime(ts, "%Y-%m") as month, country | agg sum(sales_amount) as revenue|SELECT strftime(ts, '%Y-%m'), country, sum(sales_amount::DECIMAL(18,2)) FROM t JOIN read_csv('$C') c USING (customer_id) GROUP BY ALL
sales_left_join|$S|1|kee|left join '$C' on customer_id | filter segment is null | groupby region | agg count() as n, count_distinct(customer_id) as customers|SELECT region, count(*), count(DISTINCT customer_id) FROM t LEFT JOIN read_csv('$C') c USING (customer_id) WHERE segment IS NULL GROUP BY region
sales_join_after|$S|0|kek|groupby customer_id | agg sum(sales_amount) as total | join '$C' on customer_id | sort total desc, customer_id, segment | limit 20 | select customer_id, total, segment|SELECT customer_id, total, segment FROM (SELECT customer_id, sum(sales_amount::DECIMAL(18,2)) AS total FROM t GROUP BY customer_id) JOIN read_csv('$C') c USING (customer_id) ORDER BY total DESC, customer_id, segment LIMIT 20
nested|$G|1|kef|groupby id1, id2 | agg sum(v1) as s | groupby id1 | agg max(s) as top, mean(s) as avg_s|SELECT id1, max(s), avg(s) FROM (SELECT id1, id2, sum(v1) AS s FROM t GROUP BY id1, id2) GROUP BY id1
sales_nested|$S|1|keeef|groupby customer_id, region | agg sum(sales_amount) as total | filter total > 0 | groupby region | agg count() as customers, count_distinct(customer_id) as cd, sum(total) as revenue, median(total) as med|SELECT region, count(*), count(DISTINCT customer_id), sum(total), median(total::DOUBLE) FROM (SELECT customer_id, region, sum(sales_amount::DECIMAL(18,2)) AS total FROM t GROUP BY ALL HAVING sum(sales_amount::DECIMAL(18,2)) > 0) GROUP BY region
EOF
)

compare() {  # compare WARP_OUT DUCK_OUT SORTED KINDS -> prints "PASS ..." or "FAIL: reason"
  python3 - "$@" <<'PY'
import csv, sys
from decimal import Decimal, InvalidOperation
warp, duck, sort_rows, kinds = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4]
def rows(path):
    with open(path, newline='') as f:
        return list(csv.reader(f))[1:]
w, d = rows(warp), rows(duck)
keys = [i for i, k in enumerate(kinds) if k == 'k']
if sort_rows:
    w.sort(key=lambda r: [r[i] for i in keys]); d.sort(key=lambda r: [r[i] for i in keys])
if len(w) != len(d):
    print(f"FAIL: {len(w)} rows vs DuckDB {len(d)}"); sys.exit()
def dec(s):
    try: return Decimal(s)
    except InvalidOperation: return None
worst = 0.0
for i, (a, b) in enumerate(zip(w, d)):
    if len(a) != len(kinds) or len(b) != len(kinds):
        print(f"FAIL: row {i}: {len(a)} fields vs DuckDB {len(b)}, expected {len(kinds)}"); sys.exit()
    for j, (x, y, kind) in enumerate(zip(a, b, kinds)):
        if x == y: continue
        if kind == 'k' or x == '' or y == '':
            bad = True
        elif kind == 'e':  # exact: the same number, whatever the trailing zeros
            bad = dec(x) is None or dec(x) != dec(y)
        else:
            fx, fy = float(x), float(y)
            rel = abs(fx - fy) / max(abs(fx), abs(fy), 1e-300)
            if max(abs(fx), abs(fy)) > 1e-6:  # relative error of values near zero means little
                worst = max(worst, rel)
            bad = rel > 1e-9 and abs(fx - fy) > 1e-12
        if bad:
            print(f"FAIL: row {i} key {[a[k] for k in keys]} column {j + 1}: warpcsv {x!r} vs DuckDB {y!r}")
            sys.exit()
print(f"PASS ({len(w)} rows, worst float rel diff {worst:.1e})")
PY
}

printf '\n| question | warpcsv s | DuckDB s | result |\n| --- | --- | --- | --- |\n'
fail=0
while IFS='|' read -r name file sorted kinds rest; do
  [ -z "$name" ] && continue
  # The pipeline itself holds '|': the SQL is the last field.
  sql=${rest##*|}
  pipeline=${rest%|*}
  wout=$WORK/$name.warpcsv.csv
  dout=$WORK/$name.duckdb.csv
  t0=$(date +%s.%N)
  rc=0
  "$WARPCSV" --device "$DEVICE" --threads "$THREADS" -q "$pipeline" "$file" >"$wout" 2>"$wout.err" || rc=$?
  if [ "$rc" != 0 ]; then
    printf '| %s | - | - | FAIL: warpcsv exit %s: %s |\n' "$name" "$rc" "$(head -c 200 "$wout.err" | tr '\n' ' ')"
    fail=1
    continue
  fi
  t1=$(date +%s.%N)
  src="read_csv('$file')"
  sql=${sql//FROM t /FROM $src }
  if ! "$DUCKQ" "SET threads=$THREADS; $sql" >"$dout" 2>"$dout.err"; then
    printf '| %s | - | - | FAIL: DuckDB: %s |\n' "$name" "$(head -c 200 "$dout.err" | tr '\n' ' ')"
    fail=1
    continue
  fi
  t2=$(date +%s.%N)
  result=$(compare "$wout" "$dout" "$sorted" "$kinds")
  [[ $result == PASS* ]] || fail=1
  printf '| %s | %s | %s | %s |\n' "$name" "$(awk "BEGIN{printf \"%.2f\", $t1 - $t0}")" \
    "$(awk "BEGIN{printf \"%.2f\", $t2 - $t1}")" "$result"
done <<<"$QUESTIONS"

# Where DuckDB's DOUBLE sum of the sales amounts differs from the exact decimal sum.
echo
echo "sales_amount sum: exact decimal vs DuckDB DOUBLE"
"$WARPCSV" --device "$DEVICE" -q 'agg sum(sales_amount) as exact' "$S" | tail -n 1 | sed 's/^/  warpcsv exact:            /'
"$DUCKQ" "SELECT sum(sales_amount::DECIMAL(18,2)) FROM read_csv('$S')" | tail -n 1 | sed 's/^/  DuckDB DECIMAL(18,2) sum: /'
"$DUCKQ" "SELECT sum(sales_amount::DOUBLE) FROM read_csv('$S')" | tail -n 1 | sed 's/^/  DuckDB DOUBLE sum:        /'
"$DUCKQ" "SELECT sum(sales_amount::DOUBLE) - sum(sales_amount::DECIMAL(18,2))::DOUBLE FROM read_csv('$S')" |
  tail -n 1 | sed 's/^/  DOUBLE - exact:           /'

if [ "$fail" = 0 ]; then echo "check-duckdb: all PASS"; else echo "check-duckdb: FAIL"; fi
exit "$fail"
