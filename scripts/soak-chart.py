#!/usr/bin/env python3
"""Draws scripts/soak.sh's rss.csv as one SVG line chart: resident memory (MiB) of fire, reduce
and simserve against the minutes since the start. Standard library only, so that `make soak`
needs nothing installed.

    soak-chart.py rss.csv > rss.svg
"""
import csv
import math
import sys

W, H = 860, 420
LEFT, RIGHT, TOP, BOTTOM = 70, 150, 40, 50
SERIES = [("fire_kib", "fire", "#1f77b4"), ("reduce_kib", "reduce", "#d62728"),
          ("simserve_kib", "simserve", "#7f7f7f")]


def nice_step(span, ticks=6):
    """A round tick step (1, 2 or 5 times a power of ten) giving about `ticks` ticks."""
    raw = span / ticks if span > 0 else 1
    power = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5):
        if raw <= m * power:
            return m * power
    return 10 * power


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    points = {key: [(int(r["elapsed_s"]) / 60, int(r[key]) / 1024) for r in rows if r.get(key)]
              for key, _, _ in SERIES}
    xs = [x for pts in points.values() for x, _ in pts] or [0, 1]
    ys = [y for pts in points.values() for _, y in pts] or [0, 1]
    x_max = max(max(xs), 1 / 6)
    y_step = nice_step(max(ys))
    y_max = y_step * (int(max(ys) / y_step) + 1)
    x_step = nice_step(x_max)
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def sx(x):
        return LEFT + pw * x / x_max

    def sy(y):
        return TOP + ph * (1 - y / y_max)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2}" y="22" text-anchor="middle" font-size="15">'
           f'Resident memory during the soak (MiB)</text>']
    y = 0.0
    while y <= y_max + 1e-9:
        out.append(f'<line x1="{LEFT}" x2="{LEFT + pw}" y1="{sy(y):.1f}" y2="{sy(y):.1f}" stroke="#e5e5e5"/>')
        out.append(f'<text x="{LEFT - 8}" y="{sy(y) + 4:.1f}" text-anchor="end">{y:g}</text>')
        y += y_step
    x = 0.0
    while x <= x_max + 1e-9:
        out.append(f'<line x1="{sx(x):.1f}" x2="{sx(x):.1f}" y1="{TOP + ph}" y2="{TOP + ph + 5}" stroke="black"/>')
        out.append(f'<text x="{sx(x):.1f}" y="{TOP + ph + 18}" text-anchor="middle">{x:g}</text>')
        x += x_step
    out.append(f'<line x1="{LEFT}" x2="{LEFT + pw}" y1="{TOP + ph}" y2="{TOP + ph}" stroke="black"/>')
    out.append(f'<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{TOP + ph}" stroke="black"/>')
    out.append(f'<text x="{LEFT + pw / 2}" y="{H - 10}" text-anchor="middle">minutes since the start</text>')
    out.append(f'<text transform="translate(18 {TOP + ph / 2}) rotate(-90)" text-anchor="middle">MiB resident</text>')
    for i, (key, name, colour) in enumerate(SERIES):
        pts = points[key]
        if pts:
            path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts)
            out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        ly = TOP + 10 + 22 * i
        out.append(f'<line x1="{LEFT + pw + 15}" x2="{LEFT + pw + 40}" y1="{ly}" y2="{ly}" stroke="{colour}" stroke-width="3"/>')
        out.append(f'<text x="{LEFT + pw + 46}" y="{ly + 4}">{name}</text>')
    out.append("</svg>")
    print("\n".join(out))


if __name__ == "__main__":
    main()
