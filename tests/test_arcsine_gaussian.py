"""The hidden-phase arcsine⊛Gaussian law against independent computations.

Density: scipy's adaptive quadrature over φ; score: central differences of the density;
Fisher information and moments: Monte Carlo draws (tolerances from conftest's policy).
"""

import math

import numpy as np
import pytest
from conftest import assert_within_se, mc_check
from scipy import integrate, stats

from privaudit.mechanisms import InvalidParameterError, ModulatedMechanism
from privaudit.mechanisms.arcsine_gaussian import ArcsineGaussian

LAWS = [(0.6, 0.7), (1.5, 0.3), (2.0, 0.05)]


def _quad_pdf(u: float, a: float, s: float) -> float:
    val, _ = integrate.quad(lambda phi: stats.norm.pdf(u, a * math.cos(phi), s), 0, 2 * math.pi, limit=400, epsabs=0)
    return val / (2 * math.pi)


@pytest.mark.parametrize("a, s", LAWS)
def test_logpdf_matches_adaptive_quadrature_and_normalises(a, s):
    law = ArcsineGaussian(a, s)
    u = np.array([-a - 2 * s, -0.5 * a, 0.0, 0.3 * a + 0.1 * s, a, a + s])
    exact = np.log([_quad_pdf(v, a, s) for v in u])
    np.testing.assert_allclose(law.logpdf(u), exact, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(law.logpdf_interpolated(u), exact, atol=2e-4)
    grid = np.linspace(-a - 12 * s, a + 12 * s, 40001)
    assert np.trapezoid(law.pdf(grid), grid) == pytest.approx(1.0, abs=1e-8)


@pytest.mark.parametrize("a, s", LAWS)
def test_score_is_the_derivative_of_logpdf(a, s):
    law = ArcsineGaussian(a, s)
    u = np.linspace(-a - s, a + s, 9)
    h = 1e-5 * s
    fd = (law.logpdf(u + h) - law.logpdf(u - h)) / (2 * h)
    np.testing.assert_allclose(law.score(u), fd, rtol=1e-5, atol=1e-5 / s)
    fd2 = (law.score(u + h) - law.score(u - h)) / (2 * h)
    np.testing.assert_allclose(law.score_derivative(u), fd2, rtol=1e-4, atol=1e-4 / s**2)


@pytest.mark.parametrize("a, s", LAWS[:2])
def test_fisher_information_and_moments_against_monte_carlo(a, s):
    law = ArcsineGaussian(a, s)
    u = law.sample(200_000, np.random.default_rng(0))
    score = law.score(u)
    mc_check(np.stack([score, score**2 - law.fisher_information(), u, u**2 - law.variance], 1),
             np.zeros(4), n_tests=4)
    assert law.fisher_information() < 1 / s**2  # convolution cannot add location information


def test_limits_mode_and_validation():
    assert ArcsineGaussian(0.0, 0.5).fisher_information() == 4.0
    assert ArcsineGaussian(0.0, 0.5).mode() == 0.0
    assert ArcsineGaussian(0.6, 0.7).mode() == 0.0           # unimodal when A ≲ σ·sqrt(2)
    law = ArcsineGaussian(1.5, 0.3)
    u = law.mode()
    grid = np.linspace(0, 2, 200001)
    assert u == pytest.approx(grid[np.argmax(law.logpdf(grid))], abs=2e-5)
    assert abs(law.score(np.array([u]))[0]) < 1e-8
    with pytest.raises(InvalidParameterError, match="sigma"):
        ArcsineGaussian(1.0, 0.0)
    with pytest.raises(InvalidParameterError, match="amplitude"):
        ArcsineGaussian(-1.0, 1.0)


def test_modulated_mechanism_uses_the_law_along_its_vectors():
    mech = ModulatedMechanism(alpha=0.4, lam=1.2, omega=0.3, dim=2, sigma=0.4)
    x = np.array([0.3, -0.2])
    out = mech.sample(x, 50_000, rng=1)
    along = (out - 0.6 * x) @ mech.basis[:, 0]
    law = mech.hidden_phase_law
    assert (law.amplitude, law.sigma) == (1.2, 0.4)
    # Kolmogorov–Smirnov against the law's CDF (trapezoid of its density).
    grid = np.linspace(-1.2 - 10 * 0.4, 1.2 + 10 * 0.4, 20001)
    cdf = np.concatenate([[0], np.cumsum((law.pdf(grid[1:]) + law.pdf(grid[:-1])) / 2 * np.diff(grid))])
    p = stats.kstest(along, lambda v: np.interp(v, grid, cdf)).pvalue
    assert p > 1e-6
    info = mech.marginal_fisher_information(x)
    v = mech.basis[:, 0]
    assert_within_se(v @ info @ v, 0.36 * law.fisher_information(), 0.0)
