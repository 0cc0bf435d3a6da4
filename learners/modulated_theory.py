"""Seed 000's gradient-variance formula (Theorem 8.1) and its uniform bound (§9).

For fixed data (x_i, y_i), i = 1..K, residuals r = Xβ − y, and modulation vectors
orthogonal to β (V ⊥ β), the server gradient G = Σ_x β − Z of one round satisfies

    E‖G − ∇L(β)‖² = [S_r² (λ²/(2m) + dσ²) + 2σ² βᵀΣ_rx + σ² ‖β‖² tr(Σ_x)] / (K(1 − α)²)
                    + ‖β‖² (λ²σ²/(2m) + (d + 1)σ⁴) / (K(1 − α)⁴),

with S_r² = ‖r‖²/K, Σ_rx = Xᵀr/K, tr(Σ_x) = ‖X‖_F²/K. For m = 1 this is the seed's
Theorem 8.1 verbatim. For m > 1 the seed gives no formula; the λ²/2 → λ²/(2m)
replacement is derived here for the map g_V with amplitude λ/m and the derived
correction (λ²/(2m²)) P_V: the modulation adds (λ/m)² Σ_j cos²θ_j = λ²/(2m) in
expectation to ‖g̃ − E g̃‖².

Derivation (per client, a = 1 − α, s = ξᵀβ, c_j = cos θ_j, V ⊥ β so Cβ = σ²β):
ψ − E ψ = x s/a + (B + ξ) r/a + ((B + ξ)s − σ²β)/a² with B = (λ/m) Σ_j c_j v_j; the
squared norms give the three bracketed groups, the only non-zero cross term is
2σ² r xᵀβ/a², and E[‖ξ‖² s²] = (d + 2)σ⁴‖β‖² gives the (d + 1)σ⁴ term.

The uniform bound (§9) replaces S_r² ≤ (RB + M)², |βᵀΣ_rx| ≤ BR(RB + M) and
tr(Σ_x) ≤ R² for ‖x_i‖ ≤ R, ‖β‖ ≤ B, |y_i| ≤ M.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from privaudit.mechanisms.validation import (
    InvalidInputError,
    check_array,
    check_int,
    check_interval,
    check_positive,
)


def theorem81_variance(X: ArrayLike, y: ArrayLike, beta: ArrayLike, *, alpha: float, lam: float, sigma: float, n_vectors: int = 1) -> float:
    """E‖G − ∇L(β)‖² of one round (seed 000, Theorem 8.1), valid when the basis is orthogonal to β.

    Parameters
    ----------
    X : array (K, d)
        Fixed client features.
    y : array (K,)
        Fixed public responses.
    beta : array (d,)
        Point at which the gradient is estimated.
    alpha, lam, sigma : float
        Contraction α ∈ (0, 1), amplitude λ ≥ 0, noise std σ > 0 of the round.
    n_vectors : int
        m (λ²/2 becomes λ²/(2m); m = 1 is the seed's statement).

    Returns
    -------
    float
        The trace of the covariance of G (squared units of the gradient).
    """
    X = check_array("X", X, ndim=2)
    y = check_array("y", y, ndim=1)
    beta = check_array("beta", beta, ndim=1, dim=X.shape[1])
    if len(y) != X.shape[0]:
        raise InvalidInputError(f"X and y must have the same number of rows, got {X.shape[0]} and {len(y)}")
    a = 1 - check_interval("alpha", alpha, 0.0, 1.0)
    lam = check_positive("lam", lam, allow_zero=True)
    s2 = check_positive("sigma", sigma) ** 2
    m = check_int("n_vectors", n_vectors)
    K, d = X.shape
    r = X @ beta - y
    sr2 = r @ r / K
    b_rx = beta @ (X.T @ r) / K
    tr_x = np.einsum("ij,ij->", X, X) / K
    b2 = beta @ beta
    mod = lam**2 / (2 * m)
    first = sr2 * (mod + d * s2) + 2 * s2 * b_rx + s2 * b2 * tr_x
    second = b2 * (mod * s2 + (d + 1) * s2**2)
    return float(first / (K * a**2) + second / (K * a**4))


def uniform_variance_bound(*, R: float, B: float, M: float, dim: int, n_clients: int, alpha: float, lam: float,
                           sigma: float, n_vectors: int = 1) -> float:
    """Seed 000's §9 bound σ̄_g² on :func:`theorem81_variance` for ‖x_i‖ ≤ R, ‖β‖ ≤ B, |y_i| ≤ M.

    σ̄_g² = [(RB + M)²(λ²/(2m) + dσ²) + 2σ²BR(RB + M) + σ²B²R²]/(K(1 − α)²)
           + B²(λ²σ²/(2m) + (d + 1)σ⁴)/(K(1 − α)⁴).

    Parameters
    ----------
    R : float
        Bound on the feature norms ‖x_i‖, ≥ 0.
    B : float
        Bound on ‖β‖ (the projection radius), ≥ 0.
    M : float
        Bound on |y_i|, ≥ 0.
    dim : int
        d.
    n_clients : int
        K.
    alpha, lam, sigma : float
        Contraction α ∈ (0, 1), amplitude λ ≥ 0, noise std σ > 0.
    n_vectors : int
        m.

    Returns
    -------
    float
        σ̄_g², in squared gradient units.
    """
    R = check_positive("R", R, allow_zero=True)
    B = check_positive("B", B, allow_zero=True)
    M = check_positive("M", M, allow_zero=True)
    d = check_int("dim", dim)
    K = check_int("n_clients", n_clients)
    a = 1 - check_interval("alpha", alpha, 0.0, 1.0)
    lam = check_positive("lam", lam, allow_zero=True)
    s2 = check_positive("sigma", sigma) ** 2
    mod = lam**2 / (2 * check_int("n_vectors", n_vectors))
    rb = R * B + M
    first = rb**2 * (mod + d * s2) + 2 * s2 * B * R * rb + s2 * B**2 * R**2
    second = B**2 * (mod * s2 + (d + 1) * s2**2)
    return float(first / (K * a**2) + second / (K * a**4))
