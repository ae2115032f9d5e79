"""Statistics for the performance report, in plain Python (no SciPy needed).

- F and Student t distributions (CDF and quantiles) through the regularized incomplete beta function
- least-squares polynomial fits
- the extra-sum-of-squares F-test of seed 002 §2.6.2 (eq. 2.2): do separate curves for cush and
  raw CUDA explain the measurements significantly better than one combined curve?
- medians and a confidence interval for the ratio of two medians' worth of samples
"""
import math


# --- special functions ------------------------------------------------------------------------

def _beta_continued_fraction(a, b, x, eps=1e-15, max_iter=500):
    """Continued fraction of the incomplete beta function (modified Lentz's method)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = tiny if abs(d) < tiny else d
    d = 1.0 / d
    h = d
    for m in range(1, max_iter + 1):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = tiny if abs(d) < tiny else d
        c = 1.0 + aa / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = tiny if abs(d) < tiny else d
        c = 1.0 + aa / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < eps:
            return h
    raise ArithmeticError(f"incomplete beta did not converge (a={a}, b={b}, x={x})")


def betainc(a, b, x):
    """Regularized incomplete beta function I_x(a, b), for a, b > 0 and 0 <= x <= 1."""
    if not (a > 0 and b > 0):
        raise ValueError("a and b must be positive")
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    front = math.exp(log_front)
    # The continued fraction converges fast for x < (a + 1) / (a + b + 2); use symmetry otherwise.
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_continued_fraction(a, b, x) / a
    return 1.0 - front * _beta_continued_fraction(b, a, 1.0 - x) / b


def f_cdf(x, d1, d2):
    """P(F <= x) for the F distribution with (d1, d2) degrees of freedom."""
    if x <= 0:
        return 0.0
    return betainc(d1 / 2.0, d2 / 2.0, d1 * x / (d1 * x + d2))


def f_sf(x, d1, d2):
    """P(F > x), computed without cancellation."""
    if x <= 0:
        return 1.0
    return betainc(d2 / 2.0, d1 / 2.0, d2 / (d2 + d1 * x))


def t_cdf(t, df):
    """P(T <= t) for Student's t with df degrees of freedom."""
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def _bisect(f, target, lo, hi, tol=1e-12):
    """x in [lo, hi] with increasing f(x) == target."""
    while f(hi) < target:
        hi *= 2.0
    for _ in range(300):
        mid = 0.5 * (lo + hi)
        if f(mid) < target:
            lo = mid
        else:
            hi = mid
        if hi - lo < tol * max(1.0, abs(mid)):
            break
    return 0.5 * (lo + hi)


def f_ppf(q, d1, d2):
    """The q-quantile of the F distribution with (d1, d2) degrees of freedom."""
    return _bisect(lambda x: f_cdf(x, d1, d2), q, 0.0, 10.0)


def t_ppf(q, df):
    """The q-quantile of Student's t with df degrees of freedom."""
    if q == 0.5:
        return 0.0
    if q < 0.5:
        return -t_ppf(1.0 - q, df)
    return _bisect(lambda t: t_cdf(t, df), q, 0.0, 10.0)


# --- descriptive statistics ---------------------------------------------------------------------

def mean(xs):
    return sum(xs) / len(xs)


def median(xs):
    s = sorted(xs)
    n = len(s)
    if n == 0:
        raise ValueError("median of no samples")
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def variance(xs):
    m = mean(xs)
    return sum((x - m) ** 2 for x in xs) / (len(xs) - 1)


def ratio_ci(numerator, denominator, level=0.95):
    """Ratio of the typical numerator to the typical denominator sample, with a confidence interval.

    Works on logarithms: the difference of mean logs with a Welch t interval, transformed back.
    For times, ratio_ci(raw_times, cush_times) is cush's speed relative to raw (> 1: cush faster).
    Returns (ratio, low, high); with fewer than two samples on a side the interval is (nan, nan).
    """
    la = [math.log(x) for x in numerator]
    lb = [math.log(x) for x in denominator]
    diff = mean(la) - mean(lb)
    if len(la) < 2 or len(lb) < 2:
        return math.exp(diff), float("nan"), float("nan")
    va, vb = variance(la) / len(la), variance(lb) / len(lb)
    se = math.sqrt(va + vb)
    if se == 0:
        return math.exp(diff), math.exp(diff), math.exp(diff)
    # Welch-Satterthwaite degrees of freedom
    df = (va + vb) ** 2 / ((va ** 2) / (len(la) - 1) + (vb ** 2) / (len(lb) - 1)) if va + vb > 0 else len(la) + len(lb) - 2
    half = t_ppf(0.5 + level / 2.0, df) * se
    return math.exp(diff), math.exp(diff - half), math.exp(diff + half)


# --- least squares and the F-test ---------------------------------------------------------------

def polyfit_sse(xs, ys, degree):
    """Least-squares polynomial fit of ys on xs; returns (predict, SSE), predict(x) the fitted value."""
    k = degree + 1
    if len(xs) < k:
        raise ValueError(f"{len(xs)} points cannot fit {k} parameters")
    # Normal equations, solved by Gaussian elimination with partial pivoting. Centre and scale x
    # first so that the system stays well conditioned.
    cx = mean(xs)
    sx = max(abs(x - cx) for x in xs) or 1.0
    us = [(x - cx) / sx for x in xs]
    a = [[sum(u ** (i + j) for u in us) for j in range(k)] for i in range(k)]
    b = [sum(y * u ** i for u, y in zip(us, ys)) for i in range(k)]
    for col in range(k):
        pivot = max(range(col, k), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        b[col], b[pivot] = b[pivot], b[col]
        if abs(a[col][col]) < 1e-300:
            raise ValueError("singular fit: too few distinct x values for the degree")
        for r in range(col + 1, k):
            f = a[r][col] / a[col][col]
            for c in range(col, k):
                a[r][c] -= f * a[col][c]
            b[r] -= f * b[col]
    coef = [0.0] * k
    for r in reversed(range(k)):
        coef[r] = (b[r] - sum(a[r][c] * coef[c] for c in range(r + 1, k))) / a[r][r]
    def predict(x):
        u = (x - cx) / sx
        return sum(c * u ** i for i, c in enumerate(coef))

    sse = sum((y - predict(x)) ** 2 for x, y in zip(xs, ys))
    return predict, sse


def extra_sum_of_squares_f(x_a, y_a, x_b, y_b, degree=2, level=0.95):
    """Seed 002 eq. 2.2: is one curve through both data sets (a and b) significantly worse than a
    curve for each? Fits polynomials of `degree` to (x, y).

    F = ((SSE_combined - SSE_separate) / (DF_combined - DF_separate)) / (SSE_separate / DF_separate)

    Returns a dict: F, df1, df2, p (probability of an F this large if the curves were the same),
    F_critical at `level`, and differ (True when F > F_critical).
    """
    k = degree + 1
    _, sse_a = polyfit_sse(x_a, y_a, degree)
    _, sse_b = polyfit_sse(x_b, y_b, degree)
    _, sse_co = polyfit_sse(list(x_a) + list(x_b), list(y_a) + list(y_b), degree)
    sse_sep = sse_a + sse_b
    df_sep = len(x_a) + len(x_b) - 2 * k
    df_co = len(x_a) + len(x_b) - k
    df1 = df_co - df_sep
    if df_sep <= 0:
        raise ValueError("not enough measurements for the F-test")
    if sse_sep == 0:
        f = 0.0 if sse_co == 0 else float("inf")
    else:
        f = max(0.0, (sse_co - sse_sep) / df1) / (sse_sep / df_sep)
    critical = f_ppf(level, df1, df_sep)
    p = f_sf(f, df1, df_sep) if math.isfinite(f) else 0.0
    return {"F": f, "df1": df1, "df2": df_sep, "p": p, "F_critical": critical, "differ": f > critical}
