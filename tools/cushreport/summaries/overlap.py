"""Transfers beside a kernel (bench_overlap, names overlap/<transport>/<MiB>): per transport and
size, medians over the repetitions of what the transfer costs a memory-bound kernel running on the
same two GPUs (its time per launch beside the transfers over alone: the slowdown) and what the
kernel costs the transfer (its time per transfer beside the kernel over alone, and the link's GB/s
then). One table; no goal (docs/device_ops.md, "Transfers beside kernels").
"""
from collections import defaultdict

from .. import stats
from ..gbench import error_lines

ORDER = ("peer", "peer_kernel", "nccl")
WHAT = {"peer": "copy engines", "peer_kernel": "peer kernel (SM stores)", "nccl": "NCCL send/receive"}
FIELDS = ("kernel_alone_ms", "kernel_ms", "slowdown", "transfer_alone_ms", "transfer_ms", "link_GBps")


def medians(runs):
    """{(transport, MiB): {field: median over the repetitions}} of the runs' overlap rows."""
    samples = defaultdict(lambda: defaultdict(list))
    for run in runs:
        for row in run.rows:
            if row.parts[0] != "overlap" or len(row.parts) < 3:
                continue
            key = (row.parts[1], int(row.parts[2]))
            for f in FIELDS:
                if f in row.fields:
                    samples[key][f].append(row.fields[f])
    return {k: {f: stats.median(v) for f, v in fields.items()} for k, fields in samples.items()}


def render(runs):
    table = medians(runs)
    lines = [e for run in runs for e in error_lines(run)]
    if not table:
        return "\n".join(lines + ["No overlap/ rows in these files."]) + "\n"
    lines += ["| transport | MiB each way | kernel ms alone | kernel ms beside | kernel slowdown | transfer ms alone "
              "| transfer ms beside | transfer slowdown | link GB/s beside |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    rank = {t: i for i, t in enumerate(ORDER)}
    for (transport, mib), m in sorted(table.items(), key=lambda kv: (kv[0][1], rank.get(kv[0][0], len(ORDER)), kv[0][0])):
        def cell(f, spec=".3f"):
            return format(m[f], spec) if f in m else "-"
        transfer_slowdown = (format(m["transfer_ms"] / m["transfer_alone_ms"], ".3f")
                             if "transfer_ms" in m and m.get("transfer_alone_ms") else "-")
        lines.append(f"| {WHAT.get(transport, transport)} | {mib} | {cell('kernel_alone_ms')} | {cell('kernel_ms')} "
                     f"| {cell('slowdown')} | {cell('transfer_alone_ms')} | {cell('transfer_ms')} | {transfer_slowdown} "
                     f"| {cell('link_GBps', '.1f')} |")
    return "\n".join(lines) + "\n"
