"""The report: regenerates docs/results/complexity.md (always), performance.md (from the benchmark
JSON in the results folder) and summary.json, one entry per headline figure (complexity,
perf_cases*.json, perf_host_ops.json).
"""
import glob
import json
import os

from . import complexity, perf

CASES_JSON = "perf_cases.json"
HOST_OPS_JSON = "perf_host_ops.json"


def run(results_dir, root):
    """Writes the three reports into results_dir; returns summary.json's entries."""
    os.makedirs(results_dir, exist_ok=True)
    rows, entries = complexity.run(root, results_dir)
    print(f"report: complexity of {len({r['case'] for r in rows})} case(s) -> {results_dir}/complexity.md, complexity.png")
    # perf_cases.json is what scripts/report.sh measures; perf_cases_<what>.json hold runs of single
    # cases made apart (their sections say where); delete one once perf_cases.json covers its case.
    case_files = [os.path.join(results_dir, CASES_JSON)] + sorted(glob.glob(os.path.join(results_dir, "perf_cases_*.json")))
    measured = perf.run(results_dir, case_files, os.path.join(results_dir, HOST_OPS_JSON))
    print(f"report: performance -> {results_dir}/performance.md ({len(measured)} headline figures)")
    entries += measured
    with open(os.path.join(results_dir, "summary.json"), "w") as f:
        json.dump({"generated_by": "scripts/report.sh (python3 -m cushreport report)", "figures": entries},
                  f, indent=2, ensure_ascii=False)
        f.write("\n")
    print(f"report: {len(entries)} figures -> {results_dir}/summary.json")
    return entries
