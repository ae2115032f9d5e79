#!/usr/bin/env python3
"""Summarizes bench_device_ops JSON: per operation and size, the time and bandwidth of every
implementation, and cush's speed against each raw twin (raw time / cush time; > 1 is faster).

usage: summarize_device_ops.py device_ops.json [more.json ...] > device_ops.md
"""
import json
import statistics
import sys
from collections import defaultdict

ORDER = ["raw_peer", "raw_nccl", "cush", "cush_peer", "cush_kernel", "cush_nccl", "cush_staged"]


def size_bytes(label):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if label.endswith(unit):
            return int(label[: -len(unit)]) << shift
    raise ValueError(label)


def load(paths):
    rows = defaultdict(list)  # (op, impl, size) -> [(seconds, algbw, busbw)]
    context = None
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        context = context or data.get("context", {})
        for b in data["benchmarks"]:
            if b.get("run_type") == "aggregate" or not b["name"].startswith("dev/"):
                continue
            _, op, impl, size = b["name"].split("/")[:4]
            if "op_us" in b:  # the per-operation time (iterations time batches)
                seconds = b["op_us"] * 1e-6
            else:
                scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b["time_unit"]]
                seconds = b["real_time"] * scale
            rows[(op, impl, size)].append((seconds, b["algbw"], b["busbw"]))
    return rows, context


def main(paths):
    rows, context = load(paths)
    ops = []
    for op, _, _ in rows:
        if op not in ops:
            ops.append(op)
    print("# GPU<->GPU operations: cush against its raw twins\n")
    print(f"{context.get('gpus', '?')}; {context.get('cush_versions', '')}".strip("; "))
    print()
    print("Time is the median over runs of the per-operation time; speed = raw time / cush time "
          "(> 1: cush faster). algbw and busbw in GB/s as nccl-tests counts them.\n")
    for op in ops:
        sizes = sorted({s for (o, _, s) in rows if o == op}, key=size_bytes)
        impls = [i for i in ORDER if any((op, i, s) in rows for s in sizes)]
        print(f"## {op}\n")
        head = ["size"] + [f"{i} µs" for i in impls] + [f"{i} busbw" for i in impls]
        raws = [i for i in impls if i.startswith("raw_")]
        head += [f"cush vs {r}" for r in raws] + ["cush vs best raw"]
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for s in sizes:
            med = {}
            bus = {}
            for i in impls:
                if (op, i, s) in rows:
                    med[i] = statistics.median(r[0] for r in rows[(op, i, s)])
                    bus[i] = statistics.median(r[2] for r in rows[(op, i, s)])
            cells = [s]
            cells += [f"{med[i] * 1e6:.1f}" if i in med else "" for i in impls]
            cells += [f"{bus[i]:.1f}" if i in bus else "" for i in impls]
            for r in raws:
                cells.append(f"{med[r] / med['cush']:.3f}" if r in med and "cush" in med else "")
            best = min((med[r] for r in raws if r in med), default=None)
            cells.append(f"{best / med['cush']:.3f}" if best and "cush" in med else "")
            print("| " + " | ".join(cells) + " |")
        print()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
