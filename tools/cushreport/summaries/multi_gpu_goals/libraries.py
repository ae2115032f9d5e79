"""cush against the vendors' multi-GPU libraries and against the FFT's communication floor, on the
same GPUs in the same call, on every GPU count >= 2:

- matmul, FP32 (case/matmul) and FP64 (case/matmul_f64) end to end at k = 20 and 40: cush's time
  against cuBLASXt's best tile measured in the same precision (xt/matmul[_f64]/<tile>/<g>gpu/<k>); goal: cush at
  least 1.2 x cuBLASXt's speed.
- FFT, every mode and the strong and weak series: cush against cufftXt (natural order, the only
  order cufftXt gives), no threshold; printed as one table per series.
- FFT strong, natural (3 all-to-alls) and transposed output (2): cush's time against k x NCCL's
  all-to-all of the N/g complex floats each GPU holds, from the call's bench_device_ops file of g
  GPUs; goals (the FFT case's, set on 2 GPUs; the floor is defined the same way
  on g): <= 1.35 x and <= 1.2 x the floor.
"""
import re
from collections import defaultdict

from ... import stats
from ...figures import figure, measured_in
from .. import device_ops, fft, matmul
from .common import Found, gpus, met, name

MATMUL_KS = (20, 40)
MATMUL_FAMILIES = (("case/matmul", ""), ("case/matmul_f64", "f64"))
MATMUL_GOAL = 1.2  # cush >= 1.2 x cuBLASXt's speed
A2AS = {"natural": 3, "transposed_out": 2}          # all-to-alls of one transform, by output order
GOAL_VS_FLOOR = {"natural": 1.35, "transposed_out": 1.2}
SERIES_PREFIX = {"strong": "", "weak": "weak_", "e2e": "e2e_"}


def count(label):
    """2 of '2gpu'; None for virtual GPUs ('2vgpu')."""
    m = re.fullmatch(r"(\d+)gpu", label)
    return int(m[1]) if m else None


def matmul_goals(run):
    times, _, _ = matmul.samples(run)
    xts = {series: matmul.samples(run, fam[5:])[2] for fam, series in MATMUL_FAMILIES}  # per precision
    found = Found()
    for g in sorted({k[2] for k in times if k[0] in dict(MATMUL_FAMILIES) and k[2] >= 2}):
        for fam, series in MATMUL_FAMILIES:
            for k in MATMUL_KS:
                label = f"{fam[5:]}, {gpus(g)}, k = {k}"
                cush = times.get((fam, "multi_cush", g, k))
                best = matmul.best_xt(xts[series], g, k)
                if not cush:
                    found.miss(f"{label}: no cush row ({fam}/multi_cush/{g}gpu/{k})")
                elif not best:
                    found.miss(f"{label}: no cuBLASXt row of this precision and k ({'xt/' + fam[5:]}/<tile>/{g}gpu/{k})")
                else:
                    c = stats.median(cush)
                    found.add(figure(name("matmul", g, series, "multi_cush", f"k{k}", "vs_cublasxt"), round(c, 3), "ms",
                                     reference=round(best[0], 3),
                                     reference_is=f"cuBLASXt on the same {g} GPUs, best tile measured ({best[1]}), {'FP64' if series else 'FP32'}, same run",
                                     ratio=round(best[0] / c, 3), **measured_in(run),
                                     goal=f"cush >= {MATMUL_GOAL} x cuBLASXt's speed: {met(best[0] / c >= MATMUL_GOAL)}"))
    return found


def cufftxt_pairs(run):
    """{(series, g, e): (cufftXt ms, {mode: cush ms})} of the real multi-GPU rows with a cush time."""
    cases, _ = fft.samples(run)
    out = {}
    for (series, mode, on, e), got in cases.items():
        g = count(on)
        if g and g >= 2 and got.get("multi_cush"):
            xt = cases.get((series, "natural", on, e), {}).get("cufftxt")
            entry = out.setdefault((series, g, e), [stats.median(xt) if xt else None, {}])
            entry[1][mode] = stats.median(got["multi_cush"])
    return out


def cufftxt_goals(run):
    found, absent = Found(), defaultdict(list)
    for (series, g, e), (xt, modes) in sorted(cufftxt_pairs(run).items()):
        if xt is None:
            absent[(series, g)].append(f"2^{e}")
            continue
        for mode, c in modes.items():
            found.add(figure(name("fft", g, SERIES_PREFIX[series] + mode, "cush_vs_cufftxt", f"2e{e}"), round(c, 3), "ms",
                             reference=round(xt, 3), reference_is=f"cufftXt on the same {g} GPUs, natural order, same run",
                             ratio=round(xt / c, 3), **measured_in(run), goal="against cufftXt on the same GPUs (no threshold)"))
    for (series, g), sizes in sorted(absent.items()):
        found.miss(f"fft {series}, {gpus(g)}: no cufftXt row at {', '.join(sizes)}; cush not compared there")
    return found


def cufftxt_tables(entries):
    """Markdown: per series a table of cufftXt time / cush time (rows: N; columns: GPUs and mode)."""
    cells = {}
    for e in entries:
        m = re.fullmatch(r"fft\.(\d+)gpu\.(weak_|e2e_)?(\w+?)\.cush_vs_cufftxt\.2e(\d+)", e["name"])
        if m:
            cells[((m[2] or "").rstrip("_") or "strong", int(m[1]), m[3], int(m[4]))] = e
    lines = []
    for series in sorted({k[0] for k in cells}, key=list(SERIES_PREFIX).index):
        columns = sorted({k[1:3] for k in cells if k[0] == series}, key=lambda c: (c[0], list(fft.MODES).index(c[1])))
        lines += [f"#### FFT {series} against cufftXt (cufftXt time / cush time; > 1: cush faster)", "",
                  "| N | " + " | ".join(f"{mode}, {gpus(g)}" for g, mode in columns) + " |", "|---:|" + "---:|" * len(columns)]
        for e in sorted({k[3] for k in cells if k[0] == series}):
            got = [cells.get((series, g, mode, e)) for g, mode in columns]
            lines.append(f"| 2^{e} | " + " | ".join(f"{x['ratio']:.3f}" if x else "-" for x in got) + " |")
        lines.append("")
    return lines


def a2a_ms(ops_tables):
    """{g: {bytes per GPU: median ms of NCCL's all-to-all}} of ops.medians()."""
    return {g: {device_ops.size_bytes(size): s * 1e3 for (op, impl, size), s in table.items()
                if (op, impl) == ("all_to_all", "raw_nccl")} for g, table in ops_tables.items()}


def floor_goals(run, ops_tables, ops_sources):
    cases, _ = fft.samples(run)
    nccl = a2a_ms(ops_tables)
    found, absent = Found(), defaultdict(list)
    for (series, mode, on, e), got in sorted(cases.items()):
        g = count(on)
        if series != "strong" or mode not in A2AS or not g or g < 2 or not got.get("multi_cush"):
            continue
        a2a = nccl.get(g, {}).get(2 ** e * fft.BYTES_PER_POINT // g)
        if a2a is None:
            absent[g].append(e)
            continue
        k, cush, goal = A2AS[mode], stats.median(got["multi_cush"]), GOAL_VS_FLOOR[mode]
        found.add(figure(name("fft", g, mode, "cush_vs_a2a_floor", f"2e{e}"), round(cush, 3), "ms", reference=round(k * a2a, 3),
                         reference_is=f"{k} x NCCL's all-to-all of N/{g} complex floats per GPU "
                                      f"({a2a:.3f} ms, {ops_sources[g]}, same run)",
                         ratio=round(k * a2a / cush, 3), **measured_in(run),
                         goal=f"cush time <= {goal} x the floor: {met(cush <= goal * k * a2a)}"))
    for g, es in sorted(absent.items()):
        what = (f"no all-to-all of N/{g} complex floats per GPU in {ops_sources[g]}" if g in nccl
                else f"no bench_device_ops file of {gpus(g)} in the call")
        found.miss(f"fft strong, {gpus(g)}: {what} for {', '.join(f'2^{e}' for e in sorted(set(es)))}; no floor there")
    return found
