"""Floating-point safety of privaudit's own Laplace and Gaussian (issue 14, Mironov 2012).

* An exact-reachability attack on numpy's Laplace sampler, written here independently of
  privaudit.attacks, finds outputs of the textbook float Laplace reachable under x′ only.
* Against the dithered-lattice mechanisms every sampled output is reachable under both
  neighbouring inputs: the doubles they can output, {γ·fl(K + u)}, do not depend on x, and
  each output lies within the noise support of both inputs.
* Their exact densities match Monte Carlo frequencies; their privacy (pure ε for Laplace,
  the continuous Gaussian profile for the Gaussian) holds for the dithered law, computed by
  numerical integration independently of the mechanisms' own methods.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from privaudit.mechanisms import (
    GaussianMechanism,
    LaplaceMechanism,
    UnsafeFloatGaussianMechanism,
    UnsafeFloatLaplaceMechanism,
)
from privaudit.mechanisms.gaussian import float_safe_gaussian, float_safe_gaussian_logpdf
from privaudit.mechanisms.lattice import GRID_BITS, grid_step
from privaudit.mechanisms.samplers import MAX_EXPONENTIAL

CONF = 0.999
Z = stats.norm.ppf(1 - (1 - CONF) / 2)


def numpy_laplace_reachable(o: float, x: float, b: float, J: int = 3) -> bool:
    """Can ``fl(x + v)`` equal ``o`` for a value v that numpy's Laplace(0, b) sampler returns?

    numpy: U = k·2⁻⁵³; v = b·log(U + U) if U < ½ else −b·log(2 − U − U) (libm log).
    Invert t = o − x to the nearest k and try k − J … k + J with the same expressions.
    """
    t = o - x
    out = False
    for sign in (1.0, -1.0):
        w = math.exp(sign * t / b)  # w = 2U (U < ½) or 2 − 2U (U ≥ ½)
        if not 0 < w <= 1:
            continue
        k0 = round((w / 2 if sign > 0 else 1 - w / 2) * 2.0**53)
        for k in range(k0 - J, k0 + J + 1):
            u = k * 2.0**-53
            if not 0 < u < 1:
                continue
            v = b * math.log(u + u) if u < 0.5 else -b * math.log(2.0 - u - u)
            out |= (x + v) == o
    return out


def test_exact_reachability_attack_breaks_the_textbook_float_laplace():
    mech = UnsafeFloatLaplaceMechanism(epsilon=1.0)
    outs = mech.sample(np.ones(1), 2000, rng=0)[:, 0]
    from_x_prime = [numpy_laplace_reachable(o, 1.0, mech.scale) for o in outs]
    from_x = [numpy_laplace_reachable(o, 0.0, mech.scale) for o in outs]
    # The inversion is exact: every output of x′ is found reachable from x′ ...
    assert all(from_x_prime)
    # ... and many are impossible under x: each of them proves the input was x′ (ε = ∞).
    assert np.mean(from_x) < 0.5


def _lattice_reachable(y: np.ndarray, step: float) -> np.ndarray:
    """Whether each y equals γ·fl(K + u) for an integer K and a 53-bit uniform u (independent of x)."""
    z = y / step
    k = np.floor(z)
    u = z - k  # exact: z and its floor are within a factor 2 or z is small
    big = np.abs(z) >= 1
    on_grid = (u * 2.0**53) == np.rint(u * 2.0**53)
    return big | on_grid


@pytest.mark.parametrize(
    "mech, support",
    [(LaplaceMechanism(epsilon=1.0), MAX_EXPONENTIAL), (GaussianMechanism(epsilon=1.0, delta=1e-5), 13.0),
     (LaplaceMechanism(epsilon=0.3, sensitivity=2.5), MAX_EXPONENTIAL)],
)
def test_every_output_is_reachable_from_both_neighbours(mech, support):
    scale = getattr(mech, "sigma", None) or mech.scale
    x, x_prime = np.array([0.1, -2.0]), np.array([0.1 + mech.sensitivity, -2.0])
    for src in (x, x_prime):
        y = mech.sample(src, 20_000, rng=1)
        assert np.all(_lattice_reachable(y, mech.lattice_step))
        for inp in (x, x_prime):
            assert np.all(np.abs(y - inp) / scale < support)
        # Atoms: outputs do not repeat (the dither makes the law continuous).
        assert np.unique(y[:, 0]).size == y.shape[0]


@pytest.mark.parametrize(
    "safe, unsafe, attacker",
    [(LaplaceMechanism(epsilon=1.0), UnsafeFloatLaplaceMechanism(epsilon=1.0), "reach-numpy-laplace"),
     (GaussianMechanism(epsilon=1.0, delta=1e-5), UnsafeFloatGaussianMechanism(epsilon=1.0, delta=1e-5),
      "reach-numpy-normal")],
)
def test_registered_reachability_attackers_catch_the_textbook_and_not_ours(safe, unsafe, attacker):
    """The exact-reachability attackers written against numpy's samplers (privaudit.attacks.reachability)."""
    from privaudit.audit import audit_tradeoff

    x, x_prime = np.zeros(1), np.ones(1)
    bad = audit_tradeoff(unsafe, x, x_prime, n=20_000, attacker=attacker, rng=0)
    assert bad.verdict == "violation" and bad.epsilon_lb > 3 * unsafe.claim.epsilon
    good = audit_tradeoff(safe, x, x_prime, n=20_000, attacker=attacker, rng=0)
    assert good.verdict == "pass"


def test_lattice_step_is_a_power_of_two_tied_to_the_scale():
    for scale in (0.37, 1.0, 3.73, 1e6):
        step = grid_step(scale)
        assert math.frexp(step)[0] == 0.5
        assert 2.0**-GRID_BITS / 2 < step / scale <= 2.0**-GRID_BITS


def _dithered_density(v, h: float, dist) -> np.ndarray:
    """Density (per unit of v) of symmetric noise + uniform dither of half-width h, by an independent formula."""
    a = np.abs(v)  # symmetric noise: use the survival function, accurate in the tail
    return (dist.sf(a - h) - dist.sf(a + h)) / (2 * h)


@pytest.mark.parametrize("mech, dist", [(LaplaceMechanism(epsilon=2.0), stats.laplace),
                                        (GaussianMechanism(sigma=0.8), stats.norm)])
def test_log_density_is_the_dithered_law(mech, dist):
    scale = getattr(mech, "sigma", None) or mech.scale
    x = np.array([0.25])
    y = np.array([[-3.0], [0.25], [0.2500001], [1.7], [9.0]]) * scale
    h = mech.lattice_step / (2 * scale)
    want = np.log(_dithered_density((y[:, 0] - x[0]) / scale, h, dist) / scale)
    assert np.allclose(mech.log_density(y, x), want, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("mech, dist", [(LaplaceMechanism(epsilon=1.0), stats.laplace),
                                        (GaussianMechanism(sigma=1.3), stats.norm)])
def test_histogram_matches_the_density(mech, dist):
    """Bin frequencies vs the (dithered ≈ continuous) law; chi-square at level 1 − CONF."""
    scale = getattr(mech, "sigma", None) or mech.scale
    n = 200_000
    y = mech.sample(np.array([0.5]), n, rng=3)[:, 0]
    edges = 0.5 + scale * np.linspace(-4, 4, 41)
    counts, _ = np.histogram(y, edges)
    p = np.diff(dist.cdf((edges - 0.5) / scale))  # dither changes bin masses by O((γ/scale)²) ≈ 1e-7
    expected = n * p
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < stats.chi2.ppf(CONF, df=len(expected))


def test_laplace_dithered_law_is_pure_epsilon_dp():
    """max over outputs of the log-density ratio between x and x + Δ equals ε (to O(γ/b)), never more."""
    mech = LaplaceMechanism(epsilon=0.7, sensitivity=1.5)
    grid = np.linspace(-20, 22, 200_001)[:, None] * mech.scale
    ratio = mech.log_density(grid, np.zeros(1)) - mech.log_density(grid, np.full(1, 1.5))
    assert np.max(np.abs(ratio)) <= 0.7 + 1e-9  # 1e-9: float evaluation of the log-densities
    assert np.max(np.abs(ratio)) > 0.7 - 1e-3


def test_gaussian_dithered_profile_is_below_the_continuous_claim():
    """δ(ε) of the dithered 1-D release, integrated numerically, is ≤ the claimed continuous profile and close to it."""
    mech = GaussianMechanism(sigma=0.9)
    h = mech.lattice_step / (2 * mech.sigma)
    mu = 1 / mech.sigma

    def delta(eps: float) -> float:
        f = lambda v: max(0.0, _dithered_density(v, h, stats.norm) - math.exp(eps) * _dithered_density(v - mu, h, stats.norm))
        return integrate.quad(f, -12, 14, points=[mu / 2 + eps / mu], limit=400, epsabs=1e-14)[0]

    for eps in (0.0, 0.5, 1.5):
        exact = delta(eps)
        assert exact <= mech.exact_delta(eps) + 1e-12
        assert exact == pytest.approx(mech.exact_delta(eps), rel=1e-5)


def test_fisher_information_of_the_dither():
    """I = 1/(σ² + γ²/12) to leading order (Gaussian ∗ uniform), and ≤ 1/σ²."""
    mech = GaussianMechanism(sigma=2.0)
    info = mech.fisher_information(np.zeros(3))
    assert np.allclose(info, np.diag(np.diag(info)))
    expected = 1 / (mech.sigma**2 + mech.lattice_step**2 / 12)
    assert np.allclose(np.diag(info), expected, rtol=1e-9)
    assert np.all(np.diag(info) <= 1 / mech.sigma**2)


def test_float_error_is_tiny_and_the_unsafe_ones_are_unbounded():
    eps_slack, delta_slack = GaussianMechanism(epsilon=1.0, delta=1e-5).float_error(d=100)
    assert eps_slack < 1e-6 and delta_slack < 1e-10
    assert LaplaceMechanism(epsilon=1.0).float_error(d=100) == (200 * 2.0**-27, 0.0)
    assert UnsafeFloatLaplaceMechanism(epsilon=1.0).float_error() == (math.inf, 1.0)
    assert UnsafeFloatGaussianMechanism(sigma=1.0).float_error() == (math.inf, 1.0)


def test_unsafe_variants_keep_the_textbook_law():
    lap = UnsafeFloatLaplaceMechanism(epsilon=1.0)
    y = lap.sample(np.zeros(1), 5, rng=4)
    assert np.array_equal(y, np.random.default_rng(4).laplace(0.0, 1.0, (5, 1)))
    g = UnsafeFloatGaussianMechanism(sigma=2.0)
    assert np.array_equal(g.sample(np.ones(2), 3, rng=5), 1 + 2.0 * np.random.default_rng(5).standard_normal((3, 2)))
    assert np.allclose(g.log_density(np.zeros((1, 2)), np.ones(2)), stats.norm.logpdf([0, 0], 1, 2).sum())


def test_float_safe_gaussian_is_elementwise_and_float_safe():
    X = np.random.default_rng(6).normal(size=(4000, 3))
    out = float_safe_gaussian(X, 0.5, rng=7)
    assert out.shape == X.shape and np.all(_lattice_reachable(out, grid_step(0.5)))
    resid = (out - X).ravel()
    se_var = math.sqrt(2 / (resid.size - 1)) * 0.25
    assert abs(resid.var() - 0.25) < Z * se_var
    assert np.allclose(float_safe_gaussian_logpdf(out - X, 0.5), GaussianMechanism(sigma=0.5).log_density(out - X, np.zeros(3)))


def test_float_safe_laplace_matches_the_mechanism():
    from privaudit.mechanisms.laplace import float_safe_laplace

    X = np.linspace(-3, 3, 3000).reshape(1000, 3)
    out = float_safe_laplace(X, 2.0, rng=8)
    mech = LaplaceMechanism(epsilon=0.5)  # scale 2
    assert np.all(_lattice_reachable(out, mech.lattice_step))
    resid = (out - X).ravel()
    assert stats.kstest(resid / 2.0, "laplace").pvalue > 1 - CONF
    assert np.array_equal(mech.sample(np.zeros(3), 4, rng=9), float_safe_laplace(np.zeros((4, 3)), 2.0, rng=9))


def test_fast_dither_log_probabilities_against_high_precision():
    """The series used by log_density vs 50-digit mpmath, and vs the exact log-CDF form in the far tails."""
    import mpmath as mp

    from privaudit.mechanisms.lattice import (
        gaussian_cell_logprob,
        gaussian_dither_logprob,
        laplace_cell_logprob,
        laplace_dither_logprob,
    )

    mp.mp.dps = 50
    for h in (2.0**-11, 2.0**-9):
        v = np.array([0.0, 1e-9, 0.3, -1.7, 5.0, 11.9])
        exact = [float(mp.log(mp.ncdf(mp.mpf(t) + h) - mp.ncdf(mp.mpf(t) - h))) for t in v]
        assert np.allclose(gaussian_dither_logprob(v, h), exact, rtol=0, atol=1e-14)
        far = np.array([-150.0, 60.0, 200.0])
        assert np.allclose(gaussian_dither_logprob(far, h), gaussian_cell_logprob(far, h), rtol=1e-12)
        w = np.array([0.0, h / 3, -h, 2.5, -40.0])
        lap = [float(mp.log(mp.quad(lambda s: mp.exp(-abs(s)) / 2, [t - h, 0, t + h] if abs(t) < h else [t - h, t + h])))
               for t in w]
        assert np.allclose(laplace_dither_logprob(w, h), lap, rtol=0, atol=1e-13)
        assert np.allclose(laplace_dither_logprob(w, h), laplace_cell_logprob(w, h), rtol=1e-12)
