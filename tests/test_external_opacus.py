"""Opacus through privaudit's canaries: the claim is Opacus' accountant's ε, the canary construction
is exact under Opacus' own clipping, ghost clipping agrees with hooks, and a DP-SGD run trained with
less noise than Opacus calibrated is caught while the calibrated one passes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

# A plain import: Opacus is in the test extra, these tests must not skip.
from opacus.accountants import RDPAccountant

from privaudit.audit.dpsgd.opacus import audit_opacus
from privaudit.mechanisms.external.opacus_canary import (
    OpacusCanaryRuns,
    opacus_epsilon,
    train_opacus_canaries,
)

LEVEL = 1e-3


def test_claim_is_opacus_accountant_after_a_real_run():
    view = OpacusCanaryRuns(epsilon=2.0, delta=1e-5, epochs=5)
    run = train_opacus_canaries([True], noise_multiplier=view.noise_multiplier, epochs=5, delta=1e-5, rng=0)
    assert run.epsilon == pytest.approx(view.claim.epsilon, rel=1e-12)  # PrivacyEngine.get_epsilon
    acc = RDPAccountant()
    acc.history = [(view.noise_multiplier, 1.0, 5)]
    assert view.claim.epsilon == pytest.approx(acc.get_epsilon(1e-5), rel=1e-12)
    assert view.claim.epsilon <= 2.0 + 0.01  # Opacus calibrates within its epsilon_tolerance
    assert view.claim.adjacency == "add-remove"


def test_canary_gradient_is_exactly_one_clip_norm_under_opacus_clipping():
    """Without noise, the canary's coordinate of Opacus' summed clipped gradient is −c when included, 0 if not."""
    for mode in ("hooks", "ghost"):
        run = train_opacus_canaries([True, False, True], noise_multiplier=0.0, epochs=4, clip=0.7,
                                    grad_sample_mode=mode, rng=1)
        np.testing.assert_allclose(run.steps[:, [0, 2]], 1.0, rtol=1e-8)
        np.testing.assert_array_equal(run.steps[:, 1], 0.0)
        np.testing.assert_allclose(run.final, 0.05 * 0.7 * 4 * np.array([1.0, 0.0, 1.0]), rtol=1e-8)


def test_ghost_clipping_and_functorch_match_hooks_bit_for_bit():
    kw = dict(noise_multiplier=3.0, epochs=3, rng=7)
    ref = train_opacus_canaries([True, False], grad_sample_mode="hooks", **kw)
    for mode in ("ghost", "functorch"):
        other = train_opacus_canaries([True, False], grad_sample_mode=mode, **kw)
        np.testing.assert_allclose(other.steps, ref.steps, rtol=1e-10, atol=1e-12)


def test_white_box_steps_have_the_accountants_law():
    """Per step: 1 + z·ξ (canary in) or z·ξ (out); the mean over runs·steps is within a 1e-3 z-test."""
    view = OpacusCanaryRuns(epsilon=2.0, epochs=5)
    z = view.noise_multiplier
    for s, mean in ((1.0, 1.0), (-1.0, 0.0)):
        o = view.sample(s, 40, rng=int(s + 2))
        assert o.shape == (40, view.steps)
        zstat = (o.mean() - mean) / (z / math.sqrt(o.size))
        assert abs(zstat) < stats.norm.isf(LEVEL / 2)
        assert stats.chi2(o.size - 1).sf(((o - o.mean()) ** 2).sum() / z**2) > LEVEL / 2


def test_runs_are_reproducible_from_the_seed():
    view = OpacusCanaryRuns(epsilon=2.0, epochs=3)
    np.testing.assert_array_equal(view.sample(1.0, 3, rng=11), view.sample(1.0, 3, rng=11))


def test_calibrated_opacus_passes_and_undernoised_run_is_caught():
    ok = audit_opacus(epsilon=2.0, m=1000, n_runs=0, rng=0)
    assert ok.verdict == "pass" and ok.epsilon_lb <= ok.opacus_epsilon
    assert ok.epsilon_exact < ok.opacus_epsilon  # the PLD accountant is tighter than Opacus' RDP
    broken = audit_opacus(epsilon=2.0, m=1000, n_runs=200, noise_multiplier=0.7, rng=0)
    assert broken.verdict == "violation"
    assert {v["method"] for v in broken.views} == {"one-run", "tradeoff"}
    assert broken.epsilon_lb > broken.opacus_epsilon


def test_poisson_sampling_one_run():
    res = audit_opacus(epsilon=2.0, epochs=2, sample_rate=0.5, m=200, n_runs=0, rng=4)
    assert res.steps == 4 and res.sampling_rate == 0.5
    assert res.verdict == "pass"
