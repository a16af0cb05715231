#!/usr/bin/env bash
# Everyday questions over the sales table beside DuckDB, one run each: whole-process seconds and
# peak RSS of both, and the row counts of both outputs (which must match). Finds the questions
# far behind that the benchmark's set does not ask.
#   SALES=FILE CUSTOMERS=FILE [WARPCSV=build/warpcsv] [DUCKQ=.peers/duckq] [DEVICE=cpu] tools/lab/everyday-questions.sh
# (scripts/gen_sales.c makes both files; DuckDB from ../shared/peers/get-duckdb.sh).
set -uo pipefail
: "${SALES:?SALES=the sales CSV}" "${CUSTOMERS:?CUSTOMERS=the customers CSV}"
WARPCSV=${WARPCSV:-build/warpcsv}
DUCKQ=${DUCKQ:-.peers/duckq}
DEVICE=${DEVICE:-cpu}
export LD_LIBRARY_PATH=$(dirname "$DUCKQ")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
t="read_csv('$SALES')"
# name, pipeline, SQL (tab-separated)
questions() {
  cat <<Q
region_sum	groupby region | agg sum(sales_amount) as s, count() as n	SELECT region, sum(sales_amount) s, count(*) n FROM $t GROUP BY region ORDER BY region
filter_str	filter region == "US" and quantity > 10 | agg count() as n, sum(sales_amount) as s	SELECT count(*) n, sum(sales_amount) s FROM $t WHERE region = 'US' AND quantity > 10
name_groups	groupby name | agg count() as n, max(sales_amount) as m	SELECT name, count(*) n, max(sales_amount) m FROM $t GROUP BY name ORDER BY name
top_rows	sort sales_amount desc | limit 10	SELECT * FROM $t ORDER BY sales_amount DESC LIMIT 10
top_cust	groupby customer_id | agg sum(sales_amount) as s | sort s desc | limit 10	SELECT customer_id, sum(sales_amount) s FROM $t GROUP BY customer_id ORDER BY s DESC LIMIT 10
day_count	groupby strftime(ts, "%Y-%m-%d") as day | agg count() as n, mean(discount) as d	SELECT strftime(ts, '%Y-%m-%d') AS day, count(*) n, avg(discount) d FROM $t GROUP BY day ORDER BY day
filter_rows	filter sales_amount > 4900 | select txn_id, customer_id, sales_amount	SELECT txn_id, customer_id, sales_amount FROM $t WHERE sales_amount > 4900
leftjoin_seg	left join "$CUSTOMERS" on customer_id | groupby segment | agg sum(sales_amount) as s, count() as n	SELECT segment, sum(sales_amount) s, count(*) n FROM $t LEFT JOIN read_csv('$CUSTOMERS') USING (customer_id) GROUP BY segment ORDER BY segment
full_sort	sort customer_id, txn_id | select txn_id, customer_id, sales_amount	SELECT txn_id, customer_id, sales_amount FROM $t ORDER BY customer_id, txn_id
select_expr	select txn_id, sales_amount * quantity as gross, upper(region) as r	SELECT txn_id, sales_amount * quantity AS gross, upper(region) AS r FROM $t
cust_cd	groupby customer_id | agg count_distinct(region) as r, count() as n	SELECT customer_id, count(DISTINCT region) r, count(*) n FROM $t GROUP BY customer_id ORDER BY customer_id
median_reg	groupby region, churned | agg median(sales_amount) as m, quantile(quantity, 0.25) as q	SELECT region, churned, median(sales_amount) m, quantile_cont(quantity, 0.25) q FROM $t GROUP BY region, churned ORDER BY region, churned
top_per_region	groupby region | top 3 by sales_amount desc | select region, txn_id, sales_amount	SELECT region, txn_id, sales_amount FROM (SELECT region, txn_id, sales_amount, row_number() OVER (PARTITION BY region ORDER BY sales_amount DESC) rn FROM $t) WHERE rn <= 3 ORDER BY region, sales_amount DESC
cust_minmax	groupby customer_id | agg min(ts) as first, max(ts) as last, count() as n	SELECT customer_id, min(ts) AS f, max(ts) AS l, count(*) n FROM $t GROUP BY customer_id ORDER BY customer_id
distinct_cust	distinct customer_id	SELECT DISTINCT customer_id FROM $t
Q
}
printf '| question | warpcsv s | warpcsv RSS MB | DuckDB s | DuckDB RSS MB | rows (warpcsv, DuckDB) |\n| --- | --- | --- | --- | --- | --- |\n'
while IFS=$'\t' read -r name pipeline sql; do
  /usr/bin/time -o "$tmp/w" -f "%e %M" "$WARPCSV" --device "$DEVICE" "$pipeline" "$SALES" >"$tmp/w.out" 2>"$tmp/w.err"
  /usr/bin/time -o "$tmp/d" -f "%e %M" "$DUCKQ" "$sql" >"$tmp/d.out" 2>"$tmp/d.err"
  read -r ws wk < <(tail -1 "$tmp/w")
  read -r ds dk < <(tail -1 "$tmp/d")
  echo "| $name | $ws | $((wk / 1024)) | $ds | $((dk / 1024)) | $(wc -l <"$tmp/w.out"), $(wc -l <"$tmp/d.out") |"
done < <(questions)
