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

from privaudit.audit.stats.epsilon_bounds import RateBound, clopper_pearson_upper, gdp_epsilon, mu_from_rates

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


def _test_epsilon(beta: float, alpha: float, m_fp: int, m_fn: int, delta: float, level: float) -> float:
    """Clopper–Pearson ε̲ of a test with true rates (α, β) at its expected counts (the first line of eq. (1))."""
    a_ub = float(clopper_pearson_upper(alpha * m_fp, m_fp, level))
    b_ub = float(clopper_pearson_upper(beta * m_fn, m_fn, level))
    if a_ub <= 0 or 1 - delta - b_ub <= 0:
        return 0.0
    return math.log(1 - delta - b_ub) - math.log(a_ub)


def certified_test_ratio(epsilon: float, delta: float, test: RateBound, mu: float | None = None) -> float:
    """Smallest ε′/ε at which the certified *test* itself would refute the claim.

    ``test`` is the :class:`~privaudit.attacks.threshold_selection.RateBound` the audit reported:
    its false-positive rate α̂ on the evaluation split, the trials behind each rate (n₀ and n₁;
    n₀ + n₁ for a pooled test) and its confidence (the Bonferroni share of the certified attackers).
    A mechanism whose trade-off curve is f_{ε′,δ} (G_μ′ for a Gaussian claim), attacked with a
    test at the same false-positive rate, has β = f(α̂); the ratio is the smallest ε′/ε for which
    that test's Clopper–Pearson ε̲ at the *expected* counts exceeds ε, so a mechanism that much
    less private is caught by this test about half the time (expected counts sit near the
    median). Unlike :func:`min_detectable_ratio`, the best test any attacker could have chosen,
    it accounts for the threshold the selection actually picked, the evaluation size that test
    was certified on and the Bonferroni level. With ``selection="bonferroni"`` each rate was
    bounded at a level that depends on the number of candidates, which the bound does not
    record: the ratio is then read at the split level and is optimistic.

    Parameters
    ----------
    epsilon : float
        The claimed ε.
    delta : float
        The δ at which ε̲ is read.
    test : RateBound
        The reported bound (fields ``fpr``, ``n0``, ``n1``, ``direction``, ``confidence``, ``estimator``:
        for ``"gdp"`` the alternatives are G_μ′ and the test's ε̲ is ε(μ̲, δ) of its rate bounds).
    mu : float, optional
        The claim's μ: the alternatives are G_μ′ and the ratio is ε(μ′, δ)/ε.

    Returns
    -------
    float
        ε′/ε ≥ 1. When no ε′ lets this test refute the claim (a test that rejects nothing,
        α̂ = 0, or one whose α̂ caps ε̲ below the claim, ln(1/α̂) ≤ ε), the ratio of the best
        test at the same number of trials and level (:func:`min_detectable_ratio`): a leakier
        mechanism would have made the selection choose another test, and ``inf`` keeps its
        meaning, "no test of this audit's size could refute the claim", which turns a pass
        into "inconclusive".
    """
    if not math.isfinite(epsilon):
        return math.inf
    alpha = float(test.fpr)
    if test.direction == "pooled":
        m_fp = m_fn = int(test.n0) + int(test.n1)
    elif test.direction == "reverse":
        m_fp, m_fn = int(test.n1), int(test.n0)
    else:
        m_fp, m_fn = int(test.n0), int(test.n1)
    level = 1 - (1 - float(test.confidence)) / 2

    def best_test() -> float:
        return min_detectable_ratio(epsilon, delta, max(m_fp // 2, 1), float(test.confidence), mu=mu)

    if not 0 < alpha < 1 - delta:
        return best_test()
    gdp = getattr(test, "estimator", "clopper-pearson") == "gdp"
    gaussian = gdp or (mu is not None and math.isfinite(mu) and mu > 0)

    def detected(x: float) -> bool:
        curve = gaussian_tradeoff(x, np.array([alpha])) if gaussian else tradeoff_curve(x, delta, np.array([alpha]))
        if gdp:  # the GDP estimator reads μ̲ from the rate bounds and reports ε(μ̲, δ)
            a_ub = clopper_pearson_upper(alpha * m_fp, m_fp, level)
            b_ub = clopper_pearson_upper(float(curve[0]) * m_fn, m_fn, level)
            return gdp_epsilon(float(mu_from_rates(a_ub, b_ub)), delta) > epsilon
        return _test_epsilon(float(curve[0]), alpha, m_fp, m_fn, delta, level) > epsilon

    if gdp and not delta > 0:
        return math.inf
    lo = (mu if mu is not None and math.isfinite(mu) and mu > 0 else 1e-3) if gaussian else epsilon
    if detected(lo):  # a GDP claim without μ: start from below the detectable μ′
        lo = 1e-6
    limit = 60.0 if gaussian else 300.0
    hi = 2 * lo
    while not detected(hi):
        lo, hi = hi, 2 * hi
        if hi > limit:
            return best_test()
    for _ in range(30):  # bisection: the test's ε̲ increases with ε′ (or μ′)
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if detected(mid) else (mid, hi)
    if gaussian:
        return gdp_epsilon(hi, delta) / epsilon if delta > 0 else math.inf
    return hi / epsilon


def min_detectable_ratio(epsilon: float, delta: float, n_eval: int, confidence: float, mu: float | None = None) -> float:
    """Smallest ε′/ε for which f_{ε′,δ} (or G_μ′ when ``mu`` is given) yields an expected ε̲ > ε.

    ``n_eval`` releases per hypothesis; the pooled test of a symmetric pair uses both
    hypotheses' releases, hence m = 2·n_eval trials per rate. Returns ``inf`` when
    even ε′ = ∞ (a perfect test apart from δ) cannot lift ε̲ above ε: the audit
    cannot refute the claim at all. It is the best test *any* attacker could choose at this n
    (an optimistic floor); :func:`certified_test_ratio` is that of the test an audit certified.

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


__all__ = ["certified_test_ratio", "cp_ceiling", "min_detectable_ratio"]
