"""Hotelling's one-sample T² test of H₀: E[X] = 0, the one implementation used by every audit.

For n draws with sample mean b and sample covariance S (ddof = 1) in dimension p,

    T² = n bᵀ S⁻¹ b,      F = (n − p)/(p (n − 1)) · T² ~ F(p, n − p) under H₀

for Gaussian data (Hotelling 1931), and asymptotically for any finite-variance law.
Needs n > p and a non-singular S; otherwise the test is undefined (``p_value`` NaN).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats


@dataclass(frozen=True)
class HotellingTest:
    """T², its F transform with degrees of freedom (p, n − p), and the p-value."""

    t2: float
    f: float
    df1: int
    df2: int
    p_value: float


def hotelling_from_moments(mean: ArrayLike, cov: ArrayLike, n: int) -> HotellingTest:
    """Hotelling's T² test from a sample mean (p,), covariance (p, p) and size n.

    Parameters
    ----------
    mean : array-like of shape (p,)
        Sample mean.
    cov : array-like of shape (p, p)
        Sample covariance.
    n : int
        Sample size.

    Returns
    -------
    HotellingTest
    """
    b = np.atleast_1d(np.asarray(mean, dtype=float))
    p = b.size
    s = np.asarray(cov, dtype=float).reshape(p, p)
    if n <= p:
        return HotellingTest(math.nan, math.nan, p, n - p, math.nan)
    try:
        t2 = float(n * b @ np.linalg.solve(s, b))
    except np.linalg.LinAlgError:
        return HotellingTest(math.nan, math.nan, p, n - p, math.nan)
    f = (n - p) / (p * (n - 1)) * t2
    return HotellingTest(t2, f, p, n - p, float(stats.f.sf(f, p, n - p)))


def hotelling_test(samples: ArrayLike) -> HotellingTest:
    """Hotelling's T² test of E[X] = 0 from samples, shape (n, p).

    Parameters
    ----------
    samples : array-like of shape (n, p)
        Draws of X.

    Returns
    -------
    HotellingTest
    """
    x = np.asarray(samples, dtype=float)
    x = x.reshape(x.shape[0], -1)
    n, p = x.shape
    if n < 2:
        return HotellingTest(math.nan, math.nan, p, n - p, math.nan)
    return hotelling_from_moments(x.mean(axis=0), np.cov(x, rowvar=False).reshape(p, p), n)


__all__ = ["HotellingTest", "hotelling_from_moments", "hotelling_test"]
