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

The binomial bounds, error counts and the threshold selection itself live in
:mod:`privaudit.attacks.threshold_selection` (choosing a test is the last step of an attack,
and attackers use it for model selection); they are re-exported here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import binom

from privaudit.mechanisms.validation import (
    InvalidInputError,
    InvalidParameterError,
    check_array,
    check_delta,
    check_int,
)

from privaudit.attacks.threshold_selection import (
    LLR_SELECTION,
    RANK_LEVEL,
    RateBound,
    Selection,
    SELECTIONS,
    _check_confidence,
    _finish,
    _reverse_counts,
    _scores,
    _value,
    candidate_thresholds,
    chosen_test_counts,
    clopper_pearson_lower,
    clopper_pearson_upper,
    empirical_curve,
    epsilon_from_rates,
    error_counts,
    mu_from_rates,
    select_threshold,
)
from privaudit.mechanisms.accounting import gdp_epsilon



def epsilon_bound(sel0: ArrayLike, sel1: ArrayLike, ev0: ArrayLike, ev1: ArrayLike, *, delta: float,
                  confidence: float, selection: str = "split", estimator: str = "clopper-pearson",
                  n_thresholds: int = 256, presorted: bool = False, log_likelihood_ratio: bool = False) -> RateBound:
    """ε̲ (and μ̲ for GDP) from selection scores ``sel0/sel1`` and evaluation scores ``ev0/ev1``.

    The engine behind :func:`clopper_pearson_bound` and :func:`gdp_bound`, which
    validate their arguments; ``presorted=True`` skips sorting ``ev0``/``ev1``
    (they must then be sorted ascending; unsorted ones are sorted only for ``"bonferroni"``:
    the split test's two counts are counted directly). With ``selection="split"`` the test
    chosen by :func:`select_threshold` is evaluated once at joint level c; with
    ``"bonferroni"`` each of the K candidates is evaluated in both directions, every
    rate bound at level 1 − (1 − c)/(4K). ``log_likelihood_ratio=True`` says the scores
    are exact log-likelihood ratios: the split selection then estimates rates from the
    pooled selection scores (:data:`LLR_SELECTION`); the evaluation is unchanged.

    Parameters
    ----------
    sel0 : array-like
        Selection-split scores under x (choose the test only).
    sel1 : array-like
        Selection-split scores under x′.
    ev0 : array-like
        Evaluation-split scores under x (sorted ascending with ``presorted``).
    ev1 : array-like
        Evaluation-split scores under x′.
    delta : float
        δ ≥ 0 at which ε is bounded.
    confidence : float
        Joint confidence c in (0, 1).
    selection : {"split", "bonferroni"}
        How the test is chosen (see above).
    estimator : {"clopper-pearson", "gdp"}
        ε̲ from eq. (1), or μ̲ of a Gaussian trade-off converted to ε at δ.
    n_thresholds : int
        Number K of candidate thresholds.
    presorted : bool
        ``ev0``/``ev1`` are sorted float arrays already.
    log_likelihood_ratio : bool
        The scores are exact log-likelihood ratios.

    Returns
    -------
    RateBound
        The bound and the operating point it was read from.

    Raises
    ------
    InvalidParameterError
        For an unknown estimator or selection.
    InvalidInputError
        For empty or NaN scores.
    """
    if estimator not in ("clopper-pearson", "gdp"):
        raise InvalidParameterError(f"estimator must be 'clopper-pearson' or 'gdp', got estimator={estimator!r}")
    if selection not in SELECTIONS:
        raise InvalidParameterError(f"selection must be one of {SELECTIONS}, got selection={selection!r}")
    if not presorted:
        ev0, ev1 = _scores("scores0", ev0), _scores("scores1", ev1)
        if selection != "split":  # one chosen test is counted directly below: no sort needed
            ev0, ev1 = np.sort(ev0), np.sort(ev1)
            presorted = True
    n0, n1 = ev0.size, ev1.size
    plan = plan_test(sel0, sel1, n0, n1, delta=delta, confidence=confidence, selection=selection,
                     estimator=estimator, n_thresholds=n_thresholds, log_likelihood_ratio=log_likelihood_ratio)
    if selection == "split" and not presorted:
        fp, fn, rfp, rfn = ([c] for c in chosen_test_counts(ev0, ev1, plan.forward[0], plan.reverse[0]))
    else:
        fp, fn = error_counts(ev0, ev1, plan.forward, presorted=True)
        rfp, rfn = _reverse_counts(ev0, ev1, plan.reverse)
    return bound_from_counts(plan, fp, fn, rfp, rfn, n0, n1)


@dataclass(frozen=True)
class ChosenTests:
    """The tests chosen on the selection split, to be counted on the evaluation releases.

    :func:`epsilon_bound` counts them on scores in memory; the streamed certification
    (:mod:`privaudit.audit.engines.streaming`) counts them chunk by chunk. Both turn the counts
    into the bound with :func:`bound_from_counts`, so equal counts give equal bounds.

    Attributes
    ----------
    selection : {"split", "bonferroni"}
        How the test was chosen.
    forward : ndarray
        Thresholds t of the forward tests ``score > t`` to count (one for ``"split"``).
    reverse : ndarray
        Thresholds r of the reverse tests ``score < r`` to count (one for ``"split"``).
    chosen : Selection or None
        The split selection's choice (its direction); None for ``"bonferroni"``.
    delta, confidence : float
        δ and the joint confidence of the bound.
    estimator : {"clopper-pearson", "gdp"}
        How the bound is computed.
    """

    selection: str
    forward: np.ndarray
    reverse: np.ndarray
    chosen: Selection | None
    delta: float
    confidence: float
    estimator: str


def plan_test(sel0: ArrayLike, sel1: ArrayLike, n0: int, n1: int, *, delta: float, confidence: float,
              selection: str = "split", estimator: str = "clopper-pearson", n_thresholds: int = 256,
              log_likelihood_ratio: bool = False) -> ChosenTests:
    """The test(s) :func:`epsilon_bound` evaluates: chosen on the selection scores for ``n0``/``n1`` evaluation releases.

    Parameters
    ----------
    sel0, sel1 : array-like
        Selection-split scores under x and x′.
    n0, n1 : int
        Evaluation releases under x and x′ (the split selection's criterion depends on them).
    delta, confidence, selection, estimator, n_thresholds, log_likelihood_ratio
        As in :func:`epsilon_bound`.

    Returns
    -------
    ChosenTests
    """
    if selection == "split":
        sel = select_threshold(sel0, sel1, n0, n1, delta=delta, confidence=confidence, estimator=estimator,
                               n_thresholds=n_thresholds, log_likelihood_ratio=log_likelihood_ratio,
                               **(LLR_SELECTION if log_likelihood_ratio else {}))
        return ChosenTests(selection, np.array([sel.threshold]), np.array([sel.reverse_threshold]), sel, delta,
                        confidence, estimator)
    spacing = "linear" if estimator == "gdp" else "tails"
    cands = candidate_thresholds(sel0, sel1, n_thresholds, spacing)
    return ChosenTests(selection, cands, cands, None, delta, confidence, estimator)


def bound_from_counts(plan: ChosenTests, fp: ArrayLike, fn: ArrayLike, rfp: ArrayLike, rfn: ArrayLike, n0: int,
                      n1: int) -> RateBound:
    """The bound of ``plan``'s tests from their error counts on ``n0``/``n1`` evaluation releases.

    Parameters
    ----------
    plan : ChosenTests
        The tests (:func:`plan_test`).
    fp, fn : array-like of int
        ``#{ev0 > t}`` and ``#{ev1 ≤ t}`` at each of ``plan.forward``.
    rfp, rfn : array-like of int
        ``#{ev1 < r}`` and ``#{ev0 ≥ r}`` at each of ``plan.reverse``.
    n0, n1 : int
        Evaluation releases under x and x′.

    Returns
    -------
    RateBound
        With ``"split"`` the chosen test at joint level c; with ``"bonferroni"`` the best of the
        2K tests, every rate bound at level 1 − (1 − c)/(4K).
    """
    delta, confidence, estimator, selection = plan.delta, plan.confidence, plan.estimator, plan.selection
    common = dict(delta=delta, confidence=confidence, estimator=estimator, selection=selection, n0=n0, n1=n1)
    if selection == "split":
        level = 1 - (1 - confidence) / 2
        sel = plan.chosen
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
    cands = plan.forward
    fp, fn, rfp, rfn = (np.asarray(c) for c in (fp, fn, rfp, rfn))
    level = 1 - (1 - confidence) / (4 * cands.size)
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


def clopper_pearson_bound(select0: ArrayLike, select1: ArrayLike, eval0: ArrayLike, eval1: ArrayLike, *,
                          delta: float, confidence: float = 0.95, selection: str = "split",
                          n_thresholds: int = 256) -> RateBound:
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
    n_thresholds : int
        Number K of candidate thresholds.

    Returns
    -------
    RateBound
        ε̲ and the operating point it was read from.
    """
    return epsilon_bound(select0, select1, eval0, eval1, delta=check_delta(delta, allow_zero=True),
                  confidence=_check_confidence(confidence), selection=selection, estimator="clopper-pearson",
                  n_thresholds=check_int("n_thresholds", n_thresholds))


def gdp_bound(select0: ArrayLike, select1: ArrayLike, eval0: ArrayLike, eval1: ArrayLike, *, delta: float,
              confidence: float = 0.95, selection: str = "split", n_thresholds: int = 256) -> RateBound:
    """Lower confidence bound on μ, and on ε at δ, assuming a Gaussian trade-off (Nasr et al. 2023).

    Same splits and threshold selection as :func:`clopper_pearson_bound`; the
    operating point maximises μ̲ = Φ⁻¹(1 − ᾱ) − Φ⁻¹(β̄). Valid for mechanisms whose
    trade-off curve is G_μ for some μ (Gaussian, Gaussian steps, the modulated
    release with its phase known); for other mechanisms ε̲ may exceed the true ε.

    Parameters
    ----------
    select0 : array-like
        Scores under x that choose the threshold(s).
    select1 : array-like
        Scores under x′ that choose the threshold(s).
    eval0 : array-like
        Independent scores under x on which the bound is computed.
    eval1 : array-like
        Independent scores under x′.
    delta : float
        δ ≥ 0 at which the ε̲ of μ̲ is read.
    confidence : float
        As for :func:`clopper_pearson_bound`.
    selection : {"split", "bonferroni"}
        As for :func:`clopper_pearson_bound`.
    n_thresholds : int
        As for :func:`clopper_pearson_bound`.

    Returns
    -------
    RateBound
        With ``mu`` set.
    """
    return epsilon_bound(select0, select1, eval0, eval1, delta=check_delta(delta, allow_zero=True),
                  confidence=_check_confidence(confidence), selection=selection, estimator="gdp",
                  n_thresholds=check_int("n_thresholds", n_thresholds))


# --- simultaneous band -------------------------------------------------------------------------
def dkw_halfwidth(n: int, failure: float) -> float:
    """e with P(sup_t |F̂_n(t) − F(t)| > e) ≤ ``failure`` (DKW–Massart): sqrt(ln(2/failure)/(2n)).

    Parameters
    ----------
    n : int
        Sample size.
    failure : float
        Failure probability in (0, 1).

    Returns
    -------
    float
        e.
    """
    return math.sqrt(math.log(2 / failure) / (2 * n))


def dkw_band(fpr: ArrayLike, fnr: ArrayLike, n0: int, n1: int, alpha: ArrayLike,
             confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Simultaneous band for the trade-off curve of the threshold tests of one score.

    With probability ≥ c (c split equally between the two DKW events), every
    true (α_t, β_t) lies within (e₀, e₁) of its empirical vertex, so for every α

        β̂(α + e₀) − e₁ ≤ T(α) ≤ β̂(α − e₀) + e₁,

    where β̂ is the (non-increasing) empirical curve interpolated in α and T the
    trade-off curve of the threshold-test family. Returns ``(lower, upper)`` on the
    grid ``alpha``, clipped to [0, 1].

    Parameters
    ----------
    fpr : array-like
        Empirical FPR of the threshold tests (the curve's vertices).
    fnr : array-like
        Their empirical FNR.
    n0 : int
        Scores under x.
    n1 : int
        Scores under x′.
    alpha : array-like
        Grid of type-I errors.
    confidence : float
        Joint confidence c of the band.
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

    Parameters
    ----------
    m : int
        Number of canaries.
    r : int
        Number of guesses made (r ≤ m).
    v : int
        Number of correct guesses (v ≤ r).
    epsilon : float
        The ε tested.
    delta : float
        δ ≥ 0 of the tested claim.

    Returns
    -------
    float
        In [0, 1].

    Raises
    ------
    InvalidParameterError
        Unless 0 ≤ v ≤ r ≤ m.
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
    """Largest ε rejected at level 1 − c by :func:`one_run_p_value` (bisection; 0 if none).

    Parameters
    ----------
    m : int
        Number of canaries.
    r : int
        Number of guesses made (r ≤ m).
    v : int
        Number of correct guesses (v ≤ r).
    delta : float
        δ ≥ 0 of the claim.
    confidence : float
        Joint confidence c in (0, 1).

    Returns
    -------
    float
        ε̲ ≥ 0 (``inf`` beyond 1000).
    """
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


def one_run_bound(scores: ArrayLike, signs: ArrayLike, *, delta: float, confidence: float = 0.95,
                  k: int | Sequence[int] | None = None) -> OneRunBound:
    """ε lower bound from one run with m canaries (Steinke, Nasr & Jagielski 2023).

    Parameters
    ----------
    scores : array (m,)
        Attack score of each canary; higher means "the canary was included" (S_i = +1).
    signs : array (m,) of ±1
        The true inclusion bits S_i, drawn independently and uniformly *before* training.
    delta : float
        δ ≥ 0 of the (ε, δ) claim tested.
    confidence : float
        c: P(ε̲ ≤ ε_true) ≥ c (split equally over the k values tried).
    k : int or sequence of int, optional
        Guess +1 for the k highest and −1 for the k lowest scores, abstain on the rest.
        Given a sequence, each k is tried and the best bound reported with a
        Bonferroni correction over the sequence. Default: m//10 (at least 1).

    Returns
    -------
    OneRunBound
        The best ε̲ over the k values and the guesses it rests on.

    Raises
    ------
    InvalidInputError
        When ``signs`` are not ±1 of the length of ``scores``.
    InvalidParameterError
        When some k has 2k > m.
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

#: Public names, including the threshold-selection statistics re-exported from
#: :mod:`privaudit.attacks.threshold_selection`.
__all__ = [
    "LLR_SELECTION", "RANK_LEVEL", "SELECTIONS", "OneRunBound", "RateBound", "Selection", "ChosenTests",
    "bound_from_counts", "clopper_pearson_bound",
    "clopper_pearson_lower", "clopper_pearson_upper", "dkw_band", "dkw_halfwidth", "empirical_curve",
    "epsilon_bound", "epsilon_from_rates", "gdp_bound", "gdp_epsilon", "mu_from_rates", "one_run_bound",
    "one_run_epsilon", "one_run_p_value", "plan_test", "select_threshold",
]
