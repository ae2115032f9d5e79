"""cushreport.summaries.multi_gpu: the multi-GPU goals on synthetic runs shaped like bench_cases',
bench_device_ops' and bench_halo's rows, with 1, 2 and 4 GPUs in one call (every goal met and
missed, references that are missing, the device operations' tables); the report's handling of
multi_gpu_*.json; and docs/results/multi_gpu.md against the committed files."""
import contextlib
import glob
import io
import os
import shutil
import tempfile
import unittest

from needs import DATA, REPORT, RESULTS
from multi_gpu_rows import (H200, advection_rows, call, device_op_rows, fft_rows, karst_rows, lbm_rows, load,
                            nccl_a2a_ms, write)

if not REPORT:
    from cushreport import gbench, plots, perf, report
    from cushreport.summaries import BY_NAME, multi_gpu

@unittest.skipIf(REPORT, REPORT)
class Goals(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.runs = call()
        cls.figures = {e["name"]: e for e in multi_gpu.figures(cls.runs)}
        cls.text = multi_gpu.render(cls.runs)

    def goal(self, name):
        return self.figures[name]["goal"]

    def test_files_are_sorted_by_binary_and_gpu_count(self):
        got = multi_gpu.sort_runs(self.runs)
        self.assertEqual([r.source for r in got["cases"]], ["multi_gpu_x_fft.json", "multi_gpu_x_cases.json"])
        self.assertEqual({g: [r.source for r in rs] for g, rs in got["ops"].items()},
                         {2: ["multi_gpu_x_ops2.json"], 4: ["multi_gpu_x_ops4.json"]})
        self.assertEqual([r.source for r in got["halo"]], ["multi_gpu_x_halo.json"])
        self.assertIn("Left out: multi_gpu_x_virtual.json: measured on virtual GPUs", self.text)

    def test_every_name_has_its_gpu_count(self):
        for name in self.figures:
            self.assertRegex(name, r"^[a-z_]+\.[124]gpu\.", name)
        self.assertFalse([n for n in self.figures if ".1gpu." in n])  # one GPU is the reference, not a goal

    def test_advection_efficiency_and_hidden_exchange(self):
        overlap = self.figures["advection.4gpu.overlap.multi_cush.n1024.vs_4x_1gpu"]
        self.assertEqual((overlap["reference"], overlap["ratio"]), (25.0, 0.96))
        self.assertTrue(overlap["goal"].endswith(">= 0.95: met"), overlap["goal"])
        self.assertIn("case/advection/single/1gpu/1024", overlap["reference_is"])
        self.assertEqual(self.figures["advection.4gpu.multi_cush.n1024.vs_4x_1gpu"]["ratio"], 0.85)
        self.assertTrue(self.goal("advection.4gpu.multi_cush.n1024.vs_4x_1gpu").endswith("(bulk): no threshold"))
        self.assertIn("no threshold on 2 GPUs", self.goal("advection.2gpu.overlap.multi_cush.n1024.vs_2x_1gpu"))
        hidden = self.figures["advection.4gpu.overlap.multi_cush.n1024.exchange_hidden"]
        self.assertEqual((hidden["reference"], hidden["ratio"]), (5.0, round((100 / 3.4 - 100 / 3.84) / 5, 3)))
        self.assertIn("advection, 2 GPUs, n = 1024: no exchange/advection/2gpu/1024 row", self.text)

    def test_rbffd_scaling_exchange_and_hidden_share(self):
        four = self.figures["rbffd.4gpu.multi_cush.2e24.speedup"]
        self.assertEqual((four["value"], four["reference"], four["ratio"]), (17.5, 66.0, round(66 / 17.5, 3)))
        self.assertTrue(four["goal"].endswith(">= 3.7: met"), four["goal"])
        self.assertTrue(self.goal("rbffd.2gpu.multi_cush.2e24.speedup").endswith(">= 1.9: not met"))
        self.assertEqual(self.figures["rbffd.2gpu.weak.multi_cush.2e23.vs_1gpu"]["ratio"], round(16.8 / 17.3, 3))
        self.assertTrue(self.goal("rbffd.2gpu.weak.multi_cush.2e23.vs_1gpu").endswith(": met"))
        self.assertTrue(self.goal("rbffd.4gpu.weak.multi_cush.2e24.vs_1gpu").endswith("not met"))
        ex = self.figures["rbffd.4gpu.exchange.automatic.2e24.vs_raw"]
        self.assertEqual((ex["value"], ex["reference"], ex["ratio"]), (150.0, 145.0, round(1.5 / 1.45, 3)))
        self.assertTrue(ex["goal"].endswith(": met"), ex["goal"])
        self.assertTrue(self.goal("rbffd.4gpu.exchange.automatic.2e22.vs_raw").endswith("not met"))
        self.assertTrue(self.goal("rbffd.2gpu.exchange.automatic.2e24.vs_raw").endswith(": met"))  # 0.8 us more
        hidden = self.figures["rbffd.4gpu.overlap.multi_cush.2e24.exchange_hidden"]
        self.assertEqual((hidden["reference"], hidden["ratio"]), (6.0, round(5.5 / 6.0, 3)))
        self.assertTrue(hidden["goal"].endswith(">= 0.85: met"), hidden["goal"])
        self.assertIn("not held: the exchanges are 0.2% of the bulk step", self.goal("rbffd.2gpu.overlap.multi_cush.2e24.exchange_hidden"))
        self.assertIn("rbffd.4gpu.cush_vs_raw", self.figures)  # the F-test over 2^22 and 2^24
        captured = self.figures["rbffd.4gpu.graph.multi_cush.2e20.speedup"]
        self.assertEqual((captured["value"], captured["reference"], captured["ratio"]), (1.4, 4.2, 3.0))
        self.assertTrue(captured["goal"].endswith(">= 2.8: met"), captured["goal"])
        self.assertTrue(self.goal("rbffd.2gpu.graph.multi_cush.2e20.speedup").endswith("no threshold at this size and GPU count"))
        self.assertEqual(self.figures["rbffd.4gpu.graph.multi_cush.2e22.speedup"]["ratio"], round(16.6 / 4.0, 3))

    def test_lbm_met_and_missed_and_fluidx3d_by_gpu_count(self):
        fp32 = self.figures["lbm.4gpu.esoteric_fp32.multi_cush.m1024.vs_4x_1gpu"]
        self.assertEqual((fp32["value"], fp32["reference"], fp32["ratio"]), (98000, 100000, 0.98))
        self.assertTrue(fp32["goal"].endswith(">= 0.97: met"), fp32["goal"])
        self.assertTrue(self.goal("lbm.4gpu.esoteric_fp16s.multi_cush.m1024.vs_4x_1gpu").endswith(": not met"))
        self.assertEqual(self.figures["lbm.4gpu.esoteric_fp32.multi_cush.m1024.vs_fluidx3d"]["reference"], 57310)
        self.assertEqual(self.figures["lbm.2gpu.esoteric_fp32.multi_cush.m1024.vs_fluidx3d"]["reference"], 36711)
        self.assertEqual(self.figures["lbm.4gpu.esoteric_fp16s.multi_cush.m1024.vs_fluidx3d"]["reference"], 96056)
        self.assertIn("no published FluidX3D figure for 2 x H200 FP16S", self.text)
        self.assertEqual(self.figures["lbm.4gpu.weak_esoteric_fp32.multi_cush.m256.vs_4x_1gpu"]["ratio"], 0.97)

    def test_lbm_share_of_the_exchange_hidden(self):
        hidden = self.figures["lbm.4gpu.esoteric_fp32.multi_cush.m1024.exchange_hidden"]
        self.assertEqual((hidden["value"], hidden["reference"], hidden["ratio"]), (0.3, 0.4, 0.75))
        self.assertIn("exchange/lbm_esoteric_fp32/4gpu/1024", hidden["reference_is"])
        self.assertIn("lbm esoteric fp16s, 2 GPUs: no M with the overlapped, bulk and exchange-alone rows", self.text)
        self.assertFalse([n for n in self.figures if n.startswith("lbm.2gpu.") and n.endswith("exchange_hidden")])

    def test_karst_missed_at_four_gpus(self):
        four = self.figures["karst.4gpu.multi_cush.k4096.vs_4x_1gpu"]
        self.assertEqual((four["value"], four["reference"], four["ratio"]), (9500.0, 10000.0, 0.95))
        self.assertTrue(four["goal"].endswith(">= 0.97: not met"), four["goal"])
        self.assertEqual(self.figures["karst.2gpu.multi_cush.k4096.vs_2x_1gpu"]["ratio"], 0.98)

    def test_matmul_against_cublasxt(self):
        k20 = self.figures["matmul.4gpu.multi_cush.k20.vs_cublasxt"]
        self.assertEqual((k20["reference"], k20["ratio"]), (130.0, 1.3))
        self.assertIn("best tile measured (4096)", k20["reference_is"])
        self.assertTrue(k20["goal"].endswith(": met"))
        self.assertTrue(self.goal("matmul.4gpu.multi_cush.k40.vs_cublasxt").endswith(": not met"))
        f64 = self.figures["matmul.4gpu.f64.multi_cush.k20.vs_cublasxt"]
        self.assertEqual((f64["reference"], f64["ratio"]), (375.0, 1.25))
        self.assertIn("best tile measured (2048), FP64", f64["reference_is"])  # not the FP32 tiles
        self.assertTrue(f64["goal"].endswith(": met"))
        self.assertIn("matmul_f64, 4 GPUs, k = 40: no cush row", self.text)

    def test_fft_floor_on_four_gpus_and_cufftxt(self):
        natural = self.figures["fft.4gpu.natural.cush_vs_a2a_floor.2e29"]
        self.assertEqual((natural["reference"], natural["ratio"]), (round(3 * nccl_a2a_ms(1 << 30), 3), round(1 / 1.3, 3)))
        self.assertIn("N/4 complex floats", natural["reference_is"])
        self.assertIn("multi_gpu_x_ops4.json", natural["reference_is"])
        self.assertTrue(natural["goal"].endswith(": met"))
        self.assertTrue(self.goal("fft.4gpu.transposed_out.cush_vs_a2a_floor.2e27").endswith(": not met"))
        self.assertNotIn("fft.4gpu.natural.cush_vs_a2a_floor.2e30", self.figures)
        self.assertIn("fft strong, 4 GPUs: no all-to-all of N/4 complex floats per GPU in multi_gpu_x_ops4.json for 2^30", self.text)
        self.assertEqual(self.figures["fft.4gpu.natural.cush_vs_cufftxt.2e29"]["ratio"], 1.5)
        self.assertEqual(self.figures["fft.4gpu.transposed_out.cush_vs_cufftxt.2e29"]["ratio"], 2.25)
        self.assertIn("| N | natural, 4 GPUs | transposed_out, 4 GPUs |", self.text)
        self.assertIn("| 2^29 | 1.500 | 2.250 |", self.text)

    def test_f_tests_per_case_and_gpu_count(self):
        self.assertIn("no significant difference", self.figures["lbm.4gpu.esoteric_fp32.cush_vs_raw"]["f_test"])
        self.assertTrue(self.goal("lbm.4gpu.esoteric_fp32.cush_vs_raw").endswith(": met"))
        karst = self.figures["karst.4gpu.cush_vs_raw"]
        self.assertIn("different at 95%: cush slower", karst["f_test"])
        self.assertTrue(karst["goal"].endswith(": not met"))
        for name in ("advection.2gpu.cush_vs_raw", "advection.4gpu.overlap.cush_vs_raw", "karst.2gpu.cush_vs_raw",
                     "matmul.4gpu.cush_vs_raw", "fft.4gpu.transposed_out.cush_vs_raw"):
            self.assertIn(name, self.figures)
        self.assertIn("matmul_f64, 4 GPUs: too few sizes or runs for the F-test", self.text)

    def test_device_operations(self):
        a2a = self.figures["device_ops.4gpu.all_to_all.4KiB.cush_vs_raw_nccl"]
        self.assertEqual(a2a["ratio"], 0.9)
        self.assertTrue(a2a["goal"].endswith(": not met"))
        self.assertEqual(a2a["source"], "multi_gpu_x_ops4.json")
        self.assertTrue(self.goal("device_ops.2gpu.all_to_all.4KiB.cush_vs_raw_nccl").endswith(": met"))
        self.assertNotIn("goal", self.figures["device_ops.4gpu.copy.1GiB.cush_vs_raw_peer"])  # no goal for copy
        self.assertIn("| size | cush µs, 2 GPUs | vs NCCL | vs peer | cush µs, 4 GPUs | vs NCCL | vs peer |", self.text)
        self.assertIn("| 4KiB | 10.0 | 1.100 | 1.000 | 10.0 | 0.900 | 1.000 |", self.text)
        self.assertIn("- all_to_all, 4 GPUs: cush >= 1.0 x raw_nccl's speed: not met at 4KiB (0.900); "
                      "cush >= 0.95 x raw_peer's speed: met at every size measured (3)", self.text)
        self.assertIn("- all_to_all, 2 GPUs: cush >= 1.0 x raw_nccl's speed: met at every size measured (3)", self.text)
        self.assertIn("- broadcast, 4 GPUs: cush >= 1.0 x raw_nccl's speed: met at every size measured (3); "
                      "cush >= 0.95 x raw_peer's speed: met at every size measured (2) (no raw_peer row at 4KiB)", self.text)
        self.assertNotIn("- copy,", self.text)

    def test_all_reduce_against_nccl_in_both_configurations(self):
        # A column per reference some GPU count measured: the symmetric windows on 4 GPUs only.
        self.assertIn("| size | cush µs, 2 GPUs | vs NCCL | vs NCCL window | cush µs, 4 GPUs | vs NCCL | vs NCCL window |",
                      self.text)
        self.assertIn("| 4KiB | 10.0 | 1.050 | - | 10.0 | 1.050 | 0.800 |", self.text)
        window = self.figures["device_ops.4gpu.all_reduce.1GiB.cush_vs_raw_nccl_window"]
        self.assertEqual(window["ratio"], 0.8)
        self.assertIn("symmetric windows", window["reference_is"])
        self.assertNotIn("device_ops.2gpu.all_reduce.1GiB.cush_vs_raw_nccl_window", self.figures)
        # A goal against a reference is stated only where that reference was measured.
        self.assertIn("- all_to_all, 2 GPUs: cush >= 1.0 x raw_nccl's speed: met at every size measured (3); "
                      "cush >= 0.95 x raw_peer's speed: met at every size measured (3)\n", self.text)
        self.assertNotIn("raw_nccl_window's speed", self.text)

    def test_halo(self):
        self.assertEqual(self.figures["halo.2gpu.z.420.d1.cush_vs_raw"]["ratio"], 0.9)
        self.assertIn("- halo, axis x, GPUs 0 and 1 of 4 (multi_gpu_x_halo.json): cush >= 0.95 x the raw twin's speed: "
                      "met at every row (1)", self.text)
        self.assertIn("axis z, GPUs 0 and 1 of 4 (multi_gpu_x_halo.json): cush >= 0.95 x the raw twin's speed: "
                      "not met at 420 d1 (0.900)", self.text)

    def test_render_prints_every_goal_figure_once(self):
        # the device operations, the halo rows and cufftXt are in compact tables and goal lines instead
        for name in self.figures:
            if not name.startswith(("device_ops.", "halo.")) and ".cush_vs_cufftxt." not in name:
                self.assertEqual(self.text.count(f"`{name}`"), 1, name)

    def test_reached_from_the_command_line(self):
        self.assertIs(BY_NAME["multi_gpu"], multi_gpu)


@unittest.skipIf(REPORT, REPORT)
class Missing(unittest.TestCase):
    def test_a_missing_reference_is_stated(self):
        runs = [load(advection_rows(single=False) + [r for r in karst_rows() if "/single/" not in r["name"]], "cases.json")]
        names = {e["name"] for e in multi_gpu.figures(runs)}
        text = multi_gpu.render(runs)
        self.assertFalse([n for n in names if n.endswith("_1gpu")])
        self.assertIn("advection_overlap, 4 GPUs, n = 1024: no single-GPU reference (case/advection/single/1gpu/1024)", text)
        self.assertIn("karst, 4 GPUs, K = 4096: no single-GPU reference", text)
        self.assertIn("advection.4gpu.overlap.multi_cush.n1024.exchange_hidden", names)  # needs no single row

    def test_without_a_device_operations_file_no_floor(self):
        text = multi_gpu.render([load(fft_rows(), "fft.json")])
        self.assertIn("fft strong, 4 GPUs: no bench_device_ops file of 4 GPUs in the call for 2^27, 2^29, 2^30", text)
        self.assertNotIn("### GPU<->GPU operations", text)

    def test_no_files(self):
        self.assertEqual(multi_gpu.figures([]), [])
        self.assertIn("No files of a call on real GPUs.", multi_gpu.render([]))

    def test_a_file_cut_by_its_time_limit_says_so(self):
        cut = load(karst_rows(), "cut.json", dict(H200, cut=True))
        whole = load(karst_rows(), "whole.json", H200)
        self.assertIn("cut.json (4 x NVIDIA H200, 2026-12-01T00:00:00+00:00, cut by its time limit after its last whole row)",
                      multi_gpu.render([cut]))
        self.assertNotIn("cut by its time limit", multi_gpu.render([whole]))
        medians = load(karst_rows(), "medians.json", dict(H200, aggregates_only=True))
        self.assertIn("medians.json (4 x NVIDIA H200, 2026-12-01T00:00:00+00:00, medians only)", multi_gpu.render([medians]))
        self.assertNotIn("medians only", multi_gpu.render([whole]))

    def test_a_device_operations_file_without_a_gpu_count_is_left_out(self):
        runs = [load(device_op_rows(4, counter=False), "ops.json", {"date": "2026-12-01T00:00:00+00:00"})]
        self.assertEqual(multi_gpu.figures(runs), [])
        self.assertIn("Left out: ops.json: GPU count unknown", multi_gpu.render(runs))


@unittest.skipIf(REPORT, REPORT)
class Report(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.dir)

    def test_calls_group_files_by_their_call(self):
        paths = ["a/multi_gpu_2026-12-02_ops.json", "a/multi_gpu_2026-12-01_cases.json", "a/multi_gpu_2026-12-01_ops_4gpu.json",
                 "a/two_gpu_2026-11-24_fft.json", "a/multi_gpu_2026-12-03.json"]
        self.assertEqual(multi_gpu.calls(paths), {
            "multi_gpu_2026-12-01": ["a/multi_gpu_2026-12-01_cases.json", "a/multi_gpu_2026-12-01_ops_4gpu.json"],
            "multi_gpu_2026-12-02": ["a/multi_gpu_2026-12-02_ops.json"], "multi_gpu_2026-12-03": ["a/multi_gpu_2026-12-03.json"]})

    def test_a_later_call_replaces_the_figures_it_states_again(self):
        data = os.path.join(self.dir, report.DATA)  # the measurements live in the results' data/
        os.makedirs(data)
        write(data, "multi_gpu_2026-12-01_cases.json", karst_rows())
        later = [r for r in karst_rows() if "/4gpu/" not in r["name"]]
        write(data, "multi_gpu_2026-12-02_cases.json", later, dict(H200, date="2026-12-02T00:00:00+00:00"))
        with contextlib.redirect_stderr(io.StringIO()) as said:
            entries = report.newest_by_name(report.multi_gpu_figures(self.dir))
        self.assertIn("karst.2gpu.cush_vs_raw of multi_gpu_2026-12-02_cases.json replaces that of multi_gpu_2026-12-01_cases.json",
                      said.getvalue())
        by_name = {e["name"]: e for e in entries}
        self.assertEqual(len(by_name), len(entries))
        self.assertEqual(by_name["karst.2gpu.multi_cush.k4096.vs_2x_1gpu"]["source"], "multi_gpu_2026-12-02_cases.json")
        self.assertEqual(by_name["karst.4gpu.multi_cush.k4096.vs_4x_1gpu"]["source"], "multi_gpu_2026-12-01_cases.json")

    def test_performance_md_shows_the_call_with_gpu_count_charts(self):
        write(self.dir, "multi_gpu_2026-12-01_cases.json", advection_rows() + lbm_rows())
        write(self.dir, "multi_gpu_2026-12-01_ops_4gpu.json", device_op_rows(4))
        files = list(multi_gpu.calls(glob.glob(os.path.join(self.dir, "multi_gpu_*.json"))).values())[0]
        perf.run(self.dir, files, None)
        with open(os.path.join(self.dir, "performance_advection.md")) as f:  # advection's page
            text = f.read()
        self.assertIn("## Case advection_overlap", text)
        self.assertIn("### 4 GPUs", text)
        self.assertIn("![advection_overlap_gpus.png](advection_overlap_gpus.png)", text)
        self.assertTrue(os.path.exists(os.path.join(self.dir, "lbm_weak_esoteric_fp32_gpus.png")))
        samples = perf.case_samples(gbench.load(files[0]).rows)
        self.assertEqual(plots.gpu_count_size("advection", samples), 1024)       # 1, 2 and 4 GPUs
        self.assertIsNone(plots.gpu_count_size("matmul", perf.case_samples([])))  # nothing measured


@unittest.skipIf(REPORT, REPORT)
class Committed(unittest.TestCase):
    """docs/results/multi_gpu.md quotes `summarize multi_gpu` of each committed call, or says that
    none is committed yet."""

    def test_the_page_prints_each_call_or_says_there_is_none(self):
        with open(os.path.join(RESULTS, "multi_gpu.md")) as f:
            page = f.read()
        found = multi_gpu.calls(glob.glob(os.path.join(DATA, "multi_gpu_*.json")))
        if not found:
            self.assertIn("No multi-GPU run is committed yet", page)
        for paths in found.values():
            self.assertIn(multi_gpu.render([gbench.load(p) for p in paths]), page)
            self.assertNotIn("No multi-GPU run is committed yet", page)


if __name__ == "__main__":
    unittest.main()
