"""Exact output laws of the bank's cases whose outputs are countable, and the most any audit certifies on them.

A Clopper–Pearson audit with n releases per hypothesis certifies at best what a test of the
true law would give if its true rates were observed as counts. Over all tests, randomised ones
included, the best rates lie on the Neyman–Pearson frontier: reject the outcomes in decreasing
order of their likelihood ratio, the last one with a probability. :func:`law_ceiling` reads the
best ε̲ (δ = 0) along that frontier, with each rate bounded at 1 − (1 − confidence)/2 and no
selection, split or Bonferroni share: what the best possible test certifies from n releases per
hypothesis at its expected counts, ours and DP-Sniper's alike. A realised ε̲ fluctuates around its
expectation, so one audit can exceed the ceiling by its sampling noise (measured: NoisyHist1 at
10⁷, 0.09891 against 0.09889). It tells "the attacker is weak" from "no audit of
this size can": DP-Sniper's published values (2·10⁸ samples) are out of reach at 10⁷ when the
ceiling is below them by more than that noise.

The laws (probability of every output of the pair's two inputs) are computed by quadrature
over the noise, independently of the samplers of :mod:`sniper_bank`, which
``tests/test_sniper_laws.py`` checks them against by Monte Carlo.

* SVT1 (Lyu et al. 2017, Alg. 1): given the threshold noise ρ the queries are independent, so
  the probability of a ⊤/⊥ pattern (up to the c-th ⊤, after which the loop stops) is
  ∫ f_ρ(r) Π_{answered i} p_i(r)^{⊤_i} (1 − p_i(r))^{1 − ⊤_i} dr with p_i(r) = P(x_i + ν_i ≥ T + r).
* SVT2 (Alg. 2): the threshold noise is drawn afresh after every ⊤, so the pattern's
  probability is the product of one such integral per segment between ⊤s.
* Report noisy max (Ding et al. 2018, Alg. 5 and 6): P(argmax = i) = ∫ f_i(t) Π_{j≠i} F_j(t) dt.
* Noisy histogram (Alg. 9): a Laplace shift of one count; its likelihood ratio is monotone in
  that count, so the frontier is that of threshold tests, read on a grid of thresholds.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy import stats

from privaudit.audit.stats.epsilon_bounds import clopper_pearson_upper, epsilon_from_rates

import sniper_bank as bank

#: Points of the quadrature grids (the noise scales are 20–80; the grids span ±40 scales). Measured: the SVT
#: laws move by < 2·10⁻⁷ (relative) from 5·10⁴ to 2·10⁵ points.
GRID = 50_001
#: Mixing probabilities read on each segment of the Neyman–Pearson frontier.
MIX = 64


def ceiling_of_rates(alpha: np.ndarray, power: np.ndarray, n: int, confidence: float = 0.9) -> float:
    """Best ε̲ (δ = 0) of tests with true rates (α, 1 − β = power) observed as counts out of n per hypothesis.

    Parameters
    ----------
    alpha, power : ndarray
        P_x(reject) and P_x′(reject) of each test (any family; both directions of the
        DP inequality are read).
    n : int
        Releases per hypothesis.
    confidence : float
        The audit's confidence; each rate is bounded at 1 − (1 − confidence)/2.

    Returns
    -------
    float
        max over the tests of max(ln((1 − β̄)/ᾱ), ln((1 − ᾱ)/β̄)), at least 0.
    """
    level = 1 - (1 - confidence) / 2
    a = clopper_pearson_upper(np.clip(alpha, 0, 1) * n, n, level)
    b = clopper_pearson_upper(np.clip(1 - power, 0, 1) * n, n, level)
    return float(np.max(epsilon_from_rates(a, b, 0.0)))


def frontier(p: np.ndarray, q: np.ndarray, mix: int = MIX) -> tuple[np.ndarray, np.ndarray]:
    """Rates of the randomised Neyman–Pearson tests of a countable law: outcomes rejected by decreasing q/p.

    Parameters
    ----------
    p, q : ndarray
        Probabilities of the outcomes under x and under x′.
    mix : int
        Points read on each segment (the last outcome rejected with probability j/mix).

    Returns
    -------
    alpha, power : ndarray
        P_x(reject) and P_x′(reject) along the frontier.
    """
    with np.errstate(divide="ignore"):
        order = np.argsort(-(np.log(q) - np.log(p)), kind="stable")
    a, b = np.r_[0.0, np.cumsum(p[order])], np.r_[0.0, np.cumsum(q[order])]
    w = np.linspace(0, 1, mix + 1)[None, :]
    return (a[:-1, None] + w * np.diff(a)[:, None]).ravel(), (b[:-1, None] + w * np.diff(b)[:, None]).ravel()


def law_ceiling(p: np.ndarray, q: np.ndarray, n: int, confidence: float = 0.9) -> float:
    """The most any Clopper–Pearson audit of n releases per hypothesis certifies on a countable law (both orders).

    Parameters
    ----------
    p, q : ndarray
        Probabilities of the outcomes under x and under x′.
    n : int
        Releases per hypothesis.
    confidence : float
        The audit's confidence.

    Returns
    -------
    float
    """
    return max(ceiling_of_rates(*frontier(p, q), n, confidence), ceiling_of_rates(*frontier(q, p), n, confidence))


def exact_epsilon(p: np.ndarray, q: np.ndarray) -> float:
    """The pair's exact ε (δ = 0) on a countable law: max |ln q/p| over the outcomes.

    Parameters
    ----------
    p, q : ndarray
        Probabilities of the outcomes under x and under x′ (all positive).

    Returns
    -------
    float
    """
    return float(np.max(np.abs(np.log(q) - np.log(p))))


def _grid(scale: float) -> tuple[np.ndarray, np.ndarray]:
    """Laplace(0, scale) quadrature: nodes over ±40 scales and weights summing to 1."""
    r = np.linspace(-40 * scale, 40 * scale, GRID)
    w = stats.laplace.pdf(r, scale=scale)
    return r, w / w.sum()


def svt_patterns(d: int, c: int) -> list[tuple[int, ...]]:
    """Every output of a ⊤/⊥ sparse vector that stops after c ⊤: the positions of its ⊤s (at most c)."""
    return [pos for k in range(c + 1) for pos in itertools.combinations(range(d), k)]


def _codes(pos: tuple[int, ...], d: int, c: int) -> np.ndarray:
    """The release a pattern is written as by :func:`sniper_bank._abort_after`."""
    above = np.zeros((1, d), dtype=bool)
    above[0, list(pos)] = True
    return bank._abort_after(above, c)[0]


def _segment(p_above: np.ndarray, w: np.ndarray, lo: int, top: int | None, hi: int) -> float:
    """∫ f_ρ Π_{lo ≤ i < top or hi} (1 − p_i) · p_top of one stretch of queries under one threshold noise."""
    end = hi if top is None else top
    f = np.prod(1 - p_above[:, lo:end], axis=1)
    if top is not None:
        f = f * p_above[:, top]
    return float(f @ w)


def svt_law(mech: bank.SVT1, x) -> tuple[list[np.ndarray], np.ndarray]:
    """Outputs and their probabilities for SVT1 (one threshold noise) or SVT2 (a fresh one after every ⊤).

    Parameters
    ----------
    mech : sniper_bank.SVT1 or sniper_bank.SVT2
        The mechanism (ε, d, c, T).
    x : array-like of shape (d,)
        Query answers.

    Returns
    -------
    outputs : list of ndarray
        Each output as the mechanism writes it (codes ⊤ = 1, ⊥ = 0, aborted = −1).
    probabilities : ndarray
    """
    x = np.asarray(x, dtype=float)
    e1 = mech.epsilon / 2
    fresh = type(mech) is bank.SVT2
    r, w = _grid(mech.c / e1 if fresh else 1 / e1)
    p_above = stats.laplace.sf(mech.t + r[:, None] - x[None, :], scale=2 * mech.c / (mech.epsilon - e1))
    pats = svt_patterns(mech.d, mech.c)
    probs = []
    for pos in pats:
        if fresh:
            starts = (0, *(i + 1 for i in pos))
            tops = pos if len(pos) == mech.c else (*pos, None)  # after the c-th ⊤ the loop stops: no last stretch
            probs.append(np.prod([_segment(p_above, w, s, t, mech.d) for s, t in zip(starts, tops)]))
        else:
            last = pos[-1] + 1 if len(pos) == mech.c else mech.d
            f = np.prod(np.where(np.isin(np.arange(last), pos), p_above[:, :last], 1 - p_above[:, :last]), axis=1)
            probs.append(float(f @ w))
    return [_codes(p, mech.d, mech.c) for p in pats], np.array(probs)


def noisy_max_law(mech: bank.NoisyMaxLaplace | bank.NoisyMaxExponential, x) -> tuple[list[np.ndarray], np.ndarray]:
    """P(argmax_i x_i + noise_i = i) for Laplace or exponential noise of scale 2/ε, by quadrature.

    Parameters
    ----------
    mech : sniper_bank.NoisyMaxLaplace or sniper_bank.NoisyMaxExponential
    x : array-like of shape (d,)

    Returns
    -------
    outputs : list of ndarray
        The indices, as released (floats).
    probabilities : ndarray
    """
    x = np.asarray(x, dtype=float)
    scale = 2 / mech.epsilon
    law = stats.laplace if isinstance(mech, bank.NoisyMaxLaplace) else stats.expon
    # Midpoint rule on pieces cut at the answers: the exponential densities jump there, and no node falls on a jump.
    knots = np.unique(np.r_[x.min() - 40 * scale, x, x.max() + 40 * scale])
    edges = np.unique(np.concatenate([np.linspace(a, b, GRID // (knots.size - 1)) for a, b in zip(knots[:-1], knots[1:])]))
    t, width = (edges[:-1] + edges[1:]) / 2, np.diff(edges)
    cdf = law.cdf(t[None, :], loc=x[:, None], scale=scale)
    pdf = law.pdf(t[None, :], loc=x[:, None], scale=scale)
    probs = [float(pdf[i] * np.prod(np.delete(cdf, i, axis=0), axis=0) @ width) for i in range(x.size)]
    return [np.array([float(i)]) for i in range(x.size)], np.array(probs)


def histogram_ceiling(mech: bank.NoisyHistogram, x, x_prime, n: int, confidence: float = 0.9) -> tuple[float, float]:
    """Exact ε and the ceiling of a noisy-histogram pair that moves one count, from its threshold tests.

    Parameters
    ----------
    mech : sniper_bank.NoisyHistogram
    x, x_prime : array-like
        Counts differing in one bin.
    n : int
        Releases per hypothesis.
    confidence : float

    Returns
    -------
    exact : float
        |Δ|·ε of the moved count.
    ceiling : float
    """
    diff = np.asarray(x_prime, dtype=float) - np.asarray(x, dtype=float)
    (k,) = np.flatnonzero(diff)
    scale, shift = 1 / mech.epsilon, abs(diff[k])
    t = np.linspace(-40 * scale, 40 * scale + shift, GRID)
    alpha, power = stats.laplace.sf(t, scale=scale), stats.laplace.sf(t, loc=shift, scale=scale)
    return shift * mech.epsilon, ceiling_of_rates(alpha, power, n, confidence)


def bank_ceiling(case: bank.Case, n: int, confidence: float = 0.9) -> tuple[float, float] | None:
    """(exact ε of the given pair, ceiling of an audit of n releases per hypothesis), for the cases with a law here.

    Parameters
    ----------
    case : sniper_bank.Case
        A bank case with its given pair.
    n : int
        Releases per hypothesis.
    confidence : float

    Returns
    -------
    tuple of float, or None
        None for the cases whose law is not computed here.
    """
    mech, (x, xp) = case.mechanism, case.given_pair
    if type(mech) in (bank.SVT1, bank.SVT2):
        law = svt_law
    elif type(mech) in (bank.NoisyMaxLaplace, bank.NoisyMaxExponential):
        law = noisy_max_law
    elif type(mech) is bank.NoisyHistogram:
        return histogram_ceiling(mech, x, xp, n, confidence)
    else:
        return None
    p, q = law(mech, x)[1], law(mech, xp)[1]
    return exact_epsilon(p, q), law_ceiling(p, q, n, confidence)
