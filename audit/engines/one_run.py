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

Guesses and abstentions are optimised over the same grid of k (k guesses per side) for every
method, with a Bonferroni correction over the grid.
"""

from __future__ import annotations

import time

import numpy as np

from privaudit.audit.stats.epsilon_bounds import one_run_bound
from privaudit.audit.stats.one_run_fdp import one_run_fdp_bound, one_run_gaussian_estimate

#: Fractions of m tried as k (guesses per side).
K_FRACTIONS = (0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5)


def k_grid(m: int) -> list[int]:
    """The k values of :data:`K_FRACTIONS` for m canaries (distinct, ≥ 1, 2k ≤ m)."""
    return sorted({min(m // 2, max(1, int(round(f * m)))) for f in K_FRACTIONS})


def one_run_table(scores, signs, *, delta: float, confidence: float = 0.95, k=None) -> list[dict]:
    """Every one-run analysis of one run's canary scores, as rows of a table.

    Parameters
    ----------
    scores : array (m,)
        Canary scores (higher: included).
    signs : array (m,) of ±1
        The canaries' bits, drawn before training.
    delta, confidence : float
    k : sequence of int, optional
        Guesses per side to try (default :func:`k_grid`).

    Returns
    -------
    list of dict
        ``method``, ``epsilon_lb``, ``certified`` (bool), ``assumption``, ``guesses``, ``correct``,
        ``runs`` (1), ``seconds`` (analysis time).
    """
    s = np.asarray(scores, dtype=float)
    ks = k_grid(s.size) if k is None else list(k)
    rows = []
    t0 = time.perf_counter()
    st = one_run_bound(s, signs, delta=delta, confidence=confidence, k=ks)
    rows.append(dict(method="steinke", epsilon_lb=st.epsilon, certified=True, assumption="none",
                     guesses=st.guesses, correct=st.correct, runs=1, seconds=time.perf_counter() - t0))
    for family, assumption in (("approx-dp", "none"),
                               ("gdp", "none for 'not μ̲-GDP'; ε̲ is that curve's ε (exact if the curve is Gaussian)")):
        t0 = time.perf_counter()
        b = one_run_fdp_bound(s, signs, delta=delta, confidence=confidence, k=ks, family=family)
        rows.append(dict(method=f"fdp-{family}", epsilon_lb=b.epsilon, certified=True, assumption=assumption,
                         guesses=b.guesses, correct=b.correct, runs=1, seconds=time.perf_counter() - t0))
    t0 = time.perf_counter()
    g = one_run_gaussian_estimate(s, signs, delta=delta, confidence=confidence)
    rows.append(dict(method="gaussian", epsilon_lb=g.epsilon, certified=False, assumption=g.assumption,
                     guesses=s.size, correct=None, runs=1, seconds=time.perf_counter() - t0))
    return rows


__all__ = ["K_FRACTIONS", "k_grid", "one_run_table"]
