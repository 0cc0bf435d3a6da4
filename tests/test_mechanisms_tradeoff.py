"""Exact trade-off curves: each mechanism's curve lies on or above f_{ε,δ} of its claim."""

import math

import numpy as np
import pytest

from privaudit.mechanisms import (
    GaussianMechanism,
    LaplaceMechanism,
    ModulatedMechanism,
    RandomizedResponse,
    discrete_tradeoff,
    gaussian_delta,
    gaussian_tradeoff,
    laplace_tradeoff,
    tradeoff_curve,
    tradeoff_from_profile,
)

ALPHA = np.concatenate([np.logspace(-12, -1, 200), np.linspace(0.1, 1, 400)])


def _above_claim(mech) -> float:
    """Smallest gap T(α) − f_{ε,δ}(α) over the grid (≥ 0 means the claim holds)."""
    claim = mech.claim
    return float(np.min(mech.tradeoff(ALPHA) - tradeoff_curve(claim.epsilon, claim.delta, ALPHA)))


CORRECT = [
    GaussianMechanism(epsilon=0.5, delta=1e-5),
    GaussianMechanism(epsilon=4.0, delta=1e-8, sensitivity=3.0),
    GaussianMechanism(epsilon=0.9, delta=1e-5, calibration="classical"),
    GaussianMechanism(sigma=1.3),
    LaplaceMechanism(epsilon=0.7),
    LaplaceMechanism(epsilon=2.0, sensitivity=4.0),
    RandomizedResponse(epsilon=1.0),
    RandomizedResponse(epsilon=2.0, categories=(0, 1, 2, 3, 4)),
    ModulatedMechanism(alpha=0.3, lam=0.4, omega=1.0, n_vectors=2, dim=4, epsilon=1.0, delta=1e-5),
]


@pytest.mark.parametrize("mech", CORRECT, ids=repr)
def test_curve_on_or_above_claim(mech):
    assert _above_claim(mech) >= -1e-9


BROKEN = [
    GaussianMechanism(epsilon=1.0, delta=1e-5, sigma=0.7 * GaussianMechanism(epsilon=1.0, delta=1e-5).sigma),
    GaussianMechanism(epsilon=10.0, delta=1e-5, calibration="classical"),
    LaplaceMechanism(epsilon=1.0, scale=0.7),
    RandomizedResponse(epsilon=1.0, keep_probability=0.8),
]


@pytest.mark.parametrize("mech", BROKEN, ids=repr)
def test_grid_check_catches_false_claims(mech):
    assert _above_claim(mech) < -1e-7


def test_binary_rr_is_exactly_f_eps_0():
    eps = 1.3
    rr = RandomizedResponse(epsilon=eps)
    assert np.allclose(rr.tradeoff(ALPHA), tradeoff_curve(eps, 0.0, ALPHA), atol=1e-12)


def test_kary_rr_vertices():
    """The ROC of k-ary RR passes through (q, 1−p), ((k−1)q, q) (derived by hand)."""
    k, eps = 4, 0.8
    rr = RandomizedResponse(epsilon=eps, categories=range(k))
    p, q = rr.keep_probability, rr.flip_probability
    assert rr.tradeoff(np.array([q]))[0] == pytest.approx(1 - p)
    assert rr.tradeoff(np.array([(k - 1) * q]))[0] == pytest.approx(q)


@pytest.mark.parametrize("mu", [0.3, 1.0, 2.5])
def test_gaussian_curve_is_envelope_of_its_profile(mu):
    """G_μ equals sup_ε f_{ε,δ(ε)} (Dong–Roth–Su Prop. 2.12): two independent routes."""
    eps = np.linspace(-10, 30, 20_001)
    env = tradeoff_from_profile(np.abs(eps), gaussian_delta(mu, np.abs(eps)), ALPHA)
    assert np.allclose(env, gaussian_tradeoff(mu, ALPHA), atol=2e-4)


def test_laplace_curve_is_envelope_of_its_profile():
    lap = LaplaceMechanism(epsilon=1.5)
    eps = np.linspace(0, 1.5, 5001)
    deltas = np.array([lap.exact_delta(e) for e in eps])
    assert np.allclose(tradeoff_from_profile(eps, deltas, ALPHA), laplace_tradeoff(1.5, ALPHA), atol=2e-4)


def test_gaussian_tradeoff_matches_discretised_likelihood_ratio_test():
    """G_μ against the Neyman–Pearson curve of finely discretised N(0,1) vs N(μ,1)."""
    from scipy import stats

    mu = 1.2
    edges = np.linspace(-12, 12, 200_001)
    p0 = np.diff(stats.norm.cdf(edges))
    p1 = np.diff(stats.norm.cdf(edges - mu))
    a = np.linspace(0.01, 0.99, 50)
    assert np.allclose(discrete_tradeoff(p0, p1, a), gaussian_tradeoff(mu, a), atol=1e-4)


def test_composition_of_gaussians():
    """T Gaussian rounds with μ each give μ√T (closed form) — checked through the profile."""
    mu, t = 0.4, 9
    eps = np.linspace(0, 20, 20_001)
    env = tradeoff_from_profile(eps, gaussian_delta(mu * math.sqrt(t), eps), ALPHA)
    assert np.allclose(env, gaussian_tradeoff(1.2, ALPHA), atol=2e-4)
