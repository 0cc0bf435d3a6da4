"""Exact-reachability distinguishers for floating-point noise samplers (Mironov 2012).

A mechanism that releases ``fl(x + noise)`` with ``noise`` drawn by a textbook
floating-point sampler does not have the law its density describes: ``noise``
takes only the values the sampler can produce from its finitely many uniform
inputs (u = k·2⁻⁵³), and adding x rounds them onto x's own lattice. Many outputs
that x′ produces are therefore *impossible* under x, and one such output proves
the input was x′ (Mironov 2012, "On significance of the least significant bits for
differential privacy", §3; ε = ∞ in principle).

Each attacker here inverts one sampler: for an output o and an input x it
recomputes the noise value ``t = o − x``, inverts the sampler to the integer
k of the uniform draw, and evaluates the *same floating-point expression* as the
sampler for k − J … k + J; o is *reachable* from x when one of them reproduces o
bit for bit, for every coordinate. The score of a release is

    score = [reachable from x′] − [reachable from x]  (+ a bounded density LR tie-break),

so the threshold test ``score > ½`` rejects x only on outputs x cannot produce.
The audit's statistics never trust this logic: the error rates of the test are
counted on held-out releases, so an imperfect inversion costs power, never validity.

Registered names
----------------
``"reach-numpy-laplace"``
    ``numpy.random.Generator.laplace`` (and ``RandomState.laplace``):
    v = ±b·log(w) with w = 2U (U < ½) or w = (2 − U) − U (U ≥ ½), U = k·2⁻⁵³.
``"reach-numpy-normal"``
    numpy's ziggurat ``standard_normal`` on its fast path (99.3 % of draws):
    z = ±r·w_i, r < 2⁵² an integer, w_i one of 256 layer widths (recovered once
    from the generator itself), released as ``fl(x + fl(σ·z))``.
``"reach-inverse-cdf"``
    The textbook inverse-CDF Laplace, u = U − ½,
    v = −b·sign(u)·log(1 − 2|u|) (:func:`inverse_cdf_laplace`).
``"reach-box-muller"``
    Box–Muller pairs z = √(−2 log U₁)·(cos 2πU₂, sin 2πU₂) released in
    consecutive coordinates (:func:`box_muller`).

numpy's vectorised ``log`` may differ by one ulp from the C library's ``log`` that
numpy's samplers call; rows found unreachable are therefore re-checked with
:func:`math.log` (exact), so that outputs of x are not misjudged unreachable.
``reach-numpy-laplace`` (in the default suite of every Laplace-scale mechanism) skips
both passes: a compiled loop evaluates its candidates with libm's ``log`` directly
(:func:`_compiled_laplace_reach`).
"""

from __future__ import annotations

import abc

import functools
import math
from collections.abc import Callable

import numpy as np

from privaudit.mechanisms.protocol import HasDensity
from privaudit.mechanisms.validation import InvalidParameterError

from .distinguishers import Distinguisher, _rows
from .registry import register_attack

_TWO52 = 2.0**52
_TWO53 = 2.0**53
_LIBM_LOG = np.frompyfunc(math.log, 1, 1)


@functools.cache
def _compiled_libm_log() -> Callable | None:
    """A compiled loop calling the C library's ``log`` per value (None without numba).

    numba lowers ``math.log`` to a call of the C library's ``log``, the function numpy's
    samplers and Python's ``math.log`` call (numpy's own SIMD ``np.log`` can be an ulp off):
    equality with ``math.log`` is tested. About 40× faster than a Python call per value.
    """
    try:
        from numba import njit
    except ImportError:  # pragma: no cover - numba is a dependency; the Python loop stays correct
        return None

    @njit(nogil=True)
    def libm_log(w, out):
        for i in range(w.size):
            out[i] = math.log(w[i])

    return libm_log


@functools.cache
def _compiled_laplace_reach() -> Callable | None:
    """The compiled reachability test of ``fl(x + Generator.laplace(0, b))``, with libm's log (None without numba).

    ``kernel(o, x, b, window, alive, cols)`` clears ``alive[i]`` when some column ``c`` of
    ``cols`` has no candidate k − J … k + J (on either branch, as in
    :meth:`NumpyLaplaceReachability._reach`) with ``fl(x[c] + v) == o[i, c]``; rows already
    dead are skipped and a row stops at its first unreachable column. Every candidate is
    evaluated with the C library's ``log``, the function numpy's sampler calls, so the
    test is exact in one pass: numpy's vectorised path needs a second pass with
    libm's log on the rows numpy's log rejects, and accepts the rare rows where numpy's
    log (an ulp off) reproduces an output the sampler cannot produce (≈ 2 in 10⁴
    float-safe lattice coordinates). Same arithmetic, in the same order, as the
    vectorised path; 6–15× faster on float-safe Laplace releases.
    """
    try:
        from numba import njit
    except ImportError:  # pragma: no cover - numba is a dependency; the vectorised path stays correct
        return None

    @njit(nogil=True)
    def laplace_reach(o, x, b, window, alive, cols):
        for i in range(o.shape[0]):
            if not alive[i]:
                continue
            for c in cols:
                xc, oc = x[c], o[i, c]
                w = math.exp(-abs(oc - xc) / b)
                k_mid, m_mid = np.rint(w * _TWO52), np.rint(_TWO53 - w * _TWO52)
                hit = False
                for j in range(-window, window + 1):
                    k = min(max(k_mid + j, 1.0), _TWO52 - 1)  # low branch: w = 2U = k·2⁻⁵²
                    u = min(max(m_mid + j, _TWO52), _TWO53 - 1) / _TWO53  # high branch: U = m·2⁻⁵³
                    if xc + b * math.log(k / _TWO52) == oc or xc + -(b * math.log((2.0 - u) - u)) == oc:
                        hit = True
                        break
                if not hit:
                    alive[i] = False
                    break
        return alive

    return laplace_reach


def _libm_log(w: np.ndarray) -> np.ndarray:
    """``log`` of the C library (what numpy's samplers call), elementwise; used on few rows."""
    w = np.asarray(w, dtype=float)
    if not w.size:
        return w
    compiled = _compiled_libm_log()
    if compiled is None:
        return _LIBM_LOG(w).astype(float)
    flat = np.ascontiguousarray(w).reshape(-1)
    out = np.empty_like(flat)
    compiled(flat, out)
    return out.reshape(w.shape)


def inverse_cdf_laplace(u: np.ndarray, scale: float, log: Callable = np.log) -> np.ndarray:
    """Textbook inverse-CDF Laplace noise from uniforms ``u`` in [0, 1): −b·sign(u − ½)·log(1 − 2|u − ½|).

    Parameters
    ----------
    u : ndarray
        Uniforms in [0, 1).
    scale : float
        Laplace scale b.
    log : callable
        The logarithm used (numpy's, or libm's to reproduce a C sampler bit for bit).

    Returns
    -------
    ndarray
        Shaped like ``u`` (±inf at u = 0).
    """
    c = u - 0.5
    with np.errstate(divide="ignore"):
        return -scale * np.sign(c) * log(1.0 - 2.0 * np.abs(c))


def box_muller(u1: np.ndarray, u2: np.ndarray, log: Callable = np.log) -> tuple[np.ndarray, np.ndarray]:
    """Box–Muller standard normals from uniforms in (0, 1): r·cos(2πu₂), r·sin(2πu₂), r = √(−2 log u₁).

    Parameters
    ----------
    u1, u2 : ndarray
        Uniforms in (0, 1), broadcast together.
    log : callable
        The logarithm used.

    Returns
    -------
    z1, z2 : ndarray
        The pair of normals.
    """
    with np.errstate(divide="ignore"):
        r = np.sqrt(-2.0 * log(u1))
    a = 2.0 * np.pi * u2
    return r * np.cos(a), r * np.sin(a)


class _Reachability(Distinguisher):
    """Shared fit/score: per-coordinate reachability from x and from x′, ANDed over coordinates."""

    requires_training = False
    handles_nonfinite = True
    leak_family = "floating-point"
    #: Candidates k − J … k + J around the inverted uniform index.
    window = 3
    #: Whether the sampler calls ``log`` (rows judged unreachable are then rechecked with libm's).
    uses_log = True

    def __init__(self, scale: float | None = None, tie_break: bool = True) -> None:
        self.scale = scale
        self.tie_break = tie_break

    def _scale_from(self, mechanism) -> float:
        if self.scale is not None:
            return float(self.scale)
        for attr in ("scale", "sigma"):
            v = getattr(mechanism, attr, None)
            if isinstance(v, int | float | np.floating) and v > 0:
                return float(v)
        raise InvalidParameterError(f"{type(self).__name__} needs the noise scale: pass scale= or audit a "
                                    f"mechanism with a .scale or .sigma attribute (got {type(mechanism).__name__})")

    def fit(self, outputs0=None, outputs1=None, *, mechanism=None, x=None, x_prime=None):
        if x is None or x_prime is None:
            raise InvalidParameterError(f"{type(self).__name__} needs the pair x and x_prime")
        self.scale_ = self._scale_from(mechanism)
        self.x_ = np.asarray(x, dtype=float).ravel()
        self.x_prime_ = np.asarray(x_prime, dtype=float).ravel()
        self.mechanism_ = mechanism if self.tie_break and isinstance(mechanism, HasDensity) else None
        return self

    #: Columns inverted together (Box–Muller's pairs are 2).
    block = 1

    def _check_size(self, o: np.ndarray, x: np.ndarray) -> None:
        # The model is "release = x + noise, coordinate by coordinate": a release of another size
        # (a dataset aggregate, a histogram of a dataset) has no per-coordinate input to invert from.
        if np.size(x) not in (1, o.shape[1]):
            raise InvalidParameterError(
                f"{type(self).__name__} inverts releases of the form x + noise: releases have "
                f"{o.shape[1]} values per row but the input has {np.size(x)}; use another attacker")

    def reachable(self, outputs, x) -> np.ndarray:
        """Boolean (n,): whether each release can be produced from input ``x``."""
        o = _rows(outputs)
        self._check_size(o, x)
        xr = np.broadcast_to(np.asarray(x, dtype=float).ravel(), o.shape[1:])
        return self._and_blocks(o, xr, np.isfinite(o).all(axis=1), range(0, o.shape[1], self.block))

    def score(self, outputs) -> np.ndarray:
        o = _rows(outputs)
        self._check_size(o, self.x_)
        x = np.broadcast_to(self.x_, o.shape[1:])
        xp = np.broadcast_to(self.x_prime_, o.shape[1:])
        # A row is reachable iff every block is: the blocks where x and x′ agree are checked once for
        # both, and later blocks only on the rows still reachable (most lattice rows fail the first).
        starts = range(0, o.shape[1], self.block)
        same = [b for b in starts if np.array_equal(x[b:b + self.block], xp[b:b + self.block])]
        differ = [b for b in starts if b not in same]
        shared = self._and_blocks(o, x, np.isfinite(o).all(axis=1), same)
        s = self._and_blocks(o, xp, shared.copy(), differ).astype(float) - \
            self._and_blocks(o, x, shared.copy(), differ).astype(float)
        if self.mechanism_ is not None and np.all(np.isfinite(o)):
            shape = (o.shape[0], *np.shape(self.x_))
            llr = (self.mechanism_.log_density(o.reshape(shape), self.x_prime_.reshape(np.shape(self.x_)))
                   - self.mechanism_.log_density(o.reshape(shape), self.x_))
            # Bounded into (−¼, ¼): orders releases within a reachability class without crossing classes.
            s = s + 0.25 * np.tanh(np.nan_to_num(llr) / 8.0)
        return s

    def _and_blocks(self, o, x, alive, starts) -> np.ndarray:
        """``alive`` ANDed, in place, with the reachability of each block of columns (only live rows are checked)."""
        for b in starts:
            rows = np.flatnonzero(alive)
            if rows.size == 0:
                break
            alive[rows] = self._reach_block(o[rows, b:b + self.block], x[b:b + self.block])
        return alive

    def _reach_block(self, o, x) -> np.ndarray:
        """Per row of one block: every coordinate reachable."""
        reach = self._reach(o, x, log=np.log).all(axis=1)
        if self.uses_log and not reach.all():
            # numpy's SIMD log can be an ulp off libm's: rows rejected with numpy's log are rechecked with libm's
            # (a Python call per value), but only those within NEAR_ULPS of a candidate; the others cannot be
            # reached by an ulp's difference in log.
            bad = np.flatnonzero(~reach)
            near = bad[self._reach(o[bad], x, log=np.log, ulps=NEAR_ULPS).all(axis=1)]
            if near.size:
                reach[near] = self._reach(o[near], x, log=_libm_log).all(axis=1)
        return reach

    @abc.abstractmethod
    def _reach(self, o, x, log, ulps: int = 0) -> np.ndarray:
        """Boolean (n, d): whether each coordinate of each row is reachable from ``x`` (``log`` is the log used).

        With ``ulps > 0``: whether a candidate lands within that many ulps of the output instead.
        """


#: Rows rejected with numpy's ``log`` are rechecked with libm's only when a candidate lands this close
#: (in spacings of the largest term). Measured on numpy's own Laplace releases (x in {0, 1e-3, 0.25, 1,
#: −3.7, 100}, b in {0.01, 1, 2, 10, 1000}, 1e5 each): 1 misses up to 62 of ~300 ulp-off rows, 2 none.
#: Each rechecked row costs a Python call per candidate: 2e6 five-dimensional releases of a float-safe
#: lattice took 69 s with a recheck of every rejected row.
NEAR_ULPS = 3


def _close(x, v, o, ulps: int) -> np.ndarray:
    """``fl(x + v) == o`` (``ulps = 0``), or within ``ulps`` spacings of the largest of |x|, |v|, |o|.

    The spacing is that of the largest term: an ulp of error in ``v`` moves ``x + v`` by an
    ulp of ``v``, which is many ulps of ``o`` when x + v cancels.
    """
    a = x + v
    if ulps == 0:
        return a == o
    mag = np.maximum(np.maximum(np.abs(x), np.abs(v)), np.abs(o))
    return np.abs(a - o) <= ulps * np.spacing(mag)


def _hits(o, x, values, ulps: int = 0):
    """Whether ``fl(x + value)`` reproduces ``o`` for any candidate (candidates on the last axis)."""
    return np.any(_close(x[..., None], values, o[..., None], ulps), axis=-1)


@register_attack("reach-numpy-laplace")
class NumpyLaplaceReachability(_Reachability):
    """Reachability under ``fl(x + Generator.laplace(0, b))`` (see module docstring)."""

    def _reach(self, o, x, log, ulps=0):
        b = self.scale_
        x = np.broadcast_to(x, o.shape)
        t = o - x
        j = np.arange(-self.window, self.window + 1)
        with np.errstate(over="ignore", invalid="ignore"):
            w_est = np.exp(-np.abs(t) / b)
        # Low branch (v ≤ 0): w = 2U = k·2⁻⁵², k in [1, 2⁵²).
        k = np.clip(np.round(w_est * _TWO52)[..., None] + j, 1, _TWO52 - 1)
        with np.errstate(divide="ignore"):
            v_low = b * log(k / _TWO52)
        # High branch (v ≥ 0): U = m·2⁻⁵³, m in [2⁵², 2⁵³), w = (2 − U) − U.
        m = np.clip(np.round(_TWO53 - w_est * _TWO52)[..., None] + j, _TWO52, _TWO53 - 1)
        u = m / _TWO53
        with np.errstate(divide="ignore"):
            v_high = -(b * log((2.0 - u) - u))
        return _hits(o, x, v_low, ulps) | _hits(o, x, v_high, ulps)

    def _and_blocks(self, o, x, alive, starts) -> np.ndarray:
        kernel = _compiled_laplace_reach()
        if kernel is None:  # pragma: no cover - numba is a dependency
            return super()._and_blocks(o, x, alive, starts)
        cols = np.fromiter(starts, dtype=np.int64)
        if cols.size and alive.any():
            kernel(np.ascontiguousarray(o, dtype=float), np.ascontiguousarray(x, dtype=float), self.scale_,
                   self.window, alive, cols)
        return alive


@register_attack("reach-inverse-cdf")
class InverseCDFLaplaceReachability(_Reachability):
    """Reachability under the textbook inverse-CDF Laplace ``x + inverse_cdf_laplace(U, b)``, U = k·2⁻⁵³."""

    def _reach(self, o, x, log, ulps=0):
        b = self.scale_
        x = np.broadcast_to(x, o.shape)
        t = o - x
        j = np.arange(-self.window, self.window + 1)
        # F(t) = ½ e^{t/b} for t < 0, 1 − ½ e^{−t/b} for t ≥ 0; U = F(t).
        with np.errstate(over="ignore"):
            u_est = np.where(t < 0, 0.5 * np.exp(np.minimum(t, 0) / b), 1 - 0.5 * np.exp(-np.maximum(t, 0) / b))
        k = np.clip(np.round(u_est * _TWO53)[..., None] + j, 0, _TWO53 - 1)
        return _hits(o, x, inverse_cdf_laplace(k / _TWO53, b, log=log), ulps)


@register_attack("reach-box-muller")
class BoxMullerReachability(_Reachability):
    """Reachability under ``x + σ·box_muller(U₁, U₂)`` with coordinates (2i, 2i + 1) one Box–Muller pair.

    U₁ = k₁·2⁻⁵³ ∈ (0, 1) and U₂ = k₂·2⁻⁵³; the pair (r, θ) of an output is inverted
    to (k₁, k₂) and the (2J + 1)² neighbouring candidates are recomputed.
    """

    window = 2
    block = 2

    def _reach(self, o, x, log, ulps=0):
        if o.shape[1] % 2:
            raise InvalidParameterError(f"reach-box-muller needs an even output dimension, got {o.shape[1]}")
        s = self.scale_
        x = np.broadcast_to(x, o.shape)
        z = (o - x) / s
        z0, z1 = z[:, 0::2], z[:, 1::2]
        j = np.arange(-self.window, self.window + 1)
        with np.errstate(over="ignore"):
            u1 = np.exp(-(z0**2 + z1**2) / 2)
        u2 = (np.arctan2(z1, z0) / (2 * np.pi)) % 1.0
        k1 = np.clip(np.round(u1 * _TWO53)[..., None, None] + j[:, None], 1, _TWO53 - 1)
        k2 = np.round(u2 * _TWO53)[..., None, None] + j[None, :]
        k2 = np.mod(k2, _TWO53)
        c0, c1 = box_muller(k1 / _TWO53, k2 / _TWO53, log=log)
        x0, x1 = x[:, 0::2][..., None, None], x[:, 1::2][..., None, None]
        hit = _close(x0, s * c0, o[:, 0::2][..., None, None], ulps) & _close(x1, s * c1, o[:, 1::2][..., None, None], ulps)
        pair_ok = hit.reshape(*hit.shape[:2], -1).any(axis=-1)
        return np.repeat(pair_ok, 2, axis=1)


@functools.lru_cache(maxsize=1)
def ziggurat_widths() -> np.ndarray:
    """The 256 layer widths w_i of numpy's ziggurat ``standard_normal``, recovered from the generator.

    On its fast path numpy draws one uint64 r and returns ±(r ≫ 9 & (2⁵² − 1))·w_{r & 255};
    replaying known PCG64 streams gives, for every layer, the width that reproduces
    the draws bit for bit (majority over a few thousand draws; the 0.7 % slow-path
    draws, which desynchronise a stream, are outvoted).
    """
    raws, zs = [], []
    for s in range(300):  # 300 short streams: 6000 draws, ~23 per layer
        raws.append(np.random.PCG64(s).random_raw(20))
        zs.append(np.random.Generator(np.random.PCG64(s)).standard_normal(20))
    raw, z = np.concatenate(raws), np.abs(np.concatenate(zs))
    idx = (raw & np.uint64(0xFF)).astype(int)
    rabs = ((raw >> np.uint64(9)) & np.uint64(0x000FFFFFFFFFFFFF)).astype(float)
    w = np.zeros(256)
    for i in range(256):  # 256 layers, a handful of candidates each
        m = (idx == i) & (rabs > 0)
        c = z[m] / rabs[m]
        cands = np.unique(np.concatenate([c, np.nextafter(c, 0), np.nextafter(c, 1)]))
        votes = (rabs[m][:, None] * cands[None, :] == z[m][:, None]).sum(axis=0)
        w[i] = cands[int(np.argmax(votes))]
    return w


@register_attack("reach-numpy-normal")
class NumpyNormalReachability(_Reachability):
    """Reachability under ``fl(x + fl(σ·z))`` with z from numpy's ziggurat fast path.

    For each layer i, r ≈ |t|/(σ w_i) with t = o − x; candidates r − J … r + J with
    r < 2⁵² are recomputed. Outputs from the slow path (tails, wedges; 0.7 %) are
    judged unreachable from both inputs, which only costs power.
    """

    window = 2
    uses_log = False

    def _reach(self, o, x, log, ulps=0):
        s = self.scale_
        x = np.broadcast_to(x, o.shape)
        t = np.abs((o - x) / s)
        w = ziggurat_widths()
        j = np.arange(-self.window, self.window + 1)
        sign = np.where(o - x < 0, -1.0, 1.0)
        out = np.zeros(o.shape, dtype=bool)
        for wi in w:  # 256 layers, each vectorised over all releases
            r = np.round(t / wi)
            live = r < _TWO52 + self.window
            if not live.any():
                continue
            rr = np.clip(r[live][:, None] + j, 0, _TWO52 - 1)
            z = sign[live][:, None] * (rr * wi)
            out[live] |= np.any(_close(x[live][:, None], s * z, o[live][:, None], ulps), axis=1)
        return out


__all__ = [
    "BoxMullerReachability", "InverseCDFLaplaceReachability", "NumpyLaplaceReachability", "NumpyNormalReachability",
    "box_muller", "inverse_cdf_laplace", "ziggurat_widths",
]
