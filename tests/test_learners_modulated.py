"""Seed 000 server statistics, variance theory and the modulated learners.

Monte Carlo checks use fixed seeds; tolerances are z-quantiles of the family-wise
level (Bonferroni over the coordinates tested) times the standard error estimated
from the same draws.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.linear_model import LinearRegression

from privaudit.learners import ModulatedRegressor, OneShotModulatedRegressor
from privaudit.learners.modulated_server import (
    BLOCK,
    ServerStatistics,
    debias_moments,
    server_gradient,
    server_statistics,
)
from privaudit.learners.modulated_theory import theorem81_variance, uniform_variance_bound
from privaudit.mechanisms import ModulatedMechanism, NonContractiveWarning, random_orthonormal_basis
from privaudit.mechanisms.accounting import sigma_for_rho, zcdp_epsilon, zcdp_rho
from privaudit.mechanisms.validation import InvalidInputError, InvalidParameterError, ParameterTypeError

FWER = 1e-3  # family-wise false-alarm rate of each Monte Carlo check
K, D, REPS = 30, 4, 6000
ALPHA, LAM, OMEGA, SIGMA = 0.3, 1.2, 0.2, 0.6


def _z(n_tests: int) -> float:
    return float(stats.norm.ppf(1 - FWER / (2 * n_tests)))


def _data(seed=0, k=K, d=D):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((k, d)) * 0.5
    y = X @ np.linspace(1, -1, d) + 0.3 * rng.standard_normal(k)
    return X, y


def _mc_stats(m: int, correction: str, seed=1, basis=None, data_seed=0):
    X, y = _data(data_seed)
    rng = np.random.default_rng(seed)
    V = random_orthonormal_basis(D, m, rng) if basis is None else basis
    mech = ModulatedMechanism(alpha=ALPHA, lam=LAM, omega=OMEGA, n_vectors=m, dim=D, sigma=SIGMA, basis=V)
    rel = mech.release(np.tile(X, (REPS, 1)), rng).reshape(REPS, K, D)
    return X, y, mech, server_statistics(rel, y, mech, correction=correction, chunk_size=7)


def _assert_unbiased(draws: np.ndarray, target: np.ndarray) -> None:
    draws = draws.reshape(len(draws), -1)
    target = np.ravel(target)
    se = draws.std(axis=0, ddof=1) / math.sqrt(len(draws))
    z = np.abs(draws.mean(axis=0) - target) / se
    assert z.max() < _z(draws.shape[1]), f"max |z| = {z.max():.2f}"


@pytest.mark.parametrize("m", [1, 3])
def test_server_statistics_unbiased(m):
    X, y, mech, st = _mc_stats(m, "derived")
    _assert_unbiased(st.Sigma_x, X.T @ X / K)
    _assert_unbiased(st.Z, X.T @ y / K)
    beta = np.array([0.4, -0.2, 0.1, 0.3])
    _assert_unbiased(server_gradient(st, beta), X.T @ (X @ beta - y) / K)


def test_seed_correction_biased_for_m3_and_equal_for_m1():
    X, y, mech, st = _mc_stats(3, "seed")
    # Bias of the seed's correction along P_V: −(λ²/(2m) − λ²/(2m²)) tr(P_V)/(1−α)², detected:
    PV = mech.basis @ mech.basis.T
    proj = np.einsum("rij,ij->r", st.Sigma_x, PV)
    target = np.sum(PV * (X.T @ X / K))
    z = (proj.mean() - target) / (proj.std(ddof=1) / math.sqrt(REPS))
    expected = -(LAM**2 / 6 - LAM**2 / 18) * 3 / (1 - ALPHA) ** 2
    assert z < -_z(1)
    assert abs(proj.mean() - target - expected) < _z(1) * proj.std(ddof=1) / math.sqrt(REPS)
    m1 = ModulatedMechanism(alpha=ALPHA, lam=LAM, omega=OMEGA, n_vectors=1, dim=D, sigma=SIGMA)
    np.testing.assert_array_equal(m1.seed_correction(), m1.second_moment_correction())


def test_naive_server_biased():
    X, y, mech, st = _mc_stats(1, "none")
    diag = np.einsum("rii->r", st.Sigma_x)
    z = (diag.mean() - np.trace(X.T @ X / K)) / (diag.std(ddof=1) / math.sqrt(REPS))
    assert z > _z(1)  # Σ_g/(1−α)² overshoots by tr(C)/(1−α)² > 0


def test_server_statistics_chunking_and_streaming_form():
    X, y = _data()
    rng = np.random.default_rng(3)
    mech = ModulatedMechanism(alpha=ALPHA, lam=LAM, omega=OMEGA, n_vectors=2, dim=D, sigma=SIGMA)
    rel = mech.release(X, rng)
    full = server_statistics(rel, y, mech)
    chunked = server_statistics(rel, y, mech, chunk_size=4)
    np.testing.assert_allclose(chunked.Sigma_x, full.Sigma_x, rtol=1e-12, atol=1e-14)
    manual = debias_moments(rel.T @ rel, rel.T @ y, K, mech)
    np.testing.assert_allclose(manual.Z, full.Z, rtol=1e-12)
    # independent closed form
    C = LAM**2 / (2 * 4) * mech.basis @ mech.basis.T + SIGMA**2 * np.eye(D)
    np.testing.assert_allclose(full.Sigma_x, (rel.T @ rel / K - C) / (1 - ALPHA) ** 2, rtol=1e-12)
    np.testing.assert_allclose(full.Z, rel.T @ y / (K * (1 - ALPHA)), rtol=1e-12)
    assert isinstance(full, ServerStatistics) and full.n_clients == K
    with pytest.raises(InvalidParameterError, match="correction"):
        server_statistics(rel, y, mech, correction="bogus")
    with pytest.raises(InvalidInputError, match="releases"):
        server_statistics(rel[:, :2], y, mech)


@pytest.mark.parametrize("m", [1, 3])
def test_theorem81_variance_matches_monte_carlo(m):
    X, y = _data(seed=5)
    beta = np.array([0.6, -0.4, 0.0, 0.0])
    rng = np.random.default_rng(11)
    comp = np.linalg.qr(np.column_stack([beta, rng.standard_normal((D, D - 1))]))[0][:, 1:]
    V = comp[:, :m]  # V ⊥ β, as the theorem assumes
    _, _, mech, st = _mc_stats(m, "derived", seed=12, basis=V, data_seed=5)
    err = ((server_gradient(st, beta) - X.T @ (X @ beta - y) / K) ** 2).sum(axis=1)
    formula = theorem81_variance(X, y, beta, alpha=ALPHA, lam=LAM, sigma=SIGMA, n_vectors=m)
    se = err.std(ddof=1) / math.sqrt(REPS)
    assert abs(err.mean() - formula) < _z(1) * se, (err.mean(), formula, se)


def test_uniform_bound_dominates_formula():
    rng = np.random.default_rng(7)
    for _ in range(50):
        X, y = rng.standard_normal((20, 3)), rng.standard_normal(20)
        beta = rng.standard_normal(3)
        kw = dict(alpha=rng.uniform(0.05, 0.9), lam=rng.uniform(0, 2), sigma=rng.uniform(0.1, 3))
        exact = theorem81_variance(X, y, beta, **kw)
        bound = uniform_variance_bound(R=np.linalg.norm(X, axis=1).max(), B=np.linalg.norm(beta), M=np.abs(y).max(),
                                       dim=3, n_clients=20, **kw)
        assert bound >= exact * (1 - 1e-12)
    # equality when every client is at the extremes: x_i = R e, β = B e, y_i = −M (r_i = RB + M)
    X = np.tile([1.0, 0, 0], (5, 1)) * 2.0
    y = -np.full(5, 0.5)
    beta = np.array([3.0, 0, 0])
    kw = dict(alpha=0.4, lam=0.7, sigma=0.9)
    assert uniform_variance_bound(R=2.0, B=3.0, M=0.5, dim=3, n_clients=5, **kw) == pytest.approx(
        theorem81_variance(X, y, beta, **kw), rel=1e-12)


# --------------------------------------------------------------------------------------
# learners
# --------------------------------------------------------------------------------------
def _regression(seed=0, k=4000, d=4, intercept=0.7):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((k, d))
    y = X @ np.linspace(1.0, -0.5, d) + 0.5 * rng.standard_normal(k) + intercept
    return X, y


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")  # dp_accounting at ε = 1e8
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_ols_limit(fit_intercept):
    X, y = _regression(intercept=0.7 if fit_intercept else 0.0)
    ols = LinearRegression(fit_intercept=fit_intercept).fit(X, y)
    common = dict(epsilon=1e8, alpha=1e-6, lam=0.0, omega=0.0, fit_intercept=fit_intercept, random_state=0)
    it = ModulatedRegressor(rounds=200, step=1.0, **common).fit(X, y)
    one = OneShotModulatedRegressor(ridge=0.0, **common).fit(X, y)
    for est in (it, one):
        np.testing.assert_allclose(est.coef_, ols.coef_, atol=1e-4)
        assert est.intercept_ == pytest.approx(ols.intercept_, abs=1e-4)


def test_chunked_equals_in_memory_and_memmap(tmp_path):
    X, y = _regression(k=BLOCK + 123)
    kw = dict(epsilon=3.0, rounds=3, random_state=42, store_transcript=True)
    ref = ModulatedRegressor(**kw).fit(X, y)
    for cs in (1, BLOCK + 1, 3 * BLOCK):
        est = ModulatedRegressor(chunk_size=cs, **kw).fit(X, y)
        np.testing.assert_array_equal(est.coef_, ref.coef_)
        np.testing.assert_array_equal(est.cov_params_, ref.cov_params_)
        np.testing.assert_array_equal(est.transcript_, ref.transcript_)
    Xm = np.lib.format.open_memmap(tmp_path / "X.npy", mode="w+", shape=X.shape)
    Xm[:] = X
    Xm.flush()
    ym = np.lib.format.open_memmap(tmp_path / "y.npy", mode="w+", shape=y.shape)
    ym[:] = y
    est = ModulatedRegressor(chunk_size=500, **kw).fit(np.load(tmp_path / "X.npy", mmap_mode="r"), ym)
    np.testing.assert_array_equal(est.coef_, ref.coef_)
    one_ref = OneShotModulatedRegressor(epsilon=2.0, random_state=1).fit(X, y)
    one = OneShotModulatedRegressor(epsilon=2.0, random_state=1, chunk_size=700).fit(Xm, ym)
    np.testing.assert_array_equal(one.coef_, one_ref.coef_)


def test_transcript_reproduces_round_statistics_and_mechanisms():
    X, y = _regression(k=3000)
    est = ModulatedRegressor(epsilon=2.0, rounds=3, n_vectors=2, random_state=3, store_transcript=True).fit(X, y)
    assert est.transcript_.shape == (3, 3000, 4)
    bases = [m.basis for m in est.round_mechanisms_]
    assert not np.allclose(bases[0], bases[1])  # a fresh basis every round
    for t, mech in enumerate(est.round_mechanisms_):
        st = server_statistics(est.transcript_[t], y, mech)
        np.testing.assert_allclose(st.Sigma_x, est.round_stats_[t].Sigma_x, rtol=1e-10, atol=1e-12)
        assert mech.sigma == est.round_sigma_[t]
    # replay the iteration from the transcript
    beta = np.zeros(4)
    for t, mech in enumerate(est.round_mechanisms_):
        st = server_statistics(est.transcript_[t], y, mech)
        beta = beta - est.step_sizes_[t] * server_gradient(st, beta)
        beta *= min(1.0, est.radius / np.linalg.norm(beta))
    np.testing.assert_allclose(beta, est.coef_, rtol=1e-9)


def test_random_state_reproducible_and_generator_accepted():
    X, y = _regression(k=1000)
    a = ModulatedRegressor(random_state=5).fit(X, y).coef_
    b = ModulatedRegressor(random_state=5).fit(X, y).coef_
    c = ModulatedRegressor(random_state=6).fit(X, y).coef_
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    g1 = ModulatedRegressor(random_state=np.random.default_rng(9)).fit(X, y).coef_
    g2 = ModulatedRegressor(random_state=np.random.default_rng(9)).fit(X, y).coef_
    np.testing.assert_array_equal(g1, g2)


@pytest.mark.parametrize("conversion", ["gaussian", "rdp", "seed"])
@pytest.mark.parametrize("rounds", [1, 10])
def test_privacy_accounting(conversion, rounds):
    X, y = _regression(k=200)
    est = ModulatedRegressor(epsilon=2.0, delta=1e-6, alpha=0.4, lam=0.5, omega=0.4, rounds=rounds,
                             conversion=conversion, random_state=0, inference=False).fit(X, y)
    L = 0.6 + 0.2
    rho = rounds * L**2 / (2 * est.round_sigma_[0] ** 2)  # ρ adds over rounds
    assert rho == pytest.approx(est.claim.rho, rel=1e-12)
    assert zcdp_epsilon(rho, 1e-6, conversion) == pytest.approx(2.0, rel=1e-6)
    assert est.claim.epsilon == 2.0 and est.claim.delta == 1e-6 and est.claim.adjacency == "l2<=1"
    assert est.claim.mu == pytest.approx(math.sqrt(2 * rho))
    if conversion == "gaussian" and rounds == 1:
        # one Gaussian release: the exact conversion is the analytic calibration of the mechanism
        ref = ModulatedMechanism(alpha=0.4, lam=0.5, omega=0.4, dim=4, epsilon=2.0, delta=1e-6)
        assert est.round_sigma_[0] == pytest.approx(ref.sigma, rel=1e-6)
    tighter = sigma_for_rho(zcdp_rho(2.0, 1e-6, "gaussian") / rounds, L)
    assert est.round_sigma_[0] >= tighter * (1 - 1e-9)


def test_classical_calibration_states_claim():
    X, y = _regression(k=200)
    from privaudit.mechanisms.accounting import CalibrationWarning

    with pytest.warns(CalibrationWarning, match="loose"):
        est = ModulatedRegressor(epsilon=0.5, rounds=5, calibration="classical", random_state=0).fit(X, y)
    L = 0.5 + 0.25
    assert est.round_sigma_[0] == pytest.approx(L * math.sqrt(2 * math.log(1.25 / 2e-6)) / 0.1)
    assert est.claim.mu is None and est.claim.epsilon == 0.5


def test_one_shot_ridge_formula_and_inference_shapes():
    X, y = _regression(k=2000)
    est = OneShotModulatedRegressor(epsilon=5.0, ridge=0.7, random_state=2, store_transcript=True).fit(X, y)
    st = server_statistics(est.transcript_[0], y, est.round_mechanisms_[0])
    np.testing.assert_allclose(est.coef_, np.linalg.solve(st.Sigma_x + 0.7 * np.eye(4), st.Z), rtol=1e-10)
    assert est.conf_int().shape == (4, 2) and est.bse_.shape == (4,)
    assert np.all(np.linalg.eigvalsh(est.cov_params_) >= -1e-15)


def test_wald_test_agrees_with_t_statistics():
    X, y = _regression(k=20000)
    est = ModulatedRegressor(epsilon=8.0, random_state=0, step=1.0).fit(X, y)
    for j in range(4):
        e = np.zeros(4)
        e[j] = 1
        stat, p, df = est.wald_test(e)
        assert df == 1 and stat == pytest.approx(est.tvalues_[j] ** 2) and p == pytest.approx(est.pvalues_[j])
    ci = est.conf_int(0.1)
    z = stats.norm.ppf(0.95)
    np.testing.assert_allclose(ci[:, 1] - ci[:, 0], 2 * z * est.bse_)
    stat, p, df = est.wald_test(np.eye(4), est.coef_)
    assert stat == pytest.approx(0.0, abs=1e-12) and df == 4 and p == pytest.approx(1.0)
    assert est.contraction_ < 1e-3


def test_non_contractive_warning():
    X, y = _regression(k=100)
    with pytest.warns(NonContractiveWarning, match="not contractive"):
        ModulatedRegressor(alpha=0.1, lam=1.0, omega=1.0, random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonContractiveWarning)
        ModulatedRegressor(alpha=0.5, lam=0.5, omega=0.5, random_state=0).fit(X, y)


X_OK, Y_OK = _regression(k=50)


@pytest.mark.parametrize("cls", [ModulatedRegressor, OneShotModulatedRegressor])
@pytest.mark.parametrize(
    "params, error, match",
    [
        ({"alpha": 0.0}, InvalidParameterError, "alpha"),
        ({"alpha": 1.0}, InvalidParameterError, "alpha"),
        ({"lam": -0.1}, InvalidParameterError, "lam"),
        ({"omega": -1.0}, InvalidParameterError, "omega"),
        ({"n_vectors": 5}, InvalidParameterError, "n_vectors"),
        ({"n_vectors": 0}, InvalidParameterError, "n_vectors"),
        ({"epsilon": 0.0}, InvalidParameterError, "epsilon"),
        ({"epsilon": float("inf")}, InvalidParameterError, "epsilon"),
        ({"epsilon": "1"}, ParameterTypeError, "epsilon"),
        ({"delta": 0.0}, InvalidParameterError, "delta"),
        ({"delta": 1.0}, InvalidParameterError, "delta"),
        ({"conversion": "bogus"}, InvalidParameterError, "conversion"),
        ({"calibration": "bogus"}, InvalidParameterError, "calibration"),
        ({"chunk_size": 0}, InvalidParameterError, "chunk_size"),
        ({"random_state": "x"}, ParameterTypeError, "random_state"),
        ({"random_state": -1}, InvalidParameterError, "random_state"),
    ],
)
def test_bad_parameters(cls, params, error, match):
    with pytest.raises(error, match=match):
        cls(**params).fit(X_OK, Y_OK)


@pytest.mark.parametrize(
    "params, error, match",
    [
        ({"rounds": 0}, InvalidParameterError, "rounds"),
        ({"rounds": 2.5}, ParameterTypeError, "rounds"),
        ({"step": 0.0}, InvalidParameterError, "step"),
        ({"radius": -1.0}, InvalidParameterError, "radius"),
    ],
)
def test_bad_iterative_parameters(params, error, match):
    with pytest.raises(error, match=match):
        ModulatedRegressor(**params).fit(X_OK, Y_OK)


def test_bad_ridge():
    with pytest.raises(InvalidParameterError, match="ridge"):
        OneShotModulatedRegressor(ridge=-1.0).fit(X_OK, Y_OK)


@pytest.mark.parametrize("cls", [ModulatedRegressor, OneShotModulatedRegressor])
@pytest.mark.parametrize("chunk_size", [None, 16])
def test_bad_data(cls, chunk_size):
    X, y = X_OK.copy(), Y_OK.copy()
    Xn = X.copy()
    Xn[3, 1] = np.nan
    yi = y.copy()
    yi[7] = np.inf
    est = cls(chunk_size=chunk_size)
    with pytest.raises(InvalidInputError, match="X"):
        est.fit(Xn, y)
    with pytest.raises(InvalidInputError, match="y"):
        est.fit(X, yi)
    with pytest.raises(InvalidInputError, match="inconsistent|same number"):
        est.fit(X, y[:-1])
    with pytest.raises((InvalidInputError, ValueError)):
        est.fit(X[:, :0], y)
    fitted = cls().fit(X, y)
    with pytest.raises(InvalidInputError, match="features"):
        fitted.predict(X[:, :2])


def test_check_estimator():
    from sklearn.utils.estimator_checks import check_estimator

    for est in (ModulatedRegressor(random_state=0), OneShotModulatedRegressor(random_state=0)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results = check_estimator(est, on_fail=None)
        failed = [r["check_name"] for r in results if r["status"] == "failed"]
        assert not failed, failed


def test_claim_needs_fit():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        ModulatedRegressor().claim  # noqa: B018


def test_one_shot_psd_projection():
    X, y = _regression(k=300)
    # small ε, few clients: the debiased Σ_x is indefinite
    noisy = OneShotModulatedRegressor(epsilon=0.3, ridge=0.5, psd=True, random_state=4).fit(X, y)
    st = noisy.round_stats_[0]
    assert np.linalg.eigvalsh(st.Sigma_x)[0] < 0
    w, U = np.linalg.eigh(st.Sigma_x)
    expected = np.linalg.solve((U * np.clip(w, 0, None)) @ U.T + 0.5 * np.eye(4), st.Z)
    np.testing.assert_allclose(noisy.coef_, expected, rtol=1e-10)
    assert np.linalg.norm(noisy.coef_) <= np.linalg.norm(st.Z) / 0.5 * (1 + 1e-12)
    # with Σ_x ≻ 0 the projection is inactive
    kw = dict(epsilon=50.0, ridge=0.5, random_state=4)
    np.testing.assert_allclose(OneShotModulatedRegressor(psd=True, **kw).fit(X, y).coef_,
                               OneShotModulatedRegressor(psd=False, **kw).fit(X, y).coef_, rtol=1e-10)


def _gaussian_delta(eps: float, mu: float) -> float:
    """δ(ε) of μ-GDP in closed form (Balle & Wang 2018): Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)."""
    return float(stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2))


@pytest.mark.parametrize("eps, rounds, status", [(0.5, 5, "loose"), (10.0, 1, "false")])
def test_classical_calibration_is_held_against_the_exact_epsilon(eps, rounds, status):
    """The classical σ is loose at ε_t < 1 and false at ε_t = 10 (exact ε ≈ 10.39 > 10)."""
    from privaudit.mechanisms.accounting import CalibrationWarning

    X, y = _regression(k=200)
    with pytest.warns(CalibrationWarning, match="ModulatedRegressor: the claimed"):
        est = ModulatedRegressor(epsilon=eps, rounds=rounds, calibration="classical", inference=False,
                                 random_state=0).fit(X, y)
    check = est.calibration_check_
    mu = math.sqrt(rounds) * est.round_mechanisms_[0].lipschitz / est.round_sigma_[0]
    assert _gaussian_delta(check.exact_epsilon, mu) == pytest.approx(1e-5, rel=1e-4)  # independent closed form
    assert check.status == status and check.claimed_epsilon == eps
    assert (_gaussian_delta(eps, mu) > 1e-5) == (status == "false")


def test_zcdp_calibration_needs_no_check():
    from privaudit.mechanisms.accounting import CalibrationWarning

    X, y = _regression(k=200)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CalibrationWarning)
        est = ModulatedRegressor(epsilon=0.5, rounds=5, inference=False, random_state=0).fit(X, y)
    assert not hasattr(est, "calibration_check_")


def test_client_releases_are_the_float_safe_mechanism_release(monkeypatch):
    """Every transcript row is a dithered-lattice release of the round's mechanism (whose float safety, and the
    textbook release's leak, tests/test_mechanisms_sampling.py checks), at the textbook draws to within γ."""
    from float_safety import capture, lattice_reachable

    import privaudit.mechanisms.modulated as modulated

    X, y = _regression(k=300)
    kw = dict(epsilon=2.0, rounds=2, random_state=5, store_transcript=True)
    seen = capture(monkeypatch, modulated, "lattice_release")
    est = ModulatedRegressor(**kw).fit(X, y)
    rows, flat = np.concatenate(seen), est.transcript_.reshape(-1, est.transcript_.shape[2])
    assert len(rows) % len(flat) == 0                                  # inference regenerates the releases
    for k in range(len(rows) // len(flat)):
        np.testing.assert_array_equal(rows[k * len(flat):(k + 1) * len(flat)], flat)
    for t, mech in enumerate(est.round_mechanisms_):
        assert np.all(lattice_reachable(est.transcript_[t], mech.lattice_step))
    monkeypatch.setattr(modulated, "lattice_release", lambda mean, noise, scale, step, rng: mean + scale * noise)
    old = ModulatedRegressor(**kw).fit(X, y)
    steps = np.array([m.lattice_step for m in est.round_mechanisms_])[:, None, None]
    assert 0 < np.max(np.abs(est.transcript_ - old.transcript_) / steps) <= 1
