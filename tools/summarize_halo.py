#!/usr/bin/env python3
"""Summarizes bench_halo JSON: per axis, face and depth, the exchange time of the raw twin and of
cush, their ratio (raw time / cush time; > 1: cush faster) and cush's GB/s.

usage: summarize_halo.py halo.json [more.json ...] > halo.md
"""
import json
import statistics
import sys
from collections import defaultdict


def load(paths):
    rows = defaultdict(list)  # (impl, axis, face, depth) -> [(us, GB/s)]
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        for b in data["benchmarks"]:
            if b.get("run_type") == "aggregate" or not b["name"].startswith("halo/"):
                continue
            _, impl, axis, face, depth = b["name"].split("/")[:5]
            rows[(impl, axis, int(face), depth)].append((b["exch_us"], b["GB/s"], b["message_bytes"]))
    return rows


def main(paths):
    rows = load(paths)
    keys = sorted({(a, f, d) for (_, a, f, d) in rows})
    print("| axis | face | depth | message MiB | raw µs | cush µs | raw / cush | cush GB/s |")
    print("|---|---|---|---|---|---|---|---|")
    for axis, face, depth in keys:
        raw = rows.get(("raw", axis, face, depth))
        cush = rows.get(("cush", axis, face, depth))
        if not raw or not cush:
            continue
        r = statistics.median(x[0] for x in raw)
        c = statistics.median(x[0] for x in cush)
        gbs = statistics.median(x[1] for x in cush)
        mib = cush[0][2] / 2**20
        print(f"| {axis} | {face} | {depth} | {mib:.2f} | {r:.1f} | {c:.1f} | {r / c:.3f} | {gbs:.1f} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
