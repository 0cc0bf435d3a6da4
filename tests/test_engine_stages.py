"""Each stage of the three audit pipelines (trade-off, reconstruction, bias), tested alone.

Expected values come from closed forms or from direct numpy/scipy computations on the same
inputs, never from the stage itself.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privaudit.attacks.distinguishers import LikelihoodRatioAttack, ProjectionAttack
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
    emp = np.interp(T.ALPHA_GRID, fpr, fnr)
    assert np.all(c.band_lower <= emp + 1e-12) and np.all(emp <= c.band_upper + 1e-12)
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
    b = R.compute_bounds(s, d, None, np.random.default_rng(1), hcr=False)
    info = mech.fisher_information(np.zeros(2))
    assert b.values["crb"] == pytest.approx(np.trace(np.linalg.inv(info)), rel=1e-12)  # tr(I⁻¹) = 2σ²/c
    assert b.values["seed_bound"] == pytest.approx(4 / np.trace(info), rel=1e-12)
    assert b.notes == ()

    class NoInfo:
        claim = PrivacyClaim(1.0, 0.0, "any")
        dim = 2

        def sample(self, x, n, rng=None):
            return np.tile(x, (n, 1))

    s2 = R.plan_setting(NoInfo(), x=np.zeros(2))
    b2 = R.compute_bounds(s2, R.draw_releases(s2, 5, np.random.default_rng(0)), None, np.random.default_rng(0))
    assert b2.values == {} and b2.notes and b2.notes[0].startswith("bounds not computed")


def test_exact_reconstruction_counts_exact_hits_against_the_rero_bound():
    prior = DiscretePrior(np.array([[0.0, 0.0], [1.0, 0.0]]))
    s = R.plan_setting(GaussianMechanism(sigma=1.0), prior=prior)
    X = prior.sample(200, np.random.default_rng(0))
    est = X.copy()
    est[:50] += 1.0
    r = R.exact_reconstruction(est, X, s, 0.95)
    assert r["success"] == 150 / 200 and r["success_ci"][0] < 0.75 < r["success_ci"][1]
    assert r["mu"] == pytest.approx(1.0) and r["bound"] == pytest.approx(stats.norm.cdf(stats.norm.ppf(0.5) + 1.0))


def _stats(mse, ci, p_bias=0.5):
    return R.ErrorStatistics(mse, ci, np.zeros(2), 0.0, p_bias, None, None)


def test_judge_applies_unbiased_bounds_only_to_unbiased_attackers():
    bounds = {"crb": 1.0, "van_trees": 0.5, "crb_phase_conditional": 2.0}
    j = R.judge("a", _stats(0.8, (0.7, 0.9)), bounds, None, True, 0.95)
    assert j.verdict == "violation" and j.beaten == ["crb", "crb_phase_conditional"]
    assert j.applies == {"crb": True, "van_trees": True, "crb_phase_conditional": False}
    assert j.ratio["crb"] == pytest.approx(0.8) and j.ratio_ci["crb"] == pytest.approx((0.7, 0.9))
    biased = R.judge("a", _stats(0.8, (0.7, 0.9), p_bias=1e-9), bounds, None, True, 0.95)
    assert biased.verdict == "pass" and any("measurably biased" in n for n in biased.notes)
    assert R.judge("a", _stats(0.8, (0.7, 0.9)), bounds, None, False, 0.95).verdict == "pass"
    rero = {"success": 0.9, "success_ci": (0.85, 0.95), "bound": 0.8}
    assert R.judge("a", _stats(2.0, (1.9, 2.1)), {}, rero, False, 0.95).verdict == "violation"


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
