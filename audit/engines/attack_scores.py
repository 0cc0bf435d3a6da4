"""Scores of fitted attackers on blocks of releases: computed in chunks, and once per block.

A trade-off audit scores each attacker of its suite on the ranking prefix of the selection
block, and the certified ones again on the whole selection block and on the evaluation block
(:mod:`privaudit.audit.engines.tradeoff`). :class:`ScoreBook` holds the releases and every
score already computed, so that a row is scored at most once per attacker: the ranking
prefix is reused when the selection block is scored.

Scores are computed :data:`CHUNK_ELEMENTS` values of the release matrix at a time. An
attacker's temporaries (a hidden layer, bit fields, per-column hashes, the copies of the
rows) are then a few megabytes, reused from chunk to chunk, instead of arrays the size of
the whole block that must be allocated, paged in and freed for every operation; measured at
n = 10⁶, d = 10 this makes scoring 2–10× faster (the MLP's hidden layer alone is
n × 32 doubles). It relies on what the distinguisher protocol already requires for the
audit to be valid: a release's score depends on that release and the fitted attacker only
(the certified counts are then sums of independent indicators), never on the other rows of
the batch, so scoring a block in pieces returns the same scores.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any

import numpy as np

from privaudit.attacks.protocol import distinguisher_traits
from privaudit.mechanisms.validation import InvalidInputError

#: Values of the (rows × width) release matrix scored per call of ``attacker.score`` (4 MiB of
#: float64): large enough that the per-call overhead (a few Python calls) is negligible, small
#: enough that the temporaries stay in cache and are reused by the allocator.
CHUNK_ELEMENTS = 1 << 19


@functools.cache
def _thread_pools() -> Any:
    """The BLAS thread pools of the loaded libraries (inspected once: later limits cost microseconds)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def single_threaded_blas() -> contextlib.AbstractContextManager:
    """A context in which BLAS runs on one thread: for products of release rows with a few columns.

    An attacker's products have a few to a few hundred columns (a projection, a hidden layer
    of 32 units, a logistic regression's coefficients): too little work per call for threads
    to pay for their start-up, and on a loaded machine waiting for them costs more than the
    product (measured at n = 10⁶, d = 10 on 2 busy cores: the projection's and the closed-form
    ratio's scores 2× faster). Products of a row with a vector are the same bit for bit.

    Returns
    -------
    context manager
        Restores the previous limits on exit.
    """
    return _thread_pools().limit(limits=1, user_api="blas")


def chunk_rows(width: int) -> int:
    """Rows per chunk for releases of ``width`` values each.

    Parameters
    ----------
    width : int
        Values per release (the width of the release matrix).

    Returns
    -------
    int
        At least 1024 rows, so that very wide releases still amortise the per-call cost.
    """
    return max(1024, CHUNK_ELEMENTS // max(int(width), 1))


def safe_scores(attacker: Any, rows: np.ndarray, shape: tuple, *, all_finite: bool = False) -> np.ndarray:
    """Scores of ``rows`` with non-finite outputs made harmless, computed chunk by chunk.

    Attackers that cannot read NaN/inf (``handles_nonfinite`` False) see 0 there; non-finite
    scores are mapped to ±1e300 (NaN to 0) so that every score is a real number.

    Parameters
    ----------
    attacker : Distinguisher
        A fitted attacker.
    rows : ndarray of shape (m, k)
        Releases as float rows.
    shape : tuple
        The shape the attacker sees a batch in (``(-1, *x.shape)`` or ``(-1, k)``).
    all_finite : bool
        The caller knows every value of ``rows`` is finite: no chunk is checked (the check
        is a pass over the chunk per attacker, 0.15–0.5 s per 10⁸ values).

    Returns
    -------
    ndarray of float, shape (m,)
    """
    m = rows.shape[0]
    out = np.empty(m)
    zero_nonfinite = not (all_finite or distinguisher_traits(attacker).handles_nonfinite)
    step = chunk_rows(rows.shape[1] if rows.ndim > 1 else 1)
    with single_threaded_blas():
        for start in range(0, m, step):  # chunks of rows, each scored vectorised (see the module docstring)
            block = rows[start:start + step]
            if zero_nonfinite and not np.isfinite(block).all():
                block = np.where(np.isfinite(block), block, 0.0)
            s = np.asarray(attacker.score(block.reshape(shape)), dtype=float).ravel()
            if s.size != block.shape[0]:
                raise InvalidInputError(f"{type(attacker).__name__}.score returned {s.size} scores for "
                                        f"{block.shape[0]} releases")
            out[start:start + block.shape[0]] = s
        if m == 0:  # an empty block is still scored once, so that attackers see the protocol's shapes
            out = np.asarray(attacker.score(rows.reshape(shape)), dtype=float).ravel()
    if not np.isfinite(out).all():  # in place, and only when needed: a copying nan_to_num costs 4 passes per call
        np.nan_to_num(out, copy=False, nan=0.0, posinf=1e300, neginf=-1e300)
    return out


class ScoreBook:
    """The releases of an audit and the scores already computed on them, per attacker and input.

    Parameters
    ----------
    out0, out1 : ndarray of shape (n, k)
        Releases under x and under x′.
    shape : tuple
        The shape the attackers see a batch in.
    finite : (bool, bool), optional
        Whether every release under x, and under x′, is finite, when the caller knows.
    """

    def __init__(self, out0: np.ndarray, out1: np.ndarray, shape: tuple,
                 finite: tuple[bool, bool] | None = None) -> None:
        self._out = (out0, out1)
        self._shape = shape
        # side → every release finite: as known by the caller, else one pass when first needed
        self._finite: dict[int, bool] = {} if finite is None else dict(enumerate(finite))
        #: (attacker index, side) → (start row, scores of rows start … start + len − 1)
        self._done: dict[tuple[int, int], tuple[int, np.ndarray]] = {}

    def scores(self, index: int, attacker: Any, side: int, start: int, stop: int) -> np.ndarray:
        """Scores of releases ``start … stop − 1`` under input ``side`` (0: x, 1: x′), each computed once.

        A block that extends one scored before from the same start reuses its scores and
        scores only the rest.

        Parameters
        ----------
        index : int
            The attacker's index in the suite (the key of its scores).
        attacker : Distinguisher
            The fitted attacker.
        side : {0, 1}
            Releases under x (0) or under x′ (1).
        start, stop : int
            The block of rows.

        Returns
        -------
        ndarray of float, shape (stop − start,)
        """
        key = (index, side)
        have = self._done.get(key)
        if have is not None and have[0] == start and have[1].size >= stop - start:
            return have[1][: stop - start]
        known = have[1] if have is not None and have[0] == start else np.empty(0)
        if side not in self._finite:
            self._finite[side] = bool(np.isfinite(self._out[side]).all())
        rest = safe_scores(attacker, self._out[side][start + known.size:stop], self._shape,
                           all_finite=self._finite[side])
        s = np.concatenate([known, rest]) if known.size else rest
        self._done[key] = (start, s)
        return s


__all__ = ["CHUNK_ELEMENTS", "ScoreBook", "chunk_rows", "safe_scores", "single_threaded_blas"]
