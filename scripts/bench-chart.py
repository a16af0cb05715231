#!/usr/bin/env python3
"""SVG bar chart of warpcsv vs DuckDB seconds per question, from scripts/bench.sh output.

Reads the markdown table(s) that scripts/bench.sh prints:

    | query | warpcsv s | GB/s | warpcsv RSS MiB | DuckDB s | DuckDB RSS MiB | DuckDB / warpcsv |

from FILE (or standard input) and writes one pair of bars per row (warpcsv, DuckDB), with the
ratio DuckDB / warpcsv above each pair. bench.sh's "bench: FILE (X GB, N rows), ..." line (on
stderr; keep it with 2>&1) before a table names its row count: when the tables have different
row counts, each question is labelled with its rows ("q1, 1e9 rows").
A table without DuckDB columns gives warpcsv's bars alone. Python 3 standard library only.

    scripts/bench.sh 2>&1 | tee bench.md
    scripts/bench-chart.py bench.md -o bench.svg --title "1 x H200 (16 cores), 2026-12-01"
"""
import argparse
import math
import re
import sys
from xml.sax.saxutils import escape

WARPCSV_COLOR = "#2b7bb9"
DUCKDB_COLOR = "#f0a030"


def rows_label(n):
    """100000000 -> '1e8'; other counts as they are."""
    if n > 0 and 10 ** round(math.log10(n)) == n:
        return "1e%d" % round(math.log10(n))
    return str(n)


def number(cell):
    """A cell's number ('0.440', '4.64x'), or None when it holds none."""
    m = re.match(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)", cell)
    return float(m.group(1)) if m else None


def parse(text):
    """[(query, rows or None, warpcsv seconds, DuckDB seconds or None)] from bench.sh output."""
    results = []
    rows = None
    header = None
    for line in text.splitlines():
        s = line.strip()
        m = re.match(r"^bench: .*\(([0-9.]+) GB, ([0-9]+) rows\)", s)
        if m:
            rows = int(m.group(2))
            continue
        if not s.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in s.strip("|").split("|")]
        if cells and cells[0].lower() == "query":
            header = [c.lower() for c in cells]
            continue
        if header is None or all(re.match(r"^:?-+:?$", c) for c in cells if c):
            continue
        col = dict(zip(header, cells))
        w = number(col.get("warpcsv s", ""))
        if w is None:
            continue
        d = number(col.get("duckdb s", "")) if "duckdb s" in col else None
        results.append((col["query"], rows, w, d))
    return results


def labels_of(results):
    """Question labels, each with its table's row count when the tables have several."""
    several = len({rows for _, rows, _, _ in results}) > 1
    return ["%s, %s rows" % (q, rows_label(rows)) if several and rows is not None else q
            for q, rows, _, _ in results]


def nice_step(top, ticks=5):
    """A step of 1, 2 or 5 times a power of ten giving about `ticks` ticks up to `top`."""
    raw = top / ticks
    p = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if m * p >= raw:
            return m * p
    return 10 * p


def fmt_seconds(v):
    return "%.2f" % v if v < 10 else "%.1f" % v


def fmt_tick(v):
    return ("%g" % round(v, 6))


def chart(results, title, subtitle):
    labels = labels_of(results)
    has_duck = any(d is not None for _, _, _, d in results)
    bar_w = 30
    gap = 6 if has_duck else 0
    group_w = (2 * bar_w + gap if has_duck else bar_w) + 44
    left, right, top, bottom = 78, 24, 84 if subtitle else 64, 70
    plot_h = 300
    # Room for the title lines too (about 9.5 and 6.8 pixels a character).
    width = int(max(left + right + group_w * len(results), 40 + 9.5 * len(title), 40 + 6.8 * len(subtitle), 420))
    height = top + plot_h + bottom
    vmax = max([w for _, _, w, _ in results] + [d for _, _, _, d in results if d is not None])
    step = nice_step(vmax * 1.12)
    ymax = step * math.ceil(vmax * 1.12 / step)

    def y(v):
        return top + plot_h - v / ymax * plot_h

    out = []
    add = out.append
    add('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
        'font-family="Helvetica, Arial, sans-serif" font-size="12">' % (width, height, width, height))
    add('<rect width="100%" height="100%" fill="white"/>')
    add('<text x="20" y="26" font-size="16" font-weight="bold">%s</text>' % escape(title))
    if subtitle:
        add('<text x="20" y="46" font-size="12" fill="#444">%s</text>' % escape(subtitle))
    # Legend, top right.
    lx = width - right - (190 if has_duck else 90)
    ly = top - 22
    add('<rect x="%d" y="%d" width="12" height="12" fill="%s"/>' % (lx, ly, WARPCSV_COLOR))
    add('<text x="%d" y="%d">warpcsv</text>' % (lx + 17, ly + 10))
    if has_duck:
        add('<rect x="%d" y="%d" width="12" height="12" fill="%s"/>' % (lx + 80, ly, DUCKDB_COLOR))
        add('<text x="%d" y="%d">DuckDB</text>' % (lx + 97, ly + 10))
    # Y axis: grid lines and ticks.
    v = 0.0
    while v <= ymax + step / 2:
        yy = y(v)
        add('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (left, yy, width - right, yy))
        add('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (left - 6, yy + 4, fmt_tick(v)))
        v += step
    add('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>' % (left, top, left, top + plot_h))
    add('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>' % (left, top + plot_h, width - right, top + plot_h))
    add('<text transform="translate(20,%d) rotate(-90)" text-anchor="middle">'
        'seconds, whole process (lower is better)</text>' % (top + plot_h // 2))
    add('<text x="%d" y="%d" text-anchor="middle">question</text>'
        % ((left + width - right) // 2, height - 14))
    # Bars.
    for i, ((q, _, w, d), label) in enumerate(zip(results, labels)):
        x0 = left + (width - right - left - group_w * len(results)) // 2 + 22 + i * group_w
        bars = [(w, WARPCSV_COLOR)] + ([(d, DUCKDB_COLOR)] if has_duck and d is not None else [])
        for k, (val, color) in enumerate(bars):
            x = x0 + k * (bar_w + gap)
            add('<rect x="%d" y="%.1f" width="%d" height="%.1f" fill="%s"><title>%s: %s s</title></rect>'
                % (x, y(val), bar_w, top + plot_h - y(val), color, escape(label), fmt_seconds(val)))
            add('<text x="%d" y="%.1f" text-anchor="middle" font-size="10">%s</text>'
                % (x + bar_w // 2, y(val) - 4, fmt_seconds(val)))
        pair_w = len(bars) * bar_w + (len(bars) - 1) * gap
        cx = x0 + pair_w // 2
        if d is not None and w > 0:
            top_y = min(y(w), y(d)) - 20
            add('<text x="%d" y="%.1f" text-anchor="middle" font-weight="bold">%.1fx</text>' % (cx, top_y, d / w))
        add('<text x="%d" y="%d" text-anchor="middle">%s</text>' % (cx, top + plot_h + 18, escape(label)))
    add('</svg>')
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", nargs="?", help="bench.sh output (default: standard input)")
    ap.add_argument("-o", "--output", help="SVG file to write (default: standard output)")
    ap.add_argument("--title", default="warpcsv vs DuckDB",
                    help="title line, e.g. the machine and the date")
    ap.add_argument("--subtitle", default="", help="a second, smaller line (the command, the table)")
    args = ap.parse_args()
    text = open(args.file, encoding="utf-8").read() if args.file else sys.stdin.read()
    results = parse(text)
    if not results:
        sys.exit("bench-chart: no bench.sh table (| query | warpcsv s | ...) in the input")
    svg = chart(results, args.title, args.subtitle)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(svg)
    else:
        sys.stdout.write(svg)


if __name__ == "__main__":
    main()
