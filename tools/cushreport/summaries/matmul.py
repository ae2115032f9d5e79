"""The matmul case (bench_cases rows named in cases/matmul/bench_matmul.cpp).

Per family (FP32 and FP64 end to end, weak scaling, device-resident) and GPU count: the median
time and GFLOP/s (2 m n p / t) of each variant, cush's speed over raw CUDA (raw time / cush time),
and for FP32 end to end cuBLASXt's best tile against cush (xt time / cush time: > 1, cush faster).
Resident rows add the speed-up of g GPUs over the single-GPU reference; end-to-end families the
report's F-test (seed 002 eq. 2.2). Ratios come from one file, that is one run.

`figures` gives summary.json what docs/results/matmul.md states beside the report's case
entries: TFLOP/s of the resident and FP64 products, and cush against the best cuBLASXt tile.
"""
import re
from collections import defaultdict

from .. import stats
from ..figures import figure, measured_in
from ..gbench import error_lines
from ..perf import f_test, verdict

NAME = re.compile(r"^(?P<fam>case/matmul(?:_f64|_weak)?|resident/matmul)/(?P<v>single|multi_cuda|multi_cush)/(?P<g>\d+)gpu/(?P<k>\d+)")
XT = re.compile(r"^xt/(?P<fam>matmul(?:_f64)?)/(?P<block>\d+)/(?P<g>\d+)gpu/(?P<k>\d+)")
TFLOPS_FIGURES = [("resident/matmul", "resident", (20, 32, 40)), ("case/matmul_f64", "f64", (20,))]  # matmul.md's k


def samples(run, xt_family="matmul"):
    """(family, variant, gpus, k) -> [ms] and -> [GFLOP/s]; (tile, gpus, k) -> [ms] of cuBLASXt in
    the precision of `xt_family` (matmul: FP32, matmul_f64: FP64)."""
    times, rates, xt = defaultdict(list), defaultdict(list), defaultdict(list)
    for row in run.rows:
        m = NAME.match(row.name)
        if m:
            key = (m["fam"], m["v"], int(m["g"]), int(m["k"]))
            times[key].append(row.ms)
            rates[key].append(row.fields.get("GFLOP/s", float("nan")))
            continue
        m = XT.match(row.name)
        if m and m["fam"] == xt_family:
            xt[(int(m["block"]), int(m["g"]), int(m["k"]))].append(row.ms)
    return times, rates, xt


def med(v):
    return stats.median(v) if v else float("nan")


def best_xt(xt, g, k):
    """(median ms, tile) of the fastest cuBLASXt tile on g GPUs at k, or None."""
    return min(((med(v), blk) for (blk, gg, kk), v in xt.items() if (gg, kk) == (g, k)), default=None)


def family_table(fam, g, ks, times, rates, xt):
    head = "| k | single ms | raw ms | cush ms | cush GFLOP/s | cush / raw speed |"
    sep = "|---:|---:|---:|---:|---:|---:|"
    if fam == "case/matmul":
        head += " best cuBLASXt ms (tile) | xt / cush |"
        sep += "---:|---:|"
    if fam == "resident/matmul":
        head += " speed-up over single (cush, raw) |"
        sep += "---:|"
    lines = [f"## {fam}, {g} GPU{'s' if g > 1 else ''}", "", head, sep]
    for k in ks:
        single = med(times.get((fam, "single", 1, k)))
        raw = med(times.get((fam, "multi_cuda", g, k)))
        cush = med(times.get((fam, "multi_cush", g, k)))
        if raw != raw and cush != cush:
            continue
        row = (f"| {k} | {single:.3f} | {raw:.3f} | {cush:.3f} | {med(rates.get((fam, 'multi_cush', g, k))):.0f} "
               f"| {raw / cush:.3f} |")
        if fam == "case/matmul":
            best = best_xt(xt, g, k)
            row += f" {best[0]:.3f} ({best[1]}) | {best[0] / cush:.3f} |" if best else " - | - |"
        if fam == "resident/matmul":
            row += f" {single / cush:.3f}, {single / raw:.3f} |"
        lines.append(row)
    if fam.startswith("case/"):
        raw_by = {k: times[(fam, "multi_cuda", g, k)] for k in ks if (fam, "multi_cuda", g, k) in times}
        cush_by = {k: times[(fam, "multi_cush", g, k)] for k in ks if (fam, "multi_cush", g, k) in times}
        lines += ["", verdict(f_test(raw_by, cush_by))]
    return lines + [""]


def tile_sweep(xt):
    """The cuBLASXt table: every tile at each (GPUs, k) where more than one was measured."""
    blocks = sorted({k[0] for k in xt})
    lines = ["## cuBLASXt tile sweep (ms)", "", "| GPUs | k | " + " | ".join(str(b) for b in blocks) + " |",
             "|---:|---:|" + "---:|" * len(blocks)]
    for g, k in sorted({(k[1], k[2]) for k in xt}):
        if sum((b, g, k) in xt for b in blocks) >= 2:
            lines.append(f"| {g} | {k} | " + " | ".join(f"{med(xt.get((b, g, k))):.3f}" for b in blocks) + " |")
    return lines


def page(run):
    context = run.context
    times, rates, xt = samples(run)
    lines = [f"# matmul ({context.get('date', '?')}, {context.get('gpu_count', '?')} x {context.get('gpus', '?')}, "
             f"CUDA {context.get('cuda_runtime', '?')}, cush {context.get('cush', '?')})", ""]
    lines += error_lines(run)
    for fam in sorted({k[0] for k in times}):
        ks = sorted({k[3] for k in times if k[0] == fam})
        for g in sorted({k[2] for k in times if k[0] == fam}):
            lines += family_table(fam, g, ks, times, rates, xt)
    return lines + (tile_sweep(xt) if xt else [])


def render(runs):
    return "\n".join(line for run in runs for line in page(run)) + "\n"


def figures(run, tag):
    """On the most GPUs measured: cush's TFLOP/s against raw for the resident and FP64 products at
    the k that matmul.md quotes, and cush's end-to-end FP32 time against the best cuBLASXt tile at
    every k. `tag` names the run in the entries (matmul.md has two: "first", "rerun")."""
    times, rates, xt = samples(run)
    g = max((key[2] for key in times), default=1)
    entries = []
    for fam, what, ks in TFLOPS_FIGURES:
        for k in ks:
            cush, raw = (med(rates.get((fam, v, g, k))) / 1e3 for v in ("multi_cush", "multi_cuda"))
            if cush == cush and raw == raw:
                entries.append(figure(f"matmul.{g}gpu.{tag}.{what}_tflops_k{k}", round(cush, 1), "TFLOP/s",
                                      reference=round(raw, 1), reference_is="multi-GPU raw CUDA, same run",
                                      ratio=round(cush / raw, 3), **measured_in(run)))
    for k in sorted(key[3] for key in times if key[:3] == ("case/matmul", "multi_cush", g)):
        best = best_xt(xt, g, k)
        if best:
            cush = med(times[("case/matmul", "multi_cush", g, k)])
            entries.append(figure(f"matmul.{g}gpu.{tag}.vs_cublasxt_k{k}", round(cush, 3), "ms",
                                  reference=round(best[0], 3),
                                  reference_is=f"cuBLASXt, best tile measured ({best[1]}), same run",
                                  ratio=round(best[0] / cush, 3), **measured_in(run)))
    return entries
