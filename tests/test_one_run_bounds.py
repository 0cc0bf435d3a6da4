"""One-run bounds checked against brute force, and the f-DP rows never below Steinke et al.'s (issue 26).

The brute force: for m ≤ 5 canaries, the largest probability of ≥ c correct out of c′ guesses over
*every* mechanism that is (ε, δ)-DP in each canary bit is a linear programme (the mechanism may
output its guesses directly; (ε, δ)-DP between two bit vectors differing in one bit is the
hockey-stick constraint Σ_o max(0, P(o|S) − e^ε P(o|S′)) ≤ δ, linear with one slack per output).
A valid tail bound is never below it.
"""

import itertools
import math

import numpy as np
import pytest
from scipy import sparse
from scipy.optimize import linprog

from privaudit.audit.engines.one_run import one_run_table, planned_k
from privaudit.audit.stats.epsilon_bounds import one_run_epsilon, one_run_p_value
from privaudit.audit.stats.one_run_fdp import fdp_consistent, one_run_fdp_bound


def worst_tail(m: int, guesses: int, correct: int, eps: float, delta: float) -> float:
    """max P[≥ correct of `guesses` right] over mechanisms (ε, δ)-DP in each of m uniform bits (LP)."""
    S = np.array(list(itertools.product([-1, 1], repeat=m)))
    outs = []
    for pos in itertools.combinations(range(m), guesses):
        for vals in itertools.product([-1, 1], repeat=guesses):
            o = np.zeros(m)
            o[list(pos)] = vals
            outs.append(o)
    O = np.array(outs)
    nS, nO = len(S), len(O)
    P = nS * nO
    win = ((O[None] == S[:, None]).sum(-1) >= correct).astype(float)
    n_slack = nS * m * nO if delta > 0 else 0
    cost = np.zeros(P + n_slack)
    cost[:P] = -win.ravel() / nS
    index = {tuple(s): k for k, s in enumerate(S)}
    rows, cols, vals, bounds = [], [], [], []
    r = 0
    e = math.exp(eps)
    for s in range(nS):
        for i in range(m):
            flipped = S[s].copy()
            flipped[i] = -flipped[i]
            t = index[tuple(flipped)]
            for o in range(nO):
                rows += [r, r]
                cols += [s * nO + o, t * nO + o]
                vals += [1.0, -e]
                if delta > 0:  # slack u ≥ P(o|S) − e^ε P(o|S′)
                    rows.append(r)
                    cols.append(P + (s * m + i) * nO + o)
                    vals.append(-1.0)
                bounds.append(0.0)
                r += 1
            if delta > 0:  # Σ_o u ≤ δ
                rows += [r] * nO
                cols += [P + (s * m + i) * nO + o for o in range(nO)]
                vals += [1.0] * nO
                bounds.append(delta)
                r += 1
    A_ub = sparse.csr_matrix((vals, (rows, cols)), shape=(r, cost.size))
    A_eq = sparse.csr_matrix((np.ones(P), (np.repeat(np.arange(nS), nO), np.arange(P))), shape=(nS, cost.size))
    res = linprog(cost, A_ub=A_ub, b_ub=bounds, A_eq=A_eq, b_eq=np.ones(nS), bounds=(0, None), method="highs")
    assert res.status == 0
    return -res.fun


def recursion_tail(m: int, guesses: int, correct: int, eps: float, delta: float) -> float:
    """The tail bound the f-DP recursion implies: the least level τ it rejects at (bisection)."""
    lo, hi = 0.0, 1.0 - 1e-12
    if fdp_consistent(m, guesses, correct, eps, family="approx-dp", delta=delta, level=hi):
        return 1.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if fdp_consistent(m, guesses, correct, eps, family="approx-dp", delta=delta, level=mid):
            lo = mid
        else:
            hi = mid
    return hi


CASES = [(4, 4, eps, delta, c) for eps, delta in [(0.5, 0.0), (1.0, 0.0), (1.0, 0.02)] for c in (4, 3)] + \
        [(5, 2, 1.0, delta, c) for delta in (0.0, 0.02) for c in (2, 1)]


@pytest.mark.parametrize(("m", "guesses", "eps", "delta", "correct"), CASES)
def test_recursion_is_a_valid_tail_bound_and_exact_when_every_guess_is_right(m, guesses, eps, delta, correct):
    lp = worst_tail(m, guesses, correct, eps, delta)
    rec = recursion_tail(m, guesses, correct, eps, delta)
    assert rec >= lp - 1e-7  # valid: never below the worst mechanism's probability
    if correct == guesses:
        assert rec == pytest.approx(lp, abs=1e-6)  # and exact there (measured: also with δ > 0)
    if delta == 0:
        # Steinke et al.'s binomial is exact for pure DP (randomised response attains it) ...
        assert one_run_p_value(m, guesses, correct, eps, 0.0) == pytest.approx(lp, abs=1e-6)
        if correct < guesses:
            # ... where the recursion is loose below c = c' (why the two are united).
            assert rec > lp + 0.05


def test_steinke_delta_term_is_exceeded_by_a_correlated_mechanism_at_large_delta():
    # A finding of the brute force (reported, not relied on): at m = 2, two guesses, one right, ε = 1,
    # δ = 0.02, the worst mechanism reaches 0.93450 against Steinke et al.'s 2mδ-term p-value 0.93346.
    # At the audits' δ = 1e-5 the δ term is 2mδ·α ≤ 0.02·α; the f-DP (ε, δ) row does not need it
    # where the recursion rejects on its own.
    lp = worst_tail(2, 2, 1, 1.0, 0.02)
    assert lp == pytest.approx(0.934496, abs=1e-5)
    assert lp > one_run_p_value(2, 2, 1, 1.0, 0.02) + 1e-3
    assert recursion_tail(2, 2, 1, 1.0, 0.02) >= lp


def test_fdp_rows_are_never_below_steinke_on_the_same_guesses():
    # Simulated one-run games (Gaussian canary scores at several μ, randomised response at several ε):
    # on every run, Steinke ≤ f-DP (ε, δ) ≤ f-DP GDP, with the k planned from each claim.
    rng = np.random.default_rng(2026)
    for claim_eps, mu in [(2.0, 0.5), (8.0, 1.67), (8.0, 1.57), (1.0, 0.27), (4.0, 1.0)]:
        k = planned_k(1000, claim_eps, 1e-5, confidence=1 - 0.05 / 3)
        for _ in range(4):
            s = rng.choice([-1.0, 1.0], 1000)
            rows = {r["method"]: r["epsilon_lb"] for r in one_run_table(s * mu / 2 + rng.standard_normal(1000), s,
                                                                        delta=1e-5, confidence=1 - 0.05 / 3, k=k)}
            assert rows["steinke"] <= rows["fdp-approx-dp"] <= rows["fdp-gdp"]
    for eps in (0.5, 2.0):
        keep = math.exp(eps) / (1 + math.exp(eps))
        s = rng.choice([-1.0, 1.0], 400)
        scores = np.where(rng.random(400) < keep, s, -s) + 1e-3 * rng.random(400)
        for k in (20, 100, 200):
            st = one_run_epsilon(400, 2 * k, sum(_correct(scores, s, k)), 1e-5, 0.95)
            b = one_run_fdp_bound(scores, s, delta=1e-5, k=k)
            assert b.epsilon >= st and b.epsilon_steinke == st


def _correct(scores, signs, k):
    order = np.argsort(scores, kind="stable")
    return int((signs[order[-k:]] == 1).sum()), int((signs[order[:k]] == -1).sum())


def test_union_keeps_the_level_for_randomized_response():
    # Type-I check by simulation of the united (ε, δ) test: exactly ε-DP randomised response, testing
    # its true ε must reject in at most 5 % of experiments (3 binomial standard deviations of slack).
    rng = np.random.default_rng(13)
    eps, m, trials, rejected = 1.0, 200, 300, 0
    keep = math.exp(eps) / (1 + math.exp(eps))
    for _ in range(trials):
        s = rng.choice([-1.0, 1.0], m)
        scores = np.where(rng.random(m) < keep, s, -s) + 1e-3 * rng.random(m)
        rejected += one_run_fdp_bound(scores, s, delta=0.0, k=40).epsilon > eps
    assert rejected / trials <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / trials)
