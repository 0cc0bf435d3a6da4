"""Stated power of a trade-off audit: the smallest violation it could have detected at its n.

An audit that says "pass" is only informative if it could have said "violation".
:func:`min_detectable_ratio` answers "how wrong must a claim be before this audit
can see it?": the smallest r such that an (rε, δ)-DP mechanism whose trade-off
curve is exactly f_{rε,δ} — the *easiest* (ε′, δ) mechanism to detect, since every
(ε′, δ)-DP curve lies above it — gives, at the expected error counts of its best
threshold test, a Clopper–Pearson ε̲ above the claimed ε. Below r·ε nothing can be
detected by this audit at this n, whatever the attacker; above it, detection
also needs a near-optimal attacker and a good pair.

For a Gaussian claim (one that carries μ) the family is G_μ′ instead, the curve of
a Gaussian mechanism with too little noise, and the ratio is ε(μ′, δ)/ε: this is
what an under-noised Gaussian must exceed to be caught.

It is the analogue of the minimum detectable bias the bias audits report, and it
is computed without sampling.
"""

from __future__ import annotations

import math

import numpy as np

from privaudit.mechanisms.tradeoff import gaussian_tradeoff, tradeoff_curve

from privaudit.audit.stats.epsilon_bounds import clopper_pearson_upper, gdp_epsilon

_ALPHA = np.geomspace(1e-12, 0.5, 160)


def cp_ceiling(curve_beta: np.ndarray, alpha: np.ndarray, m: int, delta: float, confidence: float) -> float:
    """Largest Clopper–Pearson ε̲ over tests whose *true* rates are (α, β(α)), at expected counts out of m.

    Both rate bounds are taken at level 1 − (1 − c)/2 (the split estimator's joint level).

    Parameters
    ----------
    curve_beta : ndarray
        True β(α) of the tests, on the grid ``alpha``.
    alpha : ndarray
        Type-I errors of the tests.
    m : int
        Trials per rate.
    delta : float
        δ of the bound.
    confidence : float
        Joint confidence c.

    Returns
    -------
    float
        ε̲ ≥ 0.
    """
    level = 1 - (1 - confidence) / 2
    a_ub = clopper_pearson_upper(alpha * m, m, level)
    b_ub = clopper_pearson_upper(np.asarray(curve_beta) * m, m, level)
    with np.errstate(divide="ignore", invalid="ignore"):
        eps = np.log(np.maximum(1 - delta - b_ub, 1e-300)) - np.log(a_ub)
    return float(np.max(np.nan_to_num(eps, nan=0.0, neginf=0.0)))


def _ceiling_at(epsilon: float, delta: float, m: int, confidence: float) -> float:
    return cp_ceiling(tradeoff_curve(epsilon, delta, _ALPHA), _ALPHA, m, delta, confidence)


def _gaussian_ratio(mu: float, epsilon: float, delta: float, m: int, confidence: float) -> float:
    def detected(mu_prime):
        return cp_ceiling(gaussian_tradeoff(mu_prime, _ALPHA), _ALPHA, m, delta, confidence) > epsilon

    lo, hi = mu, 2 * mu
    while not detected(hi):
        lo, hi = hi, 2 * hi
        if hi > 60:
            return math.inf
    for _ in range(24):  # bisection on μ′: the ceiling increases with μ′
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if detected(mid) else (mid, hi)
    return gdp_epsilon(hi, delta) / epsilon if delta > 0 else math.inf


def min_detectable_ratio(epsilon: float, delta: float, n_eval: int, confidence: float, mu: float | None = None) -> float:
    """Smallest ε′/ε for which f_{ε′,δ} (or G_μ′ when ``mu`` is given) yields an expected ε̲ > ε.

    ``n_eval`` releases per hypothesis; the pooled test of a symmetric pair uses both
    hypotheses' releases, hence m = 2·n_eval trials per rate. Returns ``inf`` when
    even ε′ = ∞ (a perfect test apart from δ) cannot lift ε̲ above ε: the audit
    cannot refute the claim at all.

    Parameters
    ----------
    epsilon : float
        The claim's ε.
    delta : float
        δ of the bound.
    n_eval : int
        Evaluation releases per hypothesis.
    confidence : float
        Joint confidence c.
    mu : float, optional
        The claim's GDP μ (then the alternatives are G_μ′).

    Returns
    -------
    float
        ε′/ε ≥ 1, or ``inf``.
    """
    if not math.isfinite(epsilon):
        return math.inf
    m = 2 * int(n_eval)
    if _ceiling_at(300.0, delta, m, confidence) <= epsilon:
        return math.inf
    if mu is not None and math.isfinite(mu) and mu > 0:
        return _gaussian_ratio(mu, epsilon, delta, m, confidence)
    lo, hi = 1.0, 2.0
    while _ceiling_at(hi * epsilon, delta, m, confidence) <= epsilon:
        lo, hi = hi, 2 * hi
        if hi * epsilon > 300.0:
            return math.inf
    for _ in range(24):  # bisection (relative precision 2⁻²⁴·hi)
        mid = 0.5 * (lo + hi)
        if _ceiling_at(mid * epsilon, delta, m, confidence) > epsilon:
            hi = mid
        else:
            lo = mid
    return hi


__all__ = ["cp_ceiling", "min_detectable_ratio"]
