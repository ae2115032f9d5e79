"""cushreport: the report on cush's measurements (docs/results) and the summaries of single runs.

Run it from the repository root with the package on the path (docs/report.md):

    PYTHONPATH=tools python3 -m cushreport report --results docs/results
    PYTHONPATH=tools python3 -m cushreport summarize halo docs/results/data/halo_2026-11-23.json

Modules: gbench (the one Google Benchmark JSON loader), stats (SciPy's F and t distributions,
NumPy's least squares, the F-test of seed 002 eq. 2.2), complexity (pmccabe), perf
(performance.md), plots (the charts), figures (summary.json entries), report (the whole report),
summaries/ (one Markdown summary per benchmark binary or case; multi_gpu and its goals in
summaries/multi_gpu_goals/ for the files of a call on several GPUs).
"""
