"""One operation's copies and kernels from a trace of a benchmark: an Nsight Systems export
(`nsys export --type sqlite`) or the CSV of cush's own tracer (tools/trace, libcush_trace.so, for
hosts without nsys).

A benchmark repeats one operation and waits for it, so the GPUs' activity falls into bursts with
idle gaps between them. `render` picks a typical burst (of the bursts with the most common count of
activities, the one of median length) and lists what ran in it: each copy with its source and
destination device, each kernel, with start, length, bytes and rate, then per pair of devices the
bytes moved and the time their copies took together (their union: overlapping copies count once).

    python3 -m cushreport trace <file.sqlite | file.csv> [--gap-us 20] [--rows 60]
    python3 -m cushreport trace <file> --step-kernel <name> [--step-min-us 0]   an iterative program, step by step

With --step-kernel the trace is cut into steps on each device at every start of the kernel whose
name contains <name> (a time step's main kernel): per device, the medians of the step's length,
that kernel's, the time from its end to the next step, and the other kernels and copies in
between (how an exchange between two steps spends its time). Where one step launches that kernel
several times (an interior and its boundary slabs), --step-min-us keeps only the launches at least
that long as the steps' starts; the shorter ones count among the other kernels.

A CSV written with CUSH_TRACE_API=1 also holds the host's CUDA runtime calls: then the summary ends
with the calls made from the typical burst's start to the next burst's, by function, and the time
spent in them (where a host-bound operation's time goes).

The two inputs give the same activities: the SQLite export's tables CUPTI_ACTIVITY_KIND_MEMCPY and
CUPTI_ACTIVITY_KIND_KERNEL (names from StringIds), or the CSV's rows (header `kind,start_ns,end_ns,
device,stream,bytes,src_device,dst_device,copy_kind,name`; kinds copy, kernel and memset). A file
is read as CSV when its name ends in .csv or its first line is that header; either may be gzipped
(`scripts/gpu_check.sh` keeps its traces as .csv.gz). A file that is neither is an InputError
naming it, not a traceback.

scripts/gpu_check.sh's `profile` step makes the trace and runs this on it.
"""
import csv
import gzip
import os
import sqlite3
import statistics
from collections import Counter, defaultdict

from .gbench import InputError

COPY_KINDS = {1: "HtoD", 2: "DtoH", 3: "HtoA", 4: "AtoH", 5: "AtoA", 6: "AtoD", 7: "DtoA", 8: "DtoD", 9: "HtoH",
              10: "PtoP"}


class Activity:
    """A copy, a kernel or a memset: times in ns, devices as CUDA ordinals."""

    def __init__(self, start, end, device, stream, name, nbytes=0, src=None, dst=None):
        self.start, self.end, self.device, self.stream = start, end, device, stream
        self.name, self.bytes, self.src, self.dst = name, nbytes, src, dst

    @property
    def is_copy(self):
        return self.src is not None


def _tables(db):
    return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


CSV_COLUMNS = ["kind", "start_ns", "end_ns", "device", "stream", "bytes", "src_device", "dst_device", "copy_kind",
               "name"]


def _gzipped(path):
    with open(path, "rb") as f:
        return f.read(2) == b"\x1f\x8b"


def _open_text(path):
    """The file's text, through gzip where it is gzipped."""
    if _gzipped(path):
        return gzip.open(path, "rt", newline="")
    return open(path, newline="")


def is_csv(path):
    """Whether path is the tracer's CSV, gzipped or not: by its name, else by its first line."""
    if path.lower().endswith((".csv", ".csv.gz")):
        return True
    try:
        with _open_text(path) as f:
            return f.readline().strip() == ",".join(CSV_COLUMNS)
    except (OSError, UnicodeDecodeError):  # binary, e.g. an SQLite file
        return False


def load(path):
    """Every copy and kernel in the trace (and memset, from the CSV), sorted by start. InputError
    for a file that is missing or is neither a trace CSV nor an SQLite export."""
    if not os.path.isfile(path):
        raise InputError(f"{path}: no such file")
    try:
        out = load_csv(path) if is_csv(path) else load_sqlite(path)
    except sqlite3.DatabaseError as e:
        raise InputError(f"{path}: neither cush_trace's CSV (.csv, .csv.gz) nor an Nsight Systems SQLite export ({e})") from e
    return sorted(out, key=lambda a: (a.start, a.end))


def load_api(path):
    """The host's CUDA runtime calls of the tracer's CSV (rows of kind api, written with
    CUSH_TRACE_API=1), sorted by start: name "api <function>", stream the calling thread, no
    device. An nsys export gives none here."""
    if not is_csv(path):
        return []
    return sorted(load_csv(path, api=True), key=lambda a: (a.start, a.end))


def load_csv(path, api=False):
    """The activities of the tracer's CSV (tools/trace), as load_sqlite reads the nsys export; with
    `api`, the runtime calls instead."""
    out = []
    with _open_text(path) as f:
        rows = csv.reader(f)
        header = next(rows, None)
        if header != CSV_COLUMNS:
            raise InputError(f"{path}: not a cush_trace CSV (its header is {header}, expected {CSV_COLUMNS})")
        for line, row in enumerate(rows, start=2):
            if not row:
                continue
            try:
                if len(row) != len(CSV_COLUMNS):
                    raise ValueError(f"{len(row)} fields, expected {len(CSV_COLUMNS)}")
                r = dict(zip(CSV_COLUMNS, row))
                if r["kind"] == "api":
                    if api:
                        out.append(Activity(int(r["start_ns"]), int(r["end_ns"]), None, int(r["stream"]),
                                            "api " + r["name"]))
                    continue
                if api:
                    continue
                start, end, device, stream = (int(r[k]) for k in ("start_ns", "end_ns", "device", "stream"))
                nbytes = int(r["bytes"] or 0)
                if r["kind"] == "copy":
                    kind = int(r["copy_kind"])
                    src = int(r["src_device"]) if r["src_device"] else device
                    dst = int(r["dst_device"]) if r["dst_device"] else device
                    out.append(Activity(start, end, device, stream, "copy " + COPY_KINDS.get(kind, str(kind)), nbytes,
                                        src, dst))
                elif r["kind"] == "kernel":
                    out.append(Activity(start, end, device, stream, "kernel " + r["name"]))
                elif r["kind"] == "memset":
                    out.append(Activity(start, end, device, stream, "memset", nbytes))
                else:
                    raise ValueError(f"unknown kind {r['kind']!r}")
            except ValueError as e:
                raise InputError(f"{path}, line {line}: {e}") from None
    return out


def load_sqlite(path):
    """The copies and kernels of an Nsight Systems SQLite export."""
    db = sqlite3.connect(path)
    try:
        tables = _tables(db)
        out = []
        if "CUPTI_ACTIVITY_KIND_MEMCPY" in tables:
            for start, end, device, stream, nbytes, kind, src, dst in db.execute(
                    "SELECT start, end, deviceId, streamId, bytes, copyKind, srcDeviceId, dstDeviceId "
                    "FROM CUPTI_ACTIVITY_KIND_MEMCPY"):
                name = "copy " + COPY_KINDS.get(kind, str(kind))
                # Host memory has no device: the device that runs the copy stands for it.
                out.append(Activity(start, end, device, stream, name, nbytes,
                                    device if src is None else src, device if dst is None else dst))
        if "CUPTI_ACTIVITY_KIND_KERNEL" in tables:
            names = {}
            if "StringIds" in tables:
                names = dict(db.execute("SELECT id, value FROM StringIds"))
            for start, end, device, stream, short in db.execute(
                    "SELECT start, end, deviceId, streamId, shortName FROM CUPTI_ACTIVITY_KIND_KERNEL"):
                out.append(Activity(start, end, device, stream, "kernel " + str(names.get(short, short))))
        return out
    finally:
        db.close()


def bursts(activities, gap_ns):
    """Runs of activities with no idle gap longer than gap_ns between them."""
    groups, end = [], None
    for a in activities:
        if end is None or a.start > end + gap_ns:
            groups.append([])
            end = a.end
        groups[-1].append(a)
        end = max(end, a.end)
    return groups


def span(group):
    return max(a.end for a in group) - min(a.start for a in group)


def alike(groups):
    """The bursts of the operation a benchmark repeats, by start: of the bursts grouped by their
    count of activities, the group whose bursts take the most time together. (A program's set-up
    leaves many bursts of one tiny copy or memset, and one long burst of warm-up; the repeated
    operation's bursts take most of the GPUs' time.)"""
    if not groups:
        return []
    total = Counter()
    for g in groups:
        total[len(g)] += span(g)
    count = total.most_common(1)[0][0]
    return [g for g in groups if len(g) == count]


def typical(groups):
    """Of the bursts alike (see alike), the one of median length."""
    same = sorted(alike(groups), key=span)
    return same[len(same) // 2] if same else []


def period_ns(groups):
    """Median time from the start of one burst alike to the start of the next, or None."""
    starts = sorted(min(a.start for a in g) for g in alike(groups))
    steps = [b - a for a, b in zip(starts, starts[1:])]
    return statistics.median(steps) if steps else None


def union_ns(intervals):
    """Length of the union of (start, end) intervals."""
    total, end = 0, None
    for s, e in sorted(intervals):
        if end is None or s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def steps(activities, kernel, min_ns=0):
    """The steps of an iterative program on each device, cut at every start of a kernel whose
    name contains `kernel` (the step's main kernel, e.g. a stencil) and that ran at least `min_ns`
    (shorter launches of it count among the other kernels): {device: medians over its
    steps (the last step, which has no next, left out) of the step's length, the main kernel's
    length, the time from its end to the next step's start, and the other kernels and the copies
    the device ran in between (count, and busy time: overlapping ones counted once), with the
    steps counted}. Devices where the kernel ran fewer than twice are left out."""
    out = {}
    for device in sorted({a.device for a in activities}):
        mine = [a for a in activities if a.device == device]
        mains = [a for a in mine if not a.is_copy and a.name.startswith("kernel") and kernel in a.name
                 and a.end - a.start >= min_ns]
        if len(mains) < 2:
            continue
        rows = []
        for a, b in zip(mains, mains[1:]):
            between = [x for x in mine if a.end <= x.start < b.start and x is not a]
            others = [x for x in between if not x.is_copy and x.name.startswith("kernel")]
            copies = [x for x in between if x.is_copy]
            rows.append((b.start - a.start, a.end - a.start, b.start - a.end, len(others),
                         union_ns([(x.start, x.end) for x in others]), len(copies),
                         union_ns([(x.start, x.end) for x in copies])))
        medians = [statistics.median(column) for column in zip(*rows)]
        out[device] = dict(zip(("step", "kernel", "between", "other_kernels", "other_kernels_busy", "copies",
                                "copies_busy"), medians), steps=len(rows))
    return out


def render_steps(activities, kernel, min_us=0.0):
    """Markdown: steps() as a table, a row per device."""
    found = steps(activities, kernel, min_us * 1000)
    longer = f" lasting at least {min_us:g} µs" if min_us > 0 else ""
    if not found:
        return f"No kernel named like '{kernel}'{longer} ran twice on a device.\n"
    lines = [f"Steps cut at each start of the kernel named like '{kernel}'{longer} (medians over the steps):", "",
             "| device | steps | step µs | that kernel µs | end of it to the next step µs | other kernels | "
             "their busy µs | copies | their busy µs |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for device, m in found.items():
        lines.append(f"| {device} | {m['steps']} | {m['step'] / 1e3:,.1f} | {m['kernel'] / 1e3:,.1f} | "
                     f"{m['between'] / 1e3:,.1f} | {m['other_kernels']:g} | {m['other_kernels_busy'] / 1e3:,.1f} | "
                     f"{m['copies']:g} | {m['copies_busy'] / 1e3:,.1f} |")
    return "\n".join(lines) + "\n"


def host_calls(api, start, end):
    """Markdown lines: the runtime calls that began in [start, end), by function: count and time."""
    calls = [a for a in api if start <= a.start < end]
    if not calls:
        return []
    by_name, by_thread = defaultdict(list), Counter()
    for a in calls:
        by_name[a.name[len("api "):]].append(a.end - a.start)
        by_thread[a.stream] += a.end - a.start
    thread, busiest = by_thread.most_common(1)[0]
    lines = ["", f"Host: {len(calls)} CUDA runtime calls in the {(end - start) / 1e3:,.1f} µs from this burst's start "
                 f"to the next one's, {sum(by_thread.values()) / 1e3:,.1f} µs inside them "
                 f"({busiest / 1e3:,.1f} µs on thread {thread}, the busiest):", "",
             "| runtime call | calls | µs in them |", "|---|---:|---:|"]
    for name, times in sorted(by_name.items(), key=lambda kv: -sum(kv[1])):
        lines.append(f"| {name} | {len(times)} | {sum(times) / 1e3:,.1f} |")
    return lines


def render(activities, gap_us=20.0, rows=60, api=()):
    """Markdown: the typical burst's activities, per link and per sender; with `api` (load_api),
    the host's runtime calls from its start to the next burst alike."""
    groups = bursts(activities, gap_us * 1000)
    group = typical(groups)
    if not group:
        return "No copy or kernel in the trace.\n"
    t0 = min(a.start for a in group)
    period = period_ns(groups)
    every = (f" Bursts like it start every {period / 1e3:,.1f} µs (median): the GPUs are idle "
             f"{max(period - span(group), 0) / 1e3:,.1f} µs between them." if period else "")
    lines = [f"{len(groups)} bursts of activity (idle gaps over {gap_us:g} µs between them); a typical one: "
             f"{len(group)} activities in {span(group) / 1e3:,.1f} µs.{every}", "",
             "| start µs | length µs | what | device | stream | MB | GB/s |", "|---:|---:|---|---:|---:|---:|---:|"]
    for a in group[:rows]:
        what = f"{a.name} {a.src} → {a.dst}" if a.is_copy else a.name
        length = a.end - a.start
        rate = f"{a.bytes / length:,.1f}" if a.is_copy and length > 0 else ""
        mb = f"{a.bytes / 1e6:,.2f}" if a.is_copy else ""
        lines.append(f"| {(a.start - t0) / 1e3:,.1f} | {length / 1e3:,.1f} | {what} | {a.device} | {a.stream} | "
                     f"{mb} | {rate} |")
    if len(group) > rows:
        lines.append(f"| ... | | {len(group) - rows} more | | | | |")
    links = defaultdict(list)
    for a in group:
        if a.is_copy:
            links[(a.src, a.dst)].append(a)
    if links:
        lines += ["", "| from → to | copies | MB | time copying µs (union) | GB/s over that time |",
                  "|---|---:|---:|---:|---:|"]
        for (src, dst), copies in sorted(links.items()):
            nbytes = sum(c.bytes for c in copies)
            busy = union_ns([(c.start, c.end) for c in copies])
            lines.append(f"| {src} → {dst} | {len(copies)} | {nbytes / 1e6:,.2f} | {busy / 1e3:,.1f} | "
                         f"{nbytes / busy if busy else 0:,.1f} |")
        out_of = defaultdict(list)
        for a in group:
            if a.is_copy and a.src != a.dst:
                out_of[a.src].append(a)
        if out_of:
            lines += ["", "| device | bytes out MB | time sending µs (union) | GB/s while sending |",
                      "|---:|---:|---:|---:|"]
            for d, copies in sorted(out_of.items()):
                nbytes = sum(c.bytes for c in copies)
                busy = union_ns([(c.start, c.end) for c in copies])
                lines.append(f"| {d} | {nbytes / 1e6:,.2f} | {busy / 1e3:,.1f} | {nbytes / busy if busy else 0:,.1f} |")
    lengths = [span(g) / 1e3 for g in alike(groups)]
    lines += ["", f"Bursts like it: {len(lengths)}, median {statistics.median(lengths):,.1f} µs, "
                  f"from {min(lengths):,.1f} to {max(lengths):,.1f} µs."]
    if api:
        starts = sorted(min(a.start for a in g) for g in alike(groups))
        later = [t for t in starts if t > t0]
        lines += host_calls(api, t0, later[0] if later else max(a.end for a in group))
    return "\n".join(lines) + "\n"
