"""The report pipeline: complexity of the real cases; the performance report on synthetic
benchmark JSON shaped like Google Benchmark's (repetitions, aggregates, manual time); and the
whole report on a copy of the committed measurements, written to a temporary folder."""
import glob
import json
import os
import random
import shutil
import tempfile
import unittest

from needs import DATA, REPORT, RESULTS, ROOT, missing

WHOLE = missing("numpy", "scipy", "matplotlib", "pmccabe")

if not REPORT:
    from cushreport import complexity, perf, report

CONTEXT = {"date": "2026-01-01T00:00:00+00:00", "host_name": "test", "gpu_count": "2", "gpus": "GPU A, GPU A",
           "cuda_runtime": "13.0", "cuda_driver": "13.0", "nccl": "2.28.3", "cush": "0.1.0", "peer_access": "all pairs"}


def performance_text(folder):
    """The performance report's index and pages (performance_<case>.md, then the host's), as one text."""
    text = ""
    for name in ["performance.md"] + sorted(os.path.basename(p) for p in glob.glob(os.path.join(folder, "performance_*.md"))):
        with open(os.path.join(folder, name)) as f:
            text += f.read() + "\n"
    return text


def benchmarks(rows, reps=4, seed=3):
    """GB-style JSON entries: `reps` repetitions per (name, ms) with 1% noise, plus a median row."""
    rng = random.Random(seed)
    out = []
    for name, ms in rows:
        for r in range(reps):
            out.append({"name": name + "/manual_time", "run_type": "iteration", "repetitions": reps,
                        "repetition_index": r, "real_time": ms * rng.uniform(0.99, 1.01), "time_unit": "ms"})
        out.append({"name": name + "/manual_time_median", "run_type": "aggregate", "aggregate_name": "median",
                    "real_time": ms, "time_unit": "ms"})
    return out


class TempDir(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.dir)


@unittest.skipIf(WHOLE, WHOLE)
class Complexity(TempDir):
    def test_complexity_of_the_cases(self):
        rows, entries = complexity.run(ROOT, self.dir)
        scale = {r["variant"]: r for r in rows if r["case"] == "scale"}
        self.assertEqual(set(scale), {"single", "multi_cuda", "multi_cush"})
        self.assertEqual(scale["single"]["ncss_rel"], 1.0)
        self.assertEqual(scale["multi_cush"]["mcc"], 1)
        self.assertLess(scale["multi_cush"]["ncss"], scale["multi_cuda"]["ncss"])
        self.assertTrue(os.path.getsize(os.path.join(self.dir, "complexity.png")) > 1000)
        with open(os.path.join(self.dir, "complexity.md")) as f:
            self.assertIn("`cases/scale/multi_cush.cpp`", f.read())
        names = {e["name"]: e for e in entries}
        self.assertGreater(names["scale.complexity.ncss"]["ratio"], 2)
        self.assertEqual(names["scale.complexity.ncss"]["source"], "cases/scale/multi_cush.cpp, cases/scale/multi_cuda.cpp")


@unittest.skipIf(REPORT, REPORT)
class Performance(TempDir):
    def test_performance_report_finds_equal_and_different_curves(self):
        rows = []
        for n in [1 << 20, 1 << 22, 1 << 24, 1 << 26]:
            t = n / 1e7
            rows.append((f"case/demo/single/1gpu/{n}", t + 0.1))
            for g in (1, 2):
                rows.append((f"case/demo/multi_cuda/{g}gpu/{n}", t / g + 0.1))
                # the same curve on 1 GPU; 30% slower on 2 GPUs
                rows.append((f"case/demo/multi_cush/{g}gpu/{n}", (t / g + 0.1) * (1.0 if g == 1 else 1.3)))
        with open(os.path.join(self.dir, "cases.json"), "w") as f:
            json.dump({"context": CONTEXT, "benchmarks": benchmarks(rows)}, f)
        host = []
        for mib in [16, 256, 4096]:
            t = mib / 100
            host += [(f"host/scatter/pinned/raw/{mib}MiB", t), (f"host/scatter/pinned/cush/{mib}MiB", t),
                     (f"host/gather/pinned/raw/{mib}MiB", t), (f"host/gather/pinned/cush/{mib}MiB", t),
                     (f"host/scatter/pageable/raw/{mib}MiB", 10 * t), (f"host/scatter/pageable/cush/{mib}MiB", 2 * t),
                     (f"host/gather/pageable/raw/{mib}MiB", 5 * t), (f"host/gather/pageable/cush/{mib}MiB", 2 * t)]
        with open(os.path.join(self.dir, "host.json"), "w") as f:
            json.dump({"context": CONTEXT, "benchmarks": benchmarks(host)}, f)

        entries = perf.run(self.dir, [os.path.join(self.dir, "cases.json")], os.path.join(self.dir, "host.json"))
        text = performance_text(self.dir)
        one, two = text.split("### 2 GPUs")
        self.assertIn("no significant difference at 95%", one.split("### 1 GPU")[1])
        self.assertIn("different at 95%: cush slower", two.split("## Host")[0])
        for png in ("demo_time.png", "demo_scaling.png", "host_ops.png"):
            self.assertTrue(os.path.exists(os.path.join(self.dir, png)), png)
        names = {e["name"]: e for e in entries}
        case = names["demo.2gpu.time_n67108864"]
        self.assertAlmostEqual(case["ratio"], 1 / 1.3, delta=0.02)
        self.assertEqual(case["device"], "2 x GPU A")
        self.assertEqual(case["date"], CONTEXT["date"])
        self.assertEqual(case["source"], "cases.json")
        self.assertAlmostEqual(names["host_ops.2gpu.scatter_gather.pinned.4096MiB"]["ratio"], 1.0, delta=0.02)
        # pageable: raw 10 t + 5 t against cush 2 t + 2 t
        self.assertAlmostEqual(names["host_ops.2gpu.scatter_gather.pageable_first_use.4096MiB"]["ratio"], 15 / 4, delta=0.1)
        for e in entries:
            self.assertTrue({"name", "value", "unit", "reference", "ratio", "device", "date", "source"} <= set(e), e)

    def test_no_scaling_chart_without_a_reference_or_a_second_gpu_count(self):
        """One GPU count and no single-GPU rows (the one-process rows beside a run across processes):
        a time chart, no scaling chart; with the single-GPU reference added, both."""
        from cushreport import plots
        four = {("demo", v, 4, n): [1.0 + n / 1e6] for v in ("multi_cuda", "multi_cush") for n in (256, 1024)}
        made = [os.path.basename(p) for p in plots.case_charts("demo", four, self.dir, "four")]
        self.assertEqual(made, ["four_time.png"])
        self.assertFalse(os.path.exists(os.path.join(self.dir, "four_scaling.png")))
        with_single = {**four, **{("demo", "single", 1, n): [4.0] for n in (256, 1024)}}
        made = [os.path.basename(p) for p in plots.case_charts("demo", with_single, self.dir, "ref")]
        self.assertIn("ref_scaling.png", made)

    def test_rows_labelled_by_log2_of_the_size(self):
        # case/fft_*/.../<e> means N = 2^e: tables print 2^e, the F-test and figures see N.
        rows = []
        for e in (20, 22, 24, 26):
            rows += [(f"case/fft_demo/multi_cuda/1gpu/{e}", 2 ** e / 1e7), (f"case/fft_demo/multi_cush/1gpu/{e}", 1.3 * 2 ** e / 1e7)]
        path = os.path.join(self.dir, "fft.json")
        with open(path, "w") as f:
            json.dump({"context": CONTEXT, "benchmarks": benchmarks(rows)}, f)
        entries = perf.run(self.dir, [path], None)
        text = performance_text(self.dir)
        self.assertIn("| 2^26 |", text)
        self.assertNotIn("| 26 |", text)
        self.assertIn("different at 95%: cush slower", text)
        self.assertEqual([e["name"] for e in entries], ["fft_demo.1gpu.time_n67108864"])
        self.assertAlmostEqual(entries[0]["ratio"], 1 / 1.3, delta=0.02)

    def test_rows_with_an_order_are_cases_of_their_own_on_the_case_page(self):
        # case/wave/<order>/<variant>/...: one section per order, all on performance_wave.md.
        rows = []
        for order, slower in ((2, 1.0), (8, 1.3)):
            for n in (256, 512, 1024):
                rows += [(f"case/wave/{order}/single/1gpu/{n}", n / 100),
                         (f"case/wave/{order}/multi_cuda/2gpu/{n}", n / 200),
                         (f"case/wave/{order}/multi_cush/2gpu/{n}", slower * n / 200)]
        path = os.path.join(self.dir, "wave.json")
        with open(path, "w") as f:
            json.dump({"context": CONTEXT, "benchmarks": benchmarks(rows)}, f)
        entries = perf.run(self.dir, [path], None)
        self.assertEqual(sorted(os.path.basename(p) for p in glob.glob(os.path.join(self.dir, "performance_*.md"))),
                         ["performance_wave.md"])
        with open(os.path.join(self.dir, "performance_wave.md")) as f:
            page = f.read()
        self.assertIn("## Case wave_order2", page)
        self.assertIn("## Case wave_order8", page)
        self.assertIn("different at 95%: cush slower", page)
        self.assertEqual(sorted(e["name"] for e in entries), ["wave_order2.2gpu.time_n1024", "wave_order8.2gpu.time_n1024"])

    def test_runs_on_virtual_gpus_are_left_out(self):
        rows = [("case/demo/multi_cuda/2gpu/1024", 1.0), ("case/demo/multi_cush/2gpu/1024", 1.0)]
        context = dict(CONTEXT, virtual_gpus="2 logical GPUs on 1: 0 0")
        path = os.path.join(self.dir, "virtual.json")
        with open(path, "w") as f:
            json.dump({"context": context, "benchmarks": benchmarks(rows)}, f)
        self.assertEqual(perf.run(self.dir, [path], None), [])
        with open(os.path.join(self.dir, "performance.md")) as f:
            self.assertIn("No measurements yet", f.read())


@unittest.skipIf(WHOLE, WHOLE)
class WholeReport(TempDir):
    def test_summary_json_of_the_committed_measurements(self):
        os.makedirs(os.path.join(self.dir, "data"))
        for path in glob.glob(os.path.join(DATA, "*.json")):
            shutil.copy(path, os.path.join(self.dir, "data"))
        report.run(self.dir, ROOT)
        with open(os.path.join(self.dir, "summary.json")) as f:
            figures = {e["name"]: e for e in json.load(f)["figures"]}
        for name in ("scale.complexity.ncss", "scale.2gpu.time_n268435456", "host_ops.2gpu.broadcast.pinned.4096MiB",
                     "advection.1gpu.time_n1024", "matmul.1gpu.time_n40"):
            self.assertIn(name, figures)
        # the device operations' and the halo exchange's 2-GPU figures, from their committed runs
        copy = figures["device_ops.2gpu.run_a.copy.1GiB.cush_vs_raw_peer"]
        self.assertEqual((copy["ratio"], copy["device"], copy["source"]), (0.997, "2 x NVIDIA H200", "device_ops_2026-11-23_large.json"))
        self.assertEqual(figures["device_ops.2gpu.run_b.all_reduce.64KiB.cush_vs_raw_nccl"]["ratio"], 0.650)
        self.assertEqual(figures["halo.2gpu.x.420.d1.time"]["value"], 21.4)
        self.assertEqual(figures["halo.2gpu.x.4096.d4.bandwidth"]["ratio"], 0.742)
        # the FFT's goals: one GPU, and two virtual GPUs (a run on virtual GPUs quoted for its goal)
        self.assertEqual(figures["fft.1gpu.natural.cush_vs_single.2e28"]["ratio"], 0.643)
        self.assertEqual(figures["fft.2vgpu.natural.cush_vs_cufftxt.2e28"]["ratio"], 1.628)
        self.assertNotIn("fft_natural.2gpu.time_n268435456", figures)
        # the two-GPU call (two_gpu_*.json): its case rows in performance.md, its goals in summary.json,
        # where a later call on two GPUs states them again (the FFT's floor: multi_gpu_2026-11-29b, 2^26 .. 2^30)
        floor = figures["fft.2gpu.natural.cush_vs_a2a_floor.2e28"]
        self.assertEqual((floor["reference"], floor["source"]), (4.964, "multi_gpu_2026-11-29b_fft.json"))
        self.assertIn("fft.2gpu.natural.cush_vs_a2a_floor.2e29", figures)
        self.assertEqual(figures["lbm_esoteric_fp32.2gpu.time_n1024"]["device"], "2 x NVIDIA H200")
        self.assertIn("## Case lbm_esoteric_fp32 (two_gpu_2026-11-24_lbm.json)", performance_text(self.dir))
        with open(os.path.join(self.dir, "performance.md")) as f:  # the index names each page
            self.assertIn("[performance_lbm.md](performance_lbm.md)", f.read())
        self.assertTrue(os.path.exists(os.path.join(self.dir, "lbm_esoteric_fp32_two_gpu_2026-11-24_lbm_time.png")))
        # advection's roofline and matmul's figures
        self.assertEqual(figures["advection.1gpu.single.rate_n1024"]["value"], 216.3)
        self.assertEqual(figures["matmul.1gpu.rerun.vs_cublasxt_k20"]["ratio"], 1.016)
        self.assertEqual(figures["matmul.1gpu.rerun.resident_tflops_k40"]["value"], 50.7)
        for e in figures.values():
            self.assertTrue({"name", "value", "unit", "device", "date", "source"} <= set(e), e)


if __name__ == "__main__":
    unittest.main()
