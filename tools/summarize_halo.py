#!/usr/bin/env python3
"""Summarizes bench_halo JSON: per axis, face and depth, the exchange time of the raw twin and of
cush's variants (exchange(), exchange_start/finish, staged transport), the ratio raw time / cush
time (> 1: cush faster), cush's GB/s (both messages) and that as a share of the plain peer copy
of the same bytes both ways measured in the same run.

usage: summarize_halo.py halo.json [more.json ...] > halo.md
"""
import json
import statistics
import sys
from collections import defaultdict


def load(paths):
    rows = defaultdict(list)  # (impl, axis, face, depth) -> [(us, GB/s, message bytes)]
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        for b in data["benchmarks"]:
            if b.get("run_type") == "aggregate" or not b["name"].startswith("halo/"):
                continue
            _, impl, axis, face, depth = b["name"].split("/")[:5]
            rows[(impl, axis, int(face), depth)].append((b["exch_us"], b["GB/s"], b["message_bytes"]))
    return rows


def med(rows, key, i=0):
    r = rows.get(key)
    return statistics.median(x[i] for x in r) if r else None


def fmt(v, spec):
    return "–" if v is None else format(v, spec)


def main(paths):
    rows = load(paths)
    keys = sorted({(a, f, d) for (_, a, f, d) in rows})
    print("| axis | face | depth | message MiB | peer µs | raw µs | cush µs | async µs | staged µs "
          "| raw / cush | raw / async | cush GB/s | cush / peer bw |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for axis, face, depth in keys:
        k = lambda impl: (impl, axis, face, depth)
        raw, cush = med(rows, k("raw")), med(rows, k("cush"))
        if raw is None or cush is None:
            continue
        peer, async_, staged = med(rows, k("peer")), med(rows, k("async")), med(rows, k("staged"))
        gbs, peer_gbs = med(rows, k("cush"), 1), med(rows, k("peer"), 1)
        mib = rows[k("cush")][0][2] / 2**20
        print(f"| {axis} | {face} | {depth} | {mib:.2f} | {fmt(peer, '.1f')} | {raw:.1f} | {cush:.1f} "
              f"| {fmt(async_, '.1f')} | {fmt(staged, '.1f')} | {raw / cush:.3f} "
              f"| {fmt(raw / async_ if async_ else None, '.3f')} | {gbs:.1f} "
              f"| {fmt(gbs / peer_gbs if peer_gbs else None, '.3f')} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
