"""The results' headline table (tools/cushreport/headline.py): every row names a figure the
committed summary.json holds (a renamed figure must not drop out of the entry page unnoticed), the
committed headline.md is what the committed summary.json renders, and the rendering of synthetic
figures (a ratio per row, a missing figure said to be missing)."""
import json
import os
import unittest

from needs import RESULTS

from cushreport import headline


def committed_figures():
    with open(os.path.join(RESULTS, "summary.json"), encoding="utf-8") as f:
        return json.load(f)["figures"]


class Headline(unittest.TestCase):
    def test_every_row_is_in_the_committed_summary(self):
        self.assertEqual(headline.missing(committed_figures()), [])

    def test_the_committed_page_is_the_committed_summary_rendered(self):
        with open(os.path.join(RESULTS, "headline.md"), encoding="utf-8") as f:
            page = f.read()
        self.assertEqual(page, headline.render(committed_figures(), RESULTS),
                         "docs/results/headline.md is stale: run scripts/report.sh --update-docs")

    def test_rows_carry_value_reference_and_ratio(self):
        name = headline.ROWS[0][1]
        figures = [{"name": name, "value": 113.773, "unit": "ms", "reference": 152.012, "reference_is": "cuBLASXt",
                    "ratio": 1.336, "device": "4 x GPU A", "date": "2026-01-02T00:00:00", "source": "run.json"}]
        page = headline.render(figures)
        row = next(line for line in page.splitlines() if line.startswith(f"| {headline.ROWS[0][0]} |"))
        self.assertIn("| 113.8 ms | 152.0 ms (cuBLASXt) | 1.336 | 4 x GPU A | `run.json`, 2026-01-02 |", row)
        # Every other row is said to be missing, not left out.
        self.assertEqual(page.count("not in summary.json"), len(headline.ROWS) - 1)
        self.assertEqual(len(headline.missing(figures)), len(headline.ROWS) + len(headline.COMPLEXITY) - 1)

    def test_a_speed_ratio_alone_is_shown_as_the_ratio(self):
        name = "scale.4gpu.cush_vs_raw"
        figures = [{"name": name, "value": 0.8261, "unit": "speed (raw time / cush time)", "reference": None,
                    "reference_is": None, "ratio": None, "device": "4 x GPU A", "date": "2026-01-02", "source": "s.json"}]
        row = next(line for line in headline.render(figures).splitlines() if "F-test's fit" in line)
        self.assertIn("| 0.826 |", row)


if __name__ == "__main__":
    unittest.main()


class ScalingPlots(unittest.TestCase):
    def test_the_run_on_the_most_gpus_wins_over_a_newer_one_on_fewer(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "data"))
            for run, gpus in (("multi_gpu_2026-01-01_lbm", 4), ("multi_gpu_2026-01-02_lbm", 2), ("multi_gpu_2026-01-03_lbm", None)):
                open(os.path.join(d, f"lbm_esoteric_fp32_{run}_scaling.png"), "w").close()
                if gpus is not None:  # the newest has no data file: counted as 0 GPUs
                    with open(os.path.join(d, "data", run + ".json"), "w") as f:
                        json.dump({"context": {"gpu_count": str(gpus)}, "benchmarks": []}, f)
            page = headline.render([], d)
            self.assertIn("![lbm_esoteric_fp32_multi_gpu_2026-01-01_lbm_scaling.png]", page)
            self.assertNotIn("2026-01-02_lbm_scaling", page)
