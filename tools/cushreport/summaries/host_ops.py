"""Host<->GPU moves (bench_host_ops): cush against the hand-written loop, per operation, memory and size.

Every cush row is compared with the raw row measured in the same run: raw pinned for pinned, raw
pageable for pageable, registered and register_each (the question there is how much faster than
handing pageable memory to cudaMemcpyAsync). "speedup" = raw time / cush time (> 1: cush faster).
Then the goals of issue 2 at the largest size. One page per file (ratios come from one run).
"""
from collections import defaultdict

from .. import stats
from ..gbench import error_lines
from ..perf import reference_memory

GOALS = [  # (text, host memory, goal): scatter + gather, cush against raw
    ("pinned scatter + gather, cush speed / raw", "pinned", 0.95),
    ("pageable first use (staged) scatter + gather, x raw pageable", "pageable", 2),
    ("pageable moved again (registered) scatter + gather, x raw pageable", "registered", 4),
]


def medians(run):
    """(op, memory, impl, MiB) -> {"ms", "gbps"}: the medians of a run's repetitions."""
    samples = defaultdict(list)
    for row in run.rows:
        parts = row.parts
        if len(parts) >= 5 and parts[0] == "host":
            _, op, memory, impl, size = parts[:5]
            samples[(op, memory, impl, int(size.replace("MiB", "")))].append(row)
    return {k: {"ms": stats.median([r.ms for r in rs]), "gbps": stats.median([r.fields.get("GB/s", 0.0) for r in rs])}
            for k, rs in samples.items()}


def table(rows):
    """The table's lines and {(op, memory): {MiB: speedup}}."""
    lines = ["| op | host memory | MiB | raw ms | raw GB/s | cush ms | cush GB/s | speedup |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    speedups = defaultdict(dict)
    for (op, memory, impl, mib), r in sorted(rows.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][3], kv[0][2])):
        if impl != "cush":
            continue
        raw = rows.get((op, reference_memory(memory), "raw", mib))
        speedup = raw["ms"] / r["ms"] if raw else float("nan")
        speedups[(op, memory)][mib] = speedup
        raw_ms = f"{raw['ms']:.3f}" if raw else "-"
        raw_gb = f"{raw['gbps']:.1f}" if raw else "-"
        label = memory if memory == reference_memory(memory) else f"{memory} (vs raw pageable)"
        lines.append(f"| {op} | {label} | {mib} | {raw_ms} | {raw_gb} | {r['ms']:.3f} | {r['gbps']:.1f} | {speedup:.2f} |")
    return lines, speedups


def scatter_gather(rows, memory, mib):
    """raw time / cush time of scatter and gather together at one size; None if a row is missing."""
    raw = [rows.get((op, reference_memory(memory), "raw", mib)) for op in ("scatter", "gather")]
    cush = [rows.get((op, memory, "cush", mib)) for op in ("scatter", "gather")]
    if None in raw or None in cush:
        return None
    return sum(r["ms"] for r in raw) / sum(c["ms"] for c in cush)


def goal_line(text, value, goal):
    if value is None:
        return f"- {text}: not measured"
    return f"- {text}: **{value:.2f}** (goal >= {goal}) {'met' if value >= goal else 'MISSED'}"


def page(run):
    context = run.context
    rows = medians(run)
    lines = ["# Host<->GPU moves: cush against the hand-written per-GPU cudaMemcpyAsync loop", "",
             f"Run: {context.get('date', '?')} on {context.get('gpu_count', '?')} x {context.get('gpus', '?')}; "
             f"CUDA {context.get('cuda_runtime', '?')}, driver {context.get('cuda_driver', '?')}, "
             f"NCCL {context.get('nccl', '?')}, cush {context.get('cush', '?')}.", ""]
    lines += error_lines(run)
    lines += ["speedup = raw time / cush time, both measured in this run (> 1: cush faster). GB/s counts bytes "
              "delivered (a broadcast delivers the buffer to every GPU).", ""]
    table_lines, speedups = table(rows)
    big = max((k[3] for k in rows), default=0)
    lines += table_lines + ["", f"## Goals (issue 2), at {big} MiB", ""]
    lines += [goal_line(text, scatter_gather(rows, memory, big), goal) for text, memory, goal in GOALS]
    register_each = scatter_gather(rows, "register_each", big)
    if register_each is not None:
        lines.append(f"- for comparison, registering inside every move (register_each), x raw pageable: "
                     f"{register_each:.2f} (why cush stages instead: docs/host_memory.md)")
    lines.append(goal_line("broadcast from pinned, cush speed / raw", speedups.get(("broadcast", "pinned"), {}).get(big), 0.95))
    return lines


def render(runs):
    return "\n".join(line for run in runs for line in page(run)) + "\n"
