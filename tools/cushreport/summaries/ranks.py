"""The cases across processes (issue 49): bench_ranks rows (one MPI process per GPU) against the
bench_cases rows of one process driving as many GPUs, from the files of one call.

Rows: case/<case>_ranks[_<series>]/<rank_cush|rank_cush_nccl|rank_cuda>/<p>proc/<n> (bench_ranks;
rank_cush_nccl: the cush variant with its faces between processes forced onto NCCL) and
case/<case>[_<series>]/<multi_cush|multi_cuda>/<p>gpu/<n> (bench_cases), e.g.
case/advection_ranks_overlap/rank_cush/4proc/1024 and case/advection_overlap/multi_cush/4gpu/1024.
Every ratio pairs two rows of the same call (the files given together). In docs/results/data a
call's bench_ranks file is multi_gpu_<call>_ranks.json, beside its bench_cases rows, and the report
(report.py, multi_gpu_figures) puts these figures into summary.json with the multi-GPU goals.

The goals: the cush variant across p processes at least 0.97 x the rate of one process driving p
GPUs, per family and size; and cush across
processes no slower than the raw MPI + NCCL twin: seed 002's F-test (eq. 2.2, perf.f_test) of the
log-time curves over the sizes (no significant difference at 95%, or cush faster).

Rates, not times: the two benchmarks need not time the same number of steps (bench_ranks times 10,
bench_cases' advection rows 12), so a ratio is of the rows' rate counters (RATES: G points/s,
MLUPS) where both rows have the same one, and of their times only where neither has one.

Names: <case>.<p>proc[.<series>].n<n>.rank_cush_vs_1proc (and rank_cush_nccl_vs_1proc and
rank_cuda_vs_1proc, no goal), and
<case>.<p>proc[.<series>].rank_cush_vs_rank_cuda (the F-test).
"""
import re
from collections import defaultdict

from .. import perf, stats
from ..figures import figure, measured_in

RANKS = re.compile(r"^case/(?P<case>[a-z0-9]+)_ranks(?:_(?P<series>[a-z0-9_]+))?/(?P<v>rank_cush_nccl|rank_cush|rank_cuda)/"
                   r"(?P<p>\d+)proc/(?P<n>\d+)(?:/|$)")
ONE = re.compile(r"^case/(?P<case>[a-z0-9]+)(?:_(?P<series>[a-z0-9_]+))?/(?P<v>multi_cush|multi_cuda)/"
                 r"(?P<g>\d+)gpu/(?P<n>\d+)(?:/|$)")
GOAL = 0.97
RATES = ("Gpts/s", "MLUPS")  # the rate counters of the cases' rows, work per second
PAIR = {"rank_cush": "multi_cush", "rank_cuda": "multi_cuda"}
# Every variant across processes and the one-process row it is held against.
AGAINST = {"rank_cush": "multi_cush", "rank_cush_nccl": "multi_cush", "rank_cuda": "multi_cuda"}


def rate_of(row):
    """(counter, value) of the row's rate counter, or None."""
    return next(((c, row.fields[c]) for c in RATES if isinstance(row.fields.get(c), (int, float))), None)


def samples(runs):
    """(case, series, variant, gpus, n) -> [row] over the runs, and the run each key came from."""
    out, where = defaultdict(list), {}
    for run in runs:
        for row in run.rows:
            m = RANKS.match(row.name)
            g = "p"
            if not m:
                m, g = ONE.match(row.name), "g"
            if not m:
                continue
            key = (m["case"], m["series"] or "", m["v"], int(m[g]), int(m["n"]))
            out[key].append(row)
            where[key] = run
    return out, where


def times(rows):
    return [r.ms for r in rows]


def shown(rows):
    """(median, unit) of the rows: their rate counter's where every row has the same one, else ms."""
    rates = [rate_of(r) for r in rows]
    units = {r[0] for r in rates if r}
    if all(rates) and len(units) == 1:
        return stats.median([r[1] for r in rates]), units.pop()
    return stats.median(times(rows)), "ms"


def pair(ranks, single):
    """(median of `ranks`, median of `single`, rate of `ranks` / rate of `single`, unit): both in
    their common rate counter where they have one, else both in ms."""
    (a, ua), (b, ub) = shown(ranks), shown(single)
    if ua == ub and ua != "ms":
        return a, b, a / b, ua
    a, b = stats.median(times(ranks)), stats.median(times(single))
    return a, b, b / a, "ms"


def name(case, p, series, *rest):
    return ".".join([case, f"{p}proc"] + ([series] if series else []) + list(rest))


def families(got):
    """(case, series, p) of every family measured across processes."""
    return sorted({(k[0], k[1], k[3]) for k in got if k[2] in PAIR})


def figures(runs):
    """The summary.json entries of the files of one call (see the module's comment)."""
    got, where = samples(runs)
    out = []
    for case, series, p in families(got):
        sizes = sorted({k[4] for k in got if k[:2] == (case, series) and k[3] == p and k[2] in PAIR})
        for n in sizes:
            for v, one in AGAINST.items():
                ranks, single = got.get((case, series, v, p, n)), got.get((case, series, one, p, n))
                if not ranks or not single:
                    continue
                _, ref, ratio, unit = pair(ranks, single)
                extra = {"goal": f"rate >= {GOAL} x one process on {p} GPUs: {'met' if ratio >= GOAL else 'not met'}"} \
                    if v == "rank_cush" else {}
                out.append(figure(name(case, p, series, f"n{n}", f"{v}_vs_1proc"), round(ratio, 4),
                                  f"rate across {p} processes / rate of one process on {p} GPUs",
                                  **measured_in(where[(case, series, v, p, n)]),
                                  reference=round(ref, 4), reference_is=f"one process, {one}, {unit}",
                                  ratio=round(ratio, 4), **extra))
        # Both of one benchmark (the same steps): their times.
        raw = {k[4]: times(v) for k, v in got.items() if k[:4] == (case, series, "rank_cuda", p)}
        cush = {k[4]: times(v) for k, v in got.items() if k[:4] == (case, series, "rank_cush", p)}
        r = perf.f_test(raw, cush)
        if r is None:
            continue
        verdict = "no significant difference at 95%" if not r["differ"] else \
            f"different at 95%: cush {'faster' if r['speed'] > 1 else 'slower'}"
        out.append(figure(name(case, p, series, "rank_cush_vs_rank_cuda"), round(r["speed"], 4),
                          "speed (raw MPI + NCCL time / cush time)", **measured_in(where[next(iter(
                              k for k in got if k[:4] == (case, series, "rank_cush", p)))]),
                          f_test=f"{verdict} (p = {r['p']:.3g})",
                          goal=f"F-test: no difference at 95%, or cush faster: "
                               f"{'met' if not r['differ'] or r['speed'] > 1 else 'not met'}"))
    return out


def render(runs):
    """A table per family: each size's medians across processes and in one process, and the ratios."""
    got, _ = samples(runs)
    lines = ["# Cases across processes (one MPI process per GPU)", "",
             "Medians of the repetitions: the rows' rate counter (G points/s, MLUPS: the unit after each "
             "family's name), or ms where the rows have none. \"rate / one process\": the rate across p processes "
             f"over the rate of one process driving p GPUs, same call (goal for cush: >= {GOAL}).", ""]
    found = families(got)
    if not found:
        return "\n".join(lines + ["No case/<case>_ranks rows in these files.", ""])
    for case, series, p in found:
        nccl = any(k[:4] == (case, series, "rank_cush_nccl", p) for k in got)
        head = "| n | cush, p processes | cush, one process | rate / one process |"
        rule = "|---:|---:|---:|---:|"
        if nccl:
            head += " cush over NCCL, p processes | rate / one process |"
            rule += "---:|---:|"
        keys = [k for k in got if k[:2] == (case, series) and k[3] == p]
        table, units = [], set()
        for n in sorted({k[4] for k in keys}):
            cells = []
            for v, one in AGAINST.items():
                if v == "rank_cush_nccl" and not nccl:
                    continue
                a, b = got.get((case, series, v, p, n)), got.get((case, series, one, p, n))
                if a and b:
                    ma, mb, ratio, unit = pair(a, b)
                    units.add(unit)
                    ma, mb, ratio = f"{ma:.3f}", f"{mb:.3f}", f"{ratio:.3f}"
                else:
                    ma, mb, ratio = (f"{shown(a)[0]:.3f}" if a else "-"), (f"{shown(b)[0]:.3f}" if b else "-"), "-"
                    if a or b:
                        units.add(shown(a or b)[1])
                cells += [ma, ratio] if v == "rank_cush_nccl" else [ma, mb, ratio]
            table.append(f"| {n} | " + " | ".join(cells) + " |")
        unit = units.pop() if len(units) == 1 else "mixed units: each pair in its common rate, else ms"
        lines += [f"## {case}{' ' + series if series else ''}, {p} processes ({unit})", "",
                  head + " raw MPI + NCCL | raw CUDA, one process | rate / one process |", rule + "---:|---:|---:|"]
        lines += table
        lines.append("")
    return "\n".join(lines)
