"""Paired comparison of two systems on the same tasks (no scipy): McNemar's exact test and an
interval for the margin.

For a yes/no outcome per task (fixed, wrong offer, harm), only the discordant tasks say which
system is better: b = only Kestrel, c = only raw. Under "no difference" b ~ Binomial(b + c, 1/2)
(McNemar's exact test; two-sided p = twice the smaller tail, at most 1). The margin is
(b - c) / n; its interval is the exact (Clopper-Pearson) interval of b / (b + c), mapped through
margin = (b + c) / n * (2 p - 1), conditional on the number of discordant tasks.
"""

from __future__ import annotations

from math import comb


def binom_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    return sum(comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))


def mcnemar_exact_p(b: int, c: int) -> float:
    """Two-sided exact p-value of McNemar's test for b and c discordant pairs."""
    n = b + c
    if n == 0:
        return 1.0
    return min(1.0, 2 * binom_cdf(min(b, c), n, 0.5))


def _solve(f, target: float) -> float:
    """p in [0, 1] with f(p) = target for f decreasing in p (bisection)."""
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if f(mid) > target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def clopper_pearson(k: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """Exact two-sided (1 - alpha) interval for a binomial proportion k / n."""
    if n == 0:
        return 0.0, 1.0
    # lower: P(X >= k) = alpha/2, i.e. P(X <= k-1) = 1 - alpha/2; upper: P(X <= k) = alpha/2 (both decrease in p)
    lower = 0.0 if k == 0 else _solve(lambda p: binom_cdf(k - 1, n, p), 1 - alpha / 2)
    upper = 1.0 if k == n else _solve(lambda p: binom_cdf(k, n, p), alpha / 2)
    return lower, upper


def paired_margin(b: int, c: int, n: int, alpha: float = 0.05) -> dict[str, float | int]:
    """Kestrel minus raw, for b tasks only Kestrel had and c only raw had, out of n paired tasks:
    the margin, its (1 - alpha) interval and McNemar's exact p-value."""
    m = b + c
    if n == 0:
        return {"b": b, "c": c, "n": n, "margin": 0.0, "low": 0.0, "high": 0.0, "p": 1.0}
    lo, hi = clopper_pearson(b, m, alpha) if m else (0.5, 0.5)
    scale = m / n
    return {"b": b, "c": c, "n": n, "margin": (b - c) / n, "low": scale * (2 * lo - 1), "high": scale * (2 * hi - 1),
            "p": mcnemar_exact_p(b, c)}
