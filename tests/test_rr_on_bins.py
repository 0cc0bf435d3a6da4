"""RR-on-Bins: dynamic programme vs brute force, release frequencies, accounting, errors."""

import itertools
import math

import dp_accounting as dpa
import numpy as np
import pytest
from dp_accounting.pld.pld_privacy_accountant import PLDAccountant

from privaudit.learners import RROnBinsRegressor, WeightedLLPRegressor
from privaudit.learners.rr_on_bins import laplace_epsilon, optimal_binning, rr_epsilon, rr_loss
from privaudit.mechanisms.validation import InvalidInputError, InvalidParameterError


def _brute_force(support, prior, eps):
    """Min expected loss over every monotone map of the support onto m contiguous bins.

    For each map the representatives solve the quadratic exactly from the definition:
    ŷ_j = Σ_y Φ(y) P(j|y) y / Σ_y Φ(y) P(j|y) (independent of the DP's closed form).
    """
    k = support.size
    best = math.inf
    for m in range(1, k + 1):
        for cuts in itertools.combinations(range(1, k), m - 1):
            bin_of = np.searchsorted(np.array(cuts), np.arange(k), side="right")
            e = math.exp(eps)
            P = np.full((k, m), 1 / (e + m - 1))
            P[np.arange(k), bin_of] = e / (e + m - 1)
            w = prior[:, None] * P
            reps = (w * support[:, None]).sum(0) / w.sum(0)
            best = min(best, rr_loss(support, prior, bin_of, reps, eps))
    return best


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("eps", [0.1, 0.7, 2.0, 5.0])
def test_dynamic_programme_equals_brute_force(seed, eps):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 8))
    support = np.sort(rng.choice(np.arange(-10.0, 10.0, 0.5), size=k, replace=False))
    prior = rng.dirichlet(np.full(k, 0.7))
    b = optimal_binning(support, prior, eps)
    brute = _brute_force(support, prior, eps)
    assert b.loss == pytest.approx(brute, rel=1e-9, abs=1e-12)
    # the reported loss is the loss of the returned mechanism, summed directly
    assert rr_loss(support, prior, b.bin_of, b.representatives, eps) == pytest.approx(b.loss, rel=1e-9, abs=1e-12)
    assert np.all(np.diff(b.bin_of) >= 0) and np.all(np.diff(b.representatives) > 0)


def test_more_budget_more_bins_lower_loss():
    support = np.linspace(0, 1, 50)
    prior = np.ones(50) / 50
    bins = [optimal_binning(support, prior, e) for e in (0.1, 1.0, 4.0, 10.0)]
    assert [b.m for b in bins] == sorted(b.m for b in bins)
    assert all(a.loss > b.loss for a, b in zip(bins, bins[1:]))


def test_release_frequencies_and_claim():
    rng = np.random.default_rng(0)
    y = np.clip(rng.normal(size=20000), -2, 2)
    r = RROnBinsRegressor(epsilon=2.0, label_bounds=(-2, 2), n_support=64)
    out = r.privatize(y, rng=1)
    reps = r.binning_.representatives
    assert set(np.unique(out)) <= set(reps)
    m = r.binning_.m
    idx = np.rint((y + 2) / 4 * 63).astype(int)
    own = reps[r.binning_.bin_of[idx]]
    keep = math.exp(1.5) / (math.exp(1.5) + m - 1)
    frac = np.mean(out == own)
    assert abs(frac - keep) < 5 * math.sqrt(keep * (1 - keep) / y.size)
    assert 2.0 - 1e-9 <= r.claim.epsilon <= 2.0 + 1e-4 + 1e-12 and r.claim.delta == 0 and r.claim.adjacency == "label"


def test_accounting_pieces_match_dp_accounting():
    # RR over m bins at keep e^ε/(e^ε+m−1) is exactly ε (dp_accounting, replace-one)
    # up to the PLD's pessimistic rounding of privacy losses to its 1e-4 grid
    for m in (2, 5, 17):
        assert 0.8 <= rr_epsilon(0.8, m) <= 0.8 + 1e-4 + 1e-12
    # Laplace histogram, scale b, L1 sensitivity 2: 2/b, the δ → 0 limit of dp_accounting's PLD
    acc = PLDAccountant(dpa.NeighboringRelation.ADD_OR_REMOVE_ONE)
    acc.compose(dpa.LaplaceDpEvent(8.0 / 2.0))
    assert laplace_epsilon(8.0, 2.0) == pytest.approx(acc.get_epsilon(1e-12), rel=1e-3)


def test_fit_predict_and_infinite_epsilon():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(2000, 3))
    y = np.clip(X @ [1.0, 0.5, -0.5], -4, 4)
    m = RROnBinsRegressor(epsilon=math.inf, label_bounds=(-4, 4)).fit(X, y)
    np.testing.assert_array_equal(m.noisy_labels_, y)
    np.testing.assert_allclose(m.estimator_.coef_, [1.0, 0.5, -0.5], atol=1e-2)
    assert m.claim.epsilon == math.inf
    p = RROnBinsRegressor(epsilon=1.0, label_bounds=(-4, 4), random_state=0).fit(X, y)
    assert p.predict(X).shape == (2000,)


def test_bad_input():
    y = np.array([0.0, 1.0, 3.0])
    X = np.zeros((3, 1))
    with pytest.raises(InvalidInputError, match="label_bounds"):
        RROnBinsRegressor(epsilon=1.0, label_bounds=(0, 2)).fit(X, y)
    with pytest.raises(InvalidParameterError, match="label_bounds"):
        RROnBinsRegressor(epsilon=1.0).fit(X, y)
    with pytest.raises(InvalidParameterError, match="epsilon"):
        RROnBinsRegressor(epsilon=-1.0, label_bounds=(0, 3)).fit(X, y)
    with pytest.raises(InvalidInputError, match="X"):
        RROnBinsRegressor(epsilon=1.0, label_bounds=(0, 3)).fit(np.array([[np.nan], [0], [0]]), y)


@pytest.mark.parametrize("cls", [RROnBinsRegressor, WeightedLLPRegressor])
def test_check_estimator(cls):
    """Non-private (ε = ∞) they pass every check; private, all but the accuracy check."""
    import math
    import warnings

    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exact = check_estimator(cls(epsilon=math.inf, label_bounds=(-1e3, 1e3), random_state=0), on_fail=None)
        private = check_estimator(cls(epsilon=1.0, label_bounds=(-1e3, 1e3), random_state=0), on_fail=None)
    assert [r["check_name"] for r in exact if r["status"] == "failed"] == []
    # check_regressors_train asks for R² > 0.5; labels randomised over a declared range of ±1e3 at ε = 1 cannot give it.
    assert {r["check_name"] for r in private if r["status"] == "failed"} <= {"check_regressors_train"}


# --- float safety of the private prior (issue 14) -------------------------------------------------------------
def _prior_noise_outputs(monkeypatch, y, seeds):
    """The noisy counts (before clipping) of privatize(y) at each seed, captured at the Laplace release."""
    import privaudit.learners.rr_on_bins as rob

    seen, real = [], rob.float_safe_laplace
    monkeypatch.setattr(rob, "float_safe_laplace", lambda v, b, rng: seen.append(real(v, b, rng)) or seen[-1])
    r = RROnBinsRegressor(epsilon=1.0, label_bounds=(0, 1), n_support=4)
    for s in seeds:
        r.privatize(y, rng=s)
    monkeypatch.setattr(rob, "float_safe_laplace", real)
    return np.array(seen)


def test_prior_counts_are_float_safe_and_the_textbook_ones_are_not(monkeypatch):
    from float_safety import assert_float_safe, one_sided_counts

    import privaudit.learners.rr_on_bins as rob
    from privaudit.mechanisms.lattice import grid_step

    y = np.array([0.0, 0.0, 1 / 3, 1.0, 1.0])
    y_prime = y.copy()
    y_prime[0] = 2 / 3                                # replace-one: counts (2,1,0,2) → (1,1,1,2)
    c, c_prime = np.array([2.0, 1, 0, 2]), np.array([1.0, 1, 1, 2])
    scale = 2 / 0.25                                  # prior budget 0.25ε, L1 sensitivity 2
    seeds = range(1500)
    for lab in (y, y_prime):
        assert_float_safe(_prior_noise_outputs(monkeypatch, lab, seeds), [c, c_prime], grid_step(scale), scale, 40.0)
    # The previous code released fl(counts + rng.laplace(0, b)): numpy's Laplace inverted finds outputs of D′
    # impossible under D (ε = ∞).
    monkeypatch.setattr(rob, "float_safe_laplace", lambda v, b, rng: v + rng.laplace(0.0, b, v.shape))
    old = _prior_noise_outputs(monkeypatch, y_prime, seeds)
    only_p, only = one_sided_counts(old, c, c_prime, scale, "laplace")
    assert only == 0 and only_p > 0.1 * len(seeds)


def test_prior_noise_is_laplace(monkeypatch):
    """The captured noisy counts minus the counts: KS against Lap(0, 2/ε_Φ) (ε_Φ = 0.25), level 1e−6."""
    from scipy import stats

    y = np.array([0.0, 0.0, 1 / 3, 1.0, 1.0])
    out = _prior_noise_outputs(monkeypatch, y, range(2000))
    resid = (out - np.array([2.0, 1, 0, 2])).ravel()
    assert stats.kstest(resid, "laplace", args=(0, 8.0)).pvalue > 1e-6
