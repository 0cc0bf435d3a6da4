"""RR-on-Bins^Φ_ε (Ghazi et al. 2023, "Regression with label differential privacy"): seed 002's main baseline.

Mechanism, for labels in a declared range [low, high]:

1. **Discretise** the label support to k equally spaced points y_1 < … < y_k; each label
   is rounded to the nearest point (error ≤ (high − low)/(2(k − 1))).
2. **Private prior** Φ with ε_Φ = ``prior_fraction``·ε (0.25ε, as seed 002 G.1): the
   histogram over the k points plus Laplace noise of scale 2/ε_Φ (one label change
   moves two counts by one: L1 sensitivity 2 under replace-one), clipped at 0 and
   normalised (post-processing). The noisy counts are released on the dithered lattice
   of :func:`~privaudit.mechanisms.laplace.float_safe_laplace` (post-processing of the
   continuous Laplace, same ε), so the doubles they can take do not depend on the labels.
3. **Optimal monotone binning** for Φ: a partition of the support into m contiguous
   bins S_1..S_m with representatives ŷ_j minimising the expected squared error of the
   release,

   .. math::

      L = \\frac{1}{e^{ε'}+m-1} \\sum_{j=1}^{m}\\Big[(e^{ε'}-1)\\sum_{y\\in S_j}Φ(y)(ŷ_j-y)^2
          + \\sum_{y}Φ(y)(ŷ_j-y)^2\\Big],

   where ε' = ε − ε_Φ. For fixed m the bracket decomposes over bins, each bin's optimum
   being ŷ_j = (aM_S + M)/(aP_S + 1) (a = e^{ε'} − 1; P_S, M_S mass and first moment of the
   bin; M the prior mean) with cost (aQ_S + Q) − (aM_S + M)²/(aP_S + 1). A dynamic programme
   over (number of bins, right end) finds the best partition for every m at once in
   O(k²) vectorised work per m; the m minimising L is kept. (Ghazi et al. prove the
   optimal mechanism for a prior is of this RR-on-bins form with monotone bins.)
4. **Randomised response over the m bins** with ε': keep the label's own bin
   representative with probability e^{ε'}/(e^{ε'} + m − 1), else a uniform other one.
5. Train any scikit-learn regressor on (X, noisy labels).

Privacy (pure ε-label-DP, replace-one): the prior costs ε_Φ (Laplace, accounted with
the closed form 2/b, checked against dp_accounting's Laplace PLD in the tests) and the release ε' (dp_accounting's
``RandomizedResponseDpEvent`` under REPLACE_ONE); the claim is their sum at δ = 0
(basic composition, exact for two pure mechanisms' worst cases). ε = ∞ releases the
true labels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from sklearn import get_config
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context, clone
from sklearn.linear_model import LinearRegression

from privaudit.learners import parameter_constraints as _constraints
from privaudit.learners.fitted_claim import FittedClaimMixin
from privaudit.learners.input_validation import check_data, check_predict_data
from privaudit.learners.parameter_constraints import ValidatedParamsMixin
from privaudit.mechanisms.accounting import event_epsilon
from privaudit.mechanisms.claim import PrivacyClaim
from privaudit.mechanisms.laplace import float_safe_laplace
from privaudit.mechanisms.randomized_response import RandomizedResponse
from privaudit.mechanisms.randomness import resolve_seed
from privaudit.mechanisms.validation import (
    InvalidInputError,
    InvalidParameterError,
    check_array,
    check_epsilon,
    check_int,
)


@dataclass(frozen=True)
class Binning:
    """An RR-on-Bins mechanism for a discrete prior.

    Attributes
    ----------
    edges : (m + 1,) support indices; bin j covers support points [edges[j], edges[j+1]).
    representatives : (m,) output values ŷ_j (non-decreasing).
    bin_of : (k,) bin index of each support point (a monotone map).
    loss : expected squared error L of the release under the prior.
    """

    edges: np.ndarray
    representatives: np.ndarray
    bin_of: np.ndarray
    loss: float

    @property
    def m(self) -> int:
        return self.representatives.size


def rr_loss(support: ArrayLike, prior: ArrayLike, bin_of: ArrayLike, representatives: ArrayLike,
            epsilon: float) -> float:
    """Expected squared error of RR over bins, by direct summation over (label, output) pairs.

    Σ_y Σ_j Φ(y) P(j | y) (ŷ_j − y)² with P(j | y) = e^ε/(e^ε + m − 1) for y's own bin and
    1/(e^ε + m − 1) otherwise: the reference against which the dynamic programme of
    :func:`optimal_binning` is checked.

    Parameters
    ----------
    support : array-like of shape (k,)
        Label values.
    prior : array-like of shape (k,)
        Their probabilities Φ (summing to 1; not renormalised here).
    bin_of : array-like of int, shape (k,)
        Bin index of each support point.
    representatives : array-like of shape (m,)
        Output value ŷ_j of each bin.
    epsilon : float
        ε of the randomised response over the bins.

    Returns
    -------
    float
        The expected squared error L.
    """
    support, prior = np.asarray(support, float), np.asarray(prior, float)
    reps = np.asarray(representatives, float)
    m = reps.size
    e = math.exp(epsilon)
    probs = np.full((support.size, m), 1.0 / (e + m - 1))
    probs[np.arange(support.size), bin_of] = e / (e + m - 1)
    return float(np.sum(prior[:, None] * probs * (reps[None, :] - support[:, None]) ** 2))


def optimal_binning(support: ArrayLike, prior: ArrayLike, epsilon: float, *, max_bins: int | None = None) -> Binning:
    """Optimal monotone RR-on-Bins for a prior over a sorted support (dynamic programme).

    Parameters
    ----------
    support : array-like of shape (k,)
        Strictly increasing label values.
    prior : array-like of shape (k,)
        Non-negative weights (normalised internally).
    epsilon : float
        ε of the randomised response over the bins (finite, > 0).
    max_bins : int, optional
        Cap on m (default: the number of support points with positive mass, at least 1).

    Returns
    -------
    Binning
        The binning minimising the expected squared error over all contiguous partitions and m.

    Raises
    ------
    InvalidInputError
        When the lengths differ or are 0, the support is not strictly increasing, or the
        prior has a negative entry or no mass.
    InvalidParameterError
        When ε is not finite and > 0.
    """
    y = check_array("support", support, ndim=1)
    p = check_array("prior", prior, ndim=1)
    if y.size != p.size or y.size == 0:
        raise InvalidInputError(f"support and prior must have the same non-zero length, got {y.size} and {p.size}")
    if np.any(np.diff(y) <= 0):
        raise InvalidInputError("support must be strictly increasing")
    if np.any(p < 0) or p.sum() <= 0:
        raise InvalidInputError("prior must be non-negative with positive total mass")
    eps = check_epsilon(epsilon)
    p = p / p.sum()
    k = y.size
    a = math.expm1(eps)
    # Prefix sums of mass, first and second moments: bin [i, j) uses cs[j] - cs[i].
    cP = np.concatenate([[0.0], np.cumsum(p)])
    cM = np.concatenate([[0.0], np.cumsum(p * y)])
    cQ = np.concatenate([[0.0], np.cumsum(p * y * y)])
    M, Q = cM[-1], cQ[-1]
    PS = cP[None, :] - cP[:, None]
    MS = cM[None, :] - cM[:, None]
    QS = cQ[None, :] - cQ[:, None]
    cost = (a * QS + Q) - (a * MS + M) ** 2 / (a * PS + 1.0)  # cost[i, j] of bin [i, j)
    cost = np.maximum(cost, 0.0)  # exact value is >= 0 (a weighted sum of squares); clip round-off
    cost[np.tril_indices(k + 1)] = np.inf  # only i < j are bins
    m_max = int(np.count_nonzero(p > 0)) if max_bins is None else check_int("max_bins", max_bins)
    m_max = max(1, min(m_max, k))
    D = np.full(k + 1, np.inf)
    D[0] = 0.0
    arg = np.zeros((m_max + 1, k + 1), dtype=np.int64)
    best = (np.inf, 0)
    for m in range(1, m_max + 1):
        tot = D[:, None] + cost  # (i, j): best (m-1)-bin cover of [0, i) plus bin [i, j)
        arg[m] = np.argmin(tot, axis=0)
        D = tot[arg[m], np.arange(k + 1)]
        loss = D[k] / (math.exp(eps) + m - 1)
        if loss < best[0]:
            best = (loss, m)
    loss, m = best
    edges = [k]
    for mm in range(m, 0, -1):
        edges.append(int(arg[mm][edges[-1]]))
    edges = np.array(edges[::-1])
    PSb = cP[edges[1:]] - cP[edges[:-1]]
    MSb = cM[edges[1:]] - cM[edges[:-1]]
    reps = (a * MSb + M) / (a * PSb + 1.0)
    bin_of = np.repeat(np.arange(m), np.diff(edges))
    return Binning(edges, reps, bin_of, float(loss))


def laplace_epsilon(scale: float, sensitivity: float) -> float:
    """ε = Δ₁/b of the Laplace mechanism (Dwork et al. 2006), pure DP.

    dp_accounting's Laplace PLD truncates tails and answers ∞ at δ = 0 exactly; the
    tests check this closed form against its ε at δ = 1e-12.

    Parameters
    ----------
    scale : float
        Laplace scale b > 0.
    sensitivity : float
        ℓ₁ sensitivity Δ₁ of the noised statistic.

    Returns
    -------
    float
    """
    return float(sensitivity) / float(scale)


def rr_epsilon(epsilon_keep: float, m: int) -> float:
    """ε of m-ary RR with keep probability e^ε/(e^ε+m−1), via dp_accounting under REPLACE_ONE.

    The mechanism describes itself (:meth:`RandomizedResponse.dp_event`); its event is
    accounted by :func:`privaudit.mechanisms.accounting.event_epsilon` at δ = 0.

    Parameters
    ----------
    epsilon_keep : float
        The ε that sets the keep probability.
    m : int
        Number of outputs (bins); m = 1 releases nothing and costs 0.

    Returns
    -------
    float
        The accounted ε at δ = 0 (replace-one).
    """
    if m == 1:
        return 0.0
    event = RandomizedResponse(epsilon=epsilon_keep, categories=np.arange(m)).dp_event()
    return event_epsilon(event, 0.0, adjacency="replace-one")


class RROnBinsRegressor(ValidatedParamsMixin, FittedClaimMixin, RegressorMixin, BaseEstimator):
    """Feature-oblivious label-DP regression: RR-on-Bins^Φ_ε labels, then any regressor.

    Parameters
    ----------
    epsilon : float
        Total pure ε (label DP, replace-one); ``math.inf`` = non-private (true labels).
    label_bounds : (low, high)
        Declared label range (required: deriving it from the labels would leak). Labels
        outside raise :class:`InvalidInputError`.
    n_support : int
        Number k of grid points discretising [low, high] (default 256).
    prior_fraction : float
        Share of ε spent on the prior (0.25 in seed 002 / Ghazi et al.).
    estimator : scikit-learn regressor, optional
        Trained on the noisy labels (default ``LinearRegression()``); cloned.
    random_state : int, Generator, SeedSequence or None
        Root randomness; the integer seed actually used is recorded as ``seed_``.

    Attributes
    ----------
    claim : PrivacyClaim(ε_Φ + ε', 0, "label") from dp_accounting.
    binning_ : Binning ; prior_ : (k,) private prior ; support_ : (k,) grid ;
    noisy_labels_ : (n,) the released labels ; estimator_ : fitted regressor.
    """

    #: Declarative constraints (scikit-learn format), checked when ``fit`` or ``privatize`` is entered and by
    #: configurations at load.
    _parameter_constraints = _constraints.RR_ON_BINS

    def __init__(self, *, epsilon: float = 1.0, label_bounds: tuple[float, float] | None = None,
                 n_support: int = 256, prior_fraction: float = 0.25, estimator: object = None,
                 random_state: np.random.Generator | np.random.SeedSequence | int | None = None) -> None:
        self.epsilon = epsilon
        self.label_bounds = label_bounds
        self.n_support = n_support
        self.prior_fraction = prior_fraction
        self.estimator = estimator
        self.random_state = random_state

    def privatize(self, y: ArrayLike, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """Release RR-on-Bins labels for y (vectorised; no regressor). Sets the fitted mechanism attrs.

        Parameters are validated as ``fit`` validates them (unless scikit-learn is configured to
        skip validation). Sets ``support_``, ``prior_``, ``binning_`` and ``claim_``.

        Parameters
        ----------
        y : array-like of shape (n,)
            True labels, inside ``label_bounds``.
        rng : Generator, int or None
            Source of the prior's Laplace noise and of the randomised response.

        Returns
        -------
        ndarray of shape (n,)
            The released labels (bin representatives; the true labels when ε = ∞).

        Raises
        ------
        InvalidParameterError
            When ``label_bounds`` is missing or not finite with low < high.
        InvalidInputError
            When a label lies outside ``label_bounds``.
        """
        if not get_config()["skip_parameter_validation"]:
            self._validate_params()
        return self._privatize(y, rng)

    def _privatize(self, y, rng) -> np.ndarray:
        """:meth:`privatize` of validated parameters."""
        eps = float(self.epsilon)
        if self.label_bounds is None:
            raise InvalidParameterError("label_bounds=(low, high) must be declared for RR-on-Bins")
        lo, hi = (float(b) for b in self.label_bounds)
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise InvalidParameterError(f"label_bounds must be finite with low < high, got {self.label_bounds!r}")
        y = check_array("y", y, ndim=1)
        bad = (y < lo) | (y > hi)
        if np.any(bad):
            i = int(np.argmax(bad))
            raise InvalidInputError(f"y[{i}]={y[i]!r} violates the declared label_bounds={(lo, hi)!r}")
        rng = np.random.default_rng(rng)
        k = int(self.n_support)
        self.support_ = np.linspace(lo, hi, k)
        if math.isinf(eps):
            self.prior_ = np.bincount(np.rint((y - lo) / (hi - lo) * (k - 1)).astype(np.int64), minlength=k) / y.size
            self.binning_ = None
            self.claim_ = PrivacyClaim(math.inf, 0.0, "label")
            return y.copy()
        frac = float(self.prior_fraction)
        eps_prior, eps_rr = frac * eps, (1 - frac) * eps
        idx = np.rint((y - lo) / (hi - lo) * (k - 1)).astype(np.int64)
        counts = np.bincount(idx, minlength=k).astype(float)
        scale = 2.0 / eps_prior  # histogram L1 sensitivity 2 under replace-one
        # Float-safe Laplace (dithered lattice, same ε): the textbook fl(counts + rng.laplace) leaks (Mironov 2012).
        noisy = np.maximum(float_safe_laplace(counts, scale, rng), 0.0)
        self.prior_ = noisy / noisy.sum() if noisy.sum() > 0 else np.full(k, 1.0 / k)
        self.binning_ = optimal_binning(self.support_, self.prior_, eps_rr)
        m = self.binning_.m
        bins = self.binning_.bin_of[idx]
        if m == 1:
            out = np.zeros_like(bins)
        else:
            out = RandomizedResponse(epsilon=eps_rr, categories=np.arange(m)).release(bins, rng).astype(np.int64)
        self.claim_ = PrivacyClaim(laplace_epsilon(scale, 2.0) + rr_epsilon(eps_rr, m), 0.0, "label")
        return self.binning_.representatives[out]

    # The estimator parameter is the user's: its own parameters are validated by its own fit.
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X: ArrayLike, y: ArrayLike) -> "RROnBinsRegressor":
        """Privatise y with RR-on-Bins, then fit the regressor on (X, noisy labels).

        Parameters
        ----------
        X : array-like of shape (n, p)
            Features (public: the mechanism is feature-oblivious).
        y : array-like of shape (n,)
            Private labels, inside ``label_bounds``.

        Returns
        -------
        RROnBinsRegressor
            self, with ``seed_``, ``noisy_labels_``, ``estimator_`` and the mechanism attributes.
        """
        X, y = check_data(X, y, None, self)
        root, self.seed_ = resolve_seed(self.random_state, "random_state")
        self.noisy_labels_ = self._privatize(y, np.random.default_rng(root))
        self.estimator_ = clone(self.estimator if self.estimator is not None else LinearRegression())
        self.estimator_.fit(X, self.noisy_labels_)
        return self

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Predictions of the regressor trained on the noisy labels.

        Parameters
        ----------
        X : array-like of shape (n, p)
            Features.

        Returns
        -------
        ndarray of shape (n,)

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before :meth:`fit`.
        """
        X = check_predict_data(self, X, "estimator_")  # NotFittedError before fit
        return self.estimator_.predict(X)
