"""The lattice-Boltzmann case (bench_cases rows named in cases/lbm/bench_lbm.cpp).

Per pattern and storage (esoteric / ab, fp32 / fp16s), GPU count and cross-section edge M: MLUPS of
each variant, the fraction of the copy bandwidth measured in the same run (copy/lbm/d2d: GB/s of
bytes read and written) that the MLUPS move at the minimum bytes per update (152 FP32, 76 FP16S),
FluidX3D's published MLUPS on one H200 (docs/results/peers.md) for comparison, and cush against raw CUDA
(ratio of rates). Ratios come from one file, that is one run.

`figures` gives summary.json the figures docs/results/lbm.md states for the issue's goals.
"""
import re
from collections import defaultdict

from .. import stats
from ..figures import figure, measured_in
from ..gbench import error_lines

NAME = re.compile(r"^case/lbm(?P<weak>_weak)?_(?P<pattern>esoteric|ab)_(?P<storage>fp32|fp16s)/"
                  r"(?P<v>single|multi_cuda|multi_cush)/(?P<g>\d+)gpu/(?P<m>\d+)")
COPY = re.compile(r"^copy/lbm/d2d/")
# The share of the exchange the overlapped step hides (cases/lbm/bench_lbm.cpp): cush without overlap,
# and the exchanges alone.
BULK = re.compile(r"^case/lbm_bulk_esoteric_(?P<storage>fp32|fp16s)/multi_cush/(?P<g>\d+)gpu/(?P<m>\d+)/")
EXCHANGE = re.compile(r"^exchange/lbm_esoteric_(?P<storage>fp32|fp16s)/(?P<g>\d+)gpu/(?P<m>\d+)/")
BYTES = {"fp32": 152, "fp16s": 76}
FLUIDX3D = {"fp32": 23056, "fp16s": 36610}  # MLUPS, one H200 (docs/results/peers.md)
GOAL_MLUPS = {"fp32": 25000, "fp16s": 45000}


def medians(run):
    """(series, pattern, storage, variant, gpus, M) -> median MLUPS, and the copy's median GB/s."""
    mlups, copy = defaultdict(list), []
    for row in run.rows:
        m = NAME.match(row.name)
        if m:
            key = ("weak" if m["weak"] else "strong", m["pattern"], m["storage"], m["v"], int(m["g"]), int(m["m"]))
            mlups[key].append(row.fields.get("MLUPS", float("nan")))
        elif COPY.match(row.name):
            copy.append(row.fields.get("GB/s", float("nan")))
    return {k: stats.median(v) for k, v in mlups.items()}, (stats.median(copy) if copy else float("nan"))


def hidden_ms(run):
    """(kind, storage, gpus, M) -> median ms of the esoteric-pull cush rows, kind "overlap" (the
    case's rows), "bulk" (no overlap) or "exchange" (the exchanges alone), the same steps each."""
    ms = defaultdict(list)
    for row in run.rows:
        for kind, pattern in (("bulk", BULK), ("exchange", EXCHANGE)):
            m = pattern.match(row.name)
            if m:
                ms[(kind, m["storage"], int(m["g"]), int(m["m"]))].append(row.ms)
        m = NAME.match(row.name)
        if m and not m["weak"] and m["pattern"] == "esoteric" and m["v"] == "multi_cush":
            ms[("overlap", m["storage"], int(m["g"]), int(m["m"]))].append(row.ms)
    return {k: stats.median(v) for k, v in ms.items()}


def share(value, storage, copy):
    """The fraction of the copy bandwidth that `value` MLUPS move."""
    return value * 1e6 * BYTES[storage] / (copy * 1e9) if copy == copy and copy > 0 else float("nan")


def page(run):
    mlups, copy = medians(run)
    ctx = run.context
    lines = [f"# lbm ({ctx.get('date', '?')}, {ctx.get('gpu_count', '?')} x {ctx.get('gpus', '?')})", ""]
    lines += error_lines(run)
    lines += [f"Copy bandwidth (device to device, read + write): {copy:.0f} GB/s.", ""]
    groups = sorted({k[:3] + (k[4],) for k in mlups})
    for series, pattern, storage, g in groups:
        lines += [f"## {series}, {pattern} pull, {storage}, {g} GPU{'s' if g > 1 else ''} "
                  f"(MLUPS; % of the copy bandwidth at {BYTES[storage]} B/update)", "",
                  "| M | single | raw | cush | cush / raw |", "|---:|---:|---:|---:|---:|"]
        for m in sorted({k[5] for k in mlups if k[:3] == (series, pattern, storage) and k[4] == g}):
            def cell(v):
                x = mlups.get((series, pattern, storage, v, g, m), float("nan"))
                return (f"{x:,.0f} ({100 * share(x, storage, copy):.1f}%)" if x == x else "-"), x
            (s, _), (r, rx), (c, cx) = cell("single"), cell("multi_cuda"), cell("multi_cush")
            lines.append(f"| {m} | {s} | {r} | {c} | {cx / rx:.3f} |" if rx == rx and cx == cx else f"| {m} | {s} | {r} | {c} | - |")
        lines.append("")
    return lines


def render(runs):
    return "\n".join(line for run in runs for line in page(run)) + "\n"


def figures(run):
    """One GPU, 256^3 or the largest M measured: MLUPS of the single reference and of cush for each
    pattern and storage, against FluidX3D, the issue's goal and the copy bandwidth of the run."""
    mlups, copy = medians(run)
    entries = []
    for (series, pattern, storage, v, g, m), value in sorted(mlups.items()):
        if series != "strong" or g != 1 or v not in ("single", "multi_cush"):
            continue
        if m != 256 and m != max(k[5] for k in mlups if k[1:4] == (pattern, storage, v)):
            continue
        base = f"lbm.1gpu.{pattern}_{storage}.{v}.m{m}"
        entries.append(figure(f"{base}.mlups", round(value), "MLUPS", reference=FLUIDX3D[storage],
                              reference_is="FluidX3D on one H200 (published, peers.md), not measured here",
                              ratio=round(value / FLUIDX3D[storage], 3), **measured_in(run),
                              goal=f">= {GOAL_MLUPS[storage]:,} MLUPS at 256^3 or larger"))
        if copy == copy:
            entries.append(figure(f"{base}.copy_share", round(share(value, storage, copy), 3), "fraction",
                                  reference=round(copy, 1),
                                  reference_is=f"device-to-device copy GB/s in the same run; {BYTES[storage]} B per update",
                                  ratio=round(share(value, storage, copy), 3), **measured_in(run),
                                  goal=">= 0.90 of the copy bandwidth / 152 B (FP32)"))
    return entries
