"""The advection case (bench_cases rows named in cases/advection/bench_advection.cpp).

Per GPU count and grid: point updates per second of each variant and schedule, the fraction of
the roofline (16 bytes per update at 4.2 TB/s per GPU: 262.5 G updates/s per GPU, docs/results/peers.md),
cush against raw (ratio of rates), strong-scaling efficiency against the single-GPU reference,
and the share of the exchange that overlap hides: (bulk - overlap) / exchange alone. Ratios come
from one file, that is one run.

`figures` gives summary.json the roofline fractions that docs/results/advection.md states (the
cush/raw times and F-tests are the report's case entries already).
"""
import re
from collections import defaultdict

from .. import stats
from ..figures import figure, measured_in
from ..gbench import error_lines

ROOF_PER_GPU = 4.2e12 / 16 / 1e9  # G point updates/s
NAME = re.compile(r"^(?P<kind>case/advection|case/advection_overlap|deep/advection/(?P<depth>\d+)|exchange/advection)"
                  r"(?:/(?P<v>single|multi_cuda|multi_cush))?/(?P<g>\d+)gpu/(?P<n>\d+)")
ROOFLINE_FIGURES = [("single", 1024), ("multi_cush", 1024), ("single", 420), ("multi_cush", 420)]


def medians(run):
    """(kind, variant, gpus, n) -> median ms and -> median G point updates/s."""
    ms, rate = defaultdict(list), defaultdict(list)
    for row in run.rows:
        m = NAME.match(row.name)
        if m:
            key = (m["kind"], m["v"] or "", int(m["g"]), int(m["n"]))
            ms[key].append(row.ms)
            rate[key].append(row.fields.get("Gpts/s", float("nan")))
    return ({k: stats.median(v) for k, v in ms.items()}, {k: stats.median(v) for k, v in rate.items()})


def gpu_table(ms, rate, g, sizes):
    nan = float("nan")
    lines = [f"## {g} GPU{'s' if g > 1 else ''} (G point updates/s; % of roofline)", "",
             "| n | single | raw bulk | cush bulk | raw overlap | cush overlap | cush / raw (bulk, overlap) |"
             " deep 2 / 4 / 8 | hidden (raw, cush) | strong-scaling eff. (cush overlap) |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]

    def cell(x, gpus=g):
        return f"{x:.1f} ({100 * x / (ROOF_PER_GPU * gpus):.0f}%)" if x == x else "-"
    for n in sizes:
        def r(kind, v=""):
            return rate.get((kind, v, g, n), nan)
        single = rate.get(("case/advection", "single", 1, n), nan)
        rb, cb = r("case/advection", "multi_cuda"), r("case/advection", "multi_cush")
        ro, co = r("case/advection_overlap", "multi_cuda"), r("case/advection_overlap", "multi_cush")
        deep = " / ".join(f"{r(f'deep/advection/{d}'):.1f}" for d in (2, 4, 8))
        t_ex = ms.get(("exchange/advection", "", g, n), nan)
        hidden = []
        for v in ("multi_cuda", "multi_cush"):
            tb, to = ms.get(("case/advection", v, g, n), nan), ms.get(("case/advection_overlap", v, g, n), nan)
            hidden.append(f"{(tb - to) / t_ex:.2f}" if t_ex == t_ex and t_ex > 0 else "-")
        eff = f"{co / (g * single):.3f}" if single == single else "-"
        lines.append(f"| {n} | {cell(single, 1)} | {cell(rb)} | {cell(cb)} | {cell(ro)} | {cell(co)} | "
                     f"{cb / rb:.3f}, {co / ro:.3f} | {deep} | {', '.join(hidden)} | {eff} |")
    return lines + [""]


def page(run):
    ms, rate = medians(run)
    ctx = run.context
    lines = [f"# advection ({ctx.get('date', '?')}, {ctx.get('gpu_count', '?')} x {ctx.get('gpus', '?')})", ""]
    lines += error_lines(run)
    sizes = sorted({k[3] for k in ms})
    for g in sorted({k[2] for k in ms}):
        lines += gpu_table(ms, rate, g, sizes)
    return lines


def render(runs):
    return "\n".join(line for run in runs for line in page(run)) + "\n"


def figures(run):
    """Whole-step rate of the single-GPU reference and of cush (bulk) against the roofline, on one GPU."""
    _, rate = medians(run)
    entries = []
    for variant, n in ROOFLINE_FIGURES:
        value = rate.get(("case/advection", variant, 1, n))
        if value is not None:
            entries.append(figure(f"advection.1gpu.{variant}.rate_n{n}", round(value, 1), "G point updates/s",
                                  reference=ROOF_PER_GPU,
                                  reference_is="roofline: 16 bytes per update at 4.2 TB/s (peers.md), not measured",
                                  ratio=round(value / ROOF_PER_GPU, 3), **measured_in(run),
                                  goal="one GPU >= 0.80 of the roofline (>= 210 G updates/s)"))
    return entries
