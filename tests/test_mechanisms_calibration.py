"""Gaussian calibration and exact privacy profiles, against dp_accounting."""

import math

import dp_accounting as dpa
import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld
from hypothesis import given, settings
from hypothesis import strategies as st

from privaudit.mechanisms import GaussianMechanism, LaplaceMechanism, ModulatedMechanism, RandomizedResponse


@settings(max_examples=60, deadline=None)
@given(
    eps=st.floats(0.05, 20.0),
    log10_delta=st.floats(-10.0, -2.0),
    sensitivity=st.floats(0.1, 10.0),
)
def test_profile_round_trip(eps, log10_delta, sensitivity):
    delta = 10.0**log10_delta
    mech = GaussianMechanism(epsilon=eps, delta=delta, sensitivity=sensitivity)
    eps_back = mech.exact_epsilon(delta)
    assert mech.exact_delta(eps_back) == pytest.approx(delta, rel=1e-6)
    # Analytic calibration is tight: the σ in use achieves exactly the target.
    assert eps_back == pytest.approx(eps, rel=1e-6)


@pytest.mark.parametrize("eps,delta", [(0.1, 1e-6), (1.0, 1e-5), (4.0, 1e-8), (15.0, 1e-3)])
def test_analytic_sigma_matches_dp_accounting(eps, delta):
    mech = GaussianMechanism(epsilon=eps, delta=delta, sensitivity=2.5)
    assert mech.sigma == pytest.approx(2.5 * dpa.get_sigma_gaussian(eps, delta), rel=1e-9)
    assert mech.claim.mu == pytest.approx(2.5 / mech.sigma)
    assert mech.claim.rho == pytest.approx(mech.claim.mu**2 / 2)


@pytest.mark.parametrize("sigma,eps", [(0.7, 0.5), (2.0, 1.0), (5.0, 0.3)])
def test_exact_delta_matches_pld(sigma, eps):
    """Closed-form δ(ε) vs dp_accounting's privacy loss distribution (an independent numeric route)."""
    mech = GaussianMechanism(sigma=sigma)
    reference = pld.from_gaussian_mechanism(sigma, value_discretization_interval=1e-5).get_delta_for_epsilon(eps)
    assert mech.exact_delta(eps) == pytest.approx(reference, rel=1e-3)


def test_classical_calibration_loose_at_eps_1_and_false_at_eps_10():
    loose = GaussianMechanism(epsilon=1.0, delta=1e-5, calibration="classical")
    assert loose.sigma == pytest.approx(math.sqrt(2 * math.log(1.25 / 1e-5)))
    # Documented in the README: exact ε ≈ 0.751 at δ = 1e-5, well below the claimed 1.
    assert loose.exact_epsilon(1e-5) < 0.8
    false = GaussianMechanism(epsilon=10.0, delta=1e-5, calibration="classical")
    # Documented: exact δ(10) ≈ 2.27e-5 > 1e-5, so the classical claim is false.
    assert false.exact_delta(10.0) > 2e-5
    assert false.claim.mu is None  # the classical claim asserts (ε, δ) only


def test_sigma_only_claims_exact_profile():
    mech = GaussianMechanism(sigma=2.0, delta=1e-6)
    assert mech.claim.mu == pytest.approx(0.5)
    assert mech.claim.epsilon == pytest.approx(dpa.get_epsilon_gaussian(2.0, 1e-6))
    assert GaussianMechanism(sigma=2.0).claim.delta == 1e-5


def test_stated_claim_is_kept_even_if_false():
    """How broken mechanisms are built: σ 30% too small, claim as stated."""
    good = GaussianMechanism(epsilon=1.0, delta=1e-5)
    bad = GaussianMechanism(epsilon=1.0, delta=1e-5, sigma=0.7 * good.sigma)
    assert bad.claim.epsilon == 1.0 and bad.claim.mu is None
    assert bad.exact_epsilon(1e-5) > 1.3


@pytest.mark.parametrize("eps", [0.3, 1.0, 3.0])
def test_laplace_profile_matches_pld(eps):
    mech = LaplaceMechanism(epsilon=eps, sensitivity=1.0)
    ref = pld.from_laplace_mechanism(1 / eps, value_discretization_interval=1e-5)
    for e in (0.0, eps / 3, eps / 2):
        assert mech.exact_delta(e) == pytest.approx(ref.get_delta_for_epsilon(e), abs=1e-4)
    assert mech.exact_delta(eps) == 0.0
    assert mech.exact_delta(mech.exact_epsilon(0.1)) == pytest.approx(0.1)


@pytest.mark.parametrize("k", [2, 3, 6])
def test_rr_profile_matches_pld(k):
    eps = 1.2
    mech = RandomizedResponse(epsilon=eps, categories=tuple(range(k)))
    # dp_accounting's RR: with probability `noise` output uniform over k buckets.
    noise = k / (math.exp(eps) + k - 1)
    ref = pld.from_randomized_response(noise, k, neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    for e in (0.0, 0.5, 1.0):
        # The PLD is discretised pessimistically (interval 1e-4), so it may only exceed the exact value.
        assert mech.exact_delta(e) - 1e-12 <= ref.get_delta_for_epsilon(e) <= mech.exact_delta(e) + 1e-4
    assert mech.true_epsilon == pytest.approx(eps)
    assert mech.exact_delta(eps) == pytest.approx(0.0, abs=1e-12)


def test_modulated_calibrated_on_lipschitz_constant():
    mech = ModulatedMechanism(alpha=0.4, lam=0.3, omega=0.5, n_vectors=3, dim=6, epsilon=1.0, delta=1e-5)
    assert mech.lipschitz == pytest.approx(0.6 + 0.3 * 0.5 / 3)
    assert mech.sigma == pytest.approx(mech.lipschitz * dpa.get_sigma_gaussian(1.0, 1e-5))
    assert mech.exact_epsilon(1e-5) == pytest.approx(1.0, rel=1e-6)
    classical = ModulatedMechanism(alpha=0.4, lam=0.3, omega=0.5, dim=6, epsilon=0.5, delta=1e-5, calibration="classical")
    assert classical.sigma == pytest.approx(classical.lipschitz * math.sqrt(2 * math.log(1.25e5)) / 0.5)
