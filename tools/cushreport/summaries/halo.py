"""Halo exchange (bench_halo, names halo/<impl>/<axis>/<face>/<depth>): per axis, face and depth,
the exchange time of the raw twin and of cush's variants (exchange(), exchange_start/finish,
staged transport), raw time / cush time (> 1: cush faster), cush's GB/s (both messages) and that
as a share of the plain peer copy of the same bytes both ways, measured in the same run.

`figures` gives summary.json the figures behind the goals of issue 5 in docs/results/halo.md,
with the same definitions: every row's cush time against the raw twin, and for faces of 64 MiB
the bandwidth against the peer copy.
"""
from collections import defaultdict

from .. import stats
from ..figures import figure, measured_in
from ..gbench import error_lines

LARGE_FACE_MIB = 63.9  # "faces >= 64 MiB": the 2896² depth-1 face (63.99 MiB) is the bench's 64 MiB face
SMALL_FACE_GOAL_US = 25


def medians(runs):
    """(axis, face, depth) -> {impl: (median µs, median GB/s)} and (axis, face, depth) -> message MiB."""
    samples = defaultdict(list)
    message_mib = {}
    for run in runs:
        for row in run.rows:
            if row.parts[0] == "halo":
                _, impl, axis, face, depth = row.parts[:5]
                samples[(axis, int(face), depth, impl)].append(row)
                if impl == "cush":
                    message_mib.setdefault((axis, int(face), depth), row.fields["message_bytes"] / 2 ** 20)
    table = defaultdict(dict)
    for (axis, face, depth, impl), rs in samples.items():
        table[(axis, face, depth)][impl] = (stats.median([r.fields["exch_us"] for r in rs]),
                                            stats.median([r.fields["GB/s"] for r in rs]))
    return table, message_mib


def _ratio(a, b):
    return a / b if a and b else None


def _fmt(v, spec):
    return "–" if v is None else format(v, spec)


def render(runs):
    table, message_mib = medians(runs)
    lines = [e for run in runs for e in error_lines(run)]
    lines += ["| axis | face | depth | message MiB | peer µs | raw µs | cush µs | async µs | staged µs "
              "| raw / cush | raw / async | cush GB/s | cush / peer bw |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for key in sorted(table):
        row = table[key]
        if "raw" not in row or "cush" not in row:
            continue
        us = {impl: row[impl][0] if impl in row else None for impl in ("peer", "raw", "cush", "async", "staged")}
        gbs, peer_gbs = row["cush"][1], row["peer"][1] if "peer" in row else None
        axis, face, depth = key
        lines.append(f"| {axis} | {face} | {depth} | {message_mib[key]:.2f} | {_fmt(us['peer'], '.1f')} | {us['raw']:.1f} "
                     f"| {us['cush']:.1f} | {_fmt(us['async'], '.1f')} | {_fmt(us['staged'], '.1f')} "
                     f"| {us['raw'] / us['cush']:.3f} | {_fmt(_ratio(us['raw'], us['async']), '.3f')} | {gbs:.1f} "
                     f"| {_fmt(_ratio(gbs, peer_gbs), '.3f')} |")
    return "\n".join(lines) + "\n"


def figures(run):
    """summary.json entries: each row's exchange time against the raw twin; at 64 MiB and more,
    cush's bandwidth against the peer copy."""
    table, message_mib = medians([run])
    entries = []
    for (axis, face, depth), row in sorted(table.items()):
        mib = round(message_mib[(axis, face, depth)], 2)
        name = f"halo.2gpu.{axis}.{face}.{depth}"  # bench_halo exchanges between two GPUs
        if "raw" in row and "cush" in row:
            goal = "cush within 5% of the raw twin (ratio >= 0.95)"
            if face == 420 and depth == "d1":
                goal = f"420 x 420 FP64 face, depth 1, <= {SMALL_FACE_GOAL_US} µs; " + goal
            entries.append(figure(f"{name}.time", round(row["cush"][0], 1), "µs per exchange",
                                  reference=round(row["raw"][0], 1),
                                  reference_is="raw twin: pack kernel, cudaMemcpyPeerAsync, unpack kernel; same run",
                                  ratio=round(row["raw"][0] / row["cush"][0], 3), **measured_in(run),
                                  message_MiB=mib, goal=goal))
        if "cush" in row and "peer" in row and mib >= LARGE_FACE_MIB:
            entries.append(figure(f"{name}.bandwidth", round(row["cush"][1], 1), "GB/s (both messages)",
                                  reference=round(row["peer"][1], 1),
                                  reference_is="cudaMemcpyPeerAsync of the same bytes both ways, same run",
                                  ratio=round(row["cush"][1] / row["peer"][1], 3), **measured_in(run),
                                  message_MiB=mib, goal="faces >= 64 MiB move >= 0.80 of the peer-copy bandwidth"))
    return entries
