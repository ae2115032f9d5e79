"""Markdown summaries of single benchmark runs, one module per benchmark binary or case.

Each module has `render(runs) -> str` (runs: gbench.Run objects) and is reached from the command
line as `python3 -m cushreport summarize <name> <json>...`; the modules whose pages state
headline figures also have `figures(...)`, which report.py puts into summary.json.
"""
from . import advection, device_ops, fft, halo, host_ops, karst, lbm, matmul, multi_gpu, overlap, ranks, temporal, two_gpu

BY_NAME = {"advection": advection, "fft": fft, "matmul": matmul, "device_ops": device_ops, "halo": halo,
           "host_ops": host_ops, "karst": karst, "lbm": lbm, "multi_gpu": multi_gpu,
           "overlap": overlap, "ranks": ranks, "temporal": temporal, "two_gpu": two_gpu}
