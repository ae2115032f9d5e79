"""performance.md: cush against raw CUDA, from Google Benchmark JSON run with repetitions.

Cases (bench_cases, names case/<case>/<variant>/<g>gpu/<n>): per case and GPU count, the median
time of each variant per problem size, cush's speed relative to raw CUDA with a 95% confidence
interval, and the extra-sum-of-squares F-test of seed 002 eq. 2.2 on log time against log size
(quadratic; linear with fewer than four sizes): does one curve through raw and cush fit
significantly worse than one curve each? Charts in plots.py.

Host<->GPU operations (bench_host_ops, names host/<op>/<memory>/<impl>/<MiB>MiB): the same
comparison per operation and host memory; pageable and registered cush runs are compared with
the raw pageable copy.

Each section also yields its summary.json entries: per case the largest size on the most GPUs,
for the host operations the largest size.
"""
import glob
import math
import os
import re
import sys
from collections import defaultdict

from . import gbench, plots, stats
from .figures import figure, measured_in

# A case's rows may carry one number before the variant (the wave case's order: case/wave/8/...):
# each such number is a case of its own ("wave_order8"), on the case's page.
CASE_RE = re.compile(r"^case/(?P<case>[^/]+)/(?:(?P<order>\d+)/)?(?P<variant>single|multi_cuda|multi_cush)/(?P<gpus>\d+)gpu/(?P<n>\d+)")
# Rows that exist only for a figure stated elsewhere, not cases of their own: cush's LBM step without
# overlap, for the share of the exchange hidden (summaries/multi_gpu_goals/scaling.py).
SIDE_ROWS = re.compile(r"^case/lbm_bulk_")
HOST_RE = re.compile(r"^host/(?P<op>[a-z]+)/(?P<memory>[a-z_]+)/(?P<impl>raw|cush)/(?P<mib>\d+)MiB")


def context_line(context):
    return (f"Measured {context.get('date', '?')} on {gbench.device_of(context)} (host {context.get('host_name', '?')}), "
            f"CUDA runtime {context.get('cuda_runtime', '?')}, driver {context.get('cuda_driver', '?')}, "
            f"NCCL {context.get('nccl', '?')}, cush {context.get('cush', '?')}; peer access: "
            f"{context.get('peer_access', '?')}.")


def ci_text(raw, cush):
    """cush's speed relative to raw with its 95% interval, as the tables print it."""
    ratio, lo, hi = stats.ratio_ci(raw, cush)
    return f"{ratio:.3f} ({lo:.3f}-{hi:.3f})" if not math.isnan(lo) else f"{ratio:.3f}"


def f_test(raw, cush):
    """eq. 2.2 on {size: [ms]} of raw and cush; None when there are too few sizes or runs.

    The result of stats.extra_sum_of_squares_f, plus the fit's degree, the number of runs and
    cush's overall speed relative to raw (which way the curves differ)."""
    sizes = sorted(set(raw) & set(cush))
    if len(sizes) < 2:
        return None
    degree = 2 if len(sizes) >= 4 else 1

    def points(d):
        pairs = [(math.log(s), math.log(t)) for s in sizes for t in d[s]]
        return [x for x, _ in pairs], [y for _, y in pairs]

    xa, ya = points(raw)
    xb, yb = points(cush)
    if len(xa) + len(xb) <= 2 * (degree + 1):
        return None
    r = stats.extra_sum_of_squares_f(xa, ya, xb, yb, degree=degree)
    r["degree"] = degree
    r["points"] = len(xa) + len(xb)
    r["speed"] = stats.ratio_ci([t for s in sizes for t in raw[s]], [t for s in sizes for t in cush[s]])[0]
    return r


def verdict(r):
    """The F-test's line in the report."""
    if r is None:
        return "F-test: not enough sizes"
    text = (f"F-test (eq. 2.2, degree-{r['degree']} fit of log time on log size, {r['points']} runs): "
            f"F = {r['F']:.2f}, F(0.95; {r['df1']}, {r['df2']}) = {r['F_critical']:.2f}, p = {r['p']:.3g}: ")
    if not r["differ"]:
        return text + "**no significant difference at 95%**"
    return text + f"**different at 95%: cush {'faster' if r['speed'] > 1 else 'slower'}** (x{r['speed']:.2f} overall)"


# --- cases ---------------------------------------------------------------------------------------

# Cases whose rows end in log2 of the problem size (case/fft_natural/.../28 is N = 2^28).
LOG2_LABELLED = ("fft", "rbffd")


def is_log2_labelled(case):
    return case.split("_")[0] in LOG2_LABELLED


def size_text(case, n):
    """A problem size as the tables print it: 2^28 for the log2-labelled cases."""
    return f"2^{n.bit_length() - 1}" if is_log2_labelled(case) else str(n)


def case_samples(rows):
    """(case, variant, gpus, n) -> [ms] for the bench_cases rows; n is the problem size (2^label
    for the log2-labelled cases, so that the F-test and the charts see sizes)."""
    samples = defaultdict(list)
    for row in rows:
        m = CASE_RE.match(row.name)
        if m and not SIDE_ROWS.match(row.name):
            n = int(m["n"])
            if is_log2_labelled(m["case"]):
                n = 2 ** n
            case = m["case"] + (f"_order{m['order']}" if m["order"] else "")
            samples[(case, m["variant"], int(m["gpus"]), n)].append(row.ms)
    return samples


def case_curves(samples, case, g):
    """({n: raw ms}, {n: cush ms}) of one case on g GPUs."""
    raw = {k[3]: v for k, v in samples.items() if k[:3] == (case, "multi_cuda", g)}
    cush = {k[3]: v for k, v in samples.items() if k[:3] == (case, "multi_cush", g)}
    return raw, cush


def case_section(case, samples, context, out_dir, run_name=None):
    """The Markdown lines of one case (and its charts). run_name: for a case that an earlier file
    already showed, the file's name without .json, which goes into the title and the charts' names."""
    keys = [k for k in samples if k[0] == case]
    gpus_all = sorted({k[2] for k in keys})
    sizes = sorted({k[3] for k in keys})
    title = f"## Case {case}" + (f" ({run_name}.json)" if run_name else "")
    lines = [title, "", context_line(context), "",
             "Median of the repetitions; \"cush / raw speed\" is raw time over cush time with a 95% confidence "
             "interval (Welch t on log times; > 1: cush faster).", ""]
    for g in gpus_all:
        raw_by, cush_by = case_curves(samples, case, g)
        if g == 1 and not (raw_by or cush_by):
            continue
        lines += [f"### {g} GPU{'s' if g > 1 else ''}", "",
                  "| n | single-GPU ms | raw CUDA ms | cush ms | cush / raw speed (95% CI) | runs |",
                  "|---:|---:|---:|---:|---|---:|"]
        for n in sizes:
            single, raw, cush = samples.get((case, "single", 1, n)), raw_by.get(n), cush_by.get(n)
            if raw and cush:
                single_ms = f"{stats.median(single):.3f}" if single else "-"
                lines.append(f"| {size_text(case, n)} | {single_ms} | {stats.median(raw):.3f} | {stats.median(cush):.3f} | "
                             f"{ci_text(raw, cush)} | {len(raw)}+{len(cush)} |")
        lines += ["", verdict(f_test(raw_by, cush_by)), ""]
    for path in plots.case_charts(case, samples, out_dir, f"{case}_{run_name}" if run_name else case):
        lines += [f"![{os.path.basename(path)}]({os.path.basename(path)})", ""]
    return lines


def case_figures(run, samples, tag=""):
    """Per case: cush against raw CUDA at the largest size on the most GPUs, with the F-test verdict
    over every size on that many GPUs. `tag` goes into the names of a run that is not the report's
    own (e.g. "rerun": matmul.1gpu.rerun.time_n40)."""
    entries = []
    for case in sorted({k[0] for k in samples}):
        g = max(k[2] for k in samples if k[0] == case)
        n = max(k[3] for k in samples if k[0] == case)
        raw_by, cush_by = case_curves(samples, case, g)
        if n not in raw_by or n not in cush_by:
            continue
        cush_ms, raw_ms = stats.median(cush_by[n]), stats.median(raw_by[n])
        r = f_test(raw_by, cush_by)
        entries.append(figure(
            f"{case}.{g}gpu.{tag + '.' if tag else ''}time_n{n}", round(cush_ms, 4), "ms",
            reference=round(raw_ms, 4), reference_is="multi-GPU raw CUDA, same run", ratio=round(raw_ms / cush_ms, 4),
            **measured_in(run),
            f_test=None if r is None else ("no significant difference at 95%" if not r["differ"]
                                           else f"different at 95% (p = {r['p']:.3g})")))
    return entries


# --- host<->GPU operations -------------------------------------------------------------------------

def host_samples(rows):
    """(op, memory, impl, MiB) -> [ms] for the bench_host_ops rows."""
    samples = defaultdict(list)
    for row in rows:
        m = HOST_RE.match(row.name)
        if m:
            samples[(m["op"], m["memory"], m["impl"], int(m["mib"]))].append(row.ms)
    return samples


def reference_memory(memory):
    """The raw run a cush run is compared with: pinned with pinned, everything else with pageable."""
    return "pinned" if memory == "pinned" else "pageable"


def host_section(samples, context, out_dir):
    """The Markdown lines of the host<->GPU operations (and their chart)."""
    lines = ["## Host<->GPU operations (issue 2)", "", context_line(context), "",
             "cush against the hand-written per-GPU `cudaMemcpyAsync` loop on the same device buffers. Pageable and "
             "registered cush runs are compared with the raw pageable copy. \"speed\" = raw time / cush time "
             "(95% CI).", ""]
    for op in ("scatter", "gather", "broadcast"):
        for memory in ("pinned", "pageable", "registered"):
            cush = {k[3]: s for k, s in samples.items() if k[:3] == (op, memory, "cush")}
            raw = {k[3]: s for k, s in samples.items() if k[:3] == (op, reference_memory(memory), "raw")}
            if not cush or not raw:
                continue
            lines += [f"### {op}, {memory}{'' if memory == reference_memory(memory) else ' (against raw pageable)'}", "",
                      "| MiB | raw ms | cush ms | cush / raw speed (95% CI) |", "|---:|---:|---:|---|"]
            for mib in sorted(set(cush) & set(raw)):
                lines.append(f"| {mib} | {stats.median(raw[mib]):.3f} | {stats.median(cush[mib]):.3f} | "
                             f"{ci_text(raw[mib], cush[mib])} |")
            lines += ["", verdict(f_test(raw, cush)), ""]
    lines += ["![host_ops](host_ops.png)", ""]
    plots.host_chart(samples, int(context.get("gpu_count", 1)), out_dir)
    return lines


def host_figures(run, samples):
    """At the largest size: scatter + gather per host memory, and broadcast, against raw (GB/s)."""
    big = max((k[3] for k in samples), default=None)
    if big is None:
        return []
    gpus = int(run.context.get("gpu_count", 1))
    bytes_ = big * 2 ** 20

    def med(op, memory, impl):
        s = samples.get((op, memory, impl, big))
        return stats.median(s) if s else None

    def gbps(count, ms):
        return round(count * bytes_ / (ms * 1e-3) / 1e9, 2)

    entries = []
    for memory, label in (("pinned", "pinned"), ("pageable", "pageable_first_use"), ("registered", "pageable_registered")):
        t = [med(op, memory, "cush") for op in ("scatter", "gather")]
        r = [med(op, reference_memory(memory), "raw") for op in ("scatter", "gather")]
        if None not in t and None not in r:
            entries.append(figure(
                f"host_ops.{gpus}gpu.scatter_gather.{label}.{big}MiB", gbps(2, sum(t)), "GB/s", reference=gbps(2, sum(r)),
                reference_is=f"hand-written cudaMemcpyAsync loop, {reference_memory(memory)} memory, same run",
                ratio=round(sum(r) / sum(t), 3), **measured_in(run)))
    for memory in ("pinned", "pageable"):
        t, r = med("broadcast", memory, "cush"), med("broadcast", memory, "raw")
        if t is not None and r is not None:
            entries.append(figure(
                f"host_ops.{gpus}gpu.broadcast.{memory}.{big}MiB", gbps(gpus, t), "GB/s delivered", reference=gbps(gpus, r),
                reference_is=f"hand-written cudaMemcpyAsync loop, {memory} memory, same run",
                ratio=round(r / t, 3), **measured_in(run)))
    return entries


# The performance report is one page per family of cases (the case names' first word: scale,
# matmul, advection, lbm, fft, karst, ...) and one for the host<->GPU operations, with
# performance.md as their index.
def family(case):
    """The page a case's sections go to: matmul_f64 and matmul_weak with matmul, and so on."""
    return case.split("_", 1)[0]


def page_name(name):
    return f"performance_{name}.md"


def run(results_dir, case_files, host_file):
    """Writes performance.md (the index), a page per family of cases and one for the host<->GPU
    operations (performance_<family>.md), and their PNGs; returns summary entries (empty without
    measurements).

    case_files: bench_cases JSON files (each section keeps its file's context); host_file: the
    bench_host_ops JSON. Files that do not exist are left out."""
    entries = []
    pages = {}  # family -> its sections' lines, in the order the files came
    shown = set()  # cases with a section already: a later file's section of one is titled by the file
    for path in case_files:
        if os.path.exists(path):
            measured = gbench.load(path)
            if gbench.on_virtual_gpus(measured):
                print(f"report: {path} was measured on virtual GPUs; left out", file=sys.stderr)
                continue
            samples = case_samples(measured.rows)
            for case in sorted({k[0] for k in samples}):
                run_name = os.path.splitext(measured.source)[0] if case in shown else None
                pages.setdefault(family(case), []).extend(case_section(case, samples, measured.context, results_dir, run_name))
                shown.add(case)
            entries += case_figures(measured, samples)
    if host_file and os.path.exists(host_file):
        measured = gbench.load(host_file)
        samples = [] if gbench.on_virtual_gpus(measured) else host_samples(measured.rows)
        if samples:
            pages["host_ops"] = host_section(samples, measured.context, results_dir)
            entries += host_figures(measured, samples)
    index = ["# Performance: cush against raw CUDA", "",
             "Produced by `scripts/report.sh` (python3 -m cushreport report) from the benchmark JSON in `data/`; "
             "one page per case (the host<->GPU operations on a page of their own), each section's context "
             "line saying where and when it was measured.", ""]
    # Pages of an earlier report that this one has no sections for are removed, not left stale.
    for old in glob.glob(os.path.join(results_dir, page_name("*"))):
        if os.path.basename(old)[len("performance_"):-3] not in pages:
            os.remove(old)
    if not pages:
        index += ["No measurements yet: the speed part needs GPUs (run `scripts/report.sh` on a GPU host).", ""]
    else:
        index += ["| page | sections |", "|---|---:|"]
        for name in sorted(pages):
            title = "host<->GPU operations" if name == "host_ops" else f"case {name}"
            sections = sum(1 for line in pages[name] if line.startswith("## "))
            index.append(f"| [{page_name(name)}]({page_name(name)}): {title} | {sections} |")
            with open(os.path.join(results_dir, page_name(name)), "w") as f:
                f.write("\n".join([f"# Performance: {title}", "", f"Part of [performance.md](performance.md).", ""] + pages[name]))
        index.append("")
    with open(os.path.join(results_dir, "performance.md"), "w") as f:
        f.write("\n".join(index))
    return entries
