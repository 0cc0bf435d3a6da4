"""Weighted-LLP / weighted bag aggregation (Brahmbhatt et al. 2023), as seed 002 (App. G.1) describes it.

Mechanism (linear regression under label DP):

1. Add Gaussian noise N(0, σ²) to a random fraction ρ ∈ (0, 1] of the training labels
   (each label independently with probability ρ).
2. Select a fraction α ∈ (0, 1) of the training examples (⌊αn⌋, uniformly without
   replacement), shuffle them and partition them into disjoint bags of size k (the
   remainder is dropped).
3. Aggregate every bag B into one weighted pair with i.i.d. weights w_i ~ N(0, 1):
   (Σ_{i∈B} w_i x̃_i, Σ_{i∈B} w_i ỹ_i), with x̃ = (x, 1) so that an intercept is learnt.
4. Fit the linear model on the aggregated pairs by least squares. Because
   E[w_i w_j] = 1{i = j}, E[(θᵀΣw x̃ − Σw ỹ)²] = Σ_{i∈B} (θᵀx̃_i − ỹ_i)²: the aggregated
   loss is an unbiased estimate of the instance loss. (The seed trains it "via SGD";
   least squares is the point SGD converges to on this convex quadratic.)

Assumptions we had to make (seed 002 gives only the outline above):

* **Bag size.** Seed 002 (G.4) states that k must grow at least like 1/ε⁴. We use
  k = max(2, ⌈bag_constant/ε⁴⌉) (``bag_constant = 1``) unless ``bag_size`` is given,
  capped at the number of selected examples (then a single bag). Small data at small
  ε therefore leaves very few aggregated pairs — the inapplicability the seed reports.
* **Noise level.** σ = z·R with R = high − low the declared label range and z the
  noise multiplier that dp_accounting's RDP accountant calibrates for
  ``SampledWithoutReplacementDpEvent(n, ⌊αn⌋, GaussianDpEvent(z))`` under
  REPLACE_ONE to reach the target (ε, δ). That event evaluates the base Gaussian at
  *unit* sensitivity for one replacement (unlike the PLD replace-one Gaussian, which
  doubles it; the tests check that with m = n it equals the add/remove Gaussian), and
  one label change moves the noised label by at most R, so the unit is R.

Privacy accounting (``.claim``):

* ρ = 1: **certified**. Every selected label is a Gaussian release of sensitivity R;
  the selection without replacement amplifies it and bagging/aggregation is
  post-processing, so the calibration above gives (ε, δ)-label-DP. ``certified_`` = True.
* ρ < 1: the un-noised labels are protected only by the random-weight aggregation,
  whose guarantee (Brahmbhatt et al. 2023, δ ≈ exp(−Ω(√k)) with unspecified constants,
  and assumptions on the data) we cannot evaluate numerically. ``.claim`` then states
  the *asserted* target (ε, δ) of the method, ``certified_`` is False and
  ``certified_epsilon_`` = ∞: this is exactly the kind of claim privaudit's audits
  should test, not trust.
* ε = ∞: no noise, all labels used, claim ε = ∞.
"""

from __future__ import annotations

import functools
import math

import dp_accounting as dpa
import numpy as np
from dp_accounting.rdp.rdp_privacy_accountant import RdpAccountant
from sklearn.base import BaseEstimator, RegressorMixin

from privaudit.learners.fitted_claim import FittedClaimMixin
from privaudit.learners.input_validation import check_data, check_predict_data
from privaudit.mechanisms.claim import PrivacyClaim
from privaudit.mechanisms.validation import (
    InvalidInputError,
    InvalidParameterError,
    check_delta,
    check_epsilon,
    check_int,
    check_interval,
    check_positive,
)


def _event(z: float, n: int, m: int) -> dpa.DpEvent:
    return dpa.SampledWithoutReplacementDpEvent(n, m, dpa.GaussianDpEvent(z))


def wllp_epsilon(z: float, n: int, m: int, delta: float) -> float:
    """ε at δ of noising every one of m labels sampled without replacement from n (RDP, replace-one)."""
    acc = RdpAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    acc.compose(_event(z, n, m))
    return float(acc.get_epsilon(delta))


@functools.lru_cache(maxsize=128)
def wllp_noise_multiplier(epsilon: float, delta: float, n: int, m: int) -> float:
    """Smallest z (dp_accounting calibration) with :func:`wllp_epsilon` ≤ ε."""
    # Search from the exact unit-sensitivity Gaussian σ(ε, δ) without amplification (m = n):
    # subsampling lowers the answer, RDP's looser conversion raises it, so it is a good guess.
    guess = dpa.get_sigma_gaussian(epsilon, delta)
    return float(dpa.calibrate_dp_mechanism(
        lambda: RdpAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE),
        lambda z: _event(z, n, m), epsilon, delta, dpa.LowerEndpointAndGuess(guess * (m / n) / 4, guess), tol=1e-3))


class WeightedLLPRegressor(FittedClaimMixin, RegressorMixin, BaseEstimator):
    """Linear regression on noisy, randomly weighted bag aggregates (Brahmbhatt et al. 2023).

    Parameters
    ----------
    epsilon, delta : float
        Target label-DP (replace-one); ε = inf is non-private.
    rho : float
        Fraction of labels that get Gaussian noise, in (0, 1] (seed grid {0.01, 0.5, 1}).
    alpha : float
        Fraction of examples aggregated, in (0, 1) (seed: 0.6).
    bag_size : int, optional
        Bag size k; default max(2, ⌈bag_constant/ε⁴⌉).
    bag_constant : float
        Constant of the 1/ε⁴ bag-size rule.
    label_bounds : (low, high)
        Declared label range (required when ε < ∞); labels outside raise.
    random_state : int, Generator or None

    Attributes
    ----------
    claim, certified_, certified_epsilon_, sigma_ (label-noise std), bag_size_, n_bags_,
    bags_ ((S_x, S_y) aggregated pairs), coef_, intercept_.
    """

    def __init__(self, *, epsilon=1.0, delta=1e-6, rho=1.0, alpha=0.6, bag_size=None, bag_constant=1.0,
                 label_bounds=None, random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.rho = rho
        self.alpha = alpha
        self.bag_size = bag_size
        self.bag_constant = bag_constant
        self.label_bounds = label_bounds
        self.random_state = random_state

    def fit(self, X, y):
        """Noise, select, bag and aggregate the labels, then least squares on the bags."""
        eps = check_epsilon(self.epsilon, allow_inf=True)
        delta = check_delta(self.delta)
        rho = check_interval("rho", self.rho, 0.0, 1.0, closed="right")
        alpha = check_interval("alpha", self.alpha, 0.0, 1.0)
        X, y = check_data(X, y, None, self)
        n = X.shape[0]
        private = not math.isinf(eps)
        if self.label_bounds is None:
            if private:
                raise InvalidParameterError("label_bounds=(low, high) must be declared for a private Weighted-LLP")
            lo, hi = -math.inf, math.inf
        else:
            lo, hi = (float(b) for b in self.label_bounds)
            if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
                raise InvalidParameterError(f"label_bounds must be finite with low < high, got {self.label_bounds!r}")
        bad = (y < lo) | (y > hi)
        if np.any(bad):
            i = int(np.argmax(bad))
            raise InvalidInputError(f"y[{i}]={y[i]!r} violates the declared label_bounds={(lo, hi)!r}")
        rng = np.random.default_rng(self.random_state)
        m = max(1, int(math.floor(alpha * n))) if private else n
        if self.bag_size is not None:
            k = check_int("bag_size", self.bag_size)
        else:
            c = check_positive("bag_constant", self.bag_constant)
            k = 1 if not private else max(2, math.ceil(c / eps**4))
        k = min(k, m)
        if private:
            z = wllp_noise_multiplier(eps, delta, n, m)
            self.sigma_ = z * (hi - lo)
            self.certified_ = rho == 1.0
            self.certified_epsilon_ = wllp_epsilon(z, n, m, delta) if self.certified_ else math.inf
            self.claim_ = PrivacyClaim(eps, delta, "label")
        else:
            self.sigma_ = 0.0
            self.certified_, self.certified_epsilon_ = True, math.inf
            self.claim_ = PrivacyClaim(math.inf, delta, "label")
        noised = rng.random(n) < rho
        y_noisy = y + noised * rng.normal(0.0, 1.0, n) * self.sigma_
        chosen = rng.permutation(n)[:m]
        n_bags = m // k
        chosen = chosen[: n_bags * k].reshape(n_bags, k)
        w = rng.normal(size=(n_bags, k)) if private else np.ones((n_bags, k))
        Xa = np.hstack([X, np.ones((n, 1))])
        if not private:  # non-private: instance-level least squares (bags of one, unit weights)
            Sx, Sy = Xa[chosen[:, 0]], y_noisy[chosen[:, 0]]
        else:
            Sx = np.einsum("bk,bkd->bd", w, Xa[chosen])
            Sy = np.einsum("bk,bk->b", w, y_noisy[chosen])
        self.bag_size_, self.n_bags_, self.bags_ = k, n_bags, (Sx, Sy)
        theta = np.linalg.lstsq(Sx, Sy, rcond=None)[0]
        self.coef_, self.intercept_ = theta[:-1], float(theta[-1])
        return self

    def predict(self, X):
        return check_predict_data(self, X) @ self.coef_ + self.intercept_
