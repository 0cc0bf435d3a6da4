"""One training run, m canaries, every one-run analysis side by side on the same scores.

The rows of :func:`one_run_table` (one run, so "runs" is 1 for each):

* ``steinke`` — Steinke, Nasr & Jagielski (2023), :func:`~privaudit.audit.stats.epsilon_bounds.one_run_bound`:
  certified ε̲ at δ, no assumption.
* ``fdp-approx-dp`` — the f-DP recursion of Mahloujifar, Melis & Chaudhuri (2025) with the (ε, δ)
  curve as hypothesis (:func:`~privaudit.audit.stats.one_run_fdp.one_run_fdp_bound`): certified ε̲ at δ,
  no assumption; comparable with Steinke et al.'s.
* ``fdp-gdp`` — the same recursion with μ-GDP hypotheses: certifies "not μ̲-GDP"; ε̲ = ε_{μ̲}(δ) is
  the ε of that curve (an ε lower bound when the mechanism's curve is Gaussian, as full-batch
  DP-SGD's is).
* ``gaussian`` — the Gaussian estimate (:func:`~privaudit.audit.stats.one_run_fdp.one_run_gaussian_estimate`),
  under the assumption that the scores are Gaussian.

Guesses and abstentions are optimised before the run (:func:`planned_k`): one k (guesses per
side, k₊ = k₋ = k, the rest abstentions) for every method, the k of :func:`k_grid` whose f-DP GDP
bound is largest on the median outcome of the ideal one-run game at the claimed privacy (canary
scores N(±μ/2, 1) with μ the GDP parameter of the claim's (ε, δ)). The choice uses only the claim,
not the run, so the run tests one k and needs no multiplicity correction; every method reads the
same guesses, so the comparison is like for like, and the f-DP rows, which reject whatever
Steinke et al.'s rejects (:mod:`privaudit.audit.stats.one_run_fdp`), are never below it. Without a
planned k, :func:`one_run_table` searches a grid on the run itself with a Bonferroni correction.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from privaudit.mechanisms.accounting import gdp_sigma
from privaudit.mechanisms.validation import check_int

from privaudit.audit.stats.epsilon_bounds import one_run_bound
from privaudit.audit.stats.one_run_fdp import one_run_fdp_bound, one_run_gaussian_estimate

#: Fractions of m tried as k (guesses per side) when k is searched on the run (Bonferroni).
K_FRACTIONS = (0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5)
#: Fractions of m the plan chooses from (from the claim alone: a fine grid costs no multiplicity).
PLAN_FRACTIONS = tuple(np.round(np.arange(0.01, 0.5001, 0.01), 2))


def k_grid(m: int, fractions: Sequence[float] = K_FRACTIONS) -> list[int]:
    """The k values of ``fractions`` of m canaries (distinct, ≥ 1, 2k ≤ m).

    Parameters
    ----------
    m : int
        Number of canaries.
    fractions : sequence of float
        Fractions of m (default :data:`K_FRACTIONS`).

    Returns
    -------
    list of int
    """
    return sorted({min(m // 2, max(1, int(round(f * m)))) for f in fractions})


METHODS = ("steinke", "fdp-approx-dp", "fdp-gdp")


def planned_k(m: int, epsilon: float, delta: float, *, confidence: float = 0.95, n_sim: int = 101,
              rng: int = 0) -> int:
    """k (guesses per side) for every one-run method, chosen from the claim alone (before the run).

    The ideal game at the claim: m canaries with scores N(±μ/2, 1), μ the GDP parameter with
    (ε, δ) (:func:`~privaudit.mechanisms.accounting.gdp_sigma`). For each k of
    :data:`PLAN_FRACTIONS`, the median correct count of the k highest and k lowest scores over
    ``n_sim`` simulated games; the k whose f-DP GDP bound
    (:func:`~privaudit.audit.stats.one_run_fdp.one_run_fdp_bound`'s union) at that median is largest.

    Parameters
    ----------
    m : int
        Canaries.
    epsilon, delta : float
        The claim.
    confidence : float
        Level each method will be run at.
    n_sim : int
        Simulated games (the plan is deterministic given ``rng``).
    rng : int
        Seed of the simulation (a fixed plan, independent of the audited run).

    Returns
    -------
    int
    """
    m = check_int("m", m)
    mu = 1.0 / gdp_sigma(epsilon, delta)
    gen = np.random.default_rng(rng)
    signs = gen.choice(np.array([-1.0, 1.0]), size=(check_int("n_sim", n_sim), m))
    order = np.argsort(signs * mu / 2 + gen.standard_normal(signs.shape), axis=1)
    ranked = np.take_along_axis(signs, order, axis=1)
    best, plan = -1.0, 1
    for k in k_grid(m, PLAN_FRACTIONS):
        correct = int(np.median((ranked[:, -k:] == 1).sum(1) + (ranked[:, :k] == -1).sum(1)))
        # The median game's own guesses: the k highest scores +1, the k lowest −1, c of them right.
        scores = np.r_[np.arange(k, 0, -1) + 2.0 * m, np.zeros(m - 2 * k), -np.arange(1, k + 1) - 2.0 * m]
        truth = np.r_[np.ones(k), np.ones(m - 2 * k), -np.ones(k)]
        guessed = np.r_[np.ones(k), np.zeros(m - 2 * k), -np.ones(k)] != 0
        wrong = np.flatnonzero(guessed)[correct:]
        truth[wrong] = -truth[wrong]
        value = one_run_fdp_bound(scores, truth, delta=delta, confidence=confidence, k=k, family="gdp").epsilon
        if value > best:
            best, plan = value, k
    return plan


def one_run_table(scores: ArrayLike, signs: ArrayLike, *, delta: float, confidence: float = 0.95,
                  k: int | Sequence[int] | None = None) -> list[dict]:
    """Every one-run analysis of one run's canary scores, as rows of a table.

    Parameters
    ----------
    scores : array (m,)
        Canary scores (higher: included).
    signs : array (m,) of ±1
        The canaries' bits, drawn before training.
    delta, confidence : float
    k : int or sequence of int, optional
        One k fixed before the run (:func:`planned_k`), used by every method; or k values searched
        on the run with a Bonferroni correction (default :func:`k_grid`).

    Returns
    -------
    list of dict
        ``method``, ``epsilon_lb``, ``certified`` (bool), ``assumption``, ``guesses``, ``correct``,
        ``k``, ``runs`` (1), ``seconds`` (analysis time); the f-DP rows also ``epsilon_recursion``,
        the recursion's ε̲ before the union with Steinke et al.'s.
    """
    s = np.asarray(scores, dtype=float)
    ks = k_grid(s.size) if k is None else [int(x) for x in np.atleast_1d(k)]
    rows = []
    t0 = time.perf_counter()
    st = one_run_bound(s, signs, delta=delta, confidence=confidence, k=ks)
    rows.append(dict(method="steinke", epsilon_lb=st.epsilon, certified=True, assumption="none",
                     guesses=st.guesses, correct=st.correct, k=st.k, runs=1, seconds=time.perf_counter() - t0))
    for family, assumption in (("approx-dp", "none"),
                               ("gdp", "none for 'not μ̲-GDP'; ε̲ is that curve's ε "
                                       "(exact if the curve is Gaussian)")):
        t0 = time.perf_counter()
        b = one_run_fdp_bound(s, signs, delta=delta, confidence=confidence, k=ks, family=family)
        rows.append(dict(method=f"fdp-{family}", epsilon_lb=b.epsilon, certified=True, assumption=assumption,
                         guesses=b.guesses, correct=b.correct, k=b.k, runs=1, seconds=time.perf_counter() - t0,
                         epsilon_recursion=b.epsilon_recursion))
    t0 = time.perf_counter()
    g = one_run_gaussian_estimate(s, signs, delta=delta, confidence=confidence)
    rows.append(dict(method="gaussian", epsilon_lb=g.epsilon, certified=False, assumption=g.assumption,
                     guesses=s.size, correct=None, k=None, runs=1, seconds=time.perf_counter() - t0))
    return rows


__all__ = ["K_FRACTIONS", "METHODS", "PLAN_FRACTIONS", "k_grid", "one_run_table", "planned_k"]
