"""Google Benchmark JSON, read one way by the performance report and by every summary.

A benchmark binary run with --benchmark_out writes a context (where and when) and one entry per
run of each benchmark; with --benchmark_repetitions it adds aggregate entries (mean, median,
stddev, cv) that repeat what the repetitions already say, and a failed benchmark leaves an entry
marked error_occurred without usable numbers. `load` keeps only the repetitions that ran, each
with its time in milliseconds, so that every consumer computes its statistics from the same rows.
A file written with --benchmark_report_aggregates_only holds no repetitions: `load` then keeps each
benchmark's median as its one row (named as its repetitions would be, the entry's run_name) and
marks the context "aggregates_only", so that a reader can say the spread is not there.
"""
import json
import os
from dataclasses import dataclass

MS_PER = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


@dataclass(frozen=True)
class Row:
    """One repetition of one benchmark."""
    name: str     # as Google Benchmark writes it, e.g. halo/cush/x/420/d1/min_time:0.200/manual_time
    ms: float     # real (with UseManualTime: the manual) time per iteration, in milliseconds
    fields: dict  # the whole entry, user counters included (GB/s, op_us, message_bytes, ...)

    @property
    def parts(self):
        """The name's /-separated parts."""
        return self.name.split("/")


@dataclass(frozen=True)
class Run:
    """One JSON file: its context and its rows."""
    path: str
    context: dict
    rows: list    # [Row]
    errors: list  # "name: message" of each benchmark that failed

    @property
    def source(self):
        """The file's name, as summary.json cites it (the file lies beside summary.json)."""
        return os.path.basename(self.path)


class InputError(ValueError):
    """A file that is not Google Benchmark JSON (missing, unreadable, not JSON, no benchmark list)."""


def load(path):
    """The Run of one Google Benchmark JSON file, without aggregate and failed rows.

    Raises InputError, naming the file, for a missing or unreadable file, text that is not JSON
    and JSON that is not a benchmark run."""
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as e:
        raise InputError(f"{path}: cannot read it ({e.strerror})") from None
    except ValueError as e:
        raise InputError(f"{path}: not JSON ({e}); a file cut by a time limit can be closed with "
                         f"`python3 -m cushreport close {path}`") from None
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
        raise InputError(f"{path}: not Google Benchmark JSON (no \"benchmarks\" list)")
    rows, errors, medians = [], [], []
    for b in data["benchmarks"]:
        if not isinstance(b, dict) or "name" not in b:
            raise InputError(f"{path}: a benchmark entry without a name")
        if b.get("error_occurred"):
            errors.append(f"{b['name']}: {b.get('error_message', '?')}")
            continue
        ms = b["real_time"] * MS_PER[b.get("time_unit", "ns")]
        if b.get("run_type", "iteration") == "iteration":
            rows.append(Row(b["name"], ms, b))
        elif b.get("aggregate_name") == "median":
            medians.append(Row(b.get("run_name", b["name"]), ms, b))
    context = data.get("context", {})
    if not rows and medians:
        rows, context = medians, dict(context, aggregates_only=True)
    return Run(path, context, rows, errors)


def close_cut(text):
    """The JSON of a run that a time limit stopped, closed after its last whole entry.

    Google Benchmark writes each entry of "benchmarks" as it ends, so a run killed by a time limit
    leaves a file that stops after an entry (or inside one). The benchmarks that ended are real
    measurements; this keeps them, drops a part-written entry, closes the list and marks the
    context with "cut": true so that a reader can say so. Returns (closed text, entries kept);
    raises ValueError where no entry ended (nothing to keep) or the text is not such a file.
    """
    head = text.find('"benchmarks": [')
    if head < 0:
        raise ValueError("not a Google Benchmark JSON file (no \"benchmarks\" list)")
    end = text.rfind("\n    }")
    if end < head:
        raise ValueError("no benchmark ended before the file was cut")
    body = text[:end + len("\n    }")] + "\n  ]\n}\n"
    data = json.loads(body)  # raises ValueError (JSONDecodeError) if the cut was elsewhere
    data.setdefault("context", {})["cut"] = True
    return json.dumps(data, indent=2) + "\n", len(data["benchmarks"])


def on_virtual_gpus(run):
    """True if the run was measured on virtual GPUs (bench harness context "virtual_gpus"): several
    logical devices on one GPU, whose times say nothing of several GPUs; the report leaves it out."""
    return bool(run.context.get("virtual_gpus"))


def device_of(context):
    """'2 x NVIDIA H200': the GPU count and model of a run's context."""
    gpus = context.get("gpus", "?").split(", ")
    return f"{context.get('gpu_count', len(gpus))} x {gpus[0]}"


def error_lines(run):
    """Markdown list items for the benchmarks of a run that failed (none when all ran)."""
    return [f"- ERROR {e}" for e in run.errors]


def page_head(case, run):
    """A case summary's first lines: its title with the run's date, GPUs and file, then the failed
    benchmarks."""
    ctx = run.context
    virtual = f"; {ctx['virtual_gpus']}" if ctx.get("virtual_gpus") else ""
    return [f"# {case} ({ctx.get('date', '?')}, {ctx.get('gpu_count', '?')} x {ctx.get('gpus', '?')}{virtual}; {run.source})",
            ""] + error_lines(run)
