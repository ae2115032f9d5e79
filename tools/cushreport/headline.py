"""The results' entry table (docs/results/headline.md): one row per case and GPU<->GPU operation,
its headline figure as summary.json holds it (the newest run; for the multi-GPU figures the most
GPUs measured), the reference measured in the same run, the ratio and the hardware, then each
case's newest scaling plot. Regenerated with summary.json by `python3 -m cushreport report`.
"""

import glob
import json
import os

# (what the row shows, the summary.json figure). Ratios read "> 1: cush ahead" for every row.
ROWS = [
    ("Matrix multiply, FP32, k = 40, against cuBLASXt (best tile)", "matmul.4gpu.multi_cush.k40.vs_cublasxt"),
    ("Matrix multiply, FP64, k = 40, against cuBLASXt (best tile)", "matmul.4gpu.f64.multi_cush.k40.vs_cublasxt"),
    ("3D advection 1024³, overlapped, against 4 x one GPU", "advection.4gpu.overlap.multi_cush.n1024.vs_4x_1gpu"),
    ("Lattice-Boltzmann FP32, 1024 x 1024 x 256, against 4 x one GPU", "lbm.4gpu.esoteric_fp32.multi_cush.m1024.vs_4x_1gpu"),
    ("Lattice-Boltzmann FP16S, 1024 x 1024 x 256, against FluidX3D", "lbm.4gpu.esoteric_fp16s.multi_cush.m1024.vs_fluidx3d"),
    ("Karst ensemble, 4096 runs, against 4 x one GPU", "karst.4gpu.multi_cush.k4096.vs_4x_1gpu"),
    ("FFT 2^26, transposed output, against cufftXt", "fft.4gpu.transposed_out.cush_vs_cufftxt.2e26"),
    ("FFT 2^28, natural order, against cufftXt", "fft.4gpu.natural.cush_vs_cufftxt.2e28"),
    ("Scale (host -> GPUs -> host), 2^28 floats, against raw CUDA", "scale.4gpu.time_n268435456"),
    ("Scale, 2^22 to 2^28 floats, against raw CUDA (the F-test's fit)", "scale.4gpu.cush_vs_raw"),
    ("All-to-all, 1 GiB per GPU, against NCCL", "device_ops.4gpu.all_to_all.1GiB.cush_vs_raw_nccl"),
    ("All-gather, 1 GiB per GPU, against NCCL", "device_ops.4gpu.all_gather.1GiB.cush_vs_raw_nccl"),
    ("Broadcast, 1 GiB, against NCCL", "device_ops.4gpu.broadcast.1GiB.cush_vs_raw_nccl"),
    ("All-reduce, 16 KiB, against NCCL", "device_ops.4gpu.all_reduce.16KiB.cush_vs_raw_nccl"),
    ("All-reduce, 1 GiB, against NCCL", "device_ops.4gpu.all_reduce.1GiB.cush_vs_raw_nccl"),
    ("Reduce, 1 GiB, against NCCL", "device_ops.4gpu.reduce.1GiB.cush_vs_raw_nccl"),
    ("Halo exchange, strided x face 2048², depth 1, against the raw twin", "halo.2gpu.x.2048.d1.time"),
    ("RBF-FD on the sphere, 2^22 nodes, 4 GPUs, against one GPU", "rbffd.4gpu.multi_cush.2e22.speedup"),
    ("RBF-FD on the sphere, 2^22 nodes, 4 GPUs, overlapped, against raw CUDA", "rbffd_overlap.4gpu.time_n4194304"),
    ("3D advection 1024³, one GPU, fused steps, against the one-step roofline", "advection.1gpu.best_steps.rate_n1024"),
    ("3D advection 1024³, one GPU, fused steps, factorized form, against the one-step roofline",
     "advection_factorized.1gpu.best_steps.rate_n1024"),
    ("3D advection 1024³, 4 GPUs, fused steps, overlapped, against raw CUDA", "advection.4gpu.best_steps_overlap.rate_n1024"),
    ("Wave equation, order 2, 1024³, one GPU, fused steps, against the one-step roofline",
     "wave.order2.1gpu.best_steps.rate_n1024"),
    ("Wave equation, order 2, 1024³, 2 GPUs, fused steps, overlapped, against raw CUDA",
     "wave.order2.2gpu.best_steps_overlap.rate_n1024"),
]
CASES = ("scale", "matmul", "advection", "lbm", "fft", "karst", "rbffd", "wave")
COMPLEXITY = [(f"{case}: statements (NCSS) of the multi-GPU code, against raw CUDA", f"{case}.complexity.ncss") for case in CASES]
# The plots: each case's scaling plot of the multi-GPU run on the most GPUs, the newest of those
# (file names end in the run's date and letter, so the newest sorts last).
PLOTS = ("advection", "lbm_esoteric_fp32", "matmul", "karst", "fft_natural", "scale")


def _number(x):
    """A value as the tables print it: thousands separated, three significant digits below 10."""
    if x is None:
        return "-"
    if isinstance(x, int) or abs(x) >= 1000:
        return f"{x:,.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}" if abs(x) >= 1 else f"{x:.3g}"


def _ratio(x):
    return "-" if x is None else f"{x:.3f}"


def _run(f):
    """A row's last two cells: the hardware, and the run's file and day."""
    return f"{f.get('device', '-')} | `{f.get('source', '-')}`, {str(f.get('date', '-'))[:10]} |"


def missing(figures):
    """The rows' figure names summary.json does not hold."""
    names = {f["name"] for f in figures}
    return [name for _, name in ROWS + COMPLEXITY if name not in names]


def render(figures, results_dir=None):
    """The headline page in Markdown."""
    by_name = {f["name"]: f for f in figures}
    out = ["# Headline figures", "",
           "One row per case and GPU<->GPU operation: cush's figure, the reference measured in the same run",
           "(or a published figure, where the row says so), and their ratio, > 1 where cush is ahead. Each",
           "row names its run; the results page of that run says what was measured and why a row misses",
           "its goal ([multi_gpu.md](multi_gpu.md) for the multi-GPU runs). Regenerated by",
           "`scripts/report.sh` from [summary.json](summary.json), which holds every figure.", "",
           "| what | cush | reference | ratio | measured on | run |", "|---|---:|---|---:|---|---|"]
    for label, name in ROWS:
        f = by_name.get(name)
        if f is None:
            out.append(f"| {label} | - | not in summary.json | - | - | - |")
            continue
        if f.get("ratio") is None and str(f.get("unit", "")).startswith("speed"):
            # A speed ratio on its own (the F-test's fit of cush against raw CUDA over all sizes).
            out.append(f"| {label} | - | raw CUDA, same run (F-test, seed 002 eq. 2.2) | {_ratio(f['value'])} | {_run(f)}")
            continue
        ref = f"{_number(f.get('reference'))} {f.get('unit', '')} ({f.get('reference_is')})"
        out.append(f"| {label} | {_number(f['value'])} {f.get('unit', '')} | {ref} | {_ratio(f.get('ratio'))} | {_run(f)}")
    out += ["", "## Code complexity", "",
            "The multi-GPU cush variant against the multi-GPU raw CUDA variant of each case (pmccabe; the",
            "ratio is raw's statements over cush's). Details: [complexity.md](complexity.md).", "",
            "| what | cush | raw CUDA | ratio |", "|---|---:|---:|---:|"]
    for label, name in COMPLEXITY:
        f = by_name.get(name)
        if f is None:
            out.append(f"| {label} | - | - | - |")
            continue
        out.append(f"| {label} | {f['value']} | {f.get('reference')} | {_ratio(f.get('ratio'))} |")
    if results_dir:
        plots = []
        for case in PLOTS:
            found = sorted(glob.glob(os.path.join(results_dir, f"{case}_multi_gpu_*_scaling.png")))
            if found:
                plots.append(os.path.basename(max(found, key=lambda f: (_run_gpus(results_dir, case, f), f))))
        if plots:
            out += ["", "## Scaling", "", "Each case's newest multi-GPU run on the most GPUs: speed against GPU count.", ""]
            out += [f"![{p}]({p})" for p in plots]
    return "\n".join(out) + "\n"


def _run_gpus(results_dir, case, plot):
    """The GPU count of the run a case's scaling plot was drawn from (its JSON in data/, named by the
    plot: <case>_<run>_scaling.png); 0 where the file or its count is missing."""
    run = os.path.basename(plot)[len(case) + 1:-len("_scaling.png")]
    try:
        with open(os.path.join(results_dir, "data", run + ".json")) as f:
            return int(json.load(f).get("context", {}).get("gpu_count", 0))
    except (OSError, ValueError):
        return 0


def write(results_dir, figures):
    path = os.path.join(results_dir, "headline.md")
    with open(path, "w") as f:
        f.write(render(figures, results_dir))
    gone = missing(figures)
    if gone:
        print(f"report: headline.md: not in summary.json: {', '.join(gone)}")
    print(f"report: headline table -> {path}")
    return path
