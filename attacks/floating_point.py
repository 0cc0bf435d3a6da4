"""Distinguishers that look at floating-point representations: bit patterns, lattices, near-atoms.

A density says nothing about *which* floats a sampler can emit. Implementation
bugs live there: outputs on an input-dependent grid, noise whose low-order bits
betray the input (Mironov 2012), point masses smeared into tiny balls, NaN or
infinity under one input only. These attackers need no model of the mechanism.

Registered names
----------------
``"bit-pattern"``
    DP-Sniper's floating-point features (Bichsel et al. 2021, §6.3: the bits of the
    IEEE-754 double fed to a classifier), extended with the bits of o − x and o − x′
    (the recovered noise under each hypothesis, whose low-order bits carry the
    sampler's lattice). A Bernoulli naive-Bayes classifier on those bits (one
    matrix product to score); the score is its log-odds of x′.
``"lattice"``
    Count-based plug-in likelihood ratio over a discrete *key* of each release,
    the key chosen on half of the training split among: the fractional part of
    o·2ʲ (membership of a 2⁻ʲ lattice: a release on an input-dependent grid is
    identified exactly), o rounded to 2⁻ʲ (near-atoms: an ε-ball of mass that no
    density describes) and the exponent and trailing-zero count of each coordinate
    (the sampler's lattice; NaN and ±inf have their own exponent). A key seen under
    one input only in training and again at test time is strong evidence; keys
    never seen score 0.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from privaudit.mechanisms.validation import InvalidParameterError, check_int

from .distinguishers import Distinguisher, _rows, count_log_ratio, row_hashes
from .registry import register_attack
from .threshold_selection import select_threshold


#: Bits kept per double: sign, the 11 exponent bits and the 20 lowest mantissa bits. The high
#: mantissa bits only encode the value's magnitude, which the other attackers already see.
_KEPT_BITS = np.r_[np.arange(63, 51, -1), np.arange(19, -1, -1)].astype(np.uint64)


def float_bits(values: np.ndarray, bits: ArrayLike | None = None) -> np.ndarray:
    """Bits of each double (default: all 64, most significant first): shape (n, len(bits)·d).

    Parameters
    ----------
    values : ndarray of shape (n, d)
        Doubles (−0.0 is folded onto 0.0).
    bits : array-like of int, optional
        Bit positions to keep (63 = sign, 62–52 = exponent, 51–0 = mantissa), in output order.

    Returns
    -------
    ndarray of float32, shape (n, len(bits)·d)
        0/1 features, coordinate by coordinate.
    """
    v = np.ascontiguousarray(np.asarray(values, dtype=np.float64) + 0.0)
    u = v.view(np.uint64)
    shifts = np.arange(63, -1, -1, dtype=np.uint64) if bits is None else np.asarray(bits, dtype=np.uint64)
    out = (u[..., None] >> shifts) & np.uint64(1)
    return out.reshape(v.shape[0], -1).astype(np.float32, copy=False)


#: (shift, width, first kept-bit index) of the integer fields a double's kept bits are read as.
_TABLE_FIELDS = ((52, 12, 0), (10, 10, 12), (0, 10, 22))


def _bit_table(width: int) -> np.ndarray:
    """Rows are the bits (most significant first) of 0 … 2^width − 1: table @ weights sums them."""
    return ((np.arange(1 << width)[:, None] >> np.arange(width - 1, -1, -1)) & 1).astype(float)


@register_attack("bit-pattern")
class BitPatternAttack(Distinguisher):
    """Bernoulli naive Bayes on IEEE-754 bits of o, o − x and o − x′ (DP-Sniper's bit features).

    Per double the sign, exponent and 20 lowest mantissa bits are used (DP-Sniper feeds
    all 64 to an MLP; the high mantissa bits carry only the magnitude).

    Parameters
    ----------
    max_train : int
        Training rows per hypothesis (a random subset).
    max_dims : int
        Only the first ``max_dims`` output coordinates are encoded (64 features each, thrice).
    random_state : int, Generator or None
        Subsampling of the training split.
    """

    handles_nonfinite = True
    leak_family = "floating-point"

    def __init__(self, max_train: int = 10000, max_dims: int = 2, random_state=None) -> None:
        self.max_train = max_train
        self.max_dims = max_dims
        self.random_state = random_state

    def _features(self, outputs) -> np.ndarray:
        o = _rows(outputs)[:, : self.max_dims]
        parts = [o]
        for p in (self.x_, self.x_prime_):
            if p is not None:
                parts.append(o - p[: o.shape[1]])
        return np.hstack([float_bits(q, _KEPT_BITS) for q in parts])

    def fit(self, outputs0: ArrayLike | None = None, outputs1: ArrayLike | None = None, *, mechanism: object = None,
            x: ArrayLike | None = None, x_prime: ArrayLike | None = None) -> "BitPatternAttack":
        """Fit the Bernoulli naive Bayes on the kept bits of o, o − x and o − x′ (Laplace-smoothed per-bit rates).

        Parameters
        ----------
        outputs0, outputs1 : array-like of shape (n, ...) or None
            Training releases under x and under x′.
        mechanism : object, optional
            The audited mechanism.
        x, x_prime : array-like or None
            The audited pair.

        Returns
        -------
        BitPatternAttack
            self, fitted.

        Raises
        ------
        InvalidParameterError
            Without training releases, or for invalid ``max_train``/``max_dims``.
        """
        if outputs0 is None or outputs1 is None:
            raise InvalidParameterError("bit-pattern needs training outputs under x and x_prime")
        check_int("max_train", self.max_train)
        check_int("max_dims", self.max_dims)
        width = _rows(outputs0[:1]).shape[1]
        self.x_ = self.x_prime_ = None
        if x is not None and x_prime is not None and np.size(x) == width == np.size(x_prime):
            self.x_ = np.asarray(x, dtype=float).ravel()
            self.x_prime_ = np.asarray(x_prime, dtype=float).ravel()
        rng = np.random.default_rng(self.random_state)
        o0, o1 = _rows(outputs0), _rows(outputs1)
        f0 = self._features(o0[rng.permutation(o0.shape[0])[: self.max_train]])
        f1 = self._features(o1[rng.permutation(o1.shape[0])[: self.max_train]])
        # Bernoulli naive Bayes with Laplace smoothing: a per-bit log likelihood ratio, summed.
        p0 = (f0.sum(axis=0) + 1.0) / (f0.shape[0] + 2.0)
        p1 = (f1.sum(axis=0) + 1.0) / (f1.shape[0] + 2.0)
        self.weight_ = (np.log(p1) - np.log(p0)) - (np.log1p(-p1) - np.log1p(-p0))
        self.offset_ = float(np.sum(np.log1p(-p1) - np.log1p(-p0)))
        # Per field of _TABLE_FIELDS, per encoded double (rows): the summed weights of every bit pattern.
        w = self.weight_.reshape(-1, _KEPT_BITS.size)
        self.tables_ = [np.stack([_bit_table(width) @ row[lo:lo + width] for row in w]) for _, width, lo in _TABLE_FIELDS]
        return self

    def score(self, outputs: ArrayLike) -> np.ndarray:
        """The naive-Bayes log-odds of x′: the offset plus the summed per-bit weights of each release.

        Parameters
        ----------
        outputs : array-like of shape (n, ...)
            Releases, flattened to rows.

        Returns
        -------
        ndarray of shape (n,)
        """
        # Naive Bayes scores are sums of per-bit weights, so each double's kept bits are read as three
        # integers (12 sign/exponent bits, two 10-bit halves of the low mantissa) indexing tables of
        # summed weights: 3 gathers per double instead of 32 float features (≈ 20× faster).
        o = _rows(outputs)[:, : self.max_dims]
        inputs = [p[: o.shape[1]] for p in (self.x_, self.x_prime_) if p is not None]
        kernel = _table_sum_kernel(o.shape[0])
        if kernel is not None:
            shifts = np.vstack([np.zeros(o.shape[1]), *inputs])
            return kernel(np.ascontiguousarray(o), shifts, self.offset_, *self.tables_)
        words = np.hstack([q + 0.0 for q in [o] + [o - p for p in inputs]]).view(np.uint64)  # −0.0 folded onto 0.0
        total = np.full(o.shape[0], self.offset_)
        for j in range(words.shape[1]):  # ≤ 3·max_dims encoded doubles, not samples
            for (shift, width, _), table in zip(_TABLE_FIELDS, self.tables_):
                total += table[j, ((words[:, j] >> np.uint64(shift)) & np.uint64((1 << width) - 1)).astype(np.intp)]
        return total


#: Rows this process scores with numpy's passes before it compiles (≈ 1 s once per process, what numpy's passes
#: take for 2·10⁶ rows): from there on every bit-pattern attacker's scores come from one compiled pass, identical
#: and ≈ 20× faster.
COMPILE_AFTER_ROWS = 1 << 21

#: Rows scored with numpy's passes so far, by every bit-pattern attacker of this process.
_numpy_rows = [0]


def _table_sum_kernel(rows: int) -> Callable | None:
    """The compiled table sum for a call scoring ``rows`` rows, once compiling pays; None: numpy's passes.

    Compiling costs once per process, so the count is the process's, not one attacker's (a preset's
    audits, a search's candidates): numpy's passes until they have cost about what compiling does
    (:data:`COMPILE_AFTER_ROWS` rows), then the compiled pass. The rent-or-buy rule: at most twice the
    time of the better choice in hindsight, whatever the process goes on to score.
    """
    if not _compiled_table_sum.cache_info().currsize:
        _numpy_rows[0] += rows
        if _numpy_rows[0] <= COMPILE_AFTER_ROWS:
            return None
    return _compiled_table_sum()


@functools.cache
def _compiled_table_sum():
    """``kernel(o, shifts, offset, t12, t10a, t10b)``: :meth:`BitPatternAttack.score`'s table sums in one pass (numba).

    The same additions in the same order as the numpy passes (offset, then per encoded
    double its sign/exponent field and its two low-mantissa fields), so the scores are
    identical; one pass over the rows instead of five array passes per field (3·max_dims
    fields). None when numba is not importable.
    """
    try:
        from numba import njit
    except ImportError:  # pragma: no cover - numba is a dependency; the numpy passes give the same scores
        return None
    (s0, w0, _), (s1, w1, _), (s2, w2, _) = _TABLE_FIELDS
    m0, m1, m2 = (np.uint64((1 << w) - 1) for w in (w0, w1, w2))
    s0, s1, s2 = (np.uint64(v) for v in (s0, s1, s2))

    @njit(nogil=True)
    def table_sum(o, shifts, offset, t0, t1, t2):
        out = np.empty(o.shape[0])
        value = np.empty(1)
        bits = value.view(np.uint64)  # the bits of value[0]
        d = o.shape[1]
        for i in range(o.shape[0]):
            total = offset
            for p in range(shifts.shape[0]):  # o − 0 (o itself), o − x, o − x′
                for c in range(d):
                    value[0] = (o[i, c] - shifts[p, c]) + 0.0  # −0.0 folded onto 0.0
                    w, j = bits[0], p * d + c
                    total += t0[j, (w >> s0) & m0]
                    total += t1[j, (w >> s1) & m1]
                    total += t2[j, (w >> s2) & m2]
            out[i] = total
        return out

    return table_sum


# --- keyed count attacker ----------------------------------------------------------------------
_LATTICE_BITS = (0, 4, 8, 12, 16, 20, 24, 32, 40)
_BALL_BITS = (8, 16, 24, 32, 40)


def _frac_key(o: np.ndarray, j: int) -> np.ndarray:
    """Fractional part of o·2ʲ (exact: scaling by a power of two and ``floor`` do not round)."""
    s = o * 2.0**j
    with np.errstate(invalid="ignore"):
        return s - np.floor(s)


def _ball_key(o: np.ndarray, j: int) -> np.ndarray:
    """o rounded to the 2⁻ʲ grid: releases within 2⁻ʲ⁻¹ share a key (near-atoms)."""
    return np.round(o * 2.0**j)


def _exponent_key(o: np.ndarray) -> np.ndarray:
    """(sign, exponent, trailing zeros of the mantissa) of each coordinate, packed in one float."""
    u = np.ascontiguousarray(o + 0.0).view(np.uint64)
    exp = ((u >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64)
    sign = (u >> np.uint64(63)).astype(np.int64)
    mant = u & np.uint64((1 << 52) - 1)
    low = mant & (~mant + np.uint64(1))  # lowest set bit
    tz = np.where(mant == 0, 52, np.log2(np.maximum(low, np.uint64(1)).astype(float)).astype(np.int64))
    return (sign * 4096 + exp) * 64.0 + np.minimum(tz, 63)


def _transforms():
    out = [(f"lattice 2^-{j}", lambda o, j=j: _frac_key(o, j)) for j in _LATTICE_BITS]
    out += [(f"ball 2^-{j}", lambda o, j=j: _ball_key(o, j)) for j in _BALL_BITS]
    out.append(("exponent/trailing-zeros", _exponent_key))
    return out


def _count_table(k0: np.ndarray, k1: np.ndarray):
    """Sorted unique keys and the smoothed log ratio ln((c₁ + ½)/(c₀ + ½)) of their counts."""
    keys, inverse, counts = np.unique(np.concatenate([k0, k1]), return_inverse=True, return_counts=True)
    c1 = np.bincount(inverse[k0.size:], minlength=keys.size).astype(float)
    c0 = counts - c1
    return keys, count_log_ratio(c0, c1)


def _lookup(keys: np.ndarray, ratio: np.ndarray, k: np.ndarray) -> np.ndarray:
    if keys.size == 0:
        return np.zeros(k.size)
    idx = np.clip(np.searchsorted(keys, k), 0, keys.size - 1)
    return np.where(keys[idx] == k, ratio[idx], 0.0)


def _separation(s0: np.ndarray, s1: np.ndarray) -> float:
    """The ε̲ criterion of the audit's own threshold selection (δ = 0, c = 0.95) on held-out training rows.

    Unlike max |TPR − FPR| it rewards a rare but perfect separation (a leak of
    probability 10⁻³ is worth more than a 1 % shift of the bulk).
    """
    return select_threshold(s0, s1, s0.size, s1.size, delta=0.0, confidence=0.95, estimator="clopper-pearson",
                            n_thresholds=64).criterion


def _cross_fitted_separation(k0: np.ndarray, k1: np.ndarray) -> float:
    """Two-fold :func:`_separation` of the count ratio of keys: counts from one half, judged on the other.

    One ``unique`` serves both folds: a key's count ratio in a half is read through the
    inverse index, and a key absent from the counting half scores ln(½/½) = 0, as in
    :func:`_lookup`. A fold whose held-out rows all score 0 (keys that never repeat, as
    for a continuous release: checked first by a plain sort) has separation 0 without
    choosing a threshold.
    """
    k = np.concatenate([k0, k1])
    ordered = np.sort(k)
    if not (ordered[1:] == ordered[:-1]).any():  # no key repeats: every held-out row scores 0
        return 0.0
    inv = np.unique(k, return_inverse=True)[1].ravel()
    size = int(inv.max()) + 1
    inv0, inv1 = inv[: k0.size], inv[k0.size:]
    h0, h1 = k0.size // 2, k1.size // 2
    sep = 0.0
    for a0, a1, b0, b1 in ((slice(0, h0), slice(0, h1), slice(h0, None), slice(h1, None)),
                           (slice(h0, None), slice(h1, None), slice(0, h0), slice(0, h1))):
        ratio = count_log_ratio(np.bincount(inv0[a0], minlength=size), np.bincount(inv1[a1], minlength=size))
        s0, s1 = ratio[inv0[b0]], ratio[inv1[b1]]
        if s0.any() or s1.any():
            sep += _separation(s0, s1) / 2
    return sep


@register_attack("lattice")
class LatticeAttack(Distinguisher):
    """Plug-in count likelihood ratio on a lattice / near-atom / exponent key (see module docstring).

    The key is chosen by two-fold cross-fitting on the first ``max_key_rows`` training
    rows per hypothesis (counts from one half, the audit's own ε̲ criterion on the
    other, averaged over both ways), then the counts are refitted on up to
    ``max_train`` rows. Rows are keyed by a 64-bit hash of their per-coordinate keys.

    Parameters
    ----------
    max_train : int
        Training rows per hypothesis the final counts use.
    max_key_rows : int
        Training rows per hypothesis the choice of key uses (the choice costs ~15
        keyings, the refit one).
    """

    handles_nonfinite = True
    leak_family = "floating-point"

    def __init__(self, max_train: int = 200_000, max_key_rows: int = 50_000) -> None:
        self.max_train = max_train
        self.max_key_rows = max_key_rows

    def fit(self, outputs0: ArrayLike | None = None, outputs1: ArrayLike | None = None, *, mechanism: object = None,
            x: ArrayLike | None = None, x_prime: ArrayLike | None = None) -> "LatticeAttack":
        """Choose the key by cross-fitted separation on the first ``max_key_rows`` rows, then count it on ``max_train`` rows.

        Parameters
        ----------
        outputs0, outputs1 : array-like of shape (n, ...) or None
            Training releases under x and under x′.
        mechanism : object, optional
            The audited mechanism.
        x, x_prime : array-like or None
            The audited pair.

        Returns
        -------
        LatticeAttack
            self, fitted.

        Raises
        ------
        InvalidParameterError
            Without training releases, or for invalid ``max_train``/``max_key_rows``.
        """
        if outputs0 is None or outputs1 is None:
            raise InvalidParameterError("lattice needs training outputs under x and x_prime")
        o0 = _rows(outputs0)[: check_int("max_train", self.max_train)]
        o1 = _rows(outputs1)[: self.max_train]
        rows = check_int("max_key_rows", self.max_key_rows)
        best, best_sep = None, -1.0
        for name, fn in _transforms():  # ~15 candidate keys, each vectorised over rows
            sep = _cross_fitted_separation(row_hashes(fn(o0[:rows])), row_hashes(fn(o1[:rows])))
            if sep > best_sep:
                best, best_sep = (name, fn), sep
        self.key_name_, self.key_ = best
        self.keys_, self.log_ratio_ = _count_table(row_hashes(self.key_(o0)), row_hashes(self.key_(o1)))
        return self

    def score(self, outputs: ArrayLike) -> np.ndarray:
        """The smoothed count log ratio of each release's key (0 for keys never seen in training).

        Parameters
        ----------
        outputs : array-like of shape (n, ...)
            Releases, flattened to rows.

        Returns
        -------
        ndarray of shape (n,)
        """
        return _lookup(self.keys_, self.log_ratio_, row_hashes(self.key_(_rows(outputs))))


__all__ = ["BitPatternAttack", "LatticeAttack", "float_bits"]
