"""Tests of the bias preset's checks (audit/bias_checks.py).

The quick tests run the preset once in ``small`` mode and check it against
independent computations: the exact bias of the seed's multi-vector correction
derived by hand, the Gauss–Hermite truncation bias, the exact clipping bias and
closed-form convergence limits. The slow test runs the full preset and checks the
power statement of issue 8 (every unbiased claim powered for a 1 % relative bias).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import assert_within_se

from privaudit.audit.engines.bias import BiasAudit
from privaudit.audit.studies.bias_checks import (
    CONFIDENCE,
    ClippingSetup,
    ModulatedSetup,
    _Budget,
    run_bias_checks,
)
from privaudit.audit.results import ExperimentResult


@pytest.fixture(scope="module")
def small_run():
    return run_bias_checks(small=True, random_state=0)


def by_name(results, prefix):
    hits = [r for r in results if r.target.startswith(prefix)]
    assert hits, f"no check named {prefix!r}"
    return hits


def test_preset_returns_audits_and_curves(small_run):
    assert all(isinstance(r, BiasAudit | ExperimentResult) for r in small_run)
    json.dumps([r.to_dict() for r in small_run])  # strict JSON for the report writer
    audits = [r for r in small_run if isinstance(r, BiasAudit)]
    assert all(a.confidence == CONFIDENCE for a in audits)
    # The preset's verdicts are all "pass" or "info": every claim holds, every known bias is caught.
    assert [a.target for a in small_run if a.verdict == "fail"] == []
    expected = {"unbiased", "biased", "unknown"}
    assert {a.expect for a in audits} == expected


def test_required_catalogue_is_present(small_run):
    names = [r.target for r in small_run]
    for m in (1, 3):
        for what in ("Σ_x (upper triangle)", "G = Σ_x β − Z"):
            for corr in ("derived", "seed"):
                assert f"modulated m={m}: {what}, {corr} correction" in names
        assert f"modulated m={m}: Z" in names
        assert f"modulated m={m}: G without debiasing (naive server)" in names
        assert f"modulated m={m}: Theorem 8.1 variance E‖G − ∇L‖²" in names
    for loss in ("quadratic", "exponential", "logistic"):
        assert any(n.startswith(f"IWP: W⁻¹ of the {loss} loss") for n in names)
        assert any(n.startswith(f"IWP: IWP loss ℓ̃, {loss}") for n in names)
        assert any(n.startswith(f"IWP: IWP gradient ∇ℓ̃, {loss}") for n in names)
    assert any(n.startswith("IWP: B⁻¹") for n in names)
    assert any(n.startswith("NoisySGD gradient") for n in names)
    assert sum(n.startswith("DP-SGD mean gradient, clip") for n in names) >= 3


def test_known_biased_estimators_are_flagged(small_run):
    flagged = [a for a in small_run if isinstance(a, BiasAudit) and a.expect == "biased"]
    names = {a.target for a in flagged}
    assert "modulated m=3: Σ_x (upper triangle), seed correction" in names
    assert "modulated m=3: G = Σ_x β − Z, seed correction" in names
    assert {"modulated m=1: G without debiasing (naive server)", "modulated m=3: G without debiasing (naive server)"} <= names
    assert any(n.startswith("NoisySGD gradient") for n in names)
    assert all(a.detected and a.verdict == "pass" for a in flagged)
    # A control capped below the power it needs is informational, not a failed check.
    truncated = [a for a in small_run if isinstance(a, BiasAudit) and a.target.startswith("IWP: truncated logistic W⁻¹")]
    assert len(truncated) == 3
    for a in truncated:
        assert (a.expect, a.verdict) == (("unknown", "info") if "under-powered" in a.note else ("biased", "pass"))


def test_single_vector_corrections_coincide_and_pass(small_run):
    setup = ModulatedSetup(n_vectors=1)
    np.testing.assert_array_equal(setup.mechanism.seed_correction(), setup.mechanism.second_moment_correction())
    for corr in ("derived", "seed"):
        (a,) = by_name(small_run, f"modulated m=1: Σ_x (upper triangle), {corr} correction")
        assert a.expect == "unbiased" and a.verdict == "pass"


def test_seed_multi_vector_bias_matches_hand_derivation(small_run):
    """The audited bias of the seed's correction brackets λ²(1/(2m²) − 1/(2m))P_V/(1 − α)², m = 3."""
    (a,) = by_name(small_run, "modulated m=3: Σ_x (upper triangle), seed correction")
    setup = ModulatedSetup(n_vectors=3)
    mech = setup.mechanism
    lam, m, alpha = mech.lam, 3, mech.alpha
    # Default basis: the first m standard vectors, so P_V = diag(1, 1, 1, 0).
    p_v = np.diag([1.0, 1.0, 1.0, 0.0])
    exact = (lam**2 * (1 / (2 * m**2) - 1 / (2 * m)) * p_v / (1 - alpha) ** 2)[setup.iu]
    ci = np.asarray(a.bias_ci)
    assert np.all((ci[:, 0] <= exact) & (exact <= ci[:, 1]))
    (d,) = by_name(small_run, "modulated m=3: Σ_x (upper triangle), derived correction")
    assert d.verdict == "pass"


def test_truncation_controls_bracket_the_quadrature_bias(small_run):
    curve = next(r for r in small_run if getattr(r, "name", "") == "iwp_logistic_truncation_bias")
    assert [row["K"] for row in curve.table] == [1, 2, 3]
    for row in curve.table:
        (a,) = by_name(small_run, f"IWP: truncated logistic W⁻¹, K={row['K']}")
        ci = np.asarray(a.bias_ci)
        exact = np.asarray(row["exact_bias"])
        assert np.all((ci[:, 0] <= exact) & (exact <= ci[:, 1]))
        assert np.all(exact > 0)
    # Curves start at zero bias (σ = 0) and grow with σ.
    for series in curve.series.values():
        assert abs(series["y"][0]) < 1e-12 and series["y"][-1] > series["y"][1] > 0


def test_clipping_audits_bracket_the_exact_bias(small_run):
    setup = ClippingSetup(seed=_Budget(1.0, 0, True).seed("dpsgd clipping data"))
    audits = [a for a in small_run if a.target.startswith("DP-SGD mean gradient, clip")]
    for a in audits:
        clip = float(a.target.split("C=")[1])
        exact = setup.exact_bias(clip)
        ci = np.asarray(a.bias_ci)
        assert a.verdict == "info"
        assert np.all((ci[:, 0] <= exact) & (exact <= ci[:, 1])), a.target
    # Above the largest per-sample gradient norm the clip is inactive: no bias at all.
    big = max(audits, key=lambda a: float(a.target.split("C=")[1]))
    assert np.all(setup.exact_bias(float(big.target.split("C=")[1])) == 0) and not big.detected


def test_convergence_curves(small_run):
    iwp = next(r for r in small_run if getattr(r, "name", "") == "iwp_convergence")
    plateau = next(iter(iwp.reference.values()))
    noisy, unbiased = iwp.series["NoisySGD"]["y"], iwp.series["IWP-SGD"]["y"]
    assert plateau > 0
    assert unbiased[-1] < 0.5 * plateau < noisy[-1]
    mod = next(r for r in small_run if getattr(r, "name", "") == "modulated_convergence")
    for name in ("iterative m=1", "iterative m=3"):
        y = mod.series[name]["y"]
        assert y[-1] < y[0]


@pytest.mark.slow
def test_full_preset_power_statement():
    """Every estimator claimed unbiased passes, powered for a 1 % relative bias unless its n hit the cap.

    The preset's policy (:func:`privaudit.audit.studies.bias_budget.powered_audit`) sizes n from a
    pilot and caps it; a capped audit must say it is under-powered, and must still detect a 5 %
    relative bias. Which estimators reach the cap depends on the seed (the targets are drawn, and the
    1 % is relative to their norm): in the committed preset the IWP exponential-loss gradient
    (excess kurtosis ≈ 300) is capped at 0.014; at this test's seed it and the quadratic gradient are.
    """
    results = run_bias_checks(random_state=0)
    rows = []
    for a in results:
        if isinstance(a, BiasAudit) and a.expect == "unbiased":
            rows.append(f"{a.target:70s} n={a.n:>9d} n_required(1%)={a.n_required:>9d} "
                        f"min detectable rel. bias={a.min_detectable_relative_bias:.4f} p={a.p_value:.3f}")
            assert a.verdict == "pass", a.target
            if "capped, so the audit is under-powered" in a.note:
                assert a.min_detectable_relative_bias <= 0.05, a.target
            else:
                assert a.min_detectable_relative_bias <= 0.01, a.target
    print("\n".join(rows))
    assert [a.target for a in results if a.verdict == "fail"] == []


def test_powered_audit_sizes_n_from_the_variance():
    """n = 1.15·λ*·λ_max(S)/(0.01‖θ‖)², λ* the χ² non-centrality of power 0.9 at level 1 − CONFIDENCE."""
    from scipy import optimize, stats

    from privaudit.audit.studies.bias_checks import POWER, SAFETY, powered_audit

    theta = np.array([3.0, 4.0])  # ‖θ‖ = 5
    sd = np.array([2.0, 1.0])

    def sampler(n, rng):
        return theta + rng.standard_normal((n, 2)) * sd

    a = powered_audit(sampler, theta, name="gaussian", budget=_Budget(1.0, 0, False), cap=10**7, small_cap=10**7)
    crit = stats.chi2.isf(1 - CONFIDENCE, 2)
    lam = optimize.brentq(lambda l: stats.ncx2.sf(crit, 2, l) - POWER, 0, 200)
    closed = SAFETY * lam * sd.max() ** 2 / (0.01 * 5.0) ** 2
    assert a.n == pytest.approx(closed, rel=0.05)  # the pilot's λ_max is within ~2 % at 2·10⁴ draws
    assert a.verdict == "pass" and a.min_detectable_relative_bias <= 0.01
    assert f"n = {a.n} draws" in a.note


@pytest.mark.slow
@pytest.mark.parametrize("estimator", ["modulated G", "IWP quadratic loss"])
def test_null_false_alarm_rate_on_real_estimators(estimator):
    """≤ 1 − confidence over 200 seeded runs of an estimator that is unbiased by construction."""
    from scipy import stats

    from privaudit.audit.engines.bias import audit_bias
    from privaudit.audit.studies.bias_checks import IWPSetup
    from privaudit.learners.iwp_losses import iwp_loss

    if estimator == "modulated G":
        setup = ModulatedSetup(n_vectors=3)
        sampler, target, n = setup.sampler("G", "derived"), setup.target("G"), 1000
    else:
        iw = IWPSetup()
        k, p = iw.X.shape

        def sampler(m, rng):
            xt = iw.release_x(m, rng).reshape(m * k, p)
            yt = iw.release_y(m, rng).reshape(m * k)
            return iwp_loss(iw.theta, xt, yt, loss="quadratic", sigma=iw.sigma, epsilon_y=iw.epsilon_y).reshape(m, k)

        target, n = 0.5 * (iw.margins - 1) ** 2, 5000
    runs = 200
    seeds = np.random.SeedSequence(99).spawn(runs)
    alarms = sum(audit_bias(sampler, target, n=n, rng=s, confidence=0.95).detected for s in seeds)
    print(f"{estimator}: null false-alarm rate {alarms / runs:.3f} over {runs} runs (level 0.05)")
    assert alarms <= stats.binom.isf(1e-3, runs, 0.05)


def test_rr_on_bins_conditional_bias_matches_monte_carlo(small_run):
    """The closed-form E[ỹ | y] of a fitted RR-on-Bins release against RR draws over its bins."""
    from privaudit.audit.studies.learner_bias_checks import _rr_conditional_mean
    from privaudit.learners.rr_on_bins import RROnBinsRegressor
    from privaudit.mechanisms import RandomizedResponse

    y = np.random.default_rng(3).beta(2.0, 5.0, 500)
    model = RROnBinsRegressor(epsilon=4.0, label_bounds=(0.0, 1.0), n_support=32)
    model.privatize(y, 0)
    reps, bins = model.binning_.representatives, model.binning_.bin_of
    assert reps.size >= 2
    rr = RandomizedResponse(epsilon=0.75 * 4.0, categories=np.arange(reps.size))
    n = 20_000
    draws = reps[rr.release(np.broadcast_to(bins, (n, bins.size)), np.random.default_rng(1)).astype(int)]
    mc, se = draws.mean(axis=0), draws.std(axis=0, ddof=1) / np.sqrt(n)
    exact = _rr_conditional_mean(model)
    # conftest's policy: Bonferroni over the grid points at family-wise rate FWER.
    assert_within_se(mc, exact, se)
    audits = by_name(small_run, "RR-on-Bins label estimator")
    assert len(audits) == 2 and all(a.verdict == "info" for a in audits)
    curve = next(r for r in small_run if getattr(r, "name", "") == "rr_on_bins_bias")
    # Shrinkage: the bias at the bottom of the label range is positive, at the top negative.
    for s in curve.series.values():
        assert s["y"][0] > 0 > s["y"][-1]


def test_correction_summary_matches_mechanism(small_run):
    """The summary's exact seed-correction bias equals (C_derived − C_seed)/(1 − α)² along V."""
    from privaudit.mechanisms import ModulatedMechanism

    summary = next(r for r in small_run if getattr(r, "name", "") == "modulated_corrections")
    seed_curve = summary.series["seed's λ²/(2m)P_V (exact)"]
    for m, value in zip(seed_curve["x"], seed_curve["y"], strict=True):
        mech = ModulatedMechanism(alpha=0.5, lam=1.0, omega=0.3, n_vectors=m, dim=6, sigma=0.5)
        diff = (mech.second_moment_correction() - mech.seed_correction()) / (1 - mech.alpha) ** 2
        assert value == pytest.approx(diff[0, 0], abs=1e-15)
    flagged = {row["audit"] for row in summary.table if row["detected"]}
    assert flagged == {"modulated m=3: Σ_x (upper triangle), seed correction",
                       "modulated m=3: G = Σ_x β − Z, seed correction"}
