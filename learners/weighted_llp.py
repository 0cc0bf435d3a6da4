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
  smallest noise multiplier whose *exact* privacy curve (below) meets the target (ε, δ).

Privacy accounting (``.claim``), derived here because the features are public:

* ρ = 1: **certified**. Every label is a Gaussian release of sensitivity R. The
  released bags (S_x, S_y) reveal which examples were selected and, through S_x and
  the public features, the bag weights; so the selection gives **no amplification**
  and the worst case is an attacker who knows the bag B ∋ t and its weights w. One
  label change moves S_y by w_t·R against noise σ‖w‖₂, a Gaussian shift of
  μ(w) = |w_t|/(z‖w‖₂). With q = P(t selected) = ⌊m/k⌋·k/n the exact curve is

      δ(ε) = q · E_w[δ_G(ε; |w_t|/(z‖w‖₂))],      w ~ N(0, I_k),

  where δ_G is the exact μ-GDP curve (Balle & Wang 2018) and w_t²/‖w‖² ~
  Beta(½, (k − 1)/2), so the expectation is a 1-D Gauss–Jacobi-weighted quadrature
  (:func:`wllp_exact_delta`); an attacker who cannot recover w does no better. z is
  calibrated on this curve (:func:`wllp_noise_multiplier`, cached), ``certified_`` is
  True and ``certified_epsilon_`` is the exact ε at δ. dp_accounting's PLD of the same
  mixture (:func:`wllp_privacy_loss_distribution`) gives the same curve up to its
  pessimistic grid, and the tests check both against Monte Carlo over w.

  An earlier version calibrated z with dp_accounting's RDP accountant for
  ``SampledWithoutReplacementDpEvent(n, ⌊αn⌋, GaussianDpEvent(z))``, i.e. it assumed
  the selection was hidden. At ε = 1, δ = 1e-6, α = 0.6, k = 2 that z = 3.571 gives
  exact δ(1) = 2.33e-6 > 1e-6 (exact ε 1.056): a false claim (issue 14). The tests
  keep that case as a regression check.
* ρ < 1: the un-noised labels are protected only by the random-weight aggregation,
  whose guarantee (Brahmbhatt et al. 2023, δ ≈ exp(−Ω(√k)) with unspecified constants,
  and assumptions on the data) we cannot evaluate numerically. ``.claim`` then states
  the *asserted* target (ε, δ) of the method, ``certified_`` is False and
  ``certified_epsilon_`` = ∞: this is exactly the kind of claim privaudit's audits
  should test, not trust.
* ε = ∞: no noise, all labels used, claim ε = ∞.

Floating point: the noisy labels are released on the dithered lattice of
:mod:`privaudit.mechanisms.lattice` (:func:`noisy_labels`), not as ``fl(y + σz)``, whose
low-order bits depend on y (Mironov 2012); the bag sums are computed from them
(post-processing).
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike
from scipy import integrate, optimize, special
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.utils.validation import check_is_fitted

from privaudit.learners import parameter_constraints as _constraints
from privaudit.learners.fitted_claim import FittedClaimMixin
from privaudit.learners.input_validation import check_data, check_predict_data
from privaudit.learners.parameter_constraints import ValidatedParamsMixin
from privaudit.mechanisms.accounting import (
    check_calibration,
    gaussian_mixture_pld,
    gdp_epsilon,
    gdp_sigma,
)
from privaudit.mechanisms.claim import PrivacyClaim
from privaudit.mechanisms.lattice import grid_step, lattice_release
from privaudit.mechanisms.randomness import resolve_seed
from privaudit.mechanisms.tradeoff import gaussian_delta
from privaudit.mechanisms.validation import (
    InvalidInputError,
    InvalidParameterError,
    check_delta,
    check_epsilon,
    check_int,
    check_interval,
    check_positive,
)

if TYPE_CHECKING:
    from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution


def selection_probability(n: int, m: int, k: int) -> float:
    """q = ⌊m/k⌋·k/n: the chance that a given example lands in one of the released bags.

    Parameters
    ----------
    n : int
        Number of training examples.
    m : int
        Number selected (⌊αn⌋).
    k : int
        Bag size (the m mod k remainder is dropped).

    Returns
    -------
    float
        q in [0, 1].
    """
    return (check_int("m", m) // check_int("k", k)) * k / check_int("n", n)


def _check_curve_args(z, k, q) -> tuple[float, int, float]:
    return check_positive("z", z), check_int("k", k), check_interval("q", q, 0.0, 1.0, closed="both")


@functools.lru_cache(maxsize=1024)
def wllp_exact_delta(z: float, epsilon: float, k: int, q: float) -> float:
    """Exact δ(ε) = q·E_w[δ_G(ε; |w_t|/(z‖w‖))] of the ρ = 1 release (module docstring).

    With B = w_t²/‖w‖² ~ Beta(½, (k − 1)/2) the expectation is
    ∫₀¹ δ_G(ε; √b/z) b^{−½}(1 − b)^{(k−3)/2} db / B(½, (k − 1)/2), computed by QUADPACK's
    algebraic-weight rule (exact endpoint singularities; relative tolerance 1e−10).

    Parameters
    ----------
    z : float
        Noise multiplier (σ = z·R), > 0.
    epsilon : float
        ε ≥ 0.
    k : int
        Bag size, ≥ 1.
    q : float
        Selection probability of an example, in [0, 1] (:func:`selection_probability`).

    Returns
    -------
    float
        δ in [0, q].
    """
    z, k, q = _check_curve_args(z, k, q)
    eps = check_positive("epsilon", epsilon, allow_zero=True)
    if q == 0:
        return 0.0
    if k == 1:
        return q * float(gaussian_delta(1 / z, eps))

    def integrand(b: float) -> float:
        return float(gaussian_delta(math.sqrt(b) / z, eps)) if b > 0 else 0.0

    val, _ = integrate.quad(integrand, 0.0, 1.0, weight="alg", wvar=(-0.5, (k - 3) / 2),
                            epsabs=0.0, epsrel=1e-10, limit=200)
    return q * val / special.beta(0.5, (k - 1) / 2)


def wllp_exact_epsilon(z: float, delta: float, k: int, q: float) -> float:
    """Exact ε(δ) of the ρ = 1 release: the root of δ(ε) = δ (0 when δ(0) ≤ δ).

    Parameters
    ----------
    z : float
        Noise multiplier (σ = z·R), > 0.
    delta : float
        δ in (0, 1).
    k : int
        Bag size, ≥ 1.
    q : float
        Selection probability of an example, in [0, 1] (:func:`selection_probability`).

    Returns
    -------
    float
        ε ≥ 0 (Brent's method, relative tolerance 1e−10).
    """
    z, k, q = _check_curve_args(z, k, q)
    delta = check_delta(delta)
    if wllp_exact_delta(z, 0.0, k, q) <= delta:
        return 0.0
    # q·δ_G(ε; 1/z) bounds δ(ε) from above (|w_t| ≤ ‖w‖), hence ε(δ) ≤ ε_G(δ/q; 1/z).
    # (Widened by 0.1%: at k = 1 the bound is attained and the root sits on it.)
    hi = 1.001 * gdp_epsilon(1 / z, delta / q) + 1e-12
    return float(optimize.brentq(lambda e: math.log(max(wllp_exact_delta(z, e, k, q), 1e-300)) - math.log(delta),
                                 0.0, hi, xtol=1e-12, rtol=1e-10))


@functools.lru_cache(maxsize=256)
def wllp_noise_multiplier(epsilon: float, delta: float, k: int, q: float) -> float:
    """Smallest z with exact δ(ε) ≤ δ (root of the exact curve, cached: a pure function of its arguments).

    Parameters
    ----------
    epsilon : float
        Target ε, finite and > 0.
    delta : float
        Target δ in (0, 1).
    k : int
        Bag size.
    q : float
        Selection probability in [0, 1].

    Returns
    -------
    float
        z with :func:`wllp_exact_delta` (z, ε, k, q) ≤ δ (stepped up past Brent's root until it holds).

    Raises
    ------
    InvalidParameterError
        When q = 0 (nothing is released) or an argument is out of range.
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    k, q = check_int("k", k), check_interval("q", q, 0.0, 1.0, closed="both")
    if q == 0:
        raise InvalidParameterError("no example is released (q = 0): there is nothing to calibrate")

    def gap(z: float) -> float:
        return math.log(max(wllp_exact_delta(z, epsilon, k, q), 1e-300)) - math.log(delta)

    # δ(ε; z) ≤ q·δ_G(ε; 1/z) ≤ δ_G(ε; 1/z): the unamplified Gaussian's z is an upper end
    # (attained at k = 1, q = 1, hence widened by 0.1%).
    hi = 1.001 * gdp_sigma(epsilon, delta)
    lo = hi / 2
    while gap(lo) <= 0:  # δ ≥ q·δ_G needs very little noise; halve until the target binds
        hi, lo = lo, lo / 2
    z = optimize.brentq(gap, lo, hi, xtol=1e-14, rtol=1e-12)
    # brentq's root may sit a hair below the true one; step up until the claim holds.
    while gap(z) > 0:
        z *= 1 + 1e-12
    return float(z)


def wllp_privacy_loss_distribution(z: float, k: int, q: float, *, n_bins: int = 64,
                                   value_discretization_interval: float = 1e-3) -> PrivacyLossDistribution:
    """dp_accounting PLD of the ρ = 1 release, pessimistic in μ.

    The law of T = |w_t|/‖w‖ (T² ~ Beta(½, (k − 1)/2)) is cut at ``n_bins`` equal steps of
    T and at ``n_bins`` equal-probability quantiles, each bin represented by its upper end (δ_G increases with μ, so the result bounds the curve
    from above), mixed with the identity (weight 1 − q, example not selected) by
    :func:`privaudit.mechanisms.accounting.gaussian_mixture_pld`.

    Parameters
    ----------
    z : float
        Noise multiplier (σ = z·R), > 0.
    k : int
        Bag size, ≥ 1.
    q : float
        Selection probability of an example, in [0, 1] (:func:`selection_probability`).
    n_bins : int
        Steps of T (and as many quantiles).
    value_discretization_interval : float
        dp_accounting's privacy-loss grid step.

    Returns
    -------
    dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
    """
    z, k, q = _check_curve_args(z, k, q)
    n_bins = check_int("n_bins", n_bins)
    if k == 1:
        upper, mass = np.ones(1), np.ones(1)
    else:
        quantiles = np.sqrt(special.betaincinv(0.5, (k - 1) / 2, np.linspace(0.0, 1.0, n_bins + 1)))
        edges = np.unique(np.concatenate([np.linspace(0.0, 1.0, n_bins + 1), quantiles]))
        upper = edges[1:]
        mass = np.diff(special.betainc(0.5, (k - 1) / 2, edges**2))
    mus = [0.0, *(upper / z)]
    weights = [1 - q, *(q * mass)]
    return gaussian_mixture_pld(mus, weights, value_discretization_interval=value_discretization_interval)


def noisy_labels(y: np.ndarray, noised: np.ndarray, z: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """ỹ = y + σz on the ``noised`` labels, released on the dithered lattice of step 2^(⌊log₂ σ⌋ − 10).

    The float-safe form of ``y + noised·σz`` (:mod:`privaudit.mechanisms.lattice`): the same
    Gaussian release rounded onto γ(ℤ + u), u ~ U[0, 1) independent of y (post-processing:
    the claim is unchanged). The normals z are the learner's own draws; the offsets u come
    from a child stream spawned from ``rng`` (:meth:`numpy.random.Generator.spawn` does not
    advance ``rng``), so the selection, bags and weights drawn afterwards are those of the
    textbook release at the same seed and ỹ moves by at most γ ≤ σ·2⁻¹⁰.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Labels.
    noised : ndarray of bool, shape (n,)
        Which labels get noise.
    z : ndarray of shape (n,)
        Standard normal draws (only the ``noised`` entries are used).
    sigma : float
        Noise std σ ≥ 0 (0: labels returned unchanged, as floats).
    rng : Generator
        Parent of the lattice-offset stream (not advanced).

    Returns
    -------
    ndarray of shape (n,)
    """
    out = np.array(y, dtype=float)  # labels may arrive as integers
    if sigma > 0 and np.any(noised):
        out[noised] = lattice_release(y[noised], z[noised], sigma, grid_step(sigma), rng.spawn(1)[0])
    return out


class WeightedLLPRegressor(ValidatedParamsMixin, FittedClaimMixin, RegressorMixin, BaseEstimator):
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
    random_state : int, Generator, SeedSequence or None
        Root randomness; the integer seed actually used is recorded as ``seed_``.

    Attributes
    ----------
    claim, certified_, certified_epsilon_ (exact ε at δ when certified), audit_calibration_
    (:class:`~privaudit.mechanisms.accounting.CalibrationCheck`, when certified), noise_multiplier_ (z),
    sigma_ (label-noise std zR), selection_probability_ (q), bag_size_, n_bags_,
    bags_ ((S_x, S_y) aggregated pairs), coef_, intercept_, seed_ (the integer seed used).
    """

    #: Declarative constraints (scikit-learn format), checked when ``fit`` is entered and by configurations at load.
    _parameter_constraints = _constraints.WEIGHTED_LLP

    def __init__(self, *, epsilon: float = 1.0, delta: float = 1e-6, rho: float = 1.0, alpha: float = 0.6,
                 bag_size: int | None = None, bag_constant: float = 1.0,
                 label_bounds: tuple[float, float] | None = None,
                 random_state: np.random.Generator | np.random.SeedSequence | int | None = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.rho = rho
        self.alpha = alpha
        self.bag_size = bag_size
        self.bag_constant = bag_constant
        self.label_bounds = label_bounds
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: ArrayLike) -> "WeightedLLPRegressor":
        """Noise, select, bag and aggregate the labels, then least squares on the bags.

        Parameters
        ----------
        X : array-like of shape (n, p)
            Public features.
        y : array-like of shape (n,)
            Private labels, inside ``label_bounds`` when private.

        Returns
        -------
        WeightedLLPRegressor
            self, with the fitted attributes listed in the class docstring.

        Raises
        ------
        InvalidParameterError
            When a private fit has no or invalid ``label_bounds``.
        InvalidInputError
            When a label lies outside ``label_bounds``.
        """
        eps, delta, rho, alpha = float(self.epsilon), float(self.delta), float(self.rho), float(self.alpha)
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
        root, self.seed_ = resolve_seed(self.random_state, "random_state")
        rng = np.random.default_rng(root)
        m = max(1, int(math.floor(alpha * n))) if private else n
        if self.bag_size is not None:
            k = int(self.bag_size)
        else:
            c = float(self.bag_constant)
            k = 1 if not private else max(2, math.ceil(c / eps**4))
        k = min(k, m)
        self.selection_probability_ = selection_probability(n, m, k) if private else 1.0
        if private:
            z = wllp_noise_multiplier(eps, delta, k, self.selection_probability_)
            self.noise_multiplier_ = z
            self.sigma_ = z * (hi - lo)
            self.certified_ = rho == 1.0
            self.certified_epsilon_ = (wllp_exact_epsilon(z, delta, k, self.selection_probability_)
                                      if self.certified_ else math.inf)
            self.claim_ = PrivacyClaim(eps, delta, "label")
            if self.certified_:
                self.audit_calibration_ = check_calibration(eps, delta, self.certified_epsilon_, method="exact curve",
                                                            owner=type(self).__name__, rtol=1e-3)
        else:
            self.noise_multiplier_ = 0.0
            self.sigma_ = 0.0
            self.certified_, self.certified_epsilon_ = True, math.inf
            self.claim_ = PrivacyClaim(math.inf, delta, "label")
        noised = rng.random(n) < rho
        y_noisy = noisy_labels(y, noised, rng.normal(0.0, 1.0, n), self.sigma_, rng)
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

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Linear predictions Xθ + b of the least-squares fit on the bags.

        Parameters
        ----------
        X : array-like of shape (n, p)
            Features.

        Returns
        -------
        ndarray of shape (n,)
        """
        return check_predict_data(self, X) @ self.coef_ + self.intercept_

    # --- the fitted release's exact privacy curve (certified fits only) --------------------------------
    def _curve_args(self) -> tuple[float, int, float]:
        check_is_fitted(self, "claim_")
        if not (self.certified_ and self.claim_.is_private):
            raise InvalidParameterError(
                "no exact privacy curve: the fit is not certified (rho < 1 leaves labels protected only by the "
                "random-weight aggregation) or not private (epsilon = inf)"
            )
        return self.noise_multiplier_, self.bag_size_, self.selection_probability_

    def exact_delta(self, epsilon: float) -> float:
        """Exact δ(ε) of the fitted release (certified fits: ρ = 1).

        Parameters
        ----------
        epsilon : float
            ε ≥ 0.

        Returns
        -------
        float

        Raises
        ------
        InvalidParameterError
            When the fit is not certified or not private.
        """
        z, k, q = self._curve_args()
        return wllp_exact_delta(z, epsilon, k, q)

    def exact_epsilon(self, delta: float) -> float:
        """Exact ε(δ) of the fitted release (certified fits: ρ = 1).

        Parameters
        ----------
        delta : float
            δ in (0, 1).

        Returns
        -------
        float

        Raises
        ------
        InvalidParameterError
            When the fit is not certified or not private.
        """
        z, k, q = self._curve_args()
        return wllp_exact_epsilon(z, delta, k, q)

    def privacy_loss_distribution(self, **kwargs: float) -> PrivacyLossDistribution:
        """dp_accounting PLD of the fitted release (certified fits), see :func:`wllp_privacy_loss_distribution`."""
        z, k, q = self._curve_args()
        return wllp_privacy_loss_distribution(z, k, q, **kwargs)
