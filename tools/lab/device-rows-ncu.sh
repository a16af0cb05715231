#!/usr/bin/env bash
# The row kernel under ncu, in full with its source, on one batch of each narrow-row file in
# NCU_FILES (made by scripts/bench.sh or gen_stations.c), with build-gpu/warpcsv (built with
# -lineinfo) and the environment in NCU_ENV (e.g. "WARPCSV_X=0"). Each file's report text and
# per-instruction samples go to $OUT/rows-ncu-N.tar.xz.
set -u
OUT=${OUT:-/tmp/device-out}
W=${W:-build-gpu/warpcsv}
mkdir -p "$OUT"
i=0
for f in ${NCU_FILES:?}; do
  i=$((i + 1))
  N=/tmp/rows-ncu-$i
  mkdir -p "$N"
  echo "### ncu, k_rows, $f ${NCU_ENV:-}"
  env ${NCU_ENV:-} timeout 200 ncu --clock-control none --kernel-name regex:k_rows --launch-skip 4 --launch-count 1 \
    --set full --import-source yes -o "$N/rows" "$W" --device gpu -d ';' --no-header --names station,temp \
    'groupby station | agg min(temp) as lo, round(mean(temp), 1) as mean, max(temp) as hi' "$f" >/dev/null 2>"$N/ncu.log"
  ncu -i "$N/rows.ncu-rep" --page details >"$N/details.txt" 2>&1
  ncu -i "$N/rows.ncu-rep" --page source --csv --print-source cuda,sass >"$N/source.csv" 2>&1
  grep -E "Duration|Executed Instructions  |Local Memory Spilling Requests  |Warp Cycles Per Issued" "$N/details.txt"
  rm -f "$N/rows.ncu-rep"
  XZ_OPT="-T0 -6" tar cJf "$OUT/rows-ncu-$i.tar.xz" -C "$N" .
done
