"""Reference mechanisms the audits must pass: discrete Laplace, discrete Gaussian, exponential mechanism.

Every sampler is checked against its pmf by a chi-square test at level 1 − CONF; every
exact privacy quantity against an independent computation (brute-force sums over the
pmfs, closed forms, or dp_accounting).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privaudit.mechanisms import (
    DiscreteGaussianMechanism,
    DiscreteLaplaceMechanism,
    ExponentialMechanism,
    InvalidInputError,
    InvalidParameterError,
)
from privaudit.mechanisms.samplers import discrete_gaussian, discrete_laplace, exponential

CONF = 0.999


def chi2_ok(samples: np.ndarray, support: np.ndarray, pmf: np.ndarray) -> bool:
    """Chi-square goodness of fit, pooling the support outside [support] into one cell."""
    n = samples.size
    counts = np.array([(samples == k).sum() for k in support] + [np.isin(samples, support, invert=True).sum()])
    p = np.r_[pmf, max(1 - pmf.sum(), 0.0)]
    keep = n * p >= 5  # the usual validity rule; pooled cells are merged into the rest
    obs = np.r_[counts[keep], counts[~keep].sum()]
    exp = np.r_[n * p[keep], n * p[~keep].sum()]
    obs, exp = obs[exp > 0], exp[exp > 0]
    return float(((obs - exp) ** 2 / exp).sum()) < stats.chi2.ppf(CONF, df=obs.size - 1)


def brute_delta(p0: np.ndarray, p1: np.ndarray, eps: float) -> float:
    """max over both orders of Σ (p − e^ε q)₊: the exact δ(ε) of a pair of pmfs."""
    return max(np.maximum(p0 - math.exp(eps) * p1, 0).sum(), np.maximum(p1 - math.exp(eps) * p0, 0).sum())


# -- samplers ----------------------------------------------------------------------------------

def test_exponential_sampler_law_and_signs():
    e, s = exponential(0, 400_000)
    assert stats.kstest(e, "expon").pvalue > 1 - CONF
    assert abs(s.mean()) < stats.norm.ppf(1 - (1 - CONF) / 2) / math.sqrt(s.size)
    # Small values keep their relative resolution (the −log1p branch): P(E < 1e−3) = 1 − e^{−1e−3}.
    p = -math.expm1(-1e-3)
    assert abs(np.mean(e < 1e-3) - p) < stats.norm.ppf(1 - (1 - CONF) / 2) * math.sqrt(p / e.size)


class _ZeroWords:
    """A bit generator stub whose first words are 0 (an all-zero uniform), then a fixed word."""

    def __init__(self, zeros: int, word: int) -> None:
        self.zeros, self.word = zeros, word

    def random_raw(self, size):
        out = np.full(size, self.word, dtype=np.uint64)
        k = min(self.zeros, size)
        out[:k] = 0
        self.zeros -= k
        return out


class _StubGenerator(np.random.Generator):
    def __init__(self, zeros: int, word: int) -> None:
        super().__init__(np.random.PCG64(0))
        self._stub = _ZeroWords(zeros, word)

    @property
    def bit_generator(self):
        return self._stub


def test_exponential_tail_reaches_far_beyond_numpy_laplace():
    """Six all-zero words push E past 36.7 = −ln 2⁻⁵³, where numpy's Laplace and ``-log(rng.random())`` stop."""
    word = (1 << 63) | (1 << 2)  # branch bit (bit 1) clear → lower half; m = 2⁶¹ + 1 → u ≈ ½
    e, _ = exponential(_StubGenerator(6, word), 1)
    # Each zero word contributes a factor 2⁻¹⁰: u = 2⁻⁶⁰·½, E = ln 2 − ln u = 62·ln 2.
    assert e[0] == pytest.approx(62 * math.log(2), rel=1e-12)
    assert e[0] > 53 * math.log(2)


@pytest.mark.parametrize("t", [0.4, 1.0, 3.5])
def test_discrete_laplace_sampler_matches_pmf(t):
    k = np.arange(-60, 61)
    pmf = np.exp(-np.abs(k) / t) * math.tanh(0.5 / t)
    assert chi2_ok(discrete_laplace(1, 200_000, t), k, pmf)


@pytest.mark.parametrize("s", [0.6, 2.0, 7.3])
def test_discrete_gaussian_sampler_matches_pmf(s):
    k = np.arange(-80, 81)
    w = np.exp(-(k**2) / (2 * s * s))
    assert chi2_ok(discrete_gaussian(2, 200_000, s), k, w / w.sum())


# -- discrete Laplace -------------------------------------------------------------------------

def test_discrete_laplace_mechanism_law_and_exact_profile():
    mech = DiscreteLaplaceMechanism(epsilon=0.8, sensitivity=2)
    assert mech.claim.epsilon == 0.8 and mech.claim.delta == 0.0 and mech.true_epsilon == pytest.approx(0.8)
    y = mech.sample(np.array([5.0]), 100_000, rng=3)[:, 0]
    support = np.arange(-60, 71)
    assert chi2_ok(y, support, mech.pmf(5, support))
    assert np.allclose(np.exp(mech.log_density(support[:, None], np.array([5.0]))), mech.pmf(5, support))
    # Exact profile vs a brute-force sum over the pmfs of 0 and Δ = 2.
    big = np.arange(-400, 403)
    p0, p1 = mech.pmf(0, big), mech.pmf(2, big)
    for eps in (0.0, 0.3, 0.79):
        assert mech.exact_delta(eps) == pytest.approx(brute_delta(p0, p1, eps), abs=1e-12)
    assert mech.exact_delta(0.8 + 1e-9) == pytest.approx(0.0, abs=1e-12)
    assert mech.exact_epsilon(0.0) == pytest.approx(0.8)
    assert mech.exact_delta(mech.exact_epsilon(0.05)) == pytest.approx(0.05, rel=1e-6)


def test_discrete_laplace_tradeoff_is_above_the_claim_curve():
    from privaudit.mechanisms import tradeoff_curve

    mech = DiscreteLaplaceMechanism(epsilon=1.0)
    alpha = np.linspace(0, 1, 101)
    curve = mech.tradeoff(alpha)
    assert np.all(curve >= tradeoff_curve(1.0, 0.0, alpha) - 1e-12)
    # Tight: the curve touches f_ε at its first vertex (α = P(L ≥ 1) under x = 0 rejected first ...).
    assert np.min(curve - tradeoff_curve(1.0, 0.0, alpha)) < 1e-2


def test_discrete_laplace_rejects_non_integers():
    mech = DiscreteLaplaceMechanism(epsilon=1.0)
    with pytest.raises(InvalidInputError, match="integers"):
        mech.sample(np.array([0.5]), 10)
    with pytest.raises(InvalidParameterError, match="sensitivity=1.5"):
        DiscreteLaplaceMechanism(epsilon=1.0, sensitivity=1.5)
    with pytest.raises(InvalidParameterError, match="epsilon=5e-324"):
        DiscreteLaplaceMechanism(epsilon=5e-324)


# -- discrete Gaussian ------------------------------------------------------------------------

def test_discrete_gaussian_claim_is_its_exact_profile():
    mech = DiscreteGaussianMechanism(sigma=2.5, sensitivity=1, delta=1e-5)
    big = np.arange(-200, 202, dtype=float)
    w0 = np.exp(-big**2 / (2 * 2.5**2))
    w1 = np.exp(-(big - 1) ** 2 / (2 * 2.5**2))
    p0, p1 = w0 / w0.sum(), w1 / w1.sum()
    for eps in (0.1, 0.5, 1.0):
        assert mech.exact_delta(eps) == pytest.approx(brute_delta(p0, p1, eps), rel=1e-6, abs=1e-15)
    assert mech.exact_delta(mech.claim.epsilon) == pytest.approx(1e-5, rel=1e-6)
    assert mech.claim.rho == pytest.approx(1 / (2 * 2.5**2)) and mech.claim.mu is None
    y = mech.sample(3, 100_000, rng=4)
    assert chi2_ok(y[:, 0] if y.ndim == 2 else y, big + 3, p0)


def test_discrete_gaussian_is_scalar_only():
    with pytest.raises(InvalidInputError, match="one integer coordinate"):
        DiscreteGaussianMechanism(sigma=1.0).sample(np.zeros(2), 5)


# -- exponential mechanism ---------------------------------------------------------------------

def test_exponential_mechanism_law_and_pair_profile():
    mech = ExponentialMechanism(epsilon=1.0, sensitivity=1.0)
    u = np.array([0.0, 1.0, 2.0, 3.0, -1.0])
    w = np.exp(0.5 * u)
    assert np.allclose(mech.pmf(u), w / w.sum())
    y = mech.sample(u, 100_000, rng=5)
    assert chi2_ok(y, np.arange(5), w / w.sum())
    # Opposite moves of the scores (ℓ∞ = 1): the exact ε of the pair reaches the claim ε = 1.
    up = u + np.array([1.0, -1, -1, -1, -1])
    p, q = mech.pmf(u), mech.pmf(up)
    assert mech.exact_epsilon(0.0, x=u, x_prime=up) == pytest.approx(np.max(np.abs(np.log(p / q))))
    assert mech.exact_epsilon(0.0, x=u, x_prime=up) <= 1.0 + 1e-12
    for eps in (0.0, 0.3):
        assert mech.exact_delta(eps, u, up) == pytest.approx(brute_delta(p, q, eps))
    with pytest.raises(InvalidParameterError, match="x and x_prime"):
        mech.exact_epsilon(0.0)


def test_exponential_mechanism_worst_pair_attains_epsilon_and_monotonic_variant():
    mech = ExponentialMechanism(epsilon=2.0, sensitivity=1.0)
    k = 100_000
    u = np.zeros(k)
    up = np.r_[1.0, -np.ones(k - 1)]  # ‖u − u′‖_∞ = 1: output 0 gains ε/2, Z shrinks by ≈ e^{−ε/2}
    exact = mech.exact_epsilon(0.0, u, up)
    assert exact <= 2.0 + 1e-12
    assert exact == pytest.approx(2.0 - math.log1p(math.expm1(2.0) / k), rel=1e-9)  # → ε as k → ∞
    assert mech.exact_epsilon(0.0, np.zeros(2), np.array([1.0, -1.0])) < 2.0  # k = 2 cannot reach ε
    mono = ExponentialMechanism(epsilon=2.0, sensitivity=1.0, monotonic=True)
    assert mono.weight_scale == 2.0
    assert mono.exact_epsilon(0.0, np.zeros(2), np.array([1.0, 0.0])) <= 2.0 + 1e-12


def test_exponential_mechanism_small_probability_outputs():
    """A rare output is drawn at its rate; a tiny one has the exact log-probability (no underflow to 0)."""
    mech = ExponentialMechanism(epsilon=2.0, sensitivity=1.0)
    u = np.array([0.0, math.log(1e-3 / (1 - 1e-3))])  # P(1) = 1e-3 exactly
    n = 400_000
    y = mech.sample(u, n, rng=6)
    se = math.sqrt(1e-3 * (1 - 1e-3) / n)
    assert abs(y.mean() - 1e-3) < stats.norm.ppf(1 - (1 - CONF) / 2) * se
    tiny = np.array([0.0, -30.0])  # P(1) = e^{−30}/(1 + e^{−30})
    assert mech.log_density(np.array([1.0]), tiny)[0] == pytest.approx(-30 - math.log1p(math.exp(-30)))


def test_exponential_mechanism_validation():
    with pytest.raises(InvalidParameterError, match="adjacency"):
        ExponentialMechanism(epsilon=1.0, utility=lambda x: x)
    with pytest.raises(InvalidInputError, match=">= 2 outputs"):
        ExponentialMechanism(epsilon=1.0).sample(np.array([1.0]), 5)
    with pytest.raises(InvalidInputError, match="log-weights"):
        ExponentialMechanism(epsilon=1.0).pmf(np.array([0.0, 5000.0]))
    custom = ExponentialMechanism(epsilon=1.0, utility=lambda x: -np.abs(np.arange(4) - x[0]), adjacency="l1<=1")
    assert custom.pmf(np.array([2.0])).argmax() == 2


def test_discrete_laplace_passes_the_default_audit():
    from privaudit.audit import audit_tradeoff

    assert audit_tradeoff(DiscreteLaplaceMechanism(epsilon=1.0), np.zeros(1), np.ones(1), n=20_000, rng=7).verdict == "pass"


def test_exponential_mechanism_passes_the_default_audit():
    from privaudit.audit import audit_tradeoff

    em = ExponentialMechanism(epsilon=1.0)
    assert audit_tradeoff(em, np.array([0.0, 0.0, 0.0]), np.array([1.0, 0.0, 0.0]), n=20_000, rng=8).verdict == "pass"


def test_dp_events_describe_the_reference_mechanisms():
    from dp_accounting.pld.pld_privacy_accountant import PLDAccountant
    from dp_accounting.rdp.rdp_privacy_accountant import RdpAccountant

    mech = DiscreteLaplaceMechanism(epsilon=0.8, sensitivity=2)
    acc = PLDAccountant()
    acc.compose(mech.dp_event())
    assert acc.get_delta(0.3) == pytest.approx(mech.exact_delta(0.3), rel=1e-3)
    dg = DiscreteGaussianMechanism(sigma=3.0)
    rdp = RdpAccountant()
    rdp.compose(dg.dp_event())
    # zCDP → (ε, δ) through RDP is valid but looser than the exact discrete profile.
    assert rdp.get_epsilon(1e-5) >= dg.claim.epsilon
    assert dg.dp_event(0).__class__.__name__ == "NoOpDpEvent"


# -- Mironov's snapping mechanism ---------------------------------------------------------------

def test_snapping_parameters_follow_mironovs_theorem():
    from privaudit.mechanisms import SnappingLaplaceMechanism

    mech = SnappingLaplaceMechanism(epsilon=0.5, sensitivity=3.0, bound=100.0)
    assert mech.unit == 4.0  # smallest power of two >= 3
    b = 100.0 / 4.0
    assert 1 / mech.lam + 2.0**-49 * b / mech.lam == pytest.approx(0.5, rel=1e-15)  # Thm 1 gives exactly ε
    assert mech.snap >= mech.lam > mech.snap / 2 and math.frexp(mech.snap)[0] == 0.5
    with pytest.raises(InvalidParameterError, match="bound=1.0"):
        SnappingLaplaceMechanism(epsilon=0.5, bound=1.0)  # B must exceed λ = 2


def test_snapping_outputs_on_the_grid_and_pmf():
    from privaudit.mechanisms import SnappingLaplaceMechanism

    mech = SnappingLaplaceMechanism(epsilon=1.0, bound=6.0)
    y = mech.sample(np.array([0.3]), 100_000, rng=9)[:, 0]
    step = mech.output_step
    assert np.all((y / step == np.rint(y / step)) | (np.abs(y) == 6.0)) and np.all(np.abs(y) <= 6.0)
    assert not np.any(np.signbit(y) & (y == 0))  # no −0.0
    support = np.unique(np.r_[np.arange(-6.0, 6.01, step), -6.0, 6.0])
    pmf = np.exp(mech.log_density(support[:, None], np.array([0.3])))
    assert pmf.sum() == pytest.approx(1.0, abs=1e-12)
    assert chi2_ok(y, support, pmf)
    # Pure DP of the ideal release between neighbours 0.3 and 1.3: every log-ratio within the claim.
    other = np.exp(mech.log_density(support[:, None], np.array([1.3])))
    assert np.max(np.abs(np.log(pmf / other))) <= mech.claim.epsilon + 1e-12
    # Clamping: an input far beyond B is released like B.
    assert np.allclose(mech.log_density(support[:, None], np.array([50.0])), mech.log_density(support[:, None], np.array([6.0])))
