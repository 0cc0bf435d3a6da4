"""The exponential mechanism over a finite set of outputs (McSherry & Talwar 2007).

Given utility scores u(x) ∈ ℝ^k whose every coordinate changes by at most Δu between
neighbouring inputs (‖u(x) − u(x′)‖_∞ ≤ Δu), release r ∈ {0, …, k−1} with

    P(r | x) ∝ exp(ε·u_r(x) / (2Δu))          (or ε·u_r/Δu when the utility is monotonic:
                                                 all scores move in the same direction).

For any r the log-ratio is ε·(u_r − u′_r)/(2Δu) − log(Z/Z′), each term at most ε/2 in
magnitude, so the release is pure ε-DP (ε/Δu·… for the monotonic variant by the same
argument, one of the two terms then having the opposite sign). The exact ε of a given
pair is max_r |log p_x(r) − log p_x′(r)| (:meth:`ExponentialMechanism.exact_epsilon` with
``x`` and ``x_prime``); the claim is the worst case over all neighbouring pairs, attained
only when scores move in opposite directions.

Sampling is vectorised as an exponential race: r = argmin_r E_r / w_r with independent
E_r ~ Exp(1) (P(r wins) = w_r/Σw exactly for real exponentials), computed as
argmin(log E_r − log w_r). The full-precision exponentials of
:mod:`privaudit.mechanisms.samplers` (relative error ≤ 2⁻⁵⁰, reaching e^{−737}) keep every
output with weight ratio above e^{−700} reachable and move each output's probability by a
relative error of order k·2⁻⁴⁸ — not the absolute 2⁻⁵³ of an inverse-CDF categorical draw,
which never returns outputs of probability below 2⁻⁵³ under one input while returning them
under another.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from dp_accounting import DpEvent
from numpy.typing import ArrayLike
from scipy.special import logsumexp

from .accounting import pure_dp_event
from .claim import PrivacyClaim
from .samplers import exponential
from .tradeoff import discrete_tradeoff
from .validation import InvalidInputError, InvalidParameterError, check_array, check_delta, check_epsilon, check_size, check_positive
from .parameter_constraints import POSITIVE
from .registry import register_mechanism, requires

#: Largest spread of the log-weights ε·u/(2Δu) accepted: keeps every output reachable by the race.
MAX_LOG_WEIGHT_SPREAD = 700.0


@register_mechanism("exponential", check=requires("epsilon"))
class ExponentialMechanism:
    """Pure ε-DP selection among k outputs with probability ∝ exp(ε·u_r(x)/(2Δu)).

    Parameters
    ----------
    epsilon : float
        Claimed pure ε.
    sensitivity : float
        Δu, the largest change of any single score between neighbouring inputs.
    utility : callable, optional
        Maps an input x to its k scores. Default: the input *is* the score vector.
    monotonic : bool
        Scores of neighbouring inputs all move in the same direction (e.g. counts under
        add-one): the weights may use ε·u/Δu.
    adjacency : str, optional
        Neighbouring relation of the claim (default ``"l1<=Δu"``: with the default
        utility, ‖x − x′‖₁ ≤ Δu implies ‖u − u′‖_∞ ≤ Δu). With a custom ``utility`` the
        user states the relation under which its scores have sensitivity Δu.
    """

    #: Constructor parameters in scikit-learn's vocabulary (validated when a configuration is loaded; a
    #: ``utility`` function cannot come from a configuration file).
    _parameter_constraints = {
        "epsilon": [POSITIVE], "sensitivity": [POSITIVE], "utility": [callable, None], "monotonic": ["boolean"],
        "adjacency": [str, None]}

    def __init__(
        self, *, epsilon: float, sensitivity: float = 1.0, utility: Callable[[np.ndarray], np.ndarray] | None = None,
        monotonic: bool = False, adjacency: str | None = None,
    ) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.sensitivity = check_positive("sensitivity", sensitivity)
        if utility is not None and not callable(utility):
            raise InvalidParameterError(f"utility must be callable or None, got utility={utility!r}")
        if utility is not None and adjacency is None:
            raise InvalidParameterError("a custom utility needs the adjacency under which its sensitivity holds")
        self.utility = utility
        self.monotonic = bool(monotonic)
        self.claim = PrivacyClaim(self.epsilon, 0.0, adjacency or f"l1<={self.sensitivity:g}")

    def __repr__(self) -> str:
        return f"ExponentialMechanism(sensitivity={self.sensitivity:g}, monotonic={self.monotonic}, claim={self.claim})"

    @property
    def weight_scale(self) -> float:
        """ε/(2Δu), or ε/Δu for a monotonic utility."""
        return self.epsilon / (self.sensitivity if self.monotonic else 2 * self.sensitivity)

    def scores(self, x: ArrayLike) -> np.ndarray:
        """The k ≥ 2 finite utility scores of input ``x``.

        Parameters
        ----------
        x : array-like
            The input (the scores themselves without a custom utility).

        Returns
        -------
        ndarray of shape (k,)

        Raises
        ------
        InvalidInputError
            When there are fewer than 2 scores or a score is not finite.
        """
        u = np.asarray(self.utility(check_array("x", x)) if self.utility is not None else x, dtype=float)
        u = check_array("utility scores", u, ndim=1)
        if u.size < 2:
            raise InvalidInputError(f"the exponential mechanism needs >= 2 outputs, got {u.size} score(s)")
        return u

    def log_pmf(self, x: ArrayLike) -> np.ndarray:
        """log P(r | x) for every output r; shape (k,).

        Parameters
        ----------
        x : array-like
            The input (the scores themselves without a custom utility).

        Returns
        -------
        ndarray of shape (k,)
            log of e^{w u_r}/Σ_s e^{w u_s}, w = :attr:`weight_scale`.

        Raises
        ------
        InvalidInputError
            When the log-weights span more than :data:`MAX_LOG_WEIGHT_SPREAD`.
        """
        logw = self.weight_scale * self.scores(x)
        if np.ptp(logw) > MAX_LOG_WEIGHT_SPREAD:
            raise InvalidInputError(
                f"the log-weights of x span {np.ptp(logw):.4g} > {MAX_LOG_WEIGHT_SPREAD}: outputs would be unreachable "
                "in floating point; rescale the utility"
            )
        return logw - logsumexp(logw)

    def pmf(self, x: ArrayLike) -> np.ndarray:
        """P(r | x) for every output r; shape (k,).

        Parameters
        ----------
        x : array-like
            The input (the scores themselves without a custom utility).

        Returns
        -------
        ndarray of shape (k,)
        """
        return np.exp(self.log_pmf(x))

    def sample(self, x: ArrayLike, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """``n`` selected output indices (as floats): shape ``(n,)``.

        Parameters
        ----------
        x : array-like
            The input (the scores themselves without a custom utility).
        n : int
            Number of independent releases.
        rng : Generator, int or None
            Source of the Exp(1) race.

        Returns
        -------
        ndarray of shape (n,)
            Selected output indices, as floats.
        """
        logp = self.log_pmf(x)
        n = check_size("n", n)
        e, _ = exponential(rng, n * logp.size)
        race = np.log(e.reshape(n, logp.size))
        race -= logp
        return race.argmin(axis=1).astype(float)

    def log_density(self, outputs: ArrayLike, x: ArrayLike) -> np.ndarray:
        """log P(output | x); shape ``(n,)`` (−inf for outputs that are not valid indices).

        Parameters
        ----------
        outputs : array-like of shape (n, ...)
            Releases, one per row of the leading axis.
        x : array-like
            The input (the scores themselves without a custom utility).

        Returns
        -------
        ndarray of shape (n,)
            Log-density (or log-pmf) of each release given ``x``.
        """
        logp = self.log_pmf(x)
        r = np.asarray(outputs, dtype=float).reshape(len(outputs))
        ok = (r == np.rint(r)) & (r >= 0) & (r < logp.size)
        return np.where(ok, logp[np.where(ok, r, 0).astype(int)], -np.inf)

    def exact_delta(self, epsilon: float, x: ArrayLike | None = None, x_prime: ArrayLike | None = None) -> float:
        """Exact δ(ε) = max over both orders of Σ_r (p(r) − e^ε p′(r))₊ for the pair; needs x and x_prime.

        Parameters
        ----------
        epsilon : float
            ε ≥ 0.
        x : array-like
            One input of the pair (required).
        x_prime : array-like
            The neighbouring input (required).

        Returns
        -------
        float
            δ(ε) in [0, 1].

        Raises
        ------
        InvalidParameterError
            When x or x_prime is missing.
        """
        eps = check_positive("epsilon", epsilon, allow_zero=True)
        p, q = self._pair(x, x_prime)
        return float(max(np.maximum(p - math.exp(eps) * q, 0).sum(), np.maximum(q - math.exp(eps) * p, 0).sum()))

    def exact_epsilon(self, delta: float, x: ArrayLike | None = None, x_prime: ArrayLike | None = None) -> float:
        """Exact ε(δ) of the pair (x, x_prime); at δ = 0, max_r |log p_x(r) − log p_x′(r)|.

        Parameters
        ----------
        delta : float
            δ in [0, 1).
        x : array-like
            One input of the pair (required).
        x_prime : array-like
            The neighbouring input (required).

        Returns
        -------
        float
            ε(δ) ≥ 0 (bisection to machine precision).

        Raises
        ------
        InvalidParameterError
            When x or x_prime is missing.
        """
        d = check_delta(delta, allow_zero=True)
        p, q = self._pair(x, x_prime)
        pure = float(np.max(np.abs(np.log(p) - np.log(q))))
        if d == 0.0 or self.exact_delta(0.0, x, x_prime) <= d:
            return pure if d == 0.0 else 0.0
        lo, hi = 0.0, pure
        for _ in range(200):  # δ(ε) is continuous and non-increasing on [0, pure]
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if self.exact_delta(mid, x, x_prime) > d else (lo, mid)
        return hi

    def tradeoff(self, alpha: ArrayLike, x: ArrayLike | None = None, x_prime: ArrayLike | None = None) -> np.ndarray:
        """Exact trade-off curve between x and x_prime.

        Parameters
        ----------
        alpha : array-like
            Type-I error rates α in [0, 1].
        x : array-like
            The null input (required).
        x_prime : array-like
            The neighbouring input (required).

        Returns
        -------
        ndarray
            β = f(α), shaped like ``alpha``.

        Raises
        ------
        InvalidParameterError
            When x or x_prime is missing.
        """
        p, q = self._pair(x, x_prime)
        return discrete_tradeoff(p, q, alpha)

    def dp_event(self, distance: float | None = None) -> DpEvent:
        """dp_accounting event of one selection between inputs whose scores move by at most ``distance``.

        dp_accounting has no exponential-mechanism event. The selection is pure ε_r-DP with
        ε_r = ε·r/Δu for scores that move by at most r in ℓ∞ (with the default utility, r is
        the ℓ₁ distance of the inputs; default r = Δu, i.e. the claim's ε), and every pure
        ε_r-DP release is a post-processing of binary randomized response at ε_r, so the
        event is :func:`~privaudit.mechanisms.accounting.pure_dp_event` (ε_r): exact at
        δ = 0, pessimistic in δ(ε) for ε < ε_r (the exact profile depends on the pair:
        :meth:`exact_delta`).

        Parameters
        ----------
        distance : float, optional
            Largest change r ≥ 0 of any score between the two inputs (default Δu).

        Returns
        -------
        dp_accounting.DpEvent
        """
        r = self.sensitivity if distance is None else check_positive("distance", distance, allow_zero=True)
        return pure_dp_event(self.epsilon * r / self.sensitivity)

    def _pair(self, x, x_prime) -> tuple[np.ndarray, np.ndarray]:
        if x is None or x_prime is None:
            raise InvalidParameterError(
                "the exponential mechanism's exact profile depends on the pair: pass x and x_prime "
                f"(the claim epsilon={self.epsilon} is the worst case over all neighbours)"
            )
        p, q = self.pmf(x), self.pmf(x_prime)
        if p.shape != q.shape:
            raise InvalidInputError(f"x and x_prime give different numbers of outputs: {p.size} and {q.size}")
        return p, q
