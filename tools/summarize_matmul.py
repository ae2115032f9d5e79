"""Tables of the matmul case from bench_cases JSON (names in cases/matmul/bench_matmul.cpp).

Usage: python3 tools/summarize_matmul.py cases.json > table.md

Per family (FP32 and FP64 end to end, weak scaling, device-resident) and GPU count: the median
time and GFLOP/s (2 m n p / t) of each variant, cush's speed over raw CUDA (raw time / cush time),
and for FP32 end to end cuBLASXt's best tile against cush (xt time / cush time: > 1, cush faster).
Resident rows add the speed-up of g GPUs over the single-GPU reference. Ratios come from one file,
that is one run.
"""
import json
import os
import re
import statistics
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perf_report import f_test, verdict  # noqa: E402  (the report's F-test, seed 002 eq. 2.2)

NAME = re.compile(r"^(?P<fam>case/matmul(?:_f64|_weak)?|resident/matmul)/(?P<v>single|multi_cuda|multi_cush)/(?P<g>\d+)gpu/(?P<k>\d+)")
XT = re.compile(r"^xt/matmul/(?P<block>\d+)/(?P<g>\d+)gpu/(?P<k>\d+)")
UNIT_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def load(path):
    with open(path) as f:
        data = json.load(f)
    times, rates, xt = defaultdict(list), defaultdict(list), defaultdict(list)
    errors = []
    for b in data.get("benchmarks", []):
        if b.get("run_type", "iteration") != "iteration":
            continue
        if b.get("error_occurred"):
            errors.append(f"{b['name']}: {b.get('error_message', '?')}")
            continue
        ms = b["real_time"] * UNIT_MS[b.get("time_unit", "ns")]
        m = NAME.match(b["name"])
        if m:
            key = (m["fam"], m["v"], int(m["g"]), int(m["k"]))
            times[key].append(ms)
            rates[key].append(b.get("GFLOP/s", float("nan")))
            continue
        m = XT.match(b["name"])
        if m:
            xt[(int(m["block"]), int(m["g"]), int(m["k"]))].append(ms)
    return data.get("context", {}), times, rates, xt, errors


def med(v):
    return statistics.median(v) if v else float("nan")


def main(path):
    context, times, rates, xt, errors = load(path)
    print(f"# matmul ({context.get('date', '?')}, {context.get('gpu_count', '?')} x {context.get('gpus', '?')}, "
          f"CUDA {context.get('cuda_runtime', '?')}, cush {context.get('cush', '?')})\n")
    for e in errors:
        print(f"- ERROR {e}")
    fams = sorted({k[0] for k in times})
    for fam in fams:
        gpus_all = sorted({k[2] for k in times if k[0] == fam})
        ks = sorted({k[3] for k in times if k[0] == fam})
        for g in gpus_all:
            head = "| k | single ms | raw ms | cush ms | cush GFLOP/s | cush / raw speed |"
            sep = "|---:|---:|---:|---:|---:|---:|"
            if fam == "case/matmul":
                head += " best cuBLASXt ms (tile) | xt / cush |"
                sep += "---:|---:|"
            if fam == "resident/matmul":
                head += " speed-up over single (cush, raw) |"
                sep += "---:|"
            print(f"## {fam}, {g} GPU{'s' if g > 1 else ''}\n\n{head}\n{sep}")
            for k in ks:
                single = med(times.get((fam, "single", 1, k)))
                raw = med(times.get((fam, "multi_cuda", g, k)))
                cush = med(times.get((fam, "multi_cush", g, k)))
                if raw != raw and cush != cush:
                    continue
                row = (f"| {k} | {single:.3f} | {raw:.3f} | {cush:.3f} | {med(rates.get((fam, 'multi_cush', g, k))):.0f} "
                       f"| {raw / cush:.3f} |")
                if fam == "case/matmul":
                    cands = [(med(v), blk) for (blk, gg, kk), v in xt.items() if gg == g and kk == k]
                    if cands:
                        best, blk = min(cands)
                        row += f" {best:.3f} ({blk}) | {best / cush:.3f} |"
                    else:
                        row += " - | - |"
                if fam == "resident/matmul":
                    row += f" {single / cush:.3f}, {single / raw:.3f} |"
                print(row)
            if fam.startswith("case/"):
                raw_by = {k: times[(fam, "multi_cuda", g, k)] for k in ks if (fam, "multi_cuda", g, k) in times}
                cush_by = {k: times[(fam, "multi_cush", g, k)] for k in ks if (fam, "multi_cush", g, k) in times}
                print("\n" + verdict(f_test(raw_by, cush_by)))
            print()
    if xt:
        print("## cuBLASXt tile sweep (ms)\n\n| GPUs | k | " + " | ".join(str(b) for b in sorted({k[0] for k in xt})) + " |")
        blocks = sorted({k[0] for k in xt})
        print("|---:|---:|" + "---:|" * len(blocks))
        for g, k in sorted({(k[1], k[2]) for k in xt}):
            if sum((b, g, k) in xt for b in blocks) < 2:
                continue
            print(f"| {g} | {k} | " + " | ".join(f"{med(xt.get((b, g, k))):.3f}" for b in blocks) + " |")


if __name__ == "__main__":
    main(sys.argv[1])
