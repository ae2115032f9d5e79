"""Command line: `python3 -m cushreport report ...` and `python3 -m cushreport summarize ...`
(with tools/ on PYTHONPATH; scripts/report.sh and scripts/gpu_check.sh call these).

    report [--results docs/results] [--root .]   regenerate the report (report.py)
    summarize <name> <json> [<json> ...]         print a run's Markdown summary (summaries/)
    compare --before <json>... --after <json>... the same benchmarks on two builds (compare.py)
    trace <sqlite|csv> [--gap-us 20] [--rows 60] one operation's copies and kernels in an
                                                 Nsight Systems trace or tools/trace's CSV (trace.py);
          [--step-kernel NAME [--step-min-us US]]  or an iterative program's steps
    close <json> [<json> ...]                    a benchmark file cut by a time limit, closed
                                                 after its last whole entry (in place)
    table <device_ops json> [...] [--margin 0.03] the transport table a bench_device_ops run of
                                                 the forced transports supports (table.py)
"""
import argparse
import json
import os
import sys

from . import compare, gbench, report, table, trace
from .summaries import BY_NAME

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m cushreport", description="cush's report and run summaries")
    commands = parser.add_subparsers(dest="command", required=True)
    regenerate = commands.add_parser("report", help="regenerate complexity.md, performance.md and summary.json")
    regenerate.add_argument("--results", default="docs/results", help="the results folder (default docs/results)")
    regenerate.add_argument("--root", default=ROOT, help="the repository, whose cases/ are measured")
    summarize = commands.add_parser("summarize", help="print the Markdown summary of benchmark JSON")
    summarize.add_argument("name", choices=sorted(BY_NAME))
    summarize.add_argument("json", nargs="+", help="Google Benchmark JSON file(s)")
    versus = commands.add_parser("compare", help="compare the same benchmarks run on two builds")
    versus.add_argument("--before", nargs="+", required=True, help="JSON of the build before")
    versus.add_argument("--after", nargs="+", required=True, help="JSON of the build after")
    traced = commands.add_parser("trace", help="one operation's copies and kernels in a trace (nsys sqlite or tools/trace CSV)")
    traced.add_argument("sqlite", help="nsys export --type sqlite of the trace, or the CSV of tools/trace")
    traced.add_argument("--gap-us", type=float, default=20.0, help="idle time that separates operations (µs)")
    traced.add_argument("--rows", type=int, default=60, help="activities listed at most")
    traced.add_argument("--step-kernel", help="cut the trace into steps at each start of the kernel named like this")
    traced.add_argument("--step-min-us", type=float, default=0.0,
                        help="with --step-kernel: only its launches at least this long start a step (µs)")
    proposing = commands.add_parser("table", help="the transport table a bench_device_ops run supports")
    proposing.add_argument("json", nargs="+", help="bench_device_ops JSON of one GPU count, with cush_peer, cush_kernel, ... rows")
    proposing.add_argument("--margin", type=float, default=0.03, help="how much faster than the copy engines another transport must be")
    closing = commands.add_parser("close", help="close a benchmark JSON file cut by a time limit (in place)")
    closing.add_argument("json", nargs="+", help="Google Benchmark JSON file(s)")
    args = parser.parse_args(argv)
    try:
        run(args)
    except gbench.InputError as e:
        sys.exit(f"python3 -m cushreport {args.command}: {e}")


def load_rows(path):
    """A benchmark file the command reads: one that holds no row at all is an error, not an empty
    table."""
    measured = gbench.load(path)
    if not measured.rows and not measured.errors:
        raise gbench.InputError(f"{path}: holds no benchmark rows")
    return measured


def run(args):
    if args.command == "report":
        if not os.path.isdir(args.results):
            raise gbench.InputError(f"--results {args.results}: no such folder (the report reads the measurements there)")
        report.run(args.results, args.root)
    elif args.command == "trace" and args.step_kernel:
        sys.stdout.write(trace.render_steps(trace.load(args.sqlite), args.step_kernel, args.step_min_us))
    elif args.command == "trace":
        sys.stdout.write(trace.render(trace.load(args.sqlite), args.gap_us, args.rows, trace.load_api(args.sqlite)))
    elif args.command == "table":
        try:
            sys.stdout.write(table.propose([load_rows(p) for p in args.json], args.margin))
        except ValueError as e:
            sys.exit(f"cushreport table: {e}")
    elif args.command == "close":
        for path in args.json:
            try:
                with open(path) as f:
                    text = f.read()
            except OSError as e:
                raise gbench.InputError(f"{path}: cannot read it ({e.strerror})") from None
            try:
                json.loads(text)
                print(f"{path}: whole, left as it is")
                continue
            except ValueError:
                pass
            try:
                closed, kept = gbench.close_cut(text)
            except ValueError as e:
                sys.exit(f"{path}: {e}; left as it is")
            with open(path, "w") as f:
                f.write(closed)
            print(f"{path}: cut by a time limit; closed after its last whole entry ({kept} entries kept)")
    elif args.command == "compare":
        sys.stdout.write(compare.render([load_rows(p) for p in args.before], [load_rows(p) for p in args.after]))
    else:
        sys.stdout.write(BY_NAME[args.name].render([load_rows(path) for path in args.json]))


if __name__ == "__main__":
    main()
