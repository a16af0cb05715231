#!/usr/bin/env bash
# Installs what is missing, builds warpcsv, and runs a few pipelines over the sample files in
# data/, printing each command and its result.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$ROOT/scripts/test.sh" --build-only
BUILD=${BUILD_DIR:-$ROOT/build}
if [ "${WARPCSV_SANITIZE:-0}" = "1" ]; then BUILD=${BUILD_DIR:-$ROOT/build-sanitize}; fi
WARPCSV="$BUILD/warpcsv"
cd "$ROOT"

# Prints the command as one would type it, then runs it.
run() {
  local shown="warpcsv" a
  for a in "$@"; do
    if [[ "$a" =~ ^[A-Za-z0-9_./=-]+$ ]]; then shown+=" $a"; else shown+=" '$a'"; fi
  done
  echo
  echo "\$ $shown"
  "$WARPCSV" "$@"
}

# Revenue per region, returns excluded, biggest first.
run -f table 'filter status != "returned" | groupby region | agg sum(amount) as revenue, count() as orders, mean(quantity) as avg_qty | sort revenue desc' \
  data/sales_sample.csv

# Temperature range per station, as a Markdown table for a report.
run -f markdown 'groupby station | agg min(temp_c) as coldest, max(temp_c) as warmest, count(precip_mm) as precip_readings, count() as days' \
  data/weather.csv

# Quoted names with commas, quotes and line breaks come back intact (JSON escapes them).
run -f ndjson 'filter contains(customer, ",") or contains(customer, "\"") | select order_id, customer, amount | limit 4' \
  data/sales_sample.csv

# A CI data check: exit code 0 when every row passes, 1 with the failing rows otherwise.
echo
echo "\$ warpcsv 'assert quantity > 0 and unit_price > 0' data/sales_sample.csv > /dev/null"
if "$WARPCSV" 'assert quantity > 0 and unit_price > 0' data/sales_sample.csv >/dev/null; then
  echo "check passed (exit 0)"
else
  echo "check failed (exit $?)"
fi
