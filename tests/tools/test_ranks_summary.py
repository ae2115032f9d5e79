"""cushreport.summaries.ranks on synthetic JSON shaped like bench_ranks' and bench_cases' rows: the
ratio against one process pairs the right rows, the goal verdicts, the F-test over sizes, and the
page's table; files without such rows say so."""
import json
import os
import tempfile
import unittest

from needs import REPORT

if not REPORT:
    from cushreport import gbench
    from cushreport.summaries import BY_NAME, ranks

CONTEXT = {"date": "2026-01-01T00:00:00+00:00", "gpu_count": "4", "gpus": "GPU A, GPU A, GPU A, GPU A"}


def rows(name, ms, suffix, reps=5, counters=None):
    """`reps` repetitions around `ms` (the middle one exactly `ms`); `counters` (name -> value at
    `ms`) scale with the inverse of each repetition's time, as a rate does."""
    factors = (0.99, 0.995, 1.0, 1.005, 1.01)[:reps]
    return [{"name": f"{name}/{suffix}", "run_type": "iteration", "real_time": ms * f, "time_unit": "ms",
             **{c: v / f for c, v in (counters or {}).items()}}
            for f in factors]


@unittest.skipIf(REPORT, REPORT)
class Ranks(unittest.TestCase):
    def load(self, benchmarks, tag):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, f"ranks_x_{tag}.json")
            with open(path, "w") as f:
                json.dump({"context": CONTEXT, "benchmarks": benchmarks}, f)
            return gbench.load(path)

    def call(self):
        across = []
        one = []
        for n, base in ((256, 1.0), (512, 8.0), (1024, 64.0)):
            across += rows(f"case/advection_ranks/rank_cush/4proc/{n}", base * 1.02, "iterations:10/repeats:5/manual_time")
            across += rows(f"case/advection_ranks/rank_cuda/4proc/{n}", base * 1.01, "iterations:10/repeats:5/manual_time")
            one += rows(f"case/advection/multi_cush/4gpu/{n}", base, "min_time:0.200/manual_time")
            one += rows(f"case/advection/multi_cuda/4gpu/{n}", base, "min_time:0.200/manual_time")
        across += rows("case/lbm_ranks_esoteric_fp32/rank_cush/4proc/1024", 110.0, "iterations:10/manual_time")
        one += rows("case/lbm_esoteric_fp32/multi_cush/4gpu/1024", 100.0, "min_time:0.200/manual_time")
        one += rows("case/lbm_esoteric_fp32/multi_cush/2gpu/1024", 50.0, "min_time:0.200/manual_time")  # no partner
        return [self.load(across, "ranks"), self.load(one, "cases")]

    def test_ratios_pair_rows_of_the_same_family_size_and_gpu_count(self):
        entries = {e["name"]: e for e in ranks.figures(self.call())}
        adv = entries["advection.4proc.n1024.rank_cush_vs_1proc"]
        self.assertAlmostEqual(adv["value"], round(1 / 1.02, 4))
        self.assertIn("met", adv["goal"])
        self.assertNotIn("not met", adv["goal"])
        lbm = entries["lbm.4proc.esoteric_fp32.n1024.rank_cush_vs_1proc"]
        self.assertAlmostEqual(lbm["value"], round(100 / 110, 4))
        self.assertIn("not met", lbm["goal"])
        self.assertNotIn("goal", entries["advection.4proc.n1024.rank_cuda_vs_1proc"])
        self.assertFalse(any("2proc" in k or "2gpu" in k for k in entries))

    def test_the_f_test_runs_over_the_sizes_and_says_which_is_faster(self):
        entries = {e["name"]: e for e in ranks.figures(self.call())}
        f = entries["advection.4proc.rank_cush_vs_rank_cuda"]
        self.assertAlmostEqual(f["value"], 1.01 / 1.02, places=3)
        self.assertIn("cush slower", f["f_test"])
        self.assertIn("not met", f["goal"])
        # One size only (lbm): no F-test.
        self.assertNotIn("lbm.4proc.esoteric_fp32.rank_cush_vs_rank_cuda", entries)

    def test_the_nccl_variant_is_held_against_one_process_without_a_goal_and_gets_columns(self):
        runs = self.call()
        nccl = self.load(rows("case/advection_ranks/rank_cush_nccl/4proc/1024", 64.0 * 1.07, "iterations:10/manual_time"), "nccl")
        entries = {e["name"]: e for e in ranks.figures(runs + [nccl])}
        e = entries["advection.4proc.n1024.rank_cush_nccl_vs_1proc"]
        self.assertAlmostEqual(e["value"], round(1 / 1.07, 4))
        self.assertNotIn("goal", e)
        # The F-test stays cush (automatic) against the raw twin.
        self.assertIn("advection.4proc.rank_cush_vs_rank_cuda", entries)
        text = ranks.render(runs + [nccl])
        self.assertIn("| n | cush, p processes | cush, one process | rate / one process | cush over NCCL, p processes |", text)
        self.assertIn("| 1024 | 65.280 | 64.000 | 0.980 | 68.480 | 0.935 | 64.640 | 64.000 | 0.990 |", text)
        self.assertIn("| 256 | 1.020 | 1.000 | 0.980 | - | - | 1.010 | 1.000 | 0.990 |", text)
        # Families without NCCL rows keep the table of seven columns.
        self.assertIn("| 1024 | 110.000 | 100.000 | 0.909 | - | - | - |", text)

    def test_rows_timing_different_step_counts_are_held_against_each_other_by_their_rates(self):
        # bench_ranks times 10 steps, bench_cases 12: equal rates, times 10 and 12 ms. A ratio of
        # times would say 1.2; the rates say 1.0. Where only one side has the counter, times.
        across = rows("case/advection_ranks/rank_cush/4proc/1024", 10.0, "iterations:10/manual_time", counters={"Gpts/s": 1073.7})
        across += rows("case/advection_ranks/rank_cuda/4proc/1024", 10.0, "iterations:10/manual_time")
        one = rows("case/advection/multi_cush/4gpu/1024", 12.0, "min_time:0.200/manual_time", counters={"Gpts/s": 1073.7 * 0.98})
        one += rows("case/advection/multi_cuda/4gpu/1024", 12.0, "min_time:0.200/manual_time", counters={"MLUPS": 5.0})
        runs = [self.load(across, "ranks"), self.load(one, "cases")]
        entries = {e["name"]: e for e in ranks.figures(runs)}
        cush = entries["advection.4proc.n1024.rank_cush_vs_1proc"]
        self.assertAlmostEqual(cush["value"], round(1 / 0.98, 4))
        self.assertIn("Gpts/s", cush["reference_is"])
        self.assertAlmostEqual(entries["advection.4proc.n1024.rank_cuda_vs_1proc"]["value"], 1.2)
        text = ranks.render(runs)
        self.assertIn("## advection, 4 processes (mixed units: each pair in its common rate, else ms)", text)
        self.assertIn("| 1024 | 1073.700 | 1052.226 | 1.020 | 10.000 | 12.000 | 1.200 |", text)

    def test_the_page_has_a_table_per_family_and_says_when_there_is_nothing(self):
        text = ranks.render(self.call())
        self.assertIn("## advection, 4 processes (ms)", text)
        self.assertIn("## lbm esoteric_fp32, 4 processes (ms)", text)
        self.assertIn("| 1024 | 65.280 | 64.000 | 0.980 | 64.640 | 64.000 | 0.990 |", text)
        self.assertIs(BY_NAME["ranks"], ranks)
        self.assertIn("No case/<case>_ranks rows", ranks.render([self.load(rows("case/advection/multi_cush/4gpu/256", 1.0, "x"), "c")]))


if __name__ == "__main__":
    unittest.main()
