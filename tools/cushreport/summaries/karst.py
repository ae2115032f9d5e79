"""The karst case (bench_cases rows named in cases/karst/bench_karst.cpp).

Rows: case/karst/<variant>/<g>[v]gpu/<K> (K members, N = 1024, M = 128, 2,000 steps),
case/karst_goal/<variant>/1gpu/512 (the issue's run: 20,000 steps), case/karst_streaming/single/1gpu/<K>
(the single variant on the streaming kernel path; the other rows take the resident one) and
cpu/karst/<t>threads/<K> (the CPU reference). Per K: forward runs per second (median of the
repetitions) of every variant and of the CPU, the single GPU over the CPU (the most threads
measured), resident over streaming; the goal run's seconds; per GPU count cush's speed relative to
raw CUDA with its 95% interval and the seed's F-test (eq. 2.2) over K. Ratios come from one file,
that is one run.

`figures` gives summary.json the figures behind the issue's goals on one GPU: the goal run's
seconds (<= 15 s), the single GPU over the CPU at K = 512 (>= 10x) and cush against raw (F-test: no
difference at 95%, or cush faster). Rows on virtual GPUs are left out of the figures.
"""
import re
from collections import defaultdict

from .. import perf, stats
from ..figures import figure, measured_in
from ..gbench import page_head

NAME = re.compile(r"^case/karst(?:_(?P<series>goal|streaming))?/(?P<v>single|multi_cuda|multi_cush)/"
                  r"(?P<g>\d+)(?P<virtual>v?)gpu/(?P<k>\d+)(?:/|$)")
CPU = re.compile(r"^cpu/karst/(?P<t>\d+)threads/(?P<k>\d+)(?:/|$)")
VARIANTS = ("single", "multi_cuda", "multi_cush")
LABEL = {"single": "single", "multi_cuda": "raw", "multi_cush": "cush", "cpu": "CPU"}
SINGLE = ("ensemble", "single", "1gpu")
GOAL_K, GOAL_STEPS, GOAL_S, GOAL_VS_CPU = 512, 20000, 15, 10


def samples(run):
    """(series, variant, on) -> {K: [ms]} and -> {K: [runs/s]}. series: ensemble, goal, streaming or
    cpu; on: "1gpu", "2vgpu" or, for the CPU (variant "cpu"), "16threads"."""
    times, rates = defaultdict(lambda: defaultdict(list)), defaultdict(lambda: defaultdict(list))
    for row in run.rows:
        m, c = NAME.match(row.name), CPU.match(row.name)
        if m:
            key = (m["series"] or "ensemble", m["v"], m["g"] + ("vgpu" if m["virtual"] else "gpu"))
        elif c:
            m, key = c, ("cpu", "cpu", c["t"] + "threads")
        else:
            continue
        times[key][int(m["k"])].append(row.ms)
        rates[key][int(m["k"])].append(row.fields.get("runs/s", float("nan")))
    return times, rates


def med(d, key, k):
    """The median of d[key][k], nan where it was not measured."""
    got = d.get(key, {}).get(k)
    return stats.median(got) if got else float("nan")


def count(on):
    return int(re.match(r"\d+", on)[0])


def where(on):
    """'1 GPU', '2 virtual GPUs', '16 threads'."""
    unit = {"gpu": "GPU", "vgpu": "virtual GPU", "threads": "thread"}[re.sub(r"^\d+", "", on)]
    return f"{count(on)} {unit}{'s' if count(on) > 1 else ''}"


def gpu_labels(times, virtual=True):
    """The GPU counts of the ensemble rows: real before virtual, fewest first."""
    ons = {on for series, _, on in times if series == "ensemble" and (virtual or not on.endswith("vgpu"))}
    return sorted(ons, key=lambda on: (on.endswith("vgpu"), count(on)))


def cpu_of(times):
    """The CPU reference's key with the most threads, or None."""
    return max((key for key in times if key[0] == "cpu"), key=lambda key: count(key[2]), default=None)


def rates_table(times, rates):
    columns = [("ensemble", v, on) for on in gpu_labels(times) for v in VARIANTS if ("ensemble", v, on) in times]
    columns += sorted((key for key in times if key[0] == "cpu"), key=lambda key: count(key[2]))
    lines = ["## Forward runs per second (N = 1024, M = 128, 2,000 steps)", "",
             "| K | " + " | ".join(f"{LABEL[v]}, {where(on)}" for _, v, on in columns) + " |",
             "|---:|" + "---:|" * len(columns)]
    for k in sorted({k for key in columns for k in times[key]}):
        cells = (med(rates, key, k) for key in columns)
        lines.append(f"| {k} | " + " | ".join(f"{x:,.1f}" if x == x else "-" for x in cells) + " |")
    return lines + [""]


def ratio_table(title, head, rates, top, bottom):
    """Runs per second of `top` and `bottom` at every K both measured, and their ratio."""
    ks = sorted(set(rates.get(top, {})) & set(rates.get(bottom, {})))
    if not ks:
        return []
    lines = [title, "", f"| K | {head} |", "|---:|---:|---:|---:|"]
    for k in ks:
        a, b = med(rates, top, k), med(rates, bottom, k)
        lines.append(f"| {k} | {a:,.1f} | {b:,.1f} | {a / b:.2f} |")
    return lines + [""]


def goal_table(times):
    got = [(v, med(times, ("goal", v, "1gpu"), GOAL_K) / 1e3) for v in VARIANTS]
    if all(s != s for _, s in got):
        return []
    lines = [f"## Goal run ({GOAL_K} members, {GOAL_STEPS:,} steps, 1 GPU; goal <= {GOAL_S} s)", "",
             "| variant | s | goal |", "|---|---:|---|"]
    lines += [f"| {LABEL[v]} | {s:.3f} | {'met' if s <= GOAL_S else 'not met'} |" for v, s in got if s == s]
    return lines + [""]


def curves(times, on):
    """({K: raw ms}, {K: cush ms}) on one GPU count."""
    return times.get(("ensemble", "multi_cuda", on), {}), times.get(("ensemble", "multi_cush", on), {})


def f_test_section(times, on):
    raw, cush = curves(times, on)
    ks = sorted(set(raw) & set(cush))
    if not ks:
        return []
    lines = [f"## cush against raw CUDA, {where(on)}", "",
             "| K | raw ms | cush ms | cush / raw speed (95% CI) |", "|---:|---:|---:|---|"]
    for k in ks:
        lines.append(f"| {k} | {stats.median(raw[k]):.3f} | {stats.median(cush[k]):.3f} | {perf.ci_text(raw[k], cush[k])} |")
    return lines + ["", perf.verdict(perf.f_test(raw, cush)), ""]


def page(run):
    times, rates = samples(run)
    lines = page_head("karst", run)
    lines += rates_table(times, rates)
    cpu = cpu_of(times)
    if cpu:
        lines += ratio_table(f"## GPU (single, 1 GPU) against the CPU ({where(cpu[2])}), runs per second",
                             "single | CPU | single / CPU", rates, SINGLE, cpu)
    lines += ratio_table("## single, resident against streaming kernel path (1 GPU), runs per second",
                         "resident | streaming | resident / streaming", rates, SINGLE, ("streaming", "single", "1gpu"))
    lines += goal_table(times)
    for on in gpu_labels(times):
        lines += f_test_section(times, on)
    return lines


def render(runs):
    return "\n".join(line for run in runs for line in page(run)) + "\n"


def figures(run):
    """On real GPUs: the goal run's seconds per variant, the single GPU's runs per second against
    the CPU's at K = 512, and per GPU count cush against raw at the largest K with the F-test over K."""
    times, rates = samples(run)
    entries = []
    for v in VARIANTS:
        s = med(times, ("goal", v, "1gpu"), GOAL_K) / 1e3
        if s == s:
            entries.append(figure(f"karst.1gpu.goal_run.{v}", round(s, 3), "s", **measured_in(run),
                                  goal=f"<= {GOAL_S} s for {GOAL_K} members, {GOAL_STEPS:,} steps"))
    cpu = cpu_of(times)
    gpu, ref = med(rates, SINGLE, GOAL_K), (med(rates, cpu, GOAL_K) if cpu else float("nan"))
    if gpu == gpu and ref == ref:
        entries.append(figure(f"karst.1gpu.single_vs_cpu.k{GOAL_K}", round(gpu, 1), "runs/s", reference=round(ref, 1),
                              reference_is=f"the CPU reference on {where(cpu[2])}, same run", ratio=round(gpu / ref, 3),
                              **measured_in(run), goal=f">= {GOAL_VS_CPU} x the CPU's runs per second at K = {GOAL_K}"))
    for on in gpu_labels(times, virtual=False):
        raw, cush = curves(times, on)
        r = perf.f_test(raw, cush)
        if r is None:
            continue
        k = max(set(raw) & set(cush))
        c, x = med(rates, ("ensemble", "multi_cush", on), k), med(rates, ("ensemble", "multi_cuda", on), k)
        verdict = ("no significant difference at 95%" if not r["differ"] else
                   f"different at 95%: cush {'faster' if r['speed'] > 1 else 'slower'} (p = {r['p']:.3g})")
        entries.append(figure(f"karst.{on}.cush_vs_raw.k{k}", round(c, 1), "runs/s", reference=round(x, 1),
                              reference_is="raw CUDA (multi_cuda), same run", ratio=round(c / x, 4), **measured_in(run),
                              f_test=verdict, goal="F-test over K: no difference at 95%, or cush faster"))
    return entries
