"""Unbiased losses and gradients of IWP-SGD on locally private examples (seed 001, §5.2, App. D.5/D.6, E.2).

**Unbiased GLM loss (§5.2).** For ℓ(θ, x, y) = f(θᵀxy) with a release x̃ = x + N(0, σ²I),
ỹ = RR_{ε_y}(y), let z̃ = θᵀx̃ỹ and v = σ²‖θ‖². Then

    ℓ̃(θ, x̃, ỹ) = S̃ W⁻¹_v[f](z̃) + (1 − S̃) W⁻¹_v[f](−z̃),       S̃ = e^{ε_y}/(e^{ε_y} − 1),

satisfies E[ℓ̃] = ℓ(θ, x, y) (Prop. 5.2).

**Unbiased gradient (App. D.5/D.6).** v depends on θ, and ∂_v W⁻¹_v[g] = −½ W⁻¹_v[g''], so

    ∇_θ W⁻¹_{σ²‖θ‖²}[f](θᵀx̃ỹ) = x̃ỹ W⁻¹_v[f'](z̃) − σ²θ W⁻¹_v[f''](z̃),

and ∇ℓ̃ = a·x̃ỹ − σ² c·θ with a = S̃ W⁻¹[f'](z̃) − (1−S̃) W⁻¹[f'](−z̃) and
c = S̃ W⁻¹[f''](z̃) + (1−S̃) W⁻¹[f''](−z̃). For the truncated logistic series this is
the exact gradient of the truncated loss: W⁻¹ of f' keeps K terms, W⁻¹ of f'' keeps K−1.
The −σ²θc term acts as a *negative* ℓ₂ regularisation that undoes the smoothing of
the Gaussian features (for the quadratic loss c = 1: exactly −σ²θ).

**Regression (App. E.2).** With ỹ = y + N(0, σ_y²) and ℓ = ½(θᵀx − y)², the double
Weierstrass inverse (Laplacian ‖θ‖² in x and 1 in y) gives
ℓ̃ = ½(θᵀx̃ − ỹ)² − ½(σ²‖θ‖² + σ_y²) and ∇ℓ̃ = (θᵀx̃ − ỹ)x̃ − σ²θ.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike

from privaudit.mechanisms.validation import (
    InvalidInputError,
    InvalidParameterError,
    check_array,
    check_int,
    check_positive,
)

from .weierstrass_transforms import (
    GLMLoss,
    _sigmoid_polynomials,
    check_series_variance,
    get_loss,
    inverse_bernoulli_variance,
    inverse_weight,
    keep_probability,
)


def glm_terms(loss: GLMLoss, z: np.ndarray, v: float, st: float,
              n_terms: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray | float]:
    """Per-sample (ℓ̃, a, c) at released margins z (see module docstring).

    S̃ = 1 and v = 0 give the uncorrected loss f(z), a = f'(z).

    Parameters
    ----------
    loss : GLMLoss
        The margin loss f (validated).
    z : ndarray of shape (n,)
        Released margins z̃ = θᵀx̃ỹ.
    v : float
        σ²‖θ‖² ≥ 0.
    st : float
        The inverse-Bernoulli weight S̃ (1 for clean labels).
    n_terms : int or None
        K ≥ 1 for the logistic series (unchecked here: the caller checks the domain).

    Returns
    -------
    ell : ndarray of shape (n,)
        The IWP loss ℓ̃.
    a : ndarray of shape (n,)
        Coefficient of x̃ỹ in the gradient.
    c : ndarray of shape (n,) or float
        Coefficient of −σ²θ in the gradient (the scalar 1 for the quadratic loss).
    """
    name = loss.name
    two_sided = st != 1.0
    if name == "exponential":
        e = np.exp(-0.5 * v - z)
        if not two_sided:
            return e, -e, e
        e2 = np.exp(-0.5 * v + z)
        ell = st * e + (1 - st) * e2
        return ell, (1 - st) * e2 - st * e, ell
    if name == "quadratic":
        ell = 0.5 * st * (z - 1.0) ** 2 - 0.5 * v
        if two_sided:
            ell += 0.5 * (1 - st) * (z + 1.0) ** 2
        return ell, z + (1.0 - 2.0 * st), 1.0
    # Logistic: truncated series; the f'' factor keeps one term less (gradient of the truncated loss).
    return _logistic_terms(z, v, st, n_terms)


@lru_cache(maxsize=None)
def _logistic_basis(n_terms: int) -> np.ndarray:
    """M[k, :, j]: ascending sigmoid-polynomial coefficients of the k-th series term of column j.

    Columns: 0 → f^{(2k)} (k >= 1; k = 0 is f itself, not a polynomial), 1 → f^{(2k+1)},
    2 → f^{(2k+2)} (k < K only). With weights w_k = (−v/2)^k/k!, Σ_k w_k M[k] gives the
    polynomial parts of W⁻¹_{v,K}[f], W⁻¹_{v,K}[f'] and W⁻¹_{v,K−1}[f''] in one matrix.
    """
    polys = _sigmoid_polynomials(2 * n_terms + 2)
    deg = len(polys[2 * n_terms + 2])
    M = np.zeros((n_terms + 1, deg, 3))
    for k in range(n_terms + 1):
        if k >= 1:
            M[k, : len(polys[2 * k]), 0] = polys[2 * k]
        M[k, : len(polys[2 * k + 1]), 1] = polys[2 * k + 1]
        if k < n_terms:
            M[k, : len(polys[2 * k + 2]), 2] = polys[2 * k + 2]
    M.setflags(write=False)
    return M


def _logistic_terms(z: np.ndarray, v: float, st: float, n_terms: int):
    """(ℓ̃, a, c) for the truncated logistic series.

    The softplus symmetry f(−z) = f(z) + z gives f^{(m)}(−z) = (−1)^m (f^{(m)}(z) + [m = 1]),
    hence W⁻¹[f](−z) = W⁻¹[f](z) + z, W⁻¹[f'](−z) = −(W⁻¹[f'](z) + 1), W⁻¹[f''](−z) = W⁻¹[f''](z),
    and the B⁻¹ combination collapses to ℓ̃ = L0 + (1 − S̃)z, a = L1 + (1 − S̃), c = L2: one
    sigmoid, one softplus and one Vandermonde product for three polynomials per batch.
    """
    M = _logistic_basis(n_terms)
    coef = M[0].copy()
    w = 1.0
    for k in range(1, n_terms + 1):
        w *= -0.5 * v / k  # (−v/2)^k / k!
        coef += w * M[k]
    p = 0.5 * (1.0 + np.tanh(0.5 * z))
    R = np.vander(p, coef.shape[0], increasing=True) @ coef  # (n, 3): the three polynomials at p
    ell = np.logaddexp(0.0, -z) + R[:, 0]
    if st != 1.0:
        ell += (1.0 - st) * z
    return ell, R[:, 1] + (1.0 - st), R[:, 2]


def mse_terms(r: np.ndarray, v: float, label_var: float) -> tuple[np.ndarray, np.ndarray, float]:
    """Regression (App. E.2): ℓ̃ = ½r² − ½(v + σ_y²), a = r, c = 1, with r = θᵀx̃ − ỹ.

    Parameters
    ----------
    r : ndarray of shape (n,)
        Released residuals θᵀx̃ − ỹ.
    v : float
        σ²‖θ‖².
    label_var : float
        Label noise variance σ_y².

    Returns
    -------
    ell, a, c : (ndarray, ndarray, float)
        As :func:`glm_terms`.
    """
    return 0.5 * r * r - 0.5 * (v + label_var), r, 1.0


def _check_theta(theta, p: int | None = None) -> np.ndarray:
    return check_array("theta", theta, ndim=1, dim=p)


def _check_xy(X, y, theta) -> tuple[np.ndarray, np.ndarray]:
    X = check_array("X", X, ndim=2, dim=theta.shape[0])
    y = check_array("y", y, ndim=1)
    if y.shape[0] != X.shape[0]:
        raise InvalidInputError(f"X and y must have the same number of rows, got {X.shape[0]} and {y.shape[0]}")
    return X, y


def _check_labels_pm1(name: str, y: np.ndarray) -> None:
    if not np.all(np.abs(y) == 1.0):
        bad = y[np.abs(y) != 1.0][0]
        raise InvalidInputError(f"{name} must be in {{-1, 1}} (map labels with encode_binary_labels), found {bad!r}")


def iwp_loss(
    theta: ArrayLike, X_tilde: ArrayLike, y_tilde: ArrayLike, *, loss: str = "exponential", sigma: float, epsilon_y: float,
    n_terms: int | None = None,
) -> np.ndarray:
    """Per-sample IWP loss ℓ̃(θ, x̃_i, ỹ_i) = T⁻¹[ℓ(θ, ·, ·)](x̃_i, ỹ_i) (seed 001, §5.2), shape (n,).

    Unbiased: E over the release of ℓ̃ equals f(θᵀx_i y_i) (exactly for the quadratic and
    exponential losses; up to the truncation bias for the logistic series with K = ``n_terms``).
    ``sigma`` is the feature noise std, ``epsilon_y`` the RR budget (``inf``: clean labels).
    No regularisation term is included.

    Parameters
    ----------
    theta : array-like of shape (p,)
        Model parameters θ.
    X_tilde : array-like of shape (n, p)
        Released features x̃ = x + N(0, σ² I).
    y_tilde : array-like of shape (n,)
        Released labels ỹ in {−1, +1}.
    loss : {"exponential", "logistic", "quadratic"}
        The margin loss f.
    sigma : float
        Feature noise std σ ≥ 0.
    epsilon_y : float
        RR label budget in (0, inf] (``inf``: clean labels).
    n_terms : int, optional
        K ≥ 1 for the logistic series (default 1); ignored by the closed forms.

    Returns
    -------
    ndarray of shape (n,)

    Raises
    ------
    InvalidInputError
        On mismatched shapes or labels outside {−1, +1}.
    InvalidParameterError
        Unknown loss, or (logistic) v = σ²‖θ‖² outside the truncated series' domain.
    """
    loss, theta, X, y, v, st, k = _prepare(loss, theta, X_tilde, y_tilde, sigma, epsilon_y, n_terms)
    return glm_terms(loss, (X @ theta) * y, v, st, k)[0]


def iwp_gradient(
    theta: ArrayLike, X_tilde: ArrayLike, y_tilde: ArrayLike, *, loss: str = "exponential", sigma: float, epsilon_y: float,
    n_terms: int | None = None,
) -> np.ndarray:
    """Per-sample IWP gradients ∇_θℓ̃ = a_i x̃_i ỹ_i − σ² c_i θ (App. D.5/D.6), shape (n, p).

    E over the release equals ∇_θ f(θᵀx_i y_i) = f'(θᵀx_i y_i) x_i y_i (Prop. 5.2).

    Parameters
    ----------
    theta : array-like of shape (p,)
        Model parameters θ.
    X_tilde : array-like of shape (n, p)
        Released features x̃ = x + N(0, σ² I).
    y_tilde : array-like of shape (n,)
        Released labels ỹ in {−1, +1}.
    loss : {"exponential", "logistic", "quadratic"}
        The margin loss f.
    sigma : float
        Feature noise std σ ≥ 0.
    epsilon_y : float
        RR label budget in (0, inf] (``inf``: clean labels).
    n_terms : int, optional
        K ≥ 1 for the logistic series (default 1); ignored by the closed forms.

    Returns
    -------
    ndarray of shape (n, p)

    Raises
    ------
    InvalidInputError
        On mismatched shapes or labels outside {−1, +1}.
    InvalidParameterError
        Unknown loss, or (logistic) v = σ²‖θ‖² outside the truncated series' domain.
    """
    loss, theta, X, y, v, st, k = _prepare(loss, theta, X_tilde, y_tilde, sigma, epsilon_y, n_terms)
    _, a, c = glm_terms(loss, (X @ theta) * y, v, st, k)
    c = np.broadcast_to(np.asarray(c, dtype=float), a.shape)
    return (a * y)[:, None] * X - (sigma**2 * c)[:, None] * theta


def _prepare(loss, theta, X, y, sigma, epsilon_y, n_terms):
    loss = get_loss(loss)
    theta = _check_theta(theta)
    X, y = _check_xy(X, y, theta)
    _check_labels_pm1("y_tilde", y)
    sigma = check_positive("sigma", sigma, allow_zero=True)
    st = inverse_weight(epsilon_y)
    v = sigma**2 * float(theta @ theta)
    if loss.closed_form:
        k = None
    else:
        k = check_int("n_terms", 1 if n_terms is None else n_terms, minimum=1)
        check_series_variance(loss, v, k)
    return loss, theta, X, y, v, st, k


def glm_loss(theta: ArrayLike, X: ArrayLike, y: ArrayLike, *, loss: str = "exponential") -> np.ndarray:
    """Per-sample plain loss f(θᵀx_i y_i) (the "SGD – noisy data" loss on a release), shape (n,).

    Parameters
    ----------
    theta : array-like of shape (p,)
        Model parameters θ.
    X : array-like of shape (n, p)
        Features.
    y : array-like of shape (n,)
        Labels (±1 for the margin losses).
    loss : {"exponential", "logistic", "quadratic"}
        The margin loss f.

    Returns
    -------
    ndarray of shape (n,)
    """
    loss = get_loss(loss)
    theta = _check_theta(theta)
    X, y = _check_xy(X, y, theta)
    return loss.derivative((X @ theta) * y, 0)


def glm_gradient(theta: ArrayLike, X: ArrayLike, y: ArrayLike, *, loss: str = "exponential") -> np.ndarray:
    """Per-sample plain gradient f'(θᵀx_i y_i) x_i y_i, shape (n, p).

    Parameters
    ----------
    theta : array-like of shape (p,)
        Model parameters θ.
    X : array-like of shape (n, p)
        Features.
    y : array-like of shape (n,)
        Labels (±1 for the margin losses).
    loss : {"exponential", "logistic", "quadratic"}
        The margin loss f.

    Returns
    -------
    ndarray of shape (n, p)
    """
    loss = get_loss(loss)
    theta = _check_theta(theta)
    X, y = _check_xy(X, y, theta)
    return (loss.derivative((X @ theta) * y, 1) * y)[:, None] * X


def iwp_loss_variance(theta: ArrayLike, X: ArrayLike, y: ArrayLike, *, loss: str = "exponential", sigma: float,
                      epsilon_y: float) -> np.ndarray:
    """Exact per-sample variance of ℓ̃ over the release, at clean (x_i, y_i) (App. D.4 for GLMs).

    Law of total variance over ỹ then x̃, with m = θᵀx y, v = σ²‖θ‖², S = S(ε_y), S̃ = S̃(ε_y):
    Var ℓ̃ = E_ỹ[V(ỹ m)] + S̃(S̃−1)(f(m) − f(−m))² (the B⁻¹ variance of App. D.4), where V(q)
    is the variance over the feature noise at label-signed margin q:

    * exponential: V(q) = (S̃² e^{−2q} + (1−S̃)² e^{2q})(e^{v} − 1) + 2S̃(1−S̃)(e^{−v} − 1);
    * quadratic:   V(q) = v(q + 1 − 2S̃)² + v²/2.

    Only for the closed-form losses (quadratic, exponential).

    Parameters
    ----------
    theta : array-like of shape (p,)
        Model parameters θ.
    X : array-like of shape (n, p)
        Features.
    y : array-like of shape (n,)
        Labels y_i in {−1, +1}.
    loss : {"exponential", "quadratic"}
        The margin loss f.
    sigma : float
        Feature noise std σ ≥ 0.
    epsilon_y : float
        RR label budget in (0, inf].

    Returns
    -------
    ndarray of shape (n,)

    Raises
    ------
    InvalidParameterError
        For the logistic loss (no closed form).
    InvalidInputError
        On mismatched shapes or labels outside {−1, +1}.
    """
    loss = get_loss(loss)
    if not loss.closed_form:
        raise InvalidParameterError("iwp_loss_variance has closed forms only for loss in ('quadratic', 'exponential')")
    theta = _check_theta(theta)
    X, y = _check_xy(X, y, theta)
    _check_labels_pm1("y", y)
    sigma = check_positive("sigma", sigma, allow_zero=True)
    s, st = keep_probability(epsilon_y), inverse_weight(epsilon_y)
    v = sigma**2 * float(theta @ theta)
    m = (X @ theta) * y

    def feature_var(q):
        if loss.name == "exponential":
            return (st**2 * np.exp(-2 * q) + (1 - st) ** 2 * np.exp(2 * q)) * math.expm1(v) + 2 * st * (1 - st) * (
                math.expm1(-v)
            )
        return v * (q + 1 - 2 * st) ** 2 + 0.5 * v**2

    label_var = inverse_bernoulli_variance(loss.derivative(m), loss.derivative(-m), epsilon=epsilon_y)
    return s * feature_var(m) + (1 - s) * feature_var(-m) + label_var


def iwp_regression_loss(theta: ArrayLike, X_tilde: ArrayLike, y_tilde: ArrayLike, *, sigma: float,
                        sigma_y: float) -> np.ndarray:
    """Per-sample ℓ̃ = ½(θᵀx̃ − ỹ)² − ½(σ²‖θ‖² + σ_y²) (App. E.2), unbiased for ½(θᵀx − y)².

    Parameters
    ----------
    theta : array-like of shape (p,)
        Model parameters θ.
    X_tilde : array-like of shape (n, p)
        Released features x̃ = x + N(0, σ² I).
    y_tilde : array-like of shape (n,)
        Released responses ỹ = y + N(0, σ_y²).
    sigma, sigma_y : float
        Feature and response noise stds, ≥ 0.

    Returns
    -------
    ndarray of shape (n,)
    """
    theta = _check_theta(theta)
    X, y = _check_xy(X_tilde, y_tilde, theta)
    v = check_positive("sigma", sigma, allow_zero=True) ** 2 * float(theta @ theta)
    return mse_terms(X @ theta - y, v, check_positive("sigma_y", sigma_y, allow_zero=True) ** 2)[0]


def iwp_regression_gradient(theta: ArrayLike, X_tilde: ArrayLike, y_tilde: ArrayLike, *, sigma: float) -> np.ndarray:
    """Per-sample ∇ℓ̃ = (θᵀx̃ − ỹ)x̃ − σ²θ (App. E.2), unbiased for (θᵀx − y)x; shape (n, p).

    Parameters
    ----------
    theta : array-like of shape (p,)
        Model parameters θ.
    X_tilde : array-like of shape (n, p)
        Released features.
    y_tilde : array-like of shape (n,)
        Released responses.
    sigma : float
        Feature noise std σ ≥ 0 (the response noise does not enter the gradient).

    Returns
    -------
    ndarray of shape (n, p)
    """
    theta = _check_theta(theta)
    X, y = _check_xy(X_tilde, y_tilde, theta)
    sigma = check_positive("sigma", sigma, allow_zero=True)
    return (X @ theta - y)[:, None] * X - sigma**2 * theta


def glm_risk(coefs: ArrayLike, X: ArrayLike, y: ArrayLike, *, loss: str = "exponential", lam: float = 0.0,
             chunk: int = 65536) -> np.ndarray | float:
    """Clean regularised empirical risk mean_i f(θᵀx_i y_i) + λ‖θ‖²/2 for each row θ of ``coefs``.

    ``coefs`` (T, p) or (p,); returns shape (T,) (or a scalar). ``loss="mse"`` gives
    mean ½(θᵀx_i − y_i)² + λ‖θ‖²/2 for regression. Chunked over samples to bound memory.

    Parameters
    ----------
    coefs : array-like of shape (T, p) or (p,)
        Parameter vectors θ, e.g. an SGD trajectory.
    X : array-like of shape (n, p)
        Clean features.
    y : array-like of shape (n,)
        Clean labels (±1, or real for ``"mse"``).
    loss : {"exponential", "logistic", "quadratic", "mse"}
        The loss.
    lam : float
        ℓ₂ regularisation λ ≥ 0.
    chunk : int
        Samples per block.

    Returns
    -------
    ndarray of shape (T,) or float
        A float when ``coefs`` is 1-D.
    """
    coefs = np.asarray(coefs, dtype=float)
    single = coefs.ndim == 1
    C = np.atleast_2d(coefs)
    X = check_array("X", X, ndim=2, dim=C.shape[1])
    y = check_array("y", y, ndim=1)
    lam = check_positive("lam", lam, allow_zero=True)
    mse = loss == "mse"
    f = None if mse else get_loss(loss)
    total = np.zeros(C.shape[0])
    for start in range(0, X.shape[0], chunk):
        Z = X[start : start + chunk] @ C.T
        yb = y[start : start + chunk, None]
        total += (0.5 * (Z - yb) ** 2).sum(0) if mse else f.derivative(Z * yb, 0).sum(0)
    out = total / X.shape[0] + 0.5 * lam * np.einsum("ij,ij->i", C, C)
    return float(out[0]) if single else out


