"""Code complexity of every case's variants, measured with pmccabe (seed 002 §2.6.1).

For each cases/<name>/ the variants single.cpp (single-GPU CUDA reference), multi_cuda.cpp
(multi-GPU raw CUDA) and multi_cush.cpp or .cu (multi-GPU cush) are measured: NCSS is pmccabe's count of
statements in functions, MCC its modified McCabe cyclomatic complexity, each summed over the
file's functions. Code shared by all variants (kernels.cu, headers) is left out of every variant:
it is the same for all three. Values are normalized to the single-GPU variant, as in seed 002
Figure 2.6. Writes complexity.md and complexity.png; returns the rows and summary.json entries.
"""
import datetime
import os
import shutil
import subprocess

from .figures import figure
from .plots import complexity_chart

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
    """Rows {case, variant, label, file, mcc, ncss, ncss_rel, mcc_rel} for every case with variants."""
    rows = []
    cases_dir = os.path.join(root, "cases")
    for case in sorted(os.listdir(cases_dir)):
        for variant, label in VARIANTS:
            # A variant that launches cush's device-side templates (cush/transpose.cuh) is a .cu file.
            paths = [os.path.join(cases_dir, case, variant + ext) for ext in (".cpp", ".cu")]
            path = next((p for p in paths if os.path.exists(p)), None)
            if path is not None:
                mcc, ncss, _ = pmccabe(path)
                rows.append({"case": case, "variant": variant, "label": label,
                             "file": os.path.relpath(path, root), "mcc": mcc, "ncss": ncss})
    return _normalized(rows)


def _normalized(rows):
    single = {r["case"]: r for r in rows if r["variant"] == "single"}
    for r in rows:
        s = single.get(r["case"])
        r["ncss_rel"] = r["ncss"] / s["ncss"] if s else float("nan")
        r["mcc_rel"] = r["mcc"] / s["mcc"] if s else float("nan")
    return rows


def markdown(rows):
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
    return "\n".join(lines)


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
            out.append(figure(f"{case}.complexity.{metric}", cush[metric], unit,
                              reference=raw[metric], reference_is="multi-GPU raw CUDA",
                              ratio=raw[metric] / cush[metric], device="none (static analysis, pmccabe)",
                              date=today, source=f"{cush['file']}, {raw['file']}"))
    return out


def run(root, results_dir):
    """Writes complexity.md and complexity.png; returns (rows, summary entries)."""
    rows = measure(root)
    with open(os.path.join(results_dir, "complexity.md"), "w") as f:
        f.write(markdown(rows))
    complexity_chart(rows, os.path.join(results_dir, "complexity.png"))
    return rows, summary_entries(rows)
