"""What every multi-GPU goal shares: the figure names, thresholds keyed by GPU count, the verdicts,
and `Found`, what a goal function returns (summary.json entries, and lines saying what could not be
stated because a row was not measured).

Names: <case>.<g>gpu[.<series>][.<variant>.<size>].<comparison>, where <case> is the case (or
device_ops, halo), <g> the GPUs the figure was measured on, <series> the rest of the benchmark
family's name (case/lbm_weak_esoteric_fp32 -> lbm, weak_esoteric_fp32; case/matmul -> matmul, no
series), and <comparison> what it is held against: vs_<g>x_1gpu (g x the one-GPU figure),
vs_fluidx3d, vs_cublasxt, cush_vs_cufftxt, cush_vs_a2a_floor, cush_vs_raw (the F-test),
cush_vs_raw_nccl, cush_vs_raw_peer, exchange_hidden.
"""
import re

from ...gbench import device_of


def name(case, g, *parts):
    """'lbm.4gpu.esoteric_fp32.multi_cush.m1024.vs_4x_1gpu' from ('lbm', 4, 'esoteric_fp32', ...);
    empty parts are left out."""
    return ".".join([case, f"{g}gpu"] + [p for p in parts if p])


def split_family(family):
    """('lbm', 'weak_esoteric_fp32') of a bench_cases family (the name's second part)."""
    case, _, series = family.partition("_")
    return case, series


def gpus(n):
    return f"{n} GPU{'s' if n != 1 else ''}"


def met(ok):
    return "met" if ok else "not met"


def threshold(goals, g):
    """The issue's threshold for g GPUs from {g: threshold}, or None where it sets none."""
    return goals.get(g)


def no_threshold(goals, g):
    """The goal text of a ratio reported without a threshold at g GPUs."""
    where = ", ".join(f"{k} GPUs" for k in sorted(goals))
    return f"no threshold on {gpus(g)} (the issue's: at {where})" if goals else "no threshold"


def scaling_goal(goals, g, ratio, what):
    """'<what> >= 0.97: met' where the issue sets a threshold for g GPUs, else says there is none."""
    t = threshold(goals, g)
    return f"{what} >= {t}: {met(ratio >= t)}" if t is not None else f"{what}: {no_threshold(goals, g)}"


def f_test_text(r):
    """The F-test's verdict as a figure states it."""
    if not r["differ"]:
        return f"no significant difference at 95% (p = {r['p']:.3g})"
    return f"different at 95%: cush {'faster' if r['speed'] > 1 else 'slower'} (p = {r['p']:.3g})"


def gpu_model(context):
    """'H200', 'H100', ... : the GPU model's short name from a run's context, or the whole name."""
    model = device_of(context).split(" x ", 1)[1]
    m = re.search(r"\b([A-Z]\d{2,4}[A-Z]?)\b", model)
    return m[1] if m else model


def prefer(sizes, preferred=None):
    """The issue's size where it was measured, else the largest."""
    sizes = set(sizes)
    return preferred if preferred in sizes else max(sizes)


class Found:
    """What goal functions found: entries (summary.json figures) and missing (what could not be
    stated, one line each: a reference or a row that the files do not hold)."""

    def __init__(self, entries=None, missing=None):
        self.entries, self.missing = list(entries or []), list(missing or [])

    def add(self, entry):
        self.entries.append(entry)

    def miss(self, text):
        self.missing.append(text)

    def __iadd__(self, other):
        self.entries += other.entries
        self.missing += other.missing
        return self
