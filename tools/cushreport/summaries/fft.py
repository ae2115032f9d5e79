"""The FFT case (bench_cases rows named in cases/fft/bench_fft.cpp).

Rows end in log2 N: case/fft[_weak|_e2e]_<mode>/<variant>/<g>[v]gpu/<e> and part/fft/<piece>/1gpu/<e>.
Per series, mode and GPU count: the median time of each variant, GFLOP/s (5 N log2 N / t) of cush,
the cush time over the single cuFFT call's (the extra passes the four-step algorithm costs; the
single call is measured in natural order only, and every mode is compared with it), cush's speed
relative to raw CUDA with its 95% interval, cufftXt where it ran, and the seed's F-test (eq. 2.2)
of cush against raw over the sizes. The pieces: milliseconds and GB/s of one pass (read + write of
N complex floats). Ratios come from one file, that is one run.

`figures` gives summary.json what docs/results/fft.md states for the issue's goals: at 2^28 on one
GPU the cush time against the single call (natural and transposed output), and on two virtual
GPUs cush against cufftXt.
"""
import re
from collections import defaultdict

from .. import perf, stats
from ..figures import figure, measured_in
from ..gbench import page_head

NAME = re.compile(r"^case/fft(?:_(?P<series>weak|e2e))?_(?P<mode>natural|transposed_out|transposed)/"
                  r"(?P<v>single|multi_cuda|multi_cush|cufftxt)/(?P<g>\d+)(?P<virtual>v?)gpu/(?P<e>\d+)/")
PIECE = re.compile(r"^part/fft/(?P<piece>[a-z_0-9]+)/1gpu/(?P<e>\d+)/")
MODES = ("natural", "transposed_out", "transposed")
BYTES_PER_POINT = 8  # a complex float
# The goals at 2^28 on one GPU: the cush time at most this many times the single call's.
GOAL_VS_SINGLE = {"natural": 1.6, "transposed_out": 1.3}
GOAL_VS_CUFFTXT = 1.3  # two virtual GPUs, natural order: cush at least this much faster


def samples(run):
    """(series, mode, gpus label, e) -> {variant: [ms]}, and (piece, e) -> [ms]."""
    cases, pieces = defaultdict(lambda: defaultdict(list)), defaultdict(list)
    for row in run.rows:
        m = NAME.match(row.name)
        if m:
            cases[(m["series"] or "strong", m["mode"], m["g"] + ("vgpu" if m["virtual"] else "gpu"), int(m["e"]))][m["v"]].append(row.ms)
            continue
        p = PIECE.match(row.name)
        if p:
            pieces[(p["piece"], int(p["e"]))].append(row.ms)
    return cases, pieces


def gflops(e, ms):
    """5 N log2 N / t in GFLOP/s for N = 2^e."""
    return 5 * 2 ** e * e / (ms * 1e-3) / 1e9


def points_of(series, e, gpus):
    """log2 of the total N of a row (weak rows: 2^e per GPU; the GPU counts are powers of two)."""
    if series != "weak":
        return e
    return e + int(re.match(r"\d+", gpus)[0]).bit_length() - 1


def single_of(cases, series, e, gpus):
    """The single cuFFT call's samples for the same total N (measured on 1 GPU, natural order)."""
    n = points_of(series, e, gpus)
    for key in ((series, "natural", "1gpu", e), ("strong", "natural", "1gpu", n)):
        got = cases.get(key, {}).get("single")
        if got:
            return got
    return None


def series_table(cases, series, mode, gpus):
    keys = sorted(k for k in cases if k[:3] == (series, mode, gpus))
    label = {"strong": "N", "weak": "points per GPU", "e2e": "N, host to host"}[series]
    lines = [f"## {series}, {mode.replace('_', ' ')}, {gpus.replace('vgpu', ' virtual GPUs').replace('gpu', ' GPU(s)')}", "",
             f"| {label} | single ms | raw ms | cush ms | cufftXt ms | cush / single time | cush / raw speed (95% CI) | cush GFLOP/s |",
             "|---:|---:|---:|---:|---:|---:|---|---:|"]
    raw_by, cush_by = {}, {}
    for key in keys:
        e = key[3]
        got = cases[key]
        single = single_of(cases, series, e, gpus)
        raw, cush, xt = got.get("multi_cuda"), got.get("multi_cush"), got.get("cufftxt")

        def ms(s):
            return f"{stats.median(s):.3f}" if s else "-"
        vs_single = f"{stats.median(cush) / stats.median(single):.3f}" if cush and single else "-"
        speed = perf.ci_text(raw, cush) if raw and cush else "-"
        rate = f"{gflops(points_of(series, e, gpus), stats.median(cush)):,.0f}" if cush else "-"
        lines.append(f"| 2^{e} | {ms(single)} | {ms(raw)} | {ms(cush)} | {ms(xt)} | {vs_single} | {speed} | {rate} |")
        if raw and cush:
            raw_by[2 ** e], cush_by[2 ** e] = raw, cush
    lines += ["", perf.verdict(perf.f_test(raw_by, cush_by)), ""]
    return lines


def piece_table(pieces):
    lines = ["## Pieces of the cush variant, one GPU (ms; GB/s of one pass: N complex floats read and written)", "",
             "| piece | N | ms | GB/s |", "|---|---:|---:|---:|"]
    for (piece, e), ms in sorted(pieces.items()):
        t = stats.median(ms)
        lines.append(f"| {piece} | 2^{e} | {t:.3f} | {2 * BYTES_PER_POINT * 2 ** e / (t * 1e-3) / 1e9:,.0f} |")
    return lines + [""]


def page(run):
    cases, pieces = samples(run)
    lines = page_head("fft", run)
    groups = sorted({k[:3] for k in cases}, key=lambda k: (("strong", "weak", "e2e").index(k[0]), MODES.index(k[1]), k[2]))
    for series, mode, gpus in groups:
        lines += series_table(cases, series, mode, gpus)
    if pieces:
        lines += piece_table(pieces)
    return lines


def render(runs):
    return "\n".join(line for run in runs for line in page(run)) + "\n"


def figures(run):
    """At 2^28: on one GPU the cush time over the single call's per mode (the issue's goals); on
    two virtual GPUs cush against cufftXt in natural order."""
    cases, _ = samples(run)
    entries = []
    single = cases.get(("strong", "natural", "1gpu", 28), {}).get("single")
    for mode, goal in GOAL_VS_SINGLE.items():
        cush = cases.get(("strong", mode, "1gpu", 28), {}).get("multi_cush")
        if cush and single:
            c, s = stats.median(cush), stats.median(single)
            entries.append(figure(f"fft.1gpu.{mode}.cush_vs_single.2e28", round(c, 3), "ms", reference=round(s, 3),
                                  reference_is="one cuFFT call of N points (natural order), same run",
                                  ratio=round(s / c, 3), **measured_in(run),
                                  goal=f"cush time <= {goal} x the single call's"))
    got = cases.get(("strong", "natural", "2vgpu", 28), {})
    if got.get("multi_cush") and got.get("cufftxt"):
        c, x = stats.median(got["multi_cush"]), stats.median(got["cufftxt"])
        entries.append(figure("fft.2vgpu.natural.cush_vs_cufftxt.2e28", round(c, 3), "ms", reference=round(x, 3),
                              reference_is="cufftXt on the same two virtual GPUs, natural order, same run",
                              ratio=round(x / c, 3), **measured_in(run), virtual_gpus=run.context.get("virtual_gpus", ""),
                              goal=f"cush at least {GOAL_VS_CUFFTXT} x faster than cufftXt"))
    return entries
