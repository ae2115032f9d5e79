"""The rbffd case's goals (issue 50, spec rbffd.md §6) from the rows of one bench_cases run, every
reference from the same run:

- strong scaling (goal 2): the single-GPU reference's time over cush's on g GPUs at 2^24 (or the
  largest N measured): >= 1.90 on 2 GPUs, >= 3.70 on 4;
- the step captured into a CUDA graph (goal 2): the single-GPU reference's time over cush's
  captured overlapped step (case/rbffd_graph) at 2^20 on 4 GPUs: >= 2.8 (other sizes and counts
  stated without a threshold);
- weak scaling (goal 2): cush on one GPU over cush on g GPUs, 2^22 nodes per GPU (case/rbffd_weak):
  >= 0.95;
- the exchange alone (goal 3): cush's (exchange/rbffd/automatic) over the raw twin's
  (exchange/rbffd/raw) at every size and GPU count: <= 1.05, or at most 1 us more per exchange;
- the share of the exchange that overlap hides (goal 3): (t_bulk - t_overlap) / t_exchanges, cush,
  where a case row's 10 RK4 steps exchange 40 times and an exchange row times 10 exchanges: >= 0.85
  wherever the exchanges are >= 5 % of the bulk step.

The F-test against raw (goal 4) is f_tests.py's, as for every case; the stage against the copy
(goal 1) is a one-GPU figure (cases/rbffd/README.md). Names: rbffd.<g>gpu[.<series>]
.<variant>.2e<lg>.<comparison>.
"""
import re
from collections import defaultdict

from ... import stats
from ...figures import figure, measured_in
from .common import Found, gpus, met, name

ROW = re.compile(r"^(?P<family>case/rbffd(?:_overlap|_weak|_graph)?|spmv/rbffd|exchange/rbffd)/(?P<variant>[a-z_0-9]+)/"
                 r"(?P<g>\d+)gpu/(?P<lg>\d+)(?:/|$)")
STRONG_LG = 24
SPEEDUP_GOAL = {2: 1.90, 4: 3.70}
CAPTURED_GOAL = {(4, 20): 2.8}  # (GPUs, log2 N) -> speed-up
WEAK_GOAL = 0.95
EXCHANGE_GOAL, EXCHANGE_SLACK_MS = 1.05, 1e-3
HIDDEN_GOAL, HIDDEN_WHERE = 0.85, 0.05
EXCHANGES_PER_CASE_ROW, EXCHANGES_PER_EXCHANGE_ROW = 40, 10


def medians(run):
    """(family, variant, g, lg) -> median ms of the rbffd rows of a run."""
    ms = defaultdict(list)
    for row in run.rows:
        m = ROW.match(row.name)
        if m:
            ms[(m["family"], m["variant"], int(m["g"]), int(m["lg"]))].append(row.ms)
    return {k: stats.median(v) for k, v in ms.items()}


def rbffd_goals(run):
    t = medians(run)
    found = Found()
    _strong(run, t, found)
    _captured(run, t, found)
    _weak(run, t, found)
    _exchange(run, t, found)
    _hidden(run, t, found)
    return found


def _strong(run, t, found):
    for g in sorted({k[2] for k in t if k[:2] == ("case/rbffd", "multi_cush") and k[2] >= 2}):
        sizes = [k[3] for k in t if k[:3] == ("case/rbffd", "multi_cush", g)]
        lg = STRONG_LG if STRONG_LG in sizes else max(sizes)
        one = t.get(("case/rbffd", "single", 1, lg))
        if one is None:
            found.miss(f"rbffd, {gpus(g)}, 2^{lg}: no single-GPU reference (case/rbffd/single/1gpu/{lg}); no speed-up")
            continue
        cush = t[("case/rbffd", "multi_cush", g, lg)]
        s = one / cush
        goal = SPEEDUP_GOAL.get(g)
        found.add(figure(name("rbffd", g, "multi_cush", f"2e{lg}", "speedup"), round(cush, 3), "ms (10 RK4 steps)",
                         reference=round(one, 3), reference_is=f"the single-GPU reference (case/rbffd/single/1gpu/{lg}), same run",
                         ratio=round(s, 3), **measured_in(run),
                         goal=(f"speed-up >= {goal}: {met(s >= goal)}" +
                               ("" if lg == STRONG_LG else f" (the goal is set at 2^{STRONG_LG}; 2^{lg} is the largest size measured)"))
                         if goal else "speed-up: no threshold on this GPU count"))


def _captured(run, t, found):
    for key in sorted(k for k in t if k[:2] == ("case/rbffd_graph", "multi_cush")):
        _, _, g, lg = key
        one = t.get(("case/rbffd", "single", 1, lg))
        if one is None:
            found.miss(f"rbffd captured, {gpus(g)}, 2^{lg}: no case/rbffd/single/1gpu/{lg} row; no speed-up")
            continue
        s = one / t[key]
        goal = CAPTURED_GOAL.get((g, lg))
        found.add(figure(name("rbffd", g, "graph", "multi_cush", f"2e{lg}", "speedup"), round(t[key], 3),
                         "ms (10 RK4 steps, each a replayed CUDA graph)", reference=round(one, 3),
                         reference_is=f"the single-GPU reference (case/rbffd/single/1gpu/{lg}), same run", ratio=round(s, 3),
                         **measured_in(run),
                         goal=f"speed-up >= {goal}: {met(s >= goal)}" if goal else "speed-up: no threshold at this size and GPU count"))


def _weak(run, t, found):
    ones = [k for k in t if k[:3] == ("case/rbffd_weak", "multi_cush", 1)]
    for g in sorted({k[2] for k in t if k[:2] == ("case/rbffd_weak", "multi_cush") and k[2] >= 2}):
        if not ones:
            found.miss(f"rbffd weak, {gpus(g)}: no case/rbffd_weak/multi_cush/1gpu row; no efficiency")
            continue
        key = next(k for k in sorted(t) if k[:3] == ("case/rbffd_weak", "multi_cush", g))
        lg, cush, one = key[3], t[key], t[ones[0]]
        e = one / cush
        found.add(figure(name("rbffd", g, "weak", "multi_cush", f"2e{lg}", "vs_1gpu"), round(cush, 3), "ms (10 RK4 steps)",
                         reference=round(one, 3), reference_is=f"cush on one GPU, 2^{ones[0][3]} nodes (case/rbffd_weak/multi_cush/1gpu), same run",
                         ratio=round(e, 3), **measured_in(run), goal=f"weak-scaling efficiency >= {WEAK_GOAL}: {met(e >= WEAK_GOAL)}"))


def _exchange(run, t, found):
    for key in sorted(k for k in t if k[:2] == ("exchange/rbffd", "automatic")):
        _, _, g, lg = key
        raw = t.get(("exchange/rbffd", "raw", g, lg))
        if raw is None:
            found.miss(f"rbffd exchange, {gpus(g)}, 2^{lg}: no exchange/rbffd/raw row")
            continue
        cush = t[key]
        r = cush / raw
        more_us = (cush - raw) / EXCHANGES_PER_EXCHANGE_ROW * 1e3
        ok = r <= EXCHANGE_GOAL or more_us <= EXCHANGE_SLACK_MS * 1e3
        found.add(figure(name("rbffd", g, "exchange", "automatic", f"2e{lg}", "vs_raw"),
                         round(cush / EXCHANGES_PER_EXCHANGE_ROW * 1e3, 2), "us per exchange",
                         reference=round(raw / EXCHANGES_PER_EXCHANGE_ROW * 1e3, 2), reference_is=f"the raw twin's (exchange/rbffd/raw/{g}gpu/{lg}), same run",
                         ratio=round(r, 3), **measured_in(run),
                         goal=f"cush <= {EXCHANGE_GOAL} x raw or <= 1 us more per exchange: {met(ok)}"))


def _hidden(run, t, found):
    for key in sorted(k for k in t if k[:2] == ("case/rbffd_overlap", "multi_cush") and k[2] >= 2):
        _, _, g, lg = key
        bulk, ex = t.get(("case/rbffd", "multi_cush", g, lg)), t.get(("exchange/rbffd", "automatic", g, lg))
        if bulk is None or ex is None:
            what = "exchange/rbffd/automatic" if ex is None else "case/rbffd/multi_cush"
            found.miss(f"rbffd, {gpus(g)}, 2^{lg}: no {what}/{g}gpu/{lg} row; the share of the exchange hidden is not stated")
            continue
        exchanges = ex * EXCHANGES_PER_CASE_ROW / EXCHANGES_PER_EXCHANGE_ROW
        share = (bulk - t[key]) / exchanges
        weight = exchanges / bulk
        goal = (f"share hidden >= {HIDDEN_GOAL}: {met(share >= HIDDEN_GOAL)}" if weight >= HIDDEN_WHERE else
                f"not held: the exchanges are {weight:.1%} of the bulk step (the goal holds from {HIDDEN_WHERE:.0%})")
        found.add(figure(name("rbffd", g, "overlap", "multi_cush", f"2e{lg}", "exchange_hidden"), round(bulk - t[key], 3),
                         "ms of exchange hidden (bulk - overlapped, 10 steps)", reference=round(exchanges, 3),
                         reference_is=f"40 exchanges alone (exchange/rbffd/automatic/{g}gpu/{lg}), same run",
                         ratio=round(share, 3), **measured_in(run), goal=goal))
