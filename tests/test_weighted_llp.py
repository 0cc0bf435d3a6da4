"""Weighted-LLP: exact privacy curve (vs Monte Carlo and dp_accounting), the caught false claim, unbiased loss, errors.

Monte Carlo tolerances follow conftest's policy (family-wise false-alarm rate 1e-6 per test).
"""

import math

import dp_accounting as dpa
import numpy as np
import pytest

from privaudit.learners import WeightedLLPRegressor
from conftest import assert_within_se, mc_check, z_tolerance
from dp_accounting.rdp.rdp_privacy_accountant import RdpAccountant

from privaudit.learners.weighted_llp import (
    selection_probability,
    wllp_exact_delta,
    wllp_exact_epsilon,
    wllp_noise_multiplier,
    wllp_privacy_loss_distribution,
)
from privaudit.mechanisms.accounting import CalibrationWarning, check_calibration
from privaudit.mechanisms.tradeoff import gaussian_delta
from privaudit.mechanisms.validation import InvalidInputError, InvalidParameterError


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.clip(X @ [1.0, -0.5, 0.25] + 0.3 + 0.2 * rng.normal(size=n), -3, 3)
    return X, y


def _mc_delta(z, eps, k, q, n=200_000, seed=0):
    """Independent Monte Carlo of δ(ε) = q·E_w[δ_G(ε; |w_t|/(z‖w‖))] over w ~ N(0, I_k): (mean, se)."""
    w = np.random.default_rng(seed).standard_normal((n, k))
    d = q * gaussian_delta(np.abs(w[:, 0]) / (z * np.linalg.norm(w, axis=1)), eps)
    return d.mean(), d.std(ddof=1) / math.sqrt(n)


def _old_rdp_noise_multiplier(eps, delta, n, m):
    """The former calibration: RDP with amplification by sampling without replacement (hidden selection)."""
    event = lambda z: dpa.SampledWithoutReplacementDpEvent(n, m, dpa.GaussianDpEvent(z))  # noqa: E731
    acc = lambda: RdpAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)  # noqa: E731
    guess = dpa.get_sigma_gaussian(eps, delta)
    return dpa.calibrate_dp_mechanism(acc, event, eps, delta, dpa.LowerEndpointAndGuess(guess * (m / n) / 4, guess),
                                      tol=1e-3)


@pytest.mark.parametrize("k", [1, 2, 5, 16])
def test_exact_curve_against_monte_carlo_and_dp_accounting(k):
    z, q = 2.5 / math.sqrt(k), 0.6
    for eps in (0.3, 1.0):
        exact = wllp_exact_delta(z, eps, k, q)
        mean, se = _mc_delta(z, eps, k, q)
        assert_within_se(exact, mean, se, n_tests=2)
    # dp_accounting's PLD of the same mixture (pessimistic bins, pessimistic grid) bounds it from above, tightly.
    pld = wllp_privacy_loss_distribution(z, k, q)
    d_pld = pld.get_delta_for_epsilon(1.0)
    assert wllp_exact_delta(z, 1.0, k, q) <= d_pld <= 1.1 * wllp_exact_delta(z, 1.0, k, q)
    # ε(δ) inverts δ(ε).
    e = wllp_exact_epsilon(z, 1e-4, k, q)
    assert wllp_exact_delta(z, e, k, q) == pytest.approx(1e-4, rel=1e-8)


def test_old_amplified_calibration_is_caught_as_false():
    # Issue 14: ρ = 1, ε = 1, δ = 1e-6, α = 0.6, k = 2. The bags reveal the selection, so
    # subsampling gives no amplification; the old z gives δ(1) ≈ 2.3e-6 > 1e-6.
    n, m, k = 1000, 600, 2
    q = selection_probability(n, m, k)
    z_old = _old_rdp_noise_multiplier(1.0, 1e-6, n, m)
    mean, se = _mc_delta(z_old, 1.0, k, q)
    assert mean - z_tolerance() * se > 1e-6                       # Monte Carlo alone refutes the old claim
    assert wllp_exact_delta(z_old, 1.0, k, q) == pytest.approx(mean, abs=z_tolerance() * se)
    with pytest.warns(CalibrationWarning, match="does NOT hold"):
        check = check_calibration(1.0, 1e-6, wllp_exact_epsilon(z_old, 1e-6, k, q), method="RDP amplified",
                                  owner="WeightedLLPRegressor")
    assert check.status == "false" and check.exact_epsilon > 1.05
    # The calibration on the exact curve needs more noise and its claim holds.
    z_new = wllp_noise_multiplier(1.0, 1e-6, k, q)
    assert z_new > z_old
    mean, se = _mc_delta(z_new, 1.0, k, q, seed=1)
    assert mean - z_tolerance() * se <= 1e-6


def test_certified_claim_at_rho_one():
    X, y = _data()
    m = WeightedLLPRegressor(epsilon=1.0, delta=1e-5, rho=1.0, label_bounds=(-3, 3), random_state=0).fit(X, y)
    assert m.certified_ and m.certified_epsilon_ <= 1.0
    assert m.certified_epsilon_ == pytest.approx(1.0, rel=1e-6)
    assert m.exact_delta(1.0) <= 1e-5 and m.audit_calibration_.status == "exact"
    assert m.claim.adjacency == "label"
    assert m.bag_size_ == 2 and m.n_bags_ == (600 * 6 // 10) // 2
    assert m.selection_probability_ == 0.6 and m.sigma_ == pytest.approx(6 * m.noise_multiplier_)
    h = WeightedLLPRegressor(epsilon=1.0, delta=1e-5, rho=0.5, label_bounds=(-3, 3), random_state=0).fit(X, y)
    assert not h.certified_ and h.certified_epsilon_ == math.inf and h.claim.epsilon == 1.0
    with pytest.raises(InvalidParameterError, match="not certified"):
        h.exact_epsilon(1e-5)                                     # no curve is offered for an uncertified fit


def test_one_label_change_moves_exactly_one_bag_sum():
    # What the exact curve models: the release depends on y_t only through the S_y of t's bag.
    X, y = _data(n=60)
    y2 = y.copy()
    y2[7] = -3.0 if y[7] > 0 else 3.0
    kw = dict(epsilon=1.0, delta=1e-5, label_bounds=(-3, 3), random_state=5)
    a, b = WeightedLLPRegressor(**kw).fit(X, y), WeightedLLPRegressor(**kw).fit(X, y2)
    np.testing.assert_array_equal(a.bags_[0], b.bags_[0])         # S_x (public) does not depend on labels
    changed = np.flatnonzero(a.bags_[1] != b.bags_[1])
    assert changed.size <= 1


def test_calibration_is_cached_across_fits():
    X, y = _data(n=100)
    WeightedLLPRegressor(epsilon=0.9, delta=1e-5, label_bounds=(-3, 3), random_state=0).fit(X, y)
    hits = wllp_noise_multiplier.cache_info().hits
    WeightedLLPRegressor(epsilon=0.9, delta=1e-5, label_bounds=(-3, 3), random_state=1).fit(X, y)
    assert wllp_noise_multiplier.cache_info().hits == hits + 1


def test_integer_seed_is_recorded_and_reproduces():
    X, y = _data(n=100)
    m = WeightedLLPRegressor(epsilon=1.0, delta=1e-5, label_bounds=(-3, 3), random_state=np.random.default_rng(3)).fit(X, y)
    again = WeightedLLPRegressor(epsilon=1.0, delta=1e-5, label_bounds=(-3, 3), random_state=m.seed_).fit(X, y)
    np.testing.assert_array_equal(m.coef_, again.coef_)


def test_bag_size_rule():
    X, y = _data()
    m = WeightedLLPRegressor(epsilon=0.5, delta=1e-5, label_bounds=(-3, 3), random_state=0).fit(X, y)
    assert m.bag_size_ == math.ceil(1 / 0.5**4)


def test_aggregated_loss_is_unbiased():
    """E_w[(θᵀΣw x̃ − Σw y)²] = Σ_i (θᵀx̃_i − y_i)² for i.i.d. N(0, 1) weights (Monte Carlo)."""
    X, y = _data(n=8)
    Xa = np.hstack([X, np.ones((8, 1))])
    theta = np.array([0.3, 0.1, -0.2, 0.05])
    rng = np.random.default_rng(1)
    w = rng.normal(size=(200000, 8))
    samples = (w @ (Xa @ theta - y)) ** 2
    mc_check(samples, np.sum((Xa @ theta - y) ** 2))


def test_nonprivate_is_ols():
    X, y = _data()
    m = WeightedLLPRegressor(epsilon=math.inf, random_state=0).fit(X, y)
    ols = np.linalg.lstsq(np.hstack([X, np.ones((600, 1))]), y, rcond=None)[0]
    np.testing.assert_allclose(np.r_[m.coef_, m.intercept_], ols, rtol=1e-10)


def test_bad_input():
    X, y = _data(n=50)
    with pytest.raises(InvalidInputError, match="label_bounds"):
        WeightedLLPRegressor(epsilon=1.0, label_bounds=(-1, 1)).fit(X, y)
    with pytest.raises(InvalidParameterError, match="label_bounds"):
        WeightedLLPRegressor(epsilon=1.0).fit(X, y)
    with pytest.raises(InvalidParameterError, match="rho"):
        WeightedLLPRegressor(epsilon=1.0, rho=0.0, label_bounds=(-3, 3)).fit(X, y)
    with pytest.raises(InvalidParameterError, match="alpha"):
        WeightedLLPRegressor(epsilon=1.0, alpha=1.0, label_bounds=(-3, 3)).fit(X, y)


def test_single_example_bags_without_selection_are_the_plain_gaussian():
    # k = 1, q = 1: every label is released as y + N(0, (zR)²), so z is the analytic Gaussian's.
    assert wllp_noise_multiplier(1.0, 1e-5, 1, 1.0) == pytest.approx(dpa.get_sigma_gaussian(1.0, 1e-5), rel=1e-8)
    with pytest.raises(InvalidParameterError, match="q"):
        wllp_exact_delta(1.0, 1.0, 2, 1.5)


@pytest.mark.slow
def test_exact_curve_matches_the_fitted_learner_end_to_end():
    """Brute force on the real learner: an attacker who knows X and every other label recovers the bag and its
    weights from the released S_x, computes the exact privacy loss of its S_y between y_t and y_t + R, and the
    hockey-stick estimate E[(1 − e^{ε − L})₊] over 4000 fits matches the exact curve."""
    import itertools

    rng = np.random.default_rng(0)
    X = rng.normal(size=(4, 2))
    y = np.array([0.5, -0.5, 0.2, -0.1])
    lo, hi, t = -1.0, 1.0, 0
    Xa = np.hstack([X, np.ones((4, 1))])
    kw = dict(epsilon=3.0, delta=0.05, alpha=0.5, bag_size=2, label_bounds=(lo, hi))

    def privacy_loss(seed):
        m = WeightedLLPRegressor(random_state=seed, **kw).fit(X, y)
        sx, sy = m.bags_[0][0], m.bags_[1][0]
        for bag in itertools.permutations(range(4), 2):            # the bag whose features span S_x
            w = np.linalg.lstsq(Xa[list(bag)].T, sx, rcond=None)[0]
            if np.allclose(Xa[list(bag)].T @ w, sx, atol=1e-9):
                break
        if t not in bag:
            return 0.0, m
        wt, (other, wo) = w[bag.index(t)], [(i, wi) for i, wi in zip(bag, w) if i != t][0]
        r = sy - wo * y[other] - wt * y[t]                           # the label noise under D
        return ((r - wt * (hi - lo)) ** 2 - r**2) / (2 * m.sigma_**2 * (w @ w)), m

    losses, fits = zip(*(privacy_loss(s) for s in range(4000)))
    losses, m = np.array(losses), fits[-1]
    eps = np.array([0.25, 0.5, 1.0])
    hockey = np.maximum(0.0, 1 - np.exp(eps[None, :] - losses[:, None]))
    exact = [wllp_exact_delta(m.noise_multiplier_, e, 2, m.selection_probability_) for e in eps]
    mc_check(hockey, exact)


# --- float safety of the label noise (issue 14) ---------------------------------------------------------------
def test_noisy_labels_are_float_safe_and_the_textbook_ones_are_not():
    from float_safety import assert_float_safe, one_sided_counts

    from privaudit.learners.weighted_llp import noisy_labels
    from privaudit.mechanisms.lattice import grid_step

    n, sigma, y_t, y_t_prime = 4000, 2.7, 0.3, -1.1      # one label, released n times, under D and D′
    z = np.random.default_rng(0).standard_normal(n)
    new = noisy_labels(np.full(n, y_t_prime), np.ones(n, bool), z, sigma, np.random.default_rng(1))
    for out in (new, noisy_labels(np.full(n, y_t), np.ones(n, bool), z, sigma, np.random.default_rng(2))):
        assert_float_safe(out, [y_t, y_t_prime], grid_step(sigma), sigma, 13.0)
    old = y_t_prime + sigma * z                              # the previous release, same draws
    only_p, only = one_sided_counts(old, y_t, y_t_prime, sigma)
    assert only_p > 0.1 * n                                  # outputs impossible under D: ε = ∞
    assert np.max(np.abs(new - old)) <= grid_step(sigma)
    # Moments of the float-safe noise: mean 0, variance σ² + γ²/12.
    resid = new - y_t_prime
    assert_within_se(resid.mean(), 0.0, resid.std(ddof=1) / math.sqrt(n), n_tests=2)
    assert_within_se(resid.var(ddof=1), sigma**2 + grid_step(sigma) ** 2 / 12, math.sqrt(2 / (n - 1)) * sigma**2,
                     n_tests=2)


def test_float_safe_noise_keeps_the_seeded_fit_within_a_lattice_step(monkeypatch):
    """The offsets come from a spawned stream: bags and weights are those of the textbook release at the seed."""
    import privaudit.learners.weighted_llp as wllp

    X, y = _data(n=200)
    kw = dict(epsilon=1.0, delta=1e-5, label_bounds=(-3, 3), random_state=4)
    new = WeightedLLPRegressor(**kw).fit(X, y)
    monkeypatch.setattr(wllp, "noisy_labels", lambda y, noised, z, sigma, rng: y + noised * z * sigma)
    old = WeightedLLPRegressor(**kw).fit(X, y)
    np.testing.assert_array_equal(new.bags_[0], old.bags_[0])
    gamma = wllp.grid_step(new.sigma_)
    # |ΔS_y| ≤ γ·Σ_{i∈B}|w_i| ≤ 10kγ: every weight is N(0, 1), P(|w| > 10) ≈ 1.5e−23.
    assert 0 < np.max(np.abs(new.bags_[1] - old.bags_[1])) <= 10 * new.bag_size_ * gamma
