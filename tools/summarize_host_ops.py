#!/usr/bin/env python3
"""Summarize bench_host_ops JSON: cush against the hand-written loop, per operation, memory and size.

Usage: summarize_host_ops.py host_ops.json > host_ops.md

Every cush row is compared with the raw row measured in the same run: raw pinned for pinned, raw
pageable for pageable, registered and register_each (the question there is how much faster than
handing pageable memory to cudaMemcpyAsync). "speedup" = raw time / cush time (> 1: cush faster).
"""
import json
import sys
from collections import defaultdict


def load(path):
    with open(path) as f:
        data = json.load(f)
    rows = {}
    for b in data.get("benchmarks", []):
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        name = b.get("run_name", b["name"])
        parts = name.split("/")
        if len(parts) < 5 or parts[0] != "host":
            continue
        _, op, memory, impl, size = parts[:5]
        mib = int(size.replace("MiB", ""))
        rows[(op, memory, impl, mib)] = {"ms": b["real_time"], "gbps": b.get("GB/s", 0.0)}
    return data.get("context", {}), rows


def reference(memory):
    return "pinned" if memory == "pinned" else "pageable"


def main():
    context, rows = load(sys.argv[1])
    print("# Host<->GPU moves: cush against the hand-written per-GPU cudaMemcpyAsync loop\n")
    print(f"Run: {context.get('date', '?')} on {context.get('gpu_count', '?')} x {context.get('gpus', '?')}; "
          f"CUDA {context.get('cuda_runtime', '?')}, driver {context.get('cuda_driver', '?')}, "
          f"NCCL {context.get('nccl', '?')}, cush {context.get('cush', '?')}.\n")
    print("speedup = raw time / cush time, both measured in this run (> 1: cush faster). GB/s counts bytes "
          "delivered (a broadcast delivers the buffer to every GPU).\n")
    print("| op | host memory | MiB | raw ms | raw GB/s | cush ms | cush GB/s | speedup |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    by = defaultdict(dict)
    for (op, memory, impl, mib), r in sorted(rows.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][3], kv[0][2])):
        if impl != "cush":
            continue
        raw = rows.get((op, reference(memory), "raw", mib))
        speedup = raw["ms"] / r["ms"] if raw else float("nan")
        by[(op, memory)][mib] = speedup
        raw_ms = f"{raw['ms']:.3f}" if raw else "-"
        raw_gb = f"{raw['gbps']:.1f}" if raw else "-"
        label = memory if memory == reference(memory) else f"{memory} (vs raw pageable)"
        print(f"| {op} | {label} | {mib} | {raw_ms} | {raw_gb} | {r['ms']:.3f} | {r['gbps']:.1f} | {speedup:.2f} |")

    big = max((k[3] for k in rows), default=0)
    print(f"\n## Goals (issue 2), at {big} MiB\n")

    def ratio(op, memory):
        return by.get((op, memory), {}).get(big)

    def pair(memory):
        s = [rows.get((op, m, i, big)) for op in ("scatter", "gather") for m, i in ((reference(memory), "raw"), (memory, "cush"))]
        if any(x is None for x in s):
            return None
        raw_t = s[0]["ms"] + s[2]["ms"]
        cush_t = s[1]["ms"] + s[3]["ms"]
        return raw_t / cush_t

    def line(text, value, goal):
        if value is None:
            print(f"- {text}: not measured")
        else:
            print(f"- {text}: **{value:.2f}** (goal >= {goal}) {'met' if value >= goal else 'MISSED'}")

    line("pinned scatter + gather, cush speed / raw", pair("pinned"), 0.95)
    line("pageable first use (staged) scatter + gather, x raw pageable", pair("pageable"), 2)
    line("pageable moved again (registered) scatter + gather, x raw pageable", pair("registered"), 4)
    re_each = pair("register_each")
    if re_each is not None:
        print(f"- for comparison, registering inside every move (register_each), x raw pageable: {re_each:.2f} "
              "(why cush stages instead: docs/host_memory.md)")
    line("broadcast from pinned, cush speed / raw", ratio("broadcast", "pinned"), 0.95)


if __name__ == "__main__":
    main()
