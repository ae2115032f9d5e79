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
GPUs (its time over the one-process time, inverted), per family and size; and cush across
processes no slower than the raw MPI + NCCL twin: seed 002's F-test (eq. 2.2, perf.f_test) of the
log-time curves over the sizes (no significant difference at 95%, or cush faster).

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
PAIR = {"rank_cush": "multi_cush", "rank_cuda": "multi_cuda"}
# Every variant across processes and the one-process row it is held against.
AGAINST = {"rank_cush": "multi_cush", "rank_cush_nccl": "multi_cush", "rank_cuda": "multi_cuda"}


def samples(runs):
    """(case, series, variant, gpus, n) -> [ms] over the runs, and the run each key came from."""
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
            out[key].append(row.ms)
            where[key] = run
    return out, where


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
                ratio = stats.median(single) / stats.median(ranks)
                extra = {"goal": f"rate >= {GOAL} x one process on {p} GPUs: {'met' if ratio >= GOAL else 'not met'}"} \
                    if v == "rank_cush" else {}
                out.append(figure(name(case, p, series, f"n{n}", f"{v}_vs_1proc"), round(ratio, 4),
                                  f"rate across {p} processes / rate of one process on {p} GPUs",
                                  **measured_in(where[(case, series, v, p, n)]),
                                  reference=round(stats.median(single), 4), reference_is=f"one process, {one}, ms",
                                  ratio=round(ratio, 4), **extra))
        raw = {k[4]: v for k, v in got.items() if k[:4] == (case, series, "rank_cuda", p)}
        cush = {k[4]: v for k, v in got.items() if k[:4] == (case, series, "rank_cush", p)}
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
             "Medians of the repetitions, ms. \"rate / one process\": the rate across p processes over the rate "
             f"of one process driving p GPUs, same call (goal for cush: >= {GOAL}).", ""]
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
        lines += [f"## {case}{' ' + series if series else ''}, {p} processes", "",
                  head + " raw MPI + NCCL | raw CUDA, one process | rate / one process |", rule + "---:|---:|---:|"]
        for n in sorted({k[4] for k in got if k[:2] == (case, series) and k[3] == p}):
            cells = []
            for v, one in AGAINST.items():
                if v == "rank_cush_nccl" and not nccl:
                    continue
                a, b = got.get((case, series, v, p, n)), got.get((case, series, one, p, n))
                ma = stats.median(a) if a else None
                mb = stats.median(b) if b else None
                if v == "rank_cush_nccl":
                    cells += [f"{ma:.3f}" if ma else "-", f"{mb / ma:.3f}" if ma and mb else "-"]
                    continue
                cells += [f"{ma:.3f}" if ma else "-", f"{mb:.3f}" if mb else "-",
                          f"{mb / ma:.3f}" if ma and mb else "-"]
            lines.append(f"| {n} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)
