"""Fisher information: autograd vs analytic, phase average vs quadrature, marginal vs Monte Carlo.

Monte Carlo tolerances follow conftest's policy (family-wise false-alarm rate per test, Bonferroni z).
"""

import math

import numpy as np
import pytest
import torch
from conftest import assert_within_se

from privaudit.attacks.reconstruction import torch_map
from privaudit.audit.stats.fisher import (
    GaussianNoiseMap,
    autograd_fisher,
    compose_fisher,
    marginal_fisher,
    release_fisher,
    side_information_fisher,
)
from privaudit.mechanisms import GaussianMechanism, InvalidInputError, InvalidParameterError, ModulatedMechanism, random_orthonormal_basis


def _mech(m=1, d=6, lam=0.6, omega=0.5, alpha=0.4, sigma=0.7, seed=0):
    return ModulatedMechanism(alpha=alpha, lam=lam, omega=omega, n_vectors=m, dim=d, sigma=sigma,
                              basis=random_orthonormal_basis(d, m, seed))


@pytest.mark.parametrize("m", [1, 3])
def test_autograd_equals_analytic_modulated(m):
    mech = _mech(m=m)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(7, mech.dim))
    P = rng.random((7, m)) * 2 * np.pi
    auto = autograd_fisher(torch_map(mech), X, mech.sigma, phase=P)
    for i in range(7):
        np.testing.assert_allclose(auto[i], mech.fisher_information(X[i], P[i]), rtol=1e-12, atol=1e-12)


def test_autograd_linear_map_and_side_information():
    rng = np.random.default_rng(2)
    a = rng.normal(size=(4, 3))
    at = torch.as_tensor(a)
    info = autograd_fisher(lambda x: x @ at.T, rng.normal(size=3), 0.5)
    np.testing.assert_allclose(info, a.T @ a / 0.25, rtol=1e-12)
    beta = rng.normal(size=3)
    bt = torch.as_tensor(beta)
    np.testing.assert_allclose(
        autograd_fisher(lambda x: (x @ bt)[:, None], np.zeros(3), 0.3), side_information_fisher(beta, 0.3), rtol=1e-12,
    )
    # Per-output noise levels weight the rows.
    s = np.array([0.5, 1.0, 2.0, 4.0])
    np.testing.assert_allclose(autograd_fisher(lambda x: x @ at.T, np.ones(3), s), a.T @ (a / s[:, None] ** 2), rtol=1e-12)


def test_gaussian_noise_map_mechanism():
    mech = GaussianNoiseMap(lambda x: torch.tanh(x), dim=3, sigma=0.4)
    x = np.array([0.2, -1.0, 0.5])
    np.testing.assert_allclose(mech.fisher_information(x), np.diag((1 - np.tanh(x) ** 2) ** 2) / 0.16, rtol=1e-12)
    out = mech.sample(x, 50_000, rng=3)
    assert_within_se(out.mean(0), np.tanh(x), 0.4 / math.sqrt(50_000))
    assert mech.log_density(out[:2], x).shape == (2,)


def test_phase_average_matches_quadrature():
    mech = _mech(m=2, d=5)
    x = np.linspace(-1, 1, 5)
    q = 64
    nodes = (np.arange(q) + 0.5) * 2 * np.pi / q
    grid = np.stack(np.meshgrid(nodes, nodes, indexing="ij"), -1).reshape(-1, 2)
    avg = np.mean([mech.fisher_information(x, p) for p in grid], axis=0)
    np.testing.assert_allclose(release_fisher(mech, x, information="known"), avg, rtol=1e-10, atol=1e-12)


def test_composition_adds_and_linear_rounds_scale_with_T():
    rounds = [_mech(seed=s) for s in range(3)]
    x = np.full(6, 0.3)
    ph = np.array([[0.1], [2.0], [4.0]])
    total = release_fisher(rounds, x, phase=ph)
    np.testing.assert_allclose(total, sum(m.fisher_information(x, p) for m, p in zip(rounds, ph)), rtol=1e-12)
    lin = ModulatedMechanism(alpha=0.25, lam=0.0, omega=1.0, dim=4, sigma=0.5)
    for t in (1, 2, 5):
        np.testing.assert_allclose(release_fisher([lin] * t, np.zeros(4)), t * 0.75**2 / 0.25 * np.eye(4), rtol=1e-12)
    with pytest.raises(InvalidInputError):
        compose_fisher([np.eye(2), np.eye(3)])
    with pytest.raises(InvalidParameterError):
        compose_fisher([])


def test_side_information_added():
    mech = GaussianMechanism(sigma=2.0)
    beta = np.array([1.0, -2.0])
    info = release_fisher(mech, np.zeros(2), beta=beta, sigma_y=0.5)
    np.testing.assert_allclose(info, np.eye(2) / 4 + np.outer(beta, beta) / 0.25)
    with pytest.raises(InvalidParameterError, match="sigma_y"):
        release_fisher(mech, np.zeros(2), beta=beta)


def test_marginal_fisher_limits_and_order():
    lin = ModulatedMechanism(alpha=0.3, lam=0.0, omega=1.0, dim=3, sigma=0.5)
    np.testing.assert_allclose(marginal_fisher(lin), 0.49 / 0.25 * np.eye(3), rtol=1e-10)
    mech = _mech(m=2, d=4, lam=1.5, omega=0.3)
    marg = marginal_fisher(mech)
    known = mech.fisher_information(np.zeros(4))
    # Hiding the phase removes information; along V the modulation acts as extra noise.
    assert np.linalg.eigvalsh(known - marg).min() > -1e-12
    v = mech.basis[:, 0]
    assert v @ marg @ v < (1 - mech.alpha) ** 2 / mech.sigma**2


def test_marginal_fisher_against_monte_carlo_score():
    # Independent check: the score of the mechanism's own marginal log-density (its
    # quadrature, differentiated by central differences) has second moment I_marg.
    mech = ModulatedMechanism(alpha=0.4, lam=1.2, omega=0.3, dim=2, sigma=0.4)
    x = np.array([0.3, -0.2])
    v = mech.basis[:, 0]
    n = 40_000
    out = mech.sample(x, n, rng=4)
    h = 1e-5
    score = (mech.log_density(out, x + h * v) - mech.log_density(out, x - h * v)) / (2 * h)
    est = np.mean(score**2)
    se = np.std(score**2, ddof=1) / math.sqrt(n)
    assert_within_se([est, np.mean(score)], [v @ marginal_fisher(mech) @ v, 0.0],
                     [se, np.std(score, ddof=1) / math.sqrt(n)])
