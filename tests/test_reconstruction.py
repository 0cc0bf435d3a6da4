"""Reconstruction audits: efficient attackers reach the CRB, nobody beats van Trees, leaks are caught.

Tolerances: where a test asserts that an interval contains 1 it uses the audit's own
interval at confidence 0.9999 (z ≈ 3.9, false-failure rate 1e−4 per check); fixed
relative windows are ≥ 5 standard errors wide at the stated n and seed.
"""

import json
import math

import numpy as np
import pytest

from privaudit.attacks import AttackRegistryError, available_attacks
from privaudit.attacks.priors import GaussianPrior
from privaudit.attacks import PosteriorMean, SplitMLE
from privaudit.audit.engines.reconstruction import ReconstructionAudit, audit_reconstruction, composition_curve, mse_crb_curve
from privaudit.mechanisms import (
    GaussianMechanism,
    InvalidInputError,
    InvalidParameterError,
    ModulatedMechanism,
    random_orthonormal_basis,
)

D = 6
CONF = 0.9999


def linear(d=10, sigma=0.5):
    return ModulatedMechanism(alpha=0.3, lam=0.0, omega=1.0, dim=d, sigma=sigma)


def modulated(d=D, sigma=0.4, m=1, seed=0):
    # L = 0.6 + 0.7·0.5/m ≤ 0.95: contractive; nonlinear along V.
    return ModulatedMechanism(alpha=0.4, lam=0.7, omega=0.5, n_vectors=m, dim=d, sigma=sigma,
                              basis=random_orthonormal_basis(d, m, seed))


def test_linear_gaussian_efficient_attacker_reaches_crb():
    res = audit_reconstruction(linear(), "split-mle", n=100_000, rng=11)
    assert 0.97 <= res.ratio["crb"] <= 1.03
    assert res.crb == pytest.approx(10 * 0.25 / 0.49)
    assert res.verdict == "pass" and res.attacker_unbiased
    # attacker=None picks the strongest applicable attacker: the efficient one here.
    assert audit_reconstruction(linear(), None, n=200, rng=1).attacker == "split-mle"


def test_y_aided_reaches_crb_with_side_information():
    beta = np.linspace(-1, 2, D)
    res = audit_reconstruction(linear(D), "y-aided", n=40_000, rng=12, beta=beta, sigma_y=0.3, confidence=CONF)
    base = audit_reconstruction(linear(D), "split-mle", n=200, rng=12)
    assert res.crb < base.crb  # y adds ββᵀ/σ_y²
    lo, hi = res.ratio_ci["crb"]
    assert lo <= 1 <= hi
    assert audit_reconstruction(linear(D), None, n=200, rng=1, beta=beta, sigma_y=0.3).attacker == "y-aided"


# --- no attacker below van Trees --------------------------------------------------------------------------
SETTINGS = {
    "gaussian": dict(mech=lambda: GaussianMechanism(sigma=0.8), phase="known"),
    "modulated-known": dict(mech=lambda: modulated(), phase="known"),
    "modulated-hidden": dict(mech=lambda: modulated(), phase="hidden"),
    "modulated-fixed": dict(mech=lambda: modulated(), phase=np.array([2.0])),
    "modulated-m2": dict(mech=lambda: modulated(m=2), phase="known"),
    "transcript-linear": dict(mech=lambda: [linear(D, 0.9)] * 3, phase="known"),
    "transcript-modulated": dict(mech=lambda: [modulated(seed=s, sigma=0.6) for s in range(2)], phase="known"),
    "modulated-y": dict(mech=lambda: modulated(), phase="known", beta=np.ones(D), sigma_y=1.0),
}


PRIOR = GaussianPrior(np.full(D, 0.2), 0.6)


def _applies(name: str, setting: str) -> bool:
    cfg = SETTINGS[setting]
    phase = cfg["phase"]
    return available_attacks("reconstruction")[name].applicable(
        cfg["mech"](), prior=PRIOR, phase_known=not (isinstance(phase, str) and phase == "hidden"),
        side_info="beta" in cfg)


#: Every (attacker, setting) pair of the registry where the attacker applies.
APPLICABLE = [(name, setting) for setting in sorted(SETTINGS) for name in sorted(available_attacks("reconstruction"))
              if _applies(name, setting)]


def test_every_attacker_meets_a_setting():
    """discrete-map needs a discrete prior; test_bounds checks it against the ReRo bound."""
    assert {n for n, _ in APPLICABLE} == set(available_attacks("reconstruction")) - {"discrete-map"}


@pytest.mark.parametrize("name,setting", APPLICABLE, ids=[f"{n}-{s}" for n, s in APPLICABLE])
def test_no_attacker_beats_van_trees(name, setting):
    cfg = dict(SETTINGS[setting])
    mech = cfg.pop("mech")()
    phase = cfg.pop("phase")
    prior = PRIOR
    n = 300 if name == "autodiff-mle" else 3000
    res = audit_reconstruction(mech, name, prior=prior, n=n, rng=21, phase=phase, **cfg)
    assert res.van_trees is not None and res.applies["van_trees"]
    assert "van_trees" not in res.beaten, res.notes
    assert res.verdict == "pass", res.notes


def test_bayes_attackers_attain_van_trees_on_linear_release():
    prior = GaussianPrior(np.zeros(D), 0.5)
    for name in ("posterior-mean", "map"):
        res = audit_reconstruction(linear(D, 0.6), name, prior=prior, n=40_000, rng=31, confidence=CONF)
        lo, hi = res.ratio_ci["van_trees"]
        assert lo <= 1 <= hi
        # Biased attackers beat the unbiased CRB: reported, not hidden, not a violation.
        assert "crb" in res.beaten and not res.applies["crb"]
        assert res.verdict == "pass"
        assert any("beats the crb bound" in note for note in res.notes)


def test_posterior_mean_modulated_close_to_van_trees():
    # With modulation van Trees is a valid but not necessarily tight bound: the MMSE
    # attacker stays above it and within 10 % here.
    prior = GaussianPrior(np.zeros(D), 0.5)
    for phase in ("known", "hidden"):
        res = audit_reconstruction(modulated(sigma=0.3), "posterior-mean", prior=prior, n=20_000, rng=32, phase=phase)
        assert res.ratio_ci["van_trees"][1] >= 1
        assert res.ratio["van_trees"] < 1.10


def test_iwp_attackers():
    mech = GaussianMechanism(sigma=1.0)
    prior = GaussianPrior(np.ones(4), 0.25)
    ident = audit_reconstruction(mech, "identity", prior=prior, n=20_000, rng=41, confidence=CONF)
    lo, hi = ident.ratio_ci["crb"]
    assert lo <= 1 <= hi
    den = audit_reconstruction(mech, "iwp-denoiser", prior=prior, n=20_000, rng=41)
    # The fitted empirical-Bayes denoiser approaches the Bayes risk = van Trees here.
    assert den.ratio_ci["van_trees"][1] >= 1 and den.ratio["van_trees"] < 1.05
    with pytest.raises(InvalidParameterError, match="population"):
        audit_reconstruction(mech, "iwp-denoiser", x=np.zeros(4), n=100, rng=1)


# --- leaks are caught -------------------------------------------------------------------------------------
class LeakyGaussian(GaussianMechanism):
    """States σ but adds only σ/2: its stated Fisher information is 4× too small."""

    def sample(self, x, n, rng=None):
        out = super().sample(x, n, rng)
        return x + (out - x) / 2


def test_leaky_mechanism_is_a_violation():
    res = audit_reconstruction(LeakyGaussian(sigma=1.0), "naive", x=np.zeros(3), n=5000, rng=51)
    assert res.verdict == "violation"
    assert "crb" in res.beaten and res.applies["crb"]
    assert res.ratio["crb"] == pytest.approx(0.25, rel=0.1)


def test_mle_low_noise_limit():
    # Fixed phase near the flat point of the map (h′ = 0.1): the MLE is biased and
    # below the local CRB at moderate σ, and MSE/CRB → 1 as σ → 0.
    mech = ModulatedMechanism(alpha=0.5, lam=0.8, omega=0.5, dim=3, sigma=0.1)
    sig = [0.1, 0.03, 0.01, 0.003]
    curve = mse_crb_curve(mech, sig, attackers=("split-mle",), phase=np.array([1.2]), n=20_000, rng=61)
    y = np.array(curve.series["split-mle"]["y"])
    err = np.array(curve.series["split-mle"]["yerr"])
    assert abs(y[-1] - 1) < max(3 * err[-1], 0.02)
    assert abs(y[0] - 1) > 5 * err[0]  # the limit is not trivially reached
    assert abs(y[-1] - 1) < abs(y[0] - 1)
    auto = mse_crb_curve(mech, sig[-1:], attackers=("autodiff-mle",), phase=np.array([1.2]), n=1000, rng=62)
    assert abs(auto.series["autodiff-mle"]["y"][0] - 1) < max(3 * auto.series["autodiff-mle"]["yerr"][0], 0.02)
    assert json.dumps(curve.to_dict())
    assert curve.xscale == "log"


def test_composition_crb_falls_like_one_over_t():
    lin = linear(D, 0.5)
    c1 = audit_reconstruction(lin, "split-mle", n=200, rng=1).crb
    for t in (2, 4):
        assert audit_reconstruction([lin] * t, "split-mle", n=200, rng=1).crb == pytest.approx(c1 / t, rel=1e-12)
    mech = modulated(sigma=0.15)
    curve = composition_curve(mech, rounds=(1, 2, 4), attackers=("split-mle", "naive"), n=5000, rng=71,
                              bound="crb_phase_conditional")
    tcrb = np.array(curve.series["T·crb"]["y"])
    # tr((Σ_t I_t)⁻¹) ≤ tr(I₁⁻¹)/T (operator convexity) and ≥ d²/(T tr I₁).
    single = audit_reconstruction(mech, "split-mle", n=200, rng=1)
    assert np.all(tcrb <= tcrb[0] * (1 + 1e-9)) and np.all(tcrb >= single.seed_bound * (1 - 1e-9))
    ratio = np.array(curve.series["MSE/bound (split-mle)"]["y"])
    assert np.all(np.abs(ratio - 1) < 0.06)


def test_error_split_and_fields():
    res = audit_reconstruction(linear(D), "split-mle", n=20_000, rng=81)
    assert res.mse_along + res.mse_orth == pytest.approx(res.mse)
    assert res.crb_along + res.crb_orth == pytest.approx(res.crb)
    assert res.mse_orth / res.crb_orth == pytest.approx(1, abs=0.05)
    assert res.variance == pytest.approx(res.mse - res.bias_sq)
    d = res.to_dict()
    assert d["kind"] == "reconstruction" and isinstance(res, ReconstructionAudit)
    json.dumps(d)
    assert set(d["ratio"]) >= {"crb", "seed_bound", "hcr"}


def test_instances_and_classes_are_accepted():
    prior = GaussianPrior(np.zeros(D), 1.0)
    mech = modulated()
    res = audit_reconstruction(mech, PosteriorMean(mech, prior=prior), prior=prior, n=500, rng=1)
    assert res.attacker == "posterior-mean"
    assert audit_reconstruction(mech, SplitMLE, n=200, rng=1).attacker == "SplitMLE"


def test_bad_input():
    mech = modulated()
    with pytest.raises(AttackRegistryError):
        audit_reconstruction(mech, "no-such-attack", n=10)
    with pytest.raises(InvalidParameterError, match="phase"):
        audit_reconstruction(mech, "naive", n=10, phase="sometimes")
    with pytest.raises(InvalidParameterError, match="either"):
        audit_reconstruction(mech, "naive", x=np.zeros(D), prior=GaussianPrior(np.zeros(D), 1.0), n=10)
    with pytest.raises(InvalidInputError):
        audit_reconstruction(mech, "naive", x=np.zeros(D + 1), n=10)
    with pytest.raises(InvalidInputError, match="phase"):
        SplitMLE(mech).reconstruct(np.zeros((3, D)))
    with pytest.raises(InvalidParameterError, match="not a reconstruction attack"):
        audit_reconstruction(mech, "rr-label-posterior", n=10)
    assert math.isfinite(audit_reconstruction(mech, "naive", n=50, rng=1).mse)


def test_user_torch_mechanism_audited_with_autograd_fisher():
    import torch

    from privaudit.audit.stats.fisher import GaussianNoiseMap

    a = torch.tensor([[1.0, 0.5, 0.0], [0.0, 1.0, -0.5], [0.3, 0.0, 1.0]], dtype=torch.float64)
    mech = GaussianNoiseMap(lambda x: torch.tanh(x @ a.T) + 0.1 * x, dim=3, sigma=0.02)
    x = np.array([0.2, -0.1, 0.3])
    res = audit_reconstruction(mech, None, x=x, n=1500, rng=91, confidence=CONF)
    assert res.attacker == "autodiff-mle"
    lo, hi = res.ratio_ci["crb"]
    assert lo <= 1 <= hi  # the generic MLE is efficient at low noise
    assert res.hcr >= res.crb * (1 - 1e-9)


@pytest.mark.parametrize("make", [lambda: 3, lambda: None, lambda: np.random.default_rng(2),
                                  lambda: np.random.SeedSequence(4)])
def test_every_rng_form_records_an_integer_seed_that_reproduces(make):
    from privaudit.audit import audit_reconstruction
    from privaudit.mechanisms import GaussianMechanism

    mech = GaussianMechanism(sigma=0.5)
    a = audit_reconstruction(mech, "naive", x=np.array([0.3, -0.1]), n=500, rng=make(), hcr=False)
    assert type(a.seed) is int
    b = audit_reconstruction(mech, "naive", x=np.array([0.3, -0.1]), n=500, rng=a.seed, hcr=False)
    assert a.mse == b.mse and a.bias == b.bias
