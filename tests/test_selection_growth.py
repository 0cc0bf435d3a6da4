"""The test chosen on the selection split must not get worse as the evaluation split grows (issue 23).

The engine caps the selection block (``MAX_SELECT``) while the evaluation block grows with n.
Before :data:`~privaudit.attacks.threshold_selection.MAX_EVAL_PER_SELECT`, the criterion stopped
penalising tail tests at large evaluation sizes and the winner's curse picked one, so that ε̲
fell as n grew (Laplace ε = 0.1 at 10⁷: 0.051 against 0.094 at 10⁶). Here the selection
sample is fixed per seed and only the evaluation size grows 4×; each chosen test is scored by
the Clopper–Pearson ε̲ of its *true* rates at the expected counts (Laplace CDFs), so the only
noise is the selection's and the comparison is paired by seed.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import laplace, t as student_t

from privaudit.attacks import threshold_selection as ts

CONFIDENCE = 0.9
M_SELECT = 100_000  # selection releases per hypothesis, as the engine's at n ≈ 10⁶
SEEDS = 12
SCALE, LOC0, LOC1 = 10.0, 1.0, 2.0  # Laplace ε = 0.1 scores (a projection attacker's)


def _expected_epsilon(sel: ts.Selection, n_eval: int) -> float:
    """CP ε̲ of the chosen test at its true rates and n_eval releases per hypothesis."""
    t, r = sel.threshold, sel.reverse_threshold
    fp, fn = laplace.sf(t, LOC0, SCALE), laplace.cdf(t, LOC1, SCALE)
    rfp, rfn = laplace.cdf(r, LOC1, SCALE), laplace.sf(r, LOC0, SCALE)
    if sel.direction == "forward":
        k = (fp * n_eval, fn * n_eval, n_eval, n_eval)
    elif sel.direction == "reverse":
        k = (rfp * n_eval, rfn * n_eval, n_eval, n_eval)
    else:
        k = ((fp + rfp) * n_eval, (fn + rfn) * n_eval, 2 * n_eval, 2 * n_eval)
    return float(ts._value(*k, 1 - (1 - CONFIDENCE) / 2, 0.0, "clopper-pearson")[0])


def _paired_gains(n_eval: int) -> np.ndarray:
    """Per seed: expected ε̲ with 4·n_eval evaluation releases minus with n_eval, same selection sample."""
    gains = []
    for seed in range(SEEDS):
        g = np.random.default_rng(seed)
        s0, s1 = g.laplace(LOC0, SCALE, M_SELECT), g.laplace(LOC1, SCALE, M_SELECT)
        eps = [_expected_epsilon(ts.select_threshold(s0, s1, m, m, delta=0.0, confidence=CONFIDENCE,
                                                     estimator="clopper-pearson"), m)
               for m in (n_eval, 4 * n_eval)]
        gains.append(eps[1] - eps[0])
    return np.array(gains)


def _lower_bound(gains: np.ndarray, level: float = 0.95) -> float:
    """One-sided Student-t lower confidence bound on the mean gain."""
    return float(gains.mean() - student_t.ppf(level, gains.size - 1) * gains.std(ddof=1) / np.sqrt(gains.size))


def test_more_evaluation_releases_never_lower_the_expected_epsilon():
    # 4 M_SELECT → 16 M_SELECT evaluation releases: the cap binds at 8 halves (4·M_SELECT).
    gains = _paired_gains(4 * M_SELECT)
    assert _lower_bound(gains) > 0.0, gains


def test_without_the_cap_the_selection_drifts_to_the_tails(monkeypatch):
    # The broken selection (no cap) must be seen to fail the property the fixed one passes.
    monkeypatch.setattr(ts, "MAX_EVAL_PER_SELECT", 10**12)
    gains = _paired_gains(4 * M_SELECT)
    assert _lower_bound(gains) <= 0.0, gains
    assert gains.mean() < 0.0, gains


def test_cap_leaves_default_splits_unchanged():
    # At the engine's default splits up to n ≈ 10⁶ (evaluation ≤ 8 × a selection half) the cap does
    # not bind: the same selection with and without it.
    g = np.random.default_rng(3)
    s0, s1 = g.laplace(LOC0, SCALE, 20_000), g.laplace(LOC1, SCALE, 20_000)
    kw = dict(delta=0.0, confidence=CONFIDENCE, estimator="clopper-pearson")
    capped = ts.select_threshold(s0, s1, 80_000, 80_000, **kw)
    uncapped = ts.select_threshold(s0, s1, 10**6, 10**6, **kw)
    # Beyond the cap the criterion is computed at the capped size: the same choice as at 8 halves.
    assert (uncapped.direction, uncapped.threshold, uncapped.reverse_threshold) == \
        (capped.direction, capped.threshold, capped.reverse_threshold)
