"""The DP-SGD FedAvg baseline of seed 000: clipping, accounting, OLS limit, streaming, bad input."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

from privaudit.learners import FedAvgDPSGDRegressor
from privaudit.learners.fedavg import clipped_gradient_sum
from privaudit.mechanisms.accounting import dpsgd_epsilon, zcdp_epsilon
from privaudit.mechanisms.validation import InvalidInputError, InvalidParameterError


def _regression(seed=0, k=3000, d=4, intercept=0.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((k, d))
    return X, X @ np.linspace(1.0, -0.5, d) + 0.5 * rng.standard_normal(k) + intercept


def test_clipped_gradient_sum_matches_per_client_loop():
    rng = np.random.default_rng(1)
    X, y, beta = rng.standard_normal((40, 3)), rng.standard_normal(40), rng.standard_normal(3)
    X[5] = 0.0  # zero gradient: no division by zero
    expected = np.zeros(3)
    for xi, yi in zip(X, y):
        g = xi * (xi @ beta - yi)
        n = np.linalg.norm(g)
        expected += g * (min(1.0, 0.8 / n) if n > 0 else 1.0)
    np.testing.assert_allclose(clipped_gradient_sum(X, y, beta, 0.8), expected, rtol=1e-12)


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_ols_limit(fit_intercept):
    X, y = _regression(intercept=0.7 if fit_intercept else 0.0)
    ols = LinearRegression(fit_intercept=fit_intercept).fit(X, y)
    # clip above every per-client gradient norm (no clipping), ε = 1e8 (noise/K ≈ 1e−6)
    est = FedAvgDPSGDRegressor(epsilon=1e8, clip=100.0, learning_rate=0.5, rounds=300, fit_intercept=fit_intercept,
                               random_state=0).fit(X, y)
    np.testing.assert_allclose(est.coef_, ols.coef_, atol=1e-4)
    assert est.intercept_ == pytest.approx(ols.intercept_, abs=1e-4)


@pytest.mark.parametrize("conversion", ["gaussian", "seed"])
def test_accounting_replace_one(conversion):
    X, y = _regression(k=500)
    est = FedAvgDPSGDRegressor(epsilon=2.0, delta=1e-5, clip=1.5, rounds=10, conversion=conversion,
                               random_state=0).fit(X, y)
    sigma = est.round_sigma_[0]
    rho = 10 * (2 * 1.5) ** 2 / (2 * sigma**2)  # Δ = 2C per round, ρ adds
    assert rho == pytest.approx(est.claim.rho, rel=1e-12)
    assert zcdp_epsilon(rho, 1e-5, conversion) == pytest.approx(2.0, rel=1e-6)
    assert est.claim.adjacency == "replace-one"
    # independent: dp_accounting's PLD under replace-one (noise multiplier σ/C, sensitivity 2C)
    eps_pld = dpsgd_epsilon(sigma / 1.5, 10, 1e-5, adjacency="replace-one", accountant="pld")
    if conversion == "gaussian":
        assert eps_pld == pytest.approx(2.0, rel=2e-3)
    else:
        assert eps_pld < 2.0  # the seed's conversion is loose


def test_chunked_equals_in_memory():
    X, y = _regression(k=9000)
    ref = FedAvgDPSGDRegressor(epsilon=1.0, random_state=3).fit(X, y)
    for cs in (1, 5000):
        np.testing.assert_array_equal(FedAvgDPSGDRegressor(epsilon=1.0, random_state=3, chunk_size=cs).fit(X, y).coef_,
                                      ref.coef_)


@pytest.mark.parametrize(
    "params, match",
    [({"clip": 0.0}, "clip"), ({"learning_rate": -1.0}, "learning_rate"), ({"rounds": 0}, "rounds"),
     ({"epsilon": -1.0}, "epsilon"), ({"delta": 2.0}, "delta"), ({"conversion": "x"}, "conversion")],
)
def test_bad_parameters(params, match):
    X, y = _regression(k=50)
    with pytest.raises(InvalidParameterError, match=match):
        FedAvgDPSGDRegressor(**params).fit(X, y)


def test_bad_data():
    X, y = _regression(k=50)
    Xn = X.copy()
    Xn[0, 0] = np.inf
    with pytest.raises(InvalidInputError, match="X"):
        FedAvgDPSGDRegressor().fit(Xn, y)
    with pytest.raises(InvalidInputError):
        FedAvgDPSGDRegressor().fit(X, y[:10])


def test_check_estimator():
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(FedAvgDPSGDRegressor(random_state=0), on_fail=None)
    assert not [r["check_name"] for r in results if r["status"] == "failed"]


def test_more_budget_less_error():
    X, y = _regression(k=300)
    ols = LinearRegression(fit_intercept=False).fit(X, y).coef_

    def err(eps):
        return np.mean([np.linalg.norm(FedAvgDPSGDRegressor(epsilon=eps, clip=5.0, learning_rate=0.5, rounds=20,
                                                            random_state=s).fit(X, y).coef_ - ols) for s in range(20)])

    assert err(50.0) < err(0.2)
    assert math.isfinite(err(0.2))


def test_transcript_replays_iterates():
    X, y = _regression(k=400)
    est = FedAvgDPSGDRegressor(epsilon=1.0, learning_rate=0.1, rounds=5, radius=np.inf, random_state=2).fit(X, y)
    np.testing.assert_allclose(est.coef_path_[1:], -0.1 * np.cumsum(est.transcript_, axis=0), rtol=1e-12)
    # released − clipped mean ~ N(0, (σ/K)² I): Σ resid²/(σ/K)² ~ χ²(T·d), two-sided 99.9 % band
    from scipy import stats

    resid = np.array([est.transcript_[t] - clipped_gradient_sum(X, y, est.coef_path_[t], est.clip) / 400
                      for t in range(5)])
    q = float(np.sum(resid**2) / (est.round_sigma_[0] / 400) ** 2)
    assert stats.chi2.ppf(5e-4, resid.size) < q < stats.chi2.isf(5e-4, resid.size)


def test_noisy_sum_is_float_safe_and_the_textbook_one_is_not(monkeypatch):
    """The round's noisy clipped sum, captured at its release, for one round from β = 0 over 800 seeds."""
    from float_safety import assert_float_safe, capture, one_sided_counts, textbook_gaussian

    import privaudit.learners.fedavg as fedavg
    from privaudit.mechanisms.lattice import grid_step

    X, y = _regression(k=5, d=2)
    X2, y2 = X.copy(), y.copy()
    X2[0], y2[0] = [0.3, -0.2], 4.0                                  # replace one client
    total, total2 = (clipped_gradient_sum(a, b, np.zeros(2), 1.0) for a, b in ((X, y), (X2, y2)))
    assert np.linalg.norm(total - total2) > 0.5

    def releases(Xd, yd, replacement=None):
        seen = capture(monkeypatch, fedavg, "float_safe_gaussian", replacement)
        for s in range(800):
            est = FedAvgDPSGDRegressor(epsilon=1.0, rounds=1, clip=1.0, radius=np.inf, random_state=s).fit(Xd, yd)
        monkeypatch.undo()
        return np.array(seen), est.round_sigma_[0]

    new, sigma = releases(X2, y2)
    assert_float_safe(new, [total, total2], grid_step(sigma), sigma, 13.0)
    assert_float_safe(releases(X, y)[0], [total, total2], grid_step(sigma), sigma, 13.0)
    old, _ = releases(X2, y2, textbook_gaussian)
    only2, only = one_sided_counts(old, total, total2, sigma)
    assert only2 > 0.1 * len(old)                                    # outputs impossible under the other data
    assert np.max(np.abs(new - old)) <= grid_step(sigma)             # same normals: within one lattice step
