"""Releases on a fixed, input-independent lattice: how privaudit's Laplace and Gaussian avoid float leaks.

The textbook release ``fl(x + noise)`` leaks through floating point (Mironov 2012): the
set of doubles it can produce depends on x. privaudit's :class:`LaplaceMechanism` and
:class:`GaussianMechanism` instead release

    M(x) = γ · round((x + b·N) / γ),        γ = 2^(⌊log₂ b⌋ − GRID_BITS),

where b·N is the continuous noise (Laplace of scale b, or Gaussian of std σ = b) and
``round`` is to the nearest integer. This is the continuous mechanism followed by
rounding to the fixed lattice γℤ^d, i.e. *post-processing*: the ideal (real-arithmetic)
M has every privacy property of the continuous mechanism — pure ε-DP for Laplace,
μ = Δ/σ GDP, ρ = Δ²/(2σ²) zCDP and the exact (ε, δ) profile as an upper bound for the
Gaussian — with no sensitivity inflation, whatever d. Every lattice point has positive
probability under every input, so no output is reachable under one input only.

Computing it without leaking
    With u = x/γ (exact: γ is a power of two), k₀ = rint(u) and f = u − k₀ ∈ [−½, ½]
    (exact), the release index is k₀ + rint(f + (b/γ)·N) and the output
    γ·(k₀ + j) is an exactly representable lattice point for |k₀ + j| < 2⁵². The only
    floating-point error left is in V = f + (b/γ)·N, whose magnitude is independent of x.

Float error bound (what the implementation adds to the ideal)
    If the float noise is coupled to an exact one with |N − N_real| ≤ κ(N), then
    |V − V_real| ≤ η = (b/γ)·κ + 2⁻⁵²|V|, and the probability of each lattice cell
    [j − ½, j + ½) moves by at most a factor exp(±3η) (the density of V varies by a
    factor ≤ e^{1/(b/γ)} ≤ 1.002 across a cell, and the cell boundaries move by ≤ η).
    The implemented pmf is therefore within exp(±η′), η′ = 3η_max, of the ideal,
    pointwise, per coordinate. For a d-dimensional release the privacy loss is at most
    ε_ideal + 2dη′, and δ at most e^{dη′}·δ_ideal + (1 + e^ε)·(total variation outside
    the region where the pointwise bound holds).

    * Laplace: N = S·E with E from :func:`~privaudit.mechanisms.samplers.exponential`,
      κ ≤ 2⁻⁵⁰E, E ≤ 737; with b/γ < 2¹¹ and |V| < 2²¹ this gives
      η ≤ 2¹¹·2⁻⁵⁰·737 + 2⁻⁵²·2²¹ < 2⁻²⁸·⁹ and a log-pmf error 3η < 2⁻²⁷
      (:data:`LAPLACE_ETA`) on *every* output. The uncoupled tail (E > 737) has ideal
      probability < 2⁻¹⁰⁰⁰ ≈ 1e−301.
    * Gaussian: N from numpy's ziggurat ``standard_normal`` (Marsaglia & Tsang, 256
      layers). On its fast path (≈ 99 %) it returns r·w_i for a 52-bit integer r, a
      deterministic coupling with κ ≤ w_i < 2⁻⁵⁰, hence a log-pmf error < 2⁻³⁷; its
      wedges accept with a float comparison (error 2⁻⁵² in an acceptance probability
      of order 1); its tail (|N| > 3.65) is r + xx, xx = −log1p(−U)/r with U = k·2⁻⁵³,
      whose relative resolution 2⁻⁵³e^{r·xx} stays below 2⁻⁴⁰ for |N| ≤ 6 but reaches
      2⁻²¹ at |N| = 8 and a whole cell near |N| ≈ 10.5, where the support ends. Hence
      a log-pmf error ≤ 2⁻³⁰ (:data:`GAUSSIAN_ETA`) for |N| ≤ 6, and a total-variation
      error outside that region ≤ 2⁻²¹·P(|N| > 6) + P(|N| > 9.5) < 1e−14
      (:data:`GAUSSIAN_TAIL`). This is an analysis of numpy's published algorithm, not
      of a formally verified implementation.

    Both are far below anything an audit can resolve (an audit at n = 10⁹ resolves
    ε to ~10⁻⁴); they are reported by the mechanisms' ``float_error(d)``.

Grid step
    GRID_BITS = 10 puts 2¹⁰–2¹¹ lattice points per noise scale. Rounding adds variance
    γ²/12 ≤ b²·2⁻²⁰/12 per coordinate (relative 4e−8 for the Gaussian), far below
    Monte Carlo resolution, and lowers the Fisher information by a relative O((γ/b)²).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr, ndtr

from .validation import InvalidInputError, InvalidParameterError

#: log₂ of the number of lattice points per noise scale (b or σ).
GRID_BITS = 10
#: Largest |x/γ| accepted: keeps k₀ + j exactly representable (< 2⁵²) with room for noise.
MAX_INDEX = 2.0**50
#: Per-coordinate bound on the log-pmf error of the float Laplace lattice release.
LAPLACE_ETA = 2.0**-27
#: Per-coordinate bound on the log-pmf error of the float Gaussian lattice release.
GAUSSIAN_ETA = 2.0**-30
#: Per-coordinate total-variation error of the float Gaussian release outside the region where GAUSSIAN_ETA holds.
GAUSSIAN_TAIL = 1e-14


def grid_step(scale: float, bits: int = GRID_BITS) -> float:
    """γ = 2^(⌊log₂ scale⌋ − bits), the power-of-two lattice step for a noise scale."""
    mant, exp = math.frexp(scale)  # scale = mant·2^exp, mant in [0.5, 1)
    step = math.ldexp(1.0, exp - 1 - bits)
    if step == 0.0 or not math.isfinite(step) or step < 2.0**-1000:
        raise InvalidParameterError(
            f"noise scale {scale!r} is too small for a float-safe lattice (grid step would underflow)"
        )
    return step


def split_input(x: np.ndarray, step: float) -> tuple[np.ndarray, np.ndarray]:
    """Split x/γ into its nearest integer k₀ and the exact remainder f ∈ [−½, ½]."""
    u = x / step  # exact: step is a power of two and |u| is checked below
    if u.size and float(np.max(np.abs(u))) > MAX_INDEX:
        raise InvalidInputError(
            f"x has a coordinate of magnitude {float(np.max(np.abs(x))):.6g}, too large for the float-safe lattice "
            f"of step {step:.6g} (|x| must be below {MAX_INDEX * step:.6g}); rescale the input"
        )
    k0 = np.rint(u)
    return k0, u - k0


def lattice_release(x: np.ndarray, noise: np.ndarray, scale: float, step: float) -> np.ndarray:
    """γ·(k₀ + rint(f + (scale/γ)·noise)) for standard noise draws of shape (n, *x.shape); in place on ``noise``."""
    k0, f = split_input(x, step)
    noise *= scale / step
    noise += f
    np.rint(noise, out=noise)
    noise += k0
    noise *= step
    return noise


def lattice_offsets(outputs, x: np.ndarray, step: float) -> np.ndarray:
    """(y − x)/γ per coordinate, shape (n, d), checking that outputs lie on the lattice γℤ."""
    y = np.asarray(outputs, dtype=float)
    j = y / step
    if not np.all(j == np.rint(j)):
        raise InvalidInputError(f"outputs are not on the mechanism's lattice (multiples of {step!r})")
    return (j - x / step).reshape(len(y), -1)


def _log_diff_exp(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """log(e^a − e^b) for a ≥ b, elementwise."""
    with np.errstate(divide="ignore"):
        return a + np.log(-np.expm1(b - a))


def laplace_cell_logprob(v: np.ndarray, half: float) -> np.ndarray:
    """log P(L ∈ [v − half, v + half]) for L ~ Laplace(0, 1), elementwise and stable in the tails."""
    a, c = v - half, v + half
    right = _log_diff_exp(-a, -c) - math.log(2)  # a >= 0: ½(e^{−a} − e^{−c})
    left = _log_diff_exp(c, a) - math.log(2)  # c <= 0: ½(e^{c} − e^{a})
    mid = np.log1p(-0.5 * (np.exp(np.minimum(a, 0)) + np.exp(-np.maximum(c, 0))))
    return np.where(a >= 0, right, np.where(c <= 0, left, mid))


def gaussian_cell_logprob(v: np.ndarray, half: float) -> np.ndarray:
    """log P(N ∈ [v − half, v + half]) for N ~ N(0, 1), elementwise and stable in the tails."""
    a, c = v - half, v + half
    upper = _log_diff_exp(log_ndtr(-a), log_ndtr(-c))  # a >= 0: Q(a) − Q(c)
    lower = _log_diff_exp(log_ndtr(c), log_ndtr(a))  # c <= 0: Φ(c) − Φ(a)
    mid = np.log1p(-(ndtr(np.minimum(a, 0)) + ndtr(-np.maximum(c, 0))))
    return np.where(a >= 0, upper, np.where(c <= 0, lower, mid))


def gaussian_lattice_fisher(f: np.ndarray, s: float, width: float = 14.0) -> np.ndarray:
    """Exact Fisher information (in units of 1/σ²) of round(f + s·N) about its shift, per coordinate.

    ``f`` are the fractional offsets (grid units), ``s`` = σ/γ. The sum runs over the
    cells within ``width`` standard deviations (the rest carries < 1e−40 of the mass).
    Always ≤ 1 (data processing), with 1 − I = O(1/s²).
    """
    f = np.atleast_1d(np.asarray(f, dtype=float))
    j = np.arange(-math.ceil(width * s), math.ceil(width * s) + 1, dtype=float)
    a = (j[None, :] - 0.5 - f[:, None]) / s
    c = a + 1.0 / s
    logp = gaussian_cell_logprob((a + c) / 2, 0.5 / s)
    dens = np.exp(-0.5 * a * a) - np.exp(-0.5 * c * c)  # √(2π)·s·∂p/∂(shift in σ units)·…
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(np.isfinite(logp), dens**2 / (2 * math.pi) * np.exp(-logp), 0.0)
    return terms.sum(axis=1)
