"""Attackers for outputs with many coordinates, each carrying little signal, and for mixed outputs.

Three distinguishers, all fitted on the training releases and defined for outputs of any
dimension (unlike ``"projection"``, whose pair direction needs outputs in the input space):

``"whitened-projection"``
    ⟨o, Σ̂⁻¹ Δ⟩, the Fisher linear discriminant over *all* output coordinates: Σ̂ the pooled
    training covariance (with a small ridge), Δ the pair's direction x′ − x when outputs live
    in the input space, else the difference of the training means. For a Gaussian location
    family it is the likelihood ratio; for weak signals spread over many coordinates it adds
    up evidence that no single coordinate shows.
``"coordinate-llr"``
    Σⱼ ℓ̂ⱼ(oⱼ), a naive-Bayes sum of per-coordinate log-likelihood ratios estimated from
    counts. Each coordinate is split into its *atoms* (values that repeat: sentinels such as
    "aborted" or "false", NaN and ±inf, integer counts, categorical indices), each scored by
    the exact frequencies of that value under x and x′, and its continuous remainder, cut at
    pooled quantiles into ``bins`` bins. The sum is the exact likelihood ratio when the
    coordinates are independent, whatever mix of discrete and continuous values each one
    takes; sentinels no longer drag a continuous model (and a continuous model no longer
    blurs atoms).
``"whitened-coordinate-llr"``
    ``"coordinate-llr"`` on the decorrelated coordinates L⁻¹(o − c) (L L′ = Σ̂): for releases that
    mix independent noises linearly (prefix sums), each coordinate is again one noise.

All are generic (black-box): they read releases only.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import norm

from privaudit.mechanisms.validation import InvalidParameterError, check_int

from .distinguishers import _MULT, Distinguisher, _pair_difference, _rows
from .registry import register_attack


def _training_rows(outputs0, outputs1, name: str) -> tuple[np.ndarray, np.ndarray]:
    if outputs0 is None or outputs1 is None:
        raise InvalidParameterError(f"{name} needs training outputs under x and x_prime")
    r0, r1 = _rows(outputs0), _rows(outputs1)
    if r0.shape[1] != r1.shape[1]:
        raise InvalidParameterError(f"{name}: training outputs have {r0.shape[1]} and {r1.shape[1]} coordinates")
    return r0, r1


#: Family-wise level of the check that the training means moved by x′ − x (false rejections cost only noise).
MEAN_SHIFT_LEVEL = 1e-6


def _is_mean_shift(pair: np.ndarray, shift: np.ndarray, var: np.ndarray, n0: int, n1: int) -> bool:
    """Whether the training means' shift is consistent with x′ − x, coordinate by coordinate.

    x′ − x is the mean shift of a location family only; a release that maps the inputs (prefix sums,
    a sort) moves its mean otherwise, and projecting on x′ − x then throws the signal away. Each
    coordinate's z-score uses the pooled variance; the check is Bonferroni at :data:`MEAN_SHIFT_LEVEL`.
    """
    se = np.sqrt(np.maximum(var, 0.0) * (1.0 / n0 + 1.0 / n1))
    limit = float(norm.isf(MEAN_SHIFT_LEVEL / (2 * max(pair.size, 1))))
    off = np.abs(shift - pair)
    return bool(np.all(np.where(se > 0, off <= limit * se, off == 0)))


@register_attack("whitened-projection")
class WhitenedProjectionAttack(Distinguisher):
    """Fisher linear discriminant ⟨o, Σ̂⁻¹Δ⟩ over every output coordinate.

    Parameters
    ----------
    ridge : float
        Added to the diagonal of Σ̂ as a fraction of its mean variance (keeps constant or
        collinear coordinates, e.g. sentinels, from making Σ̂ singular).
    use_pair : bool
        Use Δ = x′ − x when the outputs have the input's size and the training means moved by
        it (a location family's mean shift, known exactly, where the training means would be
        noisy for weak signals); else Δ is the difference of the training means (e.g. prefix
        sums of noisy answers, whose means move by the prefix sums of x′ − x).
    max_train : int
        Training rows per hypothesis used for Σ̂ and the means.
    """

    def __init__(self, ridge: float = 1e-6, use_pair: bool = True, max_train: int = 200_000) -> None:
        self.ridge = ridge
        self.use_pair = use_pair
        self.max_train = max_train

    def fit(self, outputs0: ArrayLike | None = None, outputs1: ArrayLike | None = None, *, mechanism: object = None,
            x: ArrayLike | None = None, x_prime: ArrayLike | None = None) -> "WhitenedProjectionAttack":
        """Estimate Σ̂ (pooled within-hypothesis covariance) and Δ; store w = Σ̂⁻¹Δ.

        Parameters
        ----------
        outputs0, outputs1 : array-like of shape (n, ...)
            Training releases under x and under x′ (non-finite values were zeroed by the audit).
        mechanism : object, optional
            Unused.
        x, x_prime : array-like or None
            The audited pair (its difference is Δ when the outputs have its size).

        Returns
        -------
        WhitenedProjectionAttack
            self, fitted.

        Raises
        ------
        InvalidParameterError
            Without training releases, or with a negative ``ridge``.
        """
        r0, r1 = _whitening_rows(self, outputs0, outputs1, "whitened-projection")
        mu0, mu1, cov = _pooled_moments(r0, r1)
        pair = _pair_difference(x, x_prime, r0.shape[1]) if self.use_pair else None
        pair_fits = pair is not None and _is_mean_shift(pair, mu1 - mu0, np.diag(cov), r0.shape[0], r1.shape[0])
        delta = pair if pair_fits else mu1 - mu0
        self.direction_ = np.linalg.lstsq(_add_ridge(cov, self.ridge), delta, rcond=None)[0]
        self.centre_ = 0.5 * (mu0 + mu1)
        return self

    def score(self, outputs: ArrayLike) -> np.ndarray:
        """⟨o − (μ̂₀ + μ̂₁)/2, Σ̂⁻¹Δ⟩ per release.

        Parameters
        ----------
        outputs : array-like of shape (n, ...)
            Releases with the training coordinates.

        Returns
        -------
        ndarray of shape (n,)

        Raises
        ------
        InvalidParameterError
            When the releases do not have the training's number of coordinates.
        """
        return _centred_rows(outputs, self.centre_, "whitened-projection") @ self.direction_


#: Up to this many atoms a coordinate's values are compared with each atom; beyond, searched among their keys.
_FEW_ATOMS = 8


def _bit_keys(values: np.ndarray) -> np.ndarray:
    """Exact bit patterns (−0.0 folded onto 0.0, every NaN onto one), so NaN and ±inf are values like any other."""
    v = np.ascontiguousarray(np.where(np.isnan(values), np.nan, values + 0.0), dtype=float)
    return v.view(np.uint64)


#: Buckets of the hash that screens a coordinate's values for atoms (:func:`_frequent_keys`).
_SCREEN_BITS = 16


def _frequent_keys(keys: np.ndarray, min_count: int) -> np.ndarray:
    """The distinct keys occurring at least ``min_count`` times, sorted: what ``np.unique``'s counts give, without sorting them all.

    A key that occurs ``min_count`` times fills its hash bucket at least as much, so only keys in
    buckets that full can qualify, and they alone are counted exactly. A continuous coordinate
    (all keys distinct, a handful per bucket) has none and costs two passes instead of a sort.
    """
    mixed = keys * _MULT  # Fibonacci hashing (row_hashes' multiplier): the top bits depend on every bit of the key
    bucket = (mixed >> np.uint64(64 - _SCREEN_BITS)).astype(np.intp)
    full = np.bincount(bucket, minlength=1 << _SCREEN_BITS) >= min_count
    if not full.any():
        return keys[:0]
    candidates, counts = np.unique(keys[full[bucket]], return_counts=True)
    return candidates[counts >= min_count]


def _bin_index(edges: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``np.searchsorted(edges, values, side="right")`` for finite values (sorted ``edges``): one comparison per edge when few."""
    if edges.size > _FEW_ATOMS:
        return np.searchsorted(edges, values, side="right")
    index = np.zeros(values.shape, dtype=np.intp)
    for edge in edges:
        index += edge <= values
    return index


@register_attack("coordinate-llr")
class CoordinateLLRAttack(Distinguisher):
    """Sum over coordinates of per-coordinate log-likelihood ratios, atoms apart from the continuous part.

    Parameters
    ----------
    bins : int
        Quantile bins of each coordinate's continuous (non-atom) values. Few bins suit weak
        signals (each bin's ratio is estimated from more counts); 1 keeps the atoms only.
    atom_fraction : float
        A value is an atom of its coordinate when it makes up at least this fraction of the
        pooled training values (and at least 2 of them); 0 < atom_fraction < 1.
    """

    handles_nonfinite = True

    def __init__(self, bins: int = 2, atom_fraction: float = 1e-3) -> None:
        self.bins = bins
        self.atom_fraction = atom_fraction

    def fit(self, outputs0: ArrayLike | None = None, outputs1: ArrayLike | None = None, *, mechanism: object = None,
            x: ArrayLike | None = None, x_prime: ArrayLike | None = None) -> "CoordinateLLRAttack":
        """Per coordinate: the atoms, the bin edges of the rest, and the smoothed log ratio of each cell's counts.

        Parameters
        ----------
        outputs0, outputs1 : array-like of shape (n, ...)
            Training releases under x and under x′ (non-finite values are kept: they are atoms).
        mechanism, x, x_prime : optional
            Unused (black-box).

        Returns
        -------
        CoordinateLLRAttack
            self, fitted.

        Raises
        ------
        InvalidParameterError
            Without training releases, or with ``bins`` < 1 or ``atom_fraction`` outside (0, 1).
        """
        check_int("bins", self.bins, minimum=1)
        if not 0 < self.atom_fraction < 1:
            raise InvalidParameterError(f"atom_fraction must be in (0, 1), got atom_fraction={self.atom_fraction!r}")
        r0, r1 = _training_rows(outputs0, outputs1, "coordinate-llr")
        n0, n1 = r0.shape[0], r1.shape[0]
        self.atoms_, self.edges_, self.tables_ = [], [], []
        for j in range(r0.shape[1]):  # loop over output coordinates; each step is vectorised over releases
            col = np.concatenate([r0[:, j], r1[:, j]])
            keys = _bit_keys(col)
            atoms = _frequent_keys(keys, max(2, math.ceil(self.atom_fraction * col.size)))
            rest = col[(~np.isin(keys, atoms) & np.isfinite(col)) if atoms.size else np.isfinite(col)]
            edges = np.unique(np.quantile(rest, np.linspace(0, 1, self.bins + 1)[1:-1])) if rest.size else np.empty(0)
            self.atoms_.append(atoms)
            self.edges_.append(edges)
            cells = self._cells(col, atoms, edges)
            size = atoms.size + edges.size + 2  # atoms, continuous bins, other non-finite values
            c0 = np.bincount(cells[:n0], minlength=size).astype(float)
            c1 = np.bincount(cells[n0:], minlength=size).astype(float)
            self.tables_.append(np.log((c1 + 0.5) / n1) - np.log((c0 + 0.5) / n0))
        return self

    @staticmethod
    def _cells(col: np.ndarray, atoms: np.ndarray, edges: np.ndarray) -> np.ndarray:
        """Cell index of each value: its atom's index, else A + its bin, else the last cell (a non-finite non-atom)."""
        cells = atoms.size + _bin_index(edges, col)
        finite = np.isfinite(col)
        if not finite.all():
            cells = np.where(finite, cells, atoms.size + edges.size + 1)
        if atoms.size > _FEW_ATOMS:  # many atoms (a discrete coordinate): one search among their bit keys
            keys = _bit_keys(col)
            idx = np.clip(np.searchsorted(atoms, keys), 0, atoms.size - 1)
            return np.where(atoms[idx] == keys, idx, cells)
        # A few atoms (sentinels): one comparison each, on the values. Float equality is bit equality up to
        # the two foldings of _bit_keys (−0.0 == 0.0; NaN, which equals nothing, is matched by isnan).
        for k, value in enumerate(atoms.view(float)):
            cells[np.isnan(col) if np.isnan(value) else col == value] = k
        return cells

    def score(self, outputs: ArrayLike) -> np.ndarray:
        """Σⱼ ℓ̂ⱼ(oⱼ) per release.

        Parameters
        ----------
        outputs : array-like of shape (n, ...)
            Releases with the training coordinates.

        Returns
        -------
        ndarray of shape (n,)

        Raises
        ------
        InvalidParameterError
            When the releases do not have the training's number of coordinates.
        """
        rows = _rows(outputs)
        if rows.shape[1] != len(self.tables_):
            raise InvalidParameterError(f"coordinate-llr was fitted on {len(self.tables_)} coordinates, "
                                        f"got outputs with {rows.shape[1]}")
        total = np.zeros(rows.shape[0])
        for j, (atoms, edges, table) in enumerate(zip(self.atoms_, self.edges_, self.tables_)):
            total += table[self._cells(rows[:, j], atoms, edges)]
        return total


@register_attack("whitened-coordinate-llr")
class WhitenedCoordinateLLRAttack(CoordinateLLRAttack):
    """``"coordinate-llr"`` on decorrelated outputs: the coordinates of L⁻¹(o − c), L L′ = Σ̂.

    Σ̂ is the pooled within-hypothesis training covariance (with the ridge of
    :class:`WhitenedProjectionAttack`), L its Cholesky factor and c the midpoint of the two training
    means. A release that mixes independent noises linearly, such as the prefix sums of noisy answers,
    has coordinates whose laws share each noise; L⁻¹ undoes a lower-triangular mixing exactly (for prefix
    sums L = A·D^½, A the matrix of ones below the diagonal, so each decorrelated coordinate is one noisy
    answer again), and the sum of per-coordinate log-likelihood ratios is near the exact one. On the bank's
    PrefixSum (exact ε 1.0) at 10⁶, seed 0, it certifies 0.78 alone, where the Fisher projection certifies
    0.515: the projection sums the answers, while the per-coordinate ratios count how many of them moved.
    Non-finite outputs are zeroed (atoms and sentinels are ``"coordinate-llr"``'s: the mixing blurs them).

    Parameters
    ----------
    bins, atom_fraction : int, float
        As in :class:`CoordinateLLRAttack`, on the decorrelated coordinates.
    ridge : float
        Added to the diagonal of Σ̂ as a fraction of its mean variance (1.0 when every variance is 0).
    max_train : int
        Training rows per hypothesis used for Σ̂, the means and the per-coordinate tables.
    """

    handles_nonfinite = False

    def __init__(self, bins: int = 2, atom_fraction: float = 1e-3, ridge: float = 1e-6,
                 max_train: int = 200_000) -> None:
        super().__init__(bins, atom_fraction)
        self.ridge = ridge
        self.max_train = max_train

    def fit(self, outputs0: ArrayLike | None = None, outputs1: ArrayLike | None = None, *, mechanism: object = None,
            x: ArrayLike | None = None, x_prime: ArrayLike | None = None) -> "WhitenedCoordinateLLRAttack":
        """Estimate c and L from the training releases, then fit the per-coordinate tables on L⁻¹(o − c).

        Parameters
        ----------
        outputs0, outputs1 : array-like of shape (n, ...)
            Training releases under x and under x′ (non-finite values were zeroed by the audit).
        mechanism, x, x_prime : optional
            Unused (black-box).

        Returns
        -------
        WhitenedCoordinateLLRAttack
            self, fitted.

        Raises
        ------
        InvalidParameterError
            Without training releases, or with a negative ``ridge`` or bad ``bins``/``atom_fraction``.
        """
        r0, r1 = _whitening_rows(self, outputs0, outputs1, "whitened-coordinate-llr")
        r0, r1 = (np.where(np.isfinite(r), r, 0.0) for r in (r0, r1))
        mu0, mu1, cov = _pooled_moments(r0, r1)
        # L⁻¹ once (k × k); each batch of releases is then one product, (o − c) L⁻ᵀ.
        self.transform_ = np.linalg.inv(np.linalg.cholesky(_add_ridge(cov, self.ridge))).T
        self.centre_ = 0.5 * (mu0 + mu1)
        return super().fit((r0 - self.centre_) @ self.transform_, (r1 - self.centre_) @ self.transform_)

    def score(self, outputs: ArrayLike) -> np.ndarray:
        """Σⱼ ℓ̂ⱼ of the decorrelated coordinates of each release.

        Parameters
        ----------
        outputs : array-like of shape (n, ...)
            Releases with the training coordinates.

        Returns
        -------
        ndarray of shape (n,)

        Raises
        ------
        InvalidParameterError
            When the releases do not have the training's number of coordinates.
        """
        return super().score(_centred_rows(outputs, self.centre_, "whitened-coordinate-llr") @ self.transform_)


def _whitening_rows(attacker, outputs0, outputs1, name: str) -> tuple[np.ndarray, np.ndarray]:
    """The training rows of a whitened attacker (at most ``max_train`` each), after checking its parameters."""
    check_int("max_train", attacker.max_train, minimum=2)
    if not (np.isfinite(attacker.ridge) and attacker.ridge >= 0):
        raise InvalidParameterError(f"ridge must be a finite number >= 0, got ridge={attacker.ridge!r}")
    r0, r1 = _training_rows(outputs0, outputs1, name)
    return r0[: attacker.max_train], r1[: attacker.max_train]


def _pooled_moments(r0: np.ndarray, r1: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The two means and the pooled within-hypothesis covariance Σ̂ (divisor n₀ + n₁ − 2)."""
    mu0, mu1 = r0.mean(axis=0), r1.mean(axis=0)
    c0, c1 = r0 - mu0, r1 - mu1
    return mu0, mu1, (c0.T @ c0 + c1.T @ c1) / max(r0.shape[0] + r1.shape[0] - 2, 1)


def _add_ridge(cov: np.ndarray, ridge: float) -> np.ndarray:
    """Σ̂ + ridge·(tr Σ̂ / k)·I in place (+ I when Σ̂ is 0): invertible, scale-free."""
    k = cov.shape[0]
    scale = float(np.trace(cov)) / k if k else 0.0
    cov[np.diag_indices(k)] += ridge * scale if scale > 0 else 1.0
    return cov


def _centred_rows(outputs: ArrayLike, centre: np.ndarray, name: str) -> np.ndarray:
    """Releases as rows minus the training centre, non-finite values at the centre; refuses another dimension."""
    rows = _rows(outputs)
    if rows.shape[1] != centre.size:
        raise InvalidParameterError(f"{name} was fitted on {centre.size} coordinates, got outputs with {rows.shape[1]}")
    centred = rows - centre
    if not np.isfinite(centred).all():  # one pass in the usual all-finite case
        centred[~np.isfinite(rows)] = 0.0
    return centred


__all__ = ["CoordinateLLRAttack", "WhitenedCoordinateLLRAttack", "WhitenedProjectionAttack"]
