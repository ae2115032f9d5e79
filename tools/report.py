#!/usr/bin/env python3
"""Regenerates docs/results: the complexity report (always), the performance report (from the
benchmark JSON in the results folder) and summary.json, one entry per headline figure.

Usage: report.py [--results docs/results] [--root .]
"""
import argparse
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import complexity  # noqa: E402
import perf_report  # noqa: E402

CASES_JSON = "perf_cases.json"
HOST_OPS_JSON = "perf_host_ops.json"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default="docs/results")
    parser.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    args = parser.parse_args()
    os.makedirs(args.results, exist_ok=True)

    rows, entries = complexity.run(args.root, args.results)
    print(f"report: complexity of {len({r['case'] for r in rows})} case(s) -> {args.results}/complexity.md, complexity.png")
    # perf_cases.json is what scripts/report.sh measures; perf_cases_<what>.json hold runs of single
    # cases made apart (their sections say where); delete one once perf_cases.json covers its case.
    case_files = [os.path.join(args.results, CASES_JSON)] + sorted(glob.glob(os.path.join(args.results, "perf_cases_*.json")))
    perf = perf_report.run(args.results, case_files, os.path.join(args.results, HOST_OPS_JSON))
    print(f"report: performance -> {args.results}/performance.md ({len(perf)} headline figures)")
    entries += perf
    with open(os.path.join(args.results, "summary.json"), "w") as f:
        json.dump({"generated_by": "scripts/report.sh (tools/report.py)", "figures": entries}, f, indent=2)
        f.write("\n")
    print(f"report: {len(entries)} figures -> {args.results}/summary.json")


if __name__ == "__main__":
    main()
