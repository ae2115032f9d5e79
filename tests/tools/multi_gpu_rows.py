"""Synthetic benchmark JSON of one multi-GPU call, shaped like bench_cases', bench_device_ops' and
bench_halo's rows, with 1, 2 and 4 GPUs (test_multi_gpu_summary.py): every goal met somewhere and
missed somewhere, and some references missing."""
import json
import os
import tempfile

from needs import REPORT

if not REPORT:
    from cushreport import gbench

H200 = {"date": "2026-12-01T00:00:00+00:00", "gpu_count": "4", "gpus": ", ".join(["NVIDIA H200"] * 4)}


def cush_us(size):
    """cush's time of one device operation of `size` bytes per GPU (synthetic)."""
    return size / 1e6 + 10


def nccl_a2a_ms(size):
    """NCCL's all-to-all on 4 GPUs from 256 MiB per GPU up: cush is 1.1 x faster (device_op_rows)."""
    return 1.1 * cush_us(size) / 1e3


def row(name, ms, **fields):
    return {"name": name + "/min_time:0.100/manual_time", "run_type": "iteration", "real_time": ms, "time_unit": "ms", **fields}


def rows(name, ms, reps=3, **fields):
    """`reps` repetitions 0.1% apart, so that medians are exact and the F-test has variance."""
    return [row(name, ms * (1 + 0.001 * (r - 1)), **fields) for r in range(reps)]


def both(family, g, n, ms, cush_factor=1.0, **fields):
    """raw CUDA and cush rows of one size; cush_factor > 1: cush slower."""
    return rows(f"case/{family}/multi_cuda/{g}gpu/{n}", ms, **fields) + rows(f"case/{family}/multi_cush/{g}gpu/{n}", ms * cush_factor, **fields)


def advection_rows(single=True):
    """1024^3: single 100 ms; bulk at 0.90 (2 GPUs) and 0.85 (4) efficiency, overlapped at 0.97 and
    0.96 (the 4-GPU goal, 0.95: met); the exchange alone 5 ms on 4 GPUs."""
    out = []
    for n, scale in ((512, 0.125), (1024, 1.0)):
        if single:
            out += rows(f"case/advection/single/1gpu/{n}", 100 * scale)
        for g, bulk, overlap in ((1, 1.0, 1.0), (2, 0.90, 0.97), (4, 0.85, 0.96)):
            out += both("advection", g, n, 100 * scale / (g * bulk)) + both("advection_overlap", g, n, 100 * scale / (g * overlap))
    return out + rows("exchange/advection/4gpu/1024", 5.0)


def lbm_rows():
    """FP32: one GPU 25,000 MLUPS, 2 GPUs 0.96 of 2 x, 4 GPUs 0.98 of 4 x (met); FP16S: 42,000,
    4 GPUs 0.90 (not met); weak FP32 at 256 per GPU: 0.97 on 4 GPUs."""
    out = []
    for storage, one, effs in (("fp32", 25000, {2: 0.96, 4: 0.98}), ("fp16s", 42000, {2: 0.95, 4: 0.90})):
        for m in (512, 1024):
            cells = m * m * 256
            out += rows(f"case/lbm_esoteric_{storage}/single/1gpu/{m}", cells / (one * 1e3), MLUPS=float(one))
            for g, eff in effs.items():
                out += both(f"lbm_esoteric_{storage}", g, m, cells / (eff * g * one * 1e3), MLUPS=float(eff * g * one))
    # The share of the exchange hidden: FP32 on 4 GPUs at 1024, the bulk step 0.3 ms longer than the
    # overlapped one and the exchanges alone 0.4 ms (0.75 hidden); FP16S on 2 GPUs without the exchange row.
    over = 1024 * 1024 * 256 / (0.98 * 4 * 25000 * 1e3)
    out += rows("case/lbm_bulk_esoteric_fp32/multi_cush/4gpu/1024", over + 0.3, MLUPS=1.0)
    out += rows("exchange/lbm_esoteric_fp32/4gpu/1024", 0.4)
    out += rows("case/lbm_bulk_esoteric_fp16s/multi_cush/2gpu/1024", 1.0, MLUPS=1.0)
    out += rows("case/lbm_weak_esoteric_fp32/single/1gpu/256", 1.0, MLUPS=25000.0)
    out += both("lbm_weak_esoteric_fp32", 1, 256, 1.0, MLUPS=25000.0) + both("lbm_weak_esoteric_fp32", 4, 256, 1.0, MLUPS=0.97 * 4 * 25000)
    return out


def karst_rows():
    """One GPU 2,500 runs/s; 2 GPUs 0.98 of 2 x; 4 GPUs 0.95 of 4 x (not met), cush 30% slower than raw."""
    out = []
    for k in (512, 4096):
        out += rows(f"case/karst/single/1gpu/{k}", k / 2.5, **{"runs/s": 2500.0})
        out += both("karst", 2, k, k / 4.9, **{"runs/s": 4900.0})
        out += rows(f"case/karst/multi_cuda/4gpu/{k}", k / 9.5 / 1.3, **{"runs/s": 9500.0 * 1.3})
        out += rows(f"case/karst/multi_cush/4gpu/{k}", k / 9.5, **{"runs/s": 9500.0})
    return out


def matmul_rows():
    """4 GPUs, FP32: k = 20 cuBLASXt 1.3 x cush's time (met), k = 40 1.1 x (not met); FP64 at k = 20
    only, cuBLASXt in FP64 1.25 x cush's time (met), and an FP64 row at k = 40 with no cush row."""
    out = both("matmul", 4, 20, 100.0) + both("matmul", 4, 40, 200.0) + both("matmul_f64", 4, 20, 300.0)
    out += rows("xt/matmul/4096/4gpu/20", 130.0) + rows("xt/matmul/2048/4gpu/20", 140.0) + rows("xt/matmul/4096/4gpu/40", 220.0)
    out += rows("xt/matmul_f64/2048/4gpu/20", 375.0) + rows("xt/matmul_f64/4096/4gpu/40", 900.0)
    return out


def fft_rows():
    """4 GPUs: natural at 1.3 x its 3-all-to-all floor (met), transposed output at 1.3 x its 2 (not
    met: 1.2) at 2^27 and 2^29; 2^30 has no all-to-all of its size; cufftXt 1.5 x cush natural."""
    out = []
    for e, a2a in ((27, nccl_a2a_ms(1 << 28)), (29, nccl_a2a_ms(1 << 30)), (30, 4.0)):
        for mode, k in (("natural", 3), ("transposed_out", 2)):
            out += both(f"fft_{mode}", 4, e, 1.3 * k * a2a)
        out += rows(f"case/fft_natural/cufftxt/4gpu/{e}", 1.5 * 1.3 * 3 * a2a)
    return out


def device_op_rows(g, counter=True):
    """all_to_all: cush 0.9 x NCCL's speed at 4 KiB on 4 GPUs (1.1 elsewhere), 1.0 x the raw twin;
    broadcast without a raw twin at 4 KiB; copy (no goal); all_reduce 1.05 x NCCL and 0.8 x NCCL on
    symmetric windows (on 4 GPUs only)."""
    out = []
    for size, label in ((4096, "4KiB"), (1 << 28, "256MiB"), (1 << 30, "1GiB")):
        us = cush_us(size)
        slow = 0.9 if (g, label) == (4, "4KiB") else 1.1
        for op, impls in (("all_to_all", {"raw_nccl": slow, "raw_peer": 1.0, "cush": 1.0}),
                          ("broadcast", {"raw_nccl": 1.2, "cush": 1.0} | ({} if label == "4KiB" else {"raw_peer": 1.0})),
                          ("copy", {"raw_peer": 0.9, "cush": 1.0}),
                          ("all_reduce", {"raw_nccl": 1.05, "cush": 1.0} | ({"raw_nccl_window": 0.8} if g == 4 else {}))):
            for impl, speed in impls.items():
                fields = {"op_us": us * (1.0 if impl == "cush" else speed), "busbw": 1.0, "bytes": float(size)}
                out += rows(f"dev/{op}/{impl}/{label}", 1.0, **(fields | ({"gpus": float(g)} if counter else {})))
    return out


def halo_rows():
    out = []
    for axis, ratio in (("x", 1.02), ("z", 0.9)):
        for impl, us in (("raw", 20.0 * ratio), ("cush", 20.0)):
            out += rows(f"halo/{impl}/{axis}/420/d1", 1.0, exch_us=us, **{"GB/s": 100.0}, message_bytes=1411200.0)
    return out


def rbffd_rows():
    """rbffd at 2^22 and 2^24 (strong), weak at 2^22 a GPU, the exchange alone: the 4-GPU speed-up met,
    the 2-GPU one missed; the 4-GPU exchange within 1.05 x at 2^24 and not at 2^22, the 2-GPU one
    only within 1 us; overlap hiding 0.917 of the 4-GPU exchanges, and the 2-GPU exchanges too small
    for the goal to hold; the captured step at 2^20 on 4 GPUs 3.0 x the single GPU (met), and stated
    without a threshold on 2 GPUs and at 2^22."""
    def case(family, variant, g, lg, ms):
        return rows(f"case/{family}/{variant}/{g}gpu/{lg}", ms)

    def exchange(impl, g, lg, ms):
        return rows(f"exchange/rbffd/{impl}/{g}gpu/{lg}", ms)
    out = case("rbffd", "single", 1, 24, 66.0) + case("rbffd", "single", 1, 22, 16.6)
    for g, lg, cush, raw in ((2, 24, 35.0, 34.8), (4, 24, 17.5, 17.4), (2, 22, 8.5, 8.4), (4, 22, 4.4, 4.3)):
        out += case("rbffd", "multi_cush", g, lg, cush) + case("rbffd", "multi_cuda", g, lg, raw)
    out += case("rbffd_overlap", "multi_cush", 4, 24, 12.0) + case("rbffd_overlap", "multi_cush", 2, 24, 34.99)
    out += exchange("automatic", 4, 24, 1.5) + exchange("raw", 4, 24, 1.45)
    out += exchange("automatic", 4, 22, 0.6) + exchange("raw", 4, 22, 0.5)
    out += exchange("automatic", 2, 24, 0.02) + exchange("raw", 2, 24, 0.012)
    out += case("rbffd_weak", "multi_cush", 1, 22, 16.8) + case("rbffd_weak", "multi_cush", 2, 23, 17.3)
    out += case("rbffd_weak", "multi_cush", 4, 24, 18.0)
    out += case("rbffd", "single", 1, 20, 4.2) + case("rbffd_graph", "multi_cush", 4, 20, 1.4)
    out += case("rbffd_graph", "multi_cush", 2, 20, 2.5) + case("rbffd_graph", "multi_cush", 4, 22, 4.0)
    return out


def write(d, name, benchmarks, context=H200):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        json.dump({"context": context, "benchmarks": benchmarks}, f)
    return path


def load(benchmarks, name, context=H200):
    with tempfile.TemporaryDirectory() as d:
        return gbench.load(write(d, name, benchmarks, context))


def call():
    """One call's files, in no particular order: the 4-GPU device operations' file has no `gpus`
    counter (the count comes from its context), the 2-GPU one has (and a 2-GPU context)."""
    two = dict(H200, gpu_count="2", gpus="NVIDIA H200, NVIDIA H200")
    return [load(device_op_rows(4, counter=False), "multi_gpu_x_ops4.json"), load(fft_rows(), "multi_gpu_x_fft.json"),
            load(advection_rows() + lbm_rows() + karst_rows() + matmul_rows() + rbffd_rows(), "multi_gpu_x_cases.json"),
            load(device_op_rows(2), "multi_gpu_x_ops2.json", two), load(halo_rows(), "multi_gpu_x_halo.json"),
            load(advection_rows(), "multi_gpu_x_virtual.json", dict(H200, virtual_gpus="4 logical GPUs on 1: 0 0 0 0"))]
