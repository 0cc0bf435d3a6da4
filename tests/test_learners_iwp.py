"""Tests of the IWP-SGD estimators and learners (seed 001, §5.2, App. D.5/D.6, E.2).

Unbiasedness is checked by Monte Carlo over the actual release mechanisms
(GaussianMechanism + RandomizedResponse) with fixed seeds and tolerances of
ZSCORE standard errors estimated from the samples.
"""

import math
import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.base import clone

from privaudit.learners import IWPSGDClassifier, IWPSGDRegressor, NoisySGDClassifier
from privaudit.learners import iwp as I
from privaudit.learners import iwp_losses as L
from privaudit.learners import weierstrass_transforms as W
from privaudit.learners.release import LocalRelease, encode_binary_labels, release_dataset
from privaudit.mechanisms import PrivacyClaim, RandomizedResponse, analytic_sigma
from privaudit.mechanisms.validation import InvalidInputError, InvalidParameterError, PrivacyLeakWarning

ZSCORE = 5.0
THETA = np.array([0.4, -0.3, 0.2])
X0 = np.array([[0.5, -0.2, 0.9], [-0.7, 0.1, 0.3]])
Y0 = np.array([1.0, -1.0])


def mc_check(samples, target, axis=0):
    mean = samples.mean(axis)
    se = samples.std(axis, ddof=1) / math.sqrt(samples.shape[axis])
    assert np.all(np.abs(mean - target) <= ZSCORE * se + 1e-12), (mean, target, se)


def releases(x, y, sigma, eps_y, n, rng):
    """n independent releases of one record (x, y): (n, p) features, (n,) labels."""
    xt = x + sigma * rng.standard_normal((n, x.size))
    yt = RandomizedResponse(epsilon=eps_y).release(np.full(n, y), rng)
    return xt, yt


# ----------------------------------------------------------------- unbiasedness (MC)
@pytest.mark.parametrize("loss", ["quadratic", "exponential"])
def test_iwp_loss_and_gradient_unbiased(loss):
    sigma, eps_y, n = 0.8, 1.0, 300_000
    rng = np.random.default_rng(1)
    f = W.get_loss(loss)
    for x, y in zip(X0, Y0):
        xt, yt = releases(x, y, sigma, eps_y, n, rng)
        ell = L.iwp_loss(THETA, xt, yt, loss=loss, sigma=sigma, epsilon_y=eps_y)
        grad = L.iwp_gradient(THETA, xt, yt, loss=loss, sigma=sigma, epsilon_y=eps_y)
        m = THETA @ x * y
        mc_check(ell, f.derivative(m))
        mc_check(grad, f.derivative(m, 1) * y * x)
        # The uncorrected loss on the same releases is biased (Thm 4.2): far outside the band.
        plain = L.glm_loss(THETA, xt, yt, loss=loss)
        assert abs(plain.mean() - f.derivative(m)) > 10 * plain.std() / math.sqrt(n)
        # Closed-form variance of ℓ̃ (App. D.4 combined by the law of total variance).
        var = L.iwp_loss_variance(THETA, x[None], np.array([y]), loss=loss, sigma=sigma, epsilon_y=eps_y)[0]
        dev2 = (ell - ell.mean()) ** 2
        assert abs(dev2.mean() - var) <= ZSCORE * dev2.std() / math.sqrt(n)


def test_gradient_without_minus_sigma2_theta_term_is_biased():
    """The −σ²θ·W⁻¹[f''] term of App. D.6 is needed: dropping it leaves a bias of σ²θ·f''."""
    sigma, eps_y, n = 0.8, 1.0, 300_000
    rng = np.random.default_rng(2)
    x, y = X0[0], Y0[0]
    xt, yt = releases(x, y, sigma, eps_y, n, rng)
    grad = L.iwp_gradient(THETA, xt, yt, loss="quadratic", sigma=sigma, epsilon_y=eps_y)
    truncated = grad + sigma**2 * THETA  # quadratic: c = 1
    bias = truncated.mean(0) - (THETA @ x * y - 1) * y * x
    se = truncated.std(0) / math.sqrt(n)
    np.testing.assert_allclose(bias, sigma**2 * THETA, atol=ZSCORE * se.max())
    assert np.all(np.abs(bias) > 10 * se)


@pytest.mark.parametrize("loss", W.LOSSES)
def test_gradient_is_derivative_of_loss(loss):
    """∇ℓ̃ (with the −σ²θ·W⁻¹[f''] term) is the exact θ-derivative of ℓ̃ at fixed releases."""
    rng = np.random.default_rng(3)
    xt = rng.normal(size=(50, 3))
    yt = np.where(rng.random(50) < 0.5, 1.0, -1.0)
    kw = dict(loss=loss, sigma=0.9, epsilon_y=1.5, n_terms=2)
    grad = L.iwp_gradient(THETA, xt, yt, **kw)
    h = 1e-6
    for j in range(3):
        e = np.zeros(3)
        e[j] = h
        num = (L.iwp_loss(THETA + e, xt, yt, **kw) - L.iwp_loss(THETA - e, xt, yt, **kw)) / (2 * h)
        np.testing.assert_allclose(grad[:, j], num, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_logistic_fast_terms_match_generic_series(k):
    """The learners' one-sided logistic kernel (softplus symmetry) equals the two-sided T⁻¹ series."""
    rng = np.random.default_rng(14)
    xt = rng.normal(size=(40, 3))
    yt = np.where(rng.random(40) < 0.5, 1.0, -1.0)
    sigma, eps_y = 1.1, 0.9
    v = sigma**2 * THETA @ THETA
    z = (xt @ THETA) * yt
    st = W.inverse_weight(eps_y)
    ell = L.iwp_loss(THETA, xt, yt, loss="logistic", sigma=sigma, epsilon_y=eps_y, n_terms=k)
    expected = W.inverse_transform("logistic", z, variance=v, epsilon_y=eps_y, n_terms=k)
    np.testing.assert_allclose(ell, expected, rtol=1e-12, atol=1e-14)
    a = st * W.inverse_weierstrass("logistic", 1, z, v, k) - (1 - st) * W.inverse_weierstrass("logistic", 1, -z, v, k)
    lower = W.inverse_weierstrass("logistic", 2, z, v, k - 1) if k > 1 else W.get_loss("logistic").derivative(z, 2)
    grad = (a * yt)[:, None] * xt - sigma**2 * lower[:, None] * THETA  # W⁻¹[f''] is even in z
    np.testing.assert_allclose(L.iwp_gradient(THETA, xt, yt, loss="logistic", sigma=sigma, epsilon_y=eps_y,
                                              n_terms=k), grad, rtol=1e-10, atol=1e-13)


def test_logistic_bias_shrinks_with_k_and_matches_monte_carlo():
    """At small σ the truncation bias of ℓ̃ shrinks with K; MC agrees with the quadrature bias."""
    sigma, eps_y, n = 1.0, 2.0, 400_000
    rng = np.random.default_rng(4)
    x, y = X0[0], Y0[0]
    v = sigma**2 * THETA @ THETA
    m = THETA @ x * y
    xt, yt = releases(x, y, sigma, eps_y, n, rng)
    biases = []
    for k in (1, 2, 3):
        ell = L.iwp_loss(THETA, xt, yt, loss="logistic", sigma=sigma, epsilon_y=eps_y, n_terms=k)
        # B⁻¹ is exact, so the bias of ℓ̃ is S̃·b(m) + (1−S̃)·b(−m), with b the W⁻¹ truncation bias.
        st = W.inverse_weight(eps_y)
        b = st * W.truncation_bias("logistic", m, v, k) + (1 - st) * W.truncation_bias("logistic", -m, v, k)
        mc_check(ell, W.get_loss("logistic").derivative(m) + b)
        biases.append(float(abs(b)))
    print(f"logistic IWP loss bias at v={v:.3f}, K=1,2,3: {biases}")
    assert biases[0] > biases[1] > biases[2]


def test_regression_estimators_unbiased():
    sigma, sigma_y, n = 0.7, 1.3, 300_000
    rng = np.random.default_rng(5)
    x, y = X0[0], 0.8
    xt = x + sigma * rng.standard_normal((n, 3))
    yt = y + sigma_y * rng.standard_normal(n)
    mc_check(L.iwp_regression_loss(THETA, xt, yt, sigma=sigma, sigma_y=sigma_y), 0.5 * (THETA @ x - y) ** 2)
    mc_check(L.iwp_regression_gradient(THETA, xt, yt, sigma=sigma), (THETA @ x - y) * x)


# ----------------------------------------------------------------- release
def test_release_calibration_and_claim():
    rng = np.random.default_rng(6)
    X = rng.uniform(-1, 1, (100_000, 4))
    y = rng.integers(0, 2, 100_000)
    rel = release_dataset(X, y, epsilon=3.0, delta=1e-5, split=0.4, bounds=(-1, 1), random_state=0)
    assert rel.sigma == pytest.approx(analytic_sigma(1.2, 1e-5, 4.0), rel=1e-12)  # diameter of [−1,1]^4 = 4
    assert rel.epsilon_y == pytest.approx(1.8)
    assert rel.claim == PrivacyClaim(3.0, 1e-5, "any")
    assert rel.classes == (0.0, 1.0)
    y_pm = np.where(y == 1, 1.0, -1.0)
    kept = (rel.y_tilde == y_pm).mean()
    s = W.keep_probability(1.8)
    assert abs(kept - s) <= ZSCORE * math.sqrt(s * (1 - s) / y.size)
    noise = rel.X_tilde - X
    assert abs(noise.std() - rel.sigma) <= ZSCORE * rel.sigma / math.sqrt(2 * noise.size)
    with pytest.raises(ValueError):
        rel.X_tilde[0, 0] = 1.0  # read-only: a release is published once


def test_release_regression_and_budget_split():
    rng = np.random.default_rng(7)
    X = rng.uniform(0, 1, (1000, 2))
    y = rng.uniform(-2, 2, 1000)
    rel = release_dataset(X, y, epsilon=2.0, delta=1e-5, split=0.5, bounds=(0, 1), label_bounds=(-2, 2),
                          task="regression", random_state=1)
    assert rel.sigma_y == pytest.approx(analytic_sigma(1.0, 0.5e-5, 4.0), rel=1e-12)
    assert rel.sigma == pytest.approx(analytic_sigma(1.0, 0.5e-5, math.sqrt(2)), rel=1e-12)


def test_release_warnings_for_leaks_and_clipping():
    X = np.array([[0.0, 2.0], [0.5, 0.5], [-3.0, 0.0]])
    y = np.array([1, -1, 1])
    with pytest.warns(PrivacyLeakWarning, match="derived from the data"):
        release_dataset(X, y, epsilon=1.0, delta=1e-5, random_state=0)
    with pytest.warns(UserWarning, match="2 of 3 records lie outside"):
        rel = release_dataset(X, y, epsilon=1.0, delta=1e-5, bounds=(-1, 1), random_state=0)
    assert rel.n_clipped == 2


@pytest.mark.parametrize("split", [0.0, 1.0, -0.1, 1.5])
def test_release_bad_split(split):
    with pytest.raises(InvalidParameterError, match="split"):
        release_dataset(np.zeros((3, 2)), np.array([1, -1, 1]), epsilon=1.0, delta=1e-5, split=split, bounds=(-1, 1))


def test_label_encoding():
    assert encode_binary_labels([0, 1, 1])[1] == (0.0, 1.0)
    y, classes = encode_binary_labels(["3", "7", "3"]) if False else encode_binary_labels([3, 7, 3])
    np.testing.assert_array_equal(y, [-1, 1, -1])
    assert classes == (3.0, 7.0)
    with pytest.raises(InvalidInputError, match="binary"):
        encode_binary_labels([0, 1, 2])
    with pytest.raises(InvalidInputError, match="finite"):
        encode_binary_labels([0, np.nan])


# ----------------------------------------------------------------- learners
def synthetic(n, rng, beta=(1.0, -0.5)):
    beta = np.asarray(beta)
    X = rng.uniform(-1, 1, (n, beta.size))
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-3 * X @ beta)), 1.0, -1.0)
    return X, y


def test_learner_api_and_claim():
    rng = np.random.default_rng(8)
    X, y = synthetic(5000, rng)
    y01 = (y > 0).astype(int)
    est = IWPSGDClassifier(epsilon=4.0, bounds=(-1, 1), step=0.01, lam=1.0, trace_every=10, random_state=0)
    assert clone(est).get_params() == est.get_params()
    assert est.fit(X, y01) is est
    assert isinstance(est.claim, PrivacyClaim) and est.claim.epsilon == 4.0 and est.claim.adjacency == "any"
    assert isinstance(est.release_, LocalRelease)
    assert set(np.unique(est.predict(X))) <= {0, 1}
    assert est.risk_trace_.shape == (est.n_batches_,) == (math.ceil(5000 / 128),)
    assert est.coef_trace_.shape == (est.n_batches_ // 10, 2)
    assert est.risk_path(X, y01).shape == (est.n_batches_ // 10,)
    assert est.score(X, y01) > 0.6


def test_partial_fit_equals_fit_on_batch_aligned_chunks():
    rng = np.random.default_rng(9)
    X, y = synthetic(1024, rng)
    rel = release_dataset(X, y, epsilon=4.0, delta=1e-5, bounds=(-1, 1), random_state=0)
    kw = dict(shuffle=False, step=0.01, lam=1.0, batch_size=64)
    full = IWPSGDClassifier(**kw).fit(rel)
    part = IWPSGDClassifier(**kw)
    part.partial_fit(rel.subset(slice(0, 512))).partial_fit(rel.subset(slice(512, 1024)))
    np.testing.assert_allclose(part.coef_, full.coef_, rtol=1e-12)
    np.testing.assert_allclose(part.risk_trace_, full.risk_trace_, rtol=1e-12)


def exp_risk_minimisers(Xte, yte, lam, sigma, eps_y):
    """argmin of the clean risk and of the noisy risk T[ℓ] (Thm 4.3) on a large sample."""
    U = Xte * yte[:, None]

    def clean(t):
        return np.exp(-U @ t).mean() + lam / 2 * t @ t

    def noisy(t):
        v = sigma**2 * t @ t
        return W.transform("exponential", U @ t, variance=v, epsilon_y=eps_y).mean() + lam / 2 * t @ t

    x0 = np.zeros(U.shape[1])
    return minimize(clean, x0).x, minimize(noisy, x0).x


def test_convergence_iwp_to_real_noisy_stays_biased():
    """Final risk: IWP-SGD's excess over SGD-real shrinks with n; noisy SGD's does not.

    Step γ_n = 20 log(n)/n (Thm 5.5's O(log n / n)), exponential loss, λ = 1, ε = 8 split 1/2,
    3 repetitions averaged. Noisy SGD converges to argmin T[ℓ] (Thm 4.3), IWP-SGD to argmin ℓ.
    """
    rng = np.random.default_rng(10)
    Xte, yte = synthetic(200_000, rng)
    lam, eps = 1.0, 8.0
    excess, coefs = {}, {}
    for n in (20_000, 200_000):
        res = {"real": [], "noisy": [], "iwp": []}
        for rep in range(3):
            X, y = synthetic(n, np.random.default_rng(100 + rep))
            rel = release_dataset(X, y, epsilon=eps, delta=1e-5, bounds=(-1, 1), random_state=rep)
            kw = dict(step=20 * math.log(n) / n, lam=lam, batch_size=16, random_state=rep)
            res["real"].append(I.SGDRealClassifier(**kw).fit(X, y).coef_)
            res["noisy"].append(NoisySGDClassifier(**kw).fit(rel).coef_)
            res["iwp"].append(IWPSGDClassifier(**kw).fit(rel).coef_)
        risk = {k: L.glm_risk(np.array(v), Xte, yte, lam=lam).mean() for k, v in res.items()}
        excess[n] = {k: risk[k] - risk["real"] for k in ("noisy", "iwp")}
        coefs[n] = {k: np.mean(v, 0) for k, v in res.items()}
    print("excess final risk over SGD-real:", excess)
    assert excess[200_000]["iwp"] < excess[20_000]["iwp"] / 2
    assert excess[200_000]["noisy"] > 20 * excess[200_000]["iwp"]
    assert excess[200_000]["noisy"] > 0.5 * excess[20_000]["noisy"]  # bias, not variance
    theta_star, theta_noisy_star = exp_risk_minimisers(Xte, yte, lam, rel.sigma, rel.epsilon_y)
    c = coefs[200_000]
    assert np.linalg.norm(c["iwp"] - theta_star) < 0.2 * np.linalg.norm(theta_noisy_star - theta_star)
    assert np.linalg.norm(c["noisy"] - theta_noisy_star) < 0.2 * np.linalg.norm(theta_noisy_star - theta_star)


def test_regressor_recovers_clean_solution():
    rng = np.random.default_rng(11)
    n, beta = 200_000, np.array([1.0, -0.6])
    X = rng.uniform(-1, 1, (n, 2))
    y = np.clip(X @ beta + 0.1 * rng.standard_normal(n), -2, 2)
    kw = dict(step=0.01, lam=0.1, batch_size=64, random_state=0)
    rel = release_dataset(X, y, epsilon=20.0, delta=1e-5, bounds=(-1, 1), label_bounds=(-2, 2),
                          task="regression", random_state=0)
    iwp = IWPSGDRegressor(**kw).fit(rel)
    noisy = I.NoisySGDRegressor(**kw).fit(rel)
    real = I.SGDRealRegressor(**kw).fit(X, y)
    ridge = np.linalg.solve(X.T @ X / n + 0.1 * np.eye(2), X.T @ y / n)
    np.testing.assert_allclose(real.coef_, ridge, atol=0.02)
    # Attenuation bias of the uncorrected fit: θ̃* = (Σ + σ²I + λI)⁻¹ X'y/n.
    atten = np.linalg.solve(X.T @ X / n + (0.1 + rel.sigma**2) * np.eye(2), X.T @ y / n)
    assert np.linalg.norm(noisy.coef_ - atten) < 0.25 * np.linalg.norm(atten - ridge)
    print("regression: ridge", ridge, "IWP", iwp.coef_, "noisy", noisy.coef_, "attenuated", atten)
    assert np.linalg.norm(iwp.coef_ - ridge) < 0.25 * np.linalg.norm(atten - ridge)
    assert iwp.claim.epsilon == 20.0


# ----------------------------------------------------------------- bad input
def test_learner_bad_inputs():
    rng = np.random.default_rng(12)
    X, y = synthetic(500, rng)
    kw = dict(bounds=(-1, 1), random_state=0)
    with pytest.raises(InvalidInputError, match="binary"):
        IWPSGDClassifier(**kw).fit(X, np.arange(500) % 3)
    Xbad = X.copy()
    Xbad[3, 1] = np.inf
    with pytest.raises(InvalidInputError, match="finite"):
        IWPSGDClassifier(**kw).fit(Xbad, y)
    with pytest.raises(InvalidParameterError, match="n_terms"):
        IWPSGDClassifier(loss="logistic", n_terms=0, **kw).fit(X, y)
    with pytest.raises(InvalidParameterError, match="split"):
        IWPSGDClassifier(split=1.0, **kw).fit(X, y)
    with pytest.raises(InvalidParameterError, match="loss"):
        IWPSGDClassifier(loss="hinge", **kw).fit(X, y)
    # σ²R² outside the logistic series' domain (v_1 = 8): refused before training.
    with pytest.raises(InvalidParameterError, match="domain"):
        IWPSGDClassifier(loss="logistic", n_terms=1, radius=5.0, epsilon=1.0, **kw).fit(X, y)
    rel = release_dataset(X, y, epsilon=2.0, delta=1e-5, bounds=(-1, 1), random_state=0)
    with pytest.raises(InvalidInputError, match="clean data"):
        I.SGDRealClassifier().fit(rel)
    with pytest.raises(InvalidInputError, match="not both"):
        IWPSGDClassifier().fit(rel, y)
    with pytest.raises(InvalidInputError, match="regression"):
        IWPSGDRegressor().fit(rel)
    with pytest.raises(InvalidInputError, match="y_tilde"):
        L.iwp_loss(THETA[:2], X, y * 2, sigma=1.0, epsilon_y=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        with pytest.raises(PrivacyLeakWarning):
            IWPSGDClassifier(random_state=0).fit(X, y)  # bounds not declared


def test_logistic_learner_within_domain_reports_bias():
    rng = np.random.default_rng(13)
    X, y = synthetic(20_000, rng)
    rel = release_dataset(X, y, epsilon=8.0, delta=1e-5, bounds=(-1, 1), random_state=0)
    radius = 0.9 * math.sqrt(W.series_variance_limit("logistic", 2)) / rel.sigma
    est = IWPSGDClassifier(loss="logistic", n_terms=2, radius=radius, step=0.01, lam=1.0, random_state=0).fit(rel)
    assert est.max_variance_ <= rel.sigma**2 * radius**2 * (1 + 1e-12)
    assert 0 <= est.truncation_bias_ < 0.05
