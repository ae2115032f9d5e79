"""The report's charts (matplotlib, drawn without a display).

- complexity: NCSS and MCC of the multi-GPU variants relative to the single-GPU one (seed 002
  Figure 2.6)
- per case: time against size for every variant and GPU count; strong scaling (speed-up over the
  single-GPU reference at the two largest sizes) and weak scaling (t(1 GPU, n) / t(g GPUs, g n)),
  after seed 002 Figures 2.7-2.12; where a size was measured on several GPU counts (1, 2, 4, ...),
  time and speed-up against the GPU count at the largest such size (<stem>_gpus.png)
- host<->GPU operations: GB/s delivered against size per operation
"""
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

from .stats import median  # noqa: E402

COLORS = {"single": "black", "multi_cuda": "#c44e52", "multi_cush": "#4c72b0"}
LABELS = {"single": "single-GPU CUDA", "multi_cuda": "raw CUDA", "multi_cush": "cush"}
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
# Families whose size label is the work per GPU (lbm_weak: M^3 cells per GPU); in the others the
# label is the whole problem (advection_weak's nz, matmul_weak's r and fft_weak's e grow with g).
PER_GPU_LABELS = ("lbm_weak_",)


def save(fig, out_dir, name):
    """Writes a figure as out_dir/name and closes it; returns the path."""
    path = os.path.join(out_dir, name)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def complexity_chart(rows, path):
    """Bars of NCSS and MCC relative to single-GPU CUDA, per case (rows from complexity.measure)."""
    cases = sorted({r["case"] for r in rows})
    by = {(r["case"], r["variant"]): r for r in rows}
    series = [("multi_cuda", "ncss_rel", "NCSS, raw CUDA", "#c44e52", None),
              ("multi_cush", "ncss_rel", "NCSS, cush", "#4c72b0", None),
              ("multi_cuda", "mcc_rel", "MCC, raw CUDA", "#c44e52", "//"),
              ("multi_cush", "mcc_rel", "MCC, cush", "#4c72b0", "//")]
    width = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(max(6.5, 1.8 * len(cases) + 3), 4.2))
    for i, (variant, key, label, color, hatch) in enumerate(series):
        xs = [c + (i - (len(series) - 1) / 2) * width for c in range(len(cases))]
        ys = [by[(c, variant)][key] if (c, variant) in by else 0 for c in cases]
        ax.bar(xs, ys, width, label=label, color=color, hatch=hatch, edgecolor="white")
        for x, y in zip(xs, ys):
            ax.text(x, y, f"{y:.1f}", ha="center", va="bottom", fontsize=7)
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--", label="single-GPU reference")
    ax.set_xticks(range(len(cases)))
    ax.set_xticklabels(cases)
    ax.set_ylabel("relative to single-GPU CUDA")
    ax.set_title("Multi-GPU code complexity (pmccabe); lower is simpler", fontsize=10)
    ax.legend(fontsize=7, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.1))
    return save(fig, os.path.dirname(path), os.path.basename(path))


def case_charts(case, samples, out_dir, stem=None):
    """<stem>_time.png; <stem>_scaling.png where there is something to scale against (a single-GPU
    reference, or two GPU counts); and, where a size was measured on two GPU counts or more,
    <stem>_gpus.png (stem: the case's name unless given); samples: (case, variant, gpus, n) -> [ms].
    A file of one GPU count without the reference (e.g. the one-process rows beside a run across
    processes) has no scaling chart, so the headline keeps the newest run that has one."""
    keys = [k for k in samples if k[0] == case]
    gpus_all = sorted({k[2] for k in keys})
    sizes = sorted({k[3] for k in keys})
    charts = [_time_chart(case, samples, gpus_all, sizes, out_dir, stem or case)]
    if len(gpus_all) > 1 or any(k[1] == "single" for k in keys):
        charts.append(_scaling_chart(case, samples, gpus_all, sizes, out_dir, stem or case))
    n = gpu_count_size(case, samples)
    if n is not None:
        charts.append(_gpu_count_chart(case, samples, n, out_dir, stem or case))
    return charts


def gpu_count_size(case, samples):
    """The size of the GPU-count chart: the largest one that the multi-GPU variants measured on the
    most GPU counts (at least two); None where no size was measured on two GPU counts."""
    counts = {}
    for c, variant, g, n in samples:
        if c == case and variant != "single":
            counts.setdefault(n, set()).add(g)
    best = max(((len(gs), n) for n, gs in counts.items()), default=(0, None))
    return best[1] if best[0] >= 2 else None


def _gpu_count_chart(case, samples, n, out_dir, stem):
    """<stem>_gpus.png: time against the GPU count at size n, and the speed-up over one GPU (the
    single-GPU reference where measured, else the variant's own 1-GPU time); for a family labelled
    by the work per GPU (PER_GPU_LABELS) the efficiency t(1 GPU) / t(g GPUs) instead."""
    weak = case.startswith(PER_GPU_LABELS)
    fig, (times, speed) = plt.subplots(1, 2, figsize=(10, 4))
    single = samples.get((case, "single", 1, n))
    gpus_all = sorted({k[2] for k in samples if k[0] == case and k[3] == n})
    for variant, style in (("multi_cuda", "--"), ("multi_cush", "-")):
        pts = [(g, median(samples[(case, variant, g, n)])) for g in gpus_all if (case, variant, g, n) in samples]
        if not pts:
            continue
        times.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o", color=COLORS[variant], label=LABELS[variant])
        base = median(single) if single else dict(pts).get(1)
        if base is not None:
            speed.plot([p[0] for p in pts], [base / p[1] for p in pts], style, marker="o", color=COLORS[variant], label=LABELS[variant])
    if single:
        times.plot([1], [median(single)], marker="*", markersize=10, color=COLORS["single"], linestyle="", label=LABELS["single"])
    speed.plot(gpus_all, [1.0] * len(gpus_all) if weak else gpus_all, color="gray", linewidth=0.8, label="ideal")
    times.set_ylabel("median time (ms)")
    from .perf import size_text  # perf imports this module: imported when drawing
    times.set_title(f"case {case}: time at n = {size_text(case, n)}")
    reference = "single-GPU CUDA" if single else "the variant on 1 GPU"
    speed.set_ylabel(f"{'efficiency' if weak else 'speed-up'} over {reference}")
    speed.set_title("weak scaling (n per GPU fixed)" if weak else "strong scaling (n fixed)")
    for ax in (times, speed):
        ax.set_xlabel("GPUs")
        ax.set_xticks(gpus_all)
        ax.legend(fontsize=7)
    return save(fig, out_dir, f"{stem}_gpus.png")


def _time_chart(case, samples, gpus_all, sizes, out_dir, stem):
    fig, ax = plt.subplots(figsize=(6, 4))
    for variant in ("single", "multi_cuda", "multi_cush"):
        for gi, g in enumerate(gpus_all):
            pts = [(n, median(samples[(case, variant, g, n)])) for n in sizes if (case, variant, g, n) in samples]
            if pts:
                ax.loglog([p[0] for p in pts], [p[1] for p in pts], marker=MARKERS[gi % len(MARKERS)],
                          color=COLORS[variant], linestyle="-" if variant != "single" else ":",
                          label=f"{LABELS[variant]}, {g} GPU{'s' if g > 1 else ''}")
    ax.set_xlabel("problem size n")
    ax.set_ylabel("median time (ms)")
    ax.set_title(f"case {case}: time against size")
    ax.legend(fontsize=7)
    return save(fig, out_dir, f"{stem}_time.png")


def _scaling_chart(case, samples, gpus_all, sizes, out_dir, stem):
    fig, (strong, weak) = plt.subplots(1, 2, figsize=(10, 4))
    for n in sizes[-2:]:
        base = samples.get((case, "single", 1, n))
        if not base:
            continue
        t1 = median(base)
        for variant, style in (("multi_cuda", "--"), ("multi_cush", "-")):
            pts = [(g, t1 / median(samples[(case, variant, g, n)])) for g in gpus_all if (case, variant, g, n) in samples]
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
            pts = [(g, median(samples[(case, variant, 1, n0)]) / median(samples[(case, variant, g, n0 * g)]))
                   for g in gpus_all if (case, variant, 1, n0) in samples and (case, variant, g, n0 * g) in samples]
            if len(pts) > 1:
                weak.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o", color=COLORS[variant],
                          label=f"{LABELS[variant]}, n/GPU = {n0}")
    weak.axhline(1.0, color="gray", linewidth=0.8)
    weak.set_xlabel("GPUs")
    weak.set_ylabel("efficiency t(1 GPU, n) / t(g GPUs, g n)")
    weak.set_title("weak scaling (n per GPU fixed)")
    weak.set_xticks(gpus_all)
    if weak.get_legend_handles_labels()[0]:  # one GPU count only: no weak-scaling line to label
        weak.legend(fontsize=7)
    return save(fig, out_dir, f"{stem}_scaling.png")


def host_chart(samples, gpus, out_dir):
    """host_ops.png; samples: (op, memory, impl, MiB) -> [ms]; a broadcast delivers to `gpus` GPUs."""
    ops = [op for op in ("scatter", "gather", "broadcast") if any(k[0] == op for k in samples)]
    fig, axes = plt.subplots(1, len(ops), figsize=(5 * len(ops), 4), squeeze=False)
    styles = [("pinned", "raw", "#c44e52", "--"), ("pinned", "cush", "#4c72b0", "-"),
              ("pageable", "raw", "#dd8452", "--"), ("pageable", "cush", "#55a868", "-"),
              ("registered", "cush", "#8172b3", "-")]
    for ax, op in zip(axes[0], ops):
        factor = gpus if op == "broadcast" else 1
        for memory, impl, color, style in styles:
            mibs = sorted(k[3] for k in samples if k[:3] == (op, memory, impl))
            if mibs:
                gbps = [factor * mib * 2 ** 20 / (median(samples[(op, memory, impl, mib)]) * 1e-3) / 1e9 for mib in mibs]
                ax.semilogx(mibs, gbps, style, marker="o", color=color, label=f"{impl}, {memory}")
        ax.set_title(op)
        ax.set_xlabel("MiB")
        ax.set_ylabel("GB/s delivered (median)")
        ax.legend(fontsize=7)
    return save(fig, out_dir, "host_ops.png")
