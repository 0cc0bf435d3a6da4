"""Floating-point-safe noise samplers, vectorised over samples.

Textbook samplers draw a uniform U = k·2⁻⁵³ and return f(U) in floating point. Their
outputs take only the values f can produce, so ``x + noise`` lands on a set that
depends on x, and one output may be possible under x′ and impossible under x
(Mironov 2012, "On significance of the least significant bits for differential
privacy", CCS). They also cut the tails at f(2⁻⁵³) (36.7 scales for numpy's
Laplace), so the support of ``x + noise`` itself depends on x.

The samplers here are built so that each is *coupled* to an exact real-valued
sampler with a stated error bound, and their tails reach far enough that every
output a mechanism can produce under one input is reachable under any other input
except on events of probability below 2⁻¹⁰⁰⁰ ≈ 1e−301.

Full-precision uniform and exponential (:func:`exponential`)
    One 64-bit word per draw (refilled with probability 2⁻¹⁰): bit 0 is a sign, bit 1
    picks the half of (0, 1), and the other 62 bits give u = (m + ½)·2⁻⁶² on (0, 1) with
    a relative error ≤ 2⁻⁵¹ against a real uniform coupled to it (rows with u < 2⁻¹⁰
    are redrawn as 2⁻¹⁰·u′, down to 2⁻¹⁰⁰⁰): the resolution is relative all the way
    down, not the absolute 2⁻⁵³ of ``rng.random()``. This is the uniform Mironov's
    snapping mechanism assumes (each double with probability proportional to its
    spacing). E = ln 2 − log u on one half and −log1p(−u/2) on the other, so
    |E − E_real| ≤ 2⁻⁵⁰·E for E_real = −log U_real, uniformly in E. Support: E ≤ 737;
    the cap has probability 2⁻¹⁰⁰⁰ ≈ 1e−301.

Discrete Laplace (:func:`discrete_laplace`)
    P(L = k) ∝ exp(−|k|/t) on ℤ, from G = ⌊t·E⌋ ~ Geometric(1 − e^{−1/t}) (exact for a
    real exponential: P(⌊tE⌋ = k) = e^{−k/t}(1 − e^{−1/t})) and a sign bit, rejecting
    (sign −, G = 0) so that 0 is not counted twice (Canonne, Kamath & Steinke 2020,
    Alg. 2 uses the same reduction). Rejections are refilled in vectorised batches.

Discrete Gaussian (:func:`discrete_gaussian`)
    P(Z = k) ∝ exp(−k²/(2s²)) on ℤ, by Canonne, Kamath & Steinke (2020, Alg. 3):
    propose Y ~ discrete Laplace with t = ⌊s⌋ + 1 and accept with probability
    exp(−(|Y| − s²/t)²/(2s²)); the acceptance test compares a full-precision
    exponential with the exponent (a Bernoulli(e^{−a}) is [E > a] for E ~ Exp(1)), so it
    inherits the exponential's relative error instead of the 2⁻⁵³ absolute error of
    ``rng.random() < exp(−a)``. Rejections are refilled in batches.

The error bounds turn into privacy statements in :mod:`privaudit.mechanisms.lattice`.
"""

from __future__ import annotations

import math

import numpy as np

from .validation import check_positive

#: Binades of a full-precision uniform drawn before capping (probability of the cap: 2⁻¹⁰⁰⁰).
MAX_BINADE = 1000
#: Bound on |E − E_real| / E for :func:`exponential` (see module docstring).
EXPONENTIAL_REL_ERROR = 2.0**-50
#: Largest value :func:`exponential` can return: ln 2 + (MAX_BINADE + 62)·ln 2.
MAX_EXPONENTIAL = (MAX_BINADE + 63) * math.log(2)

_SMALL = np.uint64(2**54)  # words below this have m = w >> 2 < 2⁵²: refill (probability 2⁻¹⁰)
_LN2 = math.log(2)
_ONE_BITS = np.uint64(0x3FF0000000000000)  # the bits of 1.0 (the sign bit makes −1.0)


def _as_generator(rng) -> np.random.Generator:
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


def _fine_uniform(rng: np.random.Generator, size: int, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """Full-precision uniform u ∈ (0, 1) and the raw words (whose two low bits are unused).

    u = (m + ½)·2⁻⁶² with m = w >> 2, rounded to a double: for m ≥ 2⁵² (u ≥ 2⁻¹⁰) the
    relative error against a real uniform on m's cell is ≤ 2⁻⁵¹. Rows with m < 2⁵²
    are redrawn as 2⁻¹⁰·u′ (conditionally on that event u is uniform on (0, 2⁻¹⁰)),
    down to 2⁻¹⁰⁰⁰.
    """
    words = rng.bit_generator.random_raw(size)
    u = (words >> np.uint64(2)).astype(np.float64)
    u += 0.5
    u *= 2.0**-62
    small = np.flatnonzero(words < _SMALL)
    if small.size:
        if depth * 10 >= MAX_BINADE:
            u[small] = 2.0**-MAX_BINADE
        else:
            u[small] = 2.0**-10 * _fine_uniform(rng, small.size, depth + 1)[0]
    return u, words


def _exponential(rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
    u, words = _fine_uniform(rng, size, 0)
    # A fair bit picks U = u/2 < ½ (E = ln 2 − log u) or U = 1 − u/2 > ½
    # (E = −log1p(−u/2)); both keep E's relative error ≤ 2⁻⁵⁰, also for E near 0,
    # where −log(U) of a uniform on a 2⁻⁵³ grid would be off by 100 %. The lower branch's
    # log runs on every draw (cheaper than gathering half of them), the upper branch's
    # log1p on its own draws only, in place where it can be.
    upper = (words & np.uint64(2)).astype(bool)
    e = np.log(u)
    np.subtract(_LN2, e, out=e)
    h = u[upper]
    h *= -0.5
    e[upper] = np.negative(np.log1p(h, out=h), out=h)
    # The sign ±1.0 written as its bits in the words' own memory: bit 0 set gives +1.0.
    words &= np.uint64(1)
    words ^= np.uint64(1)
    words <<= np.uint64(63)
    words |= _ONE_BITS
    return e, words.view(np.float64)


def exponential(rng: np.random.Generator | int | None, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Full-precision Exp(1) draws and independent signs (±1.0), flat arrays of ``size``.

    Returns ``(E, S)`` with |E − E_real| ≤ 2⁻⁵⁰·E for a coupled exact exponential
    E_real, and E ≤ 737 (see module docstring).

    Parameters
    ----------
    rng : Generator, int or None
        Source of random words (a Generator is used as is).
    size : int
        Number of draws.

    Returns
    -------
    E, S : ndarray of shape (size,)
        Exp(1) draws and ±1.0 signs.
    """
    return _exponential(_as_generator(rng), int(size))


def geometric_floor(e: np.ndarray, t: float) -> np.ndarray:
    """⌊t·E⌋ as float64 integers: Geometric(1 − e^{−1/t}) for E ~ Exp(1).

    Parameters
    ----------
    e : ndarray
        Exp(1) draws (overwritten).
    t : float
        Scale t > 0.

    Returns
    -------
    ndarray
        ⌊t·E⌋, the ``e`` array itself.
    """
    g = e * t
    return np.floor(g, out=g)


def _size(size) -> tuple[int, ...]:
    return (int(size),) if isinstance(size, int | np.integer) else tuple(int(v) for v in size)


def _signed_geometric(rng: np.random.Generator, m: int, t: float) -> tuple[np.ndarray, np.ndarray]:
    """One round of the discrete-Laplace reduction: (S·⌊tE⌋, rejected mask)."""
    e, s = _exponential(rng, m)
    g = geometric_floor(e, t)
    bad = (s < 0) & (g == 0)
    g *= s
    return g, bad


def discrete_laplace(rng: np.random.Generator | int | None, size: int | tuple[int, ...], t: float) -> np.ndarray:
    """Discrete Laplace draws on ℤ (float64 integers): P(k) ∝ exp(−|k|/t), t > 0.

    Parameters
    ----------
    rng : Generator, int or None
        Source of random words (a Generator is used as is).
    size : int or tuple of int
        Output shape.
    t : float
        Scale t > 0.

    Returns
    -------
    ndarray of float64 integers
        Shape ``size``.

    Raises
    ------
    InvalidParameterError
        When t ≤ 0.
    """
    t = check_positive("t", t)
    rng = _as_generator(rng)
    shape = _size(size)
    out, bad = _signed_geometric(rng, int(np.prod(shape)), t)
    todo = np.flatnonzero(bad)
    while todo.size:
        g, bad = _signed_geometric(rng, todo.size, t)
        out[todo] = g
        todo = todo[bad]
    return out.reshape(shape)


def _dg_round(rng: np.random.Generator, m: int, t: float, centre: float, two_var: float):
    y = discrete_laplace(rng, m, t)
    a = np.abs(y)
    a -= centre
    a *= a
    a /= two_var
    e, _ = _exponential(rng, m)
    return y, ~(e > a)  # accept with probability exp(−a) = P(Exp(1) > a)


def discrete_gaussian(rng: np.random.Generator | int | None, size: int | tuple[int, ...], s: float) -> np.ndarray:
    """Discrete Gaussian draws on ℤ (float64 integers): P(k) ∝ exp(−k²/(2s²)), s > 0.

    Canonne, Kamath & Steinke (2020), Algorithm 3, vectorised with batch refill; the
    expected number of proposals per draw is below 2 for every s (their Thm. 6 analysis
    gives acceptance ≥ ~0.5).

    Parameters
    ----------
    rng : Generator, int or None
        Source of random words (a Generator is used as is).
    size : int or tuple of int
        Output shape.
    s : float
        Scale s > 0.

    Returns
    -------
    ndarray of float64 integers
        Shape ``size``.

    Raises
    ------
    InvalidParameterError
        When s ≤ 0.
    """
    s = check_positive("s", s)
    rng = _as_generator(rng)
    shape = _size(size)
    t = math.floor(s) + 1.0
    args = (t, s * s / t, 2 * s * s)
    out, bad = _dg_round(rng, int(np.prod(shape)), *args)
    todo = np.flatnonzero(bad)
    while todo.size:
        y, bad = _dg_round(rng, todo.size, *args)
        out[todo] = y
        todo = todo[bad]
    return out.reshape(shape)
