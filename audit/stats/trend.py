"""Sentences about a measured curve, computed from the values they describe.

A report note such as "the excess risk keeps decreasing with K (slope ≈ −1)" must be
true of the plotted numbers. :func:`trend_sentence` words the shape of a curve from
its values: monotone or not (differences within two standard errors are called
noise, not a trend), its least-squares slope on log–log axes when every value is
positive, and the values themselves.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def loglog_slope(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Least-squares slope of log y on log x; None unless every x and y is positive and finite (≥ 2 points).

    Parameters
    ----------
    x : sequence of float
        Abscissae.
    y : sequence of float
        Values, one per x.

    Returns
    -------
    float or None
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.size < 2 or x.size != y.size or not (np.all(x > 0) and np.all(y > 0) and np.all(np.isfinite(x * y))):
        return None
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def trend_sentence(subject: str, along: str, x: Sequence[float], y: Sequence[float],
                   yerr: Sequence[float] | None = None) -> str:
    """``"<subject> decreases with <along>: 0.245 → 0.177 → 0.12 (log–log slope −0.52)"``, as the values say.

    The shape is ``decreases``/``increases`` when every step goes that way,
    ``is flat within noise`` when every step is within two standard errors (``yerr``,
    independent points), and ``is not monotone`` otherwise.

    Parameters
    ----------
    subject : str
        What y is (the sentence's subject).
    along : str
        What x is.
    x : sequence of float
        Abscissae.
    y : sequence of float
        Values, one per x.
    yerr : sequence of float, optional
        Standard errors of y.

    Returns
    -------
    str
    """
    y_arr = np.asarray(y, float)
    steps = np.diff(y_arr)
    values = " → ".join(f"{v:.3g}" for v in y_arr)
    if yerr is not None and len(yerr) == len(y_arr):
        se = np.asarray(yerr, float)
        noise = 2 * np.sqrt(se[1:] ** 2 + se[:-1] ** 2)
    else:
        noise = np.zeros_like(steps)
    if steps.size and np.all(steps < 0):
        shape = "decreases"
    elif steps.size and np.all(steps > 0):
        shape = "increases"
    elif steps.size and np.all(np.abs(steps) <= noise):
        shape = "is flat within noise (±2 s.e.)"
    else:
        shape = "is not monotone"
    slope = loglog_slope(x, y_arr)
    tail = f" (log–log slope {slope:+.2f})" if slope is not None and math.isfinite(slope) else ""
    return f"{subject} {shape} with {along}: {values}{tail}"


__all__ = ["loglog_slope", "trend_sentence"]
