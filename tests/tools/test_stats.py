"""cushreport.stats: quantiles against printed statistical tables and SciPy, the fits, the eq. 2.2
F-test and the ratio intervals on small data checked by hand."""
import math
import unittest

from needs import NUMERIC

if not NUMERIC:
    from scipy import stats as scipy_stats

    from cushreport import stats


@unittest.skipIf(NUMERIC, NUMERIC)
class Quantiles(unittest.TestCase):
    def test_f_quantiles_match_printed_tables(self):
        # Upper 5% points of F, as printed to two decimals in standard tables.
        for d1, d2, table in [(1, 10, 4.96), (2, 10, 4.10), (3, 20, 3.10), (5, 30, 2.53), (3, 60, 2.76), (1, 4, 7.71)]:
            self.assertAlmostEqual(stats.f_critical(0.95, d1, d2), table, delta=0.005, msg=f"F(0.95; {d1}, {d2})")

    def test_t_quantiles_match_printed_tables(self):
        # Two-sided 95% points of t (the 0.975 quantile), printed to three decimals.
        for df, table in [(1, 12.706), (2, 4.303), (4, 2.776), (10, 2.228), (30, 2.042)]:
            self.assertAlmostEqual(stats.t_critical(0.95, df), table, delta=0.0005, msg=f"t(0.975; {df})")

    def test_quantiles_are_scipys(self):
        self.assertEqual(stats.f_critical(0.95, 3, 24), scipy_stats.f.ppf(0.95, 3, 24))
        self.assertEqual(stats.t_critical(0.90, 7.5), scipy_stats.t.ppf(0.95, 7.5))

    def test_f_and_t_agree(self):
        # F(1, n) is t(n) squared.
        for n in (4, 9, 30):
            self.assertAlmostEqual(stats.f_critical(0.95, 1, n), stats.t_critical(0.95, n) ** 2, places=9)


@unittest.skipIf(NUMERIC, NUMERIC)
class Fits(unittest.TestCase):
    def test_polyfit_recovers_an_exact_quadratic(self):
        xs = [0.5, 1, 2, 3, 5, 8]
        ys = [2 - 3 * x + 0.5 * x * x for x in xs]
        predict, sse = stats.polyfit_sse(xs, ys, 2)
        self.assertLess(sse, 1e-18)
        self.assertAlmostEqual(predict(4), 2 - 12 + 8, places=9)
        _, sse_line = stats.polyfit_sse(xs, ys, 1)
        self.assertGreater(sse_line, 1.0)  # a line cannot follow the quadratic

    def test_polyfit_needs_enough_distinct_sizes(self):
        with self.assertRaises(ValueError):
            stats.polyfit_sse([1, 1, 2, 2], [1, 2, 3, 4], 2)

    def test_f_test_by_hand(self):
        # Constant model (degree 0). a = 1, 2, 3 (mean 2, SSE 2); b = 4, 5, 6 (mean 5, SSE 2).
        # Combined: mean 3.5, SSE 17.5, DF 5; separate: SSE 4, DF 4.
        # F = ((17.5 - 4) / 1) / (4 / 4) = 13.5; p = P(F(1, 4) > 13.5) = P(|T_4| > 3.674) = 0.0213
        r = stats.extra_sum_of_squares_f([0, 1, 2], [1, 2, 3], [0, 1, 2], [4, 5, 6], degree=0)
        self.assertAlmostEqual(r["F"], 13.5, places=12)
        self.assertEqual((r["df1"], r["df2"]), (1, 4))
        self.assertAlmostEqual(r["p"], 0.02131, places=4)
        self.assertAlmostEqual(r["p"], 2 * scipy_stats.t.sf(math.sqrt(13.5), 4), places=12)
        self.assertAlmostEqual(r["F_critical"], 7.71, delta=0.005)  # the table's F(0.95; 1, 4)
        self.assertTrue(r["differ"])

    def test_f_test_line_by_hand(self):
        # Degree 1. a = (0, 0), (1, 1), (2, 2), (3, 3): exact line, SSE 0; b = (0, 1), (1, 1), (2, 3), (3, 3):
        # fit 0.8 + 0.8 x, residuals 0.2, -0.6, 0.6, -0.2, SSE 0.8. Combined, the 8 points fit 0.4 + 0.9 x,
        # residuals -0.4, -0.3, -0.2, -0.1 and 0.6, -0.3, 0.8, -0.1: SSE 1.4.
        # F = ((1.4 - 0.8) / 2) / (0.8 / 4) = 1.5 against F(0.95; 2, 4) = 6.94 (tables): no difference.
        r = stats.extra_sum_of_squares_f([0, 1, 2, 3], [0, 1, 2, 3], [0, 1, 2, 3], [1, 1, 3, 3], degree=1)
        self.assertAlmostEqual(r["F"], 1.5, places=9)
        self.assertEqual((r["df1"], r["df2"]), (2, 4))
        self.assertAlmostEqual(r["F_critical"], 6.94, delta=0.005)
        self.assertAlmostEqual(r["p"], scipy_stats.f.sf(1.5, 2, 4), places=12)
        self.assertFalse(r["differ"])

    def test_f_test_same_curve_does_not_differ(self):
        xs = [1, 2, 3, 4, 5, 6]
        noise_a = [0.01, -0.02, 0.015, -0.01, 0.0, 0.005]
        noise_b = [-0.01, 0.02, -0.005, 0.01, -0.015, 0.0]
        ya = [1 + 0.5 * x + n for x, n in zip(xs, noise_a)]
        yb = [1 + 0.5 * x + n for x, n in zip(xs, noise_b)]
        r = stats.extra_sum_of_squares_f(xs, ya, xs, yb, degree=1)
        self.assertFalse(r["differ"])
        self.assertGreater(r["p"], 0.05)
        shifted = [y + 0.2 for y in yb]
        self.assertTrue(stats.extra_sum_of_squares_f(xs, ya, xs, shifted, degree=1)["differ"])


@unittest.skipIf(NUMERIC, NUMERIC)
class Ratios(unittest.TestCase):
    def test_median(self):
        self.assertEqual(stats.median([3, 1, 2]), 2)
        self.assertEqual(stats.median([4, 1, 3, 2]), 2.5)
        with self.assertRaises(ValueError):
            stats.median([])

    def test_ratio_ci_of_identical_spreads_is_exact_and_brackets(self):
        ratio, lo, hi = stats.ratio_ci([2.0, 2.0, 2.0], [1.0, 1.0, 1.0])
        self.assertAlmostEqual(ratio, 2.0)
        self.assertAlmostEqual(lo, 2.0)
        self.assertAlmostEqual(hi, 2.0)
        ratio, lo, hi = stats.ratio_ci([2.0, 2.2, 1.8, 2.1], [1.0, 1.05, 0.95, 1.0])
        self.assertLess(lo, ratio)
        self.assertGreater(hi, ratio)
        self.assertLess(lo, 2.0)
        self.assertGreater(hi, 2.0)

    def test_ratio_ci_hand_computed(self):
        # Logs: a = ln 2 + (-d, 0, d), b = (-d, 0, d) with d = 0.1: difference ln 2, variances d^2 each,
        # se = sqrt(2 d^2 / 3), Welch df = 4, half width = t(0.975; 4) se, t(0.975; 4) = 2.776 (tables).
        d = 0.1
        a = [math.exp(math.log(2) + e) for e in (-d, 0, d)]
        b = [math.exp(e) for e in (-d, 0, d)]
        ratio, lo, hi = stats.ratio_ci(a, b)
        half = 2.7764451 * math.sqrt(2 * d * d / 3)
        self.assertAlmostEqual(ratio, 2.0, places=12)
        self.assertAlmostEqual(lo, 2.0 * math.exp(-half), places=5)
        self.assertAlmostEqual(hi, 2.0 * math.exp(half), places=5)

    def test_ratio_ci_with_one_sample_has_no_interval(self):
        ratio, lo, hi = stats.ratio_ci([3.0], [1.5, 1.5])
        self.assertAlmostEqual(ratio, 2.0)
        self.assertTrue(math.isnan(lo) and math.isnan(hi))


if __name__ == "__main__":
    unittest.main()
