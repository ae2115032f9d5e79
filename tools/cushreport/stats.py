"""Statistics for the performance report.

- medians, and cush's speed relative to raw as a ratio with a confidence interval (Welch t on
  log times)
- least-squares polynomial fits (NumPy) and the extra-sum-of-squares F-test of seed 002 §2.6.2
  (eq. 2.2): do separate curves for cush and raw CUDA explain the measurements significantly
  better than one combined curve?

The F and t distributions are SciPy's (scipy.stats.f, scipy.stats.t).
"""
import math

import numpy as np
from scipy import stats as distributions


def median(xs):
    """The median of a non-empty sequence (the mean of the middle two for an even count)."""
    if len(xs) == 0:
        raise ValueError("median of no samples")
    return float(np.median(xs))


def f_critical(level, df1, df2):
    """The `level` quantile of the F distribution with (df1, df2) degrees of freedom."""
    return float(distributions.f.ppf(level, df1, df2))


def t_critical(level, df):
    """The half-width factor of a two-sided `level` interval: the (1 + level) / 2 quantile of t(df)."""
    return float(distributions.t.ppf(0.5 + level / 2.0, df))


def ratio_ci(numerator, denominator, level=0.95):
    """Ratio of the typical numerator to the typical denominator sample, with a confidence interval.

    Works on logarithms: the difference of mean logs with a Welch t interval, transformed back.
    For times, ratio_ci(raw_times, cush_times) is cush's speed relative to raw (> 1: cush faster).
    Returns (ratio, low, high); with fewer than two samples on a side the interval is (nan, nan).
    """
    la, lb = np.log(numerator), np.log(denominator)
    diff = float(np.mean(la) - np.mean(lb))
    if len(la) < 2 or len(lb) < 2:
        return math.exp(diff), float("nan"), float("nan")
    va, vb = np.var(la, ddof=1) / len(la), np.var(lb, ddof=1) / len(lb)
    se = math.sqrt(va + vb)
    if se == 0:
        return math.exp(diff), math.exp(diff), math.exp(diff)
    welch_df = (va + vb) ** 2 / (va ** 2 / (len(la) - 1) + vb ** 2 / (len(lb) - 1))
    half = t_critical(level, welch_df) * se
    return math.exp(diff), math.exp(diff - half), math.exp(diff + half)


def polyfit_sse(xs, ys, degree):
    """Least-squares polynomial fit of ys on xs; returns (predict, SSE), predict(x) the fitted value.

    numpy's Polynomial.fit maps xs onto [-1, 1] first, which keeps the fit well conditioned.
    """
    if len(set(xs)) < degree + 1:
        raise ValueError(f"{len(set(xs))} distinct x values cannot fit a polynomial of degree {degree}")
    predict = np.polynomial.Polynomial.fit(xs, ys, degree)
    sse = float(np.sum((np.asarray(ys) - predict(np.asarray(xs))) ** 2))
    return predict, sse


def extra_sum_of_squares_f(x_a, y_a, x_b, y_b, degree=2, level=0.95):
    """Seed 002 eq. 2.2: is one curve through both data sets (a and b) significantly worse than a
    curve for each? Fits polynomials of `degree` to (x, y).

    F = ((SSE_combined - SSE_separate) / (DF_combined - DF_separate)) / (SSE_separate / DF_separate)

    Returns a dict: F, df1, df2, p (probability of an F this large if the curves were the same),
    F_critical at `level`, and differ (True when F > F_critical).
    """
    k = degree + 1
    df_sep = len(x_a) + len(x_b) - 2 * k
    if df_sep <= 0:
        raise ValueError("not enough measurements for the F-test")
    df1 = (len(x_a) + len(x_b) - k) - df_sep
    _, sse_a = polyfit_sse(x_a, y_a, degree)
    _, sse_b = polyfit_sse(x_b, y_b, degree)
    _, sse_co = polyfit_sse(list(x_a) + list(x_b), list(y_a) + list(y_b), degree)
    sse_sep = sse_a + sse_b
    if sse_sep == 0:
        f = 0.0 if sse_co == 0 else math.inf
    else:
        f = max(0.0, (sse_co - sse_sep) / df1) / (sse_sep / df_sep)
    critical = f_critical(level, df1, df_sep)
    p = float(distributions.f.sf(f, df1, df_sep)) if math.isfinite(f) else 0.0
    return {"F": f, "df1": df1, "df2": df_sep, "p": p, "F_critical": critical, "differ": f > critical}
