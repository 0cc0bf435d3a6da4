"""Shared statistical helpers and the one tolerance policy of the test suite.

Tolerance policy
----------------
Every Monte Carlo assertion compares estimates with their targets in units of
standard errors estimated from the same samples. A test function is one *family*
of k such comparisons, and each family has family-wise false-alarm rate

    FWER = 1e-6       (Bonferroni: z = Φ⁻¹(1 − FWER/(2k)), z ≈ 4.89 for k = 1),

so that a correct implementation fails a fixed-seed test only with probability
≤ 1e-6 per test function (≤ 1e-3 over a suite of up to 1000 such tests), while a
bias of ≳ (z + 2)·SE is caught with probability ≥ 0.98. Tests never pick their own
z: they call :func:`z_tolerance` (or :func:`mc_check`) with the number of
comparisons they make.

Import the helpers as ``from conftest import mc_check, z_tolerance`` (pytest puts
this directory on ``sys.path`` because ``tests/`` is not a package).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

#: Family-wise false-alarm rate of one test function's Monte Carlo assertions.
FWER = 1e-6


def z_tolerance(n_tests: int = 1, fwer: float = FWER) -> float:
    """Two-sided Bonferroni z for ``n_tests`` comparisons at family-wise rate ``fwer``."""
    if n_tests < 1:
        raise ValueError(f"n_tests must be >= 1, got n_tests={n_tests!r}")
    return float(stats.norm.isf(fwer / (2 * n_tests)))


def assert_within_se(estimate, target, se, *, n_tests: int | None = None, atol: float = 1e-12) -> None:
    """Assert |estimate − target| ≤ z·se elementwise, z from :func:`z_tolerance`.

    ``n_tests`` defaults to the number of entries compared (all in one family).
    ``atol`` absorbs floating-point round-off when se is 0.
    """
    est, tgt, se = np.broadcast_arrays(np.asarray(estimate, float), np.asarray(target, float), np.asarray(se, float))
    z = z_tolerance(est.size if n_tests is None else n_tests)
    bad = np.abs(est - tgt) > z * se + atol
    assert not np.any(bad), f"{int(bad.sum())} of {est.size} entries off by more than {z:.2f} SE: " \
                            f"estimate={est[bad][:5]}, target={tgt[bad][:5]}, se={se[bad][:5]}"


def mc_check(samples, target, axis: int = 0, *, n_tests: int | None = None) -> None:
    """Assert that the sample mean along ``axis`` matches ``target`` within z standard errors.

    The standard error is estimated from the samples (ddof = 1).
    """
    samples = np.asarray(samples, dtype=float)
    mean = samples.mean(axis)
    se = samples.std(axis, ddof=1) / math.sqrt(samples.shape[axis])
    assert_within_se(mean, target, se, n_tests=n_tests)


def binomial_se(p: float, n: int) -> float:
    """Standard error sqrt(p(1 − p)/n) of a frequency estimated from n Bernoulli(p) draws."""
    return math.sqrt(p * (1 - p) / n)
