"""Exact trade-off curves (type-II error as a function of type-I error).

A mechanism is (ε, δ)-DP iff its trade-off curve T(α) between any two
neighbouring inputs lies on or above

    f_{ε,δ}(α) = max{0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)}

(Dong, Roth & Su 2019; seed 000, Appendix E.1). All functions take ``alpha`` as
an array of type-I errors in [0, 1] and return type-II errors of the same shape.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import log_ndtr, ndtr, ndtri

from .validation import InvalidInputError, check_delta, check_epsilon, check_positive

if TYPE_CHECKING:
    from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution


def _alpha(alpha) -> np.ndarray:
    a = np.asarray(alpha, dtype=float)
    if np.any(~np.isfinite(a)) or np.any((a < 0) | (a > 1)):
        raise InvalidInputError(f"alpha must lie in [0, 1], got values in [{np.nanmin(a)}, {np.nanmax(a)}]")
    return a


def tradeoff_curve(epsilon: float, delta: float, alpha: ArrayLike) -> np.ndarray:
    """f_{ε,δ}(α), the weakest trade-off curve an (ε, δ)-DP mechanism may have.

    Parameters
    ----------
    epsilon : float
        ε > 0 (``inf`` allowed for :func:`tradeoff_curve`).
    delta : float
        δ in [0, 1).
    alpha : array-like
        Type-I errors α in [0, 1].

    Returns
    -------
    ndarray
        Type-II errors β, shaped like ``alpha``.

    Raises
    ------
    InvalidInputError
        When an α lies outside [0, 1] or is not finite.
    """
    eps = check_epsilon(epsilon, allow_inf=True)
    d = check_delta(delta, allow_zero=True)
    a = _alpha(alpha)
    if np.isinf(eps):
        return np.zeros_like(a)
    return np.maximum.reduce([np.zeros_like(a), 1 - d - np.exp(eps) * a, np.exp(-eps) * (1 - d - a)])


def gaussian_tradeoff(mu: float, alpha: ArrayLike) -> np.ndarray:
    """G_μ(α) = Φ(Φ⁻¹(1 − α) − μ), the trade-off of N(0,1) against N(μ,1).

    Parameters
    ----------
    mu : float
        GDP parameter μ ≥ 0 (inf allowed).
    alpha : array-like
        Type-I errors α in [0, 1].

    Returns
    -------
    ndarray
        Type-II errors β, shaped like ``alpha``.

    Raises
    ------
    InvalidInputError
        When an α lies outside [0, 1] or is not finite.
    """
    m = check_positive("mu", mu, allow_zero=True, allow_inf=True)
    a = _alpha(alpha)
    return ndtr(ndtri(1 - a) - m)


def laplace_tradeoff(epsilon: float, alpha: ArrayLike) -> np.ndarray:
    """Trade-off of Lap(0, b) against Lap(Δ, b) with ε = Δ/b (Dong, Roth & Su 2019, Prop. A.7).

    1 − e^ε α for α < e^{−ε}/2;  e^{−ε}/(4α) for α ≤ 1/2;  e^{−ε}(1 − α) beyond.

    Parameters
    ----------
    epsilon : float
        ε = Δ/b > 0.
    alpha : array-like
        Type-I errors α in [0, 1].

    Returns
    -------
    ndarray
        Type-II errors β, shaped like ``alpha``.

    Raises
    ------
    InvalidInputError
        When an α lies outside [0, 1] or is not finite.
    """
    eps = check_epsilon(epsilon)
    a = _alpha(alpha)
    with np.errstate(divide="ignore"):
        mid = np.exp(-eps) / (4 * np.maximum(a, np.finfo(float).tiny))
    return np.where(a < np.exp(-eps) / 2, 1 - np.exp(eps) * a, np.where(a <= 0.5, mid, np.exp(-eps) * (1 - a)))


def discrete_tradeoff(p0: ArrayLike, p1: ArrayLike, alpha: ArrayLike) -> np.ndarray:
    """Exact (randomised Neyman–Pearson) trade-off curve between two pmfs.

    ``p0`` is the null distribution (input x), ``p1`` the alternative (x′). The
    optimal test rejects outputs in decreasing order of p1/p0; randomisation
    interpolates linearly between the resulting ROC vertices.

    Parameters
    ----------
    p0 : array-like of shape (K,)
        pmf of the output under x (the null).
    p1 : array-like of shape (K,)
        pmf under x′ (the alternative), same outcomes.
    alpha : array-like
        Type-I errors α in [0, 1].

    Returns
    -------
    ndarray
        Type-II errors β, shaped like ``alpha``.

    Raises
    ------
    InvalidInputError
        When p0 and p1 are not 1-D of equal shape, or an α lies outside [0, 1].
    """
    p0 = np.asarray(p0, dtype=float)
    p1 = np.asarray(p1, dtype=float)
    if p0.shape != p1.shape or p0.ndim != 1:
        raise InvalidInputError(f"p0 and p1 must be 1-D of equal shape, got {p0.shape} and {p1.shape}")
    a = _alpha(alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(p0 > 0, p1 / np.where(p0 > 0, p0, 1), np.inf)
    order = np.argsort(-ratio, kind="stable")
    fpr = np.concatenate([[0.0], np.cumsum(p0[order])])
    tpr = np.concatenate([[0.0], np.cumsum(p1[order])])
    fpr /= fpr[-1]
    tpr /= tpr[-1]
    # np.interp needs strictly increasing x; keep the highest TPR at a repeated FPR.
    keep = np.r_[np.diff(fpr) > 0, True]
    return 1 - np.interp(a, fpr[keep], tpr[keep])


def gaussian_delta(mu: float, epsilon: ArrayLike) -> np.ndarray:
    """Exact δ(ε) of μ-GDP: Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Balle & Wang 2018, Thm 8).

    Evaluated in log space so that it stays accurate for δ down to ~1e−300.

    Parameters
    ----------
    mu : float
        GDP parameter μ > 0.
    epsilon : float or array-like
        ε ≥ 0, vectorised.

    Returns
    -------
    ndarray
        δ(ε), shaped like ``epsilon``.
    """
    eps = np.asarray(epsilon, dtype=float)
    a = log_ndtr(-eps / mu + mu / 2)
    b = eps + log_ndtr(-eps / mu - mu / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.exp(a) * -np.expm1(np.minimum(b - a, 0.0))
    return np.where(b < a, out, 0.0)


def tradeoff_from_profile(epsilons: ArrayLike, deltas: ArrayLike, alpha: ArrayLike) -> np.ndarray:
    """Trade-off curve implied by a whole privacy profile δ(ε), sampled on a grid.

    A mechanism that is (ε_i, δ_i)-DP for every i has T ≥ sup_i f_{ε_i, δ_i}
    (Dong, Roth & Su 2019, Prop. 2.12). The supremum over the whole profile is
    exact for symmetric mechanisms in the limit of a fine grid; on a finite grid
    it is a valid lower envelope.

    Parameters
    ----------
    epsilons : array-like of shape (m,)
        Grid of ε_i.
    deltas : array-like of shape (m,)
        δ(ε_i) of the profile.
    alpha : array-like
        Type-I errors α in [0, 1].

    Returns
    -------
    ndarray
        Type-II errors β, shaped like ``alpha``.

    Raises
    ------
    InvalidInputError
        When an α lies outside [0, 1] or is not finite.
    """
    eps = np.asarray(epsilons, dtype=float)
    dl = np.asarray(deltas, dtype=float)
    a = _alpha(alpha)[..., None]
    e = np.exp(eps)
    curves = np.maximum(np.maximum(0.0, 1 - dl - e * a), (1 - dl - a) / e)
    return curves.max(axis=-1)


def pld_tradeoff(pld: PrivacyLossDistribution, alpha: ArrayLike, epsilon_grid: ArrayLike | None = None) -> np.ndarray:
    """Trade-off curve of a dp_accounting ``PrivacyLossDistribution`` from its whole profile.

    δ(ε) is read on ``epsilon_grid`` (default 4000 points on [0, 60]) and the curve is
    sup_i f_{ε_i, δ(ε_i)}. With dp_accounting's pessimistic discretisation the
    profile is an upper bound on the true δ(ε), so the curve is a valid *lower*
    bound on the true trade-off, tight as the grid and discretisation refine.
    Asymmetric (add/remove) PLDs return max over both directions, i.e. the
    symmetrised curve.

    Parameters
    ----------
    pld : dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
        Anything with ``get_delta_for_epsilon`` over an array of ε.
    alpha : array-like
        Type-I errors in [0, 1].
    epsilon_grid : array-like, optional
        The ε at which the profile is read.

    Returns
    -------
    numpy.ndarray
        Type-II errors, the shape of ``alpha``.
    """
    eps = np.linspace(0.0, 60.0, 4001) if epsilon_grid is None else np.asarray(epsilon_grid, dtype=float)
    deltas = np.asarray(pld.get_delta_for_epsilon(eps), dtype=float)
    return tradeoff_from_profile(eps, np.clip(deltas, 0.0, 1.0), alpha)
