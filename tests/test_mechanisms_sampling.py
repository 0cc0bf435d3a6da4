"""Monte Carlo checks: sampled releases match the stated distributions.

Tolerances are z = 5 standard errors (two-sided false-alarm rate ≈ 6e-7 per
check) computed from the sample size; seeds are fixed.
"""

import math

import numpy as np
import pytest
from scipy import stats

from privaudit.mechanisms import GaussianMechanism, LaplaceMechanism, ModulatedMechanism, RandomizedResponse

Z = 5.0
N = 200_000


def test_gaussian_moments():
    mech = GaussianMechanism(sigma=1.7)
    x = np.array([0.5, -2.0, 3.0])
    out = mech.sample(x, N, rng=1)
    assert out.shape == (N, 3)
    se_mean = mech.sigma / math.sqrt(N)
    assert np.all(np.abs(out.mean(0) - x) < Z * se_mean)
    # Var of the sample variance of a normal: 2σ⁴/(N−1).
    se_var = math.sqrt(2 / (N - 1)) * mech.sigma**2
    assert np.all(np.abs(out.var(0, ddof=1) - mech.sigma**2) < Z * se_var)
    assert stats.kstest((out[:, 0] - x[0]) / mech.sigma, "norm").pvalue > 1e-4


def test_laplace_moments_and_shape():
    mech = LaplaceMechanism(epsilon=0.5, sensitivity=2.0)
    out = mech.sample(np.array([1.0, 0.0]), N, rng=2)
    b = mech.scale
    assert b == pytest.approx(4.0)
    assert np.all(np.abs(out.mean(0) - [1.0, 0.0]) < Z * math.sqrt(2) * b / math.sqrt(N))
    assert stats.kstest(out[:, 1], "laplace", args=(0, b)).pvalue > 1e-4


@pytest.mark.parametrize("k,eps", [(2, 1.0), (3, 0.5), (5, 2.0)])
def test_rr_frequencies(k, eps):
    cats = tuple(range(10, 10 + k))
    mech = RandomizedResponse(epsilon=eps, categories=cats)
    out = mech.sample(cats[0], N, rng=3)
    p = math.exp(eps) / (math.exp(eps) + k - 1)
    freq = np.array([(out == c).mean() for c in cats])
    expected = np.full(k, (1 - p) / (k - 1))
    expected[0] = p
    se = np.sqrt(expected * (1 - expected) / N)
    assert np.all(np.abs(freq - expected) < Z * se)


def test_rr_release_is_vectorised_over_inputs():
    mech = RandomizedResponse(epsilon=3.0, categories=(-1, 1))
    values = np.repeat([-1.0, 1.0], N // 2)
    out = mech.release(values, rng=4)
    p = mech.keep_probability
    agree = (out == values).mean()
    assert abs(agree - p) < Z * math.sqrt(p * (1 - p) / N)


@pytest.mark.parametrize("m", [1, 3])
def test_modulated_second_moment_matches_derived_correction(m):
    d = 5
    basis = np.linalg.qr(np.random.default_rng(0).standard_normal((d, m)))[0]
    mech = ModulatedMechanism(alpha=0.3, lam=2.0, omega=1.5, n_vectors=m, dim=d, sigma=0.5, basis=basis)
    x = np.array([0.3, -0.2, 0.5, 0.1, -0.4])
    out = mech.sample(x, N, rng=5)
    outer = np.einsum("ni,nj->nij", out, out)
    emp = outer.mean(0)
    se = outer.std(0, ddof=1) / math.sqrt(N)
    derived = (1 - mech.alpha) ** 2 * np.outer(x, x) + mech.second_moment_correction()
    assert np.all(np.abs(emp - derived) < Z * se)
    # The mean is (1 − α)x: the cosine term averages out over the uniform phase.
    assert np.all(np.abs(out.mean(0) - (1 - mech.alpha) * x) < Z * out.std(0) / math.sqrt(N))
    if m > 1:
        # The seed's printed λ²/(2m) P_V is off by a factor m along V: detectable here.
        seed = (1 - mech.alpha) ** 2 * np.outer(x, x) + mech.seed_correction()
        assert np.max(np.abs(emp - seed) / se) > 20


def test_modulated_lipschitz_ratio_never_exceeds_L():
    rng = np.random.default_rng(6)
    d, m = 4, 2
    mech = ModulatedMechanism(alpha=0.2, lam=1.0, omega=3.0, n_vectors=m, dim=d, sigma=1.0,
                              basis=np.linalg.qr(rng.standard_normal((d, m)))[0])
    x = rng.uniform(-2, 2, (50_000, d))
    # Tiny steps along a modulation vector probe the steepest slope; large ones the rest.
    steps = np.concatenate([
        rng.standard_normal((25_000, d)),
        1e-4 * np.outer(rng.choice([-1, 1], 25_000), mech.basis[:, 0]),
    ])
    phase = rng.random((50_000, m)) * 2 * np.pi
    num = np.linalg.norm(mech.map(x, phase) - mech.map(x + steps, phase), axis=1)
    ratio = num / np.linalg.norm(steps, axis=1)
    assert ratio.max() <= mech.lipschitz * (1 + 1e-9)
    assert ratio.max() > 0.95 * mech.lipschitz  # the bound is attained, so it is the right L


def test_modulated_marginal_density_matches_phase_average():
    """The quadrature over the phase equals a Monte Carlo average of the phase-known density."""
    d, m = 3, 2
    mech = ModulatedMechanism(alpha=0.4, lam=1.5, omega=2.0, n_vectors=m, dim=d, sigma=0.6)
    x = np.array([0.2, -0.5, 0.7])
    outs = mech.sample(x, 4, rng=7)
    phases = np.random.default_rng(8).random((100_000, m)) * 2 * np.pi
    mc = np.array([np.exp(mech.log_density(np.repeat(o[None], len(phases), 0), x, phases)).mean() for o in outs])
    assert np.allclose(np.exp(mech.log_density(outs, x)), mc, rtol=2e-2)


def test_modulated_fisher_information():
    d, m = 4, 2
    mech = ModulatedMechanism(alpha=0.3, lam=0.8, omega=1.2, n_vectors=m, dim=d, sigma=0.9)
    x = np.array([0.1, 0.4, -0.3, 0.2])
    phase = np.array([0.3, 2.0])
    h = 1e-6
    jac = np.stack([(mech.map(x + h * e, phase) - mech.map(x - h * e, phase))[0] / (2 * h) for e in np.eye(d)], axis=1)
    assert np.allclose(mech.jacobian(x, phase), jac, atol=1e-7)
    assert np.allclose(mech.fisher_information(x, phase), jac.T @ jac / mech.sigma**2, atol=1e-6)
    phases = np.random.default_rng(9).random((20_000, m)) * 2 * np.pi
    avg = np.mean([mech.fisher_information(x, p) for p in phases[:4000]], axis=0)
    assert np.allclose(mech.fisher_information(x), avg, atol=0.03 * np.abs(avg).max())


def test_gaussian_fisher_and_density():
    mech = GaussianMechanism(sigma=2.0)
    x = np.zeros(3)
    assert np.allclose(mech.fisher_information(x), np.eye(3) / 4)
    out = mech.sample(x, 5, rng=0)
    assert np.allclose(mech.log_density(out, x), stats.norm(0, 2).logpdf(out).sum(1))


def test_seeded_sampling_is_reproducible():
    mech = ModulatedMechanism(alpha=0.5, lam=0.2, omega=1.0, dim=3, sigma=1.0)
    a = mech.sample(np.ones(3), 10, rng=123)
    b = mech.sample(np.ones(3), 10, rng=np.random.default_rng(123))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, mech.sample(np.ones(3), 10, rng=124))


# --- float safety of the modulated release (issue 14) --------------------------------------------------------
def _modulated_pair():
    basis = np.linalg.qr(np.random.default_rng(10).standard_normal((3, 1)))[0]
    mech = ModulatedMechanism(alpha=0.6, lam=0.5, omega=0.6, dim=3, sigma=0.9, basis=basis)
    x = np.array([0.1, 0.4, -0.2])
    return mech, x, x + basis[:, 0], np.array([0.7])


def _textbook(monkeypatch):
    """Replace the lattice release by the textbook float one, fl(mean + σ·z) (same draws of z)."""
    import privaudit.mechanisms.modulated as modulated

    monkeypatch.setattr(modulated, "lattice_release", lambda mean, noise, scale, step, rng: mean + scale * noise)


def test_modulated_release_is_float_safe_and_the_textbook_one_is_not(monkeypatch):
    from float_safety import assert_float_safe, one_sided_counts

    mech, x, xp, ph = _modulated_pair()
    g, gp = mech.map(x, ph)[0], mech.map(xp, ph)[0]
    n = 4000
    new = mech.sample(xp, n, rng=3, phase=ph)
    for out in (new, mech.sample(x, n, rng=4, phase=ph), mech.release(np.tile(x, (n, 1)), rng=5)):
        assert_float_safe(out, [g, gp], mech.lattice_step, mech.sigma, 13.0)
    # numpy's normal sampler inverted: on the textbook release every output of x′ is reachable under x′ and
    # many prove x′ (impossible under x). (This predicate describes the textbook sampler only: on ours its
    # hits are chance coincidences with the ziggurat grid, whose rate depends on |y − mean|.)
    _textbook(monkeypatch)
    old = mech.sample(xp, n, rng=3, phase=ph)
    only_xp, only_x = one_sided_counts(old, g, gp, mech.sigma)
    assert only_xp > 0.1 * n
    # Same draws: at a given seed the float-safe output is within one lattice step of the textbook one.
    assert np.max(np.abs(new - old)) <= mech.lattice_step


def test_modulated_log_density_is_the_dithered_law():
    """Against the dithered law computed independently: given each quadrature node of the phase, a product over
    the axes of exact Gaussian cell probabilities (log-CDF differences), mixed over the nodes."""
    from scipy.special import logsumexp

    from privaudit.mechanisms.lattice import gaussian_cell_logprob

    mech, x, _, ph = _modulated_pair()
    s, step = mech.sigma, mech.lattice_step
    y = mech.sample(x, 400, rng=6)
    y[:3] = (1 - mech.alpha) * x + np.array([[0.0, 0.0, 0.0], [3.0, -4.0, 2.0], [-6.0, 5.0, 1.0]])  # tails too
    means = (1 - mech.alpha) * x + mech.hidden_phase_law.centres()[:, None] * mech.basis[:, 0]  # (q, d)
    cells = gaussian_cell_logprob((y[:, None, :] - means[None]) / s, step / (2 * s)).sum(axis=2)
    exact = logsumexp(cells, axis=1) - math.log(len(means)) - 3 * math.log(step)
    got = mech.log_density(y, x)
    assert np.max(np.abs(got - exact)) < 1e-9
    # The dither's correction is resolved: the continuous density alone is off by more than that.
    r = y - (1 - mech.alpha) * x
    along = r @ mech.basis
    perp = r - along @ mech.basis.T
    continuous = (mech.hidden_phase_law.logpdf(along)[:, 0] + stats.norm.logpdf(perp / s).sum(1)
                  + math.log(s) - 3 * math.log(s))
    assert np.max(np.abs(continuous - exact)) > 1e-8
    # Phase given: the exact dithered Gaussian around g(x; φ).
    yk = mech.sample(x, 50, rng=7, phase=ph)
    want = gaussian_cell_logprob((yk - mech.map(x, ph)) / s, step / (2 * s)).sum(1) - 3 * math.log(step)
    assert np.allclose(mech.log_density(yk, x, ph), want, rtol=0, atol=1e-10)  # log-CDF differences: ~1e-13 each


def test_modulated_fisher_bounds_the_dithered_information():
    mech, x, _, ph = _modulated_pair()
    c = mech.dither_fisher_factor
    assert 1 - mech.lattice_step**2 / (12 * mech.sigma**2) * 1.01 < c < 1
    jac = mech.jacobian(x, ph)
    assert np.allclose(mech.fisher_information(x, ph), jac.T @ jac / mech.sigma**2, rtol=1e-12)
    eps_slack, delta_slack = mech.float_error()
    assert eps_slack < 1e-8 and delta_slack < 1e-12
