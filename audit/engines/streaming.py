"""Streamed certification: the evaluation releases of a trade-off audit drawn, scored and counted in chunks.

Everything a trade-off audit does after the selection stage needs the evaluation releases only
through *counts*: how many scores under x exceed a threshold fixed on the selection split, how
many under x′ do not (:func:`privaudit.audit.stats.epsilon_bounds.bound_from_counts`). The
streamed path (:func:`privaudit.audit.engines.tradeoff.certify_streamed`) therefore never holds
the evaluation split: it draws it in blocks, scores each block with the certified attackers,
adds the block's counts at a fixed grid of thresholds, and drops it. Peak memory is that of
one block (and of the capped train and selection splits), whatever ``n``.

Draws. Block ``b`` (releases ``b·STREAM_BLOCK … (b + 1)·STREAM_BLOCK − 1`` of the evaluation
split, the last one shorter) of the releases under input ``side`` is
``mechanism.sample(x, m, keyed_rng(seed_side, b))``, where ``seed_side`` is the audit's
release stream of that input (the root seed's child 0 for x, 1 for x′). A block's releases
depend on (seed, side, b) only, so the counts, and every certified number, are the same
whatever the chunk size (a chunk is a whole number of blocks: the unit of work and of
progress) and whatever the number of workers (chunks' counts are integers, added exactly in
any order).

Why not the in-memory draws. The in-memory path draws all ``n`` releases of an input in one
call of ``sample``; a call per block is a different sequence of random numbers, so the two
paths cannot give the same numbers at one seed unless the evaluation split of the in-memory
path were drawn in keyed blocks too, which would change every committed report. The engine
therefore streams only where the in-memory path does not fit (:func:`stream_needed`: the
releases of both inputs above :data:`STREAM_BYTES`; no shipped preset is near it) or when
asked (``chunk_size``). Where both run on the *same* releases they are comparable, and equal:
the same tests (:func:`~privaudit.audit.stats.epsilon_bounds.plan_test` on the same selection
scores) counted on the same evaluation scores give the same integers and the same bound
(``tests/test_streaming.py`` feeds the streamed counter the in-memory releases). The train and
selection splits are drawn as in memory, in one call each for x and x′ of their ``n_train +
n_select`` releases, so for a mechanism whose draws are prefix-stable (a draw of k releases is
the first k of a draw of n, e.g. the Gaussian mechanism) the streamed audit fits, ranks and
chooses exactly what the in-memory one does.

The curve. The in-memory curve's vertices are at order statistics of the evaluation scores,
which a stream cannot know in advance. The streamed curve's vertices are the exact evaluation
(FPR, FNR) of the tests at thresholds fixed on the selection split: the in-memory rank grid of
the selection scores (:data:`CURVE_POINTS` points, both tails log-spaced), the chosen tests'
thresholds and the Bonferroni candidates. Each vertex is a point of the full empirical curve
of the same releases; the DKW band is computed from them as in memory (the band of the
threshold tests at those thresholds).
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from privaudit.mechanisms.randomness import keyed_rng
from privaudit.mechanisms.validation import InvalidInputError, InvalidParameterError

from privaudit.audit.engines.attack_scores import safe_scores

#: Releases per input drawn from one keyed generator: the unit of the streamed draws. Fixed, so
#: that the draws, hence the certified numbers, do not depend on the chunk size.
STREAM_BLOCK = 50_000
#: The releases of both inputs of an audit (n × width × 8 bytes each) above which the audit is
#: streamed by default: 1 GiB, i.e. n > 6.7·10⁶ releases of 10 values.
STREAM_BYTES = 1 << 30
#: Blocks per chunk by default (10⁶ releases per input): the unit of work and of progress.
DEFAULT_CHUNK_BLOCKS = 20
#: Approximate vertices of the streamed curve from the selection split's rank grid.
CURVE_POINTS = 1024


def check_chunk_size(chunk_size: Any) -> int:
    """``chunk_size`` as an int: a positive multiple of :data:`STREAM_BLOCK` releases per input.

    Parameters
    ----------
    chunk_size : int
        Releases per input in one chunk of the streamed evaluation split.

    Returns
    -------
    int

    Raises
    ------
    InvalidParameterError
        Not an integer, not positive, or not a whole number of blocks (the draws are keyed per
        block of :data:`STREAM_BLOCK`; a chunk cut inside a block would change them).
    """
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int | np.integer):
        raise InvalidParameterError(f"chunk_size must be a positive multiple of {STREAM_BLOCK} (releases per input "
                                    f"per chunk), got chunk_size={chunk_size!r} ({type(chunk_size).__name__})")
    chunk_size = int(chunk_size)
    if chunk_size <= 0 or chunk_size % STREAM_BLOCK:
        raise InvalidParameterError(f"chunk_size must be a positive multiple of {STREAM_BLOCK} (releases per input "
                                    f"per chunk; the draws are keyed per block of {STREAM_BLOCK}), "
                                    f"got chunk_size={chunk_size}")
    return chunk_size


def stream_needed(n: int, x: Any) -> bool:
    """Whether the releases of an audit of ``n`` per input would exceed :data:`STREAM_BYTES` in memory.

    The width of a release is taken to be the input's size (known before drawing).

    Parameters
    ----------
    n : int
        Releases per input.
    x : array-like
        The audited input.

    Returns
    -------
    bool
    """
    try:
        width = max(int(np.size(np.asarray(x, dtype=float))), 1)
    except (TypeError, ValueError):
        width = 1
    return 2 * n * width * 8 > STREAM_BYTES


def progress_enabled(progress: bool | None) -> bool:
    """``progress``, or when None whether standard error is a terminal.

    Parameters
    ----------
    progress : bool or None
        The caller's choice.

    Returns
    -------
    bool
    """
    if progress is None:
        try:
            return bool(sys.stderr.isatty())
        except (AttributeError, ValueError):
            return False
    return bool(progress)


def release_rows(out: Any, m: int, which: str, width: int) -> tuple[np.ndarray, int]:
    """A block's releases as float (m, width) rows padded with NaN, and its rows with a NaN or ±inf before padding.

    Parameters
    ----------
    out : array-like
        What ``mechanism.sample`` returned.
    m : int
        Releases asked for.
    which : {"x", "x_prime"}
        The input (for the messages).
    width : int
        Values per release of the selection split.

    Returns
    -------
    rows : ndarray of shape (m, width)
    nonfinite : int

    Raises
    ------
    InvalidInputError
        Not numbers, not ``m`` releases, or wider than the selection split's releases.
    """
    try:
        a = np.asarray(out, dtype=float)
    except (TypeError, ValueError) as err:
        raise InvalidInputError(f"mechanism.sample({which}, n) must return numbers; got {type(out).__name__}") from err
    if a.ndim == 0 or a.shape[0] != m:
        raise InvalidInputError(f"mechanism.sample({which}, n={m}) must return n releases (leading axis n), "
                                f"got shape {a.shape}")
    a = a.reshape(m, -1)
    if a.shape[1] > width:
        raise InvalidInputError(f"mechanism.sample({which}, n={m}) returned releases of {a.shape[1]} values, wider "
                                f"than the {width} of the selection split: the streamed audit needs one width")
    finite = np.isfinite(a)
    nonfinite = 0 if finite.all() else int(np.count_nonzero(~finite.all(axis=1)))
    if a.shape[1] < width:
        a = np.hstack([a, np.full((m, width - a.shape[1]), np.nan)])
    return a, nonfinite


@dataclasses.dataclass(frozen=True)
class StreamPlan:
    """What every chunk of a streamed evaluation split needs (picklable: sent to workers as is).

    Attributes
    ----------
    mechanism, x, x_prime
        The audited mechanism and the pair.
    seeds : (SeedSequence, SeedSequence)
        The release streams of x and x′; block b of input ``side`` is drawn from
        ``keyed_rng(seeds[side], b)``.
    n_eval : int
        Evaluation releases per input.
    width : int
        Values per (padded) release.
    shape : tuple
        The shape the attackers see a batch in.
    attackers : tuple
        The fitted attackers to count.
    grids : tuple of ndarray
        Each attacker's sorted, distinct thresholds.
    chunk_size : int
        Releases per input per chunk (a multiple of :data:`STREAM_BLOCK`).
    padded : (bool, bool)
        Whether the releases under x, and under x′, are narrower than ``width`` (padded with NaN).
    """

    mechanism: Any
    x: Any
    x_prime: Any
    seeds: tuple
    n_eval: int
    width: int
    shape: tuple
    attackers: tuple
    grids: tuple
    chunk_size: int
    padded: tuple = (False, False)

    @property
    def n_chunks(self) -> int:
        """Chunks of the evaluation split."""
        return math.ceil(self.n_eval / self.chunk_size)

    def draw_block(self, side: int, block: int) -> tuple[np.ndarray, int]:
        """Releases of block ``block`` of the evaluation split under input ``side`` (0: x, 1: x′), and its non-finite rows.

        Parameters
        ----------
        side : {0, 1}
            The input.
        block : int
            The block's index.

        Returns
        -------
        rows : ndarray
        nonfinite : int
        """
        start = block * STREAM_BLOCK
        m = min(STREAM_BLOCK, self.n_eval - start)
        x = self.x if side == 0 else self.x_prime
        out = self.mechanism.sample(x, m, keyed_rng(self.seeds[side], block))
        return release_rows(out, m, "x" if side == 0 else "x_prime", self.width)


@dataclasses.dataclass
class GridCounts:
    """Counts of scores at a sorted grid of K thresholds, added exactly over chunks.

    Attributes
    ----------
    le : ndarray of int64, shape (K,)
        ``#{s ≤ g_k}`` for each threshold.
    lt : ndarray of int64, shape (K,)
        ``#{s < g_k}`` for each threshold.
    total : int
        Scores counted.
    """

    le: np.ndarray
    lt: np.ndarray
    total: int = 0

    @classmethod
    def empty(cls, k: int) -> GridCounts:
        """No counts at ``k`` thresholds.

        Parameters
        ----------
        k : int
            Thresholds in the grid.

        Returns
        -------
        GridCounts
        """
        return cls(np.zeros(k, np.int64), np.zeros(k, np.int64))

    def add_scores(self, grid: np.ndarray, scores: np.ndarray) -> None:
        """Count ``scores`` at ``grid`` (the block sorted once, then the grid located in it).

        Parameters
        ----------
        grid : ndarray
            The sorted, distinct thresholds.
        scores : ndarray
            Real numbers (no NaN).
        """
        s = np.sort(scores)
        self.le += np.searchsorted(s, grid, side="right")
        self.lt += np.searchsorted(s, grid, side="left")
        self.total += int(s.size)

    def add(self, other: GridCounts) -> None:
        """Add ``other``'s counts.

        Parameters
        ----------
        other : GridCounts
            Counts at the same grid.
        """
        self.le += other.le
        self.lt += other.lt
        self.total += other.total

    def at_most(self) -> np.ndarray:
        """``#{s ≤ g_k}`` for each threshold."""
        return self.le

    def less(self) -> np.ndarray:
        """``#{s < g_k}`` for each threshold."""
        return self.lt


@dataclasses.dataclass
class ChunkCounts:
    """The counts of one or more chunks: per attacker and input, and the non-finite rows of each input."""

    counts: list  # per attacker: [GridCounts under x, GridCounts under x′]
    nonfinite: list  # rows with a NaN/inf, under x and under x′
    rows: int  # releases per input counted

    @classmethod
    def empty(cls, grids: Iterable[np.ndarray]) -> ChunkCounts:
        """No counts at ``grids`` (one per attacker).

        Parameters
        ----------
        grids : iterable of ndarray
            Each attacker's thresholds.

        Returns
        -------
        ChunkCounts
        """
        return cls([[GridCounts.empty(g.size), GridCounts.empty(g.size)] for g in grids], [0, 0], 0)

    def add(self, other: ChunkCounts) -> None:
        """Add ``other``'s counts (integers: exact in any order).

        Parameters
        ----------
        other : ChunkCounts
            Counts of other chunks at the same grids.
        """
        for mine, theirs in zip(self.counts, other.counts):
            mine[0].add(theirs[0])
            mine[1].add(theirs[1])
        self.nonfinite = [a + b for a, b in zip(self.nonfinite, other.nonfinite)]
        self.rows += other.rows


def count_rows(plan: StreamPlan, rows: tuple[np.ndarray, np.ndarray], into: ChunkCounts,
               nonfinite: tuple[int, int] | None = None) -> None:
    """Score ``rows`` (under x, under x′) with every attacker of ``plan`` and add the counts to ``into``.

    Parameters
    ----------
    plan : StreamPlan
        The attackers and their grids.
    rows : (ndarray, ndarray)
        Releases under x and under x′, (m, width) each.
    into : ChunkCounts
        Where the counts are added.
    nonfinite : (int, int), optional
        Rows of each side with a NaN or ±inf before padding, when the caller counted them
        (:meth:`StreamPlan.draw_block`); a side with none is then scored without a check.
        Default: counted here (padding included).
    """
    flags = []
    for side in (0, 1):
        if nonfinite is None:
            ok = np.isfinite(rows[side])
            bad = 0 if ok.all() else int(np.count_nonzero(~ok.all(axis=1)))
            flags.append(bad == 0)
        else:
            bad = nonfinite[side]
            flags.append(bad == 0 and rows[side].shape[1] == plan.width and not plan.padded[side])
        into.nonfinite[side] += bad
    for a, grid, pair in zip(plan.attackers, plan.grids, into.counts):
        for side in (0, 1):
            pair[side].add_scores(grid, safe_scores(a, rows[side], plan.shape, all_finite=flags[side]))
    into.rows += rows[0].shape[0]


def count_chunk(plan: StreamPlan, chunk: int) -> ChunkCounts:
    """Draw, score and count chunk ``chunk`` of the evaluation split, one block at a time.

    Parameters
    ----------
    plan : StreamPlan
        The streamed split.
    chunk : int
        Index of the chunk (blocks ``chunk·B … (chunk + 1)·B − 1``, B the blocks per chunk).

    Returns
    -------
    ChunkCounts
    """
    out = ChunkCounts.empty(plan.grids)
    per = plan.chunk_size // STREAM_BLOCK
    n_blocks = math.ceil(plan.n_eval / STREAM_BLOCK)
    for block in range(chunk * per, min((chunk + 1) * per, n_blocks)):
        (r0, f0), (r1, f1) = plan.draw_block(0, block), plan.draw_block(1, block)
        count_rows(plan, (r0, r1), out, (f0, f1))
    return out


def _parallel_chunks(plan: StreamPlan, chunks: list[int], n_jobs: int) -> Iterable[ChunkCounts]:
    """Counts of ``chunks`` over ``n_jobs`` joblib workers, as they finish (a failed chunk raises)."""
    from joblib import Parallel, delayed

    return Parallel(n_jobs=n_jobs, return_as="generator_unordered")(delayed(count_chunk)(plan, c) for c in chunks)


def stream_counts(plan: StreamPlan, *, n_jobs: int | None = 1, progress: bool | None = None,
                  chunk_counter: Callable[[StreamPlan, int], ChunkCounts] = count_chunk) -> ChunkCounts:
    """The counts of the whole evaluation split of ``plan``, chunk by chunk (over workers with ``n_jobs``).

    Parameters
    ----------
    plan : StreamPlan
        The streamed split.
    n_jobs : int or None
        joblib workers (1: in this process; -1: one per core). The chunks' counts are integers,
        added exactly, so the result does not depend on it. A chunk that fails raises: no chunk
        is dropped.
    progress : bool or None
        A tqdm bar over the chunks; None: when standard error is a terminal.
    chunk_counter : callable
        Counts one chunk (default :func:`count_chunk`; tests replay other releases through it).

    Returns
    -------
    ChunkCounts
    """
    from tqdm.auto import tqdm

    total = ChunkCounts.empty(plan.grids)
    chunks = list(range(plan.n_chunks))
    jobs = 1 if n_jobs is None else int(n_jobs)
    if jobs == 0:
        raise InvalidParameterError("n_jobs must be a non-zero integer or None, got n_jobs=0")
    results = (chunk_counter(plan, c) for c in chunks) if jobs == 1 or len(chunks) <= 1 else \
        _parallel_chunks(plan, chunks, jobs)
    with tqdm(total=plan.n_eval, unit="rel", unit_scale=True, desc="streamed evaluation",
              disable=not progress_enabled(progress), leave=False) as bar:
        for counts in results:
            total.add(counts)
            bar.update(counts.rows)
    if total.rows != plan.n_eval:  # every chunk is counted once: a lost one is an error, never a smaller n
        raise RuntimeError(f"streamed evaluation counted {total.rows} releases per input, expected {plan.n_eval}")
    return total


__all__ = [
    "CURVE_POINTS", "ChunkCounts", "DEFAULT_CHUNK_BLOCKS", "GridCounts", "STREAM_BLOCK", "STREAM_BYTES", "StreamPlan",
    "check_chunk_size", "count_chunk", "count_rows", "progress_enabled", "release_rows", "stream_counts",
    "stream_needed",
]
