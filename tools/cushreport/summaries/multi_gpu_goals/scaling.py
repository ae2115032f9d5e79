"""g GPUs against g x one GPU, from the rows of one run (bench_cases), on every GPU count >= 2:

- advection (case/advection bulk, case/advection_overlap overlapped): strong-scaling efficiency at
  1024^3 (or the largest n measured), t(1 GPU) / (g t(g GPUs)), t(1 GPU) the single-GPU reference
  (case/advection/single/1gpu/n); and the share of the exchange that overlap hides, (t_bulk -
  t_overlap) / t_exchange, from the exchange alone (exchange/advection/<g>gpu/n, cush).
- lattice-Boltzmann, esoteric pull, FP32 and FP16S: strong at 1024 x 1024 x 256 (or the largest
  M), weak at the largest M^3 per GPU: cush's MLUPS against g x the single-GPU reference's MLUPS
  (single, 1 GPU, same M); strong also against FluidX3D's published figure for g GPUs of the model;
  and, where the call measured cush without overlap and the exchanges alone
  (case/lbm_bulk_esoteric_<storage>, exchange/lbm_esoteric_<storage>), the share of the z-face
  exchange hidden behind the interior's update, (t_bulk - t_overlap) / t_exchange.
- karst ensembles: cush's runs per second at the largest K against g x the single-GPU reference's.

The issue's thresholds are keyed by GPU count (none at the other counts: the ratio is reported).
"""
from ... import stats
from ...figures import figure, measured_in
from .. import advection, karst, lbm
from .common import Found, gpu_model, gpus, name, prefer, scaling_goal

ADVECTION_SIZE = 1024
ADVECTION_GOAL = {"": {}, "overlap": {4: 0.95}}  # series -> {GPUs: efficiency}
LBM_STRONG_M = 1024
LBM_GOAL = {4: 0.97}    # g-GPU MLUPS >= 0.97 x g x one GPU
KARST_GOAL = {4: 0.97}  # runs per second, the same
# FluidX3D's published MLUPS (D3Q19; FluidX3D's README, listed in docs/results/peers.md), keyed by GPU count, then by
# (GPU model, storage). FluidX3D moves its halos through host memory, not NVLink.
FLUIDX3D = {
    1: {("H200", "fp32"): 23056, ("H200", "fp16s"): 36610, ("H100", "fp32"): 17602, ("H100", "fp16s"): 29561},
    2: {("H200", "fp32"): 36711},
    4: {("H200", "fp32"): 57310, ("H200", "fp16s"): 96056, ("H100", "fp32"): 46442, ("H100", "fp16s"): 78462},
    8: {("H200", "fp32"): 92008, ("H200", "fp16s"): 157743},
}


def advection_goals(run):
    ms, _ = advection.medians(run)
    found = Found()
    kinds = (("case/advection", ""), ("case/advection_overlap", "overlap"))
    for g in sorted({k[2] for k in ms if k[0] in dict(kinds) and k[2] >= 2}):
        for kind, series in kinds:
            sizes = [k[3] for k in ms if k[:3] == (kind, "multi_cush", g)]
            if not sizes:
                continue
            n = prefer(sizes, ADVECTION_SIZE)
            t, t1 = ms[(kind, "multi_cush", g, n)], ms.get(("case/advection", "single", 1, n))
            label = f"{kind[5:]}, {gpus(g)}, n = {n}"
            if t1 is None:
                found.miss(f"{label}: no single-GPU reference (case/advection/single/1gpu/{n}); no efficiency")
                continue
            eff = t1 / (g * t)
            found.add(figure(name("advection", g, series, "multi_cush", f"n{n}", f"vs_{g}x_1gpu"), round(t, 3), "ms",
                             reference=round(t1 / g, 3),
                             reference_is=f"the single-GPU reference's time / {g} ({t1:.3f} ms, case/advection/single/1gpu/{n}), same run",
                             ratio=round(eff, 3), **measured_in(run),
                             goal=scaling_goal(ADVECTION_GOAL[series], g, eff, f"strong-scaling efficiency ({'overlapped' if series else 'bulk'})")))
        found += _hidden(run, ms, g)
    return found


def _hidden(run, ms, g):
    """The share of the exchange that the overlapped schedule hides on g GPUs (cush)."""
    found = Found()
    sizes = [k[3] for k in ms if k[:3] == ("case/advection_overlap", "multi_cush", g)]
    if not sizes:
        return found
    n = prefer(sizes, ADVECTION_SIZE)
    bulk, ex = ms.get(("case/advection", "multi_cush", g, n)), ms.get(("exchange/advection", "", g, n))
    if bulk is None or ex is None:
        what = "exchange/advection" if ex is None else "case/advection/multi_cush"
        found.miss(f"advection, {gpus(g)}, n = {n}: no {what}/{g}gpu/{n} row; the share of the exchange hidden is not stated")
        return found
    hidden = bulk - ms[("case/advection_overlap", "multi_cush", g, n)]
    found.add(figure(name("advection", g, "overlap", "multi_cush", f"n{n}", "exchange_hidden"), round(hidden, 3),
                     "ms of exchange hidden (bulk - overlapped)", reference=round(ex, 3),
                     reference_is=f"the cush exchange alone (exchange/advection/{g}gpu/{n}), same run",
                     ratio=round(hidden / ex, 3), **measured_in(run),
                     goal="share of the exchange hidden, (t_bulk - t_overlap) / t_exchange (no threshold)"))
    return found


def lbm_goals(run):
    mlups, _ = lbm.medians(run)
    model = gpu_model(run.context)
    found = Found()
    for series in ("strong", "weak"):
        for storage in ("fp32", "fp16s"):
            key = (series, "esoteric", storage)
            for g in sorted({k[4] for k in mlups if k[:4] == key + ("multi_cush",) and k[4] >= 2}):
                m = prefer([k[5] for k in mlups if k[:5] == key + ("multi_cush", g)], LBM_STRONG_M if series == "strong" else None)
                cush, one = mlups[key + ("multi_cush", g, m)], mlups.get(key + ("single", 1, m))
                family = ("weak_" if series == "weak" else "") + f"esoteric_{storage}"
                base = ("lbm", g, family, "multi_cush", f"m{m}")
                if one is None:
                    found.miss(f"lbm_{family}, {gpus(g)}, M = {m}: no single-GPU reference (single/1gpu/{m}); no scaling figure")
                else:
                    found.add(figure(name(*base, f"vs_{g}x_1gpu"), round(cush), "MLUPS", reference=round(g * one),
                                     reference_is=f"{g} x the single-GPU reference ({one:,.0f} MLUPS, single/1gpu/{m}), same run",
                                     ratio=round(cush / (g * one), 3), **measured_in(run),
                                     goal=scaling_goal(LBM_GOAL, g, cush / (g * one), f"MLUPS / ({g} x one GPU)")))
                if series == "strong":
                    found += _fluidx3d(run, base, g, model, storage, cush)
    found += _lbm_hidden(run)
    return found


def _lbm_hidden(run):
    """The share of the z-face exchange the overlapped esoteric-pull step hides (cush), per storage
    and GPU count, at M = 1024 or the largest M with both extra rows; silent where neither was run."""
    ms = lbm.hidden_ms(run)
    found = Found()
    for storage, g in sorted({(k[1], k[2]) for k in ms if k[0] in ("bulk", "exchange")}):
        sizes = [k[3] for k in ms if k[1:3] == (storage, g) and all((kind, storage, g, k[3]) in ms
                                                                   for kind in ("overlap", "bulk", "exchange"))]
        if not sizes:
            found.miss(f"lbm esoteric {storage}, {gpus(g)}: no M with the overlapped, bulk and exchange-alone rows; "
                       "the share of the exchange hidden is not stated")
            continue
        m = prefer(sizes, LBM_STRONG_M)
        bulk, over, ex = (ms[(kind, storage, g, m)] for kind in ("bulk", "overlap", "exchange"))
        found.add(figure(name("lbm", g, f"esoteric_{storage}", "multi_cush", f"m{m}", "exchange_hidden"), round(bulk - over, 3),
                         "ms of exchange hidden (bulk - overlapped)", reference=round(ex, 3),
                         reference_is=f"the cush exchanges alone (exchange/lbm_esoteric_{storage}/{g}gpu/{m}), same run",
                         ratio=round((bulk - over) / ex, 3), **measured_in(run),
                         goal="share of the z-face exchange hidden, (t_bulk - t_overlap) / t_exchange (no threshold)"))
    return found


def _fluidx3d(run, base, g, model, storage, cush):
    found = Found()
    ref = FLUIDX3D.get(g, {}).get((model, storage))
    if ref is None:
        found.miss(f"lbm esoteric {storage}, {gpus(g)}: no published FluidX3D figure for {g} x {model} {storage.upper()} (peers.md)")
    else:
        found.add(figure(name(*base, "vs_fluidx3d"), round(cush), "MLUPS", reference=ref,
                         reference_is=f"FluidX3D on {g} x {model}, {storage.upper()} (published, peers.md), not measured here",
                         ratio=round(cush / ref, 3), **measured_in(run),
                         goal=f"above FluidX3D's {ref:,} MLUPS: {'met' if cush > ref else 'not met'}"))
    return found


def karst_goals(run):
    _, rates = karst.samples(run)
    found = Found()
    for on in (on for on in karst.gpu_labels(rates, virtual=False) if karst.count(on) >= 2):
        got = rates.get(("ensemble", "multi_cush", on), {})
        if not got:
            continue
        g, k = karst.count(on), max(got)
        cush, one = stats.median(got[k]), karst.med(rates, karst.SINGLE, k)
        if one != one:
            found.miss(f"karst, {gpus(g)}, K = {k}: no single-GPU reference (case/karst/single/1gpu/{k}); no scaling figure")
            continue
        found.add(figure(name("karst", g, "", "multi_cush", f"k{k}", f"vs_{g}x_1gpu"), round(cush, 1), "runs/s",
                         reference=round(g * one, 1),
                         reference_is=f"{g} x the single-GPU reference ({one:,.1f} runs/s, case/karst/single/1gpu/{k}), same run",
                         ratio=round(cush / (g * one), 3), **measured_in(run),
                         goal=scaling_goal(KARST_GOAL, g, cush / (g * one), f"runs/s / ({g} x one GPU)")))
    return found
