"""One-run audits beyond Steinke et al.: the f-DP guessing-game bound and the Gaussian estimate.

Both read the same one-run experiment as :func:`~privaudit.audit.stats.epsilon_bounds.one_run_bound`:
m canaries, canary i included (S_i = +1) or not (S_i = −1) independently with probability ½
before training, one score per canary (higher: "included"). The auditor guesses +1 for the
k₊ highest scores and −1 for the k₋ lowest, abstains on the rest, and counts c correct of
c′ = k₊ + k₋ guesses.

f-DP bound (Mahloujifar, Melis & Chaudhuri, ICML 2025, "Auditing f-differential privacy in one run")
    If the mechanism is f-DP towards every canary, the probability of c or more correct
    guesses out of c′ is bounded through the *inverse blow-up* b⁻¹ of f: the least
    probability an event can have under one input when it has probability x under the
    neighbour (for μ-GDP, b⁻¹(x) = Φ(Φ⁻¹(x) − μ); for
    (ε, δ)-DP, b⁻¹(x) = max(0, (x − δ)e^{−ε})). With the level τ, the paper's recursion
    starts from the mass of the tail event split between correct and wrong guesses,
    h_c = τ(c′ − c)/m and r_c = τc/m, and walks down,

        h_i = max(h_{i+1}, b⁻¹(r_{i+1})),   r_i = r_{i+1} + i/(c′ − i)·(h_i − h_{i+1}),

    and "c of c′ correct with probability ≥ τ" is possible only if r_0 + h_0 ≤ c′/m (the
    guessing budget); when it is impossible, f-DP is rejected at level τ (:func:`fdp_consistent`).
    The recursion takes the form Meta's ``privacy_guard`` gives the paper's analysis (alphabet
    size 2), vectorised here over hypotheses; its validity is checked by simulation in the tests
    (an exactly μ-GDP game and randomised response are rejected at their true parameter at most
    at the nominal rate).
    Rejecting (ε, δ)-DP this way is a certified lower bound ε̲ at δ with no assumption on
    the mechanism (family ``"approx-dp"``); rejecting μ-GDP certifies that the mechanism is
    not μ̲-GDP, reported as ε_{μ̲}(δ), the ε of the rejected Gaussian curve (family
    ``"gdp"``: a certified statement about the curve, an ε lower bound only for mechanisms
    whose curve is Gaussian). The statistic is the same pair (c′, c) as Steinke et al.'s;
    the k₊ = k₋ grid is searched with a Bonferroni correction, like :func:`one_run_bound`.

Union with Steinke et al. (never below it on the same guesses)
    The recursion is not uniformly stronger than Steinke et al.'s binomial p-value: for pure
    ε-DP the binomial is exact (randomised response attains it) and the recursion is a little
    looser (80 of 100 correct: 0.943 against 0.958). Both bound the same probability
    P[W ≥ c] of the same count W under the same null, so the test that rejects when either
    rejects keeps the level τ: with R the union of the two rejection sets and c₀ = min R,
    P[W ∈ R] ≤ P[W ≥ c₀] < τ by whichever of the two bounds put c₀ in R. Both sets are
    intervals [0, ε̲] in ε, so the union's ε̲ is the larger of the two. A μ-GDP mechanism is
    (ε_μ(δ), δ)-DP, so the GDP test also rejects every μ whose ε_μ(δ) the (ε, δ) union
    rejects. Hence, on the same guesses and level: Steinke ≤ f-DP (ε, δ) ≤ f-DP GDP (as ε).

Gaussian estimate (in the spirit of Agrawal et al. 2026, "Let's Ask Gauss")
    In white-box DP-SGD a canary's score is a sum of many canary-aligned per-step signals,
    asymptotically Gaussian. Assuming the scores of included and excluded canaries are
    N(±μ/2, 1) after standardisation, μ̂ = (x̄₊ − x̄₋)/s_pooled (Cohen's d), with its
    large-sample standard error sqrt(1/n₊ + 1/n₋ + μ̂²/(2(n₊ + n₋))), gives
    μ̲ = μ̂ − z_c·se and ε̲ = ε_{μ̲}(δ). Labelled with its assumption: it is not a certified bound.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import ndtr, ndtri
from scipy.stats import norm

from privaudit.mechanisms.accounting import gdp_epsilon, gdp_sigma
from privaudit.mechanisms.validation import (
    InvalidInputError,
    InvalidParameterError,
    check_array,
    check_delta,
    check_int,
)

from privaudit.audit.stats.epsilon_bounds import one_run_epsilon

FAMILIES = ("approx-dp", "gdp")


def _check_confidence(confidence: float) -> float:
    c = float(confidence)
    if not 0.0 < c < 1.0:
        raise InvalidParameterError(f"confidence must lie in (0, 1), got confidence={confidence!r}")
    return c


def _inverse_blowup(family: str, params: np.ndarray, delta: float):
    """b⁻¹ for each hypothesis in ``params`` (μ for "gdp", ε for "approx-dp"), vectorised over them."""
    if family == "gdp":
        return lambda x: ndtr(ndtri(np.clip(x, 0.0, 1.0)) - params)
    if family == "approx-dp":
        # Both sides of the (ε, δ) curve: an event of probability x has probability ≥ (x − δ)e^{−ε} under
        # the neighbour, and its complement gives ≥ 1 − δ − e^ε(1 − x) (binding for x near 1).
        e = np.exp(params)
        return lambda x: np.maximum(np.maximum(0.0, (x - delta) / e), 1.0 - delta - e * np.clip(1.0 - x, 0.0, 1.0))
    raise InvalidParameterError(f"family must be one of {FAMILIES}, got family={family!r}")


def fdp_consistent(m: int, guesses: int, correct: int, params: ArrayLike, *, family: str = "gdp", delta: float = 0.0,
                   level: float = 0.05) -> np.ndarray:
    """Whether ``correct`` of ``guesses`` with probability ≥ ``level`` is possible under each hypothesis.

    Mahloujifar, Melis & Chaudhuri (2025): the recursion of the module docstring, run for every
    hypothesis in ``params`` at once (one pass over i = c − 1, …, 0 on arrays).

    Parameters
    ----------
    m, guesses, correct : int
        Canaries, guesses c′ (abstentions excluded) and correct guesses c, 0 ≤ c ≤ c′ ≤ m.
    params : float or array
        μ of each hypothesised μ-GDP curve (``family="gdp"``) or ε of each (ε, δ) curve (``"approx-dp"``).
    family : {"gdp", "approx-dp"}
    delta : float
        δ of the ``"approx-dp"`` hypotheses (ignored for ``"gdp"``).
    level : float
        Test level τ.

    Returns
    -------
    ndarray of bool, shape of ``params``
        False where the hypothesis is rejected at level τ.
    """
    m, guesses, correct = check_int("m", m), check_int("guesses", guesses, minimum=0), check_int("correct", correct,
                                                                                                  minimum=0)
    if not correct <= guesses <= m:
        raise InvalidParameterError(f"need 0 <= correct <= guesses <= m, got m={m}, guesses={guesses}, "
                                    f"correct={correct}")
    if not 0.0 < level < 1.0:
        raise InvalidParameterError(f"level must lie in (0, 1), got level={level!r}")
    params = np.asarray(params, dtype=float)
    inv = _inverse_blowup(family, params, check_delta(delta, allow_zero=True))
    if guesses == 0:
        return np.ones(params.shape, dtype=bool)
    t = level * guesses / m
    h = np.full(params.shape, t * (guesses - correct) / guesses)
    r = np.full(params.shape, t * correct / guesses)
    for i in range(correct - 1, -1, -1):  # a recursion in i: sequential by nature, vectorised over hypotheses
        h_new = np.maximum(h, inv(r))
        r = r + (i / (guesses - i)) * (h_new - h)
        h = h_new
    return r + h <= guesses / m


@dataclass(frozen=True)
class FDPOneRunBound:
    """Result of the f-DP one-run audit.

    Attributes
    ----------
    epsilon : float
        ε̲ at ``delta``: the rejected (ε, δ) curve (``"approx-dp"``) or ε_{μ̲}(δ) (``"gdp"``), from
        the union of the recursion's and Steinke et al.'s rejections (module docstring).
    mu : float or None
        μ̲, the largest rejected GDP parameter (``"gdp"`` only).
    family : str
    delta, confidence : float
    m, guesses, correct, k : int
        Canaries, guesses, correct guesses and k (k₊ = k₋ = k) of the best grid point.
    epsilon_recursion : float
        The recursion's own ε̲ (its family's curve, as ``epsilon``), before the union.
    epsilon_steinke : float
        Steinke et al.'s ε̲ on the same guesses at the same level.
    """

    epsilon: float
    mu: float | None
    family: str
    delta: float
    confidence: float
    m: int
    guesses: int
    correct: int
    k: int
    epsilon_recursion: float
    epsilon_steinke: float


def _largest_rejected(m: int, guesses: int, correct: int, family: str, delta: float, level: float,
                      upper: float) -> float:
    """Largest hypothesis parameter rejected (0 if none), to upper/256²: a grid, then a grid in its last step.

    Rejection is monotone in the parameter (a larger μ or ε allows more correct guesses), so the
    rejected set is an interval from 0; each grid is one vectorised pass of the recursion.
    """
    grid = np.linspace(0.0, upper, 257)
    ok = fdp_consistent(m, guesses, correct, grid, family=family, delta=delta, level=level)
    rejected = np.flatnonzero(~ok)
    if rejected.size == 0:
        return 0.0
    j = int(rejected[-1])
    if j == grid.size - 1:
        return upper
    fine = np.linspace(grid[j], grid[j + 1], 257)
    ok = fdp_consistent(m, guesses, correct, fine, family=family, delta=delta, level=level)
    return float(fine[np.flatnonzero(~ok)[-1]]) if (~ok).any() else float(grid[j])


def _ks(m: int, k) -> list[int]:
    ks = [max(1, m // 10)] if k is None else [int(x) for x in np.atleast_1d(k)]
    for kk in ks:
        check_int("k", kk)
        if 2 * kk > m:
            raise InvalidParameterError(f"k must satisfy 2k <= m={m}, got k={kk}")
    return ks


def _checked(scores, signs) -> tuple[np.ndarray, np.ndarray]:
    s = check_array("scores", scores, ndim=1)
    sg = check_array("signs", signs, ndim=1)
    if sg.size != s.size or not np.all(np.isin(sg, (-1.0, 1.0))):
        raise InvalidInputError(f"signs must be ±1 with the length of scores ({s.size}), got shape {sg.shape}")
    if not np.all(np.isfinite(s)):
        raise InvalidInputError("scores must be finite")
    return s, sg


def guess_counts(scores: ArrayLike, signs: ArrayLike, k: int) -> tuple[int, int]:
    """(guesses, correct) of guessing +1 for the k highest and −1 for the k lowest scores.

    Parameters
    ----------
    scores : array-like of shape (m,)
        Attack score per canary; higher means "included".
    signs : array-like of ±1, shape (m,)
        The true inclusion bits.
    k : int
        Guesses per side (2k ≤ m).

    Returns
    -------
    (int, int)
        The 2k guesses and how many match ``signs``.
    """
    s, sg = _checked(scores, signs)
    order = np.argsort(s, kind="stable")
    k = check_int("k", k)
    return 2 * k, int(np.sum(sg[order[-k:]] == 1) + np.sum(sg[order[:k]] == -1))


def one_run_fdp_bound(scores: ArrayLike, signs: ArrayLike, *, delta: float, confidence: float = 0.95,
                      k: int | Sequence[int] | None = None, family: str = "approx-dp") -> FDPOneRunBound:
    """ε̲ from one run with m canaries by the f-DP analysis of Mahloujifar, Melis & Chaudhuri (2025).

    Parameters
    ----------
    scores : array (m,)
        Attack score per canary; higher means "included".
    signs : array (m,) of ±1
        The inclusion bits, drawn uniformly and independently before training.
    delta : float
        δ of the reported ε̲ (and of the hypotheses of ``family="approx-dp"``).
    confidence : float
        c: the bound holds with probability ≥ c (Bonferroni over the k grid).
    k : int or sequence of int, optional
        Guesses per side; the best over the sequence is reported. Default m//10.
    family : {"approx-dp", "gdp"}
        Hypothesis family: (ε, δ)-DP (a certified ε̲, comparable to Steinke et al.'s), or μ-GDP
        (rejects μ̲-GDP; ε̲ = ε_{μ̲}(δ) is the ε of that curve).

    Returns
    -------
    FDPOneRunBound
    """
    s, sg = _checked(scores, signs)
    if family not in FAMILIES:
        raise InvalidParameterError(f"family must be one of {FAMILIES}, got family={family!r}")
    delta = check_delta(delta, allow_zero=family == "approx-dp")
    c = _check_confidence(confidence)
    m = s.size
    ks = _ks(m, k)
    level = (1 - c) / len(ks)
    best = None
    for kk in ks:  # a handful of k values
        guesses, correct = guess_counts(s, sg, kk)
        # Steinke et al.'s p-value and the recursion bound the same tail P[W ≥ c] under (ε, δ)-DP, so
        # rejecting when either rejects keeps the level (module docstring): ε̲ is the larger of the two.
        steinke = one_run_epsilon(m, guesses, correct, delta, 1 - level)
        approx = _largest_rejected(m, guesses, correct, "approx-dp", delta, level, upper=30.0)
        eps_dp = max(steinke, approx)
        if family == "gdp":
            mu_rec = _largest_rejected(m, guesses, correct, "gdp", delta, level, upper=20.0)
            # μ-GDP implies (ε_μ(δ), δ)-DP: every μ with ε_μ(δ) ≤ eps_dp is rejected as well.
            mu = max(mu_rec, 1.0 / gdp_sigma(eps_dp, delta) if 0 < eps_dp < math.inf else 0.0)
            # (max: ε_μ(δ) of μ = 1/σ(eps_dp) round-trips to eps_dp only up to the last float digits)
            eps, mu_out, rec = max(gdp_epsilon(mu, delta), eps_dp), mu, gdp_epsilon(mu_rec, delta)
        else:
            eps, mu_out, rec = eps_dp, None, approx
        if best is None or eps > best.epsilon:
            best = FDPOneRunBound(eps, mu_out, family, delta, c, m, guesses, correct, kk, rec, steinke)
    return best


@dataclass(frozen=True)
class GaussianOneRunEstimate:
    """The Gaussian one-run estimate (assumption: standardised scores are N(±μ/2, 1)).

    Attributes
    ----------
    epsilon : float
        ε_{μ̲}(δ), the lower confidence bound under the assumption.
    mu, mu_hat, se : float
        μ̲, the point estimate μ̂ and its standard error.
    delta, confidence : float
    n_in, n_out : int
    assumption : str
    """

    epsilon: float
    mu: float
    mu_hat: float
    se: float
    delta: float
    confidence: float
    n_in: int
    n_out: int
    assumption: str = "scores of included and excluded canaries are Gaussian with one variance (CLT over steps)"


def one_run_gaussian_estimate(scores: ArrayLike, signs: ArrayLike, *, delta: float,
                              confidence: float = 0.95) -> GaussianOneRunEstimate:
    """μ̲ and ε̲ = ε_{μ̲}(δ) from the standardised mean difference of the canaries' scores.

    Parameters
    ----------
    scores, signs : array (m,)
        As :func:`one_run_fdp_bound`; at least two canaries of each sign.
    delta : float
    confidence : float
        One-sided level of μ̲ (normal approximation).

    Returns
    -------
    GaussianOneRunEstimate
    """
    s, sg = _checked(scores, signs)
    delta = check_delta(delta)
    c = _check_confidence(confidence)
    x1, x0 = s[sg == 1], s[sg == -1]
    n1, n0 = x1.size, x0.size
    if min(n1, n0) < 2:
        raise InvalidInputError(f"need at least two canaries of each sign, got {n1} included and {n0} excluded")
    pooled = math.sqrt(((n1 - 1) * x1.var(ddof=1) + (n0 - 1) * x0.var(ddof=1)) / (n1 + n0 - 2))
    if pooled == 0:
        raise InvalidInputError("the scores have zero variance: the Gaussian estimate is undefined")
    mu_hat = (x1.mean() - x0.mean()) / pooled
    se = math.sqrt(1 / n1 + 1 / n0 + mu_hat**2 / (2 * (n1 + n0)))
    mu_lb = max(0.0, mu_hat - float(norm.ppf(c)) * se)
    return GaussianOneRunEstimate(gdp_epsilon(mu_lb, delta), mu_lb, float(mu_hat), se, delta, c, n1, n0)


__all__ = ["FAMILIES", "FDPOneRunBound", "GaussianOneRunEstimate", "fdp_consistent", "guess_counts",
           "one_run_fdp_bound", "one_run_gaussian_estimate"]
