"""Code complexity of every case's variants, measured with pmccabe (seed 002 §2.6.1).

For each cases/<name>/ the variants single.cpp (single-GPU CUDA reference), multi_cuda.cpp
(multi-GPU raw CUDA) and multi_cush.cpp (multi-GPU cush) are measured: NCSS is pmccabe's count of
statements in functions, MCC its modified McCabe cyclomatic complexity, each summed over the
file's functions. Code shared by all variants (kernels.cu, headers) is left out of every variant:
it is the same for all three. Values are normalized to the single-GPU variant, as in seed 002
Figure 2.6.
"""
import datetime
import os
import shutil
import subprocess

VARIANTS = [
    ("single", "single-GPU CUDA"),
    ("multi_cuda", "multi-GPU raw CUDA"),
    ("multi_cush", "multi-GPU cush"),
]


def pmccabe(path):
    """(MCC, NCSS, functions) of one source file."""
    exe = shutil.which("pmccabe")
    if exe is None:
        raise RuntimeError("pmccabe is not installed (scripts/setup.sh installs it: apt-get install pmccabe)")
    out = subprocess.run([exe, path], check=True, capture_output=True, text=True).stdout
    mcc = ncss = functions = 0
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 3 and all(f.isdigit() for f in fields[:3]):
            mcc += int(fields[0])
            ncss += int(fields[2])
            functions += 1
    if functions == 0:
        # pmccabe 2.8 silently skips what it cannot parse (e.g. `namespace a::b {`); a zero here
        # would be a wrong measurement, not a simple program.
        raise RuntimeError(f"pmccabe found no function in {path}; is the file written so that pmccabe can parse it?")
    return mcc, ncss, functions


def measure(root):
    """Rows {case, variant, label, file, mcc, ncss} for every case directory with variants."""
    rows = []
    cases_dir = os.path.join(root, "cases")
    for case in sorted(os.listdir(cases_dir)):
        case_dir = os.path.join(cases_dir, case)
        if not os.path.isdir(case_dir):
            continue
        for variant, label in VARIANTS:
            path = os.path.join(case_dir, variant + ".cpp")
            if os.path.exists(path):
                mcc, ncss, _ = pmccabe(path)
                rows.append({"case": case, "variant": variant, "label": label,
                             "file": os.path.relpath(path, root), "mcc": mcc, "ncss": ncss})
    return rows


def _normalized(rows):
    single = {r["case"]: r for r in rows if r["variant"] == "single"}
    for r in rows:
        s = single.get(r["case"])
        r["ncss_rel"] = r["ncss"] / s["ncss"] if s else float("nan")
        r["mcc_rel"] = r["mcc"] / s["mcc"] if s else float("nan")
    return rows


def write_markdown(rows, path):
    lines = [
        "# Code complexity of the case studies",
        "",
        "Measured with pmccabe (seed 002 §2.6.1): NCSS = statements in functions, MCC = modified McCabe "
        "cyclomatic complexity, each summed over the variant's file. Code shared by all three variants "
        "(each case's `kernels.cu` and headers) is left out of every variant. \"/ single\" normalizes to the "
        "single-GPU CUDA reference, as seed 002 Figure 2.6 does. Static analysis: no GPU involved.",
        "",
        "| case | variant | file | NCSS | MCC | NCSS / single | MCC / single |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(f"| {r['case']} | {r['label']} | `{r['file']}` | {r['ncss']} | {r['mcc']} | "
                     f"{r['ncss_rel']:.2f} | {r['mcc_rel']:.2f} |")
    lines += ["", "![complexity](complexity.png)", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))


def write_chart(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
    from plots import save
    save(fig, os.path.dirname(path), os.path.basename(path))


def summary_entries(rows):
    """Headline figures: cush against raw CUDA, per case (ratio > 1: cush simpler)."""
    today = datetime.date.today().isoformat()
    by = {(r["case"], r["variant"]): r for r in rows}
    out = []
    for case in sorted({r["case"] for r in rows}):
        raw, cush = by.get((case, "multi_cuda")), by.get((case, "multi_cush"))
        if raw is None or cush is None:
            continue
        for metric, unit in (("ncss", "statements"), ("mcc", "cyclomatic complexity")):
            out.append({"name": f"{case}.complexity.{metric}", "value": cush[metric], "unit": unit,
                        "reference": raw[metric], "reference_is": "multi-GPU raw CUDA",
                        "ratio": raw[metric] / cush[metric], "device": "none (static analysis, pmccabe)",
                        "date": today})
    return out


def run(root, results_dir):
    rows = _normalized(measure(root))
    write_markdown(rows, os.path.join(results_dir, "complexity.md"))
    write_chart(rows, os.path.join(results_dir, "complexity.png"))
    return rows, summary_entries(rows)
