"""k-ary randomised response.

Keep the true category with probability p = e^ε/(e^ε + k − 1); otherwise report
one of the other k − 1 categories uniformly (each with q = 1/(e^ε + k − 1)). The
likelihood ratio between two inputs is at most p/q = e^ε, so the release is pure
ε-LDP over the whole category set.
"""

from __future__ import annotations

import math

import numpy as np
from dp_accounting import DpEvent, RandomizedResponseDpEvent
from numpy.typing import ArrayLike

from .claim import PrivacyClaim
from .protocol import NeighbouringPair
from .samplers import exponential
from .tradeoff import discrete_tradeoff
from .validation import InvalidInputError, InvalidParameterError, check_delta, check_epsilon, check_size, check_interval, check_positive
from .parameter_constraints import POSITIVE, Interval, Real
from .registry import epsilon_and_categories, register_mechanism

#: Largest ε for which e^{−ε} (the flip-to-keep ratio) is a normal double.
MAX_EPSILON = 700.0


@register_mechanism("randomized-response", check=epsilon_and_categories)
class RandomizedResponse:
    """k-ary randomised response over ``categories``.

    Parameters
    ----------
    epsilon : float
        Claimed pure ε.
    categories : sequence
        The k ≥ 2 distinct category values (numbers), e.g. ``(-1, 1)``.
    keep_probability : float, optional
        Override p (default e^ε/(e^ε + k − 1)) to build a mis-calibrated
        mechanism for audits; the claim stays at ``epsilon``.
    """

    #: Constructor parameters in scikit-learn's vocabulary (validated when a configuration is loaded).
    _parameter_constraints = {
        "epsilon": [POSITIVE], "categories": ["array-like"],
        "keep_probability": [Interval(Real, 0, 1, closed="right"), None]}

    def __init__(self, *, epsilon: float, categories=(-1, 1), keep_probability: float | None = None) -> None:
        self.epsilon = check_epsilon(epsilon)
        try:
            cats = np.asarray(categories, dtype=float)
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError(f"categories must be numbers, got categories={categories!r}") from exc
        if cats.ndim != 1 or cats.size < 2 or np.unique(cats).size != cats.size:
            raise InvalidParameterError(f"categories must be >= 2 distinct values, got categories={categories!r}")
        if not np.all(np.isfinite(cats)):
            raise InvalidParameterError(f"categories must be finite numbers, got categories={categories!r}")
        self.categories = cats
        k = cats.size
        # q = 1/(e^ε + k − 1) must stay a positive double, or the release is not private at all in float.
        if self.epsilon > MAX_EPSILON:
            raise InvalidParameterError(
                f"epsilon must be <= {MAX_EPSILON} for RandomizedResponse (beyond it the flip probability "
                f"underflows to 0 and the release is the raw input), got epsilon={epsilon!r}"
            )
        if keep_probability is None:
            self.keep_probability = 1.0 / (1.0 + (k - 1) * math.exp(-self.epsilon))
            # −log(1 − p) without cancellation: 1 − p = (k−1)e^{−ε}/(1 + (k−1)e^{−ε}).
            self._log_flip = self.epsilon - math.log(k - 1) + math.log1p((k - 1) * math.exp(-self.epsilon))
        else:
            self.keep_probability = check_interval("keep_probability", keep_probability, 1.0 / k, 1.0, closed="left")
            self._log_flip = -math.log1p(-self.keep_probability)
        self.claim = PrivacyClaim(self.epsilon, 0.0, "any")

    @property
    def k(self) -> int:
        return self.categories.size

    @property
    def flip_probability(self) -> float:
        """q, the probability of each specific other category."""
        return math.exp(-self._log_flip) / (self.k - 1)

    @property
    def true_epsilon(self) -> float:
        """ε achieved by the keep probability in use: ln(p/q)."""
        return math.log(self.keep_probability * (self.k - 1)) + self._log_flip

    def __repr__(self) -> str:
        return f"RandomizedResponse(k={self.k}, keep_probability={self.keep_probability:.6g}, claim={self.claim})"

    def index(self, values: ArrayLike) -> np.ndarray:
        """Category index of each value; raises on values outside the categories.

        Parameters
        ----------
        values : array-like
            Category values (any shape).

        Returns
        -------
        ndarray of int
            Shaped like ``values``.

        Raises
        ------
        InvalidInputError
            When a value is not one of the categories.
        """
        v = np.asarray(values, dtype=float)
        match = v[..., None] == self.categories
        found = match.any(axis=-1)
        if not np.all(found):
            bad = v[~found].ravel()[0]
            raise InvalidInputError(f"value {bad!r} is not one of the categories {self.categories.tolist()}")
        return match.argmax(axis=-1)

    def release(self, values: ArrayLike, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """One randomised release per value (vectorised over values).

        Parameters
        ----------
        values : array-like
            Category values (any shape).
        rng : Generator, int or None
            Source of randomness (passed to :func:`numpy.random.default_rng`).

        Returns
        -------
        ndarray
            Released categories, shaped like ``values``.

        Raises
        ------
        InvalidInputError
            When a value is not one of the categories.
        """
        idx = self.index(values)
        rng = np.random.default_rng(rng)
        # Flip with probability 1 − p = e^{−L} as [E > L] for a full-precision exponential E:
        # relative error ≤ 2⁻⁵⁰(L + 1) even when 1 − p is far below 2⁻⁵³, where
        # ``rng.random() < p`` would never flip (p rounds to 1 for ε ≳ 37).
        flip = (exponential(rng, idx.size)[0] > self._log_flip).reshape(idx.shape)
        # A uniform draw over the k-1 other categories: shift by 1..k-1 modulo k.
        other = (idx + rng.integers(1, self.k, size=idx.shape)) % self.k
        return self.categories[np.where(flip, other, idx)]

    def sample(self, x: ArrayLike, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """``n`` releases of the single category ``x``: shape ``(n,)``.

        Parameters
        ----------
        x : float
            The input category.
        n : int
            Number of independent releases.
        rng : Generator, int or None
            Source of randomness (passed to :func:`numpy.random.default_rng`).

        Returns
        -------
        ndarray of shape (n,)
        """
        return self.release(np.full(check_size("n", n), float(np.asarray(x))), rng)

    def pmf(self, x: ArrayLike) -> np.ndarray:
        """Output distribution over ``categories`` given input ``x``.

        Parameters
        ----------
        x : float
            The input category.

        Returns
        -------
        ndarray of shape (k,)
            p at the input category, q elsewhere.

        Raises
        ------
        InvalidInputError
            When a value is not one of the categories.
        """
        p = np.full(self.k, self.flip_probability)
        p[self.index(x)] = self.keep_probability
        return p

    def log_density(self, outputs: ArrayLike, x: ArrayLike) -> np.ndarray:
        """Log-pmf of each output given input ``x``; shape ``(n,)``.

        Parameters
        ----------
        outputs : array-like of shape (n,)
            Released categories.
        x : float
            The input category.

        Returns
        -------
        ndarray of shape (n,)

        Raises
        ------
        InvalidInputError
            When a value is not one of the categories.
        """
        return np.log(self.pmf(x))[self.index(outputs)]

    def exact_delta(self, epsilon: float) -> float:
        """Exact δ(ε) between two categories: max(0, p − e^ε q).

        Parameters
        ----------
        epsilon : float
            ε ≥ 0.

        Returns
        -------
        float
            δ(ε) in [0, 1].
        """
        eps = check_positive("epsilon", epsilon, allow_zero=True)
        return max(0.0, self.keep_probability - math.exp(eps) * self.flip_probability)

    def exact_epsilon(self, delta: float) -> float:
        """Exact ε(δ): ln((p − δ)/q), floored at 0.

        Parameters
        ----------
        delta : float
            δ in [0, 1).

        Returns
        -------
        float
            ε(δ) ≥ 0.
        """
        d = check_delta(delta, allow_zero=True)
        return max(0.0, math.log(max(self.keep_probability - d, 1e-300) / self.flip_probability))

    def tradeoff(self, alpha: ArrayLike, x: ArrayLike | None = None, x_prime: ArrayLike | None = None) -> np.ndarray:
        """Exact trade-off curve between two categories (default: the first two).

        Parameters
        ----------
        alpha : array-like
            Type-I error rates α in [0, 1].
        x : float, optional
            The null category (default the first).
        x_prime : float, optional
            The alternative category (default the second).

        Returns
        -------
        ndarray
            β = f(α), shaped like ``alpha``.
        """
        x = self.categories[0] if x is None else x
        x_prime = self.categories[1] if x_prime is None else x_prime
        return discrete_tradeoff(self.pmf(x), self.pmf(x_prime), alpha)

    def dp_event(self, distance: float | None = None) -> DpEvent:
        """dp_accounting event of one release between two different inputs (replace-one).

        dp_accounting's randomized response outputs the input with probability 1 − p and
        a uniform category with probability p, so keep = 1 − p + p/k, i.e.
        p = (1 − keep)·k/(k − 1). ``distance`` is ignored (any two categories are
        neighbours). Use it through :func:`privaudit.mechanisms.accounting.privacy_loss_distribution`.

        Parameters
        ----------
        distance : float, optional
            Ignored: any two categories are neighbours.

        Returns
        -------
        dp_accounting.DpEvent
            ``RandomizedResponseDpEvent(p, k)``.

        Raises
        ------
        InvalidParameterError
            When keep_probability < 1/k (no randomized-response event).
        """
        p = (1 - self.keep_probability) * self.k / (self.k - 1)
        if not 0 <= p <= 1:
            raise InvalidParameterError(
                f"keep_probability={self.keep_probability!r} < 1/k has no dp_accounting randomized-response event"
            )
        return RandomizedResponseDpEvent(noise_parameter=p, num_buckets=self.k)

    def worst_case_pair(self, *, dim: int = 1) -> NeighbouringPair:
        """The first two categories: every pair of distinct categories is equivalent (``dim`` is ignored).

        Parameters
        ----------
        dim : int
            Ignored (a release of one category).

        Returns
        -------
        NeighbouringPair
        """
        c = self.categories
        return NeighbouringPair(c[0], c[1], self, "randomized response, two distinct categories")
