"""The bank of deliberately broken mechanisms: each caught by assert_private at its defaults; correct ones pass.

Each control's exact ε at the claim's δ on its pair is stated in
:mod:`privaudit.audit.testing.negative_controls` (∞ for every leak class). The assertion
runs at the plugin's defaults (n = 200 000 releases per hypothesis, confidence
0.999, the default attacker suite), as a user's test would.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from privaudit.audit import audit_calibration, audit_tradeoff
from privaudit.audit.engines.learner_audits import audit_dpsgd_label
from privaudit.learners.dpsgd_view import DPSGDLabelCanary, LabelCanarySteps, canary_dataset
from privaudit.audit.testing.negative_controls import BANK, CORRECT, OneWeakCoordinate
from privaudit.audit.testing import PrivacyAssertionError, assert_private
from privaudit.mechanisms import GaussianMechanism, PrivacyClaim

X0, X1 = np.zeros(1), np.ones(1)


def _assert(control, rng):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if control.domain is not None:
            return assert_private(control.make(), domain=control.domain, rng=rng)
        return assert_private(control.make(), control.x, control.x_prime, rng=rng)


@pytest.mark.parametrize("control", BANK, ids=lambda c: c.name)
def test_broken_mechanism_is_caught_at_the_defaults(control):
    with pytest.raises(PrivacyAssertionError, match="privacy violation") as err:
        _assert(control, rng=11)
    certified = float(str(err.value).split("certified epsilon >= ")[1].split(" ")[0])
    # A lower confidence bound: it must sit above the claim and (at 99.9%) below the exact ε.
    claim = control.make().claim
    assert claim.epsilon < certified <= control.exact_epsilon


@pytest.mark.parametrize("control", CORRECT, ids=lambda c: c.name)
def test_correct_mechanism_passes_at_the_defaults(control):
    res = _assert(control, rng=12)
    assert res.verdict == "pass"
    if control.exact_epsilon is not None:
        assert res.epsilon_lb <= control.exact_epsilon


def test_the_declared_density_is_not_trusted_alone():
    # ReturnsInput declares the exact Gaussian density; the LR alone cannot see the bug, the default suite does.
    control = next(c for c in BANK if c.name == "returns-input")
    lr = audit_tradeoff(control.make(), X0, X1, n=100_000, rng=4, attacker="likelihood-ratio")
    full = audit_tradeoff(control.make(), X0, X1, n=100_000, rng=4)
    assert lr.verdict == "pass" and "likelihood-ratio" in full.attackers_tried
    assert full.verdict == "violation" and full.attacker != "likelihood-ratio"


def test_under_noised_gaussian_states_that_it_is_below_the_audits_power():
    # σ at 0.8 of its calibration: true ε 1.28 against a claim of 1. The defaults cannot detect that,
    # and the audit says so: its stated power is above 1.28.
    good = GaussianMechanism(epsilon=1.0, delta=1e-5)
    bad = GaussianMechanism(sigma=0.8 * good.sigma)
    exact = bad.exact_epsilon(1e-5)
    bad.claim = good.claim
    res = audit_tradeoff(bad, X0, X1, n=200_000, confidence=0.999, rng=5)
    assert 1.2 < exact < res.min_detectable_ratio
    assert "min_detectable_ratio" in repr(res)


def test_pair_search_finds_a_weak_coordinate_the_usual_pairs_miss():
    mech = OneWeakCoordinate(dim=8, k=5)
    exact = mech.exact_epsilon_on_weak_axis(1e-5)
    lo, hi = -np.ones(8), np.ones(8)
    assert audit_tradeoff(mech, np.zeros(8), np.eye(8)[0], n=50_000, rng=1, confidence=0.999).verdict == "pass"
    with pytest.raises(PrivacyAssertionError, match="found by search_pairs") as err:
        assert_private(mech, domain=(lo, hi), n=50_000, rng=2)
    assert "e5" in str(err.value)
    certified = float(str(err.value).split("certified epsilon >= ")[1].split(" ")[0])
    assert 1.0 < certified <= exact


@pytest.mark.slow
def test_pair_search_in_50_dimensions():
    mech = OneWeakCoordinate(dim=50, k=37)
    from privaudit.audit.engines.pair_search import search_pairs

    res = search_pairs(mech, (-np.ones(50), np.ones(50)), n=50_000, screen_n=2000, rng=0)
    assert res.verdict == "violation" and "e37" in res.best.target
    assert res.epsilon_lb <= mech.exact_epsilon_on_weak_axis(1e-5)


# --- learner-level controls (DP-SGD label DP, calibration) ------------------------------------------
def test_label_dp_dpsgd_accounted_as_add_remove():
    # Exact per-step law: the label flip moves the clipped sum by 2c; add/remove accounts c.
    bad = LabelCanarySteps(noise_multiplier=4.0, steps=10, adjacency="add-remove")
    good = LabelCanarySteps(noise_multiplier=4.0, steps=10, adjacency="label")
    assert audit_dpsgd_label(bad, n=20_000, rng=5).verdict == "violation"
    assert audit_dpsgd_label(good, n=20_000, rng=5).verdict == "pass"
    assert audit_calibration(bad).verdict == "violation" and audit_calibration(good).verdict == "pass"


def test_label_dp_dpsgd_engine_black_box():
    data = canary_dataset(rng=0)
    bad = DPSGDLabelCanary(data, epsilon=2.0, epochs=5, adjacency="add-remove", mode="black-box")
    good = DPSGDLabelCanary(data, epsilon=2.0, epochs=5, adjacency="label", mode="black-box")
    assert audit_dpsgd_label(bad, n=2000, rng=6).verdict == "violation"
    assert audit_dpsgd_label(good, n=2000, rng=6).verdict == "pass"


def test_calibration_audit_classical_sigma():
    loose = audit_calibration(GaussianMechanism(epsilon=1.0, delta=1e-5, calibration="classical"))
    assert loose.verdict == "pass" and loose.slack > 0.2  # exact ε ≈ 0.75
    false = audit_calibration(GaussianMechanism(epsilon=10.0, delta=1e-5, calibration="classical"))
    assert false.verdict == "violation" and false.epsilon_exact > 10.0
    user = audit_calibration(GaussianMechanism(sigma=1.0), claim=PrivacyClaim(1.0, 1e-5, "l2<=1"))
    assert user.verdict == "violation"  # σ = 1 is ≈ 4.4-DP at δ = 1e−5


def test_exact_epsilons_of_the_bank_are_stated():
    for c in BANK:
        assert c.exact_epsilon is not None and c.exact_epsilon > c.make().claim.epsilon
    assert math.isinf(next(c for c in BANK if c.name == "float-laplace").exact_epsilon)
