#!/usr/bin/env bash
# Command-line tests: run_cli_tests.sh BINARY CASES_DIR [NAME...]
#
# Each case is a directory CASES_DIR/NAME/ holding
#   cmd              one bash line; $WARPCSV is the binary, $DATA the shared data dir
#                    (CASES_DIR/../data), $TMP a fresh scratch dir; it runs in the case dir
#   stdout           exact expected stdout (optional: absent means not checked)
#   stderr           exact expected stderr (optional; an empty file means "no message")
#   stderr_contains  lines that must each appear somewhere in stderr (optional)
#   exit             expected exit code (optional, default 0)
#   skip_if          a bash condition; when it holds the case is skipped (optional)
# Prints PASS/FAIL/SKIP per case with a diff, then "N passed, N failed".
set -u

if [ $# -lt 2 ]; then
  echo "usage: $0 BINARY CASES_DIR [NAME...]" >&2
  exit 2
fi
WARPCSV=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
CASES=$(cd "$2" && pwd)
DATA=$(cd "$CASES/../data" && pwd)
shift 2
export WARPCSV DATA
# Cases compare text (ls, sort): the same collation on every machine.
export LC_ALL=C

if [ ! -x "$WARPCSV" ]; then
  echo "run_cli_tests: binary '$WARPCSV' not found or not executable; build it first" >&2
  exit 2
fi

if [ $# -gt 0 ]; then names=("$@"); else
  names=()
  for d in "$CASES"/*/; do names+=("$(basename "$d")"); done
fi

passed=0
failed=0
skipped=0
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

for name in "${names[@]}"; do
  dir="$CASES/$name"
  if [ ! -f "$dir/cmd" ]; then
    echo "FAIL $name: no cmd file in $dir"
    failed=$((failed + 1))
    continue
  fi
  if [ -f "$dir/skip_if" ] && (cd "$dir" && bash -c "$(cat "$dir/skip_if")") >/dev/null 2>&1; then
    echo "SKIP $name ($(head -c 200 "$dir/skip_if"))"
    skipped=$((skipped + 1))
    continue
  fi
  TMP="$scratch/$name"
  mkdir -p "$TMP"
  export TMP
  (cd "$dir" && timeout 120 bash -c "$(cat "$dir/cmd")") >"$TMP/.out" 2>"$TMP/.err" </dev/null
  rc=$?
  want_rc=0
  [ -f "$dir/exit" ] && want_rc=$(tr -d ' \n' <"$dir/exit")
  problems=""
  if [ "$rc" != "$want_rc" ]; then
    problems+="  exit code: expected $want_rc, got $rc"$'\n'
  fi
  if [ -f "$dir/stdout" ] && ! cmp -s "$dir/stdout" "$TMP/.out"; then
    problems+="  stdout differs (--- expected, +++ actual):"$'\n'
    problems+="$(diff -u "$dir/stdout" "$TMP/.out" | tail -n +3 | head -40)"$'\n'
  fi
  if [ -f "$dir/stderr" ] && ! cmp -s "$dir/stderr" "$TMP/.err"; then
    problems+="  stderr differs (--- expected, +++ actual):"$'\n'
    problems+="$(diff -u "$dir/stderr" "$TMP/.err" | tail -n +3 | head -40)"$'\n'
  fi
  if [ -f "$dir/stderr_contains" ]; then
    while IFS= read -r line || [ -n "$line" ]; do
      [ -z "$line" ] && continue
      if ! grep -qF -- "$line" "$TMP/.err"; then
        problems+="  stderr lacks: $line"$'\n'
      fi
    done <"$dir/stderr_contains"
  fi
  if [ -z "$problems" ]; then
    echo "PASS $name"
    passed=$((passed + 1))
  else
    echo "FAIL $name"
    echo "  cmd: $(cat "$dir/cmd")"
    printf '%s' "$problems"
    if [ -s "$TMP/.err" ] && [ ! -f "$dir/stderr" ]; then
      echo "  stderr was:"
      head -20 "$TMP/.err" | sed 's/^/    /'
    fi
    failed=$((failed + 1))
  fi
done

[ "$skipped" -gt 0 ] && echo "$skipped skipped"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
