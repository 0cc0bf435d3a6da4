"""Google differential-privacy (pydp) adapters: claims equal the library's parameters, misconfigured
adapters are caught, correct ones pass, a hand-written wrapper gets the same result as the adapter,
and the floating-point leak of pydp 1.1.5's Gaussian mechanism is reproduced.

pydp cannot be seeded: statistical assertions hold with the stated probability (KS level 1e-3,
audit confidence 0.95), not bit for bit.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

# A plain import, not importorskip: CI installs the extra (pip install -e ".[external]").
from pydp.algorithms import laplacian
from pydp.algorithms.numerical_mechanisms import GaussianMechanism as GoogleGaussian
from pydp.algorithms.numerical_mechanisms import LaplaceMechanism as GoogleLaplace

from privaudit.attacks.distinguishers import ProjectionAttack
from privaudit.audit import search_pairs
from privaudit.audit.engines.calibration import audit_calibration
from privaudit.audit.engines.tradeoff import audit_tradeoff
from privaudit.mechanisms import GaussianMechanism, InvalidInputError, InvalidParameterError, PrivacyClaim
from privaudit.mechanisms.external.errors import ExternalLibraryError, ExternalTypeError
from privaudit.mechanisms.external.pydp_mechanisms import (
    PyDPBoundedMean,
    PyDPBoundedSum,
    PyDPGaussian,
    PyDPLaplace,
)

KS_LEVEL = 1e-3
OFF_INPUT_SUITE = ["atom", "lattice", ProjectionAttack(use_pair=False), "logistic"]
X, X_PRIME = np.zeros(1), np.ones(1)


# --------------------------------------------------------------------------- claims = the library's
def test_laplace_claim_and_scale_are_the_librarys():
    mech = PyDPLaplace(epsilon=0.8, sensitivity=2.0)
    ref = GoogleLaplace(epsilon=0.8, sensitivity=2.0)
    assert mech.claim == PrivacyClaim(ref.epsilon, 0.0, "l1<=2")
    assert ref.diversity == pytest.approx(2.0 / 0.8, rel=1e-12)  # Google's b = Δ/ε
    assert mech.exact_epsilon(0.0) == pytest.approx(0.8, rel=1e-12)


def test_gaussian_claim_is_the_librarys_and_its_sigma_is_at_least_the_analytic_one():
    mech = PyDPGaussian(epsilon=1.0, delta=1e-5)
    ref = GoogleGaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0)
    assert (mech.claim.epsilon, mech.claim.delta, mech.sigma) == (ref.epsilon, ref.delta, ref.std)
    analytic = GaussianMechanism(epsilon=1.0, delta=1e-5).sigma  # Balle & Wang, via dp_accounting
    assert analytic <= mech.sigma <= 1.001 * analytic  # Google rounds σ up (binary search), never down
    assert audit_calibration(mech).verdict == "pass"


def test_bounded_aggregate_claims_are_the_librarys():
    for cls, lib in ((PyDPBoundedSum, laplacian.BoundedSum), (PyDPBoundedMean, laplacian.BoundedMean)):
        mech = cls(epsilon=0.7, lower=0.0, upper=1.0)
        ref = lib(epsilon=0.7, lower_bound=0.0, upper_bound=1.0, dtype="float")
        assert mech.claim == PrivacyClaim(ref.epsilon, ref.delta, "add-remove")


# --------------------------------------------------------------------------- audits: caught / passes
def test_misconfigured_laplace_is_caught_and_correct_one_passes():
    broken = PyDPLaplace(epsilon=1.0, noise_epsilon=2.5)
    assert audit_tradeoff(broken, X, X_PRIME, n=20000, rng=0).verdict == "violation"
    assert audit_calibration(broken).verdict == "violation"
    ok = audit_tradeoff(PyDPLaplace(epsilon=1.0), X, X_PRIME, n=20000, rng=0)
    assert ok.verdict == "pass"


def test_bounded_sum_add_remove_pair():
    """x has an absent record (NaN); x′ adds one record at the upper bound (sensitivity 1)."""
    x = np.r_[np.full(10, 0.5), np.nan]
    xp = np.r_[np.full(10, 0.5), 1.0]
    ok = audit_tradeoff(PyDPBoundedSum(epsilon=1.0, lower=0.0, upper=1.0), x, xp, n=10000, rng=3,
                        attacker=OFF_INPUT_SUITE)
    assert ok.verdict == "pass"
    broken = PyDPBoundedSum(epsilon=1.0, lower=0.0, upper=1.0, noise_epsilon=4.0)
    assert audit_tradeoff(broken, x, xp, n=10000, rng=3, attacker=OFF_INPUT_SUITE).verdict == "violation"


def test_bounded_aggregates_declare_their_datasets():
    """Padded datasets (NaN absent) of 0 to 10 records, one clamp width beyond each bound by default."""
    from privaudit.mechanisms.domains import DatasetDomain

    for cls in (PyDPBoundedSum, PyDPBoundedMean):
        dom = cls(epsilon=1.0, lower=0.0, upper=1.0).domain
        assert isinstance(dom, DatasetDomain) and dom.padded and (dom.min_size, dom.max_size) == (0, 10)
        assert (dom.records.lower.tolist(), dom.records.upper.tolist()) == ([-1.0], [2.0])
        dom = cls(epsilon=1.0, lower=0.0, upper=1.0, records_low=0.0, records_high=5.0, min_size=2, max_size=4).domain
        assert (dom.records.lower[0], dom.records.upper[0], dom.min_size, dom.max_size) == (0.0, 5.0, 2, 4)
    with pytest.raises(InvalidParameterError, match="records_low must be <= records_high"):
        PyDPBoundedSum(epsilon=1.0, lower=0.0, upper=1.0, records_low=3.0)


def test_bounded_sum_searched_from_its_declared_domain():
    """No pair given: the dataset search finds an add/remove pair alone, catches the misconfigured sum
    (drawing at ε = 4, claiming 1) and passes the library's own."""
    broken = PyDPBoundedSum(epsilon=1.0, lower=0.0, upper=1.0, noise_epsilon=4.0, max_size=4)
    res = search_pairs(broken, n=10_000, screen_n=2_000, certify=2, rng=0)
    assert res.verdict == "violation" and 1.0 < res.epsilon_lb
    pair = res.best_pair
    assert broken.claim.neighbourhood.are_neighbours(pair.x, pair.x_prime) and broken.domain.contains(pair.x_prime)
    ok = search_pairs(PyDPBoundedSum(epsilon=1.0, lower=0.0, upper=1.0, max_size=4), n=10_000, screen_n=2_000,
                      certify=2, rng=0)
    assert ok.verdict == "pass"


# --------------------------------------------------------------------------- a user's own wrapper
class HandWrappedLaplace:
    """What a user writes by hand around Google's Laplace: a claim and a sample method."""

    def __init__(self, epsilon: float, claimed_epsilon: float | None = None) -> None:
        self._mech = GoogleLaplace(epsilon=epsilon, sensitivity=1.0)
        self.claim = PrivacyClaim(epsilon if claimed_epsilon is None else claimed_epsilon, 0.0, "l1<=1")

    def sample(self, x, n, rng=None):
        return np.array([[self._mech.add_noise(float(v)) for v in np.ravel(x)] for _ in range(n)])


@pytest.mark.parametrize("true_eps, claimed, verdict", [(1.0, 1.0, "pass"), (2.5, 1.0, "violation")])
def test_hand_wrapped_laplace_gets_the_same_result_as_the_adapter(true_eps, claimed, verdict):
    """Same claim, same law of releases (KS at 1e-3), same verdict (each at confidence 0.95)."""
    hand = HandWrappedLaplace(true_eps, claimed)
    shipped = PyDPLaplace(epsilon=claimed, noise_epsilon=None if claimed == true_eps else true_eps)
    assert hand.claim == shipped.claim
    assert stats.ks_2samp(hand.sample(X, 3000).ravel(), shipped.sample(X, 3000).ravel()).pvalue > KS_LEVEL
    a = audit_tradeoff(hand, X, X_PRIME, n=20000, rng=5)
    b = audit_tradeoff(shipped, X, X_PRIME, n=20000, rng=5)
    assert a.verdict == b.verdict == verdict
    assert a.claim == b.claim and a.attackers_tried == b.attackers_tried


# --------------------------------------------------------------------------- errors
def test_library_refusal_becomes_a_named_privaudit_error():
    with pytest.raises(ExternalLibraryError, match="PyDPBoundedSum: .*Lower bound cannot be greater"):
        PyDPBoundedSum(epsilon=1.0, lower=1.0, upper=0.0)
    with pytest.raises(ExternalTypeError, match="PyDPLaplace: x must be numeric"):
        PyDPLaplace(epsilon=1.0).sample(["a"], 2)
    with pytest.raises(InvalidInputError, match="PyDPBoundedMean: records must be finite or NaN"):
        PyDPBoundedMean(epsilon=1.0, lower=0.0, upper=1.0).sample([0.5, np.inf], 2)


# --------------------------------------------------------------------------- the floating-point finding
def _leak_event(o: np.ndarray) -> np.ndarray:
    """|o| < 1/2 and o not a multiple of 2⁻⁵³.

    Under x = 1 a release is fl(1 + z); it lands in (−½, ½) only for z ∈ (−1.5, −0.5), where z
    is a multiple of 2⁻⁵³ and 1 + z is exact (Sterbenz), so the event is impossible. A fresh
    draw z under x = 0 has finer resolution near 0.
    """
    return (np.abs(o) < 0.5) & (o * 2.0**53 != np.round(o * 2.0**53))


def test_pydp_gaussian_low_order_bits_reveal_the_input():
    """pydp 1.1.5's GaussianMechanism adds unrounded float noise (Mironov 2012): the event above has
    probability 0 under x = 1 and about 5 % under x = 0, so no finite ε holds at δ = 1e-5."""
    mech = PyDPGaussian(epsilon=1.0, delta=1e-5)
    e0 = _leak_event(mech.sample(X, 20000).ravel()).sum()
    e1 = _leak_event(mech.sample(X_PRIME, 20000).ravel()).sum()
    assert e1 == 0
    # P(E | x=0) > 10·δ at level 1e-3 (one-sided binomial test against p = 10·δ).
    assert stats.binomtest(int(e0), 20000, 10 * mech.claim.delta, alternative="greater").pvalue < 1e-3
    # The same leak in Google's Laplace is closed by its power-of-two granularity.
    lap = PyDPLaplace(epsilon=1.0)
    assert _leak_event(lap.sample(X, 20000).ravel()).sum() == 0


def test_default_audit_finds_the_pydp_gaussian_leak_black_box():
    res = audit_tradeoff(PyDPGaussian(epsilon=1.0, delta=1e-5), X, X_PRIME, n=20000, rng=0)
    assert res.verdict == "violation"
    assert res.epsilon_lb > 1.0 > res.epsilon_exact  # the noise is calibrated; the floats leak
    assert math.isfinite(res.epsilon_lb)
