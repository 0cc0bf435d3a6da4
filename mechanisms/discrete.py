"""Integer-valued reference mechanisms: the discrete Laplace (geometric) and discrete Gaussian.

Both add integer noise to an integer input, so their outputs are integers whatever the
input: no floating-point rounding can make an output reachable from one input only.

* :class:`DiscreteLaplaceMechanism`: x + L, P(L = k) ∝ exp(−|k|/t), t = Δ/ε (the
  two-sided geometric mechanism, Ghosh, Roughgarden & Sundararajan 2009). For integer
  shifts ‖x − x′‖₁ ≤ Δ the privacy loss is at most ‖x − x′‖₁/t ≤ ε: pure ε-DP, exact
  (attained by a shift of Δ along one coordinate).
* :class:`DiscreteGaussianMechanism`: x + Z for a scalar integer x, P(Z = k) ∝
  exp(−k²/(2σ²)) (Canonne, Kamath & Steinke 2020). It is ρ = Δ²/(2σ²)-zCDP (their
  Prop. 5, exact for integer shifts), and its exact (ε, δ) profile (their Thm. 7) is
  computed by dp_accounting's ``DiscreteGaussianPrivacyLoss``. The discrete profile is
  *not* the continuous Gaussian's (it is slightly smaller at σ = 3, Δ = 1), so the claim
  carries no μ.

Sampling is vectorised (:mod:`privaudit.mechanisms.samplers`): a full-precision
exponential E gives ⌊tE⌋ ~ Geometric(1 − e^{−1/t}) exactly for a real E, and the
coupling error |E − E_real| ≤ 2⁻⁵⁰(E + 1) moves each cell [k/t, (k+1)/t) of tE by at most
η ≤ 2⁻⁵⁰·1.25·t(E + 1), i.e. a relative pmf error ≤ 2η/(t(1 − e^{−1/t})) ≤ 2⁻³⁹(t + 1)
per coordinate (:meth:`DiscreteLaplaceMechanism.float_error`). E ≤ 737 cuts the tails
beyond 737·t, an event of ideal probability < 2⁻¹⁰⁰⁰.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from dp_accounting.dp_event import DiscreteLaplaceDpEvent, DpEvent, NoOpDpEvent, ZCDpEvent
from numpy.typing import ArrayLike
from dp_accounting.pld.privacy_loss_mechanism import DiscreteGaussianPrivacyLoss, DiscreteLaplacePrivacyLoss
from scipy.optimize import brentq

from .claim import PrivacyClaim
from .samplers import discrete_gaussian, discrete_laplace
from .tradeoff import discrete_tradeoff
from .validation import (
    InvalidInputError,
    InvalidParameterError,
    ParameterTypeError,
    check_array,
    check_delta,
    check_epsilon,
    check_int,
    check_size,
    check_positive,
)
from .parameter_constraints import COUNT, DELTA, POSITIVE, Interval, Real
from .registry import register_mechanism, requires

#: Width (in noise scales) of the truncated supports used for exact trade-off curves;
#: the mass beyond is below 1e−60.
_SUPPORT_SCALES = 140


def check_integer_array(name: str, value: ArrayLike) -> np.ndarray:
    """A finite float array whose entries are integers below 2⁵⁰ in magnitude.

    Parameters
    ----------
    name : str
        Parameter name used in error messages.
    value : array-like
        The values to check.

    Returns
    -------
    ndarray of float

    Raises
    ------
    InvalidInputError
        When an entry is not finite, not an integer, or of magnitude above 2⁵⁰.
    """
    arr = check_array(name, value)
    if not np.all(arr == np.rint(arr)) or np.any(np.abs(arr) > 2.0**50):
        raise InvalidInputError(f"{name} must hold integers of magnitude below 2**50, got {value!r}")
    return arr


def _check_integer_sensitivity(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer | float):
        raise ParameterTypeError(f"sensitivity must be a positive integer, got {value!r} ({type(value).__name__})")
    if not (math.isfinite(value) and value == int(value) and value >= 1):  # int(inf) would overflow
        raise InvalidParameterError(f"sensitivity must be a positive integer, got sensitivity={value!r}")
    return int(value)


def _check_integer_distance(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer | float) or value != int(value) or value < 0:
        raise InvalidParameterError(f"distance must be a non-negative integer, got distance={value!r}")
    return int(value)


def _epsilon_from_profile(delta_of_eps, delta: float, upper: float) -> float:
    """Smallest ε ≥ 0 with δ(ε) ≤ δ for a non-increasing profile (bisection)."""
    if delta_of_eps(0.0) <= delta:
        return 0.0
    hi = upper
    while delta_of_eps(hi) > delta:
        hi *= 2
    return float(brentq(lambda e: delta_of_eps(e) - delta, 0.0, hi, xtol=1e-12, rtol=1e-12))


@register_mechanism("discrete-laplace", check=requires("epsilon"))
class DiscreteLaplaceMechanism:
    """Release x + L on integer inputs, P(L = k) ∝ exp(−|k|/t), pure ε-DP for ℓ₁ sensitivity Δ.

    Parameters
    ----------
    epsilon : float
        Claimed pure ε.
    sensitivity : int
        Integer ℓ₁ sensitivity Δ: the claim covers integer inputs with ‖x − x′‖₁ ≤ Δ.
    scale : float, optional
        Noise parameter t (default Δ/ε); set it to build a mis-calibrated mechanism.
    """

    #: Constructor parameters in scikit-learn's vocabulary (validated when a configuration is loaded).
    _parameter_constraints = {"epsilon": [POSITIVE], "sensitivity": [COUNT], "scale": [POSITIVE, None]}

    def __init__(self, *, epsilon: float, sensitivity: int = 1, scale: float | None = None) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.sensitivity = _check_integer_sensitivity(sensitivity)
        self.scale = self.sensitivity / self.epsilon if scale is None else check_positive("scale", scale)
        if not 1e-3 <= self.scale <= 2.0**40:
            raise InvalidParameterError(
                f"discrete Laplace scale t = {self.scale!r} (epsilon={epsilon!r}, sensitivity={sensitivity!r}) must lie "
                "in [1e-3, 2**40]"
            )
        self.claim = PrivacyClaim(self.epsilon, 0.0, f"l1<={self.sensitivity}")

    def __repr__(self) -> str:
        return f"DiscreteLaplaceMechanism(scale={self.scale:.6g}, sensitivity={self.sensitivity}, claim={self.claim})"

    @property
    def true_epsilon(self) -> float:
        """Exact pure ε of the scale in use: Δ/t."""
        return self.sensitivity / self.scale

    def sample(self, x: ArrayLike, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """``n`` releases of the integer input ``x``: shape ``(n, *x.shape)``, integer-valued floats.

        Parameters
        ----------
        x : array-like of integers
            The integer input.
        n : int
            Number of independent releases.
        rng : Generator, int or None
            Source of randomness (passed to :func:`numpy.random.default_rng`).

        Returns
        -------
        ndarray of shape (n, *x.shape)
            Integer-valued floats.
        """
        x = check_integer_array("x", x)
        n = check_size("n", n)
        return x + discrete_laplace(rng, (n, *x.shape), self.scale)

    def log_pmf_noise(self, k: ArrayLike) -> np.ndarray:
        """log P(L = k) = −|k|/t + log tanh(1/(2t)).

        Parameters
        ----------
        k : array-like
            Noise values (integers).

        Returns
        -------
        ndarray
            Shaped like ``k``.
        """
        return -np.abs(k) / self.scale + math.log(math.tanh(0.5 / self.scale))

    def log_density(self, outputs: ArrayLike, x: ArrayLike) -> np.ndarray:
        """Log-pmf of each release given ``x``; shape ``(n,)`` (−inf off the integers).

        Parameters
        ----------
        outputs : array-like of shape (n, ...)
            Releases, one per row of the leading axis.
        x : array-like of integers
            The integer input.

        Returns
        -------
        ndarray of shape (n,)
            Log-density (or log-pmf) of each release given ``x``.
        """
        x = check_integer_array("x", x)
        y = np.asarray(outputs, dtype=float)
        k = (y - x).reshape(len(y), -1)
        logp = self.log_pmf_noise(k).sum(axis=1)
        return np.where(np.all(k == np.rint(k), axis=1), logp, -np.inf)

    def _loss(self) -> DiscreteLaplacePrivacyLoss:
        return DiscreteLaplacePrivacyLoss(parameter=1.0 / self.scale, sensitivity=self.sensitivity)

    def exact_delta(self, epsilon: float) -> float:
        """Exact δ(ε) of the worst pair (shift Δ on one coordinate), by dp_accounting.

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
        return float(self._loss().get_delta_for_epsilon(eps))

    def exact_epsilon(self, delta: float) -> float:
        """Exact ε(δ) of the worst pair (the pure ε at δ = 0).

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
        if d == 0.0:
            return self.true_epsilon
        return _epsilon_from_profile(self.exact_delta, d, self.true_epsilon + 1.0)

    def pmf(self, x: int, support: np.ndarray) -> np.ndarray:
        """P(x + L = y) for each y in ``support`` (scalar x).

        Parameters
        ----------
        x : int
            Scalar integer input.
        support : ndarray
            Output values y.

        Returns
        -------
        ndarray
            Shaped like ``support``.
        """
        return np.exp(self.log_pmf_noise(np.asarray(support, dtype=float) - float(x)))

    def tradeoff(self, alpha: ArrayLike) -> np.ndarray:
        """Exact trade-off curve between x = 0 and x′ = Δ (the worst pair).

        Parameters
        ----------
        alpha : array-like
            Type-I error rates α in [0, 1].

        Returns
        -------
        ndarray
            β = f(α), shaped like ``alpha``.
        """
        k = math.ceil(_SUPPORT_SCALES * self.scale)
        support = np.arange(-k, k + self.sensitivity + 1)
        return discrete_tradeoff(self.pmf(0, support), self.pmf(self.sensitivity, support), alpha)

    def float_error(self, d: int = 1) -> tuple[float, float]:
        """(ε slack, δ slack) of the float sampler over the exact one, for d coordinates (module docstring).

        Parameters
        ----------
        d : int
            Number of released coordinates.

        Returns
        -------
        (float, float)
            (ε slack, δ slack) of the float implementation.
        """
        return 2 * check_int("d", d) * 2.0**-39 * (self.scale + 1), 0.0

    def dp_event(self, distance: int | None = None) -> DpEvent:
        """``DiscreteLaplaceDpEvent(1/t, distance)`` of one release between integer inputs at ℓ₁ distance (default Δ).

        Parameters
        ----------
        distance : int, optional
            Integer ℓ₁ distance of the two inputs (default Δ).

        Returns
        -------
        dp_accounting.DpEvent
            ``NoOpDpEvent`` at distance 0.

        Raises
        ------
        InvalidParameterError
            When ``distance`` is not a non-negative integer.
        """
        d = self.sensitivity if distance is None else _check_integer_distance(distance)
        return NoOpDpEvent() if d == 0 else DiscreteLaplaceDpEvent(noise_parameter=1.0 / self.scale, sensitivity=d)


@register_mechanism("discrete-gaussian", check=requires("sigma"))
class DiscreteGaussianMechanism:
    """Release x + Z for a scalar integer x, P(Z = k) ∝ exp(−k²/(2σ²)) (Canonne, Kamath & Steinke 2020).

    Parameters
    ----------
    sigma : float
        Scale σ of the discrete Gaussian (its variance is slightly below σ²).
    sensitivity : int
        Integer sensitivity Δ: the claim covers integer inputs with |x − x′| ≤ Δ.
    delta : float
        δ at which the claim's ε is taken from the exact profile (default 1e−5).

    The claim carries ρ = Δ²/(2σ²) (zCDP, exact) and the exact (ε, δ) of the discrete
    profile, computed by dp_accounting; no μ (the discrete Gaussian is not exactly
    μ-GDP for any μ = Δ/σ). Inputs are scalars: the exact profile is one-dimensional.
    """

    #: Constructor parameters in scikit-learn's vocabulary (validated when a configuration is loaded).
    _parameter_constraints = {
        "sigma": [Interval(Real, 0.1, 1e5, closed="both")], "sensitivity": [COUNT], "delta": [DELTA]}

    def __init__(self, *, sigma: float, sensitivity: int = 1, delta: float = 1e-5) -> None:
        self.sigma = check_positive("sigma", sigma)
        if not 0.1 <= self.sigma <= 1e5:  # exact sums over the support stay cheap (≤ 8e6 terms)
            raise InvalidParameterError(f"sigma must lie in [0.1, 1e5] for the discrete Gaussian, got sigma={sigma!r}")
        self.sensitivity = _check_integer_sensitivity(sensitivity)
        delta = check_delta(delta)
        rho = self.sensitivity**2 / (2 * self.sigma**2)
        self.claim = PrivacyClaim(self.exact_epsilon(delta), delta, f"l1<={self.sensitivity}", rho=rho)

    def __repr__(self) -> str:
        return f"DiscreteGaussianMechanism(sigma={self.sigma:.6g}, sensitivity={self.sensitivity}, claim={self.claim})"

    def sample(self, x: ArrayLike, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """``n`` releases of the scalar integer input ``x``: shape ``(n,)`` (or ``(n, 1)`` for a length-1 x).

        Parameters
        ----------
        x : int or array-like of one integer
            The scalar integer input.
        n : int
            Number of independent releases.
        rng : Generator, int or None
            Source of randomness (passed to :func:`numpy.random.default_rng`).

        Returns
        -------
        ndarray of shape (n,) or (n, 1)
            Integer-valued floats.

        Raises
        ------
        InvalidInputError
            When x has more than one coordinate.
        """
        x = check_integer_array("x", x)
        if x.size != 1:
            raise InvalidInputError(
                f"DiscreteGaussianMechanism takes one integer coordinate (its exact profile is one-dimensional), "
                f"got x of shape {x.shape}"
            )
        n = check_size("n", n)
        return x + discrete_gaussian(rng, (n, *x.shape), self.sigma)

    def log_pmf_noise(self, k: ArrayLike) -> np.ndarray:
        """log P(Z = k), with the normaliser summed exactly over the truncated support.

        Parameters
        ----------
        k : array-like
            Noise values (integers).

        Returns
        -------
        ndarray
            Shaped like ``k``.
        """
        return -np.square(k) / (2 * self.sigma**2) - self._log_normaliser

    @functools.cached_property
    def _log_normaliser(self) -> float:
        k = np.arange(-math.ceil(40 * self.sigma), math.ceil(40 * self.sigma) + 1)
        return float(np.log(np.exp(-np.square(k) / (2 * self.sigma**2)).sum()))

    def log_density(self, outputs: ArrayLike, x: ArrayLike) -> np.ndarray:
        """Log-pmf of each release given ``x``; shape ``(n,)`` (−inf off the integers).

        Parameters
        ----------
        outputs : array-like of shape (n, ...)
            Releases, one per row of the leading axis.
        x : array-like of integers
            The integer input.

        Returns
        -------
        ndarray of shape (n,)
            Log-density (or log-pmf) of each release given ``x``.
        """
        x = check_integer_array("x", x)
        k = (np.asarray(outputs, dtype=float) - x).reshape(len(outputs), -1)
        logp = self.log_pmf_noise(k).sum(axis=1)
        return np.where(np.all(k == np.rint(k), axis=1), logp, -np.inf)

    def exact_delta(self, epsilon: float) -> float:
        """Exact δ(ε) between x and x + Δ (Canonne, Kamath & Steinke 2020, Thm. 7), by dp_accounting.

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
        loss = DiscreteGaussianPrivacyLoss(sigma=self.sigma, sensitivity=self.sensitivity)
        return float(loss.get_delta_for_epsilon(eps))

    def exact_epsilon(self, delta: float) -> float:
        """Exact ε(δ) of the discrete profile.

        Parameters
        ----------
        delta : float
            δ in (0, 1).

        Returns
        -------
        float
            ε(δ) ≥ 0.
        """
        d = check_delta(delta)
        mu = self.sensitivity / self.sigma
        return _epsilon_from_profile(self.exact_delta, d, mu * mu / 2 + mu * math.sqrt(2 * math.log(1 / d)) + 1.0)

    def tradeoff(self, alpha: ArrayLike) -> np.ndarray:
        """Exact trade-off curve between x = 0 and x′ = Δ.

        Parameters
        ----------
        alpha : array-like
            Type-I error rates α in [0, 1].

        Returns
        -------
        ndarray
            β = f(α), shaped like ``alpha``.
        """
        k = math.ceil(_SUPPORT_SCALES * self.sigma / 10)
        support = np.arange(-k, k + self.sensitivity + 1, dtype=float)
        p0 = np.exp(self.log_pmf_noise(support))
        p1 = np.exp(self.log_pmf_noise(support - self.sensitivity))
        return discrete_tradeoff(p0, p1, alpha)

    def float_error(self, d: int = 1) -> tuple[float, float]:
        """(ε slack, δ slack) of the float sampler: proposal 2⁻³⁹(t + 1) plus acceptance 2⁻³², per coordinate.

        Parameters
        ----------
        d : int
            Number of released coordinates.

        Returns
        -------
        (float, float)
            (ε slack, δ slack) of the float implementation.
        """
        t = math.floor(self.sigma) + 1.0
        return 2 * check_int("d", d) * (2.0**-39 * (t + 1) + 2.0**-32), 0.0

    def dp_event(self, distance: int | None = None) -> DpEvent:
        """``ZCDpEvent(ρ)`` with ρ = distance²/(2σ²): exact zCDP (dp_accounting has no discrete-Gaussian event).

        Parameters
        ----------
        distance : int, optional
            Integer ℓ₁ distance of the two inputs (default Δ).

        Returns
        -------
        dp_accounting.DpEvent
            ``NoOpDpEvent`` at distance 0.

        Raises
        ------
        InvalidParameterError
            When ``distance`` is not a non-negative integer.
        """
        d = self.sensitivity if distance is None else _check_integer_distance(distance)
        return NoOpDpEvent() if d == 0 else ZCDpEvent(d * d / (2 * self.sigma**2))
