"""cushreport.summaries.temporal on synthetic rows of the wave case's DiamondTorre variant
(`temporal/wave_diamond/<order>/<T>/r<R>/<schedule>/1gpu/<n>`, cases/wave/bench_wave.cpp): its table
against the same run's R1w, and the summary.json figure of the best row."""
import unittest

from needs import REPORT

if not REPORT:
    from cushreport.summaries import temporal
    from multi_gpu_rows import load

CONTEXT = {"date": "2026-01-01T00:00:00+00:00", "gpu_count": "1", "gpus": "GPU A"}


def row(name, **counters):
    return {"name": name, "run_type": "iteration", "real_time": 1.0, "time_unit": "ms", **counters}


@unittest.skipIf(REPORT, REPORT)
class DiamondRows(unittest.TestCase):
    def load(self, benchmarks):
        return load(benchmarks, "temporal_x.json", CONTEXT)

    def run_of(self):
        rows = [row("roof/copy/1gpu/2048/min_time:0.100/manual_time", **{"GB/s": 4800.0})]
        for r, g in ((1, 90.0), (2, 110.0), (3, 150.0)):
            rows.append(row(f"temporal/wave_diamond/2/16/r{r}/in_step/1gpu/1024/min_time:0.100/manual_time", **{"Gpts/s": g}))
            rows.append(row(f"temporal/wave_diamond/2/16/r{r}/step_ahead/1gpu/1024/min_time:0.100/manual_time", **{"Gpts/s": g + 5}))
            rows.append(row(f"temporal/wave_diamond/2/16/r{r}/prefetched/1gpu/1024/min_time:0.100/manual_time", **{"Gpts/s": g + 2}))
        rows.append(row("temporal/wave_diamond/2/8/r3/in_step/1gpu/512/min_time:0.100/manual_time", **{"Gpts/s": 120.0}))
        rows.append(row("temporal/wave_diamonds/2/8/r3/in_step/1gpu/512/min_time:0.100/manual_time", **{"Gpts/s": 999.0}))
        return self.load(rows)

    def test_the_table_has_every_row_against_r1w(self):
        page = temporal.render([self.run_of()])
        self.assertIn("## Wave, order 2, DiamondTorre variant, one GPU, 1024^3", page)
        self.assertIn("| 3 | step ahead | 16 | 155.0 | 0.775 |", page)  # R1w = 4800 / 24 = 200
        self.assertIn("| 1 | in step | 16 | 90.0 | 0.450 |", page)
        self.assertIn("| 2 | prefetched | 16 | 112.0 | 0.560 |", page)
        self.assertIn("## Wave, order 2, DiamondTorre variant, one GPU, 512^3", page)
        self.assertNotIn("999", page)  # not a row of the variant

    def test_the_figure_is_the_best_row(self):
        entries = {e["name"]: e for e in temporal.figures(self.run_of())}
        e = entries["wave.order2.1gpu.diamond.rate_n1024"]
        self.assertEqual((e["value"], e["reference"], e["ratio"]), (155.0, 200.0, 0.775))
        self.assertEqual((e["radius"], e["reads"], e["steps_per_sweep"]), (3, "step_ahead", 16))
        self.assertEqual(entries["wave.order2.1gpu.diamond.rate_n512"]["value"], 120.0)

    def test_no_rows_no_figure(self):
        run = self.load([row("roof/copy/1gpu/2048/min_time:0.100/manual_time", **{"GB/s": 4800.0})])
        self.assertFalse([e for e in temporal.figures(run) if "diamond" in e["name"]])


if __name__ == "__main__":
    unittest.main()
