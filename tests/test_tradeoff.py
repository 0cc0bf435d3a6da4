"""Trade-off theory curves, ε lower-bound estimators and audit_tradeoff mechanics."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from joblib import Parallel, delayed
from scipy.stats import binom
from statsmodels.stats.proportion import proportion_confint

from privaudit.audit import audit_tradeoff, tradeoff_curve
from privaudit.audit.stats import epsilon_bounds as eb
from privaudit.learners.dpsgd_view import LabelCanarySteps
from privaudit.learners.iwp_view import RecordRelease
from privaudit.learners.modulated_view import transcript_pair
from privaudit.audit.engines.tradeoff import ALPHA_GRID, TradeoffAudit, composed_tradeoff
from privaudit.mechanisms import (
    GaussianMechanism,
    InvalidParameterError,
    LaplaceMechanism,
    ModulatedMechanism,
    PrivacyClaim,
    RandomizedResponse,
    dpsgd_epsilon,
    gaussian_tradeoff,
    random_orthonormal_basis,
)

# The ε grid of pld_tradeoff has step h = 60/4000 = 0.015; the envelope of tangent lines
# misses a smooth convex curve by O(h²/2) ≈ 1.1e-4 at most.
ENVELOPE_TOL = 0.015**2 / 2


# --- theory curves -------------------------------------------------------------------------------
@pytest.mark.parametrize("steps,z", [(1, 1.0), (10, 2.0), (100, 5.0)])
def test_composed_curve_matches_gaussian_closed_form(steps, z):
    c = composed_tradeoff(ALPHA_GRID, noise_multiplier=z, steps=steps)
    g = gaussian_tradeoff(math.sqrt(steps) / z, ALPHA_GRID)
    # dp_accounting's pessimistic PLD over-estimates δ(ε), so the curve can only be lower.
    assert np.all(c <= g + 1e-12)
    assert np.max(g - c) <= ENVELOPE_TOL


def test_replace_one_doubles_sensitivity():
    c = composed_tradeoff(ALPHA_GRID, noise_multiplier=4.0, steps=4, adjacency="label")
    g = gaussian_tradeoff(2 * math.sqrt(4) / 4.0, ALPHA_GRID)
    assert np.all(c <= g + 1e-12) and np.max(g - c) <= ENVELOPE_TOL


def _theory_cases():
    g = GaussianMechanism(epsilon=1.0, delta=1e-5)
    yield "gaussian", g.tradeoff(ALPHA_GRID), g.claim, 1e-12
    lap = LaplaceMechanism(epsilon=1.0)
    yield "laplace", lap.tradeoff(ALPHA_GRID), lap.claim, 1e-12
    rr = RandomizedResponse(epsilon=1.5, categories=(0, 1, 2))
    yield "rr", rr.tradeoff(ALPHA_GRID), rr.claim, 1e-12
    steps = LabelCanarySteps(noise_multiplier=2.0, steps=20, sampling_rate=0.1)
    yield "dpsgd-subsampled", steps.tradeoff(ALPHA_GRID), steps.claim, 1e-12
    rec = RecordRelease(GaussianMechanism(epsilon=1.0, delta=1e-5, sensitivity=2.0),
                        RandomizedResponse(epsilon=1.0), PrivacyClaim(2.0, 1e-5, "any"))
    yield "iwp-record", rec.tradeoff(ALPHA_GRID), rec.claim, 1e-12
    mechs = [ModulatedMechanism(alpha=0.5, lam=0.5, omega=0.8, dim=3, epsilon=0.5, delta=1e-5,
                                basis=random_orthonormal_basis(3, 1, t)) for t in range(4)]
    rel, x, xp = transcript_pair(mechs)
    yield "modulated-transcript", gaussian_tradeoff(rel.displacement_mu(x, xp), ALPHA_GRID), rel.claim, 1e-12


@pytest.mark.parametrize("case", list(_theory_cases()), ids=lambda c: c[0])
def test_theory_curves_lie_above_claim(case):
    _, curve, claim, tol = case
    assert np.all(curve >= tradeoff_curve(claim.epsilon, claim.delta, ALPHA_GRID) - tol)


def test_record_release_exact_epsilon_matches_basic_composition_for_pure_parts():
    # RR(ε₁) ⊗ RR(ε₂) is exactly (ε₁ + ε₂)-DP at δ = 0 (the product of the two likelihood ratios).
    rec = RecordRelease(RandomizedResponse(epsilon=0.7), RandomizedResponse(epsilon=0.4), PrivacyClaim(1.1, 0.0, "any"))
    pld = rec.pld()
    assert pld.get_epsilon_for_delta(1e-12) == pytest.approx(1.1, abs=2e-3)  # PLD grid 1e-3 per part


# --- estimators ------------------------------------------------------------------------------------
@pytest.mark.parametrize("k,n", [(0, 100), (5, 100), (500, 1000), (99, 100)])
def test_clopper_pearson_matches_statsmodels(k, n):
    # A one-sided bound at level c is the upper end of the two-sided interval at 1 − 2(1 − c).
    ref = proportion_confint(k, n, alpha=0.1, method="beta")[1]
    assert eb.clopper_pearson_upper(k, n, 0.95) == pytest.approx(ref, rel=1e-9)
    ref_lo = proportion_confint(k, n, alpha=0.1, method="beta")[0]
    assert eb.clopper_pearson_lower(k, n, 0.95) == pytest.approx(ref_lo, rel=1e-9, abs=1e-15)


def test_epsilon_from_rates_inverts_the_privacy_region():
    eps, delta = 1.3, 1e-3
    a = np.array([0.01, 0.1, 0.3])
    b = 1 - delta - math.exp(eps) * a  # points on the first line of f_{ε,δ}
    assert np.allclose(eb.epsilon_from_rates(a, b, delta), eps)
    assert eb.epsilon_from_rates(0.5, 0.5, 0.0) == 0.0


def test_mu_from_rates_inverts_gaussian_tradeoff():
    a = np.array([0.01, 0.2, 0.5])
    assert np.allclose(eb.mu_from_rates(a, gaussian_tradeoff(0.8, a)), 0.8)


def test_one_run_p_value_brute_force():
    # δ = 0: the p-value is the binomial tail; δ > 0 adds 2mδ·max_i P[v − i ≤ Bin < v]/i.
    m, r, v, eps, delta = 100, 20, 16, 1.0, 1e-4
    q = 1 / (1 + math.exp(-eps))
    tail = binom.sf(v - 1, r, q)
    assert eb.one_run_p_value(m, r, v, eps, 0.0) == pytest.approx(tail)
    extra = max(sum(binom.pmf(v - j, r, q) for j in range(1, i + 1)) / i for i in range(1, v + 1))
    assert eb.one_run_p_value(m, r, v, eps, delta) == pytest.approx(tail + 2 * m * delta * extra)


def test_one_run_bound_is_zero_without_signal():
    rng = np.random.default_rng(0)
    res = eb.one_run_bound(rng.standard_normal(1000), rng.choice((-1.0, 1.0), 1000), delta=1e-5)
    assert res.epsilon == 0.0 or res.epsilon < 0.5


def test_dkw_band_contains_true_curve():
    rng = np.random.default_rng(1)
    mu, n = 1.0, 20000
    s0, s1 = np.sort(rng.standard_normal(n)), np.sort(rng.standard_normal(n) + mu)
    fpr, fnr, _ = eb.empirical_curve(s0, s1, presorted=True)
    lo, hi = eb.dkw_band(fpr, fnr, n, n, ALPHA_GRID, 0.95)
    true = gaussian_tradeoff(mu, ALPHA_GRID)
    assert np.all(lo <= true + 1e-12) and np.all(true <= hi + 1e-12)


def test_bounds_reject_bad_input():
    with pytest.raises(InvalidParameterError, match="selection"):
        eb.clopper_pearson_bound([0, 1], [0, 1], [0, 1], [0, 1], delta=1e-5, selection="nope")
    with pytest.raises(InvalidParameterError, match="confidence"):
        eb.gdp_bound([0, 1], [0, 1], [0, 1], [0, 1], delta=1e-5, confidence=1.5)


def test_llr_counts_are_self_normalised_importance_sums():
    # Reference: plain per-threshold sums over the pooled scores. For N(±½, 1) the score v is
    # itself the log-likelihood ratio of N(½, 1) against N(−½, 1).
    from privaudit.attacks.threshold_selection import _llr_counts

    rng = np.random.default_rng(0)
    s0, s1 = np.sort(rng.normal(-0.5, 1, 300)), np.sort(rng.normal(0.5, 1, 200))
    pooled = np.r_[s0, s1]
    t = np.r_[-np.inf, np.quantile(pooled, [0.01, 0.3, 0.5, 0.9, 0.99]), s0[5], s1[-3], np.inf]
    fp, fn, rfp, rfn = _llr_counts(s0, s1, t)
    w0 = 1 / (300 + 200 * np.exp(pooled))
    w1 = w0 * np.exp(pooled)
    for k, tk in enumerate(t):
        assert fp[k] == pytest.approx(300 * w0[pooled > tk].sum() / w0.sum(), rel=1e-9, abs=1e-12)
        assert fn[k] == pytest.approx(200 * w1[pooled <= tk].sum() / w1.sum(), rel=1e-9, abs=1e-12)
        assert rfp[k] == pytest.approx(200 * w1[pooled < tk].sum() / w1.sum(), rel=1e-9, abs=1e-12)
        assert rfn[k] == pytest.approx(300 * w0[pooled >= tk].sum() / w0.sum(), rel=1e-9, abs=1e-12)
    # A density that excludes every draw of x (weights all 0) is no estimate: counting is used.
    assert _llr_counts(np.full(5, 1e300), np.full(5, 1e300), np.zeros(1)) is None


def test_llr_rates_are_unbiased_and_less_noisy_than_counts_in_the_tail():
    # S = ln LR of two unit-variance Gaussians at distance μ: under x, S ~ N(−μ²/2, μ²),
    # so P0(S > t) = Φ̄((t + μ²/2)/μ).
    from scipy.stats import norm

    from privaudit.attacks.threshold_selection import _llr_counts

    mu, m, reps = 1.0, 2000, 400
    t = np.array([norm.isf(0.01) * mu - mu**2 / 2])  # α = 0.01
    rng = np.random.default_rng(1)
    pooled_est, counted = [], []
    for _ in range(reps):
        s0 = np.sort(rng.normal(-mu**2 / 2, mu, m))
        s1 = np.sort(rng.normal(mu**2 / 2, mu, m))
        pooled_est.append(_llr_counts(s0, s1, t)[0][0] / m)
        counted.append(np.mean(s0 > t[0]))
    se = math.sqrt(0.01 * 0.99 / m / reps)  # binomial SE of the mean of the counted estimates
    assert abs(np.mean(counted) - 0.01) < 4 * se  # the reference estimator is itself on target
    assert abs(np.mean(pooled_est) - 0.01) < 4 * se
    # Every pooled score above t counts, weighted by 1/(1 + e^S): measured variance ratio 0.10 (400 replications,
    # relative SE ≈ 10 %), so 0.25 fails only if the estimator loses most of its advantage.
    assert np.var(pooled_est) < 0.25 * np.var(counted)


@pytest.mark.parametrize("eps", [0.5, 4.0])
def test_likelihood_ratio_audit_reaches_the_clopper_pearson_ceiling(eps):
    # The ceiling is the best CP ε̲ of any threshold test with the *true* rates, at the audit's
    # evaluation size (pooled directions: 2·n_eval trials). Measured means over 12 seeds at n = 1e6:
    # 0.99 and 0.99 with pooled-rate selection, 0.86 and 0.94 with counted rates (per-seed SD ≈ 0.04,
    # so the mean of 8 has SE ≈ 0.014 and 0.95 sits 2-3 SE below the expected value).
    from privaudit.audit.stats.power import cp_ceiling

    g = GaussianMechanism(epsilon=eps, delta=1e-5)
    alpha = np.geomspace(1e-9, 0.5, 20000)
    ratios = []
    for seed in range(8):
        r = audit_tradeoff(g, np.zeros(1), np.ones(1), n=1_000_000, rng=seed, attacker="likelihood-ratio")
        ratios.append(r.epsilon_lb / cp_ceiling(gaussian_tradeoff(g.mu, alpha), alpha, 2 * r.n_eval, 1e-5, 0.95))
    assert np.mean(ratios) >= 0.95, ratios
    assert max(ratios) <= 1.15, ratios  # above the ceiling only by evaluation noise


def test_a_wrong_declared_density_costs_power_never_validity():
    # The density the selection trusts is 3× too steep (its LR scores are 3× too large); the test it
    # picks is still evaluated by counting on held-out releases, so a correct Laplace passes.
    class SteepDensityLaplace(LaplaceMechanism):
        def log_density(self, outputs, x):
            return 3.0 * super().log_density(outputs, x)

    m = SteepDensityLaplace(epsilon=1.0)
    seeds = np.random.SeedSequence(7).spawn(100)
    lbs = [audit_tradeoff(m, np.zeros(1), np.ones(1), n=2000, rng=ss, attacker="likelihood-ratio").epsilon_lb
           for ss in seeds]
    # Each ε̲ exceeds ε = 1 with probability ≤ 0.05: more than 13 of 100 has probability 4.6e-4.
    assert sum(v > 1.0 for v in lbs) <= 13


# --- audit_tradeoff --------------------------------------------------------------------------------
def test_the_forced_likelihood_ratio_is_also_evaluated_on_the_training_releases():
    # Its fit and its certified place do not depend on the training split, so those releases are
    # evaluation data for it; a generic attacker, chosen by a ranking that saw them, never gets them.
    g = GaussianMechanism(epsilon=1.0, delta=1e-5)
    res = audit_tradeoff(g, np.zeros(1), np.ones(1), n=20_000, rng=0)
    assert res.attacker == "likelihood-ratio" and res.n_train == 4000
    assert res.n_eval == res.n - res.n_select == 16_000
    generic = audit_tradeoff(g, np.zeros(1), np.ones(1), n=20_000, rng=0, attacker=["projection", "mlp"])
    assert generic.n_eval == generic.n - generic.n_select - generic.n_train == 12_000


def test_audit_result_fields_and_json():
    g = GaussianMechanism(epsilon=1.0, delta=1e-5)
    res = audit_tradeoff(g, np.zeros(2), np.array([1.0, 0.0]), n=20000, rng=3)
    assert isinstance(res, TradeoffAudit) and res.kind == "tradeoff"
    # Black-box first: the exact LR runs beside the generic suite, and the best on the selection split is certified.
    assert {"likelihood-ratio", "atom", "lattice", "bit-pattern", "projection"} <= set(res.attackers_tried)
    assert res.verdict == "pass"
    assert res.epsilon_exact == pytest.approx(1.0, rel=1e-6)
    # The exact LR, certified whatever the ranking and trained on nothing, is also evaluated on the
    # training releases; a generic attacker only on the held-out ones.
    trained = 0 if res.attacker == "likelihood-ratio" else res.n_train
    assert res.n_train > 0 and res.n_select + res.n_eval + trained == res.n
    assert res.band["lower"].shape == res.alpha.shape == res.claim_curve.shape == res.exact_curve.shape
    assert np.all(np.diff(res.fpr) >= 0)
    d = json.loads(json.dumps(res.to_dict()))
    for key in ("epsilon_lb", "claim", "epsilon_exact", "verdict", "fpr", "fnr", "band", "n", "confidence", "seed",
                "estimator", "assumptions", "min_detectable_ratio"):
        assert key in d
    # The seed reproduces the audit.
    again = audit_tradeoff(g, np.zeros(2), np.array([1.0, 0.0]), n=20000, rng=res.seed)
    assert again.epsilon_lb == res.epsilon_lb and again.attacker == res.attacker


def test_audit_rejects_bad_arguments():
    g = GaussianMechanism(epsilon=1.0, delta=1e-5)
    with pytest.raises(InvalidParameterError, match="estimator"):
        audit_tradeoff(g, np.zeros(1), np.ones(1), n=1000, estimator="bayes")
    with pytest.raises(InvalidParameterError, match="claim"):
        audit_tradeoff(object(), 0, 1, n=1000)


def test_gdp_estimator_is_tight_on_gaussian():
    g = GaussianMechanism(epsilon=2.0, delta=1e-5)
    res = audit_tradeoff(g, np.zeros(1), np.ones(1), n=200_000, estimator="gdp", rng=0)
    # μ̲ is a 95% lower bound whose slack shrinks like n^{-1/2}: about 3·SE ≈ 0.02 at this n.
    assert g.mu - 0.05 < res.mu_lb <= g.mu + 1e-9 or res.verdict == "violation"
    assert res.verdict == "pass"


@pytest.mark.parametrize("make", [lambda: 12345, lambda: np.random.default_rng(5), lambda: np.random.SeedSequence(9),
                                  lambda: None], ids=["int", "generator", "seedsequence", "none"])
def test_every_rng_form_records_an_integer_seed_that_reproduces(make):
    rr = RandomizedResponse(epsilon=1.0)
    res = audit_tradeoff(rr, -1.0, 1.0, n=2000, rng=make(), attacker="atom")
    assert isinstance(res.seed, int) and 0 <= res.seed < 2**63
    again = audit_tradeoff(rr, -1.0, 1.0, n=2000, rng=res.seed, attacker="atom")
    assert (again.epsilon_lb, again.operating_point) == (res.epsilon_lb, res.operating_point)


def test_gdp_needs_a_gaussian_claim_or_the_users_assumption():
    lap = LaplaceMechanism(epsilon=1.0)
    with pytest.raises(InvalidParameterError, match="assume_gaussian"):
        audit_tradeoff(lap, np.zeros(1), np.ones(1), n=1000, estimator="gdp")
    rr = RandomizedResponse(epsilon=1.0)
    with pytest.raises(InvalidParameterError, match="carries no mu"):
        audit_tradeoff(rr, -1.0, 1.0, n=1000, estimator="gdp")
    res = audit_tradeoff(GaussianMechanism(epsilon=1.0, delta=1e-5), np.zeros(1), np.ones(1), n=5000,
                         estimator="gdp", rng=0, attacker="likelihood-ratio")
    assert res.estimator == "gdp" and any("Gaussian" in a for a in res.assumptions)
    cp = audit_tradeoff(rr, -1.0, 1.0, n=2000, rng=0, attacker="atom")
    assert cp.estimator == "clopper-pearson" and any("Clopper-Pearson" in a for a in cp.assumptions)


def test_no_violation_at_a_delta_below_the_claims():
    # ε̲ at δ = 0 of a correct (1, 1e-5) Gaussian can exceed 1 (its ε at δ = 1e-10 is larger):
    # that is not a violation of the (1, 1e-5) claim. A GDP bound at δ = 1e-10 used to say "violation".
    g = GaussianMechanism(epsilon=1.0, delta=1e-5)
    res = audit_tradeoff(g, np.zeros(1), np.ones(1), n=200_000, rng=0, delta=1e-10, estimator="gdp",
                         attacker="likelihood-ratio")
    assert g.exact_epsilon(1e-10) > 1.0
    assert res.verdict in ("pass", "inconclusive")
    if res.epsilon_lb > 1.0:
        assert res.verdict == "inconclusive" and any("not a violation" in note for note in res.notes)


def test_minimum_n_is_enforced_before_sampling():
    class Exploding:
        claim = PrivacyClaim(1.0, 0.0, "any")

        def sample(self, x, n, rng=None):
            raise AssertionError("sampled before validating n")

    with pytest.raises(InvalidParameterError, match="n"):
        audit_tradeoff(Exploding(), 0.0, 1.0, n=20)


class _Degenerate:
    """Correct RR except for a degenerate output under x′ = 1 only (NaN, inf or an empty release)."""

    claim = PrivacyClaim(1.0, 0.0, "any")

    def __init__(self, kind: str, p: float = 0.01) -> None:
        self.kind, self.p, self.rr = kind, p, RandomizedResponse(epsilon=1.0)

    def sample(self, x, n, rng=None):
        rng = np.random.default_rng(rng)
        out = self.rr.sample(x, n, rng)[:, None]
        if x == 1.0:
            if self.kind == "empty":
                return np.empty((n, 0))
            out[rng.random(n) < self.p, 0] = np.nan if self.kind == "nan" else np.inf
        return out


@pytest.mark.parametrize("kind", ["nan", "inf", "empty"])
def test_degenerate_outputs_under_one_input_are_leaks_not_crashes(kind):
    res = audit_tradeoff(_Degenerate(kind), -1.0, 1.0, n=20_000, rng=0)
    # Exact ε = ∞: the degenerate output has probability p > 0 under x′ and 0 under x.
    assert res.verdict == "violation"
    assert res.leaks["shape_differs"] == (kind == "empty")
    if kind != "empty":
        assert res.leaks["nonfinite_fraction_x"] == 0.0 and res.leaks["nonfinite_fraction_x_prime"] > 0


def test_stated_power_matches_its_definition():
    from types import SimpleNamespace

    from privaudit.audit.stats.power import certified_test_ratio, cp_ceiling, min_detectable_ratio

    res = audit_tradeoff(RandomizedResponse(epsilon=1.0), -1.0, 1.0, n=5000, rng=0, attacker="atom")
    r = res.min_detectable_ratio
    op = res.operating_point
    test = SimpleNamespace(fpr=op["fpr"], direction=op["direction"], n0=res.n_eval, n1=res.n_eval,
                           confidence=res.confidence)  # one attacker: no Bonferroni share
    assert r == certified_test_ratio(1.0, 0.0, test)
    # The certified test is one test: it can never state more power than the best test at this n.
    assert r >= min_detectable_ratio(1.0, 0.0, res.n_eval, res.confidence)
    a = np.array([op["fpr"]])
    m = 2 * res.n_eval if op["direction"] == "pooled" else res.n_eval
    # Independent check at the certified false-positive rate: just above r that test refutes the claim at
    # expected counts, below it does not.
    assert cp_ceiling(tradeoff_curve(1.01 * r, 0.0, a), a, m, 0.0, 0.95) > 1.0
    assert cp_ceiling(tradeoff_curve(0.97 * r, 0.0, a), a, m, 0.0, 0.95) <= 1.0
    bigger = audit_tradeoff(RandomizedResponse(epsilon=1.0), -1.0, 1.0, n=50_000, rng=0, attacker="atom")
    assert 1.0 < bigger.min_detectable_ratio < r


def test_non_adjacent_pair_is_an_error_or_a_group_claim():
    from privaudit.audit.engines.pair_search import NonAdjacentPairError

    lap = LaplaceMechanism(epsilon=1.0)
    with pytest.raises(NonAdjacentPairError, match="3 steps apart"):
        audit_tradeoff(lap, np.zeros(1), np.full(1, 3.0), n=1000)
    res = audit_tradeoff(lap, np.zeros(1), np.full(1, 3.0), n=20_000, rng=0, adjacency="group")
    # Group privacy: 3 steps of a 1-DP mechanism is 3-DP; a correct Laplace passes it.
    assert res.claim.epsilon == pytest.approx(3.0) and res.verdict == "pass"
    assert any("group-privacy" in note for note in res.notes)


def _null_options():
    from privaudit.audit.testing.negative_controls import CORRECT

    for c in CORRECT:
        opts = [("clopper-pearson", "split"), ("clopper-pearson", "bonferroni")]
        if c.make().claim.mu is not None:
            opts.append(("gdp", "split"))
        for est, sel in opts:
            yield pytest.param(c, est, sel, id=f"{c.name}-{est}-{sel}")


def _is_violation(control, estimator, selection, n, ss) -> bool:
    return audit_tradeoff(control.make(), control.x, control.x_prime, n=n, estimator=estimator,
                          selection=selection, rng=ss).verdict == "violation"


def _violation_rate(control, estimator, selection, audits, n, jobs=1):
    """Share of ``audits`` seeded audits that say "violation"; each seed is a spawned child, so the
    result does not depend on ``jobs``."""
    seeds = np.random.SeedSequence(20261130).spawn(audits)
    v = Parallel(n_jobs=jobs)(delayed(_is_violation)(control, estimator, selection, n, ss) for ss in seeds)
    return float(np.mean(v))


@pytest.mark.parametrize("control,estimator,selection", [
    p for p in _null_options() if p.id in ("k-rr-clopper-pearson-split", "gaussian-gdp-split")])
def test_null_calibration_small(control, estimator, selection):
    """Quick version of the slow test: 20 seeded default audits of a correct mechanism.

    The bound allows one violation in 20 (rate 0.05 = 1 − confidence); the slow test and
    ``benchmarks/bench_tradeoff.py`` measure the rate over 1000 audits.
    """
    assert _violation_rate(control, estimator, selection, 20, 1000) <= 0.05


@pytest.mark.slow
@pytest.mark.parametrize("control,estimator,selection", list(_null_options()))
def test_null_calibration_rate(control, estimator, selection):
    """1000 seeded default audits per (correct mechanism, estimator option): violation rate ≤ 1 − confidence."""
    rate = _violation_rate(control, estimator, selection, 1000, 1000, jobs=2)
    print(f"null violation rate {control.name} {estimator} {selection}: {rate:.4f} over 1000 audits")
    assert rate <= 1 - 0.95


def test_an_equal_pair_is_refused_naming_both_inputs():
    """x == x′ (here True == 1.0) gives releases of one law: ε̲ = 0 would say nothing, so it is refused."""
    from privaudit.mechanisms.validation import InvalidInputError

    with pytest.raises(InvalidInputError, match=r"same input \(x=\[True\], x_prime=\[1.0\]\)"):
        audit_tradeoff(GaussianMechanism(sigma=1.0), [True], [1.0], n=300, rng=0)
