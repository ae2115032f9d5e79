"""cushreport.summaries.two_gpu: the two-GPU goals on synthetic runs shaped like bench_cases' and
bench_device_ops' rows (the FFT's all-to-all floor met and missed, a size without a floor, the
scaling ratios), and on the committed two-GPU call, whose goal table multi_gpu.md prints (its 2026-11-24 section)."""
import json
import os
import tempfile
import unittest

from needs import DATA, REPORT, RESULTS

if not REPORT:
    from cushreport import gbench
    from cushreport.summaries import BY_NAME, two_gpu

CONTEXT = {"date": "2026-01-01T00:00:00+00:00", "gpu_count": "2", "gpus": "GPU A, GPU A"}
A2A_MS = 2.0  # one NCCL all-to-all of 2^27 complex floats (1 GiB) per GPU, synthetic


def row(name, ms, **fields):
    return {"name": name + "/min_time:0.100/manual_time", "run_type": "iteration", "real_time": ms, "time_unit": "ms", **fields}


def rows(name, ms, reps=3, **fields):
    """`reps` repetitions 0.1% apart, so that medians are exact and the F-test has variance."""
    return [row(name, ms * (1 + 0.001 * (r - 1)), **fields) for r in range(reps)]


def fft_rows():
    """Natural order at 1.3 x its 3-all-to-all floor (met), transposed output at 1.3 x its
    2-all-to-all floor (not met: the goal is 1.2 x) at 2^28; 2^30 has no all-to-all of its size."""
    out = []
    for e, scale in ((26, 0.25), (28, 1.0), (30, 4.0)):
        for mode, k in (("natural", 3), ("transposed_out", 2)):
            t = 1.3 * k * A2A_MS * scale
            for v in ("multi_cuda", "multi_cush"):
                out += rows(f"case/fft_{mode}/{v}/2gpu/{e}", t)
        out += rows(f"case/fft_natural/cufftxt/2gpu/{e}", 1.5 * 1.3 * 3 * A2A_MS * scale)
    return out


def a2a_rows():
    out = []
    for size, ms in ((1 << 28, A2A_MS / 4), (1 << 30, A2A_MS)):
        for impl, factor in (("raw_nccl", 1.0), ("cush_peer", 0.8)):
            out += rows(f"dev/all_to_all/{impl}/{size >> 20}MiB", 100 * ms, op_us=1e3 * ms * factor, bytes=float(size), gpus=2.0)
    return out


def lbm_rows():
    """FP32 strong: 1 GPU single 25,000 MLUPS; 2 GPUs cush and raw 45,000 (0.9 of 2 x one GPU)."""
    out = []
    for m in (256, 512):
        cells = m * m * 256
        for v, g, mlups in (("single", 1, 25000), ("multi_cuda", 2, 45000), ("multi_cush", 2, 45000)):
            out += rows(f"case/lbm_esoteric_fp32/{v}/{g}gpu/{m}", cells / (mlups * 1e3), MLUPS=float(mlups))
    return out


def karst_rows():
    out = []
    for k in (512, 4096):
        for g, rate in ((1, 2500.0), (2, 4750.0)):
            for v in ("multi_cuda", "multi_cush"):
                out += rows(f"case/karst/{v}/{g}gpu/{k}", k / rate * 1e3, **{"runs/s": rate})
    return out


def load(benchmarks, name):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, name)
        with open(path, "w") as f:
            json.dump({"context": CONTEXT, "benchmarks": benchmarks}, f)
        return gbench.load(path)


@unittest.skipIf(REPORT, REPORT)
class Synthetic(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # karst first and the all-to-all before the FFT: the order of the files does not matter
        cls.runs = [load(karst_rows(), "k.json"), load(a2a_rows(), "a.json"), load(fft_rows(), "f.json"), load(lbm_rows(), "l.json")]
        cls.figures = {e["name"]: e for e in two_gpu.figures(cls.runs)}

    def test_each_run_is_recognized_by_its_rows(self):
        self.assertEqual([two_gpu.kind_of(r) for r in self.runs], ["karst", "all_to_all", "fft", "lbm"])

    def test_fft_floor_met_and_missed(self):
        natural = self.figures["fft.2gpu.natural.cush_vs_a2a_floor.2e28"]
        self.assertAlmostEqual(natural["reference"], 3 * A2A_MS, places=3)
        self.assertAlmostEqual(natural["ratio"], 1 / 1.3, places=3)
        self.assertTrue(natural["goal"].endswith(": met"), natural["goal"])
        transposed = self.figures["fft.2gpu.transposed_out.cush_vs_a2a_floor.2e28"]
        self.assertAlmostEqual(transposed["reference"], 2 * A2A_MS, places=3)
        self.assertTrue(transposed["goal"].endswith(": not met"), transposed["goal"])
        # the floor is NCCL's, not the faster cush_peer all-to-all of the same call
        self.assertIn("NCCL", transposed["reference_is"])
        self.assertAlmostEqual(self.figures["fft.2gpu.natural.cush_vs_a2a_floor.2e26"]["reference"], 3 * A2A_MS / 4, places=3)

    def test_a_size_without_its_all_to_all_has_no_floor(self):
        self.assertNotIn("fft.2gpu.natural.cush_vs_a2a_floor.2e30", self.figures)
        text = two_gpu.render(self.runs)
        self.assertIn("No all-to-all of the size needed was measured for: natural 2^30, transposed out 2^30", text)
        self.assertIn("1024 MiB per GPU: cush_peer 1.600 ms", text)

    def test_fft_against_cufftxt_and_raw(self):
        self.assertAlmostEqual(self.figures["fft.2gpu.natural.cush_vs_cufftxt.2e28"]["ratio"], 1.5, places=3)
        self.assertIn("no significant difference", self.figures["fft.2gpu.natural.cush_vs_raw"]["f_test"])

    def test_lbm_scaling_and_fluidx3d(self):
        two = self.figures["lbm.2gpu.esoteric_fp32.multi_cush.m512.vs_two_one_gpu"]
        self.assertEqual((two["value"], two["reference"], two["ratio"]), (45000, 50000, 0.9))
        fluid = self.figures["lbm.2gpu.esoteric_fp32.multi_cush.m512.vs_fluidx3d"]
        self.assertEqual(fluid["reference"], 36711)
        self.assertTrue(fluid["goal"].endswith(": met"))
        self.assertNotIn("lbm.2gpu.esoteric_fp16s.multi_cush.m512.vs_two_one_gpu", self.figures)  # no FP16S rows

    def test_karst_scaling(self):
        e = self.figures["karst.2gpu.multi_cush.k4096.vs_two_one_gpu"]
        self.assertEqual((e["value"], e["reference"], e["ratio"]), (4750.0, 5000.0, 0.95))
        self.assertIn("no significant difference", self.figures["karst.2gpu.cush_vs_raw"]["f_test"])

    def test_without_the_all_to_all_run_no_floor_and_no_failure(self):
        names = {e["name"] for e in two_gpu.figures([self.runs[2]])}
        self.assertFalse([n for n in names if "a2a_floor" in n])
        self.assertIn("fft.2gpu.natural.cush_vs_cufftxt.2e28", names)

    def test_reached_from_the_command_line(self):
        self.assertIs(BY_NAME["two_gpu"], two_gpu)


@unittest.skipIf(REPORT, REPORT)
class Committed(unittest.TestCase):
    """The call on 2 x H200 of 2026-11-24: the goal table that multi_gpu.md's 2026-11-24 section prints, and figures that its
    other tables print."""

    @classmethod
    def setUpClass(cls):
        names = ("lbm", "fft", "karst", "all_to_all")
        cls.runs = [gbench.load(os.path.join(DATA, f"two_gpu_2026-11-24_{n}.json")) for n in names]
        cls.figures = {e["name"]: e for e in two_gpu.figures(cls.runs)}
        with open(os.path.join(RESULTS, "multi_gpu.md")) as f:  # its 2026-11-24 section
            cls.page = f.read()

    def test_the_page_prints_this_goal_table(self):
        table = two_gpu.render(self.runs)
        self.assertIn(table, self.page)

    def test_figures_are_the_numbers_of_the_page_tables(self):
        self.assertEqual(self.figures["fft.2gpu.natural.cush_vs_a2a_floor.2e28"]["value"], 6.873)  # fft table, 2 GPUs
        self.assertEqual(self.figures["fft.2gpu.transposed_out.cush_vs_a2a_floor.2e28"]["value"], 5.096)
        self.assertEqual(self.figures["lbm.2gpu.esoteric_fp32.multi_cush.m1024.vs_fluidx3d"]["value"], 50106)
        self.assertEqual(self.figures["karst.2gpu.multi_cush.k4096.vs_two_one_gpu"]["value"], 5355.9)
        self.assertEqual(self.figures["fft.2gpu.natural.cush_vs_cufftxt.2e30"]["reference"], 24.619)


if __name__ == "__main__":
    unittest.main()
