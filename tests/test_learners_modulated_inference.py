"""Coverage of the modulated learners' Wald intervals by simulation.

Each repetition draws fresh data from y = xᵀβ + e (x ~ N(0, I/4), e ~ N(0, 1/4)) and
fresh privacy noise, fits, and records whether the 95 % interval of every coefficient
covers the true β. The acceptance band for n repetitions is the central 99.9 %
binomial interval around 0.95 (per coefficient, Bonferroni over the 3 coefficients);
the slow test uses n = 1000 and additionally the issue's band [0.93, 0.97].
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from privaudit.learners import ModulatedRegressor, OneShotModulatedRegressor
from privaudit.learners.modulated import MAX_START_BIAS, UnreliableInferenceWarning
from privaudit.mechanisms.validation import InvalidInputError, InvalidParameterError

BETA = np.array([0.5, -0.3, 0.2])
MODULATION = {"alpha": 0.3, "lam": 0.3, "omega": 0.5}


def _data(K: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    X = rng.standard_normal((K, 3)) * 0.5
    return X, X @ BETA + 0.5 * rng.standard_normal(K)


def coverage_and_warnings(cls, reps: int, *, K: int = 20000, eps: float = 8.0, seed: int = 0,
                          **kw) -> tuple[np.ndarray, int]:
    """Coverage per coefficient of 95 % intervals over ``reps`` seeded repetitions, and how many
    of the ``conf_int`` calls warned :class:`UnreliableInferenceWarning`."""
    hits, warned = np.zeros(3), 0
    for r in range(reps):
        X, y = _data(K, np.random.default_rng([seed, r]))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("ignore")
            est = cls(epsilon=eps, **MODULATION, random_state=10**6 * (seed + 1) + r, **kw).fit(X, y)
            warnings.simplefilter("always", UnreliableInferenceWarning)
            ci = est.conf_int(0.05)
        warned += any(issubclass(w.category, UnreliableInferenceWarning) for w in caught)
        hits += (ci[:, 0] <= BETA) & (BETA <= ci[:, 1])
    return hits / reps, warned


def coverage(cls, reps: int, **kw) -> np.ndarray:
    """Empirical coverage per coefficient of 95 % intervals over ``reps`` seeded repetitions."""
    return coverage_and_warnings(cls, reps, **kw)[0]


def _band(n: int) -> tuple[float, float]:
    q = 1e-3 / (2 * 3)
    return stats.binom.ppf(q, n, 0.95) / n, stats.binom.isf(q, n, 0.95) / n


CASES = [(ModulatedRegressor, {"rounds": 10, "step": 1.0}), (OneShotModulatedRegressor, {"ridge": 0.0})]
# the default simulation is "sufficient" (inference from releases drawn given the round sums); check both paths
QUICK = CASES + [(ModulatedRegressor, {"rounds": 10, "step": 1.0, "simulation": "clients"})]


@pytest.mark.parametrize("cls, kw", QUICK)
def test_coverage_quick(cls, kw):
    n = 150
    cov, warned = coverage_and_warnings(cls, n, K=8000, seed=1, **kw)
    lo, hi = _band(n)
    print(f"{cls.__name__}: coverage {cov} over {n} reps (band [{lo:.3f}, {hi:.3f}])")
    assert np.all((cov >= lo) & (cov <= hi))
    assert warned == 0  # converged fits: conf_int has nothing to warn about


# ----- when the intervals cannot be trusted --------------------------------------------


def test_unconverged_iteration_warns_and_its_intervals_undercover():
    """2 rounds at step 0.3 leave ~57 % of the start β₀ = 0 in β̂: every conf_int warns, and
    the warning is warranted: coverage falls far below the 99.9 % band of a 0.95 interval."""
    n = 60
    cov, warned = coverage_and_warnings(ModulatedRegressor, n, K=8000, seed=3, rounds=2, step=0.3)
    lo, _ = _band(n)
    print(f"unconverged: coverage {cov}, {warned}/{n} warned (band lower edge {lo:.3f})")
    assert warned == n
    assert np.all(cov < lo)


def test_start_bias_estimates_the_bias_of_an_unconverged_fit():
    """start_bias_ = −Π(I − Π)⁻¹β̂ against the Monte Carlo mean error of β̂ over 60 fits
    (tolerance: 4 standard errors of that mean plus 10 % for the linearisation)."""
    n, K = 60, 8000
    err, bias = [], []
    for r in range(n):
        X, y = _data(K, np.random.default_rng([4, r]))
        est = ModulatedRegressor(epsilon=8.0, **MODULATION, rounds=2, step=0.3,
                                 random_state=r).fit(X, y)
        err.append(est.coef_ - BETA)
        bias.append(est.start_bias_)
    err, bias = np.array(err), np.array(bias)
    mean_err, se = err.mean(axis=0), err.std(axis=0, ddof=1) / np.sqrt(n)
    print(f"mean error {mean_err}, mean start_bias_ {bias.mean(axis=0)}, se {se}")
    assert np.all(np.abs(mean_err) > 10 * se)  # the bias is real
    assert np.all(np.abs(bias.mean(axis=0) - mean_err) <= 4 * se + 0.1 * np.abs(mean_err))


def test_max_start_bias_costs_at_most_one_point_of_coverage():
    b = MAX_START_BIAS
    z = stats.norm.ppf(0.975)
    rng = np.random.default_rng(0)
    shifted = rng.standard_normal(400_000) + b  # interval β̂ ± z·se around a centre shifted by b·se
    mc = np.mean(np.abs(shifted) <= z)
    assert mc == pytest.approx(stats.norm.cdf(z - b) - stats.norm.cdf(-z - b), abs=4 * np.sqrt(0.05 * 0.95 / 400_000))
    assert 0.94 <= mc < 0.95


def test_non_contracting_iteration_warns():
    """At ε = 1 with K = 2000 the noisy Σ_x,t make the linearised recursion expand."""
    X, y = _data(2000, np.random.default_rng(8))
    est = ModulatedRegressor(epsilon=1.0, **MODULATION, rounds=10, step=1.0, random_state=0).fit(X, y)
    assert est.contraction_ >= 1 and np.all(np.isnan(est.start_bias_))
    with pytest.warns(UnreliableInferenceWarning, match=r"not converged \(contraction_=.* >= 1"):
        est.conf_int()
    with pytest.warns(UnreliableInferenceWarning, match="not converged"):
        est.wald_test(np.eye(3))


def test_step_above_one_warns():
    X, y = _data(4000, np.random.default_rng(10))
    est = ModulatedRegressor(epsilon=8.0, **MODULATION, rounds=10, step=1.5, random_state=0).fit(X, y)
    assert est.contraction_ < 1e-3  # converged: only the step gives the warning
    with pytest.warns(UnreliableInferenceWarning, match="step=1.5 > 1 overshoots"):
        est.conf_int()


@pytest.mark.slow
def test_step_above_one_undercovers():
    """Why step > 1 warns: at c = 1.5 some coefficient covers below the 99.9 % band of 0.95."""
    n = 1000
    cov, warned = coverage_and_warnings(ModulatedRegressor, n, K=8000, seed=22, rounds=10, step=1.5)
    lo, _ = _band(n)
    print(f"step 1.5: coverage {cov}, {warned}/{n} warned (band lower edge {lo:.3f})")
    assert warned == n and cov.min() < lo


def test_active_radius_warns():
    X, y = _data(4000, np.random.default_rng(9))
    est = ModulatedRegressor(epsilon=8.0, **MODULATION, radius=0.2, random_state=0).fit(X, y)
    assert est.radius_active_
    with pytest.warns(UnreliableInferenceWarning, match="projection sphere"):
        est.conf_int()


@pytest.mark.parametrize("cls, kw", CASES)
@pytest.mark.parametrize("K", [1, 3])
def test_too_few_clients_for_intervals_is_refused(cls, kw, K):
    """K ≤ p clients: Ω has rank ≤ K − 1 < p, so some intervals would have zero width."""
    X, y = _data(K, np.random.default_rng(K))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = cls(epsilon=8.0, **MODULATION, random_state=0, **kw).fit(X, y)
    if K == 1:
        assert np.all(est.bse_ == 0)  # what conf_int used to return: zero-width intervals
    else:
        assert np.linalg.eigvalsh(est.cov_params_)[0] <= 1e-12 * np.linalg.eigvalsh(est.cov_params_)[-1]
    with pytest.raises(InvalidInputError, match=f"K={K} clients .* p=3 parameters"):
        est.conf_int()
    with pytest.raises(InvalidInputError, match="more clients than parameters"):
        est.wald_test(np.eye(3))


def test_conf_int_alpha_is_validated():
    X, y = _data(200, np.random.default_rng(1))
    est = OneShotModulatedRegressor(epsilon=8.0, random_state=0).fit(X, y)
    for bad in (0, 1, "0.05", float("nan")):
        with pytest.raises((InvalidParameterError, TypeError), match="alpha"):
            est.conf_int(bad)


@pytest.mark.slow
@pytest.mark.parametrize("cls, kw", CASES)
def test_coverage_1000(cls, kw):
    n = 1000
    cov = coverage(cls, n, seed=2, **kw)
    lo, hi = _band(n)
    print(f"{cls.__name__}: coverage {cov} over {n} reps")
    assert np.all((cov >= 0.93) & (cov <= 0.97)) and np.all((cov >= lo) & (cov <= hi))
