"""Cond-DP / Switch-Cond-DP / DP-SGD regressors and the conditioning matrix."""

import math

import numpy as np
import pytest
import torch
from sklearn.base import clone

from privaudit.learners import CondDPRegressor, DPSGDRegressor, conditioning_matrix
from privaudit.mechanisms.validation import InvalidInputError, InvalidParameterError


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


def _spectral_data(n=300, d=6, p=1.0, seed=0):
    rng = np.random.default_rng(seed)
    U, _ = np.linalg.qr(rng.normal(size=(n, d)))
    V, _ = np.linalg.qr(rng.normal(size=(d, d)))
    s = 1.0 / np.arange(1, d + 1) ** p
    X = np.sqrt(n) * (U * s) @ V.T
    y = X @ rng.normal(size=d) + 0.1 * rng.normal(size=n)
    return X, y, s, V


def test_conditioning_whitens_and_matches_literal_formula():
    X, _, s, V = _spectral_data()
    n = X.shape[0]
    C = conditioning_matrix(X).matrix
    np.testing.assert_allclose((X @ C).T @ (X @ C) / n, np.eye(6), atol=1e-10)
    lit = conditioning_matrix(X, scale="none").matrix
    np.testing.assert_allclose(lit, V @ np.diag(1 / (np.sqrt(n) * s)) @ V.T, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(C, C.T, atol=0)


def test_conditioning_rank_deficiency_and_cap():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(5, 3)) @ rng.normal(size=(3, 8))  # rank 3, d = 8 > n = 5
    cond = conditioning_matrix(X, scale="none")
    assert cond.rank == 3
    s1 = cond.singular_values[0]
    ev = np.sort(np.linalg.eigvalsh(cond.matrix))
    # 5 null-space directions get the least amplification 1/σ₁; all eigenvalues finite
    np.testing.assert_allclose(ev[:5], 1 / s1, rtol=1e-9)
    X2 = X.copy()
    X2[:, 0] *= 1e-7  # a tiny but non-zero singular value
    capped = conditioning_matrix(np.hstack([np.eye(3), np.zeros((3, 1))]) @ np.diag([1, 1, 1e-6, 1]),
                                 max_condition=100.0, scale="none")
    assert capped.n_capped == 1
    assert np.linalg.eigvalsh(capped.matrix).max() == pytest.approx(100.0)
    with pytest.raises(InvalidInputError, match="X_pub"):
        conditioning_matrix(np.array([[1.0, np.nan], [0.0, 1.0]]))


@pytest.mark.parametrize("cls", [DPSGDRegressor, CondDPRegressor])
def test_nonprivate_training_reaches_ols(cls):
    X, y, _, _ = _spectral_data(p=0.5)
    m = cls(epsilon=math.inf, clip=None, epochs=3000, lr=0.02, optimizer="adam", random_state=0).fit(X, y)
    ols = np.linalg.lstsq(np.hstack([X, np.ones((X.shape[0], 1))]), y, rcond=None)[0]
    np.testing.assert_allclose(np.r_[m.coef_, m.intercept_], ols, atol=2e-3)
    assert m.claim.epsilon == math.inf and m.claim.adjacency == "label"
    assert m.noise_multiplier_ == 0.0


def test_conditioning_speeds_up_ill_conditioned_sgd():
    """Same SGD budget: conditioned GD converges on a κ=20 spectrum, plain GD does not (a sanity anchor)."""
    X, y, _, _ = _spectral_data(d=20, p=1.0)
    mse = {}
    for cls in (DPSGDRegressor, CondDPRegressor):
        m = cls(epsilon=math.inf, clip=None, epochs=50, lr=0.2, optimizer="sgd", init_std=0.0, random_state=0).fit(X, y)
        mse[cls.__name__] = np.mean((m.predict(X) - y) ** 2)
    assert mse["CondDPRegressor"] < 0.5 * mse["DPSGDRegressor"]


def test_switch_cond_dp_is_continuous_at_the_switch():
    X, y, _, _ = _spectral_data(p=1.0)
    steps = []
    m = CondDPRegressor(epsilon=1.0, delta=1e-5, clip=1.0, epochs=6, lr=0.05, optimizer="sgd", switch_epoch=3,
                        callback=steps.append, random_state=0).fit(X, y)
    C = m.conditioning_
    ones = np.ones((X.shape[0], 1))
    last_cond = [s for s in steps if s.phase == "conditioned"][-1]
    first_plain = [s for s in steps if s.phase == "plain"][0]
    # parameters after the last conditioned SGD update, evaluated on conditioned inputs ...
    theta_c = (last_cond.params - 0.05 * last_cond.noisy_grad).numpy()[0]
    f_before = np.hstack([X @ C, ones]) @ theta_c
    # ... give the same function as the first plain parameters Θ_eff = ΘĈ on raw inputs
    f_after = np.hstack([X, ones]) @ first_plain.params.numpy()[0]
    np.testing.assert_allclose(f_after, f_before, rtol=1e-10, atol=1e-10)
    assert len(steps) == 6 and m.claim.epsilon <= 1.0 + 1e-9


def test_mlp_switch_and_categorical_fit_and_predict():
    X, y, _, _ = _spectral_data(n=200, d=5)
    m = CondDPRegressor(epsilon=math.inf, clip=1.0, epochs=4, lr=0.01, model="mlp", hidden=(16, 8), embed_dim=4,
                        batch_size=50, switch_epoch=2, random_state=0).fit(X, y)
    assert m.predict(X).shape == (200,) and np.all(np.isfinite(m.predict(X)))
    rng = np.random.default_rng(0)
    Xc = np.hstack([X, rng.integers(0, 30, size=(200, 2))])
    for cls in (CondDPRegressor, DPSGDRegressor):
        mc = cls(epsilon=math.inf, clip=1.0, epochs=3, lr=0.01, model="mlp", hidden=(8,), categorical=[5, 6],
                 n_buckets=16, cat_embed_dim=3, batch_size=50, random_state=0).fit(Xc, y)
        assert mc.params_["emb"].shape == (32, 3)
        assert np.all(np.isfinite(mc.predict(Xc)))


def test_mlp_continuity_mapping_preserves_function():
    """Θ_eff = ΘĈ on the input layer leaves every MLP prediction unchanged."""
    X, y, _, _ = _spectral_data(n=100, d=5)
    m = CondDPRegressor(epsilon=math.inf, clip=1.0, epochs=1, lr=0.01, model="mlp", hidden=(8,), embed_dim=3,
                        random_state=0).fit(X, y)
    # fitted params are plain (Θ_eff); re-express them in conditioned coordinates and compare
    C = torch.as_tensor(m.conditioning_, dtype=torch.float32)
    p_cond = dict(m.params_)
    p_cond["W_in"] = m.params_["W_in"] @ torch.linalg.inv(C)
    with torch.no_grad():
        f_plain = m._forward(m.params_, torch.as_tensor(X, dtype=torch.float32))
        f_cond = m._forward(p_cond, torch.as_tensor(X @ m.conditioning_, dtype=torch.float32))
    torch.testing.assert_close(f_plain, f_cond, rtol=1e-4, atol=1e-4)


def test_semi_sensitive_private_columns():
    X, y, _, _ = _spectral_data(n=200, d=6)
    m = CondDPRegressor(epsilon=math.inf, clip=None, epochs=2000, lr=0.02, n_public=4, random_state=0).fit(X, y)
    assert m.conditioning_.shape == (4, 4)
    ols = np.linalg.lstsq(np.hstack([X, np.ones((200, 1))]), y, rcond=None)[0]
    np.testing.assert_allclose(np.r_[m.coef_, m.intercept_], ols, atol=5e-3)


def test_clone_and_params():
    m = CondDPRegressor(switch_epoch=3, epsilon=0.5, clip=2.0)
    c = clone(m)
    assert c.get_params()["switch_epoch"] == 3 and c.get_params()["clip"] == 2.0


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"clip": 0.0}, InvalidParameterError, "clip"),
    ({"clip": -2.0}, InvalidParameterError, "clip"),
    ({"adjacency": "neighbours"}, InvalidParameterError, "adjacency"),
    ({"switch_epoch": 11}, InvalidParameterError, "switch_epoch"),
    ({"switch_epoch": -1}, InvalidParameterError, "switch_epoch"),
    ({"label_bounds": (-0.5, 0.5)}, InvalidInputError, "label_bounds"),
    ({"model": "transformer"}, InvalidParameterError, "model"),
    ({"epsilon": 0.0}, InvalidParameterError, "epsilon"),
])
def test_bad_input_raises(kwargs, exc, match):
    X, y, _, _ = _spectral_data(n=50, d=3)
    with pytest.raises(exc, match=match):
        CondDPRegressor(epochs=10, noise_multiplier=1.0, **kwargs).fit(X, y)


def test_nan_in_public_features_raises():
    X, y, _, _ = _spectral_data(n=50, d=3)
    X[4, 1] = np.nan
    with pytest.raises(InvalidInputError, match="X"):
        DPSGDRegressor(epochs=2, noise_multiplier=1.0).fit(X, y)


@pytest.mark.parametrize("cls", [DPSGDRegressor, CondDPRegressor])
def test_nonprivate_mlp_fits_a_nonlinear_target(cls):
    """The trained function is the predicted one: non-private training drives the training MSE down."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, 4))
    y = np.tanh(X @ [1.0, -1.0, 0.5, 0.0])
    m = cls(epsilon=math.inf, clip=None, epochs=300, lr=0.01, model="mlp", hidden=(16, 8), embed_dim=8,
            init_std=0.3, random_state=0).fit(X, y)
    assert np.mean((m.predict(X) - y) ** 2) < 0.05 * np.var(y)


@pytest.mark.parametrize("cls", [DPSGDRegressor, CondDPRegressor])
def test_regressor_equals_vectorised_runs(cls):
    """The experiments' vectorised path is the regressors' engine: same seed, same parameters."""
    from privaudit.learners.dpsgd import train_linear_dpsgd_runs

    X, y, _, _ = _spectral_data(n=120, d=4, p=1.0)
    kw = dict(epsilon=2.0, delta=1e-5, clip=0.5, epochs=15, lr=0.05, init_std=0.01)
    m = cls(**kw, random_state=11).fit(X, y)
    C = m.conditioning_
    theta = train_linear_dpsgd_runs(X @ C, y, n_runs=1, fit_intercept=True, optimizer="adam", rng=11, **kw)[0]
    np.testing.assert_allclose(np.r_[C @ theta[:-1], theta[-1]], np.r_[m.coef_, m.intercept_], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("cls", [DPSGDRegressor, CondDPRegressor])
def test_check_estimator(cls):
    """Non-private (ε = ∞) the estimators pass every check; private, all but the accuracy check."""
    import warnings

    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exact = check_estimator(cls(epsilon=float("inf"), clip=None, epochs=200, lr=0.1, random_state=0), on_fail=None)
        private = check_estimator(cls(epsilon=1.0, epochs=2, random_state=0), on_fail=None)
    assert [r["check_name"] for r in exact if r["status"] == "failed"] == []
    # check_regressors_train asks for R² > 0.5 on a tiny noisy problem, which a 2-epoch ε = 1 fit cannot reach.
    assert {r["check_name"] for r in private if r["status"] == "failed"} <= {"check_regressors_train"}
