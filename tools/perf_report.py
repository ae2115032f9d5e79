"""Performance report from Google Benchmark JSON (run with --benchmark_repetitions).

Cases (bench_cases, names case/<case>/<variant>/<g>gpu/<n>): per case and GPU count, the median
time of each variant per problem size, cush's speed relative to raw CUDA with a 95% confidence
interval, and the extra-sum-of-squares F-test of seed 002 eq. 2.2 on log time against log size
(quadratic): does one curve through raw and cush fit significantly worse than one curve each?
Plots: time against size, strong scaling (speed-up over the single-GPU reference) and weak scaling
(efficiency with the work per GPU fixed), after seed 002 Figures 2.7-2.12.

Host<->GPU operations (bench_host_ops, names host/<op>/<memory>/<impl>/<MiB>MiB): the same
comparison per operation and host memory; pageable and registered cush runs are compared with
the raw pageable copy.
"""
import math
import os
import re
from collections import defaultdict

import stats
from plots import save

CASE_RE = re.compile(r"^case/(?P<case>[^/]+)/(?P<variant>single|multi_cuda|multi_cush)/(?P<gpus>\d+)gpu/(?P<n>\d+)")
HOST_RE = re.compile(r"^host/(?P<op>[a-z]+)/(?P<memory>[a-z_]+)/(?P<impl>raw|cush)/(?P<mib>\d+)MiB")
UNIT_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
COLORS = {"single": "black", "multi_cuda": "#c44e52", "multi_cush": "#4c72b0"}
LABELS = {"single": "single-GPU CUDA", "multi_cuda": "raw CUDA", "multi_cush": "cush"}


def load(path):
    """(context, [(name, milliseconds)]) for every repetition of every benchmark in one JSON file."""
    import json
    with open(path) as f:
        data = json.load(f)
    runs = []
    for b in data.get("benchmarks", []):
        if b.get("run_type", "iteration") != "iteration" or b.get("error_occurred"):
            continue
        runs.append((b["name"], b["real_time"] * UNIT_MS[b.get("time_unit", "ns")]))
    return data.get("context", {}), runs


def device_of(context):
    gpus = context.get("gpus", "?").split(", ")
    return f"{context.get('gpu_count', len(gpus))} x {gpus[0]}"


def context_line(context):
    return (f"Measured {context.get('date', '?')} on {device_of(context)} (host {context.get('host_name', '?')}), "
            f"CUDA runtime {context.get('cuda_runtime', '?')}, driver {context.get('cuda_driver', '?')}, "
            f"NCCL {context.get('nccl', '?')}, cush {context.get('cush', '?')}; peer access: "
            f"{context.get('peer_access', '?')}.")


def ci_text(raw, cush):
    """cush's speed relative to raw with its 95% interval, as the tables print it."""
    ratio, lo, hi = stats.ratio_ci(raw, cush)
    return f"{ratio:.3f} ({lo:.3f}-{hi:.3f})" if not math.isnan(lo) else f"{ratio:.3f}"


def f_test(raw, cush):
    """eq. 2.2 on (size, samples) dicts; None when there are too few sizes."""
    sizes = sorted(set(raw) & set(cush))
    if len(sizes) < 2:
        return None
    degree = 2 if len(sizes) >= 4 else 1

    def points(d):
        xs, ys = [], []
        for s in sizes:
            for t in d[s]:
                xs.append(math.log(s))
                ys.append(math.log(t))
        return xs, ys

    xa, ya = points(raw)
    xb, yb = points(cush)
    if len(xa) + len(xb) <= 2 * (degree + 1):
        return None
    r = stats.extra_sum_of_squares_f(xa, ya, xb, yb, degree=degree)
    r["degree"] = degree
    r["points"] = len(xa) + len(xb)
    all_raw = [t for s in sizes for t in raw[s]]
    all_cush = [t for s in sizes for t in cush[s]]
    r["speed"] = stats.ratio_ci(all_raw, all_cush)[0]
    return r


def verdict(r):
    if r is None:
        return "F-test: not enough sizes"
    text = (f"F-test (eq. 2.2, degree-{r['degree']} fit of log time on log size, {r['points']} runs): "
            f"F = {r['F']:.2f}, F(0.95; {r['df1']}, {r['df2']}) = {r['F_critical']:.2f}, p = {r['p']:.3g}: ")
    if not r["differ"]:
        return text + "**no significant difference at 95%**"
    return text + f"**different at 95%: cush {'faster' if r['speed'] > 1 else 'slower'}** (x{r['speed']:.2f} overall)"


# --- cases ---------------------------------------------------------------------------------------

def case_samples(runs):
    samples = defaultdict(list)
    for name, ms in runs:
        m = CASE_RE.match(name)
        if m:
            samples[(m["case"], m["variant"], int(m["gpus"]), int(m["n"]))].append(ms)
    return samples


def plot_case(case, samples, out_dir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    files = []
    keys = [k for k in samples if k[0] == case]
    gpus_all = sorted({k[2] for k in keys})
    sizes = sorted({k[3] for k in keys})

    fig, ax = plt.subplots(figsize=(6, 4))
    markers = ["o", "s", "^", "D", "v", "P", "X", "*"]
    for variant in ("single", "multi_cuda", "multi_cush"):
        for gi, g in enumerate(gpus_all):
            pts = [(n, stats.median(samples[(case, variant, g, n)])) for n in sizes if (case, variant, g, n) in samples]
            if pts:
                ax.loglog([p[0] for p in pts], [p[1] for p in pts], marker=markers[gi % len(markers)],
                          color=COLORS[variant], linestyle="-" if variant != "single" else ":",
                          label=f"{LABELS[variant]}, {g} GPU{'s' if g > 1 else ''}")
    ax.set_xlabel("problem size n")
    ax.set_ylabel("median time (ms)")
    ax.set_title(f"case {case}: time against size")
    ax.legend(fontsize=7)
    files.append(save(fig, out_dir, f"{case}_time.png"))

    fig, (strong, weak) = plt.subplots(1, 2, figsize=(10, 4))
    for n in sizes[-2:]:
        base = samples.get((case, "single", 1, n))
        if not base:
            continue
        t1 = stats.median(base)
        for variant, style in (("multi_cuda", "--"), ("multi_cush", "-")):
            pts = [(g, t1 / stats.median(samples[(case, variant, g, n)])) for g in gpus_all if (case, variant, g, n) in samples]
            if pts:
                strong.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o", color=COLORS[variant],
                            label=f"{LABELS[variant]}, n = {n}")
    strong.plot(gpus_all, gpus_all, color="gray", linewidth=0.8, label="ideal")
    strong.set_xlabel("GPUs")
    strong.set_ylabel("speed-up over single-GPU CUDA")
    strong.set_title("strong scaling (n fixed)")
    strong.set_xticks(gpus_all)
    strong.legend(fontsize=7)
    for variant, style in (("multi_cuda", "--"), ("multi_cush", "-")):
        for n0 in sizes:
            pts = []
            for g in gpus_all:
                if (case, variant, 1, n0) in samples and (case, variant, g, n0 * g) in samples:
                    pts.append((g, stats.median(samples[(case, variant, 1, n0)]) / stats.median(samples[(case, variant, g, n0 * g)])))
            if len(pts) > 1:
                weak.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o", color=COLORS[variant],
                          label=f"{LABELS[variant]}, n/GPU = {n0}")
    weak.axhline(1.0, color="gray", linewidth=0.8)
    weak.set_xlabel("GPUs")
    weak.set_ylabel("efficiency t(1 GPU, n) / t(g GPUs, g n)")
    weak.set_title("weak scaling (n per GPU fixed)")
    weak.set_xticks(gpus_all)
    weak.legend(fontsize=7)
    files.append(save(fig, out_dir, f"{case}_scaling.png"))
    return files


def case_section(case, samples, context, out_dir, entries):
    keys = [k for k in samples if k[0] == case]
    gpus_all = sorted({k[2] for k in keys})
    sizes = sorted({k[3] for k in keys})
    lines = [f"## Case {case}", "", context_line(context), "",
             "Median of the repetitions; \"cush / raw speed\" is raw time over cush time with a 95% confidence "
             "interval (Welch t on log times; > 1: cush faster).", ""]
    for g in gpus_all:
        if g == 1 and not any((case, v, 1, n) in samples for v in ("multi_cuda", "multi_cush") for n in sizes):
            continue
        lines += [f"### {g} GPU{'s' if g > 1 else ''}", "",
                  "| n | single-GPU ms | raw CUDA ms | cush ms | cush / raw speed (95% CI) | runs |",
                  "|---:|---:|---:|---:|---|---:|"]
        raw_by, cush_by = {}, {}
        for n in sizes:
            single = samples.get((case, "single", 1, n))
            raw = samples.get((case, "multi_cuda", g, n))
            cush = samples.get((case, "multi_cush", g, n))
            if raw:
                raw_by[n] = raw
            if cush:
                cush_by[n] = cush
            if not (raw and cush):
                continue
            single_ms = f"{stats.median(single):.3f}" if single else "-"
            lines.append(f"| {n} | {single_ms} | {stats.median(raw):.3f} | {stats.median(cush):.3f} | "
                         f"{ci_text(raw, cush)} | {len(raw)}+{len(cush)} |")
        r = f_test(raw_by, cush_by)
        lines += ["", verdict(r), ""]
        if g == max(gpus_all) and sizes and (case, "multi_cush", g, sizes[-1]) in samples and (case, "multi_cuda", g, sizes[-1]) in samples:
            n = sizes[-1]
            cush_ms = stats.median(samples[(case, "multi_cush", g, n)])
            raw_ms = stats.median(samples[(case, "multi_cuda", g, n)])
            entries.append({"name": f"{case}.{g}gpu.time_n{n}", "value": round(cush_ms, 4), "unit": "ms",
                            "reference": round(raw_ms, 4), "reference_is": "multi-GPU raw CUDA, same run",
                            "ratio": round(raw_ms / cush_ms, 4), "device": device_of(context),
                            "date": context.get("date", "?"),
                            "f_test": None if r is None else ("no significant difference at 95%" if not r["differ"]
                                                              else f"different at 95% (p = {r['p']:.3g})")})
    for path in plot_case(case, samples, out_dir):
        lines += [f"![{os.path.basename(path)}]({os.path.basename(path)})", ""]
    return lines


# --- host<->GPU operations -------------------------------------------------------------------------

def host_samples(runs):
    samples = defaultdict(list)
    for name, ms in runs:
        m = HOST_RE.match(name)
        if m:
            samples[(m["op"], m["memory"], m["impl"], int(m["mib"]))].append(ms)
    return samples


def reference_memory(memory):
    return "pinned" if memory == "pinned" else "pageable"


def plot_host(samples, gpus, out_dir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ops = [op for op in ("scatter", "gather", "broadcast") if any(k[0] == op for k in samples)]
    fig, axes = plt.subplots(1, len(ops), figsize=(5 * len(ops), 4), squeeze=False)
    styles = [("pinned", "raw", "#c44e52", "--"), ("pinned", "cush", "#4c72b0", "-"),
              ("pageable", "raw", "#dd8452", "--"), ("pageable", "cush", "#55a868", "-"),
              ("registered", "cush", "#8172b3", "-")]
    for ax, op in zip(axes[0], ops):
        for memory, impl, color, style in styles:
            mibs = sorted(k[3] for k in samples if k[:3] == (op, memory, impl))
            if not mibs:
                continue
            factor = gpus if op == "broadcast" else 1
            gbps = [factor * mib * 2 ** 20 / (stats.median(samples[(op, memory, impl, mib)]) * 1e-3) / 1e9 for mib in mibs]
            ax.semilogx(mibs, gbps, style, marker="o", color=color, label=f"{impl}, {memory}")
        ax.set_title(op)
        ax.set_xlabel("MiB")
        ax.set_ylabel("GB/s delivered (median)")
        ax.legend(fontsize=7)
    return save(fig, out_dir, "host_ops.png")


def host_section(samples, context, out_dir, entries):
    gpus = int(context.get("gpu_count", 1))
    lines = ["## Host<->GPU operations (issue 2)", "", context_line(context), "",
             "cush against the hand-written per-GPU `cudaMemcpyAsync` loop on the same device buffers. Pageable and "
             "registered cush runs are compared with the raw pageable copy. \"speed\" = raw time / cush time "
             "(95% CI).", ""]
    for op in ("scatter", "gather", "broadcast"):
        for memory in ("pinned", "pageable", "registered"):
            cush = {mib: s for (o, m, i, mib), s in samples.items() if (o, m, i) == (op, memory, "cush")}
            raw = {mib: s for (o, m, i, mib), s in samples.items() if (o, m, i) == (op, reference_memory(memory), "raw")}
            if not cush or not raw:
                continue
            lines += [f"### {op}, {memory}{'' if memory == reference_memory(memory) else ' (against raw pageable)'}", "",
                      "| MiB | raw ms | cush ms | cush / raw speed (95% CI) |", "|---:|---:|---:|---|"]
            for mib in sorted(set(cush) & set(raw)):
                lines.append(f"| {mib} | {stats.median(raw[mib]):.3f} | {stats.median(cush[mib]):.3f} | "
                             f"{ci_text(raw[mib], cush[mib])} |")
            lines += ["", verdict(f_test(raw, cush)), ""]
    lines += ["![host_ops](host_ops.png)", ""]
    plot_host(samples, gpus, out_dir)

    # Headline figures at the largest size measured.
    def med(op, memory, impl, mib):
        s = samples.get((op, memory, impl, mib))
        return stats.median(s) if s else None

    big = max((k[3] for k in samples), default=None)
    date, device = context.get("date", "?"), device_of(context)
    if big is not None:
        bytes_ = big * 2 ** 20
        for memory, label in (("pinned", "pinned"), ("pageable", "pageable_first_use"), ("registered", "pageable_registered")):
            t = [med(op, memory, "cush", big) for op in ("scatter", "gather")]
            r = [med(op, reference_memory(memory), "raw", big) for op in ("scatter", "gather")]
            if None in t or None in r:
                continue
            entries.append({"name": f"host_ops.scatter_gather.{label}.{big}MiB", "unit": "GB/s",
                            "value": round(2 * bytes_ / (sum(t) * 1e-3) / 1e9, 2),
                            "reference": round(2 * bytes_ / (sum(r) * 1e-3) / 1e9, 2),
                            "reference_is": f"hand-written cudaMemcpyAsync loop, {reference_memory(memory)} memory, same run",
                            "ratio": round(sum(r) / sum(t), 3), "device": device, "date": date})
        for memory in ("pinned", "pageable"):
            t, r = med("broadcast", memory, "cush", big), med("broadcast", memory, "raw", big)
            if t is None or r is None:
                continue
            entries.append({"name": f"host_ops.broadcast.{memory}.{big}MiB", "unit": "GB/s delivered",
                            "value": round(gpus * bytes_ / (t * 1e-3) / 1e9, 2),
                            "reference": round(gpus * bytes_ / (r * 1e-3) / 1e9, 2),
                            "reference_is": f"hand-written cudaMemcpyAsync loop, {memory} memory, same run",
                            "ratio": round(r / t, 3), "device": device, "date": date})
    return lines


def run(results_dir, case_json, host_json):
    """Writes performance.md and its PNGs; returns summary entries (empty without measurements).

    case_json: one bench_cases JSON file or a list of them (each section keeps its file's context).
    """
    entries = []
    lines = ["# Performance: cush against raw CUDA", "",
             "Produced by `scripts/report.sh` (tools/report.py) from the benchmark JSON beside this file; "
             "the context line of each section says where and when it was measured.", ""]
    found = False
    case_files = [case_json] if isinstance(case_json, str) else list(case_json or [])
    for path in case_files:
        if not os.path.exists(path):
            continue
        context, runs = load(path)
        samples = case_samples(runs)
        for case in sorted({k[0] for k in samples}):
            lines += case_section(case, samples, context, results_dir, entries)
            found = True
    if host_json and os.path.exists(host_json):
        context, runs = load(host_json)
        samples = host_samples(runs)
        if samples:
            lines += host_section(samples, context, results_dir, entries)
            found = True
    if not found:
        lines += ["No measurements yet: the speed part needs GPUs (run `scripts/report.sh` on a GPU host).", ""]
    with open(os.path.join(results_dir, "performance.md"), "w") as f:
        f.write("\n".join(lines))
    return entries
