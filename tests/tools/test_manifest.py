"""The manifest of the measurements (docs/results/data/README.md, tools/cushreport/manifest.py):
it lists every file in data/ and says which pages quote it, and the committed one is what the
committed files render (a file added without running the report shows here)."""
import os
import unittest

from needs import DATA, ROOT

from cushreport import manifest


class Manifest(unittest.TestCase):
    def test_the_committed_manifest_is_current(self):
        with open(os.path.join(DATA, "README.md"), encoding="utf-8") as f:
            page = f.read()
        self.assertEqual(page, manifest.render(DATA, ROOT),
                         "docs/results/data/README.md is stale: run scripts/report.sh --update-docs")

    def test_every_file_is_listed_with_the_pages_that_quote_it(self):
        page = manifest.render(DATA, ROOT)
        for name in os.listdir(DATA):
            if name != "README.md":
                self.assertIn(f"| `{name}` |", page)
        # A file the LBM page quotes names that page.
        row = next(line for line in page.splitlines() if line.startswith("| `lbm_goal_2026-11-24.json` |"))
        self.assertIn("[lbm.md](../lbm.md)", row)

    def test_a_run_of_aggregates_only_counts_its_rows_medians(self):
        # --benchmark_report_aggregates_only leaves no iteration runs: the rows are counted by median.
        row = next(line for line in manifest.render(DATA, ROOT).splitlines()
                   if line.startswith("| `wave_2026-11-28_2xh200.json` |"))
        self.assertIn("Google Benchmark, the medians of 13 rows: case/wave, case/wave_overlap, roof/copy, temporal/wave",
                      row)
        row = next(line for line in manifest.render(DATA, ROOT).splitlines()
                   if line.startswith("| `lbm_goal_2026-11-24.json` |"))
        self.assertRegex(row, r"Google Benchmark, [0-9]+ runs: ")


if __name__ == "__main__":
    unittest.main()
