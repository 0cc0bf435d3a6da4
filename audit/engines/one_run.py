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

Guesses and abstentions are optimised before the run (:func:`planned_k`): for each method, the k
(guesses per side) of :func:`k_grid` whose bound is largest on the median outcome of the ideal
one-run game at the claimed privacy (canary scores N(±μ/2, 1) with μ the GDP parameter of the
claim's (ε, δ)). The choice uses only the claim, not the run, so each method tests one k and needs no
multiplicity correction. Without a plan, :func:`one_run_table` searches the grid on the run itself
with a Bonferroni correction.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from privaudit.mechanisms.accounting import gdp_sigma
from privaudit.mechanisms.validation import check_int

from privaudit.audit.stats.epsilon_bounds import one_run_bound, one_run_epsilon
from privaudit.audit.stats.one_run_fdp import (
    fdp_consistent,
    one_run_fdp_bound,
    one_run_gaussian_estimate,
)

#: Fractions of m tried as k (guesses per side).
K_FRACTIONS = (0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5)


def k_grid(m: int) -> list[int]:
    """The k values of :data:`K_FRACTIONS` for m canaries (distinct, ≥ 1, 2k ≤ m).

    Parameters
    ----------
    m : int
        Number of canaries.

    Returns
    -------
    list of int
    """
    return sorted({min(m // 2, max(1, int(round(f * m)))) for f in K_FRACTIONS})


METHODS = ("steinke", "fdp-approx-dp", "fdp-gdp")


def planned_k(m: int, epsilon: float, delta: float, *, confidence: float = 0.95, n_sim: int = 101,
              rng: int = 0) -> dict[str, int]:
    """k per method, chosen from the claim alone (before the run).

    The ideal game at the claim: m canaries with scores N(±μ/2, 1), μ the GDP parameter with
    (ε, δ) (:func:`~privaudit.mechanisms.accounting.gdp_sigma`). For each k of :func:`k_grid`,
    the median correct count of the k highest and k lowest scores over ``n_sim`` simulated games;
    each method gets the k whose bound at that median is largest.

    Parameters
    ----------
    m : int
        Canaries.
    epsilon, delta : float
        The claim.
    confidence : float
    n_sim : int
        Simulated games (the plan is deterministic given ``rng``).
    rng : int
        Seed of the simulation (a fixed plan, independent of the audited run).

    Returns
    -------
    dict
        ``{method: k}`` for :data:`METHODS`.
    """
    m = check_int("m", m)
    mu = 1.0 / gdp_sigma(epsilon, delta)
    ks = k_grid(m)
    gen = np.random.default_rng(rng)
    signs = gen.choice(np.array([-1.0, 1.0]), size=(check_int("n_sim", n_sim), m))
    order = np.argsort(signs * mu / 2 + gen.standard_normal(signs.shape), axis=1)
    ranked = np.take_along_axis(signs, order, axis=1)
    level = 1 - confidence
    plan = {}
    best = {name: -1.0 for name in METHODS}
    for k in ks:
        correct = int(np.median((ranked[:, -k:] == 1).sum(1) + (ranked[:, :k] == -1).sum(1)))
        values = {"steinke": one_run_epsilon(m, 2 * k, correct, delta, confidence)}
        for family in ("approx-dp", "gdp"):
            grid = np.linspace(0.0, 30.0 if family == "approx-dp" else 20.0, 301)
            ok = fdp_consistent(m, 2 * k, correct, grid, family=family, delta=delta, level=level)
            values[f"fdp-{family}"] = float(grid[np.flatnonzero(~ok)[-1]]) if (~ok).any() else 0.0
        for name in METHODS:
            if values[name] > best[name]:
                best[name], plan[name] = values[name], k
    return plan


def one_run_table(scores: ArrayLike, signs: ArrayLike, *, delta: float, confidence: float = 0.95,
                  k: Sequence[int] | None = None, plan: dict[str, int] | None = None) -> list[dict]:
    """Every one-run analysis of one run's canary scores, as rows of a table.

    Parameters
    ----------
    scores : array (m,)
        Canary scores (higher: included).
    signs : array (m,) of ±1
        The canaries' bits, drawn before training.
    delta, confidence : float
    k : sequence of int, optional
        Guesses per side to try on the run, Bonferroni-corrected (default :func:`k_grid`).
    plan : dict, optional
        One k per method fixed before the run (:func:`planned_k`); overrides ``k``.

    Returns
    -------
    list of dict
        ``method``, ``epsilon_lb``, ``certified`` (bool), ``assumption``, ``guesses``, ``correct``,
        ``runs`` (1), ``seconds`` (analysis time).
    """
    s = np.asarray(scores, dtype=float)
    grid = k_grid(s.size) if k is None else list(k)

    def ks(method):
        return grid if plan is None else [plan[method]]

    rows = []
    t0 = time.perf_counter()
    st = one_run_bound(s, signs, delta=delta, confidence=confidence, k=ks("steinke"))
    rows.append(dict(method="steinke", epsilon_lb=st.epsilon, certified=True, assumption="none",
                     guesses=st.guesses, correct=st.correct, runs=1, seconds=time.perf_counter() - t0))
    for family, assumption in (("approx-dp", "none"),
                               ("gdp", "none for 'not μ̲-GDP'; ε̲ is that curve's ε "
                                       "(exact if the curve is Gaussian)")):
        t0 = time.perf_counter()
        b = one_run_fdp_bound(s, signs, delta=delta, confidence=confidence, k=ks(f"fdp-{family}"), family=family)
        rows.append(dict(method=f"fdp-{family}", epsilon_lb=b.epsilon, certified=True, assumption=assumption,
                         guesses=b.guesses, correct=b.correct, runs=1, seconds=time.perf_counter() - t0))
    t0 = time.perf_counter()
    g = one_run_gaussian_estimate(s, signs, delta=delta, confidence=confidence)
    rows.append(dict(method="gaussian", epsilon_lb=g.epsilon, certified=False, assumption=g.assumption,
                     guesses=s.size, correct=None, runs=1, seconds=time.perf_counter() - t0))
    return rows


__all__ = ["K_FRACTIONS", "METHODS", "k_grid", "one_run_table", "planned_k"]
