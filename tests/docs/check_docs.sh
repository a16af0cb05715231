#!/usr/bin/env bash
# The documents agree with the binary: check_docs.sh BINARY SHARE_DIR README.md
#
# - --help, the man page (SHARE_DIR/man/man1/warpcsv.1) and README.md's option table name the
#   same options: long names, short names and value names. A README value written as the list of
#   choices (`--bad-rows fail\|skip`) stands for --help's value name (MODE) when the completion
#   offers exactly those choices.
# - The bash completion (SHARE_DIR/bash-completion/completions/warpcsv) completes option names,
#   --device, -f and the other values; the zsh one (SHARE_DIR/zsh/site-functions/_warpcsv)
#   parses (zsh -n) when zsh is installed.
# All three documents are written from src/cli/option_table.cpp except README.md, by hand.
set -u

if [ $# -ne 3 ]; then
  echo "usage: $0 BINARY SHARE_DIR README.md" >&2
  exit 2
fi
BIN=$1
SHARE=$2
README=$3
MAN=$SHARE/man/man1/warpcsv.1
BASH_COMPLETION=$SHARE/bash-completion/completions/warpcsv
ZSH_COMPLETION=$SHARE/zsh/site-functions/_warpcsv
for f in "$BIN" "$MAN" "$BASH_COMPLETION" "$ZSH_COMPLETION" "$README"; do
  if [ ! -f "$f" ]; then
    echo "check_docs: $f is missing; build first (cmake --build BUILD)" >&2
    exit 2
  fi
done

failed=0
fail() {
  echo "FAIL $*"
  failed=1
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# "-d, --delimiter C" / "--progress, --no-progress" -> "delimiter d C" / "progress - -" lines, sorted.
normalize() {
  awk '{
    n = split($0, parts, /, /)
    short = "-"
    for (i = 1; i <= n; i++) {
      p = parts[i]
      if (p ~ /^--[a-z]/) {
        sp = index(p, " ")
        if (sp) { name = substr(p, 3, sp - 3); value = substr(p, sp + 1) }
        else { name = substr(p, 3); value = "-" }
        print name, short, value
        short = "-"
      } else if (p ~ /^-[A-Za-z]$/) {
        short = substr(p, 2)
      } else {
        print "cannot-read:" p
      }
    }
  }' | LC_ALL=C sort
}

# --help: the lines "  -d, --delimiter C     text" and "      --names a,b,...   text".
"$BIN" --help >"$tmp/help.txt" || fail "$BIN --help exits $?"
grep -E '^(  -[A-Za-z], |      )--[a-z]' "$tmp/help.txt" | sed -E 's/^ +//; s/  .*$//' |
  normalize >"$tmp/help"

# The man page: the tag line after each .TP of the OPTIONS section, roff removed.
awk '/^\.SH /{ section = $0 } section == ".SH OPTIONS" && prev == ".TP" { print } { prev = $0 }' "$MAN" |
  sed -E 's/\\f[BIR]//g; s/\\-/-/g; s/\\e/\\/g' | normalize >"$tmp/man"

# README.md: the first cell of each row of the table under "| option | meaning |".
awk '/^\| option \| meaning \|/ { table = 1; next }
     table && /^\| ---/ { next }
     table && /^\| `/ { print; next }
     table { table = 0 }' "$README" |
  sed -E 's/\\\|/\x01/g; s/^\| //; s/ \| .*$//' | tr -d '`' | tr '\001' '|' | normalize >"$tmp/readme"

[ -s "$tmp/help" ] || fail "no options found in --help"
[ -s "$tmp/readme" ] || fail "no option table found in $README (a '| option | meaning |' table)"

# The words the bash completion offers for a command line whose last word is being completed.
complete_words() {
  bash --norc --noprofile -c '
    source "$1" || exit 3
    shift
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    COMP_LINE="$*"
    COMP_POINT=${#COMP_LINE}
    _warpcsv 2>/dev/null
    printf "%s\n" "${COMPREPLY[@]}"' _ "$BASH_COMPLETION" "$@" | LC_ALL=C sort | tr '\n' ' ' |
    sed 's/ $//'
}

# README's choice lists (fail|skip) stand for --help's value name when they are the choices.
while read -r name short value; do
  case $value in
    *'|'*)
      help_value=$(awk -v n="$name" '$1 == n { print $3 }' "$tmp/help")
      want=$(printf '%s\n' "${value//|/$'\n'}" | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')
      got=$(complete_words warpcsv "--$name" "")
      if [ -n "$help_value" ] && [ "$got" = "$want" ]; then value=$help_value; fi
      ;;
  esac
  echo "$name $short $value"
done <"$tmp/readme" | LC_ALL=C sort >"$tmp/readme.values"

if ! diff -u "$tmp/help" "$tmp/man" >"$tmp/diff"; then
  fail "--help and the man page ($MAN) name different options (--- help, +++ man; name short value):"
  tail -n +3 "$tmp/diff"
fi
if ! diff -u "$tmp/help" "$tmp/readme.values" >"$tmp/diff"; then
  fail "--help and README.md's option table name different options (--- help, +++ README; name short value):"
  tail -n +3 "$tmp/diff"
fi

# Bash completion.
expect_completion() {
  local want=$1
  shift
  local got
  got=$(complete_words "$@")
  if [ "$got" != "$want" ]; then
    fail "bash completion of '$*': expected '$want', got '$got'"
  fi
}
expect_completion "auto cpu gpu" warpcsv --device ""
expect_completion "cpu" warpcsv --device c
expect_completion "auto cpu gpu" warpcsv --device = ""
expect_completion "auto cpu gpu" warpcsv --device =
expect_completion "csv json markdown ndjson table tsv" warpcsv -f ""
expect_completion "csv json markdown ndjson table tsv" warpcsv --format ""
expect_completion "json" warpcsv -q -f js
expect_completion "fail pad skip" warpcsv --bad-rows ""
expect_completion ", \\; \\| auto tab" warpcsv -d ""
expect_completion "--delimiter --device" warpcsv --de
expect_completion "--names --no-header --no-output-header --no-progress --null" warpcsv --n
expect_completion "--trace" warpcsv --tr
expect_completion "" warpcsv --skip ""
expect_completion "filter" warpcsv fil
expect_completion "agg assert distinct dropna filter groupby join limit select sort top" warpcsv ""
expect_completion "" warpcsv "'filter x > 1 | gr"
mkdir -p "$tmp/files" && touch "$tmp/files/sales.csv"
expect_completion "$tmp/files/sales.csv" warpcsv -o "$tmp/files/sa"
expect_completion "$tmp/files/sales.csv" warpcsv --trace "$tmp/files/sa"
expect_completion "$tmp/files/sales.csv" warpcsv -q "select a" "$tmp/files/sa"
expect_completion "$tmp/files/sales.csv" warpcsv --device gpu "select a" "$tmp/files/sa"

# zsh completion: it must at least parse.
if command -v zsh >/dev/null; then
  zsh -n "$ZSH_COMPLETION" || fail "zsh -n $ZSH_COMPLETION"
  head -1 "$ZSH_COMPLETION" | grep -qx '#compdef warpcsv' || fail "$ZSH_COMPLETION does not start with #compdef warpcsv"
else
  echo "SKIP zsh -n (zsh is not installed)"
fi

# The man page: groff reads it without a warning, when groff is installed.
if command -v groff >/dev/null; then
  warnings=$(groff -man -Tutf8 -ww -z "$MAN" 2>&1)
  [ -z "$warnings" ] || fail "groff warns about $MAN: $warnings"
fi

if [ "$failed" -eq 0 ]; then
  echo "PASS: --help, $MAN and README.md name the same $(wc -l <"$tmp/help") options; completions work"
fi
exit "$failed"
