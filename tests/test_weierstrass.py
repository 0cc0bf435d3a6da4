"""Tests of the Weierstrass / Bernoulli transforms of seed 001 (learners/weierstrass_transforms.py).

Every closed form is compared with an independent computation: Gauss–Hermite
quadrature of the defining expectation, Monte Carlo with tolerances from the
standard error (fixed seeds), finite differences, or brute force over a grid.
"""

import math

import numpy as np
import pytest

from privaudit.learners import weierstrass_transforms as W
from privaudit.mechanisms import RandomizedResponse
from privaudit.mechanisms.validation import InvalidInputError, InvalidParameterError, ParameterTypeError

Z = np.linspace(-3.0, 3.0, 13)
#: z-score of the Monte Carlo checks (two-sided ~1e−6 per check)
ZSCORE = 5.0


def mc_check(samples, target, axis=0):
    """Assert |mean − target| <= ZSCORE·SE, SE from the samples themselves."""
    mean = samples.mean(axis)
    se = samples.std(axis, ddof=1) / math.sqrt(samples.shape[axis])
    assert np.all(np.abs(mean - target) <= ZSCORE * se + 1e-12), (mean, target, se)


# ----------------------------------------------------------------- Bernoulli transform
@pytest.mark.parametrize("eps", [0.3, 1.0, 4.0])
def test_keep_probability_matches_randomized_response(eps):
    assert W.keep_probability(eps) == pytest.approx(RandomizedResponse(epsilon=eps).keep_probability, rel=1e-14)
    s, st = W.keep_probability(eps), W.inverse_weight(eps)
    assert st == pytest.approx(math.exp(eps) / (math.exp(eps) - 1), rel=1e-13)
    # The two identities of App. D.1 that make B⁻¹ invert B.
    assert st * s + (1 - st) * (1 - s) == pytest.approx(1.0, abs=1e-12)
    assert st * (1 - s) + (1 - st) * s == pytest.approx(0.0, abs=1e-12)


def test_bernoulli_inverse_roundtrip_and_infinite_epsilon():
    g = lambda y: np.exp(0.7 * y) + 3 * y**2  # noqa: E731
    y = np.array([-1.0, 1.0])
    inner = lambda t: W.bernoulli(g, t, epsilon=1.3)  # noqa: E731
    np.testing.assert_allclose(W.inverse_bernoulli(inner, y, epsilon=1.3), g(y), rtol=1e-12)
    assert W.keep_probability(math.inf) == 1.0 and W.inverse_weight(math.inf) == 1.0


def test_inverse_bernoulli_unbiased_and_variance_monte_carlo():
    eps, n = 0.8, 400_000
    rng = np.random.default_rng(11)
    rr = RandomizedResponse(epsilon=eps)
    g = lambda y: 2.0 + 1.5 * y + 0.25 * y**3  # noqa: E731
    for y in (-1.0, 1.0):
        est = W.inverse_bernoulli(g, rr.release(np.full(n, y), rng), epsilon=eps)
        mc_check(est, g(y))
        var = float(W.inverse_bernoulli_variance(g(1.0), g(-1.0), epsilon=eps))
        # SE of the sample variance: std((x − mean)²)/√n.
        dev2 = (est - est.mean()) ** 2
        assert abs(dev2.mean() - var) <= ZSCORE * dev2.std() / math.sqrt(n)


# ----------------------------------------------------------------- derivatives
@pytest.mark.parametrize("loss", W.LOSSES)
def test_derivatives_match_finite_differences(loss):
    f = W.get_loss(loss)
    h = 1e-4
    for m in range(0, 7):
        num = (f.derivative(Z + h, m) - f.derivative(Z - h, m)) / (2 * h)
        np.testing.assert_allclose(f.derivative(Z, m + 1), num, atol=2e-6 * 4**m)


def test_logistic_base_is_softplus():
    f = W.get_loss("logistic")
    np.testing.assert_allclose(f.derivative(Z, 0), np.log1p(np.exp(-Z)), rtol=1e-13)
    np.testing.assert_allclose(f.derivative(Z, 1), -1 / (1 + np.exp(Z)), rtol=1e-12)


# ----------------------------------------------------------------- W and W⁻¹
@pytest.mark.parametrize("loss", ["exponential", "quadratic"])
@pytest.mark.parametrize("order", [0, 1, 2, 3])
def test_closed_form_weierstrass_matches_quadrature(loss, order):
    f = W.get_loss(loss)
    for v in (0.0, 0.4, 3.0):
        quad = W.gaussian_expectation(lambda u: f.derivative(u, order), Z, v)
        np.testing.assert_allclose(W.weierstrass(loss, order, Z, v), quad, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("loss", ["exponential", "quadratic"])
@pytest.mark.parametrize("order", [0, 1, 2])
def test_w_of_inverse_is_identity_closed_forms(loss, order):
    """W_v[W⁻¹_v f] = f (Thm 5.1) for every v: the quadrature of W⁻¹ recovers f^{(m)}."""
    f = W.get_loss(loss)
    for v in (0.1, 2.0, 10.0):
        back = W.gaussian_expectation(lambda u: W.inverse_weierstrass(loss, order, u, v), Z, v)
        np.testing.assert_allclose(back, f.derivative(Z, order), rtol=1e-9, atol=1e-12)
    # v = 0: both transforms are the identity.
    np.testing.assert_allclose(W.weierstrass(loss, order, Z, 0.0), f.derivative(Z, order))
    np.testing.assert_allclose(W.inverse_weierstrass(loss, order, Z, 0.0), f.derivative(Z, order))


def test_exponential_series_converges_to_closed_form():
    f = W.get_loss("exponential")
    v = 3.0
    series = sum((-v / 2) ** k / math.factorial(k) * f.derivative(Z, 2 * k) for k in range(40))
    np.testing.assert_allclose(W.inverse_weierstrass("exponential", 0, Z, v), series, rtol=1e-12)


def test_logistic_inverse_roundtrip_bias_shrinks_with_k():
    """W_v[W⁻¹_{v,K} f] − f at small v: decreases with K and scales as v^{K+1}."""
    v = 0.4
    biases = [np.abs(W.truncation_bias("logistic", Z, v, k)).max() for k in (1, 2, 3)]
    for k in (1, 2, 3):
        # Leading error term ∝ v^{K+1}: as v → 0, halving v divides the bias by 2^{K+1}
        # (at v = 0.05 the next order still contributes ~2^{K+1}·O(v): 10% tolerance).
        b = np.abs(W.truncation_bias("logistic", Z, 0.05, k)).max()
        b_half = np.abs(W.truncation_bias("logistic", Z, 0.025, k)).max()
        assert b / b_half == pytest.approx(2 ** (k + 1), rel=0.1)
    print("logistic truncation bias sup_z |W[W⁻¹_K f] − f| at v=0.4, K=1,2,3:", biases)
    assert biases[0] > biases[1] > biases[2] > 0


def test_logistic_truncation_bias_matches_monte_carlo():
    """The quadrature bias is the actual bias of W⁻¹_{v,K}[f](z + u), u ~ N(0, v)."""
    rng = np.random.default_rng(5)
    v, k, n = 1.0, 1, 1_000_000
    z0 = np.array([-1.0, 0.0, 2.0])
    u = math.sqrt(v) * rng.standard_normal((n, 1))
    est = W.inverse_weierstrass("logistic", 0, z0 + u, v, k)
    target = W.get_loss("logistic").derivative(z0) + W.truncation_bias("logistic", z0, v, k)
    mc_check(est, target)


def test_logistic_quadrature_weierstrass_matches_monte_carlo():
    rng = np.random.default_rng(3)
    v, n = 2.0, 1_000_000
    u = math.sqrt(v) * rng.standard_normal((n, 1))
    mc_check(W.get_loss("logistic").derivative(Z[::3] + u), W.weierstrass("logistic", 0, Z[::3], v))


def test_series_variance_limit_brute_force():
    f = W.get_loss("logistic")
    zz = np.linspace(-40, 40, 400_001)
    c = [np.abs(f.derivative(zz, 2 * k)).max() / (2**k * math.factorial(k)) for k in range(1, 5)]
    for k_terms in (1, 2, 3):
        brute = min(c[j - 2] / c[j - 1] for j in range(2, k_terms + 2))
        assert W.series_variance_limit("logistic", k_terms) == pytest.approx(brute, rel=1e-6)
    assert W.series_variance_limit("logistic", 1) == pytest.approx(8.0)
    assert W.series_variance_limit("logistic", 2) == pytest.approx(3.0)
    assert math.isinf(W.series_variance_limit("exponential", 1))
    assert math.isinf(W.series_variance_limit("quadratic", 3))


# ----------------------------------------------------------------- composed transform
def test_exponential_noisy_risk_theorem_4_3():
    """T[f](z) = e^{v/2}(S e^{−z} + (1−S) e^{z}) (Thm 4.3) and T[T⁻¹ f] = f, by Monte Carlo."""
    eps_y, v, n = 1.2, 0.8, 400_000
    s = W.keep_probability(eps_y)
    expected = math.exp(v / 2) * (s * np.exp(-Z) + (1 - s) * np.exp(Z))
    np.testing.assert_allclose(W.transform("exponential", Z, variance=v, epsilon_y=eps_y), expected, rtol=1e-12)
    rng = np.random.default_rng(9)
    z0 = np.array([-0.5, 0.3, 1.0])
    flip = np.where(rng.random((n, 1)) < s, 1.0, -1.0)
    zt = flip * (z0 + math.sqrt(v) * rng.standard_normal((n, 1)))
    mc_check(np.exp(-zt), W.transform("exponential", z0, variance=v, epsilon_y=eps_y))
    mc_check(W.inverse_transform("exponential", zt, variance=v, epsilon_y=eps_y), np.exp(-z0))


# ----------------------------------------------------------------- App. D.4 variances
def test_quadratic_inverse_variance_monte_carlo_and_paper_second_moment():
    rng = np.random.default_rng(21)
    p, v, n = 3, 0.6, 400_000
    A = rng.normal(size=(p, p))
    b = rng.normal(size=p)
    c = 0.3
    x = rng.normal(size=p)
    sym = (A + A.T) / 2
    f = lambda X: 0.5 * np.einsum("...i,ij,...j->...", X, A, X) + X @ b + c  # noqa: E731
    xt = x + math.sqrt(v) * rng.standard_normal((n, p))
    est = f(xt) - 0.5 * v * np.trace(sym)  # W⁻¹_v[f] = f − (v/2) Δf
    mc_check(est, f(x))
    var = float(W.quadratic_inverse_variance(x, A, b, variance=v))
    dev2 = (est - est.mean()) ** 2
    assert abs(dev2.mean() - var) <= ZSCORE * dev2.std() / math.sqrt(n)
    t = v / 2  # the paper's printed expression is the second moment f² + 2t‖Σx+b‖² + 2t² tr Σ²
    paper = f(x) ** 2 + 2 * t * np.sum((sym @ x + b) ** 2) + 2 * t**2 * np.trace(sym @ sym)
    assert var + f(x) ** 2 == pytest.approx(paper, rel=1e-12)


def test_exponential_inverse_variance_monte_carlo_and_paper_second_moment():
    rng = np.random.default_rng(22)
    p, v, n = 4, 0.5, 400_000
    alpha = rng.normal(size=p) * 0.5
    x = rng.uniform(-1, 1, size=p)
    xt = x + math.sqrt(v) * rng.standard_normal((n, p))
    est = math.exp(-v * alpha @ alpha / 2) * np.exp(xt @ alpha)
    mc_check(est, math.exp(alpha @ x))
    var = float(W.exponential_inverse_variance(x, alpha, variance=v))
    dev2 = (est - est.mean()) ** 2
    assert abs(dev2.mean() - var) <= ZSCORE * dev2.std() / math.sqrt(n)
    paper = math.exp(2 * alpha @ x + 2 * (v / 2) * alpha @ alpha)
    assert var + math.exp(alpha @ x) ** 2 == pytest.approx(paper, rel=1e-12)


# ----------------------------------------------------------------- bad input
def test_bad_inputs_raise_with_names():
    with pytest.raises(InvalidParameterError, match="n_terms"):
        W.inverse_weierstrass("logistic", 0, Z, 0.1, 0)
    with pytest.raises(InvalidParameterError, match="n_terms"):
        W.inverse_weierstrass("logistic", 0, Z, 0.1)  # no closed form: K required
    with pytest.raises(InvalidParameterError, match="loss"):
        W.inverse_weierstrass("hinge", 0, Z, 0.1)
    with pytest.raises(ParameterTypeError, match="loss"):
        W.get_loss(3)
    with pytest.raises(InvalidParameterError, match="variance"):
        W.inverse_weierstrass("exponential", 0, Z, -1.0)
    with pytest.raises(InvalidInputError, match="z must be finite"):
        W.inverse_weierstrass("exponential", 0, [0.0, np.nan], 0.1)
    with pytest.raises(InvalidParameterError, match="derivative_order"):
        W.inverse_weierstrass("exponential", -1, Z, 0.1)
    with pytest.raises(InvalidParameterError, match="domain"):
        W.inverse_weierstrass("logistic", 0, Z, 3.5, 2)  # v_2 = 3
    with pytest.raises(InvalidParameterError, match="epsilon_y"):
        W.inverse_weight(0.0)
    # Closed forms accept any variance (their condition v < 1/(4a) never binds).
    assert np.all(np.isfinite(W.inverse_weierstrass("exponential", 0, Z, 500.0)))


def test_public_names_are_not_shadowed_by_submodules():
    """``from privaudit.learners import weierstrass`` is the function of ``__all__`` even after
    the transforms module has been imported (it used to return the module ``weierstrass``
    once ``privaudit.learners.iwp`` had imported it)."""
    import types

    import privaudit.learners as learners
    import privaudit.learners.iwp  # noqa: F401  (imports the transforms submodule)
    from privaudit.learners import weierstrass

    assert weierstrass is W.weierstrass and callable(weierstrass)
    assert not [name for name in learners.__all__ if isinstance(getattr(learners, name), types.ModuleType)]
