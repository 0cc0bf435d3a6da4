"""The exact sufficient-statistics simulation of the modulated learners.

Monte Carlo checks use fixed seeds; tolerances are z-quantiles of the family-wise level
FWER (Bonferroni over the entries tested) times standard errors estimated from the same
draws. Two-sample comparisons use independent replicates of the two simulation paths.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privaudit.learners import ModulatedRegressor, OneShotModulatedRegressor
from privaudit.learners.modulated_server import (
    BLOCK,
    debias_moments,
    iter_blocks,
    sample_noise_projection,
    server_gradient,
    server_statistics,
)
from privaudit.mechanisms import ModulatedMechanism, random_orthonormal_basis
from privaudit.mechanisms.randomness import resolve_seed
from privaudit.mechanisms.validation import InvalidParameterError

FWER = 1e-3
K, D, REPS = 30, 4, 4000
ALPHA, LAM, OMEGA, SIGMA = 0.3, 1.2, 0.2, 0.6


def _z(n_tests: int) -> float:
    return float(stats.norm.ppf(1 - FWER / (2 * n_tests)))


def _data(seed=0, k=K, d=D):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((k, d)) * 0.5
    return X, X @ np.linspace(1, -1, d) + 0.3 * rng.standard_normal(k)


def _mech(m: int, d: int = D) -> ModulatedMechanism:
    V = random_orthonormal_basis(d, m, np.random.default_rng(100 + m))
    return ModulatedMechanism(alpha=ALPHA, lam=LAM, omega=OMEGA, n_vectors=m, dim=d, sigma=SIGMA, basis=V)


def _round_draws(path: str, mech, X, y, reps: int, offset: int = 0) -> np.ndarray:
    """Replicates of one round's (unique entries of Σ_x, Z) through the estimator's own round code."""
    est = OneShotModulatedRegressor()
    est.chunk_size, est.fit_intercept = None, False
    iu = np.triu_indices(mech.dim)
    out = []
    for r in range(reps):
        root = np.random.SeedSequence([offset, r])
        if path == "clients":
            gram, cross = est._round_sums(X, y, mech, root, 0)
        else:
            gram, cross, _ = est._sufficient_sums(X, y, mech, root, 0, {})
        st = debias_moments(gram, cross, len(y), mech)
        out.append(np.concatenate([st.Sigma_x[iu], st.Z]))
    return np.array(out)


def _assert_mean(draws: np.ndarray, target: np.ndarray) -> None:
    se = draws.std(axis=0, ddof=1) / math.sqrt(len(draws))
    z = np.abs(draws.mean(axis=0) - target) / se
    assert z.max() < _z(len(target)), f"max |z| = {z.max():.2f} at {z.argmax()}"


def _centred_products(a: np.ndarray) -> np.ndarray:
    c = a - a.mean(axis=0)
    i, j = np.triu_indices(a.shape[1])
    return c[:, i] * c[:, j]


@pytest.mark.parametrize("m", [1, 3])
def test_paths_agree_in_distribution(m):
    """Means and covariances of the round statistics agree between the two paths (two-sample z)."""
    X, y = _data()
    mech = _mech(m)
    a = _round_draws("clients", mech, X, y, REPS, offset=1)
    b = _round_draws("sufficient", mech, X, y, REPS, offset=2)
    pa, pb = _centred_products(a), _centred_products(b)
    n_tests = a.shape[1] + pa.shape[1]
    for u, v in ((a, b), (pa, pb)):
        se = np.sqrt(u.var(axis=0, ddof=1) / len(u) + v.var(axis=0, ddof=1) / len(v))
        z = np.abs(u.mean(axis=0) - v.mean(axis=0)) / se
        assert z.max() < _z(n_tests), f"max |z| = {z.max():.2f} at {z.argmax()}"
    # power: the variances compared are measured to better than 10 % (z ≥ 10 away from 0)
    i, j = np.triu_indices(a.shape[1])
    var = pb[:, i == j]
    assert np.all(var.mean(axis=0) > 10 * var.std(axis=0) / math.sqrt(REPS))


@pytest.mark.parametrize("m", [1, 3])
def test_sufficient_path_unbiased(m):
    """E[Σ_x] = XᵀX/K, E[Z] = Xᵀy/K and E[G] = ∇L(β) under the sufficient path (derived correction)."""
    X, y = _data(seed=4)
    mech = _mech(m)
    draws = _round_draws("sufficient", mech, X, y, REPS, offset=3)
    iu = np.triu_indices(D)
    _assert_mean(draws, np.concatenate([(X.T @ X / K)[iu], X.T @ y / K]))
    beta = np.array([0.4, -0.2, 0.1, 0.3])
    sig = np.zeros((REPS, D, D))
    sig[:, iu[0], iu[1]] = draws[:, : len(iu[0])]
    sig = sig + np.triu(sig, 1).transpose(0, 2, 1)
    from privaudit.learners.modulated_server import ServerStatistics

    grads = server_gradient(ServerStatistics(Sigma_x=sig, Z=draws[:, len(iu[0]):], n_clients=K), beta)
    _assert_mean(grads, X.T @ (X @ beta - y) / K)


@pytest.mark.parametrize("n_rows, rank", [(12, 4), (12, 3), (5, 4), (3, 3)])
def test_noise_projection_moments(n_rows, rank):
    """(AᵀΞ, ΞᵀΞ) from AᵀA alone vs. closed forms: E AᵀΞ = 0, Cov = σ²AᵀA ⊗ I, E ΞᵀΞ = Kσ²I,
    Var (ΞᵀΞ)_ij = Kσ⁴(1 + δ_ij); and Q = AP orthonormal with r = rank A (scaled, rank-deficient A)."""
    rng = np.random.default_rng(rank + n_rows)
    A = rng.standard_normal((n_rows, rank)) @ rng.standard_normal((rank, 4))
    A /= np.linalg.norm(A, axis=0)  # unit columns: the moment checks below are on a common scale
    d, s = 3, 0.7
    for scale in (1.0, 1e9, 1e-9):  # column scaling (y in other units) must not change the rank decision
        As = A * np.array([1, 1, 1, scale])
        proj = sample_noise_projection(As.T @ As, n_rows, d, s, 0)
        assert proj.P.shape[1] == rank and proj.n_perp == n_rows - rank
        np.testing.assert_allclose((As @ proj.P).T @ (As @ proj.P), np.eye(rank), atol=1e-8)
    gram_A = A.T @ A
    n = 3000
    draws = [sample_noise_projection(gram_A, n_rows, d, s, np.random.default_rng([7, r])) for r in range(n)]
    cross = np.array([p.cross.ravel() for p in draws])
    gram = np.array([p.gram[np.triu_indices(d)] for p in draws])
    n_tests = cross.shape[1] + 2 * gram.shape[1]
    z = _z(n_tests)
    se = cross.std(axis=0, ddof=1) / math.sqrt(n)
    assert np.all(np.abs(cross.mean(axis=0)) < z * se)
    # covariance of AᵀΞ: E[(AᵀΞ)_ak (AᵀΞ)_bl] = σ² (AᵀA)_ab δ_kl
    prod = cross[:, :, None] * cross[:, None, :]
    target = s**2 * np.kron(gram_A, np.eye(d))
    se_p = prod.std(axis=0, ddof=1) / math.sqrt(n)
    assert np.all(np.abs(prod.mean(axis=0) - target) < _z(prod.shape[1] ** 2) * se_p)
    diag = np.eye(d)[np.triu_indices(d)]
    _assert_mean(gram, n_rows * s**2 * diag)
    var_target = n_rows * s**4 * (1 + diag)
    v = (gram - gram.mean(axis=0)) ** 2
    assert np.all(np.abs(v.mean(axis=0) - var_target) < z * v.std(axis=0, ddof=1) / math.sqrt(n))


def _reconstructed(est, X, y, t, root):
    mech = est.round_mechanisms_[t]
    _, _, proj = est._sufficient_sums(X, y, mech, root, t, {})
    release = est._sufficient_releaser(X, y, mech, root, t, proj)
    rel = np.vstack([release(b, Xb, yb) for b, Xb, yb in iter_blocks(X, y, est.chunk_size, est.fit_intercept)])
    G = np.vstack([est._design_block(mech, root, t, b, Xb, yb)[:, :-1]
                   for b, Xb, yb in iter_blocks(X, y, est.chunk_size, est.fit_intercept)])
    return rel, G


@pytest.mark.parametrize("k, chunk, intercept", [(500, None, False), (BLOCK + 5, 1000, True), (7, None, False),
                                                 (5, None, False)])
def test_reconstructed_releases_reproduce_round_sums(k, chunk, intercept):
    """The releases drawn for the inference pass give back exactly the round's server statistics."""
    X, y = _data(seed=2, k=k, d=3)
    est = ModulatedRegressor(epsilon=3.0, rounds=2, n_vectors=2, chunk_size=chunk, fit_intercept=intercept,
                             random_state=5, inference=False).fit(X, y)
    root = resolve_seed(5)[0]
    for t in range(2):
        rel, _ = _reconstructed(est, X, y, t, root)
        st = server_statistics(rel, y, est.round_mechanisms_[t])
        ref = est.round_stats_[t]
        np.testing.assert_allclose(st.Sigma_x, ref.Sigma_x, rtol=1e-9, atol=1e-9 * np.abs(ref.Sigma_x).max())
        np.testing.assert_allclose(st.Z, ref.Z, rtol=1e-9, atol=1e-9 * np.abs(ref.Z).max())


@pytest.mark.parametrize("k", [9, 6])
def test_reconstructed_noise_is_iid_gaussian(k):
    """Ξ = releases − G of the inference pass is jointly iid N(0, σ²): mean, full covariance, 4th moment.

    K = 9 (A = [G, y] has rank 4 ≤ K − d: Haar-frame branch) and K = 6 (K − r = 2 < d = 3: in-memory branch).
    """
    X, y = _data(seed=3, k=k, d=3)
    n = 2500
    est = OneShotModulatedRegressor(epsilon=3.0, n_vectors=2, random_state=0, inference=False).fit(X, y)
    xs = []
    for r in range(n):  # the round's phases, W, Wishart factor and auxiliary Gaussians all depend on the root
        rel, G = _reconstructed(est, X, y, 0, resolve_seed(r)[0])
        xs.append((rel - G).ravel() / est.round_sigma_[0])
    xi = np.array(xs)
    p = xi.shape[1]
    i, j = np.triu_indices(p)
    n_tests = p + len(i) + p
    z = _z(n_tests)
    assert np.all(np.abs(xi.mean(axis=0)) < z * xi.std(axis=0, ddof=1) / math.sqrt(n))
    prod = xi[:, i] * xi[:, j]
    target = (i == j).astype(float)
    assert np.all(np.abs(prod.mean(axis=0) - target) < z * prod.std(axis=0, ddof=1) / math.sqrt(n))
    q = xi**4
    assert np.all(np.abs(q.mean(axis=0) - 3) < z * q.std(axis=0, ddof=1) / math.sqrt(n))


def test_results_independent_of_chunk_size():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((BLOCK + 123, 4))
    y = X @ np.linspace(1.0, -0.5, 4) + 0.5 * rng.standard_normal(len(X))
    for cls, kw in ((ModulatedRegressor, {"rounds": 3}), (OneShotModulatedRegressor, {})):
        ref = cls(epsilon=3.0, random_state=42, simulation="sufficient", **kw).fit(X, y)
        assert ref.simulation_ == "sufficient"
        for cs in (1, BLOCK + 1, 3 * BLOCK):
            est = cls(epsilon=3.0, random_state=42, simulation="sufficient", chunk_size=cs, **kw).fit(X, y)
            np.testing.assert_array_equal(est.coef_, ref.coef_)
            np.testing.assert_array_equal(est.cov_params_, ref.cov_params_)


def test_simulation_parameter():
    X, y = _data(k=200)
    for cls in (ModulatedRegressor, OneShotModulatedRegressor):
        with pytest.raises(InvalidParameterError, match="store_transcript"):
            cls(simulation="sufficient", store_transcript=True).fit(X, y)
        with pytest.raises(InvalidParameterError, match="simulation"):
            cls(simulation="exact").fit(X, y)
        assert cls(random_state=0).fit(X, y).simulation_ == "sufficient"
        auto = cls(random_state=0, store_transcript=True).fit(X, y)
        clients = cls(random_state=0, simulation="clients").fit(X, y)
        assert auto.simulation_ == "clients"
        np.testing.assert_array_equal(auto.coef_, clients.coef_)
        suff = cls(random_state=0, simulation="sufficient").fit(X, y)
        # same bases (key (t, 0)) on both paths, different noise
        for a, b in zip(suff.round_mechanisms_, clients.round_mechanisms_):
            np.testing.assert_array_equal(a.basis, b.basis)
        assert not np.array_equal(suff.coef_, clients.coef_)
