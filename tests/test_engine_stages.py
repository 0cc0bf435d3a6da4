"""Each stage of the three audit pipelines (trade-off, reconstruction, bias), tested alone.

Expected values come from closed forms or from direct numpy/scipy computations on the same
inputs, never from the stage itself.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import stats

from privaudit.attacks.distinguishers import LikelihoodRatioAttack, ProjectionAttack, make_attacker
from privaudit.attacks.priors import DiscretePrior
from privaudit.audit.engines import bias as B
from privaudit.audit.engines import reconstruction as R
from privaudit.audit.engines import tradeoff as T
from privaudit.audit.stats import epsilon_bounds as eb
from privaudit.mechanisms import GaussianMechanism, LaplaceMechanism, ModulatedMechanism, PrivacyClaim
from privaudit.mechanisms.tradeoff import tradeoff_curve
from privaudit.mechanisms.validation import InvalidInputError, InvalidParameterError


# === trade-off =======================================================================================
def test_plan_splits_spends_no_training_block_without_a_trained_attacker_and_caps_the_blocks():
    assert T.plan_splits(1000, False, 0.2, 0.2) == T.Splits(0, 200, 800)
    assert T.plan_splits(1000, True, 0.2, 0.3) == T.Splits(300, 200, 500)
    big = T.plan_splits(10_000_000, True, 0.2, 0.2)
    assert (big.n_train, big.n_select) == (T.MAX_TRAIN, T.MAX_SELECT) and big.n == 10_000_000
    s = T.Splits(3, 4, 5)
    assert (s.train, s.select, s.evaluate) == (slice(0, 3), slice(3, 7), slice(7, 12))
    with pytest.raises(InvalidParameterError, match="too small"):
        T.plan_splits(10, True, 0.5, 0.5)


class _ShapeLeak:
    """Releases x itself, with one extra coordinate when x[0] > 0, and NaN in a quarter of them."""

    claim = PrivacyClaim(1.0, 0.0, "any")

    def sample(self, x, n, rng=None):
        out = np.tile(np.asarray(x, float), (n, 2 if x[0] > 0 else 1))
        out[: n // 4] = np.nan
        return out


def test_draw_releases_records_leaks_and_pads_with_nan():
    r = T.draw_releases(_ShapeLeak(), np.array([0.0]), np.array([1.0]), 8, 0, 1)
    assert r.out0.shape == r.out1.shape == (8, 2)
    assert np.isnan(r.out0[:, 1]).all() and r.leaks["shape_differs"]
    assert r.leaks["nonfinite_fraction_x"] == r.leaks["nonfinite_fraction_x_prime"] == 0.25
    assert r.shape == (-1, 2)
    g = T.draw_releases(GaussianMechanism(sigma=1.0), np.zeros(3), np.ones(3), 5, 7, 8)
    assert g.shape == (-1, 3) and not g.leaks["shape_differs"]
    assert np.array_equal(g.out0, GaussianMechanism(sigma=1.0).sample(np.zeros(3), 5, np.random.default_rng(7)))

    class Short(_ShapeLeak):
        def sample(self, x, n, rng=None):
            return np.zeros((n - 1, 1))

    with pytest.raises(InvalidInputError, match="n releases"):
        T.draw_releases(Short(), np.array([0.0]), np.array([1.0]), 4, 0, 1)


class _Spy:
    """A trained attacker that records what it was fitted on and how many rows it scored."""

    requires_training = True

    def __init__(self):
        self.fit_shapes, self.scored = None, []

    def fit(self, o0, o1, *, mechanism=None, x=None, x_prime=None):
        self.fit_shapes = (np.shape(o0), np.shape(o1), bool(np.isfinite(o0).all()))
        return self

    def score(self, outputs):
        self.scored.append(len(outputs))
        return np.asarray(outputs, float).reshape(len(outputs), -1)[:, 0]


def test_fit_attackers_trains_on_the_training_block_only_and_drops_density_attackers_on_a_shape_leak():
    mech = _ShapeLeak()
    r = T.draw_releases(mech, np.array([0.0]), np.array([1.0]), 40, 0, 1)
    splits = T.Splits(10, 10, 20)
    spy = _Spy()
    fitted = T.fit_attackers([LikelihoodRatioAttack(), spy], r, splits, mech, np.array([0.0]), np.array([1.0]))
    assert fitted == [spy]  # the density no longer applies to a shape that depends on the input
    assert spy.fit_shapes == ((10, 2), (10, 2), True)  # NaN replaced by 0 for an attacker that cannot read it


def test_select_attackers_ranks_on_the_selection_prefix_and_forces_the_likelihood_ratio():
    mech = GaussianMechanism(sigma=1.0)
    x, xp = np.zeros(1), np.ones(1)
    r = T.draw_releases(mech, x, xp, 300, 0, 1)
    splits = T.Splits(100, 80, 120)
    spy = _Spy()
    fitted = T.fit_attackers([spy, LikelihoodRatioAttack()], r, splits, mech, x, xp)
    order, forced = T.select_attackers(fitted, r, splits, delta=0.0, confidence=0.95, estimator="clopper-pearson",
                                       n_thresholds=16)
    assert forced == 1 and order[0] == 1 and sorted(order) == [0, 1]
    assert spy.scored == [80, 80]  # the selection block, under x and under x′; the evaluation block is unseen
    assert T.select_attackers([spy], r, splits, delta=0.0, confidence=0.95, estimator="clopper-pearson",
                              n_thresholds=16) == ([0], None)


def test_certify_evaluates_the_forced_ratio_on_train_and_eval_blocks_at_the_bonferroni_level():
    mech = LaplaceMechanism(epsilon=1.0)
    x, xp = np.zeros(1), np.ones(1)
    r = T.draw_releases(mech, x, xp, 600, 3, 4)
    splits = T.Splits(100, 100, 400)
    lr = LikelihoodRatioAttack().fit(mechanism=mech, x=x, x_prime=xp)
    proj = ProjectionAttack().fit(r.out0[:100], r.out1[:100], x=x, x_prime=xp)
    kw = dict(delta=0.0, confidence=0.9, selection="split", estimator="clopper-pearson", n_thresholds=32)
    cert = T.certify([lr, proj], [0, 1], 0, r, splits, **kw)
    assert cert.n_eval == 500  # train + eval for the forced ratio (n − n_select)
    # Independent: each attacker's bound at 1 − (1 − c)/2, recomputed from its scores.
    rows = np.r_[0:100, 200:600]
    want = []
    for a, idx in ((lr, rows), (proj, slice(200, 600))):
        sc = lambda o: np.asarray(a.score(o), float)  # noqa: E731
        want.append(eb.epsilon_bound(sc(r.out0[100:200]), sc(r.out1[100:200]), np.sort(sc(r.out0[idx])),
                                     np.sort(sc(r.out1[idx])), delta=0.0, confidence=0.95, selection="split",
                                     estimator="clopper-pearson", n_thresholds=32, presorted=True,
                                     log_likelihood_ratio=a.llr_scores).epsilon)
    assert cert.bound.epsilon == max(want) and cert.index == int(np.argmax(want))


def test_trace_curves_reports_the_claim_curve_the_exact_curve_and_a_band_around_the_empirical_curve():
    s0, s1 = np.sort(np.random.default_rng(0).normal(0, 1, 2000)), np.sort(np.random.default_rng(1).normal(1, 1, 2000))
    cert = T.Certificate(0, None, s0, s1)
    claim = PrivacyClaim(1.0, 1e-5, "any")
    mech = GaussianMechanism(sigma=1.0)
    c = T.trace_curves(cert, claim, 0.95, mech, np.zeros(1), np.ones(1))
    assert np.array_equal(c.claim_curve, tradeoff_curve(1.0, 1e-5, T.ALPHA_GRID))
    assert np.array_equal(c.exact_curve, mech.tradeoff(T.ALPHA_GRID))
    fpr, fnr, _ = eb.empirical_curve(s0, s1, presorted=True)
    assert np.array_equal(c.curve.fpr, fpr) and np.array_equal(c.curve.fnr, fnr)
    assert np.array_equal(c.band.alpha, T.ALPHA_GRID) and c.band.alpha is not T.ALPHA_GRID and c.band.method == "DKW"
    emp = np.interp(T.ALPHA_GRID, fpr, fnr)
    assert np.all(c.band.lower <= emp + 1e-12) and np.all(emp <= c.band.upper + 1e-12)
    # DKW with Massart's constant at failure (1 − c)/2 per hypothesis, n = 2000 each: 2 exp(−2 n e²) = 0.025;
    # every true vertex is within e of its empirical one in both coordinates, so the band is the empirical
    # curve (linear between vertices) moved by e right and down, and left and up
    e = math.sqrt(math.log(2 / 0.025) / (2 * 2000))
    line = lambda q: np.interp(np.clip(q, 0, 1), fpr, fnr, left=1.0, right=0.0)  # noqa: E731
    a = T.ALPHA_GRID
    assert np.allclose(c.band.lower, np.clip(line(a + e) - e, 0, 1), rtol=0, atol=1e-12)
    assert np.allclose(c.band.upper, np.where(a < e, 1.0, np.clip(line(a - e) + e, 0, 1)), rtol=0, atol=1e-12)
    override = T.trace_curves(cert, claim, 0.95, mech, np.zeros(1), np.ones(1), exact_curve=lambda a: 1 - a)
    assert np.array_equal(override.exact_curve, 1 - T.ALPHA_GRID)
    assert T.trace_curves(cert, claim, 0.95, _ShapeLeak(), 0, 1).exact_curve is None


def test_judge_compares_at_the_claims_delta():
    claim = PrivacyClaim(1.0, 1e-5, "any")
    assert T.judge(claim, 0.9, 1e-5) == ("pass", None)
    assert T.judge(claim, 1.1, 1e-5) == ("violation", None)
    verdict, note = T.judge(claim, 1.1, 1e-7)
    assert verdict == "inconclusive" and "smaller delta" in note
    assert T.judge(PrivacyClaim(math.inf, 0.0, "any"), 50.0, 0.0) == ("pass", None)


def test_sub_results_refuse_what_they_cannot_be():
    with pytest.raises(InvalidParameterError, match="estimator"):
        T.EpsilonBound("bootstrap", "split", 0.5, None, 1e-5, 0.95)
    with pytest.raises(InvalidParameterError, match="selection"):
        T.EpsilonBound("gdp", "best", 0.5, 0.3, 1e-5, 0.95)
    with pytest.raises(InvalidParameterError, match="confidence"):
        T.EpsilonBound("gdp", "split", 0.5, 0.3, 1e-5, 1.0)
    with pytest.raises(InvalidParameterError, match="delta"):
        T.EpsilonBound("clopper-pearson", "split", 0.5, None, 1.5, 0.95)
    with pytest.raises(InvalidParameterError, match="direction"):
        T.OperatingPoint(0.0, None, "sideways", 0.1, 0.5, 0.12, 0.55)
    with pytest.raises(InvalidParameterError, match="fnr_upper"):
        T.OperatingPoint(0.0, None, "forward", 0.1, 0.5, 0.12, 1.5)
    with pytest.raises(InvalidInputError, match="one size"):
        T.TradeoffCurve(np.zeros(3), np.zeros(4))
    with pytest.raises(InvalidInputError, match="one size"):
        T.Band(np.zeros(3), np.zeros(3), np.zeros((3, 1)))
    with pytest.raises(InvalidParameterError, match="not certified"):
        T.FamilyBound(0.7, None, False)


def test_the_sub_results_that_replaced_dicts_read_by_key():
    op = T.OperatingPoint(0.5, None, "forward", 0.1, 0.5, 0.12, 0.55)
    assert op["fpr"] == op.fpr == 0.1 and op.get("direction") == "forward" and op.get("nope", 3) == 3
    assert "fnr_upper" in op and "nope" not in op and dict(op) == dataclasses.asdict(op)
    with pytest.raises(KeyError):
        op["nope"]
    band = T.Band(np.zeros(2), np.zeros(2), np.ones(2))
    assert band["upper"] is band.upper and band["method"] == "DKW"


def test_the_audit_is_assembled_from_the_stages_sub_results_tradeoff():
    """audit_tradeoff's result holds what each stage returns, recomputed here from the same seed."""
    mech, x, xp, n = LaplaceMechanism(epsilon=1.0), np.zeros(1), np.ones(1), 1000
    res = T.audit_tradeoff(mech, x, xp, n=n, attacker="likelihood-ratio", rng=5)
    ss0, ss1, ssa = np.random.SeedSequence(5).spawn(3)
    attackers = [make_attacker("likelihood-ratio", random_state=np.random.default_rng(c)) for c in ssa.spawn(1)]
    splits = T.plan_splits(n, False, 0.2, 0.2)
    releases = T.draw_releases(mech, x, xp, n, ss0, ss1)
    fitted = T.fit_attackers(attackers, releases, splits, mech, x, xp)
    kw = dict(delta=0.0, confidence=0.95, estimator="clopper-pearson", n_thresholds=256)
    order, forced = T.select_attackers(fitted, releases, splits, **kw)
    cert = T.certify(fitted, order, forced, releases, splits, selection="split", **kw)
    curves = T.trace_curves(cert, mech.claim, 0.95, mech, x, xp)
    rate = cert.bound
    assert res.bound == T.EpsilonBound("clopper-pearson", "split", rate.epsilon, rate.mu, 0.0, 0.95)
    assert res.operating_point == T.OperatingPoint(rate.threshold, rate.reverse_threshold, rate.direction, rate.fpr,
                                                   rate.fnr, rate.fpr_upper, rate.fnr_upper)
    assert np.array_equal(res.curve.fpr, curves.curve.fpr) and np.array_equal(res.band.upper, curves.band.upper)
    assert res.families == T.by_family(fitted, cert) == {"distribution": T.FamilyBound(rate.epsilon,
                                                                                       "likelihood-ratio", True)}
    # the flat names read through
    assert (res.epsilon_lb, res.mu_lb, res.delta, res.confidence) == (rate.epsilon, None, 0.0, 0.95)
    assert res.fpr is res.curve.fpr and res.alpha is res.band.alpha and res.band_lower is res.band.lower
    assert res.epsilon_lb_by_family == {"distribution": {"epsilon_lb": rate.epsilon, "attacker": "likelihood-ratio",
                                                         "certified": True}}


# === reconstruction =====================================================================================
def _mod(**kw):
    return ModulatedMechanism(alpha=0.3, lam=0.5, omega=2.0, dim=3, sigma=0.8, **kw)


def test_plan_setting_resolves_input_and_phases():
    s = R.plan_setting(_mod())
    assert s.dim == 3 and np.allclose(s.x, np.full(3, 1 / math.sqrt(3))) and s.information == "known"
    assert s.m_max == 1 and not s.side_info and s.mechanism is s.rounds[0]
    f = R.plan_setting([_mod(), _mod()], phase=np.array([0.4]))
    assert f.information == "fixed" and f.fixed.shape == (2, 1) and f.phase_known
    assert R.plan_setting(_mod(), phase="hidden").phase_known is False
    with pytest.raises(InvalidParameterError, match="not both"):
        R.plan_setting(_mod(), x=np.zeros(3), prior=DiscretePrior(np.eye(3)))
    with pytest.raises(InvalidParameterError, match="phase must be"):
        R.plan_setting(_mod(), phase="sometimes")
    with pytest.raises(InvalidInputError, match="shape"):
        R.plan_setting(_mod(), phase=np.zeros((3, 1)))


def test_prepare_attacker_picks_the_strongest_applicable_and_refuses_a_learner_without_prior():
    s = R.plan_setting(GaussianMechanism(sigma=1.0), x=np.zeros(2))
    name, att = R.prepare_attacker(None, s, 100, np.random.default_rng(0))
    from privaudit.attacks.registry import available_attacks

    applicable = {n: c.strength for n, c in available_attacks("reconstruction").items()
                  if c.applicable(s.mechanism, prior=None, phase_known=True, side_info=False)}
    assert applicable[name] == max(applicable.values())
    assert hasattr(att, "reconstruct") and not isinstance(att, type)

    class Learner:
        def __init__(self, mechanism, **kw):
            pass

        def fit(self, outputs):
            return self

        def reconstruct(self, outputs, *, phase=None, y=None):
            return outputs

    with pytest.raises(InvalidParameterError, match="needs a prior"):
        R.prepare_attacker(Learner, s, 100, np.random.default_rng(0))


def test_draw_releases_draws_fixed_inputs_phases_and_responses():
    s = R.plan_setting(_mod(), x=np.array([0.1, 0.2, 0.3]), phase=np.array([0.5]),
                       beta=np.array([1.0, 0.0, 0.0]), sigma_y=0.1)
    d = R.draw_releases(s, 50, np.random.default_rng(0))
    assert np.array_equal(d.X, np.tile([0.1, 0.2, 0.3], (50, 1)))
    assert d.phases.shape == (50, 1, 1) and np.all(d.phases == 0.5)
    assert d.outputs.shape == (50, 1, 3) and d.y.shape == (50,)
    assert abs(np.mean(d.y) - 0.1) < 5 * 0.1 / math.sqrt(50)  # y = xᵀβ + N(0, 0.1²)


def test_reconstruct_refuses_estimates_of_the_wrong_shape():
    s = R.plan_setting(GaussianMechanism(sigma=1.0), x=np.zeros(2))
    d = R.draw_releases(s, 10, np.random.default_rng(0))

    class Wrong:
        def reconstruct(self, outputs, *, phase=None, y=None):
            return np.zeros((10, 3))

    with pytest.raises(InvalidInputError, match="returned shape"):
        R.reconstruct("wrong", Wrong(), s, d)
    est = R.reconstruct("naive", R.prepare_attacker("naive", s, 10, np.random.default_rng(1))[1], s, d)
    assert np.array_equal(est, d.outputs[:, 0])  # naive inversion of a Gaussian release is the release


def test_error_statistics_against_direct_numpy():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    est = X + np.array([0.5, 0.0, 0.0]) + 0.1 * rng.normal(size=(400, 3))
    basis = np.eye(3)[:, :1]
    st = R.error_statistics(est, X, 0.95, basis)
    sq = ((est - X) ** 2).sum(axis=1)
    assert st.mse == pytest.approx(sq.mean(), rel=1e-12)
    half = stats.norm.ppf(0.975) * sq.std(ddof=1) / math.sqrt(400)
    assert st.mse_ci == pytest.approx((sq.mean() - half, sq.mean() + half), rel=1e-12)
    assert np.allclose(st.bias, (est - X).mean(axis=0)) and st.bias_p_value < 1e-6
    assert st.mse_along + st.mse_orth == pytest.approx(st.mse, rel=1e-12)
    assert st.mse_along == pytest.approx(((est - X)[:, 0] ** 2).mean(), rel=1e-12)


def test_compute_bounds_gives_the_gaussian_crb_and_notes_a_mechanism_without_information():
    mech = GaussianMechanism(sigma=0.5)
    s = R.plan_setting(mech, x=np.zeros(2))
    d = R.draw_releases(s, 20, np.random.default_rng(0))
    b, notes = R.compute_bounds(s, d, None, np.random.default_rng(1), hcr=False)
    info = mech.fisher_information(np.zeros(2))
    assert b.crb == pytest.approx(np.trace(np.linalg.inv(info)), rel=1e-12)  # tr(I⁻¹) = 2σ²/c
    assert b.seed_bound == pytest.approx(4 / np.trace(info), rel=1e-12)
    assert (b.hcr, b.van_trees, b.crb_phase_conditional) == (None, None, None) and notes == ()
    assert list(b.values) == ["crb", "seed_bound"]

    class NoInfo:
        claim = PrivacyClaim(1.0, 0.0, "any")
        dim = 2

        def sample(self, x, n, rng=None):
            return np.tile(x, (n, 1))

    s2 = R.plan_setting(NoInfo(), x=np.zeros(2))
    b2, notes2 = R.compute_bounds(s2, R.draw_releases(s2, 5, np.random.default_rng(0)), None, np.random.default_rng(0))
    assert b2 == R.Bounds() and b2.values == {} and notes2 and notes2[0].startswith("bounds not computed")


def test_bounds_list_the_computed_ones_in_the_order_they_are_computed():
    b = R.Bounds(crb_along=0.1, crb_orth=0.2, crb=1.0, crb_phase_conditional=1.5, seed_bound=0.8, van_trees=0.4)
    assert list(b.values) == ["crb", "seed_bound", "crb_phase_conditional", "van_trees"]  # hcr not computed
    assert b.values["crb_phase_conditional"] == 1.5 and "crb_along" not in b.values


def test_exact_reconstruction_counts_exact_hits_against_the_rero_bound():
    prior = DiscretePrior(np.array([[0.0, 0.0], [1.0, 0.0]]))
    s = R.plan_setting(GaussianMechanism(sigma=1.0), prior=prior)
    X = prior.sample(200, np.random.default_rng(0))
    est = X.copy()
    est[:50] += 1.0
    r = R.exact_reconstruction(est, X, s, 0.95)
    assert isinstance(r, R.ExactReconstruction) and r["success"] == r.success == 150 / 200
    # two-sided Clopper–Pearson at 0.95: the 2.5 % and 97.5 % beta quantiles
    assert r.success_ci == pytest.approx((stats.beta.ppf(0.025, 150, 51), stats.beta.ppf(0.975, 151, 50)), rel=1e-9)
    assert r.kappa == 0.5
    assert r.mu == pytest.approx(1.0) and r.bound == pytest.approx(stats.norm.cdf(stats.norm.ppf(0.5) + 1.0))
    with pytest.raises(InvalidParameterError, match="success"):
        R.ExactReconstruction(1.2, (0.9, 1.0), 0.5, 0.5, None)
    with pytest.raises(InvalidParameterError, match="success_ci"):
        R.ExactReconstruction(0.5, (0.6, 0.4), 0.5, 0.5, None)


def _stats(mse, ci, p_bias=0.5):
    return R.ErrorStatistics(mse, ci, np.zeros(2), 0.0, mse, p_bias, None, None)


def test_error_statistics_refuse_a_malformed_interval_or_bias():
    with pytest.raises(InvalidInputError, match="mse_ci"):
        R.ErrorStatistics(1.0, (1.2, 0.8), np.zeros(2), 0.0, 1.0, 0.5, None, None)
    with pytest.raises(InvalidInputError, match="bias"):
        R.ErrorStatistics(1.0, (0.8, 1.2), np.zeros((2, 2)), 0.0, 1.0, 0.5, None, None)


def test_judge_applies_unbiased_bounds_only_to_unbiased_attackers():
    bounds = {"crb": 1.0, "van_trees": 0.5, "crb_phase_conditional": 2.0}
    j = R.judge("a", _stats(0.8, (0.7, 0.9)), bounds, None, True, 0.95)
    c = j.comparison
    assert j.verdict == "violation" and c.beaten == ["crb", "crb_phase_conditional"]
    assert c.applies == {"crb": True, "van_trees": True, "crb_phase_conditional": False}
    assert c.ratio["crb"] == pytest.approx(0.8) and c.ratio_ci["crb"] == pytest.approx((0.7, 0.9))
    assert c.ratio["van_trees"] == pytest.approx(1.6) and c.ratio_ci["van_trees"] == pytest.approx((1.4, 1.8))
    biased = R.judge("a", _stats(0.8, (0.7, 0.9), p_bias=1e-9), bounds, None, True, 0.95)
    assert biased.verdict == "pass" and any("measurably biased" in n for n in biased.notes)
    assert R.judge("a", _stats(0.8, (0.7, 0.9)), bounds, None, False, 0.95).verdict == "pass"
    rero = R.ExactReconstruction(0.9, (0.85, 0.95), 0.8, 0.5, 1.0)
    caught = R.judge("a", _stats(2.0, (1.9, 2.1)), {}, rero, False, 0.95)
    assert caught.verdict == "violation" and caught.comparison == R.BoundComparison({}, {}, {}, [])
    assert R.judge("a", _stats(2.0, (1.9, 2.1)), {}, R.ExactReconstruction(0.9, (0.79, 0.95), 0.8, 0.5, 1.0),
                   False, 0.95).verdict == "pass"  # the success's lower limit is below the bound


def test_bound_comparison_names_the_same_bounds_throughout():
    with pytest.raises(InvalidParameterError, match="same bounds"):
        R.BoundComparison({"crb": 1.2}, {}, {"crb": True}, [])
    with pytest.raises(InvalidParameterError, match="same bounds"):
        R.BoundComparison({"crb": 1.2}, {"crb": (1.1, 1.3)}, {"crb": True}, ["van_trees"])


def test_the_audit_is_assembled_from_the_stages_sub_results():
    """audit_reconstruction's result holds what each stage returns, recomputed here from the same seed."""
    mech = GaussianMechanism(sigma=0.5)
    res = R.audit_reconstruction(mech, "naive", x=np.array([0.3, -0.2]), n=400, rng=7, hcr=False)
    root = np.random.SeedSequence(7)
    gen = np.random.default_rng(root.spawn(1)[0])
    s = R.plan_setting(mech, x=np.array([0.3, -0.2]))
    name, att = R.prepare_attacker("naive", s, 400, gen)
    d = R.draw_releases(s, 400, gen)
    est = R.reconstruct(name, att, s, d)
    st = R.error_statistics(est, d.X, 0.95, None)
    bounds, notes = R.compute_bounds(s, d, None, gen, hcr=False)
    j = R.judge(name, st, bounds.values, None, True, 0.95)
    assert res.error.mse == st.mse and np.array_equal(res.error.bias, st.bias) and res.bounds == bounds
    assert res.comparison == j.comparison and res.verdict == j.verdict and res.notes == list(notes) + j.notes
    assert res.error.variance == st.mse - st.bias_sq
    # the flat names read through
    assert (res.mse, res.mse_ci, res.crb, res.ratio) == (st.mse, st.mse_ci, bounds.crb, j.comparison.ratio)
    assert res.bias == st.bias.tolist() and isinstance(res.bias, list)


# === bias ===============================================================================================
def _sampler(k, rng):
    return rng.normal([1.0, 2.0], [1.0, 3.0], size=(k, 2))


def test_accumulate_moments_equals_numpy_over_all_draws_whatever_the_threads():
    theta = np.array([1.0, 2.0])
    ss = np.random.SeedSequence(5)
    mom = B.accumulate_moments(_sampler, theta, (2,), 1000, 300, ss)
    draws = np.concatenate([_sampler(min(300, 1000 - 300 * c), np.random.default_rng(child))
                            for c, child in enumerate(np.random.SeedSequence(5).spawn(4))]) - theta
    assert mom.count == 1000 and np.allclose(mom.mean, draws.mean(axis=0), rtol=1e-12, atol=1e-14)
    assert np.allclose(mom.covariance(), np.cov(draws, rowvar=False), rtol=1e-10)
    par = B.accumulate_moments(_sampler, theta, (2,), 1000, 300, np.random.SeedSequence(5), n_jobs=2)
    assert np.array_equal(par.mean, mom.mean) and np.array_equal(par.m2, mom.m2)


def test_per_coordinate_tests_handle_exact_coordinates_and_give_bonferroni_intervals():
    theta = np.array([1.0, 0.0, 5.0])
    rng = np.random.default_rng(0)
    x = np.column_stack([np.ones(500), rng.normal(size=500), np.full(500, 5.5)]) - theta
    mom = B._Moments.of(x, True)
    c = B.per_coordinate_tests(mom, theta, 500, 0.05)
    assert list(c.degenerate) == [True, False, True] and list(c.exact_bad) == [False, False, True]
    assert c.p_coord[0] == 1.0 and c.p_coord[2] == 0.0 and 2 in c.rejected
    t = stats.t.isf(0.05 / 6, 499)
    se = x[:, 1].std(ddof=1) / math.sqrt(500)
    assert c.ci[1] == pytest.approx([x[:, 1].mean() - t * se, x[:, 1].mean() + t * se], rel=1e-9)


def test_choose_test_falls_back_to_holm_when_forced_or_singular():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(1000, 2))
    mom = B._Moments.of(z, True)
    c = B.per_coordinate_tests(mom, np.zeros(2), 1000, 0.05)
    assert np.allclose(B.choose_test(mom, c, 1000), np.cov(z, rowvar=False))
    assert B.choose_test(mom, c, 1000, "holm") is None
    twins = np.column_stack([z[:, 0], z[:, 0]])  # perfectly correlated: singular covariance
    mt = B._Moments.of(twins, True)
    assert B.choose_test(mt, B.per_coordinate_tests(mt, np.zeros(2), 1000, 0.05), 1000) is None
    few = B._Moments.of(z[:15], True)  # n < 10·p: Hotelling is not used unless forced
    cf = B.per_coordinate_tests(few, np.zeros(2), 15, 0.05)
    assert B.choose_test(few, cf, 15) is None and B.choose_test(few, cf, 15, "hotelling") is not None


def test_global_test_matches_the_textbook_statistics():
    rng = np.random.default_rng(1)
    z = rng.normal(size=(400, 3)) + np.array([0.1, 0.0, 0.0])
    mom = B._Moments.of(z, True)
    c = B.per_coordinate_tests(mom, np.zeros(3), 400, 0.05)
    h = B.global_test(c, B.choose_test(mom, c, 400), 400, 0.05, 0.9)
    mean, S = z.mean(axis=0), np.cov(z, rowvar=False)
    t2 = 400 * mean @ np.linalg.solve(S, mean)
    assert h.test == "hotelling-T2" and h.statistic == pytest.approx(t2, rel=1e-9)
    assert h.p_value == pytest.approx(stats.f.sf((400 - 3) / (3 * 399) * t2, 3, 397), rel=1e-7)
    holm = B.global_test(c, None, 400, 0.05, 0.9)
    pj = 2 * stats.t.sf(np.abs(mean / (z.std(axis=0, ddof=1) / 20)), 399)
    assert holm.test == "holm-t" and holm.p_value == pytest.approx(min(1.0, 3 * pj.min()), rel=1e-9)
    crit = stats.t.isf(0.05 / 6, 399) + stats.norm.ppf(0.9)
    assert holm.min_detectable_bias == pytest.approx(crit * z.std(axis=0, ddof=1) / 20, rel=1e-9)


def test_normality_flags_heavy_tails():
    rng = np.random.default_rng(2)
    g = B._Moments.of(rng.normal(size=(2000, 1)), True)
    h = B._Moments.of(rng.standard_t(2.2, size=(2000, 1)), True)
    live = np.array([True])
    _, _, small = B.normality(g, live, 2000)
    g1, g2, large = B.normality(h, live, 2000)
    assert small < B.NORMALITY_WARNING < large
    assert large == pytest.approx((abs(g2[0]) + g1[0] ** 2) / 2000)
    assert B.normality(g, np.array([False]), 2000)[2] == 0.0


@pytest.mark.parametrize("detected, expect, verdict", [
    (False, "unbiased", "pass"), (True, "unbiased", "fail"), (True, "biased", "pass"), (False, "biased", "fail"),
    (True, "unknown", "info"), (False, "unknown", "info"),
])
def test_bias_judge(detected, expect, verdict):
    assert B.judge(detected, expect) == verdict
