"""False-violation rate of the pair search on correct DATASET mechanisms, searched from their declared domain.

The twin of tests/test_sniper_bank.py::test_false_violation_rate_of_the_search_on_correct_mechanisms
for dataset inputs: the correct bounded sum and bounded mean of :mod:`privaudit.mechanisms.unsafe`
(``bug=None``: records clamped to [lower, upper], Laplace noise of the true sensitivity), under
add/remove and replace-one, each searched by :func:`~privaudit.audit.search_pairs` from its declared
:class:`~privaudit.mechanisms.domains.DatasetDomain` alone (records beyond the clamp, a size range).
Every certified ε̲ holds at the search's joint confidence, so a correct mechanism is flagged with
probability at most 1 − confidence; the slow test runs 200 seeded searches and asserts the rate's
exact Clopper–Pearson upper bound (95 %, two-sided) is within 1 − confidence, with the same logic
as the vector test.

Measured (this file's 200 searches, seed 2026): 1 violation in 200, rate 0.005 with exact 95 %
interval [0.0001, 0.0275]; 123 s of CPU on one core.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from privaudit.audit import search_pairs
from privaudit.mechanisms.unsafe import UnsafeBoundedMean, UnsafeBoundedSum

CONFIDENCE = 0.95
#: Clamps of the correct twins: one straddling 0 with records beyond both bounds (the clamp must stop them),
#: one in [0, 1] at a smaller ε with a larger size range.
CLAMPS = (
    {"epsilon": 1.0, "lower": -2.0, "upper": 0.5},
    {"epsilon": 0.5, "lower": 0.0, "upper": 1.0, "min_size": 2, "max_size": 6},
)


def _correct_twins() -> list:
    return [cls(**clamp, neighbourhood=nb) for cls in (UnsafeBoundedSum, UnsafeBoundedMean)
            for nb in ("add-remove", "replace-one") for clamp in CLAMPS]


def _search(mech, rng):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return search_pairs(mech, n=4_000, screen_n=1_000, certify=2, n_random=2, refine=2, confidence=CONFIDENCE,
                            rng=rng)


def test_every_twin_is_correct_and_searched_from_its_declared_dataset_domain():
    """The mechanisms of the null test: no bug, a dataset domain, a search whose pairs are true neighbours."""
    for mech in _correct_twins():
        assert mech.bug is None
        res = _search(mech, 0)
        pair = res.best_pair
        assert mech.claim.neighbourhood.are_neighbours(pair.x, pair.x_prime)
        assert mech.domain.contains(pair.x) and mech.domain.contains(pair.x_prime)
        assert "records in" in res.summary()


@pytest.mark.slow
def test_false_violation_rate_of_the_search_on_correct_dataset_mechanisms():
    """200 searches on correct dataset mechanisms: the rate of certified violations is ≤ 1 − confidence (CP interval)."""
    mechanisms = _correct_twins()
    runs, violations = 200, 0
    root = np.random.SeedSequence(2026)
    for i, child in enumerate(root.spawn(runs)):
        res = _search(mechanisms[i % len(mechanisms)], child)
        violations += res.verdict == "violation"
    lo, hi = stats.binomtest(violations, runs).proportion_ci(0.95, method="exact")
    assert hi <= 1 - CONFIDENCE, (violations, runs, lo, hi)
