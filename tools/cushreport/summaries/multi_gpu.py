"""Several real GPUs (issue 45): the multi-GPU goals from the files of one benchmark call on a host
of several GPUs, for any GPU count (1, 2, 4, 8: each row says on how many GPUs it ran).

The files, in any order and any mix (docs/results/multi_gpu_<call>_<part>.json: the files of one
call share <call>, e.g. the date):
- bench_cases (case/<case>/<variant>/<g>gpu/<n>, and xt/, exchange/, deep/, ... rows): the GPU
  count is in each name; one file or one per case.
- bench_device_ops (dev/<op>/<impl>/<bytes>): one file per GPU count (the binary runs over all
  visible GPUs), the count from its rows' `gpus` counter or else its context's gpu_count.
- bench_halo (halo/...): the first two GPUs of the host.
Runs on virtual GPUs are left out (they say nothing of several GPUs).

The goals and their modules (multi_gpu_goals/): scaling (advection, lattice-Boltzmann, karst
against g x one GPU; FluidX3D), rbffd (the stage against the copy, strong and weak scaling, the
exchange against the raw twin and the share overlap hides), libraries (matmul against cuBLASXt, the FFT against cufftXt and
its all-to-all floor), f_tests (cush against raw CUDA per case and GPU count), ops (device
operations against NCCL and the raw twin; the halo exchange). Every reference comes from the same
run (the same file; the FFT's floor from the call's bench_device_ops file of the same GPU count),
or is a published figure that says so. Names: <case>.<g>gpu[.<series>]... (multi_gpu_goals/common.py).

`figures(runs)` gives the summary.json entries (a name measured in two files of the call: the
later file's), `render(runs)` the page's tables; `calls(paths)` groups files by call.
"""
import os
import re
from collections import defaultdict

from ..gbench import device_of, on_virtual_gpus
from .multi_gpu_goals import f_tests, libraries, ops, rbffd, scaling
from .multi_gpu_goals.common import Found, gpus

CALL = re.compile(r"^(multi_gpu_[^_.]+)(?:_[^.]*)?\.json$")


def calls(paths):
    """{call: [paths]} of multi_gpu_<call>_<part>.json files, calls and files sorted."""
    out = defaultdict(list)
    for path in sorted(paths):
        m = CALL.match(os.path.basename(path))
        if m:
            out[m[1]].append(path)
    return dict(sorted(out.items()))


def binary_of(run):
    """'device_ops', 'halo' or 'cases': which benchmark binary wrote a run (None: no rows)."""
    firsts = {row.parts[0] for row in run.rows}
    return "device_ops" if "dev" in firsts else "halo" if "halo" in firsts else "cases" if firsts else None


def gpu_count(run):
    """The GPUs a bench_device_ops run used: its rows' `gpus` counter, else its context's count."""
    counts = {int(row.fields["gpus"]) for row in run.rows if "gpus" in row.fields}
    return max(counts) if counts else int(run.context.get("gpu_count", 0)) or None


def sort_runs(runs):
    """{'cases': [runs], 'ops': {g: [runs]}, 'halo': [runs], 'left_out': [lines]}."""
    got = {"cases": [], "ops": defaultdict(list), "halo": [], "left_out": []}
    for run in runs:
        kind = binary_of(run)
        if on_virtual_gpus(run):
            got["left_out"].append(f"{run.source}: measured on virtual GPUs ({run.context['virtual_gpus']})")
        elif kind is None:
            got["left_out"].append(f"{run.source}: no rows")
        elif kind == "device_ops" and gpu_count(run) is None:
            got["left_out"].append(f"{run.source}: GPU count unknown (no `gpus` counter, no gpu_count in its context)")
        elif kind == "device_ops":
            got["ops"][gpu_count(run)].append(run)
        else:
            got[kind].append(run)
    got["ops"] = dict(sorted(got["ops"].items()))
    return got


def sections(runs):
    """{section: Found} of the runs (see render for the sections), and sort_runs(runs)."""
    got = sort_runs(runs)
    tables = ops.medians(got["ops"])
    sources = {g: ", ".join(r.source for r in rs) for g, rs in got["ops"].items()}
    out = {k: Found() for k in ("goals", "cufftxt", "f_tests", "device_ops", "halo")}
    for goals in (scaling.advection_goals, scaling.lbm_goals, scaling.karst_goals, libraries.matmul_goals,
                  rbffd.rbffd_goals):
        for run in got["cases"]:
            out["goals"] += goals(run)
    for run in got["cases"]:
        out["goals"] += libraries.floor_goals(run, tables, sources)
    for run in got["cases"]:
        out["cufftxt"] += libraries.cufftxt_goals(run)
        out["f_tests"] += f_tests.f_test_goals(run)
    out["device_ops"] += ops.device_op_goals(got["ops"])
    for run in got["halo"]:
        out["halo"] += ops.halo_goals(run)
    for found in out.values():  # a figure in two files of the call: the later file's
        found.entries = list({e["name"]: e for e in found.entries}.values())
        found.missing = list(dict.fromkeys(found.missing))
    out["f_tests"].entries.sort(key=lambda e: e["name"])
    return out, got


def figures(runs):
    """summary.json's multi-GPU entries of the files of one call (see the module's text)."""
    found, _ = sections(runs)
    return [e for f in found.values() for e in f.entries]


def goal_table(entries):
    lines = ["| figure | value | against | ratio | goal |", "|---|---:|---|---:|---|"]
    for e in entries:
        lines.append(f"| `{e['name']}` | {e['value']:,} {e['unit']} | {e['reference']:,} ({e['reference_is']}) | "
                     f"{e['ratio']:.3f} | {e['goal']} |")
    return lines + [""]


def f_test_table(entries):
    lines = ["| figure | cush / raw speed | F-test | goal |", "|---|---:|---|---|"]
    lines += [f"| `{e['name']}` | {e['value']} | {e['f_test']} | {e['goal']} |" for e in entries]
    return lines + [""]


def cut_note(run):
    """ ", cut by its time limit" for a file `cushreport close` closed (gbench.close_cut), and
    ", medians only" for a file of aggregates only (gbench.load)."""
    note = ", cut by its time limit after its last whole row" if run.context.get("cut") else ""
    return note + (", medians only" if run.context.get("aggregates_only") else "")


def files_line(got):
    cases = "; ".join(f"{r.source} ({device_of(r.context)}, {r.context.get('date', '?')}{cut_note(r)})" for r in got["cases"])
    device = "; ".join(f"{gpus(g)}: {', '.join(r.source + cut_note(r) for r in rs)}" for g, rs in got["ops"].items())
    halo = "; ".join(r.source + cut_note(r) for r in got["halo"])
    parts = [f"cases: {cases}" if cases else "", f"GPU<->GPU operations, {device}" if device else "", f"halo: {halo}" if halo else ""]
    return "Files: " + ". ".join(p for p in parts if p) + "." if any(parts) else "No files of a call on real GPUs."


def render(runs):
    """The goal tables of docs/results/multi_gpu.md: the scaling, library and floor goals (one line
    per figure), the FFT against cufftXt, the F-tests, the device operations (a table per
    operation, a goal line per operation and GPU count), the halo exchange, and what the files do
    not hold."""
    found, got = sections(runs)
    lines = ["### Multi-GPU goals", "", files_line(got), ""]
    lines += [f"Left out: {text}." for text in got["left_out"]] + ([""] if got["left_out"] else [])
    if found["goals"].entries:
        lines += ["#### Scaling, FluidX3D, cuBLASXt and the FFT's all-to-all floor", ""] + goal_table(found["goals"].entries)
    lines += libraries.cufftxt_tables(found["cufftxt"].entries)
    if found["f_tests"].entries:
        lines += ["#### cush against raw CUDA (F-test, seed 002 eq. 2.2)", ""] + f_test_table(found["f_tests"].entries)
    if got["ops"]:
        lines += ["#### GPU<->GPU operations (reference time / cush time; > 1: cush faster)", ""]
        lines += ops.device_op_tables(got["ops"])
    for run in got["halo"]:
        mine = [e for e in found["halo"].entries if e["source"] == run.source]
        lines += ["#### Halo exchange", ""] + ops.halo_lines(run, mine) + [""]
    missing = [text for f in found.values() for text in f.missing]
    if missing:
        lines += ["#### Not stated (rows the files do not hold)", ""] + [f"- {text}" for text in missing] + [""]
    return "\n".join(lines)
