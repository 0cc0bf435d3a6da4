"""The Laplace mechanism: x + Lap(0, b)^d with b = Δ₁/ε, pure ε-DP, released on a fixed lattice.

The release is γ·(round((x + Lap(0, b)^d)/γ − u) + u) with u ~ U[0, 1)^d drawn
independently of x and γ = 2^(⌊log₂ b⌋ − 10): the continuous Laplace mechanism rounded onto
a lattice γ(ℤ + u)^d fixed before x is seen (see :mod:`privaudit.mechanisms.lattice`).
This is post-processing, so the ideal release is exactly ε-DP with no sensitivity
inflation; its law is x + Lap(0, b) + γ·U[−½, ½) and the doubles it can output do not
depend on x. The noise is S·b·E with E a full-precision exponential
(:func:`~privaudit.mechanisms.samplers.exponential`) whose tail reaches 737 scales, not
the 36.7 of numpy's ``laplace`` (whose support therefore depends on x). The
floating-point deviation from the ideal release is at most a factor exp(±2⁻²⁷) per
coordinate on every output (:meth:`LaplaceMechanism.float_error`).

Mironov's snapping mechanism (2012, §5.2, Thm. 1) is the classical alternative:
clamp_B(round_Λ(clamp_B(x) + S·λ·ln U*)), with Λ the smallest power of two ≥ λ, U*
uniform over the doubles of (0, 1) (each with probability proportional to its
spacing) and a correctly rounded ln, is (1/λ + 2⁻⁴⁹B/λ)-DP for sensitivity-1 inputs when
λ < B < 2⁴⁶λ. Its grid step Λ ≥ λ is one noise scale wide (it adds up to Λ²/12 of
variance), and it needs an input bound B; the fine lattice here does not, because its
error analysis is relative per cell instead of worst-case over the whole range.
The textbook float sampler survives only as
:class:`~privaudit.mechanisms.unsafe.UnsafeFloatLaplaceMechanism`.

Its exact profile between inputs at ℓ₁ distance Δ₁ along one coordinate (the
worst case) is δ(ε′) = max(0, 1 − e^{(ε′ − ε)/2}), and its trade-off curve is
:func:`~privaudit.mechanisms.tradeoff.laplace_tradeoff`.
"""

from __future__ import annotations

import math

import numpy as np
from dp_accounting import DpEvent, LaplaceDpEvent, NoOpDpEvent
from numpy.typing import ArrayLike

from .claim import PrivacyClaim
from .lattice import LAPLACE_ETA, grid_step, laplace_dither_logprob, lattice_release, noise_offsets
from .protocol import NeighbouringPair
from .samplers import exponential
from .tradeoff import laplace_tradeoff
from .validation import InvalidParameterError, check_array, check_delta, check_epsilon, check_int, check_size, check_positive
from .parameter_constraints import POSITIVE
from .registry import register_mechanism, requires

def float_safe_laplace(values: ArrayLike, scale: float, rng: np.random.Generator | int | None = None) -> np.ndarray:
    """``values + Lap(0, scale)`` elementwise, released on the dithered lattice of step 2^(⌊log₂ scale⌋ − 10).

    The float-safe replacement for ``values + rng.laplace(0, scale, values.shape)``: same
    pure ε-DP as the continuous Laplace (post-processing), law values + Lap(0, b) + γ·U[−½, ½).

    Parameters
    ----------
    values : array-like
        Values to noise (any shape).
    scale : float
        Laplace scale b, in :data:`SCALE_RANGE`.
    rng : Generator, int or None
        Source of the noise and of the lattice offset.

    Returns
    -------
    ndarray
        Same shape as ``values``.

    Raises
    ------
    InvalidParameterError
        When the scale is not positive or lies outside :data:`SCALE_RANGE`.
    """
    scale = check_positive("scale", scale)
    if not SCALE_RANGE[0] <= scale <= SCALE_RANGE[1]:
        raise InvalidParameterError(f"scale must lie in [{SCALE_RANGE[0]:g}, {SCALE_RANGE[1]:g}], got scale={scale!r}")
    values = np.asarray(values, dtype=float)
    rng = np.random.default_rng(rng)
    e, sign = exponential(rng, values.size)
    e *= sign
    return lattice_release(values, e.reshape(values.shape), scale, grid_step(scale), rng)


#: Noise scales the lattice release supports: the lattice step and the indices stay normal doubles.
SCALE_RANGE = (1e-250, 1e250)


@register_mechanism("laplace", check=requires("epsilon"))
class LaplaceMechanism:
    """Release x + Lap(0, b) per coordinate on a dithered lattice γ(ℤ + u)^d, for ℓ₁ sensitivity Δ₁.

    The lattice step γ = 2^(⌊log₂ b⌋ − 10) (:attr:`lattice_step`) depends on b only and
    the offset u is drawn independently of x.

    Parameters
    ----------
    epsilon : float
        Claimed pure-DP ε (> 0).
    sensitivity : float
        ℓ₁ sensitivity Δ₁.
    scale : float, optional
        Laplace scale b. Defaults to Δ₁/ε; set it explicitly to build a
        mechanism whose claim is wrong, for audits.
    """

    #: Constructor parameters in scikit-learn's vocabulary (validated when a configuration is loaded).
    _parameter_constraints = {"epsilon": [POSITIVE], "sensitivity": [POSITIVE], "scale": [POSITIVE, None]}

    def __init__(self, *, epsilon: float, sensitivity: float = 1.0, scale: float | None = None) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.sensitivity = check_positive("sensitivity", sensitivity)
        self.scale = self.sensitivity / self.epsilon if scale is None else check_positive("scale", scale)
        if not SCALE_RANGE[0] <= self.scale <= SCALE_RANGE[1]:
            raise InvalidParameterError(
                f"Laplace scale sensitivity/epsilon = {self.scale!r} (epsilon={epsilon!r}, sensitivity={sensitivity!r}, "
                f"scale={scale!r}) is outside the float-safe range [{SCALE_RANGE[0]:g}, {SCALE_RANGE[1]:g}]"
            )
        self.lattice_step = grid_step(self.scale)
        self.claim = PrivacyClaim(self.epsilon, 0.0, f"l1<={self.sensitivity:g}")

    def __repr__(self) -> str:
        return f"LaplaceMechanism(scale={self.scale:.6g}, sensitivity={self.sensitivity:g}, claim={self.claim})"

    @property
    def true_epsilon(self) -> float:
        """ε achieved by the scale in use: Δ₁/b (exact for the continuous Laplace, a bound for the dithered release)."""
        return self.sensitivity / self.scale

    def exact_delta(self, epsilon: float) -> float:
        """δ(ε) of the continuous Laplace of the scale in use: exact for it, an upper bound for the dithered release.

        Parameters
        ----------
        epsilon : float
            ε ≥ 0.

        Returns
        -------
        float
            max(0, 1 − e^{(ε − ε_true)/2}).
        """
        eps = check_positive("epsilon", epsilon, allow_zero=True)
        return max(0.0, -math.expm1((eps - self.true_epsilon) / 2))

    def exact_epsilon(self, delta: float) -> float:
        """ε(δ) of the continuous Laplace, ε_true + 2 ln(1 − δ) floored at 0; an upper bound for the dithered release.

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
        return max(0.0, self.true_epsilon + 2 * math.log1p(-d))

    def tradeoff(self, alpha: ArrayLike) -> np.ndarray:
        """Trade-off curve of the continuous worst-case pair: exact for it, a lower bound for the dithered release.

        Parameters
        ----------
        alpha : array-like
            Type-I error rates α in [0, 1].

        Returns
        -------
        ndarray
            β = f(α), shaped like ``alpha``.
        """
        return laplace_tradeoff(self.true_epsilon, alpha)

    def float_error(self, d: int = 1) -> tuple[float, float]:
        """(ε slack, δ slack) of the float implementation over the ideal lattice release, for d coordinates.

        Every output's implemented probability is within exp(±d·η) of the ideal one
        (η = 2⁻²⁷, :data:`~privaudit.mechanisms.lattice.LAPLACE_ETA`), except beyond 737
        scales (ideal mass < 2⁻¹⁰⁰⁰ ≈ 1e−301).

        Parameters
        ----------
        d : int
            Number of released coordinates.

        Returns
        -------
        (float, float)
            (2dη, 0).
        """
        return 2 * check_int("d", d) * LAPLACE_ETA, 0.0

    def sample(self, x: ArrayLike, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """``n`` dithered lattice releases of ``x``: shape ``(n, *x.shape)``.

        Parameters
        ----------
        x : array-like
            The input.
        n : int
            Number of independent releases.
        rng : Generator, int or None
            Source of the noise and of the lattice offset.

        Returns
        -------
        ndarray of shape (n, *x.shape)
            Independent releases stacked along axis 0.
        """
        x = check_array("x", x)
        n = check_size("n", n)
        rng = np.random.default_rng(rng)
        e, sign = exponential(rng, n * x.size)
        e *= sign
        return lattice_release(x, e.reshape((n, *x.shape)), self.scale, self.lattice_step, rng)

    def log_density(self, outputs: ArrayLike, x: ArrayLike) -> np.ndarray:
        """Exact log-density of each release given ``x``; shape ``(n,)``.

        The release is x + b·L + γW with W ~ U[−½, ½)^d: its density is
        Π P(L ∈ [v − h, v + h])/γ with v = (y − x)/b, h = γ/(2b), the Laplace density up
        to a relative O((γ/b)²) away from x.

        Parameters
        ----------
        outputs : array-like of shape (n, ...)
            Releases, one per row of the leading axis.
        x : array-like
            The input.

        Returns
        -------
        ndarray of shape (n,)
            Log-density (or log-pmf) of each release given ``x``.
        """
        x = check_array("x", x)
        v = noise_offsets(outputs, x, self.scale)
        h = 0.5 * self.lattice_step / self.scale
        return laplace_dither_logprob(v, h).sum(axis=1) - v.shape[1] * math.log(self.lattice_step)

    def dp_event(self, distance: float | None = None) -> DpEvent:
        """dp_accounting event of one release between inputs at ℓ₁ distance Δ (default: the sensitivity).

        ``LaplaceDpEvent(b/Δ)``: exact for the continuous Laplace and, the dithered lattice
        release being its post-processing, a valid description of what is sampled (the
        floating-point slack is :meth:`float_error`). Use it through
        :func:`privaudit.mechanisms.accounting.privacy_loss_distribution`.

        Parameters
        ----------
        distance : float, optional
            Distance between the two inputs in the mechanism's sensitivity norm
            (default: the sensitivity, the worst case).

        Returns
        -------
        dp_accounting.DpEvent
            ``LaplaceDpEvent(b/Δ)``, or ``NoOpDpEvent`` at distance 0.
        """
        d = self.sensitivity if distance is None else check_positive("distance", distance, allow_zero=True)
        return NoOpDpEvent() if d == 0 else LaplaceDpEvent(self.scale / d)

    def worst_case_pair(self, *, dim: int = 1) -> NeighbouringPair:
        """x = 0, x′ = Δ₁ e₁: along one coordinate the privacy loss reaches ε (spreading Δ₁ over coordinates is never worse).

        Parameters
        ----------
        dim : int
            The input dimension d.

        Returns
        -------
        NeighbouringPair
        """
        x = np.zeros(check_int("dim", dim))
        xp = x.copy()
        xp[0] = self.sensitivity
        return NeighbouringPair(x, xp, self, f"Laplace, l1 distance {self.sensitivity:g} along e1")
