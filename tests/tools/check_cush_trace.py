"""The activity tracer (tools/trace, libcush_trace.so) on a real program: run the program with the
tracer injected (CUDA_INJECTION64_PATH, CUSH_TRACE_OUT), then check its CSV: the header, at least
one kernel and one copy of more than 0 bytes, every row's start before its end, device ids >= 0,
every kernel named, the host's runtime calls (CUSH_TRACE_API=1) named and without a device; then
read it with cushreport.trace.

    python3 check_cush_trace.py --tracer build/tools/trace/libcush_trace.so -- build/examples/cush_device_ops 100003

Exit status: 0 passed, 1 failed, 77 skipped (no GPU on this machine: ctest's SKIP_RETURN_CODE).
A program that says it found no GPU while nvidia-smi lists some fails: the tracer may have broken
CUDA's start. The test fails if the tracer writes nothing.
"""
import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))

from cushreport import trace  # noqa: E402

SKIP = 77
HEADER = "kind,start_ns,end_ns,device,stream,bytes,src_device,dst_device,copy_kind,name"


def listed_gpus():
    """The GPUs nvidia-smi lists (none where it is missing or fails)."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return []
    try:
        done = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [line for line in done.stdout.splitlines() if line.startswith("GPU ")] if done.returncode == 0 else []


def check_csv(path):
    """The problems of the tracer's CSV (empty list: none), and a one-line summary."""
    if not os.path.exists(path):
        return [f"the tracer wrote no file ({path})"], ""
    with open(path, newline="") as f:
        text = f.read()
    lines = text.splitlines()
    if not lines:
        return [f"{path} is empty: the tracer wrote not even its header"], ""
    if lines[0] != HEADER:
        return [f"the first line is {lines[0]!r}, not the header {HEADER!r}"], ""
    problems, kernels, copies, copied, memsets, copies_with_bytes, apis = [], 0, 0, 0, 0, 0, 0
    rows = list(csv.reader(lines[1:]))
    for n, row in enumerate(rows, start=2):
        if len(problems) >= 10:
            problems.append("... (more not listed)")
            break
        if len(row) != 10:
            problems.append(f"line {n}: {len(row)} fields, not 10: {row}")
            continue
        kind, start, end, device, _stream, nbytes, src, dst, copy_kind, name = row
        if kind == "api":  # CUSH_TRACE_API=1: a runtime call on the host, no device
            apis += 1
            try:
                if int(start) > int(end) or int(_stream) < 0:
                    problems.append(f"line {n}: a runtime call ends before it starts, or has no thread: {row}")
            except ValueError:
                problems.append(f"line {n}: a number is not an integer: {row}")
            if device or not name.startswith("cuda"):
                problems.append(f"line {n}: a runtime call with a device or without a cuda... name: {row}")
            continue
        try:
            start, end, device, nbytes = int(start), int(end), int(device), int(nbytes)
            ends = [int(src), int(dst), int(copy_kind)] if kind == "copy" else []
        except ValueError:
            problems.append(f"line {n}: a number is not an integer: {row}")
            continue
        if not start < end:
            problems.append(f"line {n}: start {start} is not before end {end}")
        if device < 0:
            problems.append(f"line {n}: device {device} < 0")
        if kind == "kernel":
            kernels += 1
            if not name:
                problems.append(f"line {n}: a kernel without a name")
        elif kind == "copy":
            copies += 1
            copied += nbytes
            copies_with_bytes += nbytes > 0
            if min(ends[:2]) < 0:
                problems.append(f"line {n}: a copy's source or destination device < 0: {row}")
        elif kind == "memset":
            memsets += 1
        else:
            problems.append(f"line {n}: unknown kind {kind!r}")
    if kernels == 0:
        problems.append("no kernel row")
    if copies_with_bytes == 0:
        problems.append("no copy row of more than 0 bytes")
    if apis == 0:
        problems.append("no runtime call row (the test runs with CUSH_TRACE_API=1)")
    summary = (f"{len(rows)} rows: {kernels} kernels, {copies} copies ({copied:,} bytes), {memsets} memsets, "
               f"{apis} runtime calls; "
               f"kernel names e.g. {sorted({r[9] for r in rows if r and r[0] == 'kernel'})[:3]}")
    return problems, summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tracer", required=True, help="libcush_trace.so")
    parser.add_argument("program", nargs="+", help="the program to trace and its arguments (after --)")
    args = parser.parse_args()
    if not os.path.isfile(args.tracer):
        print(f"FAILED: no tracer at {args.tracer}")
        return 1

    with tempfile.TemporaryDirectory(prefix="cush_trace_test_") as tmp:
        out = os.path.join(tmp, "trace.csv")
        env = dict(os.environ, CUDA_INJECTION64_PATH=os.path.abspath(args.tracer), CUSH_TRACE_OUT=out,
                   CUSH_TRACE_API="1")
        print("running:", " ".join(args.program), f"(CUDA_INJECTION64_PATH={args.tracer})", flush=True)
        try:
            run = subprocess.run(args.program, env=env, capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired:
            print("FAILED: the traced program ran longer than 300 s")
            return 1
        output = run.stdout + run.stderr
        print(output, end="" if output.endswith("\n") else "\n")

        gpus = listed_gpus()
        if "SKIPPED: no GPU" in output:
            if gpus:
                print(f"FAILED: nvidia-smi lists {len(gpus)} GPU(s), but the program found none with the tracer "
                      "loaded")
                return 1
            print("SKIPPED: no GPU on this machine (the program found none, nvidia-smi lists none)")
            return SKIP
        if run.returncode != 0:
            print(f"FAILED: the traced program exited with {run.returncode}")
            return 1
        errors = [line for line in output.splitlines() if line.startswith("cush_trace:") and " failed" in line]
        problems, summary = check_csv(out)
        problems = [f"the tracer reported: {e}" for e in errors] + problems
        if not problems:
            activities = trace.load(out)
            if not activities:
                problems.append("cushreport.trace read no activity from the CSV")
            else:
                print(trace.render(activities, rows=12))
        if problems:
            if os.path.exists(out):
                with open(out) as f:
                    head = [next(f, "") for _ in range(12)]
                print("the CSV begins:\n" + "".join(head))
            print("FAILED:\n  " + "\n  ".join(problems))
            return 1
        print("PASSED:", summary)
        return 0


if __name__ == "__main__":
    sys.exit(main())
