"""Two real GPUs (issue 24): the two-GPU goals of the lattice-Boltzmann, FFT and karst cases, from
the benchmark files of one call on a two-GPU machine (bench_cases rows of each case, and the
bench_device_ops all-to-all rows that give the FFT its communication floor).

- Lattice-Boltzmann: the 2-GPU MLUPS of cush against 2 x the 1-GPU reference of the same run, and
  FP32 against FluidX3D's published 2 x H200 figure; the F-test of cush against raw on 2 GPUs.
- FFT: the cush time against the floor of its all-to-alls, k x NCCL's all-to-all of N/2 complex
  floats per GPU in the same call (k = 3 in natural order, 2 with transposed output; the spec's
  goals: at most 1.35 x and 1.2 x the floor), against cufftXt, and the F-test against raw.
- Karst: the 2-GPU runs per second of cush against 2 x its 1-GPU rate, and the F-test.

`render(runs)` gives the page's goal table, `figures(runs)` the summary.json entries. A run is
recognized by its rows, so the files may come in any order; a goal whose rows are missing is left
out (an all-to-all size that was not measured leaves its FFT sizes without a floor).
"""
import re
from collections import defaultdict

from .. import perf, stats
from ..figures import figure, measured_in
from . import fft, karst, lbm

A2A = re.compile(r"^dev/all_to_all/(?P<impl>[a-z_]+)/")
FLUIDX3D_2X_H200 = 36711  # MLUPS, D3Q19 FP32 (docs/results/peers.md; FluidX3D communicates through host memory)
A2AS = {"natural": 3, "transposed_out": 2}  # all-to-alls of one transform, by output order
GOAL_VS_FLOOR = {"natural": 1.35, "transposed_out": 1.2}  # the FFT case's goals (cases/fft/README.md)


def kind_of(run):
    """'lbm', 'fft', 'karst', 'all_to_all' or None: what the rows of a run measure."""
    for row in run.rows:
        if lbm.NAME.match(row.name):
            return "lbm"
        if fft.NAME.match(row.name):
            return "fft"
        if karst.NAME.match(row.name):
            return "karst"
        if A2A.match(row.name):
            return "all_to_all"
    return None


def by_kind(runs):
    """{kind: run} of the runs whose kind is known (the last one of a kind wins)."""
    kinds = ((kind_of(run), run) for run in runs)
    return {kind: run for kind, run in kinds if kind}


def a2a_ms(run, impl="raw_nccl"):
    """{bytes per GPU: [ms of one all-to-all]} of one implementation, from the rows' op_us."""
    out = defaultdict(list)
    for row in run.rows:
        m = A2A.match(row.name)
        if m and m["impl"] == impl and row.fields.get("gpus") == 2:
            out[int(row.fields["bytes"])].append(row.fields["op_us"] / 1e3)
    return out


def fastest_a2a(run, size):
    """(impl, median ms) of the fastest all-to-all of `size` bytes per GPU in the run."""
    impls = {m["impl"] for m in (A2A.match(r.name) for r in run.rows) if m}
    medians = {i: a2a_ms(run, i).get(size) for i in impls}
    best = [(stats.median(ms), i) for i, ms in medians.items() if ms]
    return min(best)[::-1] if best else (None, float("nan"))


def verdict_text(r):
    if r is None:
        return None
    if not r["differ"]:
        return f"no significant difference at 95% (p = {r['p']:.3g})"
    return f"different at 95%: cush {'faster' if r['speed'] > 1 else 'slower'} (p = {r['p']:.3g})"


def met(ok):
    return "met" if ok else "not met"


def lbm_goals(run):
    """The lattice-Boltzmann entries: per storage, the strong series at its largest M on 2 GPUs."""
    mlups, _ = lbm.medians(run)
    samples = perf.case_samples(run.rows)
    entries = []
    for storage in ("fp32", "fp16s"):
        strong = [k for k in mlups if k[:3] == ("strong", "esoteric", storage) and k[3] == "multi_cush" and k[4] == 2]
        if not strong:
            continue
        m = max(k[5] for k in strong)
        cush = mlups[("strong", "esoteric", storage, "multi_cush", 2, m)]
        one = mlups.get(("strong", "esoteric", storage, "single", 1, m))
        base = f"lbm.2gpu.esoteric_{storage}.multi_cush.m{m}"
        if one:
            entries.append(figure(f"{base}.vs_two_one_gpu", round(cush), "MLUPS", reference=round(2 * one),
                                  reference_is="2 x the single-GPU reference on one of the GPUs, same run",
                                  ratio=round(cush / (2 * one), 3), **measured_in(run),
                                  goal="2-GPU MLUPS against 2 x the 1-GPU figure (issue 24; no threshold)"))
        if storage == "fp32":
            entries.append(figure(f"{base}.vs_fluidx3d", round(cush), "MLUPS", reference=FLUIDX3D_2X_H200,
                                  reference_is="FluidX3D on 2 x H200 (published, peers.md), not measured here",
                                  ratio=round(cush / FLUIDX3D_2X_H200, 3), **measured_in(run),
                                  goal=f"above FluidX3D's {FLUIDX3D_2X_H200:,} MLUPS: "
                                       f"{met(cush > FLUIDX3D_2X_H200)}"))
        r = perf.f_test(*perf.case_curves(samples, f"lbm_esoteric_{storage}", 2))
        if r is not None:
            entries.append(figure(f"lbm.2gpu.esoteric_{storage}.cush_vs_raw", round(r["speed"], 4), "speed (raw time / cush time)",
                                  **measured_in(run), f_test=verdict_text(r),
                                  goal=f"F-test: no difference at 95%, or cush faster: "
                                       f"{met(not r['differ'] or r['speed'] > 1)}"))
    weak = [k for k in mlups if k[:4] == ("weak", "esoteric", "fp32", "multi_cush") and k[4] == 2]
    if weak:
        m = max(k[5] for k in weak)
        two, one = mlups[("weak", "esoteric", "fp32", "multi_cush", 2, m)], mlups.get(("weak", "esoteric", "fp32", "multi_cush", 1, m))
        if one:
            entries.append(figure(f"lbm.2gpu.weak_esoteric_fp32.multi_cush.m{m}.vs_two_one_gpu", round(two), "MLUPS",
                                  reference=round(2 * one), reference_is="2 x cush on one GPU (M^3 per GPU), same run",
                                  ratio=round(two / (2 * one), 3), **measured_in(run),
                                  goal="weak scaling against 2 x the 1-GPU figure (issue 24; no threshold)"))
    return entries


def fft_floor_rows(fft_run, a2a_run):
    """[(mode, e, cush ms, k, NCCL all-to-all ms or nan, goal factor)] of the 2-GPU strong rows."""
    cases, _ = fft.samples(fft_run)
    nccl = a2a_ms(a2a_run, "raw_nccl") if a2a_run else {}
    rows = []
    for (series, mode, gpus, e), got in sorted(cases.items()):
        if series != "strong" or gpus != "2gpu" or mode not in A2AS or not got.get("multi_cush"):
            continue
        per_gpu = 2 ** e * fft.BYTES_PER_POINT // 2
        a2a = stats.median(nccl[per_gpu]) if nccl.get(per_gpu) else float("nan")
        rows.append((mode, e, stats.median(got["multi_cush"]), A2AS[mode], a2a, GOAL_VS_FLOOR[mode]))
    return rows


def fft_goals(fft_run, a2a_run):
    cases, _ = fft.samples(fft_run)
    samples = perf.case_samples(fft_run.rows)
    entries = []
    for mode, e, cush, k, a2a, goal in fft_floor_rows(fft_run, a2a_run):
        if a2a == a2a:
            floor = k * a2a
            entries.append(figure(f"fft.2gpu.{mode}.cush_vs_a2a_floor.2e{e}", round(cush, 3), "ms",
                                  reference=round(floor, 3),
                                  reference_is=f"{k} x NCCL's all-to-all of N/2 complex floats per GPU "
                                               f"({a2a:.3f} ms, {a2a_run.source}, same run)",
                                  ratio=round(floor / cush, 3), **measured_in(fft_run),
                                  goal=f"cush time <= {goal} x the floor: {met(cush <= goal * floor)}"))
    for mode in A2AS:
        for e in sorted(e for (s, md, g, e) in cases if (s, md, g) == ("strong", mode, "2gpu")):
            got = cases[("strong", mode, "2gpu", e)]
            if got.get("multi_cush") and got.get("cufftxt"):
                c, x = stats.median(got["multi_cush"]), stats.median(got["cufftxt"])
                entries.append(figure(f"fft.2gpu.{mode}.cush_vs_cufftxt.2e{e}", round(c, 3), "ms", reference=round(x, 3),
                                      reference_is="cufftXt on the same two GPUs, natural order, same run",
                                      ratio=round(x / c, 3), **measured_in(fft_run),
                                      goal="against cufftXt on the same GPUs (issue 24; no threshold)"))
        r = perf.f_test(*perf.case_curves(samples, f"fft_{mode}", 2))
        if r is not None:
            entries.append(figure(f"fft.2gpu.{mode}.cush_vs_raw", round(r["speed"], 4), "speed (raw time / cush time)",
                                  **measured_in(fft_run), f_test=verdict_text(r),
                                  goal=f"F-test: no difference at 95%, or cush faster: {met(not r['differ'] or r['speed'] > 1)}"))
    return entries


def karst_goals(run):
    _, rates = karst.samples(run)
    entries = []
    two, one = rates.get(("ensemble", "multi_cush", "2gpu"), {}), rates.get(("ensemble", "multi_cush", "1gpu"), {})
    ks = sorted(set(two) & set(one))
    if ks:
        k = ks[-1]
        t, o = stats.median(two[k]), stats.median(one[k])
        entries.append(figure(f"karst.2gpu.multi_cush.k{k}.vs_two_one_gpu", round(t, 1), "runs/s", reference=round(2 * o, 1),
                              reference_is="2 x cush on one of the GPUs, same run", ratio=round(t / (2 * o), 3),
                              **measured_in(run), goal="ensemble throughput against 2 x one GPU (issue 24; no threshold)"))
    r = perf.f_test(*perf.case_curves(perf.case_samples(run.rows), "karst", 2))
    if r is not None:
        entries.append(figure("karst.2gpu.cush_vs_raw", round(r["speed"], 4), "speed (raw time / cush time)",
                              **measured_in(run), f_test=verdict_text(r),
                              goal=f"F-test: no difference at 95%, or cush faster: {met(not r['differ'] or r['speed'] > 1)}"))
    return entries


def figures(runs):
    """summary.json's two-GPU goal entries of the runs (any order; see the module's text)."""
    got = by_kind(runs)
    entries = []
    if "lbm" in got:
        entries += lbm_goals(got["lbm"])
    if "fft" in got:
        entries += fft_goals(got["fft"], got.get("all_to_all"))
    if "karst" in got:
        entries += karst_goals(got["karst"])
    return entries


def render(runs):
    """The goal table of docs/results/multi_gpu.md's 2026-11-24 section, one line per entry of figures(runs)."""
    got = by_kind(runs)
    lines = ["### Two-GPU goals", "", "| figure | value | against | ratio | goal |", "|---|---:|---|---:|---|"]
    for e in figures(runs):
        against = f"{e['reference']:,} ({e['reference_is']})" if "reference" in e else (e.get("f_test") or "")
        ratio = f"{e['ratio']:.3f}" if "ratio" in e else "-"
        lines.append(f"| `{e['name']}` | {e['value']:,} {e['unit']} | {against} | {ratio} | {e['goal']} |")
    if "fft" in got:
        missing = [(mode, e) for mode, e, _, _, a2a, _ in fft_floor_rows(got["fft"], got.get("all_to_all")) if a2a != a2a]
        if missing:
            lines += ["", "No all-to-all of the size needed was measured for: "
                      + ", ".join(f"{mode.replace('_', ' ')} 2^{e}" for mode, e in missing) + " (no floor)."]
        if "all_to_all" in got:
            lines += ["", "Fastest all-to-all per size in the same call (the floor could be lower than NCCL's): "
                      + "; ".join(f"{b >> 20} MiB per GPU: {impl} {ms:.3f} ms"
                                  for b in sorted(a2a_ms(got["all_to_all"]))
                                  for impl, ms in [fastest_a2a(got["all_to_all"], b)] if b >= 1 << 28) + "."]
    return "\n".join(lines) + "\n"
