"""Tables of the advection case from bench_cases JSON (names in cases/advection/bench_advection.cpp).

Usage: python3 tools/summarize_advection.py cases.json > table.md

Per GPU count and grid: point updates per second of each variant and schedule, the fraction of
the roofline (16 bytes per update at 4.2 TB/s per GPU: 262.5 G updates/s per GPU, ANCHORS.md),
cush against raw (raw time / cush time), strong-scaling efficiency against the single-GPU
reference, and the share of the exchange that overlap hides: (bulk - overlap) / exchange alone.
Ratios come from one file, that is one run.
"""
import json
import re
import statistics
import sys
from collections import defaultdict

ROOF_PER_GPU = 4.2e12 / 16 / 1e9  # G point updates/s
NAME = re.compile(r"^(?P<kind>case/advection|case/advection_overlap|deep/advection/(?P<depth>\d+)|exchange/advection)"
                  r"(?:/(?P<v>single|multi_cuda|multi_cush))?/(?P<g>\d+)gpu/(?P<n>\d+)")
UNIT_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def main(path):
    with open(path) as f:
        data = json.load(f)
    ms = defaultdict(list)
    rate = defaultdict(list)
    for b in data.get("benchmarks", []):
        if b.get("run_type", "iteration") != "iteration":
            continue
        if b.get("error_occurred"):
            print(f"- ERROR {b['name']}: {b.get('error_message', '?')}")
            continue
        m = NAME.match(b["name"])
        if not m:
            continue
        kind = m["kind"]
        key = (kind, m["v"] or "", int(m["g"]), int(m["n"]))
        ms[key].append(b["real_time"] * UNIT_MS[b.get("time_unit", "ns")])
        rate[key].append(b.get("Gpts/s", float("nan")))
    med = lambda d, k: statistics.median(d[k]) if k in d else float("nan")  # noqa: E731
    ctx = data.get("context", {})
    print(f"# advection ({ctx.get('date', '?')}, {ctx.get('gpu_count', '?')} x {ctx.get('gpus', '?')})\n")
    gpus_all = sorted({k[2] for k in ms})
    sizes = sorted({k[3] for k in ms})
    for g in gpus_all:
        print(f"## {g} GPU{'s' if g > 1 else ''} (G point updates/s; % of roofline)\n")
        print("| n | single | raw bulk | cush bulk | raw overlap | cush overlap | cush / raw (bulk, overlap) |"
              " deep 2 / 4 / 8 | hidden (raw, cush) | strong-scaling eff. (cush overlap) |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for n in sizes:
            def r(kind, v=""):
                return med(rate, (kind, v, g, n))

            def cell(x, gpus=g):
                return f"{x:.1f} ({100 * x / (ROOF_PER_GPU * gpus):.0f}%)" if x == x else "-"
            single = med(rate, ("case/advection", "single", 1, n))
            rb, cb = r("case/advection", "multi_cuda"), r("case/advection", "multi_cush")
            ro, co = r("case/advection_overlap", "multi_cuda"), r("case/advection_overlap", "multi_cush")
            deep = " / ".join(f"{r(f'deep/advection/{d}'):.1f}" for d in (2, 4, 8))
            t_ex = med(ms, ("exchange/advection", "", g, n))
            hidden = []
            for v in ("multi_cuda", "multi_cush"):
                tb = med(ms, ("case/advection", v, g, n))
                to = med(ms, ("case/advection_overlap", v, g, n))
                hidden.append(f"{(tb - to) / t_ex:.2f}" if t_ex == t_ex and t_ex > 0 else "-")
            eff = f"{co / (g * single):.3f}" if single == single else "-"
            print(f"| {n} | {cell(single, 1)} | {cell(rb)} | {cell(cb)} | {cell(ro)} | {cell(co)} | "
                  f"{cb / rb:.3f}, {co / ro:.3f} | {deep} | {', '.join(hidden)} | {eff} |")
        print()


if __name__ == "__main__":
    main(sys.argv[1])
