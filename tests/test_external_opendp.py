"""OpenDP adapters: claims equal OpenDP's own maps, vectorised sampling equals per-call sampling,
misconfigured adapters are caught and correct ones pass, library errors are named by the adapter.

OpenDP cannot be seeded, so statistical assertions here hold with the stated probability
(KS tests at level 1e-3; audit verdicts at their confidence), not bit for bit.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

# A plain import, not importorskip: CI installs the extra (pip install -e ".[external]"), and these
# tests must fail loudly, never skip, when OpenDP is missing.
import opendp.prelude as dp
from privaudit.attacks.distinguishers import ProjectionAttack
from privaudit.audit.engines.calibration import audit_calibration
from privaudit.audit.engines.tradeoff import audit_tradeoff
from privaudit.mechanisms import InvalidInputError, InvalidParameterError, Mechanism
from privaudit.mechanisms.external import EXTERNAL_MECHANISMS, external_mechanism_class
from privaudit.mechanisms.external.errors import ExternalLibraryError
from privaudit.mechanisms.external.opendp_mechanisms import (
    OpenDPDiscreteLaplace,
    OpenDPGaussian,
    OpenDPGaussianComposition,
    OpenDPLaplace,
    OpenDPLaplaceThreshold,
)

dp.enable_features("contrib")
KS_LEVEL = 1e-3
#: Attackers for releases that do not live in the input space (x' − x is no direction there).
OFF_INPUT_SUITE = ["atom", "lattice", ProjectionAttack(use_pair=False), "logistic"]


# --------------------------------------------------------------------------- claims = OpenDP's accounting
def test_laplace_claim_is_opendps_scalar_map():
    """The claim comes from the vector measurement; OpenDP's *scalar* Laplace map gives the same ε (= Δ/b)."""
    mech = OpenDPLaplace(scale=0.7, sensitivity=1.5)
    scalar = dp.m.make_laplace(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=0.7)
    assert mech.claim.epsilon == scalar.map(1.5)
    assert mech.claim.epsilon == pytest.approx(1.5 / 0.7, rel=1e-12)
    assert (mech.claim.delta, mech.claim.adjacency) == (0.0, "l1<=1.5")


def test_gaussian_claim_is_opendps_zcdp_and_conversion():
    mech = OpenDPGaussian(scale=2.0, sensitivity=1.0, delta=1e-6)
    scalar = dp.m.make_gaussian(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=2.0)
    assert mech.claim.rho == pytest.approx(1 / 8, rel=1e-12) == scalar.map(1.0)
    profile = dp.c.make_zCDP_to_approxDP(scalar).map(1.0)
    assert mech.claim.epsilon == pytest.approx(profile.epsilon(1e-6), rel=1e-12)
    # OpenDP's zCDP conversion is an upper bound on the exact ε of the Gaussian (Balle & Wang).
    assert mech.exact_epsilon(1e-6) < mech.claim.epsilon


def test_discrete_laplace_and_geometric_claims():
    for ctor in ("laplace", "geometric"):
        mech = OpenDPDiscreteLaplace(scale=2.0, sensitivity=3, constructor=ctor)
        assert mech.claim.epsilon == pytest.approx(1.5, rel=1e-12)


def test_composition_claim_adds_rho_and_uses_opendps_conversion():
    mech = OpenDPGaussianComposition(scales=[2.0, 3.0], delta=1e-5)
    assert mech.claim.rho == pytest.approx(1 / 8 + 1 / 18, rel=1e-12)
    # Independent: one Gaussian of the same total ρ, through OpenDP's conversion.
    one = dp.m.make_gaussian(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float),
                             scale=1 / math.sqrt(2 * (1 / 8 + 1 / 18)))
    assert mech.claim.epsilon == pytest.approx(dp.c.make_zCDP_to_approxDP(one).map(1.0).epsilon(1e-5), rel=1e-9)


def test_threshold_claim_delta_is_the_release_probability():
    """OpenDP's δ for a new key is P(linf + Lap(b) ≥ T) = ½ exp(−(T − linf)/b)."""
    mech = OpenDPLaplaceThreshold(scale=2.0, threshold=10.0, linf=1.0)
    assert mech.claim.epsilon == pytest.approx(0.5, rel=1e-12)
    assert mech.claim.delta == pytest.approx(0.5 * math.exp(-9 / 2), rel=1e-9)
    assert mech.claim.delta >= mech.release_probability


# --------------------------------------------------------------------------- vectorised == per call
@pytest.mark.parametrize("mech, x", [
    (OpenDPLaplace(scale=1.0), np.array([0.5])),
    (OpenDPGaussian(scale=1.0), np.array([0.5])),
    (OpenDPDiscreteLaplace(scale=1.5), np.array([2])),
    (OpenDPDiscreteLaplace(scale=1.5, constructor="geometric"), np.array([2])),
])
def test_one_vector_call_draws_like_n_scalar_calls(mech, x):
    fast = mech.sample(x, 4000).ravel()
    slow = mech.sample_per_call(x, 400).ravel()
    assert fast.shape == (4000,)
    assert stats.ks_2samp(fast, slow).pvalue > KS_LEVEL


def test_vector_rows_are_independent_draws():
    """Coordinates of one tiled call are uncorrelated (lag-1 correlation within |z| < 3.3 at level 1e-3)."""
    o = OpenDPLaplace(scale=1.0).sample(np.zeros(1), 20000).ravel()
    r = np.corrcoef(o[:-1], o[1:])[0, 1]
    assert abs(r) * math.sqrt(o.size) < stats.norm.isf(KS_LEVEL / 2)


def test_threshold_release_matches_per_call():
    mech = OpenDPLaplaceThreshold(scale=1.0, threshold=2.0)
    x = np.array([1.5, np.nan])
    fast, slow = mech.sample(x, 4000), mech.sample_per_call(x, 400)
    assert fast.shape == (4000, 4)
    assert np.all(fast[:, 1] == 0) and np.all(slow[:, 1] == 0)  # the absent key is never released
    assert np.all(fast[fast[:, 0] == 1, 2] >= 2.0)  # released values are above the threshold
    assert stats.ks_2samp(fast[:, 2], slow[:, 2]).pvalue > KS_LEVEL


# --------------------------------------------------------------------------- audits: caught / passes
def test_misconfigured_laplace_is_caught_and_correct_one_passes():
    broken = OpenDPLaplace(scale=1.0, noise_scale=0.4)  # claims ε = 1, draws at ε = 2.5
    res = audit_tradeoff(broken, np.zeros(1), np.ones(1), n=20000, rng=0)
    assert res.verdict == "violation" and res.epsilon_lb > 1.0
    ok = audit_tradeoff(OpenDPLaplace(scale=1.0), np.zeros(1), np.ones(1), n=20000, rng=0)
    assert ok.verdict == "pass" and ok.epsilon_lb <= 1.0


def test_threshold_too_low_for_its_delta_is_caught():
    """The claim's δ is computed at threshold 10; releases use threshold 3: a new key leaks w.p. 0.068 ≫ δ."""
    broken = OpenDPLaplaceThreshold(scale=1.0, threshold=10.0, noise_threshold=3.0)
    res = audit_tradeoff(broken, np.array([np.nan]), np.array([1.0]), n=20000, rng=1, attacker=OFF_INPUT_SUITE)
    assert res.verdict == "violation"
    ok = audit_tradeoff(OpenDPLaplaceThreshold(scale=1.0, threshold=10.0), np.array([np.nan]), np.array([1.0]),
                        n=20000, rng=1, attacker=OFF_INPUT_SUITE)
    assert ok.verdict == "pass"


def test_misconfigured_composition_is_caught():
    broken = OpenDPGaussianComposition(scales=[2.0, 3.0], noise_scales=[0.3, 0.3])
    res = audit_tradeoff(broken, np.zeros(1), np.ones(1), n=20000, rng=2, attacker=OFF_INPUT_SUITE)
    assert res.verdict == "violation"


def test_calibration_checks_opendps_maps_exactly():
    for mech in (OpenDPLaplace(scale=1.0), OpenDPGaussian(scale=1.0), OpenDPDiscreteLaplace(scale=1.0),
                 OpenDPGaussianComposition(scales=[2.0, 3.0]), OpenDPLaplaceThreshold(scale=1.0, threshold=10.0)):
        assert audit_calibration(mech).verdict == "pass", mech
    for broken in (OpenDPLaplace(scale=1.0, noise_scale=0.9), OpenDPGaussian(scale=1.0, noise_scale=0.5),
                   OpenDPLaplaceThreshold(scale=1.0, threshold=10.0, noise_threshold=9.0)):
        assert audit_calibration(broken).verdict == "violation", broken


# --------------------------------------------------------------------------- errors and registry
def test_library_refusal_becomes_a_named_privaudit_error():
    with pytest.raises(ExternalLibraryError, match="OpenDPLaplaceThreshold: OpenDP refused"):
        OpenDPLaplaceThreshold(scale=1.0, threshold=0.5, linf=1.0)  # OpenDP: threshold < linf
    assert issubclass(ExternalLibraryError, ValueError)


def test_inputs_outside_the_domain_are_refused_before_opendp_sees_them():
    # OpenDP does not check domain membership at call time (a NaN passes a nan=False domain).
    with pytest.raises(InvalidInputError, match="OpenDPLaplace: x must be finite"):
        OpenDPLaplace(scale=1.0).sample(np.array([np.nan]), 3)
    with pytest.raises(InvalidInputError, match="OpenDPDiscreteLaplace: x must hold integers"):
        OpenDPDiscreteLaplace(scale=1.0).sample(np.array([0.5]), 3)
    with pytest.raises(InvalidParameterError, match="constructor"):
        OpenDPDiscreteLaplace(scale=1.0, constructor="gauss")


def test_every_registered_opendp_name_builds_a_mechanism():
    params = {"opendp-laplace": {"scale": 1.0}, "opendp-gaussian": {"scale": 1.0},
              "opendp-discrete-laplace": {"scale": 1.0}, "opendp-gaussian-composition": {"scales": [1.0, 2.0]},
              "opendp-laplace-threshold": {"scale": 1.0, "threshold": 5.0}}
    assert set(params) == {k for k in EXTERNAL_MECHANISMS if k.startswith("opendp-")}
    for name, kw in params.items():
        assert isinstance(external_mechanism_class(name)(**kw), Mechanism)
