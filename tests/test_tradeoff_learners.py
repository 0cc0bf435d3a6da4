"""Trade-off audits of the learners' releases: modulated transcripts, IWP records, label-DP DP-SGD."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from privaudit.audit.stats.epsilon_bounds import gdp_epsilon
from privaudit.audit.engines.learner_audits import (
    audit_dpsgd_label,
    audit_iwp_release,
    audit_modulated,
    one_run_label_audit,
)
from privaudit.learners.dpsgd_view import DPSGDLabelCanary, LabelCanarySteps, canary_dataset
from privaudit.learners.iwp_view import RecordRelease
from privaudit.learners.modulated_view import TranscriptRelease, transcript_pair
from privaudit.mechanisms import (
    GaussianMechanism,
    InvalidParameterError,
    ModulatedMechanism,
    PrivacyClaim,
    RandomizedResponse,
    random_orthonormal_basis,
)


def _rounds(T=4, sigma=4.0):
    return [ModulatedMechanism(alpha=0.5, lam=0.5, omega=0.8, dim=3, sigma=sigma,
                               basis=random_orthonormal_basis(3, 1, t)) for t in range(T)]


def test_transcript_phase_known_is_exactly_gaussian():
    mechs = _rounds()
    rel, x, xp = transcript_pair(mechs)
    mu = rel.displacement_mu(x, xp)
    assert mu <= math.sqrt(sum(m.mu**2 for m in mechs)) + 1e-12  # D_t ≤ L per round
    o0, o1 = rel.sample(x, 20000, 0), rel.sample(xp, 20000, 1)
    s0 = rel.log_density(o0, xp) - rel.log_density(o0, x)
    s1 = rel.log_density(o1, xp) - rel.log_density(o1, x)
    # Under GDP the LR is N(∓μ²/2, μ²): its mean difference is μ² (SE sqrt(2/20000)·μ).
    se = math.sqrt(2 / 20000) * mu
    assert s1.mean() - s0.mean() == pytest.approx(mu**2, abs=5 * se)


def test_audit_modulated_phase_known_and_unknown():
    mechs = _rounds()
    known = audit_modulated(mechs, n=40000, rng=0)
    assert known.verdict == "pass" and known.estimator == "gdp"
    assert known.epsilon_lb <= known.epsilon_exact <= known.claim.epsilon + 1e-9
    unknown = audit_modulated(mechs, n=10000, rng=0, phase_known=False)
    assert unknown.verdict == "pass" and unknown.epsilon_exact is None
    assert unknown.epsilon_lb <= known.epsilon_exact  # marginalising the phase only removes information


def test_audit_modulated_regressor_transcript():
    from privaudit.learners import ModulatedRegressor

    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, (400, 3))
    y = X @ np.array([1.0, -0.5, 0.2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reg = ModulatedRegressor(epsilon=1.0, delta=1e-5, random_state=0).fit(X, y)
    res = audit_modulated(reg, n=20000, rng=1)
    assert res.claim == reg.claim and res.verdict == "pass"


def test_audit_iwp_release_worst_case_pair():
    rec = RecordRelease(GaussianMechanism(epsilon=1.0, delta=1e-5, sensitivity=2 * math.sqrt(2)),
                        RandomizedResponse(epsilon=1.0), PrivacyClaim(2.0, 1e-5, "any"))
    res = audit_iwp_release(rec, bounds=(-np.ones(2), np.ones(2)), n=40000, rng=0)
    assert res.verdict == "pass" and res.epsilon_exact < 2.0
    broken = RecordRelease(GaussianMechanism(epsilon=1.0, delta=1e-5, sensitivity=2 * math.sqrt(2)),
                           RandomizedResponse(epsilon=1.0, keep_probability=0.97), PrivacyClaim(2.0, 1e-5, "any"))
    assert audit_iwp_release(broken, bounds=(-np.ones(2), np.ones(2)), n=40000, rng=0).verdict == "violation"


def test_label_canary_steps_subsampled_matches_pld_epsilon():
    m = LabelCanarySteps(noise_multiplier=2.0, steps=8, sampling_rate=0.5)
    res = audit_dpsgd_label(m, n=20000, estimator="clopper-pearson", rng=0)
    assert res.verdict == "pass" and res.epsilon_lb <= res.epsilon_exact
    with pytest.raises(Exception, match="Gaussian trade-off"):
        audit_dpsgd_label(m, n=1000, estimator="gdp")


@pytest.mark.slow
def test_engine_white_box_matches_exact_mu():
    data = canary_dataset(rng=0)
    good = DPSGDLabelCanary(data, epsilon=2.0, epochs=5, adjacency="label", mode="white-box")
    res = audit_dpsgd_label(good, n=3000, rng=2)
    assert res.epsilon_exact == pytest.approx(gdp_epsilon(good.exact_mu(), 1e-5))
    assert res.verdict == "pass"
    bad = DPSGDLabelCanary(data, epsilon=2.0, epochs=5, adjacency="add-remove", mode="white-box")
    assert audit_dpsgd_label(bad, n=3000, rng=2).verdict == "violation"


def test_one_run_label_audit():
    res = one_run_label_audit(m=500, epsilon=8.0, rng=0)
    assert 0 < res.epsilon <= 8.0
    bad = one_run_label_audit(m=500, epsilon=8.0, adjacency="add-remove", rng=0)
    assert bad.epsilon > res.epsilon


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_audit_iwp_on_a_real_local_release(task):
    from privaudit.learners.release import release_dataset

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (100, 3))
    y = rng.choice([0, 1], 100) if task == "classification" else rng.uniform(-1, 1, 100)
    kw = {"label_bounds": (-1, 1)} if task == "regression" else {}
    rel = release_dataset(X, y, epsilon=2.0, delta=1e-5, bounds=(-1, 1), task=task, random_state=0, **kw)
    res = audit_iwp_release(rel, n=20000, rng=0)
    assert res.claim == rel.claim and res.verdict == "pass"
    assert res.epsilon_lb <= res.epsilon_exact <= rel.claim.epsilon + 1e-6


def test_audit_single_modulated_round():
    mech = ModulatedMechanism(alpha=0.5, lam=0.5, omega=0.8, dim=3, epsilon=1.0, delta=1e-5)
    res = audit_modulated(mech, n=40000, rng=0)
    assert res.claim == mech.claim and res.verdict == "pass"
    assert res.epsilon_exact <= mech.exact_epsilon(1e-5) + 1e-9  # D ≤ L


def test_cond_dp_white_box_label_canary():
    # Conditioning uses public features only: the label-DP claim must still hold, and the
    # add/remove mis-accounting must still be caught.
    data = canary_dataset(rng=0)
    good = DPSGDLabelCanary(data, epsilon=2.0, epochs=5, adjacency="label", mode="white-box", conditioning=True)
    bad = DPSGDLabelCanary(data, epsilon=2.0, epochs=5, adjacency="add-remove", mode="white-box", conditioning=True)
    assert audit_dpsgd_label(good, n=2000, rng=0).verdict == "pass"
    assert audit_dpsgd_label(bad, n=2000, rng=0).verdict == "violation"


# --------------------------------------------------------------------------- what the views declare
def test_transcript_declares_its_pair_per_phase():
    rel = TranscriptRelease.of(_rounds(T=3))
    known, hidden = rel.tradeoff_setup(phase="known"), rel.tradeoff_setup(phase="hidden")
    assert known.exact_mu == pytest.approx(known.mechanism.displacement_mu(known.x, known.x_prime))
    assert (known.estimator, known.assume_gaussian) == ("gdp", True)
    assert (hidden.exact_mu, hidden.estimator, hidden.assume_gaussian) == (None, "clopper-pearson", False)
    assert hidden.mechanism.phases is None and known.mechanism.phases.shape[0] == 3
    assert known.target == "modulated transcript T=3, phase known" and known.note == hidden.note
    with pytest.raises(InvalidParameterError, match="phase='Known'"):
        rel.tradeoff_setup(phase="Known")
    rec = rel.reconstruction_setup(prior=None, phase="hidden")
    assert rec.mechanism == rel.mechanisms and rec.phase == "hidden"


def test_transcript_of_a_prefix_tests_its_own_composition():
    mechs = _rounds(T=4)
    whole = TranscriptRelease.of(TranscriptRelease(mechs, claim=PrivacyClaim(9.0, 1e-5, "l2<=1")))
    prefix = TranscriptRelease.of(whole, rounds=2)
    assert whole.claim.epsilon == 9.0 and prefix.rounds == 2
    assert prefix.claim.mu == pytest.approx(math.sqrt(sum(m.mu**2 for m in mechs[:2])))


def test_record_release_declares_the_corners_of_its_box():
    rec = RecordRelease(GaussianMechanism(epsilon=1.0, delta=1e-5, sensitivity=2.0), RandomizedResponse(epsilon=1.0),
                        PrivacyClaim(2.0, 1e-5, "any"), bounds=(-np.ones(2) / 2, np.ones(2) / 2))
    setup = rec.tradeoff_setup()
    assert np.array_equal(setup.x[:2], -np.ones(2) / 2) and np.array_equal(setup.x_prime[:2], np.ones(2) / 2)
    assert setup.x[2] != setup.x_prime[2] and setup.estimator == "clopper-pearson"
    assert rec.reconstruction_setup(prior=None).mechanism is rec.feature_mechanism
    with pytest.raises(InvalidParameterError, match="bounds"):
        RecordRelease(rec.feature_mechanism, rec.label_mechanism, rec.claim).tradeoff_setup()


def test_label_canary_steps_allow_gdp_only_with_full_participation():
    full = LabelCanarySteps(noise_multiplier=2.0, steps=4).tradeoff_setup()
    sub = LabelCanarySteps(noise_multiplier=2.0, steps=4, sampling_rate=0.5).tradeoff_setup()
    assert (full.estimator, full.assume_gaussian, full.x, full.x_prime) == ("gdp", True, -1.0, 1.0)
    assert (sub.estimator, sub.assume_gaussian) == ("clopper-pearson", False)


class _Undeclared:
    """LabelCanarySteps without its declaration: audit_dpsgd_label's default for other views."""

    def __init__(self, view):
        self.view, self.claim = view, view.claim

    def __repr__(self):
        return repr(self.view)

    def sample(self, s, n, rng=None):
        return self.view.sample(s, n, rng)

    def log_density(self, outputs, s):
        return self.view.log_density(outputs, s)

    def tradeoff(self, alpha):
        return self.view.tradeoff(alpha)

    def exact_epsilon(self, delta):
        return self.view.exact_epsilon(delta)


def test_a_view_without_a_declaration_is_audited_on_the_sign_flip_like_the_declared_one():
    steps = LabelCanarySteps(noise_multiplier=2.0, steps=4)
    declared = audit_dpsgd_label(steps, n=2000, rng=3)
    undeclared = audit_dpsgd_label(_Undeclared(steps), n=2000, rng=3)
    assert undeclared.epsilon_lb == declared.epsilon_lb and undeclared.target == declared.target
    assert undeclared.epsilon_exact == declared.epsilon_exact and declared.estimator == "gdp"


def test_dpsgd_view_declares_its_attacker_and_the_label_sign_prior():
    data = canary_dataset(rng=0)
    white = DPSGDLabelCanary(data, epsilon=2.0, epochs=2)
    black = DPSGDLabelCanary(data, epsilon=2.0, epochs=2, mode="black-box")
    setup = white.tradeoff_setup()
    assert np.array_equal(setup.attacker.direction, np.ones(white.steps_)) and setup.target == repr(white)
    assert black.tradeoff_setup().attacker.use_pair is False
    rec = white.reconstruction_setup(prior="the caller's prior is replaced")
    assert np.array_equal(rec.prior.support, [[-1.0], [1.0]])
    assert (rec.mechanism.view.steps, rec.mechanism.claim.adjacency) == (white.steps_, "label")
