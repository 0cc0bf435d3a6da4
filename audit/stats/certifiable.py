"""The largest ε a Clopper–Pearson audit of a given sample size can certify.

(Kept apart from :mod:`privaudit.audit.stats.epsilon_bounds`, whose bounds it evaluates at
their best outcome, so that the report's tables do not pull in plotting code.)
"""

from __future__ import annotations

from privaudit.audit.stats.epsilon_bounds import clopper_pearson_upper, epsilon_from_rates


def max_certifiable_epsilon(n: int, confidence: float, delta: float = 0.0) -> float:
    """The largest ε a Clopper–Pearson audit with ``n`` evaluation samples per hypothesis can certify.

    The best possible outcome is zero errors on both sides. The joint bound (each
    rate at level 1 − (1 − c)/2, union bound, as in
    :func:`privaudit.audit.stats.epsilon_bounds.clopper_pearson_bound`) then gives
    ᾱ = β̄ = u = 1 − ((1 − c)/2)^{1/n}, and eq. (1) of that module gives

        ε_max = ln((1 − δ − u)/u) ≈ ln(n / ln(2/(1 − c))),

    so certifying ε needs n ≳ e^ε ln(2/(1 − c)) samples per hypothesis.

    Parameters
    ----------
    n : int
        Evaluation samples per hypothesis.
    confidence : float
        Joint confidence c.
    delta : float
        δ of the bound.

    Returns
    -------
    float
        ε_max (0 when even a perfect outcome certifies nothing).
    """
    level = 1 - (1 - confidence) / 2
    u = clopper_pearson_upper(0, n, level)
    return float(epsilon_from_rates(u, u, delta))


__all__ = ["max_certifiable_epsilon"]
