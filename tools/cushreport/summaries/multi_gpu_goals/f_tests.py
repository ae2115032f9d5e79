"""cush against raw CUDA on g GPUs: seed 002's extra-sum-of-squares F-test (eq. 2.2, perf.f_test)
of the log-time curves over the sizes, for every bench_cases family and every GPU count >= 2 in a
run. Goal (as for one GPU): no significant difference at 95%, or cush faster."""
from ... import perf
from ...figures import figure, measured_in
from .common import Found, f_test_text, gpus, met, name, split_family


def f_test_goals(run):
    samples = perf.case_samples(run.rows)
    found = Found()
    for family in sorted({k[0] for k in samples}):
        for g in sorted({k[2] for k in samples if k[0] == family and k[2] >= 2}):
            raw, cush = perf.case_curves(samples, family, g)
            if not raw or not cush:
                continue
            r = perf.f_test(raw, cush)
            if r is None:
                found.miss(f"{family}, {gpus(g)}: too few sizes or runs for the F-test")
                continue
            case, series = split_family(family)
            found.add(figure(name(case, g, series, "cush_vs_raw"), round(r["speed"], 4), "speed (raw time / cush time)",
                             **measured_in(run), f_test=f_test_text(r),
                             goal=f"F-test: no difference at 95%, or cush faster: {met(not r['differ'] or r['speed'] > 1)}"))
    return found
