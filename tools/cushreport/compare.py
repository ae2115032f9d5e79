"""Before/after: the same benchmarks measured on two builds in one call (e.g. the code before a
change and after it), compared row by row. The time of each benchmark is the median of its
repetitions; the after/before speed is a ratio of typical times with a Welch interval on log
times (stats.ratio_ci: > 1, the after build is faster), and the overall figure is the geometric
mean of the rows' ratios. Several files per side are pooled (e.g. runs interleaved as
before, after, before, after to cancel drift).
"""
import math
from collections import defaultdict

from . import gbench, stats


def _times(runs):
    """name -> [milliseconds], pooled over the files of one side."""
    times = defaultdict(list)
    for run in runs:
        for row in run.rows:
            times[row.name].append(row.ms)
    return times


def rows(before, after):
    """[(name, before median ms, after median ms, ratio, low, high)] for the names both sides have."""
    b, a = _times(before), _times(after)
    out = []
    for name in sorted(set(b) & set(a)):
        ratio, lo, hi = stats.ratio_ci(b[name], a[name])
        out.append((name, stats.median(b[name]), stats.median(a[name]), ratio, lo, hi))
    return out


def render(before, after, before_label="before", after_label="after"):
    """Markdown: one line per benchmark both sides ran, then the geometric mean of the ratios."""
    table = rows(before, after)
    lines = [f"| benchmark | {before_label} ms | {after_label} ms | speed {after_label}/{before_label} (95% CI) |",
             "|---|---:|---:|---:|"]
    for name, tb, ta, ratio, lo, hi in table:
        interval = f" ({lo:.3f}-{hi:.3f})" if not math.isnan(lo) else ""
        lines.append(f"| {name.split('/min_time')[0]} | {tb:.3f} | {ta:.3f} | {ratio:.3f}{interval} |")
    if table:
        mean = math.exp(sum(math.log(r[3]) for r in table) / len(table))
        lines.append(f"\nGeometric mean of {len(table)} ratios: {mean:.3f}")
    only = sorted(set(_times(before)) ^ set(_times(after)))
    if only:
        lines.append(f"\nMeasured on one side only: {', '.join(only)}")
    for side, runs in ((before_label, before), (after_label, after)):
        for run in runs:
            lines += [f"{side}: {line}" for line in gbench.error_lines(run)]
    return "\n".join(lines) + "\n"
