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

BETA = np.array([0.5, -0.3, 0.2])


def coverage(cls, reps: int, *, K: int = 20000, eps: float = 8.0, seed: int = 0, **kw) -> np.ndarray:
    """Empirical coverage per coefficient of 95 % intervals over ``reps`` seeded repetitions."""
    hits = np.zeros(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in range(reps):
            rng = np.random.default_rng([seed, r])
            X = rng.standard_normal((K, 3)) * 0.5
            y = X @ BETA + 0.5 * rng.standard_normal(K)
            est = cls(epsilon=eps, alpha=0.3, lam=0.3, omega=0.5, random_state=10**6 * (seed + 1) + r, **kw).fit(X, y)
            ci = est.conf_int(0.05)
            hits += (ci[:, 0] <= BETA) & (BETA <= ci[:, 1])
    return hits / reps


def _band(n: int) -> tuple[float, float]:
    q = 1e-3 / (2 * 3)
    return stats.binom.ppf(q, n, 0.95) / n, stats.binom.isf(q, n, 0.95) / n


CASES = [(ModulatedRegressor, {"rounds": 10, "step": 1.0}), (OneShotModulatedRegressor, {"ridge": 0.0})]
# the default simulation is "sufficient" (inference from releases drawn given the round sums); check both paths
QUICK = CASES + [(ModulatedRegressor, {"rounds": 10, "step": 1.0, "simulation": "clients"})]


@pytest.mark.parametrize("cls, kw", QUICK)
def test_coverage_quick(cls, kw):
    n = 150
    cov = coverage(cls, n, K=8000, seed=1, **kw)
    lo, hi = _band(n)
    print(f"{cls.__name__}: coverage {cov} over {n} reps (band [{lo:.3f}, {hi:.3f}])")
    assert np.all((cov >= lo) & (cov <= hi))


@pytest.mark.slow
@pytest.mark.parametrize("cls, kw", CASES)
def test_coverage_1000(cls, kw):
    n = 1000
    cov = coverage(cls, n, seed=2, **kw)
    lo, hi = _band(n)
    print(f"{cls.__name__}: coverage {cov} over {n} reps")
    assert np.all((cov >= 0.93) & (cov <= 0.97)) and np.all((cov >= lo) & (cov <= hi))
