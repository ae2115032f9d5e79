"""GPU<->GPU operations (bench_device_ops, names dev/<op>/<impl>/<size>): per operation and size,
the time and bus bandwidth of every implementation, and cush's speed against each raw twin (raw
time / cush time; > 1: cush faster).
"""
from collections import defaultdict

from .. import stats
from ..gbench import error_lines

ORDER = ["raw_peer", "raw_nccl", "cush", "cush_peer", "cush_kernel", "cush_nccl", "cush_staged"]


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
