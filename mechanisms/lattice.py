"""Dithered lattice releases: how privaudit's Laplace and Gaussian avoid floating-point leaks.

The textbook release ``fl(x + noise)`` leaks through floating point (Mironov 2012): the
set of doubles it can produce depends on x. privaudit's :class:`LaplaceMechanism` and
:class:`GaussianMechanism` instead release

    M(x) = γ · (round((x + b·N)/γ − u) + u),     u ~ U[0, 1)^d,   γ = 2^(⌊log₂ b⌋ − GRID_BITS),

where b·N is the continuous noise (Laplace of scale b, or Gaussian of std σ = b) and u
is a fresh uniform offset drawn independently of x. Given u this is the continuous
mechanism rounded onto the lattice γ(ℤ + u)^d, fixed before x is seen: *post-processing*.
So the ideal (real-arithmetic) M has every privacy property of the continuous mechanism
— pure ε-DP for Laplace, μ = Δ/σ GDP, ρ = Δ²/(2σ²) zCDP and the exact (ε, δ) profile as
an upper bound for the Gaussian — with no sensitivity inflation, whatever d. Its law is
that of x + b·N + γ·W with W ~ U[−½, ½)^d independent (subtractive dither), whose
density is the noise density averaged over a box of width γ (:func:`laplace_cell_logprob`,
:func:`gaussian_cell_logprob`). The random offset makes the outputs look continuous (no
value repeats at audit sizes, so atom detectors keep their power), while the set of
doubles the implementation can output, {fl(γ·fl(K + u))}, does not depend on x.

Computing it without leaking
    With v = x/γ (exact: γ is a power of two), k₀ = rint(v) and f = v − k₀ ∈ [−½, ½]
    (exact), the index is K = k₀ + rint(f + (b/γ)·N − u) and the output γ·fl(K + u).
    The only floating-point error that matters is in V = f + (b/γ)·N − u, whose
    magnitude is independent of x. Rounding in fl(K + u) merges offsets u into
    intervals whose probability does not depend on x: the probability of an output
    is a u-average of ideal cell probabilities P(K | x, u), so its ratio between two
    inputs stays within the ideal bound.

Float error bound (what the implementation adds to the ideal)
    If the float noise is coupled to an exact one with |N − N_real| ≤ κ(N), then
    |V − V_real| ≤ η = (b/γ)·κ + 2⁻⁵²|V| + 2⁻⁵³ (u is a 53-bit uniform), and for each u
    the probability of each lattice cell
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
      of a formally verified implementation. DP-SGD's compiled release
      (:mod:`~privaudit.mechanisms.lattice_kernel`) draws the same words and returns the
      same bits (tested), so the analysis covers it.

    Both are far below anything an audit can resolve (an audit at n = 10⁹ resolves
    ε to ~10⁻⁴); they are reported by the mechanisms' ``float_error(d)``.

Grid step
    GRID_BITS = 10 puts 2¹⁰–2¹¹ lattice points per noise scale. The dither adds variance
    γ²/12 ≤ b²·2⁻²⁰/12 per coordinate (relative 4e−8 for the Gaussian), far below
    Monte Carlo resolution, and lowers the Fisher information by a relative O((γ/b)²).
    A finer grid would multiply the float error (it grows with b/γ).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
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
    """γ = 2^(⌊log₂ scale⌋ − bits), the power-of-two lattice step for a noise scale.

    Parameters
    ----------
    scale : float
        Noise scale (σ or b) > 0.
    bits : int
        How many binary orders of magnitude γ lies below the scale.

    Returns
    -------
    float
        γ.

    Raises
    ------
    InvalidParameterError
        When the step would underflow (below 2⁻¹⁰⁰⁰) or is not finite.
    """
    mant, exp = math.frexp(scale)  # scale = mant·2^exp, mant in [0.5, 1)
    step = math.ldexp(1.0, exp - 1 - bits)
    if step == 0.0 or not math.isfinite(step) or step < 2.0**-1000:
        raise InvalidParameterError(
            f"noise scale {scale!r} is too small for a float-safe lattice (grid step would underflow)"
        )
    return step


def split_input(x: np.ndarray, step: float) -> tuple[np.ndarray, np.ndarray]:
    """Split x/γ into its nearest integer k₀ and the exact remainder f ∈ [−½, ½].

    Parameters
    ----------
    x : ndarray
        The input (any shape).
    step : float
        Lattice step γ, a power of two.

    Returns
    -------
    k0, f : ndarray
        Shaped like x, with x/γ = k₀ + f exactly.

    Raises
    ------
    InvalidInputError
        When |x/γ| exceeds :data:`MAX_INDEX`.
    """
    check_lattice_range(x, step)
    u = x / step  # exact: step is a power of two and |u| ≤ MAX_INDEX
    k0 = np.rint(u)
    return k0, u - k0


def check_lattice_range(x: np.ndarray, step: float) -> None:
    """Raise if some |x/γ| exceeds :data:`MAX_INDEX` (NaN passes: the release keeps it NaN).

    Parameters
    ----------
    x : ndarray
        The input of a lattice release.
    step : float
        Lattice step γ, a power of two (so |x/γ| > MAX_INDEX exactly when |x| > MAX_INDEX·γ).

    Raises
    ------
    InvalidInputError
        When |x/γ| exceeds :data:`MAX_INDEX`.
    """
    # max and −min of x rather than max |x/γ|: no temporary the size of x.
    bound = MAX_INDEX * step
    if x.size and (float(np.max(x)) > bound or float(-np.min(x)) > bound):
        raise InvalidInputError(
            f"x has a coordinate of magnitude {float(np.max(np.abs(x))):.6g}, too large for the float-safe lattice "
            f"of step {step:.6g} (|x| must be below {bound:.6g}); rescale the input"
        )


def round_onto_lattice(noise: np.ndarray, k0: np.ndarray, f: np.ndarray, u: np.ndarray, scale: float,
                       step: float, out: np.ndarray | None = None) -> np.ndarray:
    """γ·fl(K + u), K = k₀ + rint(f + (scale/γ)·noise − u): the arithmetic of every lattice release.

    Parameters
    ----------
    noise : ndarray of float64
        Standard noise; overwritten (it holds fl(K + u) on return).
    k0, f : ndarray
        :func:`split_input` of x, broadcast against ``noise``.
    u : ndarray
        The offsets, U[0, 1) drawn independently of x, broadcast against ``noise``.
    scale : float
        Noise scale (σ or b) > 0.
    step : float
        Lattice step γ, a power of two.
    out : ndarray, optional
        Where γ·fl(K + u) goes; ``noise`` by default.

    Returns
    -------
    ndarray
        ``out`` (or ``noise``).
    """
    # One rounding per line, in this order: the float-error bound of the module docstring is
    # about exactly these operations.
    noise *= scale / step
    noise += f
    noise -= u
    np.rint(noise, out=noise)
    noise += k0
    noise += u
    return np.multiply(noise, step, out=noise if out is None else out)


def lattice_release(x: np.ndarray, noise: np.ndarray, scale: float, step: float, rng: np.random.Generator) -> np.ndarray:
    """γ·fl(K + u), K = k₀ + rint(f + (scale/γ)·noise − u), for standard noise of shape (n, *x.shape); in place.

    ``rng`` (a Generator) draws the offsets u ~ U[0, 1), independent of x.

    Parameters
    ----------
    x : ndarray
        The input (any shape).
    noise : ndarray of shape (n, *x.shape)
        Standard noise draws; overwritten with the release.
    scale : float
        Noise scale (σ or b) > 0.
    step : float
        Lattice step γ, a power of two.
    rng : Generator
        Source of the offsets u.

    Returns
    -------
    ndarray of shape (n, *x.shape)
        The releases (the ``noise`` array itself).
    """
    k0, f = split_input(x, step)
    return round_onto_lattice(noise, k0, f, rng.random(noise.shape), scale, step)


def noise_offsets(outputs: ArrayLike, x: np.ndarray, scale: float) -> np.ndarray:
    """(y − x)/scale per coordinate, shape (n, d).

    Parameters
    ----------
    outputs : array-like of shape (n, ...)
        Releases.
    x : ndarray
        The input, broadcast against each release.
    scale : float
        Noise scale (σ or b) > 0.

    Returns
    -------
    ndarray of shape (n, d)
    """
    y = np.asarray(outputs, dtype=float)
    return ((y - x) / scale).reshape(len(y), -1)


def _log_diff_exp(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """log(e^a − e^b) for a ≥ b, elementwise."""
    with np.errstate(divide="ignore"):
        return a + np.log(-np.expm1(b - a))


def laplace_cell_logprob(v: np.ndarray, half: float) -> np.ndarray:
    """log P(L ∈ [v − half, v + half]) for L ~ Laplace(0, 1), elementwise and stable in the tails.

    Parameters
    ----------
    v : ndarray
        Cell centres, in noise units.
    half : float
        Half-width h of the cell, in noise units.

    Returns
    -------
    ndarray
        Shaped like ``v``.
    """
    a, c = v - half, v + half
    right = _log_diff_exp(-a, -c) - math.log(2)  # a >= 0: ½(e^{−a} − e^{−c})
    left = _log_diff_exp(c, a) - math.log(2)  # c <= 0: ½(e^{c} − e^{a})
    mid = np.log1p(-0.5 * (np.exp(np.minimum(a, 0)) + np.exp(-np.maximum(c, 0))))
    return np.where(a >= 0, right, np.where(c <= 0, left, mid))


def gaussian_cell_logprob(v: np.ndarray, half: float) -> np.ndarray:
    """log P(N ∈ [v − half, v + half]) for N ~ N(0, 1), elementwise and stable in the tails.

    Parameters
    ----------
    v : ndarray
        Cell centres, in noise units.
    half : float
        Half-width h of the cell, in noise units.

    Returns
    -------
    ndarray
        Shaped like ``v``.
    """
    a, c = v - half, v + half
    upper = _log_diff_exp(log_ndtr(-a), log_ndtr(-c))  # a >= 0: Q(a) − Q(c)
    lower = _log_diff_exp(log_ndtr(c), log_ndtr(a))  # c <= 0: Φ(c) − Φ(a)
    mid = np.log1p(-(ndtr(np.minimum(a, 0)) + ndtr(-np.maximum(c, 0))))
    return np.where(a >= 0, upper, np.where(c <= 0, lower, mid))


def laplace_dither_logprob(v: np.ndarray, half: float) -> np.ndarray:
    """Fast :func:`laplace_cell_logprob`: for |v| ≥ half the cell mass is e^{−|v|}·sinh(half) exactly.

    Parameters
    ----------
    v : ndarray
        Cell centres, in noise units.
    half : float
        Half-width h of the cell, in noise units.

    Returns
    -------
    ndarray
        Shaped like ``v``.
    """
    out = -np.abs(v)
    out += math.log(math.sinh(half))
    centre = np.abs(v) < half
    if np.any(centre):
        out[centre] = laplace_cell_logprob(v[centre], half)
    return out


def gaussian_dither_logprob(v: np.ndarray, half: float) -> np.ndarray:
    """Fast :func:`gaussian_cell_logprob` for a narrow cell (half ≤ 2⁻⁸), to ~1e−15 relative.

    P = Φ(v + h) − Φ(v − h) = φ(v)·∫_{−h}^{h} e^{−vt} e^{−t²/2} dt. With a = v·h and
    S(a) = sinh(a)/a, expanding e^{−t²/2} = 1 − t²/2 + t⁴/8 − … gives
    P = 2h·φ(v)·(S(a) − (h²/2)(1/3 + a²/10 + O(a⁴)) + h⁴/40 + O(h⁶)); the neglected terms
    are below 1e−16 relative for |a| ≤ 0.05. Larger |a| (|v| ≥ 0.05/h, beyond 12 standard
    deviations when h ≤ 2⁻⁸) use the exact log-CDF difference.

    Parameters
    ----------
    v : ndarray
        Cell centres, in noise units.
    half : float
        Half-width h of the cell, in noise units.

    Returns
    -------
    ndarray
        Shaped like ``v``.
    """
    if half > 2.0**-8:
        return gaussian_cell_logprob(v, half)
    a = v * half
    a2 = a * a
    small = a2 < 1e-6
    with np.errstate(divide="ignore", invalid="ignore"):
        s1 = np.where(small, a2 / 6 * (1 + a2 / 20), np.sinh(a) / a - 1.0)  # S(a) − 1 without cancellation for small a
    w = s1 - 0.5 * half * half * (1 / 3 + a2 / 10) + half**4 / 40
    out = np.log1p(w)
    out -= 0.5 * v * v
    out += math.log(2 * half) - 0.5 * math.log(2 * math.pi)
    far = a2 > 0.05**2
    if np.any(far):
        out[far] = gaussian_cell_logprob(v[far], half)
    return out


def gaussian_dither_fisher(s: float, width: float = 14.0, offsets: int = 16) -> float:
    """Fisher information (in units of 1/σ²) of x + σN + γW about x, W ~ U[−½, ½), s = σ/γ.

    The density is p(z) = Φ(z + h) − Φ(z − h) (σ units, h = 1/(2s)), and
    I = ∫ (φ(z − h) − φ(z + h))²/p(z) dz. The integrand is summed on the lattices
    ℤ/s + o/(s·offsets) for ``offsets`` equally spaced shifts o: the integral of a smooth
    function over a period of shifts, which this trapezoid rule resolves to machine
    precision. The range covers ``width`` standard deviations (the rest < 1e−40).
    Always ≤ 1 (data processing), with 1 − I = O(1/s²).

    Parameters
    ----------
    s : float
        σ/γ, noise std in lattice steps.
    width : float
        Standard deviations covered by the sum.
    offsets : int
        Number of equally spaced lattice shifts averaged.

    Returns
    -------
    float
        I in (0, 1].
    """
    j = np.arange(-math.ceil(width * s), math.ceil(width * s) + 1, dtype=float)
    z = (j[None, :] + (np.arange(offsets)[:, None] + 0.5) / offsets) / s
    h = 0.5 / s
    logp = gaussian_cell_logprob(z, h)
    dens = np.exp(-0.5 * (z - h) ** 2) - np.exp(-0.5 * (z + h) ** 2)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        terms = np.where(np.isfinite(logp), dens**2 / (2 * math.pi) * np.exp(-logp), 0.0)
    # With density q = p/(2h) and 2h = 1/s: I = ∫ q′²/q dz = s·∫ p′²/p dz, and a Riemann sum
    # of spacing 1/s turns s·∫ into Σ: I = Σ_j p′(z_j)²/p(z_j), averaged over the shifts.
    return float(terms.sum(axis=1).mean())
