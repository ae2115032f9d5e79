"""The fused stencil kernels against the ceilings measured in the same run (`roof/copy/...` and
`roof/fp64_fma/...`, bench/roofs.cu): the advection case's (bench_cases rows `temporal/advection...`
of cases/advection/bench_advection.cpp; `temporal/advection_factorized...` for its factorized form,
three 3-point passes an update) and the wave case's (rows `case/wave...` for one step a
launch and `temporal/wave...` for T, cases/wave/bench_wave.cpp; `temporal/wave_diamond...` for its
DiamondTorre variant, sweeps of T steps with diamonds of radius R).

Advection: R1 = copy GB/s / 16 (the one-step roofline: an update reads and writes 8 bytes) and
F / 27 = GFMA/s / 27 (no kernel evaluating the 27 terms does better). Wave: R1w = copy GB/s / 24
(a leapfrog step reads two levels and writes one). Per grid (and order): the single-GPU
reference's rate for each T (steps per launch) with its fractions of the ceilings and its gain
over T = 1; per GPU count, the overlapped raw and cush rates, cush / raw and the efficiency E_g =
rate / (g x the single-GPU rate at the same T). Ratios come from one file, that is one run.
"""
import re
from collections import defaultdict

from .. import stats
from ..figures import figure, measured_in
from ..gbench import error_lines

NAME = re.compile(r"^temporal/(?P<kind>advection|advection_overlap|advection_factorized|advection_factorized_overlap)/(?P<t>\d+)/(?P<v>single|multi_cuda|multi_cush)"
                  r"/(?P<g>\d+)gpu/(?P<n>\d+)")
ROOF = re.compile(r"^roof/(?P<what>copy|fp64_fma)/")
# The wave's rows: one step a launch (case/...) or T (temporal/...), per order.
WAVE = re.compile(r"^(?P<family>case|temporal)/(?P<kind>wave|wave_overlap)/(?P<order>\d+)/(?:(?P<t>\d+)/)?"
                  r"(?P<v>single|multi_cuda|multi_cush)/(?P<g>\d+)gpu/(?P<n>\d+)")
# The wave's DiamondTorre variant: sweeps of T steps, diamonds of radius R, when a tower reads the
# columns it does not keep (DiamondReads).
DIAMOND = re.compile(r"^temporal/wave_diamond/(?P<order>\d+)/(?P<t>\d+)/r(?P<r>\d+)/(?P<sched>in_step|step_ahead|prefetched)"
                     r"/1gpu/(?P<n>\d+)(/|$)")


def medians(run):
    """(kind, variant, T, gpus, n) -> median G updates/s (the wave's kinds carry the order:
    ("wave", order) and ("wave_overlap", order)); and the ceilings' medians (GB/s, GFMA/s)."""
    rate, roofs = defaultdict(list), defaultdict(list)
    for row in run.rows:
        m = NAME.match(row.name)
        if m:
            rate[(m["kind"], m["v"], int(m["t"]), int(m["g"]), int(m["n"]))].append(row.fields.get("Gpts/s", float("nan")))
        w = WAVE.match(row.name)
        if w and (w["family"] == "temporal") == (w["t"] is not None):
            key = ((w["kind"], int(w["order"])), w["v"], int(w["t"] or 1), int(w["g"]), int(w["n"]))
            rate[key].append(row.fields.get("Gpts/s", float("nan")))
        r = ROOF.match(row.name)
        if r:
            roofs[r["what"]].append(row.fields.get("GB/s" if r["what"] == "copy" else "GFMA/s", float("nan")))
    return ({k: stats.median(v) for k, v in rate.items()}, {k: stats.median(v) for k, v in roofs.items()})


def diamond_medians(run):
    """(order, n) -> {(R, schedule, T): median G updates/s} of the DiamondTorre variant's rows."""
    got = defaultdict(lambda: defaultdict(list))
    for row in run.rows:
        m = DIAMOND.match(row.name)
        if m:
            got[(int(m["order"]), int(m["n"]))][(int(m["r"]), m["sched"], int(m["t"]))].append(
                row.fields.get("Gpts/s", float("nan")))
    return {k: {r: stats.median(v) for r, v in rows.items()} for k, rows in got.items()}


def diamond_lines(diamond, roofs):
    """Per order and grid: the DiamondTorre variant's rows against R1w (same run)."""
    r1w = roofs.get("copy", float("nan")) / 24
    lines = []
    for (order, n), rows in sorted(diamond.items()):
        lines += [f"## Wave, order {order}, DiamondTorre variant, one GPU, {n}^3", "",
                  "| R | reads | T | G updates/s | x R1w |", "|---:|---|---:|---:|---:|"]
        lines += [f"| {r} | {sched.replace('_', ' ')} | {t} | {g:.1f} | {g / r1w:.3f} |" for (r, sched, t), g in sorted(rows.items())]
        lines.append("")
    return lines


def _cell(value, spec):
    """A table cell: the value in `spec`, or a dash where it was not measured (NaN)."""
    return format(value, spec) if value == value else "–"


def overlap_table(rate, kind, steps, g, title, single, n, skip_missing=False):
    """An overlapped table: per T the raw and cush rates of `kind` on g GPUs, cush / raw and the
    efficiency against g x `single` (the one-GPU rate per T); rows with neither rate left out
    where `skip_missing`."""
    nan = float("nan")
    lines = [title, "", "| T | raw G/s | cush G/s | cush / raw | E (cush) |", "|---:|---:|---:|---:|---:|"]
    for t in steps:
        raw = rate.get((kind, "multi_cuda", t, g, n), nan)
        cush = rate.get((kind, "multi_cush", t, g, n), nan)
        if not skip_missing or raw == raw or cush == cush:
            lines.append(f"| {t} | {_cell(raw, '.1f')} | {_cell(cush, '.1f')} | {_cell(cush / raw, '.3f')} | "
                         f"{_cell(cush / (g * single.get(t, nan)), '.3f')} |")
    return lines + [""]


def wave_lines(rate, roofs):
    """The wave's tables: per order and grid, one GPU by T against R1w, then per GPU count the
    overlapped variants."""
    nan = float("nan")
    r1w = roofs.get("copy", nan) / 24
    lines = [f"Wave: copy {roofs.get('copy', nan):.0f} GB/s, R1w = {r1w:.1f} G updates/s.", ""]
    for order in sorted({k[0][1] for k in rate if isinstance(k[0], tuple)}):
        single_kind, overlap_kind = ("wave", order), ("wave_overlap", order)
        for n in sorted({k[4] for k in rate if k[0] in (single_kind, overlap_kind)}):
            steps = sorted({k[2] for k in rate if k[0] in (single_kind, overlap_kind) and k[4] == n})
            single = {t: rate.get((single_kind, "single", t, 1, n), nan) for t in steps}
            lines += [f"## Wave, order {order}, one GPU, {n}^3 (single-GPU reference)", "",
                      "| T | G updates/s | x R1w | x T = 1 |", "|---:|---:|---:|---:|"]
            lines += [f"| {t} | {single[t]:.1f} | {single[t] / r1w:.3f} | {single[t] / single.get(1, nan):.3f} |"
                      for t in steps if single[t] == single[t]]
            lines.append("")
            for g in sorted({k[3] for k in rate if k[0] == overlap_kind and k[4] == n}):
                title = f"## Wave, order {order}, {g} GPU{'s' if g > 1 else ''}, {n}^3, overlapped"
                lines += overlap_table(rate, overlap_kind, steps, g, title, single, n, skip_missing=True)
    return lines


def page(run):
    nan = float("nan")
    rate, roofs = medians(run)
    ctx = run.context
    lines = [f"# temporal ({ctx.get('date', '?')}, {ctx.get('gpu_count', '?')} x {ctx.get('gpus', '?')})", ""]
    lines += error_lines(run)
    diamond = diamond_medians(run)
    if diamond:
        lines += diamond_lines(diamond, roofs)
    if not rate:
        return lines
    if any(isinstance(k[0], tuple) for k in rate):
        lines += wave_lines(rate, roofs)
        rate = {k: v for k, v in rate.items() if not isinstance(k[0], tuple)}
        if not rate:
            return lines
    r1 = roofs.get("copy", nan) / 16
    f27 = roofs.get("fp64_fma", nan) / 27
    lines += [f"Ceilings: copy {roofs.get('copy', nan):.0f} GB/s, R1 = {r1:.1f} G updates/s; FP64 FMA "
              f"{roofs.get('fp64_fma', nan):.0f} G/s, F / 27 = {f27:.1f} G updates/s.", ""]
    for kind, form in (("advection", ""), ("advection_factorized", ", factorized")):
        overlap_kind = kind + "_overlap"
        mine = {k: v for k, v in rate.items() if k[0] in (kind, overlap_kind)}
        steps = sorted({k[2] for k in mine})
        for n in sorted({k[4] for k in mine}):
            single = {t: rate.get((kind, "single", t, 1, n), nan) for t in steps}
            lines += [f"## One GPU, {n}^3 (single-GPU reference{form})", "",
                      "| T | G updates/s | x R1 | x F / 27 | x T = 1 |", "|---:|---:|---:|---:|---:|"]
            for t in steps:
                s = single[t]
                lines.append(f"| {t} | {s:.1f} | {s / r1:.3f} | {s / f27:.3f} | {s / single.get(1, nan):.3f} |")
            lines.append("")
            for g in sorted({k[3] for k in mine if k[0] == overlap_kind and k[4] == n}):
                title = f"## {g} GPU{'s' if g > 1 else ''}, {n}^3, overlapped{form}"
                lines += overlap_table(rate, overlap_kind, steps, g, title, single, n)
    return lines


def render(runs):
    return "\n".join(line for run in runs for line in page(run)) + "\n"


def figures(run):
    """summary.json's entries of one run: per case (the wave per order) and grid, the single-GPU
    rate at its best number of steps a launch (steps_per_launch; 1 where the kernel fuses none)
    against the same run's one-step roofline (R1, R1w), and at that T on the most GPUs,
    overlapped, cush against raw with the efficiency E_g (`best_steps_overlap`; where that T is not
    1, the one-step row too, `one_step_overlap`); per order and grid, the DiamondTorre
    variant's best row against R1w (with its T, R and schedule)."""
    nan = float("nan")
    rate, roofs = medians(run)
    copy = roofs.get("copy")
    if copy is None:
        return []
    entries = []
    for kind in sorted({k[0] for k in rate if k[0] in ("advection", "advection_factorized")
                        or (isinstance(k[0], tuple) and k[0][0] == "wave")}, key=str):
        wave = isinstance(kind, tuple)
        name = f"wave.order{kind[1]}" if wave else kind
        overlap_kind = ("wave_overlap", kind[1]) if wave else kind + "_overlap"
        roof, roof_name = (copy / 24, "R1w: copy / 24 B") if wave else (copy / 16, "R1: copy / 16 B")
        for n in sorted({k[4] for k in rate if k[0] == kind}):
            single = {k[2]: v for k, v in rate.items() if k[0] == kind and k[1] == "single" and k[4] == n}
            if not single:
                continue
            t = max(single, key=single.get)
            entries.append(figure(f"{name}.1gpu.best_steps.rate_n{n}", round(single[t], 1), "G point updates/s",
                                  reference=round(roof, 1), reference_is=f"one-step roofline, same run ({roof_name})",
                                  ratio=round(single[t] / roof, 3), **measured_in(run), steps_per_launch=t))
            # The overlapped row at that T on the most GPUs, and, where that T is not 1, the one-step row too.
            for label, steps in (("best_steps_overlap", t), ("one_step_overlap", 1)):
                if label == "one_step_overlap" and (t == 1 or 1 not in single):
                    continue
                multi = {k[3] for k in rate if k[0] == overlap_kind and k[4] == n and k[3] > 1 and k[2] == steps}
                if not multi:
                    continue
                g = max(multi)
                raw = rate.get((overlap_kind, "multi_cuda", steps, g, n), nan)
                cush = rate.get((overlap_kind, "multi_cush", steps, g, n), nan)
                if raw == raw and cush == cush:
                    entries.append(figure(f"{name}.{g}gpu.{label}.rate_n{n}", round(cush, 1), "G point updates/s",
                                          reference=round(raw, 1), reference_is="multi-GPU raw CUDA, same run",
                                          ratio=round(cush / raw, 3), **measured_in(run), steps_per_launch=steps,
                                          efficiency=round(cush / (g * single[steps]), 3)))
    for (order, n), rows in sorted(diamond_medians(run).items()):
        (r, sched, t), best = max(rows.items(), key=lambda kv: kv[1])
        roof = copy / 24
        entries.append(figure(f"wave.order{order}.1gpu.diamond.rate_n{n}", round(best, 1), "G point updates/s",
                              reference=round(roof, 1), reference_is="one-step roofline, same run (R1w: copy / 24 B)",
                              ratio=round(best / roof, 3), **measured_in(run), steps_per_sweep=t, radius=r,
                              reads=sched))
    return entries
