"""cushreport.compare: before/after tables from two sides' benchmark JSON."""
import json
import os
import tempfile
import unittest

import needs

if not needs.NUMERIC:
    from cushreport import compare, gbench


def write(d, name, times_ms):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        json.dump({"context": {}, "benchmarks": [
            {"name": bench, "run_type": "iteration", "real_time": t, "time_unit": "ms"}
            for bench, ts in times_ms.items() for t in ts]}, f)
    return gbench.load(path)


@unittest.skipIf(needs.NUMERIC, needs.NUMERIC)
class Compare(unittest.TestCase):
    def test_ratios_medians_and_the_geometric_mean(self):
        with tempfile.TemporaryDirectory() as d:
            before = [write(d, "b1.json", {"x/1": [2.0, 2.0], "y/2": [1.0]}),
                      write(d, "b2.json", {"x/1": [2.0], "gone/3": [5.0]})]
            after = [write(d, "a.json", {"x/1": [1.0, 1.0, 1.0], "y/2": [4.0], "new/4": [1.0]})]
            table = compare.rows(before, after)
            self.assertEqual([r[0] for r in table], ["x/1", "y/2"])
            name, tb, ta, ratio, lo, hi = table[0]
            self.assertEqual((tb, ta), (2.0, 1.0))
            self.assertAlmostEqual(ratio, 2.0)           # twice as fast after
            self.assertAlmostEqual(lo, 2.0)              # no spread: a point interval
            self.assertAlmostEqual(table[1][3], 0.25)
            text = compare.render(before, after)
            self.assertIn("Geometric mean of 2 ratios: 0.707", text)  # sqrt(2 * 0.25)
            self.assertIn("gone/3, new/4", text)


if __name__ == "__main__":
    unittest.main()
