"""The karst case's numbers from one bench_cases JSON (cases/karst/bench_karst.cpp's rows): forward
runs per second against ensemble size for every variant and the CPU reference, the goal run, the
GPU/CPU ratio at equal ensembles, and the F-test (seed 002 eq. 2.2) of cush against raw CUDA.

Usage: python3 cases/karst/summary.py docs/results/karst_1gpu_<date>.json
"""
import collections
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
from cushreport import perf  # noqa: E402

ROW = re.compile(r"^(?P<family>case/karst(?:_goal|_streaming)?|cpu/karst)/(?P<who>[a-z_]+|\d+threads)/?(?P<on>\d+v?gpu)?/(?P<k>\d+)/")


def load(path):
    """{(family, who, on): {K: [seconds per iteration]}} and {same key: {K: runs/s median}}."""
    times = collections.defaultdict(lambda: collections.defaultdict(list))
    rates = collections.defaultdict(lambda: collections.defaultdict(list))
    with open(path) as f:
        data = json.load(f)
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate" or b.get("error_occurred"):
            continue
        m = ROW.match(b["name"])
        if not m:
            continue
        key = (m["family"], m["who"], m["on"] or "cpu")
        k = int(m["k"])
        times[key][k].append(b["real_time"] / 1e3)  # ms -> s
        rates[key][k].append(b["runs/s"])
    return times, {key: {k: statistics.median(v) for k, v in d.items()} for key, d in rates.items()}


def main(path):
    times, rates = load(path)
    keys = sorted(rates)
    sizes = sorted({k for key in keys if key[0] not in ("case/karst_goal", "case/karst_streaming") for k in rates[key]})
    print(f"# {os.path.basename(path)}: forward runs per second (N = 1024, M = 128, 2,000 steps)\n")
    shown = [key for key in keys if key[0] not in ("case/karst_goal", "case/karst_streaming")]
    print("| K | " + " | ".join(f"{w} ({on})" for _, w, on in shown) + " |")
    print("|---" * (len(shown) + 1) + "|")
    for k in sizes:
        cells = [f"{rates[key][k]:,.1f}" if k in rates[key] else "" for key in shown]
        print(f"| {k} | " + " | ".join(cells) + " |")
    cpu = next((key for key in keys if key[0] == "cpu/karst"), None)
    single = ("case/karst", "single", "1gpu")
    if cpu and single in rates:
        print("\nGPU (single) / CPU, runs per second at equal K:")
        for k in sizes:
            if k in rates[cpu] and k in rates[single]:
                print(f"  K = {k}: {rates[single][k] / rates[cpu][k]:.2f}x")
    streaming = ("case/karst_streaming", "single", "1gpu")
    if streaming in rates and single in rates:
        print("\nsingle, resident / streaming path, runs per second at equal K:")
        for k in sorted(rates[streaming]):
            if k in rates[single]:
                print(f"  K = {k}: {rates[single][k]:,.1f} / {rates[streaming][k]:,.1f} = {rates[single][k] / rates[streaming][k]:.2f}x")
    for who in ("single", "multi_cuda", "multi_cush"):
        goal = times.get(("case/karst_goal", who, "1gpu"), {}).get(512)
        if goal:
            print(f"goal run ({who}): 512 members, 20,000 steps: {statistics.median(goal):.3f} s")
    for on in sorted({key[2] for key in keys if key[0] == "case/karst"}):
        raw = times.get(("case/karst", "multi_cuda", on))
        cush = times.get(("case/karst", "multi_cush", on))
        if raw and cush:
            print(f"F-test cush vs raw ({on}): {perf.verdict(perf.f_test(raw, cush))}")


if __name__ == "__main__":
    main(sys.argv[1])
