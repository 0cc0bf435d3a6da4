"""Mironov's snapping mechanism: a floating-point-safe Laplace for bounded queries (Mironov 2012, §5.2).

For a query with sensitivity 1 and a public bound B, release

    f̃(x) = clamp_B( ⌊ clamp_B(x) ⊕ S ⊗ λ ⊗ LN(U*) ⌉_Λ ),

where ⊕ and ⊗ are floating-point operations, S a fair sign, U* uniform over the doubles of
(0, 1) *with probability proportional to their spacing*, LN the logarithm, Λ the smallest
power of two ≥ λ and ⌊·⌉_Λ rounding to the nearest multiple of Λ. Theorem 1 of Mironov
(2012, "On significance of the least significant bits for differential privacy", CCS):
if λ < B < 2⁴⁶·λ, the snapping mechanism is (1/λ + 2⁻⁴⁹·B/λ)-DP.

Here sensitivity Δ is handled by working in units of Δ′ = the smallest power of two ≥ Δ
(x/Δ′ is exact and has sensitivity ≤ 1), and λ = (1 + 2⁻⁴⁹·B/Δ′)/ε so that the theorem
gives exactly the requested ε. The released value is Δ′·f̃(x/Δ′) (exact). Compared with
:class:`~privaudit.mechanisms.LaplaceMechanism` (a fine dithered lattice), snapping rounds to a
grid one noise scale wide (it adds up to Λ²/12 ≤ λ²/3 of variance to the 2λ² of the
Laplace) and needs the bound B, but its guarantee covers the floating-point arithmetic
through a published theorem.

Assumptions of the theorem and how they are met:

* U*: one 64-bit word gives a 52-bit mantissa m, a sign bit and 11 bits whose leading
  zeros (refilled from fresh words while zero) give the binade z with P(z) = 2^−(z+1);
  U* = 2^−(z+1)·(1 + m·2⁻⁵²) is then each double of (0, 1) with probability proportional to
  its spacing, down to 2⁻¹⁰²² (beyond: probability 2⁻¹⁰²²).
* LN correctly rounded: numpy's ``log`` is accurate to about one ulp but not guaranteed
  correctly rounded (Mironov uses crlibm). This is the one assumption not verified here.
"""

from __future__ import annotations

import math

import numpy as np
from dp_accounting import DpEvent
from numpy.typing import ArrayLike

from .accounting import pure_dp_event
from .claim import PrivacyClaim
from .validation import InvalidParameterError, check_array, check_epsilon, check_size, check_positive
from .parameter_constraints import POSITIVE
from .registry import register_mechanism, requires

_MANTISSA = np.uint64(2**52 - 1)
_LEADING_ZEROS_11 = (11 - np.array([int(v).bit_length() for v in range(2048)])).astype(np.int64)
#: Deepest binade drawn (U* stays a normal double).
_MAX_BINADE = 1021


def spacing_uniform(rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
    """U* uniform over the doubles of (0, 1) with probability ∝ spacing, and fair signs ±1.

    The 52 low bits of a raw word are the mantissa, bit 52 the sign, and the leading zeros of
    the remaining 11 bits (continued in fresh words) pick the binade 2^−(z+1), so every double
    of (0, 1) is drawn with probability proportional to its spacing, as Mironov's analysis
    requires (the deepest binade is capped at 2^−1021).

    Parameters
    ----------
    rng : Generator
        Its bit generator supplies raw 64-bit words.
    size : int
        Number of draws.

    Returns
    -------
    u, sign : ndarray of shape (size,)
        U* in (0, 1), and ±1.0.
    """
    words = rng.bit_generator.random_raw(size)
    mant = (words & _MANTISSA).astype(np.float64)
    sign = ((words >> np.uint64(52)) & np.uint64(1)).astype(np.float64) * 2.0 - 1.0
    top = (words >> np.uint64(53)).astype(np.int64)
    z = _LEADING_ZEROS_11[top]
    more = np.flatnonzero(top == 0)
    while more.size:  # 11 zero bits (probability 2⁻¹¹): keep counting zeros in fresh words
        fresh = (rng.bit_generator.random_raw(more.size) >> np.uint64(53)).astype(np.int64)
        z[more] += _LEADING_ZEROS_11[fresh]
        z[more] = np.minimum(z[more], _MAX_BINADE - 1)
        more = more[(fresh == 0) & (z[more] < _MAX_BINADE - 1)]
    return np.ldexp(1.0 + mant * 2.0**-52, -(z + 1)), sign


def _power_of_two_at_least(value: float) -> float:
    mant, exp = math.frexp(value)  # value = mant·2^exp, mant in [0.5, 1)
    return math.ldexp(1.0, exp - 1) if mant == 0.5 else math.ldexp(1.0, exp)


@register_mechanism("snapping-laplace", check=requires("epsilon", "bound"))
class SnappingLaplaceMechanism:
    """Mironov's snapping mechanism: pure ε-DP Laplace noise for queries clamped to [−B, B].

    Parameters
    ----------
    epsilon : float
        Claimed pure ε, met exactly by Mironov's bound 1/λ + 2⁻⁴⁹B/λ (in units of Δ′).
    sensitivity : float
        ℓ₁ sensitivity Δ of the (scalar or per-coordinate) query; rounded up to a power of two Δ′.
    bound : float
        Public bound B: inputs are clamped to [−B, B] and so are the outputs. Needs
        λ < B/Δ′ < 2⁴⁶λ.
    """

    #: Constructor parameters in scikit-learn's vocabulary (validated when a configuration is loaded).
    _parameter_constraints = {"epsilon": [POSITIVE], "sensitivity": [POSITIVE], "bound": [POSITIVE]}

    def __init__(self, *, epsilon: float, sensitivity: float = 1.0, bound: float) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.sensitivity = check_positive("sensitivity", sensitivity)
        self.bound = check_positive("bound", bound)
        self.unit = _power_of_two_at_least(self.sensitivity)
        b = self.bound / self.unit
        self.lam = (1.0 + 2.0**-49 * b) / self.epsilon
        if not self.lam < b < 2.0**46 * self.lam:
            raise InvalidParameterError(
                f"snapping needs lambda < bound/sensitivity' < 2**46 lambda; got bound={bound!r}, "
                f"sensitivity={sensitivity!r} (power of two {self.unit:g}), epsilon={epsilon!r} (lambda={self.lam:.6g})"
            )
        self.snap = _power_of_two_at_least(self.lam)
        self.claim = PrivacyClaim(self.epsilon, 0.0, f"l1<={self.sensitivity:g}")

    def __repr__(self) -> str:
        return (f"SnappingLaplaceMechanism(lambda={self.lam:.6g}, Lambda={self.snap:g}, bound={self.bound:g}, "
                f"claim={self.claim})")

    @property
    def output_step(self) -> float:
        """Spacing Λ·Δ′ of the output grid (outputs are its multiples, or ±B)."""
        return self.snap * self.unit

    def dp_event(self, distance: float | None = None) -> DpEvent:
        """dp_accounting event of one release between inputs at ℓ₁ distance ``distance`` (default Δ).

        dp_accounting has no snapping event. Mironov's theorem makes the release pure ε-DP
        for inputs at distance ≤ Δ (the claim's ε, met exactly by the choice of λ), and group
        privacy makes it k·ε-DP at distance ≤ kΔ (k = ⌈r/Δ⌉). Every pure ε-DP release is a
        post-processing of binary randomized response at ε, so the event is
        :func:`~privaudit.mechanisms.accounting.pure_dp_event`: exact at δ = 0, pessimistic
        in δ(ε) for smaller ε (snapping's own profile lies below it).

        Parameters
        ----------
        distance : float, optional
            ℓ₁ distance r ≥ 0 of the two inputs (default: the sensitivity Δ).

        Returns
        -------
        dp_accounting.DpEvent
        """
        r = self.sensitivity if distance is None else check_positive("distance", distance, allow_zero=True)
        return pure_dp_event(self.epsilon * math.ceil(r / self.sensitivity))

    def sample(self, x: ArrayLike, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """``n`` releases of ``x`` (per coordinate): shape ``(n, *x.shape)``.

        Parameters
        ----------
        x : array-like
            The input.
        n : int
            Number of independent releases.
        rng : Generator, int or None
            Source of randomness (passed to :func:`numpy.random.default_rng`).

        Returns
        -------
        ndarray of shape (n, *x.shape)
            Multiples of the output step Λ·Δ′, clamped to [−B, B].
        """
        x = check_array("x", x)
        n = check_size("n", n)
        rng = np.random.default_rng(rng)
        b = self.bound / self.unit
        centre = np.clip(x / self.unit, -b, b)
        u, sign = spacing_uniform(rng, n * x.size)
        noise = np.log(u)
        noise *= self.lam
        noise *= sign
        out = noise.reshape((n, *x.shape))
        out += centre
        out /= self.snap  # exact: Λ is a power of two
        np.rint(out, out=out)
        out += 0.0  # −0.0 → +0.0: the sign of a zero would reveal on which side of 0 the noisy value fell
        out *= self.snap
        np.clip(out, -b, b, out=out)
        out *= self.unit
        return out

    def log_density(self, outputs: ArrayLike, x: ArrayLike) -> np.ndarray:
        """log-pmf of each release under the ideal (real-arithmetic) snapping of x; shape ``(n,)``.

        Interior outputs kΛ get the Laplace(clamp(x), λ) mass of [kΛ − Λ/2, kΛ + Λ/2); the
        endpoints ±B get the mass rounding to or beyond them. Outputs off that support: −inf.

        Parameters
        ----------
        outputs : array-like of shape (n, ...)
            Releases, one per row of the leading axis.
        x : array-like
            The input.

        Returns
        -------
        ndarray of shape (n,)
            log-pmf (−inf off the support).
        """
        x = check_array("x", x)
        b = self.bound / self.unit
        centre = np.clip(x / self.unit, -b, b).ravel()
        y = (np.asarray(outputs, dtype=float) / self.unit).reshape(len(outputs), -1)
        k = np.rint(y / self.snap)
        lo, hi = (k - 0.5) * self.snap, (k + 0.5) * self.snap
        top = y >= b
        bottom = y <= -b
        lo = np.where(top, self._edge(b), lo)
        hi = np.where(top, np.inf, hi)
        lo = np.where(bottom, -np.inf, lo)
        hi = np.where(bottom, -self._edge(b), hi)
        mass = self._laplace_mass(lo - centre, hi - centre)
        on = (np.abs(y) <= b) & ((k * self.snap == y) | top | bottom)
        with np.errstate(divide="ignore"):
            return np.where(on.all(axis=1), np.log(mass).sum(axis=1), -np.inf)

    def _edge(self, b: float) -> float:
        """Smallest pre-rounding value whose snapped value reaches b (then clamped to b)."""
        k = math.ceil(b / self.snap)  # the first multiple of Λ at or beyond b
        return (k - 0.5) * self.snap

    def _laplace_mass(self, a: np.ndarray, c: np.ndarray) -> np.ndarray:
        """P(a ≤ L < c) for L ~ Laplace(0, λ), elementwise."""
        cdf = lambda t: np.where(t < 0, 0.5 * np.exp(np.minimum(t, 0) / self.lam), 1 - 0.5 * np.exp(-np.maximum(t, 0) / self.lam))
        return cdf(c) - cdf(a)
