"""Weighted-LLP: accounting, unbiased aggregated loss, bag-size rule, errors."""

import math

import numpy as np
import pytest

from privaudit.learners import WeightedLLPRegressor
from privaudit.learners.weighted_llp import wllp_epsilon
from privaudit.mechanisms.accounting import dpsgd_epsilon
from privaudit.mechanisms.validation import InvalidInputError, InvalidParameterError


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.clip(X @ [1.0, -0.5, 0.25] + 0.3 + 0.2 * rng.normal(size=n), -3, 3)
    return X, y


def test_sampling_event_uses_unit_sensitivity():
    # with every record selected (m = n) the RDP replace-one event is the plain Gaussian of
    # unit sensitivity, i.e. the add/remove Gaussian; this fixes σ = z·R for label range R
    assert wllp_epsilon(3.0, 100, 100, 1e-5) == pytest.approx(
        dpsgd_epsilon(3.0, 1, 1e-5, adjacency="add-remove", accountant="rdp"), rel=1e-6)
    assert wllp_epsilon(3.0, 100, 60, 1e-5) < wllp_epsilon(3.0, 100, 100, 1e-5)  # amplification


def test_certified_claim_at_rho_one():
    X, y = _data()
    m = WeightedLLPRegressor(epsilon=1.0, delta=1e-5, rho=1.0, label_bounds=(-3, 3), random_state=0).fit(X, y)
    assert m.certified_ and m.certified_epsilon_ <= 1.0 + 1e-6
    assert m.certified_epsilon_ == pytest.approx(1.0, rel=1e-3)
    assert m.claim.adjacency == "label"
    assert m.bag_size_ == 2 and m.n_bags_ == (600 * 6 // 10) // 2
    h = WeightedLLPRegressor(epsilon=1.0, delta=1e-5, rho=0.5, label_bounds=(-3, 3), random_state=0).fit(X, y)
    assert not h.certified_ and h.certified_epsilon_ == math.inf and h.claim.epsilon == 1.0


def test_bag_size_rule():
    X, y = _data()
    m = WeightedLLPRegressor(epsilon=0.5, delta=1e-5, label_bounds=(-3, 3), random_state=0).fit(X, y)
    assert m.bag_size_ == math.ceil(1 / 0.5**4)


def test_aggregated_loss_is_unbiased():
    """E_w[(θᵀΣw x̃ − Σw y)²] = Σ_i (θᵀx̃_i − y_i)² for i.i.d. N(0, 1) weights (Monte Carlo)."""
    X, y = _data(n=8)
    Xa = np.hstack([X, np.ones((8, 1))])
    theta = np.array([0.3, 0.1, -0.2, 0.05])
    rng = np.random.default_rng(1)
    w = rng.normal(size=(200000, 8))
    samples = (w @ (Xa @ theta - y)) ** 2
    target = np.sum((Xa @ theta - y) ** 2)
    assert abs(samples.mean() - target) < 5 * samples.std() / math.sqrt(samples.size)


def test_nonprivate_is_ols():
    X, y = _data()
    m = WeightedLLPRegressor(epsilon=math.inf, random_state=0).fit(X, y)
    ols = np.linalg.lstsq(np.hstack([X, np.ones((600, 1))]), y, rcond=None)[0]
    np.testing.assert_allclose(np.r_[m.coef_, m.intercept_], ols, rtol=1e-10)


def test_bad_input():
    X, y = _data(n=50)
    with pytest.raises(InvalidInputError, match="label_bounds"):
        WeightedLLPRegressor(epsilon=1.0, label_bounds=(-1, 1)).fit(X, y)
    with pytest.raises(InvalidParameterError, match="label_bounds"):
        WeightedLLPRegressor(epsilon=1.0).fit(X, y)
    with pytest.raises(InvalidParameterError, match="rho"):
        WeightedLLPRegressor(epsilon=1.0, rho=0.0, label_bounds=(-3, 3)).fit(X, y)
    with pytest.raises(InvalidParameterError, match="alpha"):
        WeightedLLPRegressor(epsilon=1.0, alpha=1.0, label_bounds=(-3, 3)).fit(X, y)
