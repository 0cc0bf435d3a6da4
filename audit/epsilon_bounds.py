"""Statistically valid lower bounds on ε from attack scores.

Every estimator here turns the scores of a distinguisher on outputs drawn under
two neighbouring inputs x (null, label 0) and x′ (alternative, label 1) into a
lower confidence bound on the ε of the mechanism at a given δ.

Tests and the DP inequality
---------------------------
A threshold test rejects the null ("the input was x′") when ``score > t``. Its
false-positive rate is α(t) = P_x(score > t) and its false-negative rate is
β(t) = P_{x′}(score ≤ t). If the mechanism is (ε, δ)-DP in both directions of
the pair then every test satisfies (Kairouz, Oh & Viswanath 2015; Dong, Roth &
Su 2019, Prop. 2.5)

    β ≥ 1 − δ − e^ε α   and   β ≥ e^{−ε}(1 − δ − α),

so that

    ε ≥ ε(α, β; δ) = max{ ln((1 − δ − β)/α), ln((1 − δ − α)/β) }.        (1)

ε(α, β; δ) decreases in α and β, so plugging in one-sided *upper* confidence
bounds ᾱ, β̄ gives a lower confidence bound on ε.

Estimators
----------
* :func:`clopper_pearson_bound` — exact binomial (Clopper–Pearson) upper bounds
  on α and β, each at level 1 − (1 − c)/2 so that both hold jointly with
  probability ≥ c (union bound). The threshold is either chosen on a separate
  *selection* split (``selection="split"``) or taken as the best of K
  thresholds fixed in advance with a Bonferroni correction (levels
  1 − (1 − c)/(2K), ``selection="bonferroni"``).
* :func:`gdp_bound` — for mechanisms whose trade-off curve is Gaussian, G_μ
  (Nasr et al. 2023, "Tight auditing of differentially private machine
  learning", §4). If T ≥ G_μ then Φ⁻¹(1 − α) − Φ⁻¹(β) ≤ μ for every test, so
  μ̲ = Φ⁻¹(1 − ᾱ) − Φ⁻¹(β̄) is a lower bound on μ, and ε̲ = ε_{μ̲}(δ) (the
  exact Gaussian profile) a lower bound on ε *under the Gaussian-trade-off
  assumption*. It is far tighter than (1) because it uses the centre of the
  ROC curve, where binomial rates are estimated to O(n^{−1/2}) absolutely.
* :func:`one_run_bound` — Steinke, Nasr & Jagielski (2023), "Privacy auditing
  with one (1) training run", Thm 3.1 / Alg. 2: m canaries included
  independently with probability ½, r guesses, v correct. Under (ε, δ)-DP,
  P[V ≥ v] ≤ P[Bin(r, e^ε/(1 + e^ε)) ≥ v] + 2mδ·max_{i≥1} P[v − i ≤ Bin < v]/i.
* :func:`dkw_band` — a simultaneous band for the whole empirical trade-off
  curve from the Dvoretzky–Kiefer–Wolfowitz inequality with Massart's
  constant: P(sup_t |F̂_n(t) − F(t)| > e) ≤ 2 exp(−2 n e²).

All functions are vectorised over thresholds (sorting + ``searchsorted``).

The module is ~580 lines because the estimators share one threshold-selection and
rate-bound engine (:func:`select_threshold`, :func:`epsilon_bound`); splitting it would
split that engine from the bounds it serves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from dp_accounting import get_epsilon_gaussian
from scipy.special import betaincinv, ndtri
from scipy.stats import binom

from privaudit.mechanisms.validation import (
    InvalidInputError,
    InvalidParameterError,
    check_array,
    check_delta,
    check_int,
    check_interval,
)

SELECTIONS = ("split", "bonferroni")
#: Selection rates are replaced by upper bounds at this level (≈ ½ sigma) before the cross-validated
#: choice of a threshold (measured: 0.5 let a tail threshold of Laplace ε = 0.1 win on one seed in
#: three; 0.9 lost 5-15 % of ε̲ on Gaussians at n = 1e6).
_SELECT_LEVEL = 0.7
#: Attackers of a suite are ranked on the whole selection split at this milder level (Φ(1)), so
#: that a rare but perfect leak (tens of hits, no false positive) is not lost to a bulk attacker.
RANK_LEVEL = 0.8413
_POOL_TOP = 24  # forward × reverse candidates examined for pooling


# --- binomial bounds ---------------------------------------------------------------------------
def clopper_pearson_upper(k, n, level: float) -> np.ndarray:
    """One-sided Clopper–Pearson upper bound on a binomial rate at confidence ``level``.

    The bound p̄ solves P[Bin(n, p̄) ≤ k] = 1 − level, i.e. p̄ = B⁻¹(level; k + 1, n − k)
    (beta quantile); it is 1 when k = n. ``k`` may be non-integer (expected counts
    scaled to another sample size, used when choosing a threshold).
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        ub = betaincinv(k + 1, np.maximum(n - k, 1e-300), level)
    return np.where(k >= n, 1.0, ub)


def clopper_pearson_lower(k, n, level: float) -> np.ndarray:
    """One-sided Clopper–Pearson lower bound: 1 − upper bound on the complementary rate."""
    n = np.asarray(n, dtype=float)
    return 1.0 - clopper_pearson_upper(n - np.asarray(k, dtype=float), n, level)


# --- the DP inequality -------------------------------------------------------------------------
def epsilon_from_rates(fpr, fnr, delta: float) -> np.ndarray:
    """ε(α, β; δ) of eq. (1): the smallest ε consistent with a test of rates (α, β).

    Vectorised; 0 where the rates are consistent with ε = 0, ``inf`` where a rate
    is 0 and the other is below 1 − δ.
    """
    a = np.asarray(fpr, dtype=float)
    b = np.asarray(fnr, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        e1 = np.log(np.maximum(1 - delta - b, 0.0)) - np.log(a)
        e2 = np.log(np.maximum(1 - delta - a, 0.0)) - np.log(b)
    e = np.fmax(e1, e2)
    return np.where(np.isnan(e), 0.0, np.maximum(e, 0.0))


def mu_from_rates(fpr, fnr) -> np.ndarray:
    """μ(α, β) = Φ⁻¹(1 − α) − Φ⁻¹(β): the GDP parameter whose G_μ passes through (α, β), floored at 0."""
    a = np.clip(np.asarray(fpr, dtype=float), 0.0, 1.0)
    b = np.clip(np.asarray(fnr, dtype=float), 0.0, 1.0)
    with np.errstate(invalid="ignore"):
        mu = ndtri(1 - a) - ndtri(b)
    return np.where(np.isnan(mu), 0.0, np.maximum(mu, 0.0))


def gdp_epsilon(mu: float, delta: float) -> float:
    """ε at δ of the exact μ-GDP profile (dp_accounting's analytic Gaussian); 0 for μ = 0."""
    if mu <= 0:
        return 0.0
    if math.isinf(mu):
        return math.inf
    return float(get_epsilon_gaussian(1.0 / mu, delta))


# --- ROC by sorting ----------------------------------------------------------------------------
def _scores(name: str, s) -> np.ndarray:
    s = np.asarray(s, dtype=float).ravel()
    if s.size == 0:
        raise InvalidInputError(f"{name} must be non-empty")
    if np.isnan(s).any():
        raise InvalidInputError(f"{name} contains NaN scores")
    return s


def error_counts(scores0, scores1, thresholds, *, presorted: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """False-positive and false-negative *counts* of the tests ``score > t`` for each threshold.

    ``fp[t] = #{scores0 > t}``, ``fn[t] = #{scores1 ≤ t}``; O((n + K) log n) by sorting
    (skipped with ``presorted=True``).
    """
    s0 = np.asarray(scores0, float) if presorted else np.sort(_scores("scores0", scores0))
    s1 = np.asarray(scores1, float) if presorted else np.sort(_scores("scores1", scores1))
    t = np.asarray(thresholds, dtype=float)
    fp = s0.size - np.searchsorted(s0, t, side="right")
    fn = np.searchsorted(s1, t, side="right")
    return fp, fn


def empirical_curve(scores0, scores1, max_points: int = 512, *, presorted: bool = False):
    """The empirical trade-off curve (FPR, FNR) of the threshold tests, and their thresholds.

    Thresholds are −inf (reject everything) plus scores at ~``max_points`` ranks:
    log-spaced from the top of the null scores and from the bottom of the
    alternative scores (so both tails, where ε is decided, stay resolved) and
    linearly spaced in between. Every returned vertex is an exact empirical
    (FPR, FNR) pair; the curve is sorted by increasing FPR.
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


def candidate_thresholds(scores0, scores1, k: int = 256, spacing: str = "tails") -> np.ndarray:
    """About K thresholds at pooled-score quantiles, with their distinct neighbours (all values if fewer).

    ``spacing="tails"`` log-spaces the ranks towards both ends (ε at small δ is
    decided in the tails) and adds K/2 evenly spaced ranks (small ε is decided near the
    median); ``"linear"`` spaces them evenly, for the GDP estimator,
    whose information is in the centre of the curve and whose tail candidates
    would only add selection noise.
    """
    pooled = np.sort(np.concatenate([_scores("scores0", scores0), _scores("scores1", scores1)]))
    uniq = np.unique(pooled)
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
    if estimator == "gdp":
        return mu_from_rates(a_ub, b_ub), a_ub, b_ub
    with np.errstate(divide="ignore"):
        eps = np.log(np.maximum(1 - delta - b_ub, 1e-300)) - np.log(a_ub)
    if not clip:
        return np.nan_to_num(eps, nan=-np.inf), a_ub, b_ub
    return np.maximum(np.nan_to_num(eps, nan=0.0, neginf=0.0), 0.0), a_ub, b_ub


def _reverse_counts(s0, s1, r):
    """Counts of the reverse tests ``score < r`` of x′ (null) against x: FP out of n1, FN out of n0."""
    return np.searchsorted(s1, r, side="left"), s0.size - np.searchsorted(s0, r, side="left")


@dataclass(frozen=True)
class Selection:
    """What the selection split chose: the direction and thresholds, and the criterion value."""

    criterion: float
    direction: str
    threshold: float
    reverse_threshold: float


def select_threshold(
    select0, select1, n0_eval: int, n1_eval: int, *, delta: float, confidence: float, estimator: str,
    n_thresholds: int = 256, select_level: float = _SELECT_LEVEL, cross_validate: bool = True,
) -> Selection:
    """Choose the test on the selection split.

    The criterion of a test is the bound (ε̲ for Clopper–Pearson, μ̲ for GDP) it
    would give if its selection-split rates held, as expected counts, on an
    evaluation split of sizes ``(n0_eval, n1_eval)``, after replacing the selection
    rates by upper bounds at ``select_level``; it is computed on both halves of the
    selection split and the smaller value is kept (cross-validated against the
    winner's curse). The best forward threshold,
    the best reverse threshold and their pooled test are compared and the best is
    returned. Also used to pick the best attacker of a suite; the evaluation split
    is never looked at.
    """
    raw0, raw1 = _scores("select0", select0), _scores("select1", select1)
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
    parts = ((raw0[0::2], raw1[0::2]), (raw0[1::2], raw1[1::2])) if cross_validate else ((raw0, raw1),) * 2
    for h0, h1 in parts:
        h0, h1 = np.sort(h0), np.sort(h1)
        m0, m1 = h0.size, h1.size
        fp, fn = error_counts(h0, h1, cands, presorted=True)
        rfp, rfn = _reverse_counts(h0, h1, cands)
        lv = select_level
        halves.append((clopper_pearson_upper(fp, m0, lv) * n0_eval, clopper_pearson_upper(fn, m1, lv) * n1_eval,
                       clopper_pearson_upper(rfp, m1, lv) * n1_eval, clopper_pearson_upper(rfn, m0, lv) * n0_eval))

    def crit(kind, idx_f=None, idx_r=None):
        vals = []
        for fp, fn, rfp, rfn in halves:
            if kind == "forward":
                vals.append(_value(fp, fn, n0_eval, n1_eval, level, delta, estimator, clip=False)[0])
            elif kind == "reverse":
                vals.append(_value(rfp, rfn, n1_eval, n0_eval, level, delta, estimator, clip=False)[0])
            else:
                pfp = fp[idx_f][:, None] + rfp[idx_r][None, :]
                pfn = fn[idx_f][:, None] + rfn[idx_r][None, :]
                vals.append(_value(pfp, pfn, n0_eval + n1_eval, n0_eval + n1_eval, level, delta, estimator,
                                   clip=False)[0])
        return np.minimum(vals[0], vals[1])

    crit_f, crit_r = crit("forward"), crit("reverse")
    i, j = int(np.argmax(crit_f)), int(np.argmax(crit_r))
    # Pooled tests: every pair of the _POOL_TOP best forward and reverse candidates.
    top_f = np.argsort(crit_f)[-_POOL_TOP:]
    top_r = np.argsort(crit_r)[-_POOL_TOP:]
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


def epsilon_bound(
    sel0, sel1, ev0, ev1, *, delta: float, confidence: float, selection: str = "split",
    estimator: str = "clopper-pearson", n_thresholds: int = 256, presorted: bool = False,
) -> RateBound:
    """ε̲ (and μ̲ for GDP) from selection scores ``sel0/sel1`` and evaluation scores ``ev0/ev1``.

    The engine behind :func:`clopper_pearson_bound` and :func:`gdp_bound`, which
    validate their arguments; ``presorted=True`` skips sorting ``ev0``/``ev1``
    (they must then be sorted ascending). With ``selection="split"`` the test
    chosen by :func:`select_threshold` is evaluated once at joint level c; with
    ``"bonferroni"`` each of the K candidates is evaluated in both directions, every
    rate bound at level 1 − (1 − c)/(4K).
    """
    if estimator not in ("clopper-pearson", "gdp"):
        raise InvalidParameterError(f"estimator must be 'clopper-pearson' or 'gdp', got estimator={estimator!r}")
    if selection not in SELECTIONS:
        raise InvalidParameterError(f"selection must be one of {SELECTIONS}, got selection={selection!r}")
    if not presorted:
        ev0, ev1 = np.sort(_scores("scores0", ev0)), np.sort(_scores("scores1", ev1))
    n0, n1 = ev0.size, ev1.size
    common = dict(delta=delta, confidence=confidence, estimator=estimator, selection=selection, n0=n0, n1=n1)
    if selection == "split":
        level = 1 - (1 - confidence) / 2
        sel = select_threshold(sel0, sel1, n0, n1, delta=delta, confidence=confidence, estimator=estimator,
                               n_thresholds=n_thresholds)
        fp, fn = error_counts(ev0, ev1, [sel.threshold], presorted=True)
        rfp, rfn = _reverse_counts(ev0, ev1, np.array([sel.reverse_threshold]))
        if sel.direction == "forward":
            cfp, cfn, nfp, nfn = fp[0], fn[0], n0, n1
        elif sel.direction == "reverse":
            cfp, cfn, nfp, nfn = rfp[0], rfn[0], n1, n0
        else:
            cfp, cfn, nfp, nfn = fp[0] + rfp[0], fn[0] + rfn[0], n0 + n1, n0 + n1
        value, a_ub, b_ub = _value(cfp, cfn, nfp, nfn, level, delta, estimator)
        eps, mu = _finish(value, delta=delta, estimator=estimator)
        return RateBound(
            epsilon=eps, threshold=sel.threshold, fpr=float(cfp / nfp), fnr=float(cfn / nfn),
            fpr_upper=float(a_ub), fnr_upper=float(b_ub), mu=mu, direction=sel.direction,
            reverse_threshold=sel.reverse_threshold if sel.direction != "forward" else None, **common,
        )
    # Bonferroni: every candidate threshold in both directions, 2K tests, each rate at 1 − (1 − c)/(4K).
    spacing = "linear" if estimator == "gdp" else "tails"
    cands = candidate_thresholds(sel0, sel1, n_thresholds, spacing)
    level = 1 - (1 - confidence) / (4 * cands.size)
    fp, fn = error_counts(ev0, ev1, cands, presorted=True)
    rfp, rfn = _reverse_counts(ev0, ev1, cands)
    vf, af, bf = _value(fp, fn, n0, n1, level, delta, estimator)
    vr, ar, br = _value(rfp, rfn, n1, n0, level, delta, estimator)
    i, j = int(np.argmax(vf)), int(np.argmax(vr))
    if vf[i] >= vr[j]:
        eps, mu = _finish(vf[i], delta=delta, estimator=estimator)
        return RateBound(epsilon=eps, threshold=float(cands[i]), fpr=float(fp[i] / n0), fnr=float(fn[i] / n1),
                         fpr_upper=float(af[i]), fnr_upper=float(bf[i]), mu=mu, direction="forward", **common)
    eps, mu = _finish(vr[j], delta=delta, estimator=estimator)
    return RateBound(epsilon=eps, threshold=float(cands[j]), fpr=float(rfp[j] / n1), fnr=float(rfn[j] / n0),
                     fpr_upper=float(ar[j]), fnr_upper=float(br[j]), mu=mu, direction="reverse",
                     reverse_threshold=float(cands[j]), **common)


def clopper_pearson_bound(
    select0, select1, eval0, eval1, *, delta: float, confidence: float = 0.95,
    selection: str = "split", n_thresholds: int = 256,
) -> RateBound:
    """Lower confidence bound on ε at δ from eq. (1) with Clopper–Pearson rate bounds.

    Parameters
    ----------
    select0, select1 : array
        Scores under x and x′ used only to choose the threshold(s).
    eval0, eval1 : array
        Independent scores under x and x′ on which the bound is computed.
    delta : float
        δ ≥ 0 at which ε is bounded (the claim's δ).
    confidence : float
        Joint confidence c: P(ε̲ ≤ ε_true) ≥ c.
    selection : {"split", "bonferroni"}
        ``"split"``: the threshold maximising the (size-rescaled) bound on the
        selection scores is evaluated once. ``"bonferroni"``: all
        ``n_thresholds`` candidates (pooled quantiles of the selection scores) are
        evaluated with each rate bound at level 1 − (1 − c)/(2K).
    """
    return epsilon_bound(select0, select1, eval0, eval1, delta=check_delta(delta, allow_zero=True),
                  confidence=_check_confidence(confidence), selection=selection, estimator="clopper-pearson",
                  n_thresholds=check_int("n_thresholds", n_thresholds))


def gdp_bound(
    select0, select1, eval0, eval1, *, delta: float, confidence: float = 0.95,
    selection: str = "split", n_thresholds: int = 256,
) -> RateBound:
    """Lower confidence bound on μ, and on ε at δ, assuming a Gaussian trade-off (Nasr et al. 2023).

    Same splits and threshold selection as :func:`clopper_pearson_bound`; the
    operating point maximises μ̲ = Φ⁻¹(1 − ᾱ) − Φ⁻¹(β̄). Valid for mechanisms whose
    trade-off curve is G_μ for some μ (Gaussian, Gaussian steps, the modulated
    release with its phase known); for other mechanisms ε̲ may exceed the true ε.
    """
    return epsilon_bound(select0, select1, eval0, eval1, delta=check_delta(delta, allow_zero=True),
                  confidence=_check_confidence(confidence), selection=selection, estimator="gdp",
                  n_thresholds=check_int("n_thresholds", n_thresholds))


# --- simultaneous band -------------------------------------------------------------------------
def dkw_halfwidth(n: int, failure: float) -> float:
    """e with P(sup_t |F̂_n(t) − F(t)| > e) ≤ ``failure`` (DKW–Massart): sqrt(ln(2/failure)/(2n))."""
    return math.sqrt(math.log(2 / failure) / (2 * n))


def dkw_band(fpr, fnr, n0: int, n1: int, alpha, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Simultaneous band for the trade-off curve of the threshold tests of one score.

    With probability ≥ c (c split equally between the two DKW events), every
    true (α_t, β_t) lies within (e₀, e₁) of its empirical vertex, so for every α

        β̂(α + e₀) − e₁ ≤ T(α) ≤ β̂(α − e₀) + e₁,

    where β̂ is the (non-increasing) empirical curve interpolated in α and T the
    trade-off curve of the threshold-test family. Returns ``(lower, upper)`` on the
    grid ``alpha``, clipped to [0, 1].
    """
    c = _check_confidence(confidence)
    e0 = dkw_halfwidth(n0, (1 - c) / 2)
    e1 = dkw_halfwidth(n1, (1 - c) / 2)
    a = np.asarray(fpr, dtype=float)
    b = np.asarray(fnr, dtype=float)
    order = np.argsort(a, kind="stable")
    a, b = a[order], b[order]
    grid = np.asarray(alpha, dtype=float)

    def curve(q):  # FNR of the (randomised) threshold tests at FPR q: linear between vertices
        return np.interp(np.clip(q, 0, 1), a, b, left=1.0, right=0.0)

    lower = np.clip(curve(grid + e0) - e1, 0.0, 1.0)
    upper = np.clip(curve(grid - e0) + e1, 0.0, 1.0)
    upper = np.where(grid - e0 < 0, 1.0, upper)
    return lower, upper


# --- one run (Steinke, Nasr & Jagielski 2023) ------------------------------------------------
def one_run_p_value(m: int, r: int, v: int, epsilon: float, delta: float = 0.0) -> float:
    """P-value of "v of r guesses correct" under (ε, δ)-DP with m canaries (Steinke et al. 2023, Alg. 2).

    β = P[Bin(r, q) ≥ v] with q = e^ε/(1 + e^ε), plus the δ term
    2mδ·max_{1≤i≤v} P[v − i ≤ Bin(r, q) < v]/i (vectorised over i).
    """
    if not 0 <= v <= r <= m:
        raise InvalidParameterError(f"need 0 <= v <= r <= m, got m={m}, r={r}, v={v}")
    q = 1.0 / (1.0 + math.exp(-epsilon))
    beta = float(binom.sf(v - 1, r, q))
    if delta > 0 and v > 0:
        pmf = binom.pmf(np.arange(v - 1, -1, -1), r, q)  # P[Bin = v − i], i = 1..v
        alpha = float(np.max(np.cumsum(pmf) / np.arange(1, v + 1)))
        beta += 2 * m * delta * alpha
    return min(beta, 1.0)


def one_run_epsilon(m: int, r: int, v: int, delta: float, confidence: float = 0.95) -> float:
    """Largest ε rejected at level 1 − c by :func:`one_run_p_value` (bisection; 0 if none)."""
    p = 1 - _check_confidence(confidence)
    if one_run_p_value(m, r, v, 0.0, delta) >= p:
        return 0.0
    lo, hi = 0.0, 1.0
    while one_run_p_value(m, r, v, hi, delta) < p:
        lo, hi = hi, 2 * hi
        if hi > 1e3:
            return math.inf
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        if one_run_p_value(m, r, v, mid, delta) < p:
            lo = mid
        else:
            hi = mid
    return lo


@dataclass(frozen=True)
class OneRunBound:
    """Result of the one-run audit: ε̲ and the guesses it rests on."""

    epsilon: float
    delta: float
    confidence: float
    m: int
    guesses: int
    correct: int
    k: int


def one_run_bound(scores, signs, *, delta: float, confidence: float = 0.95, k=None) -> OneRunBound:
    """ε lower bound from one run with m canaries (Steinke, Nasr & Jagielski 2023).

    Parameters
    ----------
    scores : array (m,)
        Attack score of each canary; higher means "the canary was included" (S_i = +1).
    signs : array (m,) of ±1
        The true inclusion bits S_i, drawn independently and uniformly *before* training.
    k : int or sequence of int, optional
        Guess +1 for the k highest and −1 for the k lowest scores, abstain on the rest.
        Given a sequence, each k is tried and the best bound reported with a
        Bonferroni correction over the sequence. Default: m//10 (at least 1).
    """
    s = _scores("scores", scores)
    sg = check_array("signs", signs, ndim=1)
    if sg.size != s.size or not np.all(np.isin(sg, (-1.0, 1.0))):
        raise InvalidInputError(f"signs must be ±1 with the length of scores ({s.size}), got shape {sg.shape}")
    m = s.size
    ks = [max(1, m // 10)] if k is None else list(np.atleast_1d(k))
    for kk in ks:
        check_int("k", int(kk))
        if 2 * kk > m:
            raise InvalidParameterError(f"k must satisfy 2k <= m={m}, got k={kk}")
    c = _check_confidence(confidence)
    c_each = 1 - (1 - c) / len(ks)
    order = np.argsort(s, kind="stable")
    best = None
    for kk in ks:  # a handful of k values, not samples
        kk = int(kk)
        correct = int(np.sum(sg[order[-kk:]] == 1) + np.sum(sg[order[:kk]] == -1))
        eps = one_run_epsilon(m, 2 * kk, correct, delta, c_each)
        if best is None or eps > best.epsilon:
            best = OneRunBound(eps, delta, c, m, 2 * kk, correct, kk)
    return best
