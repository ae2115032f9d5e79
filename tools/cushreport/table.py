"""The transport table a bench_device_ops run supports: for each operation, which forced transport
(cush_peer: copy engines, cush_kernel: the peer kernel, cush_nccl: NCCL, cush_staged: host
staging) was fastest at each measured size, as the text form of cush::TransportTable
(`<collective> <from_bytes> <transport>` per line; include/cush/transport.hpp), with a comment per
step saying what it rests on.

    python3 -m cushreport table <device_ops.json>... [--margin 0.03]

The table is indexed by the message size cush computes for an operation: the most bytes one device
receives from the others. A benchmark row's size is nccl-tests' per-GPU buffer, so it is converted
per operation for p GPUs (all_to_all and all_gather: B (p - 1) / p; scatter: B / p; gather:
B (p - 1) / p; the others: B). Between two measured sizes the later one's transport starts at the
later size: a step never claims a size nothing measured. The copy engines leave the SMs to the
application, so another transport replaces them only where it is faster by more than `margin`
(medians of the runs' repetitions; a run per GPU count: give the files of one count). The result is
a proposal to read, not to paste blindly: each step's comment names the times it rests on, and an
operation the files do not measure gets no line (a table read from the text uses the copy engines
for it: TransportTable::pick below the first step).
"""
from collections import defaultdict

from . import stats
from .summaries import device_ops

FORCED = {"cush_peer": "peer", "cush_kernel": "peer_kernel", "cush_nccl": "nccl", "cush_staged": "host_staging"}
COLLECTIVE = {"copy": "copy", "exchange": "copy", "broadcast": "broadcast", "scatter": "scatter", "gather": "gather",
              "all_gather": "all_gather", "all_to_all": "all_to_all", "reduce": "reduce", "all_reduce": "all_reduce"}
# Operations that stand for a collective where two rows map to one (exchange and copy: copy).
PREFERRED = {"copy": "copy"}


def message_bytes(op, buffer_bytes, p):
    """What cush's table is indexed by (the most bytes one device receives) for a row of `op`."""
    if op in ("all_to_all", "all_gather", "gather"):
        return buffer_bytes * (p - 1) // p
    if op == "scatter":
        return buffer_bytes // p
    return buffer_bytes


def timings(runs):
    """{op: {size label: {transport: median seconds}}} of the forced-transport rows, and p."""
    samples = defaultdict(list)
    counts = set()
    for run in runs:
        counts.add(device_ops.gpu_count(run))
        for row in run.rows:
            if row.parts[0] != "dev" or len(row.parts) < 4 or row.parts[2] not in FORCED:
                continue
            samples[(row.parts[1], row.parts[3], FORCED[row.parts[2]])].append(device_ops.seconds(row))
    if len(counts) != 1:
        raise ValueError(f"give the files of one GPU count (these have {sorted(counts)})")
    out = defaultdict(lambda: defaultdict(dict))
    for (op, size, transport), s in samples.items():
        out[op][size][transport] = stats.median(s)
    return out, counts.pop()


def winner(times, margin):
    """The fastest transport of {transport: seconds}; the copy engines unless beaten by > margin."""
    best = min(times, key=times.get)
    if "peer" in times and best != "peer" and times["peer"] <= times[best] * (1 + margin):
        return "peer"
    return best


def propose(runs, margin=0.03):
    """The table's text: per collective, steps from the measured winners, with comments."""
    table, p = timings(runs)
    lines = [f"# Proposed from {', '.join(r.source for r in runs)} ({p} GPUs; the copy engines unless another",
             f"# transport is faster by more than {margin:.0%}). Each step: the times it rests on, µs per operation."]
    done = set()
    for op in COLLECTIVE:
        if op not in table or COLLECTIVE[op] in done:
            continue
        if op == "exchange" and "copy" in table:
            continue  # copy's own rows decide copy
        collective = COLLECTIVE[op]
        done.add(collective)
        previous = None
        for size in sorted(table[op], key=device_ops.size_bytes):
            times = table[op][size]
            if not times:
                continue
            best = winner(times, margin)
            if best == previous:
                continue
            start = 0 if previous is None else message_bytes(op, device_ops.size_bytes(size), p)
            said = ", ".join(f"{t} {times[t] * 1e6:,.1f}" for t in sorted(times, key=times.get))
            lines.append(f"{collective} {start} {best}  # {op} {size}: {said}")
            previous = best
    return "\n".join(lines) + "\n"
