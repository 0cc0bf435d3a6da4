"""The stated power of a trade-off audit holds: a mechanism at the stated ratio is caught about half the time.

``min_detectable_ratio`` is the smallest ε′/ε at which the *certified* test refutes the claim at
its expected counts (:func:`privaudit.audit.stats.power.certified_test_ratio`), so at that ratio
the audit says "violation" with probability ≈ ½. Checked by simulation on a newcomer's setting
(issue 23: Laplace at n = 300, the default suite): the stated ratios of audits of the correct
mechanism are collected, and audits of a Laplace under-noised by their median ratio must detect
at a rate whose Clopper–Pearson interval contains ½. The former statement (the best test any
attacker could choose, :func:`privaudit.audit.stats.power.min_detectable_ratio`) is shown not to
hold: at its ratio the detection rate is well below ½.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.stats import binomtest

from privaudit.audit.engines.tradeoff import audit_tradeoff
from privaudit.audit.stats.power import min_detectable_ratio
from privaudit.mechanisms import LaplaceMechanism, PrivacyClaim

N = 300
CONFIDENCE = 0.95
CLAIM = PrivacyClaim(1.0, 0.0, "l1<=1")
X, X_PRIME = np.zeros(1), np.ones(1)


def _audit(epsilon: float, seed: int):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return audit_tradeoff(LaplaceMechanism(epsilon=epsilon), X, X_PRIME, n=N, rng=seed, confidence=CONFIDENCE,
                              claim=CLAIM)


def _detections(ratio: float, runs: int, first_seed: int) -> int:
    return sum(_audit(ratio, first_seed + s).epsilon_lb > CLAIM.epsilon for s in range(runs))


def test_the_stated_ratio_is_detected_about_half_the_time():
    stated = [_audit(1.0, seed).min_detectable_ratio for seed in range(10)]
    assert all(np.isfinite(stated)) and min(stated) > 1.0
    ratio = float(np.median(stated))
    runs = 60
    hits = _detections(ratio, runs, 1000)
    ci = binomtest(hits, runs).proportion_ci(0.95, method="exact")
    assert ci.low <= 0.5 <= ci.high, (ratio, hits)


def test_the_best_any_test_ratio_overstates_the_power():
    # The former statement: the Clopper–Pearson ceiling of the optimal test at this evaluation size.
    n_eval = _audit(1.0, 0).n_eval
    ratio = min_detectable_ratio(CLAIM.epsilon, 0.0, n_eval, CONFIDENCE)
    runs = 60
    hits = _detections(ratio, runs, 2000)
    ci = binomtest(hits, runs).proportion_ci(0.95, method="exact")
    assert ci.high < 0.5, (ratio, hits)


def test_certified_test_ratio_counts_the_trials_of_its_direction():
    from types import SimpleNamespace

    from privaudit.audit.stats.power import certified_test_ratio

    def ratio(direction, n0, n1, fpr=0.1, confidence=0.95, mu=None, delta=0.0):
        test = SimpleNamespace(fpr=fpr, direction=direction, n0=n0, n1=n1, confidence=confidence)
        return certified_test_ratio(1.0, delta, test, mu=mu)

    # A pooled test rests on n0 + n1 trials per rate: the same as a forward test on twice the releases.
    assert ratio("pooled", 1000, 1000) == ratio("forward", 2000, 2000)
    # The reverse test's false positives are counted under x′ (n1 trials).
    assert ratio("reverse", 500, 4000) == ratio("forward", 4000, 500)
    # More trials, or a milder Bonferroni share, state more power (a smaller ratio).
    assert ratio("forward", 10_000, 10_000) < ratio("forward", 1000, 1000)
    assert ratio("forward", 1000, 1000, confidence=0.95) < ratio("forward", 1000, 1000, confidence=0.975)
    # A test that rejects nothing, or one whose FPR caps ε̲ below the claim (ln(1/0.4) < 1), refutes nothing
    # itself: the best test at the same size and level is stated instead (inf only when none could refute).
    best = min_detectable_ratio(1.0, 0.0, 500, 0.95)
    assert ratio("forward", 1000, 1000, fpr=0.0) == best
    assert ratio("forward", 1000, 1000, fpr=0.4) == best < ratio("forward", 1000, 1000, fpr=0.1)
    tiny = SimpleNamespace(fpr=0.0, direction="forward", n0=20, n1=20, confidence=0.95)
    assert certified_test_ratio(10.0, 0.0, tiny) == np.inf == min_detectable_ratio(10.0, 0.0, 10, 0.95)
    # Gaussian claims: the alternatives are G_μ′ and the ratio is ε(μ′, δ)/ε, above 1.
    g = ratio("forward", 10_000, 10_000, mu=0.5, delta=1e-5)
    assert 1.0 < g < np.inf


def test_certified_test_ratio_of_the_gdp_estimator_reads_mu_from_the_rate_bounds():
    from types import SimpleNamespace

    from privaudit.audit.stats.epsilon_bounds import clopper_pearson_upper, gdp_epsilon, mu_from_rates
    from privaudit.audit.stats.power import certified_test_ratio
    from privaudit.mechanisms.tradeoff import gaussian_tradeoff

    # The trade-off preset's Gaussian ε = 10 (exact 10.39) audited with the GDP estimator: a reverse test at
    # FPR 0.2 certified ε̲ = 10.001 there. The stated ratio must be finite (the test can refute the claim)
    # and, at that ratio, the test's ε(μ̲, δ) at expected counts must just reach the claim.
    level = 1 - (1 - 0.9977) / 2
    test = SimpleNamespace(fpr=0.202, direction="reverse", n0=16_000, n1=16_000, confidence=0.9977,
                           estimator="gdp")
    r = certified_test_ratio(10.0, 1e-5, test)
    assert 1.0 < r < 1.2

    def test_epsilon(mu_prime):
        beta = float(gaussian_tradeoff(mu_prime, np.array([0.202]))[0])
        a, b = clopper_pearson_upper(0.202 * 16_000, 16_000, level), clopper_pearson_upper(beta * 16_000, 16_000, level)
        return gdp_epsilon(float(mu_from_rates(a, b)), 1e-5)

    from scipy.optimize import brentq

    mu_r = brentq(lambda m: gdp_epsilon(m, 1e-5) - r * 10.0, 0.1, 20.0)
    assert test_epsilon(1.001 * mu_r) > 10.0 >= test_epsilon(0.99 * mu_r)
