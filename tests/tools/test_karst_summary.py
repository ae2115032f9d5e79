"""cushreport.summaries.karst on synthetic benchmark JSON shaped like bench_karst.cpp's rows
(repetitions with their aggregates, manual time, the runs/s counter): the page's tables and the
summary.json figures of the issue's goals, rows on virtual GPUs left out of the figures."""
import json
import os
import random
import tempfile
import unittest

from needs import REPORT

if not REPORT:
    from cushreport import gbench, report
    from cushreport.summaries import BY_NAME, karst

CONTEXT = {"date": "2026-01-01T00:00:00+00:00", "gpu_count": "1", "gpus": "GPU A"}
KS = (1, 16, 64, 512)
RNG = random.Random(5)


def rows(name, k, ms, reps=3):
    """`reps` repetitions of one row with 0.5% noise and its runs/s, plus a mean aggregate."""
    out = []
    for _ in range(reps):
        t = ms * RNG.uniform(0.995, 1.005)
        out.append({"name": f"{name}/{k}/min_time:0.050/manual_time", "run_type": "iteration", "real_time": t,
                    "time_unit": "ms", "runs/s": k / (t / 1e3)})
    out.append({"name": f"{name}/{k}/min_time:0.050/manual_time_mean", "run_type": "aggregate",
                "aggregate_name": "mean", "real_time": 1e9, "time_unit": "ms", "runs/s": 1.0})
    return out


def synthetic():
    """One GPU: every variant at 1 ms per member + 50 ms (cush = raw); 2 virtual GPUs: cush 30%
    slower; the streaming path twice as slow; the CPU 4 ms per member; the goal run 6.2 s."""
    out = []
    for k in KS:
        for v in ("single", "multi_cuda", "multi_cush"):
            out += rows(f"case/karst/{v}/1gpu", k, k + 50)
        out += rows("case/karst/multi_cuda/2vgpu", k, k + 50) + rows("case/karst/multi_cush/2vgpu", k, 1.3 * (k + 50))
        out += rows("cpu/karst/16threads", k, 4 * k)
    for k in (16, 512):
        out += rows("case/karst_streaming/single/1gpu", k, 2 * (k + 50))
    for v in ("single", "multi_cuda", "multi_cush"):
        out += rows(f"case/karst_goal/{v}/1gpu", 512, 6200)
    return out


@unittest.skipIf(REPORT, REPORT)
class Karst(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "karst.json")
            with open(path, "w") as f:
                json.dump({"context": CONTEXT, "benchmarks": synthetic()}, f)
            cls.measured = gbench.load(path)
        cls.text = karst.render([cls.measured])

    def section(self, title):
        return self.text.split(f"\n## {title}", 1)[1].split("\n## ", 1)[0]

    def test_registered(self):
        self.assertIs(BY_NAME["karst"], karst)
        self.assertIn(("karst.md", "perf_cases_karst_1gpu.json", karst.figures), report.PAGE_RUNS)

    def test_runs_per_second_table(self):
        table = self.section("Forward runs per second")
        self.assertIn("| K | single, 1 GPU | raw, 1 GPU | cush, 1 GPU | raw, 2 virtual GPUs | cush, 2 virtual GPUs "
                      "| CPU, 16 threads |", table)
        self.assertEqual(len([line for line in table.splitlines() if line.startswith("| ")]), 1 + len(KS))
        self.assertAlmostEqual(self.cells("Forward runs per second", 512)[0], 512 / 0.562, delta=10)  # single

    def cells(self, title, k):
        """The numbers of a table's row for K in the section `title`."""
        row = next(line for line in self.section(title).splitlines() if line.startswith(f"| {k} |"))
        return [float(c.replace(",", "")) for c in row.strip("|").split("|")[1:]]

    def test_ratios(self):
        single, cpu, ratio = self.cells("GPU (single, 1 GPU) against the CPU (16 threads)", 512)
        self.assertAlmostEqual(cpu, 512 / 2.048, delta=2)
        self.assertAlmostEqual(ratio, 2048 / 562, delta=0.03)
        for k in (16, 512):  # only where both paths ran
            self.assertAlmostEqual(self.cells("single, resident against streaming", k)[2], 2.0, delta=0.03)
        self.assertNotIn("| 64 |", self.section("single, resident against streaming"))

    def test_goal_run_and_f_tests(self):
        self.assertRegex(self.section("Goal run"), r"\| cush \| 6\.\d{3} \| met \|")
        self.assertIn("no significant difference at 95%", self.section("cush against raw CUDA, 1 GPU"))
        self.assertIn("different at 95%: cush slower", self.section("cush against raw CUDA, 2 virtual GPUs"))

    def test_figures(self):
        entries = {e["name"]: e for e in karst.figures(self.measured)}
        self.assertEqual(set(entries), {"karst.1gpu.goal_run.single", "karst.1gpu.goal_run.multi_cuda",
                                        "karst.1gpu.goal_run.multi_cush", "karst.1gpu.single_vs_cpu.k512",
                                        "karst.1gpu.cush_vs_raw.k512"})  # nothing of the virtual GPUs
        self.assertAlmostEqual(entries["karst.1gpu.goal_run.multi_cush"]["value"], 6.2, delta=0.05)
        self.assertEqual(entries["karst.1gpu.goal_run.single"]["unit"], "s")
        vs_cpu = entries["karst.1gpu.single_vs_cpu.k512"]
        self.assertAlmostEqual(vs_cpu["ratio"], 2048 / 562, delta=0.05)
        self.assertAlmostEqual(vs_cpu["reference"], 512 / 2.048, delta=2)
        f = entries["karst.1gpu.cush_vs_raw.k512"]
        self.assertEqual(f["f_test"], "no significant difference at 95%")
        self.assertAlmostEqual(f["ratio"], 1.0, delta=0.02)
        for e in entries.values():
            self.assertEqual((e["device"], e["date"], e["source"]), ("1 x GPU A", CONTEXT["date"], "karst.json"))
            self.assertIn("goal", e)

    def test_no_figures_without_rows(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "empty.json")
            with open(path, "w") as f:
                json.dump({"context": CONTEXT, "benchmarks": rows("case/other/single/1gpu", 4, 1.0)}, f)
            self.assertEqual(karst.figures(gbench.load(path)), [])


if __name__ == "__main__":
    unittest.main()
