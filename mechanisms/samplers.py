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
except on events of probability below 2⁻¹¹⁰⁰ (smaller than the smallest positive
double, 4.9e−324).

Full-precision uniform (:func:`uniform_binade`)
    One 64-bit word per draw: 52 bits of mantissa m, one sign bit, and 11 bits whose
    leading zeros (refilled from fresh words while all are zero, up to 1100 zeros)
    give the binade z with P(z) = 2^−(z+1). U is the midpoint of the sub-interval
    [2^−(z+1)(1 + m/2⁵²), 2^−(z+1)(1 + (m+1)/2⁵²)), each of which has probability exactly
    its length: U is an exact quantisation Q(U_real) of a real uniform, with
    |Q(U) − U| ≤ 2⁻⁵³·U (relative, all the way down to 2⁻¹¹⁰⁰), not the absolute 2⁻⁵³ of
    ``rng.random()``. This is the uniform Mironov's snapping mechanism assumes (each
    double with probability proportional to its spacing).

Exponential (:func:`exponential`)
    E = −log U = (z+1)·ln 2 − log1p((m + ½)·2⁻⁵²). Coupled with E_real = −log U_real,
    |E − E_real| ≤ 2⁻⁵⁰·(E + 1) (quantisation 2⁻⁵³, log1p and the product each within a
    few ulps). Support: E ≤ 1101·ln 2 ≈ 763.

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

#: Largest number of leading zero bits drawn for the binade of a uniform; beyond it
#: (probability 2⁻¹¹⁰⁰ < the smallest positive double) the binade is capped.
MAX_BINADE = 1100
#: Bound on |E − E_real| / (E + 1) for :func:`exponential` (see module docstring).
EXPONENTIAL_REL_ERROR = 2.0**-50
#: Largest value :func:`exponential` can return.
MAX_EXPONENTIAL = (MAX_BINADE + 1) * math.log(2) + 1.0

_LOW11 = np.uint64(2**53)  # words below this have their 11 top bits all zero
_LN2 = math.log(2)


def _as_generator(rng) -> np.random.Generator:
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


def _exponential(rng: np.random.Generator, size: int, depth: int) -> tuple[np.ndarray, np.ndarray]:
    words = rng.bit_generator.random_raw(size)
    sign = (words & np.uint64(1)).astype(np.float64)
    sign *= 2.0
    sign -= 1.0
    # U = (w >> 1 + ½)·2⁻⁶³ rounded to a double: with the 11 top bits not all zero,
    # U ≥ 2⁻¹¹ and the 63-bit integer keeps ≥ 52 significant bits, so the rounding is
    # a quantisation of relative size ≤ 2⁻⁵² of a real uniform on its cell.
    u = (words >> np.uint64(1)).astype(np.float64)
    u += 0.5
    u *= 2.0**-63
    e = np.log(u)
    np.negative(e, out=e)
    rare = np.flatnonzero(words < _LOW11)
    if rare.size:
        # Conditionally on 11 leading zeros, 2¹¹·U is again uniform: E = 11 ln 2 + E′.
        if depth * 11 >= MAX_BINADE:
            e[rare] = MAX_BINADE * _LN2
        else:
            e[rare] = 11 * _LN2 + _exponential(rng, rare.size, depth + 1)[0]
    return e, sign


def exponential(rng, size) -> tuple[np.ndarray, np.ndarray]:
    """Full-precision Exp(1) draws and independent signs (±1.0), flat arrays of ``size``.

    Returns ``(E, S)`` with |E − E_real| ≤ 2⁻⁵⁰ (E + 1) for a coupled exact exponential
    E_real; E ≤ 763 (see module docstring).
    """
    return _exponential(_as_generator(rng), int(size), 0)


def geometric_floor(e: np.ndarray, t: float) -> np.ndarray:
    """⌊t·E⌋ as float64 integers: Geometric(1 − e^{−1/t}) for E ~ Exp(1)."""
    g = e * t
    return np.floor(g, out=g)


def _size(size) -> tuple[int, ...]:
    return (int(size),) if isinstance(size, int | np.integer) else tuple(int(v) for v in size)


def _signed_geometric(rng: np.random.Generator, m: int, t: float) -> tuple[np.ndarray, np.ndarray]:
    """One round of the discrete-Laplace reduction: (S·⌊tE⌋, rejected mask)."""
    e, s = _exponential(rng, m, 0)
    g = geometric_floor(e, t)
    bad = (s < 0) & (g == 0)
    g *= s
    return g, bad


def discrete_laplace(rng, size, t: float) -> np.ndarray:
    """Discrete Laplace draws on ℤ (float64 integers): P(k) ∝ exp(−|k|/t), t > 0."""
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
    e, _ = _exponential(rng, m, 0)
    return y, ~(e > a)  # accept with probability exp(−a) = P(Exp(1) > a)


def discrete_gaussian(rng, size, s: float) -> np.ndarray:
    """Discrete Gaussian draws on ℤ (float64 integers): P(k) ∝ exp(−k²/(2s²)), s > 0.

    Canonne, Kamath & Steinke (2020), Algorithm 3, vectorised with batch refill; the
    expected number of proposals per draw is below 2 for every s (their Thm. 6 analysis
    gives acceptance ≥ ~0.5).
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
