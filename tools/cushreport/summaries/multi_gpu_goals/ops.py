"""The GPU<->GPU operations (bench_device_ops: one file per GPU count, over all visible GPUs) and the
halo exchange (bench_halo: the first two GPUs of the host), from the files of one call.

Device operations: at every size and GPU count, cush (impl `cush`, transport chosen automatically)
against NCCL (`raw_nccl`; `raw_nccl_window` where the file has it: NCCL on buffers registered as
symmetric windows) and against the raw CUDA twin (`raw_peer`, cudaMemcpyPeerAsync loops), as
speed = reference time / cush time per operation (op_us; medians of the repetitions). The goals:
all-to-all, broadcast and all-gather at least as fast as NCCL in each configuration measured
(>= 1.0) and >= 0.95 of the raw twin; the other operations are reported without a goal. Printed as one table per operation (a row per size,
columns per GPU count, a column per reference the files hold) and one goal line per operation
and GPU count (references with no row left out).

Halo: each row's cush exchange against the raw twin (issue 5: within 5%, ratio >= 0.95).
"""
from collections import defaultdict

from ... import stats
from ...figures import figure, measured_in
from .. import device_ops, halo
from .common import Found, gpus, met, name

GOALS = {"all_to_all": {"raw_nccl": 1.0, "raw_peer": 0.95}, "broadcast": {"raw_nccl": 1.0, "raw_peer": 0.95},
         "all_gather": {"raw_nccl": 1.0, "raw_nccl_window": 1.0, "raw_peer": 0.95}}
REFERENCES = ("raw_nccl", "raw_nccl_window", "raw_peer")
REFERENCE_IS = {"raw_nccl": "raw_nccl: the NCCL call on the same buffers, same run",
                "raw_nccl_window": "raw_nccl_window: the NCCL call on buffers registered as symmetric windows "
                                   "(ncclCommWindowRegister), same run",
                "raw_peer": "raw_peer: the cudaMemcpyPeerAsync twin on the same buffers (bench_device_ops.cpp), same run"}
SHORT = {"raw_nccl": "NCCL", "raw_nccl_window": "NCCL window", "raw_peer": "peer"}
HALO_GOAL = 0.95


def medians(ops_runs):
    """{g: {(op, impl, size): median seconds per operation}} of {g: [runs]} (the runs of one count pooled)."""
    out = {}
    for g, runs in ops_runs.items():
        samples = defaultdict(list)
        for run in runs:
            for row in run.rows:
                if row.parts[0] == "dev":
                    _, op, impl, size = row.parts[:4]
                    samples[(op, impl, size)].append(device_ops.seconds(row))
        out[g] = {k: stats.median(v) for k, v in samples.items()}
    return out


def where(runs):
    """measured_in() of the runs of one GPU count (their files named together)."""
    got = measured_in(runs[0])
    got["source"] = ", ".join(r.source for r in runs)
    return got


def sizes_of(table, op):
    return sorted({s for (o, _, s) in table if o == op}, key=device_ops.size_bytes)


def ops_in(tables):
    """The operations measured, in the order the first file measured them."""
    return list(dict.fromkeys(op for table in tables.values() for (op, _, _) in table))


def references_of(tables, op):
    """The references that some GPU count measured `op` against, in REFERENCES' order."""
    return [r for r in REFERENCES if any(o == op and i == r for t in tables.values() for (o, i, _) in t)]


def device_op_goals(ops_runs):
    tables, found = medians(ops_runs), Found()
    for g, table in sorted(tables.items()):
        for op in ops_in({g: table}):
            for size in sizes_of(table, op):
                cush = table.get((op, "cush", size))
                for ref in REFERENCES:
                    t = table.get((op, ref, size))
                    if cush is None or t is None:
                        continue
                    goal = GOALS.get(op, {}).get(ref)
                    extra = {"goal": f"cush >= {goal} x {ref}'s speed: {met(t / cush >= goal)}"} if goal else {}
                    found.add(figure(name("device_ops", g, op, size, f"cush_vs_{ref}"), round(cush * 1e6, 1), "µs per operation",
                                     reference=round(t * 1e6, 1), reference_is=REFERENCE_IS[ref],
                                     ratio=round(t / cush, 3), **where(ops_runs[g]), **extra))
    return found


def device_op_tables(ops_runs):
    """Markdown: per operation a table (rows: sizes; per GPU count: cush µs and speed against each
    reference) and its goal lines."""
    tables = medians(ops_runs)
    counts = sorted(tables)
    lines = []
    for op in ops_in(tables):
        refs = references_of(tables, op)
        head = ["size"] + [c for g in counts for c in (f"cush µs, {gpus(g)}",) + tuple(f"vs {SHORT[r]}" for r in refs)]
        lines += [f"##### {op}", "", "| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
        for size in sorted({s for t in tables.values() for s in sizes_of(t, op)}, key=device_ops.size_bytes):
            cells = [size]
            for g in counts:
                cush = tables[g].get((op, "cush", size))
                cells.append(f"{cush * 1e6:,.1f}" if cush else "-")
                for ref in refs:
                    t = tables[g].get((op, ref, size))
                    cells.append(f"{t / cush:.3f}" if cush and t else "-")
            lines.append("| " + " | ".join(cells) + " |")
        goals = [goal_line(op, g, tables[g]) for g in counts if op in GOALS and sizes_of(tables[g], op)]
        lines += [""] + (goals + [""] if goals else [])
    return lines


def goal_line(op, g, table):
    """'- all_to_all, 4 GPUs: ... met at every size (6); ... not met at 4KiB (0.912)'."""
    parts = []
    for ref, goal in GOALS[op].items():
        if not any(o == op and i == ref for (o, i, _) in table):
            continue  # not measured against this reference at all (e.g. no symmetric windows)
        ratios, absent = {}, defaultdict(list)
        for size in sizes_of(table, op):
            cush, t = table.get((op, "cush", size)), table.get((op, ref, size))
            if cush and t:
                ratios[size] = t / cush
            else:
                absent["cush" if not cush else ref].append(size)
        misses = [f"{s} ({r:.3f})" for s, r in ratios.items() if r < goal]
        text = f"cush >= {goal} x {ref}'s speed: " + (f"not met at {', '.join(misses)}" if misses else
                                                      f"met at every size measured ({len(ratios)})" if ratios else "no size measured")
        parts.append(text + "".join(f" (no {impl} row at {', '.join(s)})" for impl, s in absent.items()))
    return f"- {op}, {gpus(g)}: " + ("; ".join(parts) if parts else "no reference measured")


def halo_goals(run):
    table, _ = halo.medians([run])
    found = Found()
    for (axis, face, depth), row in sorted(table.items()):
        if "raw" not in row or "cush" not in row:
            found.miss(f"halo {axis} {face} {depth}: no {'raw' if 'raw' not in row else 'cush'} row")
            continue
        ratio = row["raw"][0] / row["cush"][0]
        found.add(figure(name("halo", 2, axis, str(face), depth, "cush_vs_raw"), round(row["cush"][0], 1), "µs per exchange",
                         reference=round(row["raw"][0], 1),
                         reference_is="raw twin: pack kernel, cudaMemcpyPeerAsync, unpack kernel; same run",
                         ratio=round(ratio, 3), **measured_in(run),
                         goal=f"cush >= {HALO_GOAL} x the raw twin's speed: {met(ratio >= HALO_GOAL)}"))
    return found


def halo_lines(run, entries):
    """One goal line per axis of a bench_halo run, from its entries of halo_goals()."""
    lines = []
    host = run.context.get("gpu_count", "?")
    for axis in sorted({e["name"].split(".")[2] for e in entries}):
        rows = [e for e in entries if e["name"].split(".")[2] == axis]
        misses = [f"{' '.join(e['name'].split('.')[3:5])} ({e['ratio']:.3f})" for e in rows if e["ratio"] < HALO_GOAL]
        verdict = f"not met at {', '.join(misses)}" if misses else f"met at every row ({len(rows)})"
        lines.append(f"- halo, axis {axis}, GPUs 0 and 1 of {host} ({run.source}): cush >= {HALO_GOAL} x the raw twin's speed: {verdict}")
    return lines
