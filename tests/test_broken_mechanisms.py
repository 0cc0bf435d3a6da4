"""The bank of deliberately broken mechanisms: each must get "violation"; the correct twin "pass".

Sample sizes are the smallest that give a reliable verdict at these fixed seeds
(the lower bound of a broken mechanism sits well above its claim, see the
``epsilon_exact`` noted for each case).
"""

from __future__ import annotations

import numpy as np
import pytest

from privaudit.audit import audit_calibration, audit_tradeoff
from privaudit.audit.learner_audits import DPSGDLabelCanary, LabelCanarySteps, audit_dpsgd_label, canary_dataset
from privaudit.mechanisms import GaussianMechanism, LaplaceMechanism, PrivacyClaim, RandomizedResponse

X0, X1 = np.zeros(1), np.ones(1)


class LeakyGaussian:
    """A user mechanism: Gaussian (ε = 1, δ = 1e−5) that returns its input unchanged w.p. 1e−3.

    No log_density: the audit must fall back to its generic suite, whose exact-match
    attacker sees the atom at x′ (TPR ≈ 1e−3 at FPR 0: δ ≥ 1e−3 ≫ 1e−5).
    """

    def __init__(self, leak: float = 1e-3) -> None:
        self.inner = GaussianMechanism(epsilon=1.0, delta=1e-5)
        self.leak = leak
        self.claim = self.inner.claim

    def sample(self, x, n, rng=None):
        rng = np.random.default_rng(rng)
        out = self.inner.sample(x, n, rng)
        hit = rng.random(n) < self.leak
        out[hit] = np.asarray(x, dtype=float)
        return out


@pytest.mark.parametrize("estimator,n", [("clopper-pearson", 1_000_000), ("gdp", 100_000)])
def test_gaussian_sigma_30pct_too_small(estimator, n):
    good = GaussianMechanism(epsilon=1.0, delta=1e-5)
    bad = GaussianMechanism(epsilon=1.0, delta=1e-5, sigma=0.7 * good.sigma)  # exact ε ≈ 1.48
    assert audit_tradeoff(bad, X0, X1, n=n, estimator=estimator, rng=1).verdict == "violation"
    assert audit_tradeoff(good, X0, X1, n=n, estimator=estimator, rng=1).verdict == "pass"


def test_laplace_scale_30pct_too_small():
    bad = LaplaceMechanism(epsilon=1.0, scale=0.7)  # exact ε = 1/0.7 ≈ 1.43
    assert audit_tradeoff(bad, X0, X1, n=50_000, rng=2).verdict == "violation"
    assert audit_tradeoff(LaplaceMechanism(epsilon=1.0), X0, X1, n=50_000, rng=2).verdict == "pass"


def test_randomized_response_wrong_keep_probability():
    bad = RandomizedResponse(epsilon=1.0, keep_probability=0.8)  # exact ε = ln 4 ≈ 1.39
    assert audit_tradeoff(bad, -1.0, 1.0, n=50_000, rng=3).verdict == "violation"
    assert audit_tradeoff(RandomizedResponse(epsilon=1.0), -1.0, 1.0, n=50_000, rng=3).verdict == "pass"


def test_input_returned_with_probability_1e_3():
    res = audit_tradeoff(LeakyGaussian(), X0, X1, n=100_000, rng=4)
    assert res.attacker == "atom" and res.verdict == "violation"
    ok = audit_tradeoff(LeakyGaussian(leak=0.0), X0, X1, n=100_000, rng=4)
    assert ok.verdict == "pass"


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


class SentinelLeak(LeakyGaussian):
    """Emits the value 0.5 w.p. 1e−3, only for inputs other than 0: an atom at neither x nor x′.

    0.5 lies in the bulk of both output laws, so no projection or classifier sees it.
    """

    def sample(self, x, n, rng=None):
        rng = np.random.default_rng(rng)
        out = self.inner.sample(x, n, rng)
        if np.any(np.asarray(x) != 0):
            out[rng.random(n) < self.leak] = 0.5
        return out


def test_atom_away_from_the_inputs_is_caught():
    res = audit_tradeoff(SentinelLeak(), X0, X1, n=100_000, rng=7)
    assert res.attacker == "atom" and res.verdict == "violation"
