"""GPU<->GPU operations (bench_device_ops, names dev/<op>/<impl>/<size>): per operation and size,
the time and bus bandwidth of every implementation, and cush's speed against each raw twin (raw
time / cush time; > 1: cush faster).

`figures` gives summary.json the figures that the goals of issue 4 cite in
docs/results/device_ops.md, from the runs that page names (A, B, C), with the same definitions:
the median per-operation time of each row, ratios of medians, medians of busbw.
"""
import itertools
from collections import defaultdict

from .. import stats
from ..figures import figure, measured_in
from ..gbench import error_lines

ORDER = ["raw_peer", "raw_nccl", "cush", "cush_peer", "cush_kernel", "cush_nccl", "cush_staged"]
# The committed device_ops_*.json runs (2026-11-23) had the unordered raw_peer twin; since
# 2026-11-27 it orders the streams with events (bench/bench_device_ops.cpp, multi_gpu.py).
REFERENCE_IS = {"raw_peer": "raw_peer: cudaMemcpyPeerAsync loop without ordering between devices, same run",
                "raw_nccl": "raw_nccl: the NCCL call on the same buffers, same run"}
SMALL = ("4KiB", "64KiB", "1MiB")
ALL_SIZES = SMALL + ("16MiB", "256MiB", "1GiB")

# The goals' table of device_ops.md: (runs, operations, sizes, implementation, reference, goal).
# "best_raw" is the faster of the operation's raw twins at that size.
GOALS = [
    ("A", ("copy", "exchange"), ("1GiB",), "cush", "raw_peer", "peer copy >= 0.95 of raw"),
    ("A", ("all_to_all",), ("1GiB",), "cush", "raw_nccl", "all-to-all 1 GiB within 5% of NCCL or faster"),
    ("AB", ("all_to_all",), SMALL, "cush", "raw_nccl", "all-to-all <= 1 MiB faster than NCCL"),
    ("A", ("broadcast", "scatter", "gather", "all_gather"), ALL_SIZES, "cush", "best_raw",
     "broadcast, scatter, gather, all-gather >= 0.95 of the best raw twin"),
    ("A", ("broadcast", "scatter", "gather"), SMALL, "cush", "raw_nccl", None),  # "1.6-2.4x faster than NCCL"
    ("ABC", ("all_reduce",), ALL_SIZES, "cush", "raw_nccl", "all-reduce >= 0.95 of NCCL"),
    ("C", ("all_reduce",), SMALL, "cush_nccl", "raw_nccl", "all-reduce >= 0.95 of NCCL"),
]
BANDWIDTH_GOALS = [("A", ("copy", "exchange"), ("1GiB",), "cush", "raw_peer", "peer copy >= 0.95 of raw")]


def gpu_count(run):
    """The GPUs a run used: its rows' `gpus` counter, else its context's count."""
    counts = {int(row.fields["gpus"]) for row in run.rows if "gpus" in row.fields}
    return max(counts) if counts else int(run.context.get("gpu_count", 0))


def size_bytes(label):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if label.endswith(unit):
            return int(label[: -len(unit)]) << shift
    raise ValueError(label)


def seconds(row):
    """The time of one operation: op_us where the benchmark counts it (an iteration runs a batch)."""
    return row.fields["op_us"] * 1e-6 if "op_us" in row.fields else row.ms * 1e-3


def medians(runs):
    """(op, impl, size) -> (median seconds per operation, median busbw in GB/s) over the runs' rows."""
    samples = defaultdict(list)
    for run in runs:
        for row in run.rows:
            if row.parts[0] == "dev":
                _, op, impl, size = row.parts[:4]
                samples[(op, impl, size)].append(row)
    return {k: (stats.median([seconds(r) for r in rs]), stats.median([r.fields["busbw"] for r in rs]))
            for k, rs in samples.items()}


def best_raw(table, op, size):
    """The raw twin with the shortest time for (op, size), or None."""
    raws = [i for i in ORDER if i.startswith("raw_") and (op, i, size) in table]
    return min(raws, key=lambda i: table[(op, i, size)][0], default=None)


def op_table(table, op):
    """The Markdown table of one operation."""
    sizes = sorted({s for (o, _, s) in table if o == op}, key=size_bytes)
    impls = [i for i in ORDER if any((op, i, s) in table for s in sizes)]
    raws = [i for i in impls if i.startswith("raw_")]
    head = ["size"] + [f"{i} µs" for i in impls] + [f"{i} busbw" for i in impls]
    head += [f"cush vs {r}" for r in raws] + ["cush vs best raw"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for s in sizes:
        med = {i: table[(op, i, s)][0] for i in impls if (op, i, s) in table}
        bus = {i: table[(op, i, s)][1] for i in impls if (op, i, s) in table}
        cells = [s]
        cells += [f"{med[i] * 1e6:.1f}" if i in med else "" for i in impls]
        cells += [f"{bus[i]:.1f}" if i in bus else "" for i in impls]
        cells += [f"{med[r] / med['cush']:.3f}" if r in med and "cush" in med else "" for r in raws]
        best = best_raw(table, op, s)
        cells.append(f"{med[best] / med['cush']:.3f}" if best and "cush" in med else "")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def render(runs):
    table = medians(runs)
    context = runs[0].context if runs else {}
    ops = list(dict.fromkeys(op for op, _, _ in table))  # in the order the runs measured them
    lines = ["# GPU<->GPU operations: cush against its raw twins", "",
             f"{context.get('gpus', '?')}; {context.get('cush_versions') or ''}".strip("; "), ""]
    lines += [e for run in runs for e in error_lines(run)]
    lines += ["Time is the median over runs of the per-operation time; speed = raw time / cush time "
              "(> 1: cush faster). algbw and busbw in GB/s as nccl-tests counts them.", ""]
    for op in ops:
        lines += [f"## {op}", ""] + op_table(table, op) + [""]
    return "\n".join(lines) + "\n"


def figures(label, run):
    """summary.json entries of one run (label A, B or C, as device_ops.md names them)."""
    table = medians([run])
    entries = []
    for runs, ops, sizes, impl, ref, goal in GOALS:
        if label in runs:
            for op, size in itertools.product(ops, sizes):
                entries += _time_figure(table, label, run, op, size, impl, ref, goal)
    for runs, ops, sizes, impl, ref, goal in BANDWIDTH_GOALS:
        if label in runs:
            for op, size in itertools.product(ops, sizes):
                entries += _bandwidth_figure(table, label, run, op, size, impl, ref, goal)
    return entries


def _time_figure(table, label, run, op, size, impl, ref, goal):
    twin = best_raw(table, op, size) if ref == "best_raw" else ref
    if (op, impl, size) not in table or (op, twin, size) not in table:
        return []
    t, t_ref = table[(op, impl, size)][0], table[(op, twin, size)][0]
    reference_is = ("best raw twin, " if ref == "best_raw" else "") + REFERENCE_IS[twin]
    extra = {"goal": goal} if goal else {}
    return [figure(f"device_ops.{gpu_count(run)}gpu.run_{label.lower()}.{op}.{size}.{impl}_vs_{ref}", round(t * 1e6, 1),
                   "µs per operation", reference=round(t_ref * 1e6, 1), reference_is=reference_is,
                   ratio=round(t_ref / t, 3), **measured_in(run), **extra)]


def _bandwidth_figure(table, label, run, op, size, impl, ref, goal):
    if (op, impl, size) not in table or (op, ref, size) not in table:
        return []
    bw, bw_ref = table[(op, impl, size)][1], table[(op, ref, size)][1]
    return [figure(f"device_ops.{gpu_count(run)}gpu.run_{label.lower()}.{op}.{size}.{impl}_busbw", round(bw, 1), "GB/s (busbw)",
                   reference=round(bw_ref, 1), reference_is=REFERENCE_IS[ref], ratio=round(bw / bw_ref, 3),
                   **measured_in(run), goal=goal)]
