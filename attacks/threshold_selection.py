"""Choosing the test of a distinguishing attack: thresholds, error counts and binomial bounds.

A score-based distinguisher is not finished until a threshold (or a pair of
thresholds) turns its scores into a test; DP-Sniper (Bichsel et al. 2021) makes that
choice part of the attack, and so do we. This module holds the statistics of that
choice, which the attackers (model selection inside :mod:`~privaudit.attacks.floating_point`)
and the audits (:mod:`privaudit.audit.stats.epsilon_bounds`, which certifies the chosen test
on held-out data) share:

* Clopper–Pearson bounds on error rates and the (ε, δ) / μ-GDP values of rates;
* error counts and the empirical ROC of two score samples, by sorting;
* candidate thresholds and :func:`select_threshold`, the cross-validated choice.

It depends on numpy, scipy and :mod:`privaudit.mechanisms` only, so attackers may use
it without depending on the audit layer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import betaincinv, ndtri

from privaudit.mechanisms.accounting import gdp_epsilon
from privaudit.mechanisms.validation import InvalidInputError, check_interval

SELECTIONS = ("split", "bonferroni")
#: Selection rates are replaced by upper bounds at this level (≈ ½ sigma) before the cross-validated
#: choice of a threshold (measured: 0.5 let a tail threshold of Laplace ε = 0.1 win on one seed in
#: three; 0.9 lost 5-15 % of ε̲ on Gaussians at n = 1e6).
_SELECT_LEVEL = 0.7
#: Attackers of a suite are ranked on the whole selection split at this milder level (Φ(1)), so
#: that a rare but perfect leak (tens of hits, no false positive) is not lost to a bulk attacker.
RANK_LEVEL = 0.8413
_POOL_TOP = 24  # forward × reverse candidates examined for pooling
#: The criterion of a test is its ε̲ at the evaluation size, but at most this many times the
#: selection part it was estimated on. Why: the selection block is capped (the engine's
#: ``MAX_SELECT``) while the evaluation block grows with n; the Clopper–Pearson penalty at the
#: evaluation size is what keeps the winner's curse from choosing a tail test whose few selection
#: counts were lucky, and it vanishes as n grows. Without the cap, ε̲ *fell* with n: Laplace
#: ε = 0.1, counted rates, mean ε̲ 0.094 at n = 10⁶ and 0.051 at n = 10⁷ (chosen FPR ~3·10⁻⁴).
#: With it, above the size where the cap binds the choice is the same in distribution at every n
#: and only the evaluation grows, so ε̲ cannot get worse in expectation. 8 is the ratio of the
#: default splits (evaluation 0.8·n against halves of 0.1·n), so audits up to n ≈ 10⁶ are unchanged.
MAX_EVAL_PER_SELECT = 8
#: Selection settings for exact log-likelihood-ratio scores (:func:`_llr_counts`): the pooled
#: estimates carry little selection noise, so rates are used as point estimates, without the
#: cross-validated minimum (measured on Gaussians, ε = 0.5–4, n = 1e6, 12 seeds: median ε̲ 0.98–0.99 of
#: the Clopper–Pearson ceiling, against 0.89–0.95 with counted rates and the default settings).
LLR_SELECTION = {"select_level": 0.5, "cross_validate": False}


# --- binomial bounds ---------------------------------------------------------------------------
def clopper_pearson_upper(k: ArrayLike, n: ArrayLike, level: float) -> np.ndarray:
    """One-sided Clopper–Pearson upper bound on a binomial rate at confidence ``level``.

    The bound p̄ solves P[Bin(n, p̄) ≤ k] = 1 − level, i.e. p̄ = B⁻¹(level; k + 1, n − k)
    (beta quantile); it is 1 when k = n. ``k`` may be non-integer (expected counts
    scaled to another sample size, used when choosing a threshold).

    Parameters
    ----------
    k : array-like
        Observed counts (0 ≤ k ≤ n), broadcast against ``n``.
    n : array-like
        Numbers of trials.
    level : float
        One-sided confidence in (0, 1).

    Returns
    -------
    ndarray
        p̄ in [0, 1], broadcast shape of ``k`` and ``n``.
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        ub = betaincinv(k + 1, np.maximum(n - k, 1e-300), level)
    return np.where(k >= n, 1.0, ub)


def clopper_pearson_lower(k: ArrayLike, n: ArrayLike, level: float) -> np.ndarray:
    """One-sided Clopper–Pearson lower bound: 1 − upper bound on the complementary rate.

    Parameters
    ----------
    k : array-like
        Observed counts (0 ≤ k ≤ n), broadcast against ``n``.
    n : array-like
        Numbers of trials.
    level : float
        One-sided confidence in (0, 1).

    Returns
    -------
    ndarray
        p̲ = 1 − :func:`clopper_pearson_upper` (n − k, n, level), 0 when k = 0.
    """
    n = np.asarray(n, dtype=float)
    return 1.0 - clopper_pearson_upper(n - np.asarray(k, dtype=float), n, level)


# --- the DP inequality -------------------------------------------------------------------------
def epsilon_from_rates(fpr: ArrayLike, fnr: ArrayLike, delta: float) -> np.ndarray:
    """ε(α, β; δ) of eq. (1): the smallest ε consistent with a test of rates (α, β).

    (ε, δ)-DP forces α + e^ε β ≥ 1 − δ and e^ε α + β ≥ 1 − δ, so
    ε ≥ max(ln((1 − δ − β)/α), ln((1 − δ − α)/β)).
    Vectorised; 0 where the rates are consistent with ε = 0, ``inf`` where a rate
    is 0 and the other is below 1 − δ.

    Parameters
    ----------
    fpr, fnr : array-like
        False-positive rate α and false-negative rate β of a test, in [0, 1]; broadcast together.
    delta : float
        The δ of the (ε, δ) claim.

    Returns
    -------
    ndarray
        ε ≥ 0 per operating point.
    """
    a = np.asarray(fpr, dtype=float)
    b = np.asarray(fnr, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        e1 = np.log(np.maximum(1 - delta - b, 0.0)) - np.log(a)
        e2 = np.log(np.maximum(1 - delta - a, 0.0)) - np.log(b)
    e = np.fmax(e1, e2)
    return np.where(np.isnan(e), 0.0, np.maximum(e, 0.0))


def mu_from_rates(fpr: ArrayLike, fnr: ArrayLike) -> np.ndarray:
    """μ(α, β) = Φ⁻¹(1 − α) − Φ⁻¹(β): the GDP parameter whose G_μ passes through (α, β), floored at 0.

    Parameters
    ----------
    fpr, fnr : array-like
        False-positive rate α and false-negative rate β (clipped to [0, 1]); broadcast together.

    Returns
    -------
    ndarray
        μ ≥ 0 per operating point (0 where undefined, e.g. α = β = 1).
    """
    a = np.clip(np.asarray(fpr, dtype=float), 0.0, 1.0)
    b = np.clip(np.asarray(fnr, dtype=float), 0.0, 1.0)
    with np.errstate(invalid="ignore"):
        mu = ndtri(1 - a) - ndtri(b)
    return np.where(np.isnan(mu), 0.0, np.maximum(mu, 0.0))


# --- ROC by sorting ----------------------------------------------------------------------------
def _scores(name: str, s) -> np.ndarray:
    s = np.asarray(s, dtype=float).ravel()
    if s.size == 0:
        raise InvalidInputError(f"{name} must be non-empty")
    if np.isnan(s).any():
        raise InvalidInputError(f"{name} contains NaN scores")
    return s


def error_counts(scores0: ArrayLike, scores1: ArrayLike, thresholds: ArrayLike, *,
                 presorted: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """False-positive and false-negative *counts* of the tests ``score > t`` for each threshold.

    ``fp[t] = #{scores0 > t}``, ``fn[t] = #{scores1 ≤ t}``; O((n + K) log n) by sorting
    (skipped with ``presorted=True``).

    Parameters
    ----------
    scores0, scores1 : array-like
        Scores of releases under x (the null) and under x′; non-empty, no NaN.
    thresholds : array-like of shape (K,)
        Thresholds t of the tests "reject x when score > t".
    presorted : bool
        The scores are already sorted 1-D float arrays (no validation, no sort).

    Returns
    -------
    fp, fn : ndarray of int, shape (K,)
        Counts out of ``len(scores0)`` and ``len(scores1)``.

    Raises
    ------
    InvalidInputError
        When a score array is empty or contains NaN (unless ``presorted``).
    """
    s0 = np.asarray(scores0, float) if presorted else np.sort(_scores("scores0", scores0))
    s1 = np.asarray(scores1, float) if presorted else np.sort(_scores("scores1", scores1))
    t = np.asarray(thresholds, dtype=float)
    fp = s0.size - np.searchsorted(s0, t, side="right")
    fn = np.searchsorted(s1, t, side="right")
    return fp, fn


def empirical_curve(scores0: ArrayLike, scores1: ArrayLike, max_points: int = 512, *,
                    presorted: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The empirical trade-off curve (FPR, FNR) of the threshold tests, and their thresholds.

    Thresholds are −inf (reject everything) plus scores at ~``max_points`` ranks:
    log-spaced from the top of the null scores and from the bottom of the
    alternative scores (so both tails, where ε is decided, stay resolved) and
    linearly spaced in between. Every returned vertex is an exact empirical
    (FPR, FNR) pair; the curve is sorted by increasing FPR.

    Parameters
    ----------
    scores0, scores1 : array-like
        Scores under x (the null) and under x′; non-empty, no NaN.
    max_points : int
        Approximate number of vertices (a third per rank grid, at least 4 each).
    presorted : bool
        The scores are already sorted 1-D float arrays.

    Returns
    -------
    fpr, fnr, thresholds : ndarray
        Same length, ordered by increasing FPR (ties by FNR).
    """
    s0 = np.asarray(scores0, float) if presorted else np.sort(_scores("scores0", scores0))
    s1 = np.asarray(scores1, float) if presorted else np.sort(_scores("scores1", scores1))
    k = max(4, max_points // 3)
    top = s0.size - np.unique(np.geomspace(1, s0.size, k).astype(int))
    bottom = np.unique(np.geomspace(1, s1.size, k).astype(int)) - 1
    lin0 = np.linspace(0, s0.size - 1, k).astype(int)
    t = np.unique(np.concatenate([[-np.inf], s0[top], s1[bottom], s0[lin0]]))
    fp, fn = error_counts(s0, s1, t, presorted=True)
    fpr, fnr = fp / s0.size, fn / s1.size
    order = np.lexsort((fnr, fpr))
    return fpr[order], fnr[order], t[order]


def candidate_thresholds(scores0: ArrayLike, scores1: ArrayLike, k: int = 256, spacing: str = "tails") -> np.ndarray:
    """About K thresholds at pooled-score quantiles, with their distinct neighbours (all values if fewer).

    ``spacing="tails"`` log-spaces the ranks towards both ends (ε at small δ is
    decided in the tails) and adds K/2 evenly spaced ranks (small ε is decided near the
    median); ``"linear"`` spaces them evenly, for the GDP estimator,
    whose information is in the centre of the curve and whose tail candidates
    would only add selection noise.

    Parameters
    ----------
    scores0, scores1 : array-like
        Scores under x and under x′; non-empty, no NaN.
    k : int
        Number of quantile ranks K.
    spacing : {"tails", "linear"}
        How the ranks are spaced (any other value behaves as ``"tails"``).

    Returns
    -------
    ndarray
        Sorted distinct thresholds (up to about 3K), each a pooled score value.
    """
    pooled = np.sort(np.concatenate([_scores("scores0", scores0), _scores("scores1", scores1)]))
    uniq = pooled[np.r_[True, pooled[1:] != pooled[:-1]]]  # pooled is sorted: no second sort
    if uniq.size <= k:
        return uniq
    n = pooled.size
    if spacing == "linear":
        ranks = np.linspace(0, n - 1, k + 2)[1:-1]
    else:
        # Log-spaced towards both ends (small δ), plus an even grid: near the median the log
        # grid's steps are ~10 % of the ranks, too coarse for small ε, decided at α ≈ ½.
        half = np.geomspace(1, n / 2, k // 2)
        ranks = np.concatenate([half, n - half, np.linspace(0, n - 1, k // 2 + 2)[1:-1]])
    picked = np.unique(pooled[ranks.astype(int).clip(0, n - 1)])
    # Ties: the tests are "score > t" and "score < r", which exclude the value at the threshold. A
    # block of tied scores (an atom's) is only isolated by its neighbouring distinct values, so the
    # unique values just below and above each pick are candidates too.
    i = np.searchsorted(uniq, picked)
    return np.unique(np.concatenate([picked, uniq[np.clip(i - 1, 0, uniq.size - 1)],
                                     uniq[np.clip(i + 1, 0, uniq.size - 1)]]))


# --- bound containers --------------------------------------------------------------------------
@dataclass(frozen=True)
class RateBound:
    """The operating point an ε (or μ) lower bound was read from.

    ``direction`` is ``"forward"`` (test ``score > threshold`` of x against x′),
    ``"reverse"`` (test ``score < reverse_threshold`` of x′ against x) or
    ``"pooled"`` (both tests, their error counts added: the pooled rates are a
    convex combination of two points that (ε, δ)-DP, or G_μ, keeps above a
    *convex* curve, so the pooled point must lie above it too; the pooled counts
    are Poisson-binomial, for which the Clopper–Pearson bound stays valid
    (Hoeffding 1956, Thm 4)). ``fpr``/``fnr`` are the empirical rates on the
    evaluation split, ``fpr_upper``/``fnr_upper`` their joint upper confidence
    bounds; ``epsilon`` is the lower bound on ε at ``delta`` and ``mu`` the lower
    bound on μ (GDP estimator only).
    """

    epsilon: float
    delta: float
    confidence: float
    threshold: float
    fpr: float
    fnr: float
    fpr_upper: float
    fnr_upper: float
    n0: int
    n1: int
    estimator: str
    selection: str
    mu: float | None = None
    direction: str = "forward"
    reverse_threshold: float | None = None


def _check_confidence(confidence: float) -> float:
    return check_interval("confidence", confidence, 0.0, 1.0)


def _value(fp, fn, n_fp, n_fn, level, delta, estimator, clip: bool = True):
    """The bound (ε̲ or μ̲) given error counts out of ``n_fp`` and ``n_fn`` trials.

    For Clopper–Pearson only the first line of (1), ln((1 − δ − β̄)/ᾱ), is used:
    the second line of a forward test is the first line of the reverse test with
    the same rejection region, which :func:`select_threshold` examines separately
    (and may pool with the forward one).
    """
    a_ub = clopper_pearson_upper(fp, n_fp, level)
    b_ub = clopper_pearson_upper(fn, n_fn, level)
    return _value_of_bounds(a_ub, b_ub, delta, estimator, clip), a_ub, b_ub


def _value_of_bounds(a_ub, b_ub, delta, estimator, clip: bool = True):
    """The bound (ε̲ or μ̲) of upper bounds ᾱ, β̄ on the two error rates; non-increasing in each."""
    if estimator == "gdp":
        return mu_from_rates(a_ub, b_ub)
    with np.errstate(divide="ignore"):
        eps = np.log(np.maximum(1 - delta - b_ub, 1e-300)) - np.log(a_ub)
    if not clip:
        return np.nan_to_num(eps, nan=-np.inf)
    return np.maximum(np.nan_to_num(eps, nan=0.0, neginf=0.0), 0.0)


def chosen_test_counts(scores0: ArrayLike, scores1: ArrayLike, threshold: float,
                reverse_threshold: float) -> tuple[int, int, int, int]:
    """Error counts of one forward and one reverse test, counted on unsorted scores in O(n).

    The same integers as :func:`error_counts` and the reverse counts of sorted scores
    (``#{s₀ > t}``, ``#{s₁ ≤ t}``, ``#{s₁ < r}``, ``#{s₀ ≥ r}``), without the O(n log n) sort
    that evaluating a single chosen test does not need.

    Parameters
    ----------
    scores0, scores1 : array-like
        Scores under x and under x′ (any order, no NaN).
    threshold : float
        t of the forward test "reject x when score > t".
    reverse_threshold : float
        r of the reverse test "reject x′ when score < r".

    Returns
    -------
    fp, fn, rfp, rfn : int
        Forward false positives (of ``scores0``) and false negatives (of ``scores1``), then
        reverse false positives (of ``scores1``) and false negatives (of ``scores0``).
    """
    s0, s1 = np.asarray(scores0, dtype=float), np.asarray(scores1, dtype=float)
    return (int(np.count_nonzero(s0 > threshold)), int(np.count_nonzero(s1 <= threshold)),
            int(np.count_nonzero(s1 < reverse_threshold)), int(np.count_nonzero(s0 >= reverse_threshold)))


def _reverse_counts(s0, s1, r):
    """Counts of the reverse tests ``score < r`` of x′ (null) against x: FP out of n1, FN out of n0."""
    return np.searchsorted(s1, r, side="left"), s0.size - np.searchsorted(s0, r, side="left")


def _llr_counts(s0: np.ndarray, s1: np.ndarray, thresholds: np.ndarray):
    """Error counts of the forward and reverse tests when the scores are exact log-likelihood ratios.

    If S = ln dP₁/dP₀, the pooled sample (m₀ draws of P₀, m₁ of P₁) is a sample of the
    mixture M = (m₀P₀ + m₁P₁)/(m₀ + m₁), with dP₀/dM ∝ 1/(m₀ + m₁e^S) and
    dP₁/dM ∝ 1/(m₀e^−S + m₁). Each rate P_b(A) is then estimated by self-normalised
    importance sampling, Σ_{s∈A} w_b(s) / Σ w_b, from *both* samples: in a tail every
    pooled score counts towards both rates, with weights fixed by the score itself, so
    the estimated ROC has no independent binomial noise in its two coordinates and the
    winner's curse of choosing among noisy tail thresholds mostly disappears (derivation
    and measurements: docs/threshold_selection.md). Returned as (non-integer) counts out
    of m₀ and m₁, in the order of :func:`error_counts` then :func:`_reverse_counts`;
    ``None`` when the weights degenerate (a density that excludes every draw of one input).
    """
    s = np.sort(np.concatenate([s0, s1]))
    m0, m1 = s0.size, s1.size
    with np.errstate(over="ignore"):
        w0 = 1.0 / (m0 + m1 * np.exp(s))
        w1 = 1.0 / (m0 * np.exp(-s) + m1)
    # Tail masses by cumulative sums from the end they are small at (no 1 − (≈1) cancellation).
    above0 = np.r_[np.cumsum(w0[::-1])[::-1], 0.0]
    below1 = np.r_[0.0, np.cumsum(w1)]
    if not (above0[0] > 0 and below1[-1] > 0 and np.isfinite(above0[0]) and np.isfinite(below1[-1])):
        return None
    above0, below1 = above0 / above0[0], below1 / below1[-1]
    le = np.searchsorted(s, thresholds, side="right")  # first index with s > t
    lt = np.searchsorted(s, thresholds, side="left")  # first index with s ≥ r
    return above0[le] * m0, below1[le] * m1, below1[lt] * m1, above0[lt] * m0


_FP, _FN, _RFP, _RFN = range(4)
#: Blocks of candidate thresholds whose criterion is first bounded from their two ends.
_PRUNE_BLOCK = 16
#: Relative margin below the criterion of the current top tests under which a block is pruned (far
#: above the rounding of the Clopper–Pearson bounds, far below any difference between tests).
_PRUNE_SLACK = 1e-9


class _LazyRates:
    """The four error rates of one selection part at each candidate threshold, bounded on demand.

    ``scaled(r, idx)``: the upper bound at ``select_level`` of rate r (counts out of the part's
    size), scaled to expected counts on the evaluation split; ``final(r, idx)``: the
    Clopper–Pearson upper bound at ``level`` of those expected counts. Both are computed once
    per candidate, only for the candidates asked for (each costs a ``betaincinv``, the bulk of
    choosing a test at n ≥ 10⁵), with exactly the values a computation over all candidates gives.
    """

    def __init__(self, counts, sizes, evals, select_level, level):
        self._counts = [np.asarray(c, dtype=float) for c in counts]
        self._sizes, self._evals, self._lv, self._level = sizes, evals, select_level, level
        k = self._counts[0].size
        self._scaled = [np.full(k, np.nan) for _ in range(4)]
        self._final = [np.full(k, np.nan) for _ in range(4)]

    def scaled(self, r: int, idx=None) -> np.ndarray:
        idx = np.arange(self._counts[r].size) if idx is None else np.asarray(idx)
        out = self._scaled[r]
        todo = idx[np.isnan(out[idx])]
        if todo.size:
            out[todo] = clopper_pearson_upper(self._counts[r][todo], self._sizes[r], self._lv) * self._evals[r]
        return out[idx]

    def final(self, r: int, idx=None) -> np.ndarray:
        idx = np.arange(self._counts[r].size) if idx is None else np.asarray(idx)
        out = self._final[r]
        todo = idx[np.isnan(out[idx])]
        if todo.size:
            out[todo] = clopper_pearson_upper(self.scaled(r, todo), self._evals[r], self._level)
        return out[idx]


def _pruned_criterion(size: int, exact, bound, keep: int = _POOL_TOP) -> np.ndarray:
    """The criterion of every candidate that can be among the ``keep`` best; −inf for the others.

    Branch and bound over blocks of consecutive candidates: ``exact(idx)`` is the criterion at
    candidates ``idx``, ``bound(lo, hi)`` an upper bound of it over each block [lo, hi] (the rates
    are monotone in the threshold and the criterion decreases in each rate bound, so the bound
    is the criterion of the block's smallest two rate bounds, read at its ends). Blocks are
    bisected until they are evaluated or their bound falls below the ``keep``-th largest value
    found (less a relative :data:`_PRUNE_SLACK`). Every candidate whose criterion reaches that
    value is evaluated exactly, so the argmax (first of equals) and the ``keep`` largest in a
    stable order are those of the full array; only the pruned tails' values are not computed.
    """
    crit = np.full(size, -np.inf)
    done = np.zeros(size, dtype=bool)

    def evaluate(idx):
        idx = np.unique(idx)
        idx = idx[~done[idx]]
        if idx.size:
            crit[idx] = exact(idx)
            done[idx] = True

    lo = np.arange(0, size, _PRUNE_BLOCK)
    hi = np.minimum(lo + _PRUNE_BLOCK, size - 1)
    evaluate(np.concatenate([lo, hi]))
    while lo.size:
        known = crit[done]
        floor = np.partition(known, known.size - keep)[known.size - keep] if known.size >= keep else -np.inf
        live = hi - lo > 1
        if np.isfinite(floor) and live.any():
            live[live] = bound(lo[live], hi[live]) >= floor - _PRUNE_SLACK * max(1.0, abs(floor))
        lo, hi = lo[live], hi[live]
        mid = (lo + hi) // 2
        evaluate(mid)
        lo, hi = np.concatenate([lo, mid]), np.concatenate([mid, hi])
    return crit


@dataclass(frozen=True)
class Selection:
    """What the selection split chose: the direction and thresholds, and the criterion value."""

    criterion: float
    direction: str
    threshold: float
    reverse_threshold: float


def select_threshold(
    select0: ArrayLike, select1: ArrayLike, n0_eval: int, n1_eval: int, *, delta: float, confidence: float, estimator: str,
    n_thresholds: int = 256, select_level: float = _SELECT_LEVEL, cross_validate: bool = True,
    log_likelihood_ratio: bool = False,
) -> Selection:
    """Choose the test on the selection split.

    The criterion of a test is the bound (ε̲ for Clopper–Pearson, μ̲ for GDP) it
    would give if its selection-split rates held, as expected counts, on an
    evaluation split of sizes ``(n0_eval, n1_eval)``, after replacing the selection
    rates by upper bounds at ``select_level``; it is computed on both halves of the
    selection split and the smaller value is kept (cross-validated against the
    winner's curse). The evaluation sizes are capped at :data:`MAX_EVAL_PER_SELECT` times
    the selection part, so that the choice does not drift to tail tests as n grows. The best forward threshold,
    the best reverse threshold and their pooled test are compared and the best is
    returned. Also used to pick the best attacker of a suite; the evaluation split
    is never looked at.

    Only the candidates that can be among the best are given their (costly) Clopper–Pearson
    bounds (:func:`_pruned_criterion`): the result is that of evaluating every candidate, with
    ties between equal criteria broken by candidate order (the later threshold), the same on
    every machine.

    With ``log_likelihood_ratio=True`` (the scores are ln p(o | x′) − ln p(o | x) of a
    declared density) the rates are estimated from the pooled selection split by
    :func:`_llr_counts` instead of being counted per hypothesis. Only the choice uses
    that assumption: the chosen test is still evaluated by counting on held-out data, so
    a density that misdescribes the sampler costs power, never validity.

    Parameters
    ----------
    select0, select1 : array-like
        Selection-split scores under x and under x′; non-empty, no NaN.
    n0_eval, n1_eval : int
        Sizes of the evaluation split the chosen test will be certified on.
    delta : float
        The δ at which ε̲ is read (unused by the GDP estimator's μ̲).
    confidence : float
        Two-sided confidence of the final bound; each rate is bounded at 1 − (1 − confidence)/2.
    estimator : {"clopper-pearson", "gdp"}
        Which bound the criterion is: ε̲ from Clopper–Pearson rates, or μ̲ of Gaussian DP.
    n_thresholds : int
        K of :func:`candidate_thresholds`.
    select_level : float
        Confidence of the upper bounds that replace the selection rates.
    cross_validate : bool
        Take the smaller criterion of the two interleaved halves (else the whole split once).
    log_likelihood_ratio : bool
        The scores are exact log-likelihood ratios (rates estimated by :func:`_llr_counts`).

    Returns
    -------
    Selection
        Direction (``"forward"``, ``"reverse"`` or ``"pooled"``), both thresholds and the
        criterion value, clipped at 0.

    Raises
    ------
    InvalidInputError
        When a score array is empty or contains NaN.
    """
    raw0, raw1 = _scores("select0", select0), _scores("select1", select1)
    part0, part1 = (raw0.size // 2, raw1.size // 2) if cross_validate else (raw0.size, raw1.size)
    n0_eval = min(n0_eval, MAX_EVAL_PER_SELECT * max(part0, 1))
    n1_eval = min(n1_eval, MAX_EVAL_PER_SELECT * max(part1, 1))
    spacing = "linear" if estimator == "gdp" else "tails"
    cands = candidate_thresholds(raw0, raw1, n_thresholds, spacing)
    level = 1 - (1 - confidence) / 2
    # Against the winner's curse the criterion is cross-validated: the selection split is cut in two
    # halves, each half's rates are replaced by upper bounds at ``select_level`` and rescaled, and a
    # test's criterion is the *smaller* of its two values. A tail threshold that looks good by luck
    # on one half rarely does on the other, while a real effect (a bulk shift, or a rare but perfect
    # separation such as an atom or a NaN) shows on both. (A single penalised criterion had to choose
    # between letting noise pick tail thresholds of small-ε mechanisms, e.g. Laplace ε = 0.1, and
    # losing rare leaks of probability 1e-3 to bulk thresholds.)
    halves = []
    parts = ((raw0[0::2], raw1[0::2]), (raw0[1::2], raw1[1::2])) if cross_validate else ((raw0, raw1),)
    for h0, h1 in parts:
        h0, h1 = np.sort(h0), np.sort(h1)
        m0, m1 = h0.size, h1.size
        counts = _llr_counts(h0, h1, cands) if log_likelihood_ratio else None
        if counts is None:
            counts = (*error_counts(h0, h1, cands, presorted=True), *_reverse_counts(h0, h1, cands))
        halves.append(_LazyRates(counts, (m0, m1, m1, m0), (n0_eval, n1_eval, n1_eval, n0_eval), select_level,
                                 level))

    def crit(kind, idx_f=None, idx_r=None):
        vals = []
        for h in halves:
            if kind == "forward":
                vals.append(_value_of_bounds(h.final(_FP, idx_f), h.final(_FN, idx_f), delta, estimator, clip=False))
            elif kind == "reverse":
                vals.append(_value_of_bounds(h.final(_RFP, idx_r), h.final(_RFN, idx_r), delta, estimator,
                                             clip=False))
            else:
                pfp = h.scaled(_FP, idx_f)[:, None] + h.scaled(_RFP, idx_r)[None, :]
                pfn = h.scaled(_FN, idx_f)[:, None] + h.scaled(_RFN, idx_r)[None, :]
                vals.append(_value(pfp, pfn, n0_eval + n1_eval, n0_eval + n1_eval, level, delta, estimator,
                                   clip=False)[0])
        return np.minimum(vals[0], vals[-1])  # the two halves' values, or the one part's

    def bound(kind, lo, hi):
        """Upper bounds of the criterion on the candidate blocks [lo, hi] (see _pruned_criterion)."""
        # Forward tests: fp falls and fn rises with the threshold, so over a block ᾱ is smallest at hi
        # and β̄ at lo; reverse tests: rfp rises and rfn falls, the other way round.
        a, b = (hi, lo) if kind == "forward" else (lo, hi)
        ra, rb = (_FP, _FN) if kind == "forward" else (_RFP, _RFN)
        vals = [_value_of_bounds(h.final(ra, a), h.final(rb, b), delta, estimator, clip=False) for h in halves]
        return np.minimum(vals[0], vals[-1])

    k = cands.size
    crit_f = _pruned_criterion(k, lambda idx: crit("forward", idx_f=idx), lambda lo, hi: bound("forward", lo, hi))
    crit_r = _pruned_criterion(k, lambda idx: crit("reverse", idx_r=idx), lambda lo, hi: bound("reverse", lo, hi))
    i, j = int(np.argmax(crit_f)), int(np.argmax(crit_r))
    # Pooled tests: every pair of the _POOL_TOP best forward and reverse candidates (ties: the later
    # candidates, a stable order that does not depend on the values of the tests pruned above).
    top_f = np.argsort(crit_f, kind="stable")[-_POOL_TOP:]
    top_r = np.argsort(crit_r, kind="stable")[-_POOL_TOP:]
    crit_p = crit("pooled", top_f, top_r)
    ki, kj = np.unravel_index(int(np.argmax(crit_p)), crit_p.shape)
    pi, pj = top_f[ki], top_r[kj]
    options = {"forward": (float(crit_f[i]), i, j), "reverse": (float(crit_r[j]), i, j),
               "pooled": (float(crit_p[ki, kj]), pi, pj)}
    best = max(options, key=lambda k: options[k][0])
    value, bi, bj = options[best]
    # Unclipped for the choice (when no test reaches ε̲ > 0 the least bad is still preferred to a
    # degenerate one); reported clipped at 0 like every bound.
    return Selection(max(value, 0.0), best, float(cands[bi]), float(cands[bj]))


def _finish(value, *, delta, estimator):
    """(ε̲, μ̲) from the criterion value: μ̲ is converted through the exact Gaussian profile."""
    if estimator == "gdp":
        mu = float(value)
        eps = gdp_epsilon(mu, delta) if delta > 0 else (math.inf if mu > 0 else 0.0)
        return eps, mu
    return float(value), None
