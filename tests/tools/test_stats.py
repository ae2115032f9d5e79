"""Unit tests of tools/stats.py against known values (statistical tables, closed forms)."""
import math
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
import stats  # noqa: E402


class SpecialFunctions(unittest.TestCase):
    def test_incomplete_beta_closed_forms(self):
        # I_x(2, 3) = sum_{j=2}^{4} C(4, j) x^j (1 - x)^(4 - j): 0.5248 at x = 0.4
        self.assertAlmostEqual(stats.betainc(2, 3, 0.4), 0.5248, places=12)
        # I_x(1, 1) = x; I_x(a, 1) = x^a; I_x(1, b) = 1 - (1 - x)^b
        self.assertAlmostEqual(stats.betainc(1, 1, 0.37), 0.37, places=12)
        self.assertAlmostEqual(stats.betainc(3.5, 1, 0.8), 0.8 ** 3.5, places=12)
        self.assertAlmostEqual(stats.betainc(1, 4.5, 0.2), 1 - 0.8 ** 4.5, places=12)
        self.assertEqual(stats.betainc(2, 2, 0.0), 0.0)
        self.assertEqual(stats.betainc(2, 2, 1.0), 1.0)

    def test_f_quantiles_match_tables(self):
        # Upper 5% points of F (standard tables)
        for d1, d2, expected in [(1, 10, 4.9646), (2, 10, 4.1028), (3, 20, 3.0984), (5, 30, 2.5336),
                                 (3, 60, 2.7581), (1, 4, 7.7086)]:
            self.assertAlmostEqual(stats.f_ppf(0.95, d1, d2), expected, places=3, msg=f"F(0.95; {d1}, {d2})")

    def test_t_quantiles_match_tables(self):
        for df, expected in [(1, 12.7062), (2, 4.3027), (4, 2.7764), (10, 2.2281), (30, 2.0423)]:
            self.assertAlmostEqual(stats.t_ppf(0.975, df), expected, places=3, msg=f"t(0.975; {df})")
        self.assertAlmostEqual(stats.t_ppf(0.025, 10), -2.2281, places=3)
        self.assertAlmostEqual(stats.t_cdf(0.0, 7), 0.5, places=12)

    def test_f_and_t_agree(self):
        # F(1, n) is t(n) squared: P(F > t^2) = 2 P(T > t)
        t, n = 2.5, 9
        self.assertAlmostEqual(stats.f_sf(t * t, 1, n), 2 * (1 - stats.t_cdf(t, n)), places=10)


class Fits(unittest.TestCase):
    def test_polyfit_recovers_an_exact_quadratic(self):
        xs = [0.5, 1, 2, 3, 5, 8]
        ys = [2 - 3 * x + 0.5 * x * x for x in xs]
        predict, sse = stats.polyfit_sse(xs, ys, 2)
        self.assertLess(sse, 1e-18)
        self.assertAlmostEqual(predict(4), 2 - 12 + 8, places=9)
        _, sse_line = stats.polyfit_sse(xs, ys, 1)
        self.assertGreater(sse_line, 1.0)  # a line cannot follow the quadratic

    def test_f_test_by_hand(self):
        # Constant model (degree 0). a = 1, 2, 3 (mean 2, SSE 2); b = 4, 5, 6 (mean 5, SSE 2).
        # Combined: mean 3.5, SSE 17.5, DF 5; separate: SSE 4, DF 4.
        # F = ((17.5 - 4) / 1) / (4 / 4) = 13.5; p = P(F(1, 4) > 13.5) = P(|T_4| > 3.674) = 0.0213
        r = stats.extra_sum_of_squares_f([0, 1, 2], [1, 2, 3], [0, 1, 2], [4, 5, 6], degree=0)
        self.assertAlmostEqual(r["F"], 13.5, places=12)
        self.assertEqual((r["df1"], r["df2"]), (1, 4))
        self.assertAlmostEqual(r["p"], 0.02131, places=4)
        self.assertAlmostEqual(r["F_critical"], 7.7086, places=3)
        self.assertTrue(r["differ"])

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


class Ratios(unittest.TestCase):
    def test_median(self):
        self.assertEqual(stats.median([3, 1, 2]), 2)
        self.assertEqual(stats.median([4, 1, 3, 2]), 2.5)

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
        # se = sqrt(2 d^2 / 3), Welch df = 4, half width = t(0.975; 4) se.
        d = 0.1
        a = [math.exp(math.log(2) + e) for e in (-d, 0, d)]
        b = [math.exp(e) for e in (-d, 0, d)]
        ratio, lo, hi = stats.ratio_ci(a, b)
        half = 2.7764451 * math.sqrt(2 * d * d / 3)
        self.assertAlmostEqual(ratio, 2.0, places=12)
        self.assertAlmostEqual(lo, 2.0 * math.exp(-half), places=5)
        self.assertAlmostEqual(hi, 2.0 * math.exp(half), places=5)


if __name__ == "__main__":
    unittest.main()
