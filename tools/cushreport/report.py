"""The report: regenerates docs/results/complexity.md (always), performance.md (from the benchmark
JSON in the results folder) and summary.json, one entry per headline figure of the results pages.

summary.json gathers the report's own figures (complexity, data/perf_cases*.json, data/perf_host_ops.json)
and those of the runs the results pages quote (PAGE_RUNS; the two-GPU call, two_gpu_*.json; each
multi-GPU call, multi_gpu_*.json), computed from the committed JSON with the pages' definitions.
"""
import functools
import glob
import json
import os
import sys

from . import complexity, gbench, headline, manifest, perf
from .summaries import advection, device_ops, fft, halo, karst, lbm, matmul, multi_gpu, ranks, temporal, two_gpu

# The measurements live in the results folder's data/ (its README.md, the manifest, lists them);
# the pages, plots, summary.json and headline.md beside it.
DATA = "data"
CASES_JSON = "perf_cases.json"
HOST_OPS_JSON = "perf_host_ops.json"
# The files of one run on two real GPUs (multi_gpu.md, 2026-11-24 section; issue 24): bench_cases rows of the cases,
# which performance.md shows beside the one-GPU runs, and bench_device_ops all-to-all rows, the
# FFT's communication floor in the two-GPU goals (summaries/two_gpu.py).
TWO_GPU_GLOB = "two_gpu_*.json"
# The files of each call on several real GPUs (multi_gpu.md, issue 45; multi_gpu_<call>_<part>.json,
# any GPU count): bench_cases rows, shown in performance.md like the two-GPU call's, and
# bench_device_ops and bench_halo rows; their goals come from summaries/multi_gpu.py.
MULTI_GPU_GLOB = "multi_gpu_*.json"


def _matmul_rerun(run):
    """matmul.md's re-run on the final code: kept out of perf_cases*.json (which would mix two runs),
    so its case entries (cush against raw, F-test) come from here."""
    return perf.case_figures(run, perf.case_samples(run.rows), tag="rerun") + matmul.figures(run, "rerun")


def _four_gpu_rows(run):
    """temporal.md's 4-GPU runs: their overlapped 4-GPU figures only. The advection's run was cut
    after the wave's first row, so its one-GPU figures (the wave's best T among the one T it has)
    would replace the whole runs' above; the wave's run has orders 4-8 one step a launch only, whose
    one-GPU figures the one-GPU runs above state."""
    return [e for e in temporal.figures(run) if ".4gpu." in e["name"]]


def _factorized_rows(run):
    """temporal.md's run of the factorized advection kernel (one GPU): its factorized figures only;
    the 27-term rows of the same run stay with the whole runs above."""
    return [e for e in temporal.figures(run) if e["name"].startswith("advection_factorized.")]


# The wave's orders whose best rate is one step a launch (max_fused_steps 1): since the staged
# kernel at order 8 and the ghost passes (runs 131-136), a later one-GPU run states them.
ONE_STEP_WAVE = (".order6.", ".order8.")


def _wave_fused_rows(run):
    """temporal.md's wave run of 2026-11-28: its figures but the one-step orders', which a later run states."""
    return [e for e in temporal.figures(run) if not any(o in e["name"] for o in ONE_STEP_WAVE)]


def _wave_one_step_rows(run):
    """temporal.md's one-GPU wave runs of the staged kernel: the one-step orders' figures only (their
    orders 2 and 4 ran one step a launch, not their best); a later run's figure replaces an earlier's."""
    return [e for e in temporal.figures(run) if any(o in e["name"] for o in ONE_STEP_WAVE)]


# (page in docs/results, JSON file it quotes, the figures it states)
PAGE_RUNS = [
    ("advection.md", "perf_cases_advection_1gpu.json", advection.figures),
    ("matmul.md", "perf_cases_matmul_1gpu.json", functools.partial(matmul.figures, tag="first")),
    ("matmul.md", "matmul_1gpu_rerun_2026-11-23.json", _matmul_rerun),
    ("halo.md", "halo_2026-11-23.json", halo.figures),
    ("temporal.md", "temporal_2026-11-28_2xh200.json", temporal.figures),
    ("temporal.md", "wave_2026-11-28_2xh200.json", _wave_fused_rows),
    ("temporal.md", "wave_2026-11-29u_1xh200.json", _wave_one_step_rows),
    ("temporal.md", "wave_2026-11-29w_1xh200.json", _wave_one_step_rows),
    ("temporal.md", "wave_2026-11-29z_1xh200.json", _wave_one_step_rows),   # order 6, the streaming kernel (run 142)
    ("temporal.md", "wave_2026-11-29zb_1xh200.json", _wave_one_step_rows),  # order 8, the staged kernel's last call (run 143)
    ("temporal.md", "wave_2026-11-29zd_1xh200.json", _wave_one_step_rows),  # the tensor-copy kernel (run 151)
    ("temporal.md", "wave_2026-11-29zf_1xh200.json", _wave_one_step_rows),  # orders 6 and 8 (run 153)
    ("temporal.md", "wave_2026-11-29zg_1xh200.json", _wave_one_step_rows),  # orders 6 and 8 (run 154)
    ("temporal.md", "wave_2026-11-29zh_2xh200.json", _wave_one_step_rows),  # orders 6 and 8 on 1 and 2 GPUs, the latest call (run 157)
    ("temporal.md", "temporal_2026-11-28h_4xh200.json", _four_gpu_rows),
    ("temporal.md", "wave_2026-11-29zj_4xh200.json", _four_gpu_rows),  # the wave's E4 at orders 4-8 (run 162)
    ("temporal.md", "temporal_2026-11-29p_1xh200.json", _factorized_rows),
    ("lbm.md", "lbm_goal_2026-11-24.json", lbm.figures),
    ("lbm.md", "lbm_largest_2026-11-24.json", lbm.figures),
    ("fft.md", "perf_cases_fft_1gpu.json", fft.figures),
    ("fft.md", "fft_2vgpu_2026-11-24.json", fft.figures),
    ("karst.md", "perf_cases_karst_1gpu.json", karst.figures),
    ("device_ops.md", "device_ops_2026-11-23_small.json", functools.partial(device_ops.figures, "A")),
    ("device_ops.md", "device_ops_2026-11-23_large.json", functools.partial(device_ops.figures, "A")),
    ("device_ops.md", "device_ops_2026-11-23_reps.json", functools.partial(device_ops.figures, "B")),
    ("device_ops.md", "device_ops_2026-11-23_final_small.json", functools.partial(device_ops.figures, "C")),
]


# Runs on virtual GPUs whose figures are goals stated on virtual GPUs (the same algorithmic work on
# one GPU: a comparison of two codes, not a multi-GPU speed); every other virtual run is left out.
VIRTUAL_GOALS = {"fft_2vgpu_2026-11-24.json"}


def page_figures(results_dir):
    """The summary.json entries of the runs in PAGE_RUNS; a missing file is reported and left out."""
    entries = []
    for page, name, figures in PAGE_RUNS:
        path = os.path.join(results_dir, DATA, name)
        if os.path.exists(path) and (name in VIRTUAL_GOALS or not gbench.on_virtual_gpus(gbench.load(path))):
            entries += figures(gbench.load(path))
        else:
            print(f"report: {name} (quoted by {page}) is not in {results_dir}/{DATA}; its figures are left out", file=sys.stderr)
    return entries


def two_gpu_figures(results_dir):
    """The two-GPU goal entries (summaries/two_gpu.py) of the two_gpu_*.json files, if any."""
    paths = sorted(glob.glob(os.path.join(results_dir, DATA, TWO_GPU_GLOB)))
    runs = [r for r in (gbench.load(p) for p in paths) if not gbench.on_virtual_gpus(r)]
    return two_gpu.figures(runs) if runs else []


def multi_gpu_figures(results_dir):
    """The multi-GPU goal entries (summaries/multi_gpu.py) and those of the cases across processes
    (summaries/ranks.py: a call's bench_ranks file beside its bench_cases rows), one call after the
    other (oldest first)."""
    entries = []
    for paths in multi_gpu.calls(glob.glob(os.path.join(results_dir, DATA, MULTI_GPU_GLOB))).values():
        runs = [gbench.load(p) for p in paths]
        entries += multi_gpu.figures(runs) + ranks.figures(runs)
    return entries


def newest_by_name(entries):
    """The entries with one per name: where a later call states a figure of the same name (the same
    definition on the same GPU count), its entry replaces the earlier one in place."""
    by_name = {}
    for e in entries:
        if e["name"] in by_name:
            print(f"report: {e['name']} of {e['source']} replaces that of {by_name[e['name']]['source']}", file=sys.stderr)
        by_name[e["name"]] = e
    return list(by_name.values())


def run(results_dir, root):
    """Writes the reports (complexity, performance, summary.json, the headline table) into results_dir;
    returns summary.json's entries."""
    os.makedirs(results_dir, exist_ok=True)
    rows, entries = complexity.run(root, results_dir)
    print(f"report: complexity of {len({r['case'] for r in rows})} case(s) -> {results_dir}/complexity.md, complexity.png")
    # perf_cases.json is what scripts/report.sh measures; perf_cases_<what>.json hold runs of single
    # cases made apart (their sections say where); delete one once perf_cases.json covers its case.
    data = os.path.join(results_dir, DATA)
    case_files = [os.path.join(data, CASES_JSON)] + sorted(glob.glob(os.path.join(data, "perf_cases_*.json")))
    case_files += sorted(glob.glob(os.path.join(data, TWO_GPU_GLOB)))
    case_files += [p for paths in multi_gpu.calls(glob.glob(os.path.join(data, MULTI_GPU_GLOB))).values() for p in paths]
    measured = perf.run(results_dir, case_files, os.path.join(data, HOST_OPS_JSON))
    print(f"report: performance -> {results_dir}/performance.md ({len(measured)} headline figures)")
    quoted = page_figures(results_dir) + two_gpu_figures(results_dir) + multi_gpu_figures(results_dir)
    print(f"report: {len(quoted)} figures of the runs the results pages quote")
    entries += newest_by_name(measured + quoted)
    with open(os.path.join(results_dir, "summary.json"), "w") as f:
        json.dump({"generated_by": "scripts/report.sh (python3 -m cushreport report)", "figures": entries},
                  f, indent=2, ensure_ascii=False)
        f.write("\n")
    print(f"report: {len(entries)} figures -> {results_dir}/summary.json")
    headline.write(results_dir, entries)
    manifest.write(results_dir, root)
    return entries
