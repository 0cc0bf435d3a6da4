"""The bank of classic DP algorithms (tests/sniper_bank.py) and the pair search run on it from the domain alone.

Fast tests check the mechanisms (output codes, abort rule, claims, domains), the exact ε
stated for each case against an independent computation, and that a few searches at
small n catch gross bugs and pass correct algorithms. The slow tests run the search
at 10⁶ releases per hypothesis on every case (broken → violation on a true neighbour,
correct → pass), and measure the false-violation rate of the search over 200 searches
on correct mechanisms with a Clopper–Pearson interval.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

import sniper_bank as bank
from privaudit.audit import search_pairs
from privaudit.mechanisms import LaplaceMechanism
from privaudit.mechanisms.domains import Box

CONFIDENCE = 0.95


def _case(name: str) -> bank.Case:
    return next(c for c in bank.cases() if c.name == name)


def _search(mech, n: int, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return search_pairs(mech, n=n, confidence=CONFIDENCE, **kw)


# --------------------------------------------------------------------------- the mechanisms
def test_every_case_declares_its_claim_domain_and_releases_vectorised_outputs():
    for case in bank.cases():
        m = case.mechanism
        assert m.claim.epsilon == bank.EPS0 and m.claim.delta == 0.0
        assert m.claim.adjacency in ("linf<=1", "histogram")
        assert isinstance(m.domain, Box)
        x = m.domain.clip(m.domain.centre)
        out = np.asarray(m.sample(x, 500, 0))
        assert out.shape[0] == 500 and np.all(np.isfinite(out)), case.name
        np.testing.assert_array_equal(out, np.asarray(m.sample(x, 500, 0)))  # the seed reproduces the releases


def test_sparse_vector_codes_and_abort_rule():
    for cls in (bank.SVT1, bank.SVT2, bank.SVT4):
        out = cls().sample(np.full(bank.SVT_D, 30.0), 2000, 1)  # answers far above T: ⊤ almost always
        assert set(np.unique(out)) <= {bank.TRUE, bank.FALSE, bank.ABORTED}
        top = np.cumsum(out == bank.TRUE, axis=1)
        # Nothing but "aborted" after the c-th ⊤, and every query before it answered.
        after = np.concatenate([np.zeros((2000, 1), bool), top[:, :-1] >= bank.SVT_C], axis=1)
        assert np.all(out[after] == bank.ABORTED) and np.all(out[~after] != bank.ABORTED)
        assert top[:, -1].max() == bank.SVT_C
    out = bank.SVT3().sample(np.full(bank.SVT_D, 30.0), 2000, 1)
    released = (out != bank.SVT3_FALSE) & (out != bank.SVT3_ABORTED)
    assert np.all(released.sum(axis=1) <= bank.SVT_C) and np.all(out[released] > -500)
    # SVT5 and SVT6 never abort; SVT5 adds no noise to the answers, so its outputs are monotone in x.
    out5 = bank.SVT5().sample(np.linspace(0, 2, bank.SVT_D), 2000, 2)
    assert np.all(np.diff(out5, axis=1) >= 0)
    assert set(np.unique(bank.SVT6().sample(np.ones(bank.SVT_D), 2000, 2))) <= {bank.TRUE, bank.FALSE}


def test_svt2_draws_a_fresh_threshold_after_each_top():
    # Every answer at T: query 1 is ⊤ iff ν₁ ≥ ρ. Under SVT1 query 2 compares with the same ρ, so a ⊤ on query 1
    # (a low ρ) makes a ⊤ on query 2 likelier than 1/2; under SVT2 the threshold is drawn afresh after the ⊤, and
    # P(⊤₂ | ⊤₁) = P(ν₂ ≥ ρ′) = 1/2 by symmetry.
    n = 200_000
    x = np.full(bank.SVT_D, bank.SVT_T)
    se = math.sqrt(0.25 / (n / 4))
    for cls, fresh in ((bank.SVT1, False), (bank.SVT2, True)):
        out = cls().sample(x, n, 3)
        first = out[:, 0] == bank.TRUE
        p = np.mean(out[first, 1] == bank.TRUE)
        assert (abs(p - 0.5) < 5 * se) if fresh else (p - 0.5 > 5 * se), (cls.__name__, p)


def test_noisy_max_returns_an_index_or_a_value():
    x = np.array([0.0, 2.0, 0.0, 0.0, 0.0])
    for cls in (bank.NoisyMaxLaplace, bank.NoisyMaxExponential):
        idx = cls().sample(x, 20_000, 0)
        assert set(np.unique(idx)) <= set(map(float, range(5))) and np.argmax(np.bincount(idx.astype(int))) == 1
    val = bank.NoisyMaxValueExponential().sample(x, 20_000, 0)
    assert val.shape == (20_000, 1) and val.min() >= 2.0  # exponential noise: the maximum is at least max x


def test_noisy_max_value_laplace_exact_epsilon_is_d_eps_over_2():
    # Independent computation of the tail privacy loss of the noisy maximum with every answer +1:
    # log f_M(t; x + 1) − log f_M(t; x) at t far below the answers, f_M(t) = Σ_i f(t − x_i) Π_{j≠i} F(t − x_j).
    b = 2 / bank.EPS0
    x = np.zeros(bank.RNM_D)

    def log_density(t, a):
        lf, lF = stats.laplace.logpdf(t - a, scale=b), stats.laplace.logcdf(t - a, scale=b)
        return float(np.logaddexp.reduce(lf + lF.sum() - lF))

    t = -40 * b
    loss = log_density(t, x) - log_density(t, x + 1)
    assert loss == pytest.approx(_case("NoisyMax value, Laplace").exact_epsilon, rel=1e-9)
    # and it is the supremum over outputs: |loss(t)| ≤ dε/2 on a grid across the support, below it above the answers
    grid = np.linspace(-40 * b, 40 * b, 2001)
    losses = np.array([log_density(t, x) - log_density(t, x + 1) for t in grid])
    assert np.all(np.abs(losses) <= loss + 1e-9) and losses[-1] < loss - 0.1


def test_svt3_exact_epsilon_is_d_eps2_over_c_at_fixed_d():
    # Independent computation: SVT3's density by quadrature over the threshold noise (bank.svt3_log_density).
    # (a) The bound d·ε₂/c is attained: one low released value, every other query ⊥, every answer −1.
    m, d = bank.SVT3(), bank.SVT_D
    x, down = np.ones(d), np.zeros(d)
    out = np.full((3, d), bank.SVT3_FALSE)
    out[0, 0], out[1, 4], out[2, 9] = -5.0, -30.0, -2.0  # the value may sit at any query
    loss = bank.svt3_log_density(out, down) - bank.svt3_log_density(out, x)
    np.testing.assert_allclose(loss, _case("SVT3").exact_epsilon, atol=1e-9)
    assert _case("SVT3").exact_epsilon == pytest.approx(d * (bank.EPS0 / 2) / bank.SVT_C)
    # (b) and never exceeded: the privacy loss of sampled outputs on several neighbouring pairs stays below it
    # (up to the grid error of the quadrature, ~1e-3 on a log ratio).
    gen = np.random.default_rng(4)
    pairs = [(x, down), (x, np.r_[np.full(5, 2.0), np.zeros(5)]), (np.zeros(d), np.tile([1.0, 0.0], 5)),
             (base := gen.uniform(0, 2, d), np.clip(base + gen.choice([-1.0, 1.0], d), 0, 2))]
    for i, (a, b) in enumerate(pairs):
        o = np.vstack([m.sample(a, 5000, 10 + i), m.sample(b, 5000, 20 + i)])
        llr = bank.svt3_log_density(o, b) - bank.svt3_log_density(o, a)
        assert np.abs(llr).max() <= _case("SVT3").exact_epsilon + 5e-3, i


def test_numerical_svt_releases_fresh_noise_above_the_threshold():
    n, d = 200_000, bank.SVT_D
    out = bank.NumericalSVT().sample(np.ones(d), n, 5)
    aborted = out == bank.NUMSVT_ABORTED
    released = ~aborted & (out != bank.NUMSVT_FALSE)
    assert np.all(released.sum(axis=1) <= bank.SVT_C)
    # The (c+1)-th query on is aborted exactly after the c-th release: the loop stops there.
    top = np.cumsum(released, axis=1)
    after = np.concatenate([np.zeros((n, 1), bool), top[:, :-1] >= bank.SVT_C], axis=1)
    np.testing.assert_array_equal(aborted, after)
    # Released values carry fresh Lap(3c/ε) noise, independent of the comparison that selected them: their
    # mean is the answer (1), where the comparison noise ν_i (selected for being high) would bias it upwards.
    v = out[:, 0][released[:, 0]]
    se = math.sqrt(2) * 3 * bank.SVT_C / bank.EPS0 / math.sqrt(v.size)
    assert abs(v.mean() - 1.0) < 5 * se, (v.mean(), se)


def test_prefix_sum_and_histogram_exact_epsilons():
    # Prefix sums are an invertible linear map of x + Lap(b): the loss is ‖x − x′‖₁ / b.
    d, eps = bank.PREFIX_D, bank.EPS0
    assert _case("PrefixSum").exact_epsilon == pytest.approx(d * 1 * eps)
    assert bank.PrefixSumCorrect().noise.scale == pytest.approx(d / eps)
    assert _case("NoisyHist2").exact_epsilon == pytest.approx(1 / bank.NoisyHistogramWrongScale().epsilon)


def test_every_searched_pair_is_a_true_neighbour():
    from privaudit.audit.engines.pair_search import candidate_pairs

    for case in bank.cases():
        nb = case.mechanism.claim.neighbourhood
        for c in candidate_pairs(case.mechanism.domain, nb, rng=0):
            assert nb.are_neighbours(c.x, c.x_prime) and case.mechanism.domain.contains(c.x_prime), case.name


# --------------------------------------------------------------------------- searches at small n
@pytest.mark.parametrize("name", ["SVT5", "NoisyHist2", "PrefixSum"])
def test_search_catches_gross_bugs_from_the_domain_alone(name):
    case = _case(name)
    res = _search(case.mechanism, n=50_000, screen_n=4_000, certify=2, rng=0)
    nb = case.mechanism.claim.neighbourhood
    assert res.verdict == "violation", res.summary()
    assert nb.are_neighbours(res.best_pair.x, res.best_pair.x_prime)
    if case.exact_epsilon is not None:
        assert res.epsilon_lb <= case.exact_epsilon
    assert "x=[" in res.summary() and "runners-up" in res.summary()


def test_search_passes_a_correct_noisy_max_at_small_n():
    res = _search(bank.NoisyMaxLaplace(), n=50_000, screen_n=4_000, certify=2, rng=0)
    assert res.verdict == "pass" and res.epsilon_lb <= bank.EPS0


def test_failing_assert_private_names_the_pair_by_its_coordinates():
    from privaudit.audit.testing import PrivacyAssertionError, assert_private

    with pytest.raises(PrivacyAssertionError, match=r"at x=\[.*\], x'=\[.*\].*runners-up"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert_private(bank.NoisyHistogramWrongScale(), n=20_000, rng=0)  # the mechanism's declared domain


# --------------------------------------------------------------------------- 10⁶ releases
_SVT3_GAP = pytest.mark.xfail(strict=True, reason=(
    "out of reach of any Clopper-Pearson audit at 1e6 releases: SVT3's exact eps at d = 10 is 0.25, and even its "
    "exact likelihood ratio on the best pair (every answer -1), with the test chosen from the true law, certifies at "
    "most 0.100 on 8e5 held-out releases at the search's level 1 - 0.05/4 (0.115 at 0.95); the leak sits in outputs "
    "of probability ~1e-3. DP-Sniper's 0.172 used 2e8 samples. (The numpy-noise variant, exact eps inf through "
    "the float sampler, is caught since the search screens by plug-in curves: 2.36 on a refined pair.) Strict: a "
    "catch must update the README."))


@pytest.mark.slow
@pytest.mark.parametrize("name", [pytest.param(c.name, marks=_SVT3_GAP) if c.name == "SVT3" else c.name
                                  for c in bank.cases()])
def test_search_at_a_million_releases(name):
    case = _case(name)
    res = _search(case.mechanism, n=1_000_000, screen_n=20_000, certify=2, rng=0)
    pair = res.best_pair
    assert case.mechanism.claim.neighbourhood.are_neighbours(pair.x, pair.x_prime)
    if case.correct:
        assert res.verdict == "pass", res.summary()
    else:
        assert res.verdict == "violation", res.summary()
        if case.exact_epsilon is not None:
            assert res.epsilon_lb <= case.exact_epsilon


@pytest.mark.slow
def test_false_violation_rate_of_the_search_on_correct_mechanisms():
    """≥ 200 searches on correct mechanisms: the rate of certified violations is ≤ 1 − confidence (CP interval)."""
    mechanisms = [
        (LaplaceMechanism(epsilon=1.0), (np.full(1, -1.0), np.full(1, 1.0))),
        (bank.NoisyMaxLaplace(d=3), None),
        (bank.NoisyHistogram(d=2), None),
        (bank.SVT1(d=3), None),
    ]
    runs, violations = 200, 0
    root = np.random.SeedSequence(2026)
    for i, child in enumerate(root.spawn(runs)):
        mech, domain = mechanisms[i % len(mechanisms)]
        res = _search(mech, domain=domain, n=4_000, screen_n=1_000, certify=2, n_random=2, refine=2, rng=child)
        violations += res.verdict == "violation"
    lo, hi = stats.binomtest(violations, runs).proportion_ci(0.95, method="exact")
    assert hi <= 1 - CONFIDENCE, (violations, runs, lo, hi)


@pytest.mark.slow
def test_false_violation_rate_of_the_default_suite_on_given_pairs():
    """225 default audits (25 seeds of each correct bank case on its given pair, Laplace and Gaussian; n = 2·10⁴):
    the rate of certified violations is ≤ 1 − confidence (Clopper–Pearson 95 % interval). Every attacker of the
    suite is tried on every audit, so one that over-certifies on some output shape shows up here."""
    from privaudit.audit import audit_tradeoff
    from privaudit.mechanisms import GaussianMechanism

    cases = [(c.mechanism, *c.given_pair) for c in bank.cases() if c.correct and c.given_pair is not None]
    cases += [(LaplaceMechanism(epsilon=0.1), np.ones(1), np.full(1, 2.0)),
              (GaussianMechanism(epsilon=1.0, delta=1e-5), np.zeros(1), np.ones(1))]
    assert len(cases) == 9
    runs, violations = 0, 0
    for mech, x, xp in cases:
        for child in np.random.SeedSequence(2027).spawn(25):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = audit_tradeoff(mech, x, xp, n=20_000, confidence=CONFIDENCE, rng=child, adjacency="ignore")
            runs, violations = runs + 1, violations + (res.verdict == "violation")
    lo, hi = stats.binomtest(violations, runs).proportion_ci(0.95, method="exact")
    assert hi <= 1 - CONFIDENCE, (violations, runs, lo, hi)
