"""The fused advection kernel (bench_cases rows `temporal/...` of cases/advection/bench_advection.cpp)
against the ceilings measured in the same run (`roof/copy/...` and `roof/fp64_fma/...`,
bench/roofs.cu).

R1 = copy GB/s / 16 (the one-step roofline: an update reads and writes 8 bytes) and F / 27 =
GFMA/s / 27 (no kernel evaluating the 27 terms does better). Per grid: the single-GPU reference's
rate for each T (steps per launch) with its fractions of both and its gain over T = 1; per GPU
count, the overlapped raw and cush rates, cush / raw and the efficiency E_g = rate / (g x the
single-GPU rate at the same T). Ratios come from one file, that is one run.
"""
import re
from collections import defaultdict

from .. import stats
from ..gbench import error_lines

NAME = re.compile(r"^temporal/(?P<kind>advection|advection_overlap)/(?P<t>\d+)/(?P<v>single|multi_cuda|multi_cush)"
                  r"/(?P<g>\d+)gpu/(?P<n>\d+)")
ROOF = re.compile(r"^roof/(?P<what>copy|fp64_fma)/")


def medians(run):
    """(kind, variant, T, gpus, n) -> median G updates/s; and the ceilings' medians (GB/s, GFMA/s)."""
    rate, roofs = defaultdict(list), defaultdict(list)
    for row in run.rows:
        m = NAME.match(row.name)
        if m:
            rate[(m["kind"], m["v"], int(m["t"]), int(m["g"]), int(m["n"]))].append(row.fields.get("Gpts/s", float("nan")))
        r = ROOF.match(row.name)
        if r:
            roofs[r["what"]].append(row.fields.get("GB/s" if r["what"] == "copy" else "GFMA/s", float("nan")))
    return ({k: stats.median(v) for k, v in rate.items()}, {k: stats.median(v) for k, v in roofs.items()})


def page(run):
    nan = float("nan")
    rate, roofs = medians(run)
    ctx = run.context
    lines = [f"# temporal ({ctx.get('date', '?')}, {ctx.get('gpu_count', '?')} x {ctx.get('gpus', '?')})", ""]
    lines += error_lines(run)
    r1 = roofs.get("copy", nan) / 16
    f27 = roofs.get("fp64_fma", nan) / 27
    lines += [f"Ceilings: copy {roofs.get('copy', nan):.0f} GB/s, R1 = {r1:.1f} G updates/s; FP64 FMA "
              f"{roofs.get('fp64_fma', nan):.0f} G/s, F / 27 = {f27:.1f} G updates/s.", ""]
    steps = sorted({k[2] for k in rate})
    for n in sorted({k[4] for k in rate}):
        single = {t: rate.get(("advection", "single", t, 1, n), nan) for t in steps}
        lines += [f"## One GPU, {n}^3 (single-GPU reference)", "",
                  "| T | G updates/s | x R1 | x F / 27 | x T = 1 |", "|---:|---:|---:|---:|---:|"]
        for t in steps:
            s = single[t]
            lines.append(f"| {t} | {s:.1f} | {s / r1:.3f} | {s / f27:.3f} | {s / single.get(1, nan):.3f} |")
        lines.append("")
        for g in sorted({k[3] for k in rate if k[0] == "advection_overlap" and k[4] == n}):
            lines += [f"## {g} GPU{'s' if g > 1 else ''}, {n}^3, overlapped", "",
                      "| T | raw G/s | cush G/s | cush / raw | E (cush) |", "|---:|---:|---:|---:|---:|"]
            for t in steps:
                raw = rate.get(("advection_overlap", "multi_cuda", t, g, n), nan)
                cush = rate.get(("advection_overlap", "multi_cush", t, g, n), nan)
                lines.append(f"| {t} | {raw:.1f} | {cush:.1f} | {cush / raw:.3f} | {cush / (g * single[t]):.3f} |")
            lines.append("")
    return lines


def render(runs):
    return "\n".join(line for run in runs for line in page(run)) + "\n"
