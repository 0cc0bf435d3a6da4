"""Weierstrass and Bernoulli transforms and their inverses for GLM losses (seed 001, §3, §5, App. D).

Seed 001 (*Learning with Locally Private Examples by Inverse Weierstrass Private SGD*)
models the expectation of a computation over a local-DP release as a transform:

* Gaussian features, x̃ = x + w with w ~ N(0, σ² I_p), give the Weierstrass transform
  (Def. 3.1, Thm 3.3)

      W_{σ²}[f](x) = E_w f(x + w) = Σ_k σ^{2k}/(2^k k!) Δ^k f(x),

  with inverse (Thm 5.1, alternating signs) W⁻¹_{σ²}[f] = Σ_k (−σ²)^k/(2^k k!) Δ^k f.
* Randomised-response labels, ỹ = y w.p. S(ε) = e^ε/(1+e^ε) and −y otherwise, give the
  Bernoulli transform B_ε[g](y) = S g(y) + (1−S) g(−y) (Def. 3.5) with inverse
  B⁻¹_ε[g](ỹ) = S̃ g(ỹ) + (1−S̃) g(−ỹ), S̃(ε) = e^ε/(e^ε − 1) (Thm 5.1).
* The composed transform is T = B ∘ W and T⁻¹ = B⁻¹ ∘ W⁻¹ (eq. 5, Prop. 5.2).

**GLM reduction (§5.2, App. D.5).** For ℓ(θ, x, y) = f(θᵀxy) the Laplacian in x is
Δ_x^k f(θᵀxy) = ‖θ‖^{2k} f^{(2k)}(θᵀxy) (y² = 1), so every transform reduces to a
*one-dimensional* transform of f at the margin z = θᵀxy with variance v = σ²‖θ‖²:

      W_v[f^{(m)}](z) = Σ_k (v/2)^k/k! f^{(m+2k)}(z),   W⁻¹_v[f^{(m)}](z) = Σ_k (−v/2)^k/k! f^{(m+2k)}(z).

This module works on that 1-D form: ``variance`` always means v (σ²‖θ‖² for a GLM).

**Convergence.** The series converge for f in Φ_{M,a} (Def. 3.2) when v < 1/(2a) (W) and
v < 1/(4a) (W⁻¹, Thm 5.1). Along any direction, e^{−z} and polynomials are in Φ_{M,a} for
*every* a > 0 (App. B.2), so the closed forms of the quadratic ½(z−1)² and exponential
e^{−z} losses hold for every v ≥ 0 and no condition applies:

* quadratic: W⁻¹_v[f] = f − v/2, W⁻¹_v[f'] = f', W⁻¹_v[f''] = 1 (the series stops);
* exponential: W^{±1}_v[f^{(m)}](z) = (−1)^m e^{±v/2} e^{−z}.

The logistic loss f(z) = log(1+e^{−z}) is in no Φ_{M,a} (App. D.7): its Taylor series has
radius π (poles at z = ±iπ), so |f^{(2k)}| grows like (2k)!/π^{2k} and the W⁻¹ series is
*asymptotic*, divergent for every v > 0. It is truncated after ``n_terms`` = K correction
terms (k = 0..K, the paper's K of App. D.7). Its derivatives are computed exactly as
polynomials in the sigmoid p = 1/(1+e^{−z}): f' = p − 1 and d/dz P(p) = P'(p)·p(1−p).
The truncated series is only meaningful while its terms still decrease: with
c_k = sup_z |f^{(2k)}(z)|/(2^k k!), term k is at most c_k v^k, and we require
v < v_K = min_{2≤k≤K+1} c_{k−1}/c_k (the terms decrease up to the first omitted one, the
usual optimal-truncation rule for asymptotic series). This gives v_1 = 8, v_2 = 3,
v_3 ≈ 1.88 (:func:`series_variance_limit`). Beyond v_K an error is raised; inside it the
actual truncation bias W_v[W⁻¹_{v,K}[f]] − f is *measured* exactly by Gauss–Hermite
quadrature (:func:`truncation_bias`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike
from numpy.polynomial import polynomial as npoly

from privaudit.mechanisms.validation import (
    InvalidParameterError,
    ParameterTypeError,
    check_array,
    check_epsilon,
    check_int,
    check_positive,
)

LOSSES = ("exponential", "logistic", "quadratic")

#: Gauss–Hermite nodes used for the exact (quadrature) forward transform of the logistic loss.
_GH_NODES = 96


# --------------------------------------------------------------------------------------
# Bernoulli transform (randomised response on labels)
# --------------------------------------------------------------------------------------
def keep_probability(epsilon: float) -> float:
    """S(ε) = e^ε/(1+e^ε), the probability that RR keeps a binary label (seed 001, eq. 1).

    ``epsilon=inf`` (labels not privatised) gives S = 1.

    Parameters
    ----------
    epsilon : float
        Label privacy budget ε in (0, inf].

    Returns
    -------
    float
        S in (½, 1].

    Raises
    ------
    InvalidParameterError
        When ε is not in (0, inf].
    """
    eps = check_epsilon(epsilon, "epsilon_y", allow_inf=True)
    return 1.0 if math.isinf(eps) else 1.0 / (1.0 + math.exp(-eps))


def inverse_weight(epsilon: float) -> float:
    """S̃(ε) = e^ε/(e^ε − 1), the weight of the inverse Bernoulli transform (Thm 5.1).

    S̃ S + (1−S̃)(1−S) = 1 and S̃(1−S) + (1−S̃)S = 0, which is what makes B⁻¹ invert B.
    ``epsilon=inf`` gives S̃ = 1.

    Parameters
    ----------
    epsilon : float
        Label privacy budget ε in (0, inf].

    Returns
    -------
    float
        S̃ ≥ 1 (it grows like 1/ε as ε → 0, where RR labels carry no information).
    """
    eps = check_epsilon(epsilon, "epsilon_y", allow_inf=True)
    return 1.0 if math.isinf(eps) else 1.0 / (-math.expm1(-eps))


def bernoulli(g: Callable, y: ArrayLike, *, epsilon: float) -> np.ndarray:
    """B_ε[g](y) = S(ε) g(y) + (1 − S(ε)) g(−y) = E[g(RR_ε(y))] (seed 001, Def. 3.5).

    Parameters
    ----------
    g : callable
        Function of a label array, vectorised.
    y : array-like
        Labels in {−1, +1}.
    epsilon : float
        RR budget ε in (0, inf].

    Returns
    -------
    ndarray
        Shaped like ``g(y)``.
    """
    s = keep_probability(epsilon)
    y = check_array("y", y)
    return s * np.asarray(g(y), dtype=float) + (1 - s) * np.asarray(g(-y), dtype=float)


def inverse_bernoulli(g: Callable, y_tilde: ArrayLike, *, epsilon: float) -> np.ndarray:
    """B⁻¹_ε[g](ỹ) = S̃(ε) g(ỹ) + (1 − S̃(ε)) g(−ỹ) (seed 001, Thm 5.1).

    E_{ỹ ~ RR_ε(y)}[B⁻¹_ε[g](ỹ)] = g(y): an unbiased estimate of g at the true label
    from its randomised release. ``g`` is vectorised over label arrays.

    Parameters
    ----------
    g : callable
        Function of a label array, vectorised.
    y_tilde : array-like
        Released labels ỹ in {−1, +1}.
    epsilon : float
        RR budget ε in (0, inf].

    Returns
    -------
    ndarray
        Shaped like ``g(y_tilde)``.
    """
    st = inverse_weight(epsilon)
    y_tilde = check_array("y_tilde", y_tilde)
    return st * np.asarray(g(y_tilde), dtype=float) + (1 - st) * np.asarray(g(-y_tilde), dtype=float)


def inverse_bernoulli_variance(g_plus: ArrayLike, g_minus: ArrayLike, *, epsilon: float) -> np.ndarray:
    """Var(B⁻¹_ε[g](ỹ)) = S̃(S̃ − 1)(g(1) − g(−1))², for either true label (App. D.4).

    Parameters
    ----------
    g_plus, g_minus : array-like
        g(1) and g(−1), broadcast together.
    epsilon : float
        RR budget ε in (0, inf] (variance 0).

    Returns
    -------
    ndarray
        The variance, broadcast shape of the two arguments.
    """
    st = inverse_weight(epsilon)
    diff = np.asarray(g_plus, dtype=float) - np.asarray(g_minus, dtype=float)
    return st * (st - 1) * diff**2


# --------------------------------------------------------------------------------------
# GLM losses and their derivatives of any order
# --------------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def _sigmoid_polynomials(max_order: int) -> tuple[np.ndarray, ...]:
    """Ascending coefficients of P_m with f^{(m)}(z) = P_m(p), p = sigmoid(z), m = 1..max_order.

    f(z) = log(1+e^{−z}) = −log p, so f' = p − 1; dp/dz = p − p² gives
    P_{m+1}(p) = P_m'(p)·(p − p²). Entry 0 is unused (f itself is not polynomial in p).
    """
    polys = [np.zeros(1), np.array([-1.0, 1.0])]
    dp = np.array([0.0, 1.0, -1.0])
    for _ in range(1, max_order):
        polys.append(npoly.polymul(npoly.polyder(polys[-1]), dp))
    for c in polys:
        c.setflags(write=False)
    return tuple(polys)


@dataclass(frozen=True)
class GLMLoss:
    """A margin loss f(z) of a GLM, ℓ(θ, x, y) = f(θᵀxy), with derivatives of any order.

    Attributes
    ----------
    name : {"exponential", "logistic", "quadratic"}
    closed_form : bool
        True when W and W⁻¹ have exact closed forms for every variance (no truncation).
    """

    name: str

    @property
    def closed_form(self) -> bool:
        return self.name != "logistic"

    def derivative(self, z: ArrayLike, order: int = 0) -> np.ndarray:
        """f^{(order)}(z), vectorised over ``z``.

        Exponential: (−1)^m e^{−z}; quadratic: ½(z − 1)², z − 1, 1, then 0; logistic:
        log(1 + e^{−z}) and, for m ≥ 1, the polynomial P_m of the sigmoid p (exact).

        Parameters
        ----------
        z : array-like
            Margins.
        order : int
            Derivative order m ≥ 0.

        Returns
        -------
        ndarray
            Shaped like ``z``.
        """
        z = np.asarray(z, dtype=float)
        if self.name == "exponential":
            return (-1.0) ** order * np.exp(-z)
        if self.name == "quadratic":
            if order == 0:
                return 0.5 * (z - 1.0) ** 2
            if order == 1:
                return z - 1.0
            return np.full_like(z, 1.0 if order == 2 else 0.0)
        if order == 0:
            return np.logaddexp(0.0, -z)
        p = _expit(z)
        return npoly.polyval(p, _sigmoid_polynomials(order)[order])


def _expit(z: np.ndarray) -> np.ndarray:
    """Logistic sigmoid 1/(1+e^{−z}), overflow-free for large |z|."""
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def get_loss(loss: str | GLMLoss) -> GLMLoss:
    """Validate a loss name (or pass a :class:`GLMLoss` through).

    Parameters
    ----------
    loss : str or GLMLoss
        One of :data:`LOSSES`, or a loss object.

    Returns
    -------
    GLMLoss

    Raises
    ------
    ParameterTypeError
        When ``loss`` is neither a string nor a GLMLoss.
    InvalidParameterError
        For an unknown name.
    """
    if isinstance(loss, GLMLoss):
        return loss
    if not isinstance(loss, str):
        raise ParameterTypeError(f"loss must be a string in {LOSSES}, got loss={loss!r}")
    if loss not in LOSSES:
        raise InvalidParameterError(f"loss must be one of {LOSSES}, got loss={loss!r}")
    return GLMLoss(loss)


# --------------------------------------------------------------------------------------
# Convergence domain of the truncated logistic series
# --------------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def _logistic_term_bounds(n_max: int) -> tuple[float, ...]:
    """c_k = sup_z |f^{(2k)}(z)|/(2^k k!) for k = 0..n_max (c_0 = inf: f is unbounded).

    The sup over z is the sup over p ∈ [0, 1] of the polynomial |P_{2k}(p)|: it is taken
    at the roots of P_{2k}' in [0, 1] or at the end points, so it is exact.
    """
    polys = _sigmoid_polynomials(2 * n_max)
    out = [math.inf]
    for k in range(1, n_max + 1):
        c = polys[2 * k]
        crit = [r.real for r in np.roots(npoly.polyder(c)[::-1]) if abs(r.imag) < 1e-9 and 0 <= r.real <= 1]
        pts = np.array([0.0, 1.0, *crit])
        out.append(float(np.abs(npoly.polyval(pts, c)).max()) / (2**k * math.factorial(k)))
    return tuple(out)


def series_variance_limit(loss: str | GLMLoss, n_terms: int) -> float:
    """Largest variance v at which the W⁻¹ series of ``loss``, truncated at K = ``n_terms``, is used.

    * quadratic, exponential: ``inf`` (exact closed forms; f is in Φ_{M,a} for every a > 0
      along a GLM direction, so the paper's condition v < 1/(4a) never binds);
    * logistic: v_K = min_{2≤k≤K+1} c_{k−1}/c_k with c_k = sup|f^{(2k)}|/(2^k k!): the bounds
      on the series terms decrease up to the first omitted term (v_1 = 8, v_2 = 3, v_3 ≈ 1.88).

    Parameters
    ----------
    loss : {"exponential", "logistic", "quadratic"} or GLMLoss
        The margin loss f.
    n_terms : int
        K ≥ 1, the number of correction terms kept.

    Returns
    -------
    float
        v_K, or ``inf`` for the closed-form losses.
    """
    loss = get_loss(loss)
    k_max = check_int("n_terms", n_terms, minimum=1)
    if loss.closed_form:
        return math.inf
    c = _logistic_term_bounds(k_max + 1)
    return min(c[k - 1] / c[k] for k in range(2, k_max + 2))


def check_series_variance(loss: str | GLMLoss, variance: ArrayLike, n_terms: int | None) -> None:
    """Raise if any ``variance`` lies outside the domain where the truncated series is used.

    See :func:`series_variance_limit`; no-op for the closed-form losses.

    Parameters
    ----------
    loss : {"exponential", "logistic", "quadratic"} or GLMLoss
        The margin loss f.
    variance : float or array-like
        v = σ²‖θ‖² values; the largest is checked.
    n_terms : int or None
        K ≥ 1 (required for the logistic loss).

    Raises
    ------
    InvalidParameterError
        When max v ≥ v_K, or the logistic loss is given no ``n_terms``.
    """
    loss = get_loss(loss)
    if loss.closed_form:
        return
    limit = series_variance_limit(loss, _n_terms(loss, n_terms))
    vmax = float(np.max(variance))
    if vmax >= limit:
        raise InvalidParameterError(
            f"variance={vmax:.6g} (σ²‖θ‖²) is outside the domain of the logistic W⁻¹ series truncated at "
            f"n_terms={n_terms}: its terms stop decreasing at v >= {limit:.6g}. Use fewer terms, more feature "
            "privacy budget (smaller σ) or a smaller projection radius."
        )


def _n_terms(loss: GLMLoss, n_terms: int | None) -> int | None:
    if n_terms is None:
        if not loss.closed_form:
            raise InvalidParameterError("the logistic loss has no closed-form W⁻¹: pass n_terms >= 1")
        return None
    return check_int("n_terms", n_terms, minimum=1)


# --------------------------------------------------------------------------------------
# Weierstrass transform and its inverse, on the 1-D GLM margin
# --------------------------------------------------------------------------------------
def _series_weights(variance, n_terms: int, sign: float) -> list:
    """(sign·v/2)^k / k!, k = 0..n_terms (each broadcast like ``variance``)."""
    half = sign * 0.5 * np.asarray(variance, dtype=float)
    return [half**k / math.factorial(k) for k in range(n_terms + 1)]


def _inverse_weierstrass(loss: GLMLoss, order: int, z: np.ndarray, variance, n_terms: int | None) -> np.ndarray:
    """Unvalidated W⁻¹_v[f^{(order)}](z) (hot path of the learners)."""
    if loss.name == "exponential":
        return (-1.0) ** order * np.exp(-0.5 * variance - z)
    if loss.name == "quadratic":
        if order == 0:
            return 0.5 * (z - 1.0) ** 2 - 0.5 * variance
        return loss.derivative(z, order)
    if n_terms == 0:
        return loss.derivative(z, order)
    # Logistic: Σ_{k=0}^{K} (−v/2)^k/k! f^{(order+2k)}(z). All orders >= 1 are polynomials in
    # p, so the k >= 1 (and, for order >= 1, k = 0) terms are summed as one polynomial.
    weights = _series_weights(variance, n_terms, -1.0)
    polys = _sigmoid_polynomials(order + 2 * n_terms)
    p = _expit(z)
    first = 0 if order >= 1 else 1
    out = loss.derivative(z, 0) if order == 0 else 0.0
    v_is_scalar = np.ndim(variance) == 0
    if v_is_scalar:
        deg = max(len(polys[order + 2 * k]) for k in range(first, n_terms + 1))
        coef = np.zeros(deg)
        for k in range(first, n_terms + 1):
            c = polys[order + 2 * k]
            coef[: len(c)] += float(weights[k]) * c
        return out + npoly.polyval(p, coef)
    for k in range(first, n_terms + 1):
        out = out + weights[k] * npoly.polyval(p, polys[order + 2 * k])
    return out


def inverse_weierstrass(
    loss: str | GLMLoss, derivative_order: int, z: ArrayLike, variance: ArrayLike, n_terms: int | None = None
) -> np.ndarray:
    """W⁻¹_v[f^{(m)}](z) for a GLM margin loss f (seed 001, Thm 5.1, §5.2).

    Parameters
    ----------
    loss : {"exponential", "logistic", "quadratic"}
    derivative_order : int
        m ≥ 0: the transform of the m-th derivative f^{(m)}.
    z : array_like
        Margins z = θᵀx̃ỹ (any shape).
    variance : float or array_like
        v = σ²‖θ‖² ≥ 0, broadcast against ``z``.
    n_terms : int, optional
        K ≥ 1 for the logistic loss (Σ_{k=0}^{K}); ignored by the closed forms.

    Returns
    -------
    ndarray
        Σ_k (−v/2)^k/k! f^{(m+2k)}(z), exact for quadratic/exponential, truncated for logistic.
        E_{u~N(0,v)}[W⁻¹_v[f^{(m)}](z + u)] = f^{(m)}(z) (up to the truncation bias).

    Raises
    ------
    InvalidParameterError
        Unknown loss, n_terms < 1, negative variance, or (logistic) variance outside
        the domain of the truncated series (:func:`series_variance_limit`).
    """
    loss = get_loss(loss)
    order = check_int("derivative_order", derivative_order, minimum=0)
    z = check_array("z", z)
    variance = _check_variance(variance)
    n = _n_terms(loss, n_terms)
    check_series_variance(loss, variance, n)
    return _inverse_weierstrass(loss, order, z, variance, n)


def weierstrass(
    loss: str | GLMLoss, derivative_order: int, z: ArrayLike, variance: ArrayLike, n_terms: int | None = None
) -> np.ndarray:
    """W_v[f^{(m)}](z) = E_{u~N(0,v)} f^{(m)}(z + u) (seed 001, Def. 3.1 / Thm 3.3 on the margin).

    Closed forms for quadratic (f + v/2, derivatives unchanged) and exponential (e^{v/2} f^{(m)}).
    For the logistic loss, with ``n_terms=None`` the expectation is computed exactly by
    Gauss–Hermite quadrature (96 nodes); with ``n_terms=K`` the series Σ_{k≤K} (v/2)^k/k!
    f^{(m+2k)} is returned instead (asymptotic, for small v only).

    Parameters
    ----------
    loss : {"exponential", "logistic", "quadratic"} or GLMLoss
        The margin loss f.
    derivative_order : int
        m ≥ 0.
    z : array-like
        Clean margins z = θᵀxy.
    variance : float or array-like
        v = σ²‖θ‖² ≥ 0, broadcast against ``z``.
    n_terms : int, optional
        Logistic only: K ≥ 1 to sum the series instead of the quadrature.

    Returns
    -------
    ndarray
        Broadcast shape of ``z`` and ``variance``.

    Raises
    ------
    InvalidParameterError
        Unknown loss, negative order or variance, or n_terms < 1.
    """
    loss = get_loss(loss)
    order = check_int("derivative_order", derivative_order, minimum=0)
    z = check_array("z", z)
    variance = _check_variance(variance)
    if loss.name == "exponential":
        return (-1.0) ** order * np.exp(0.5 * variance - z)
    if loss.name == "quadratic":
        return loss.derivative(z, order) + (0.5 * variance if order == 0 else 0.0)
    if n_terms is not None:
        k_max = check_int("n_terms", n_terms, minimum=1)
        w = _series_weights(variance, k_max, 1.0)
        return sum(w[k] * loss.derivative(z, order + 2 * k) for k in range(k_max + 1))
    return gaussian_expectation(lambda u: loss.derivative(u, order), z, variance)


def gaussian_expectation(func: Callable, z: ArrayLike, variance: ArrayLike) -> np.ndarray:
    """E_{u~N(0,v)} func(z + u) by Gauss–Hermite quadrature, vectorised over ``z`` and ``v``.

    (1/√π) Σ_i w_i func(z + √(2v) t_i), exact for polynomials of degree < 2·96 and
    accurate to ~1e−12 for the smooth, at most linearly growing functions used here.

    Parameters
    ----------
    func : callable
        Vectorised function; it receives an array with a trailing axis of 96 nodes.
    z : array-like
        Centres.
    variance : float or array-like
        v ≥ 0, broadcast against ``z``.

    Returns
    -------
    ndarray
        Broadcast shape of ``z`` and ``variance``.
    """
    t, w = np.polynomial.hermite.hermgauss(_GH_NODES)
    z = np.asarray(z, dtype=float)
    sd = np.sqrt(2.0 * np.asarray(variance, dtype=float))
    pts = z[..., None] + np.asarray(sd)[..., None] * t
    return func(pts) @ w / math.sqrt(math.pi)


def truncation_bias(
    loss: str | GLMLoss, z: ArrayLike, variance: ArrayLike, n_terms: int | None, derivative_order: int = 0
) -> np.ndarray:
    """Exact bias of the truncated inverse: W_v[W⁻¹_{v,K}[f^{(m)}]](z) − f^{(m)}(z).

    E_{u~N(0,v)}[W⁻¹_{v,K}[f^{(m)}](z + u)] is computed by Gauss–Hermite quadrature, so
    this is the bias of the IWP loss (m = 0) or gradient factor (m = 1) estimator at the
    clean margin z. Identically zero for the closed-form losses.

    Parameters
    ----------
    loss : {"exponential", "logistic", "quadratic"} or GLMLoss
        The margin loss f.
    z : array-like
        Clean margins.
    variance : float or array-like
        v ≥ 0, broadcast against ``z``.
    n_terms : int or None
        K ≥ 1 (required for the logistic loss).
    derivative_order : int
        m ≥ 0.

    Returns
    -------
    ndarray
        The bias, broadcast shape of ``z`` and ``variance``.
    """
    loss = get_loss(loss)
    order = check_int("derivative_order", derivative_order, minimum=0)
    z = check_array("z", z)
    variance = _check_variance(variance)
    if loss.closed_form:
        return np.zeros(np.broadcast(z, variance).shape)
    n = _n_terms(loss, n_terms)
    v = np.broadcast_to(variance, np.broadcast(z, variance).shape)
    mean = gaussian_expectation(lambda u: _inverse_weierstrass(loss, order, u, v[..., None], n), z, v)
    return mean - loss.derivative(z, order)


def _check_variance(variance):
    if np.ndim(variance) == 0:
        return check_positive("variance", variance, allow_zero=True)
    v = check_array("variance", variance)
    if np.any(v < 0):
        raise InvalidParameterError(f"variance must be >= 0, got min(variance)={v.min()!r}")
    return v


# --------------------------------------------------------------------------------------
# Composed transform T = B ∘ W and its inverse, on the GLM margin
# --------------------------------------------------------------------------------------
def transform(loss: str | GLMLoss, z: ArrayLike, *, variance: ArrayLike, epsilon_y: float,
              derivative_order: int = 0) -> np.ndarray:
    """T[f^{(m)}](z) = S W_v[f^{(m)}](z) + (1−S) W_v[f^{(m)}](−z) (seed 001, eq. 3 / Thm 4.2).

    The expected value of f^{(m)}(θᵀx̃ỹ) over the release, at clean margin z = θᵀxy, with
    v = σ²‖θ‖² and S = S(ε_y). For the exponential loss this is Thm 4.3:
    e^{v/2}(S e^{−z} + (1−S) e^{z}).

    Parameters
    ----------
    loss : {"exponential", "logistic", "quadratic"} or GLMLoss
        The margin loss f.
    z : array-like
        Clean margins z = θᵀxy.
    variance : float or array-like
        v = σ²‖θ‖² ≥ 0.
    epsilon_y : float
        Label budget ε_y in (0, inf].
    derivative_order : int
        m ≥ 0.

    Returns
    -------
    ndarray
        Broadcast shape of ``z`` and ``variance``.
    """
    s = keep_probability(epsilon_y)
    z = check_array("z", z)
    return s * weierstrass(loss, derivative_order, z, variance) + (1 - s) * weierstrass(
        loss, derivative_order, -z, variance
    )


def inverse_transform(
    loss: str | GLMLoss, z_tilde: ArrayLike, *, variance: ArrayLike, epsilon_y: float, derivative_order: int = 0,
    n_terms: int | None = None,
) -> np.ndarray:
    """T⁻¹[f^{(m)}](z̃) = S̃ W⁻¹_v[f^{(m)}](z̃) + (1−S̃) W⁻¹_v[f^{(m)}](−z̃) (seed 001, eq. 5, §5.2).

    At released margin z̃ = θᵀx̃ỹ; its expectation over the release is f^{(m)}(θᵀxy)
    (Prop. 5.2). With m = 0 this is the IWP loss ℓ̃ of §5.2.

    Parameters
    ----------
    loss : {"exponential", "logistic", "quadratic"} or GLMLoss
        The margin loss f.
    z_tilde : array-like
        Released margins z̃ = θᵀx̃ỹ.
    variance : float or array-like
        v = σ²‖θ‖² ≥ 0.
    epsilon_y : float
        Label budget ε_y in (0, inf].
    derivative_order : int
        m ≥ 0.
    n_terms : int, optional
        K ≥ 1 for the logistic loss.

    Returns
    -------
    ndarray
        Broadcast shape of ``z_tilde`` and ``variance``.

    Raises
    ------
    InvalidParameterError
        As :func:`inverse_weierstrass`.
    """
    st = inverse_weight(epsilon_y)
    z_tilde = check_array("z_tilde", z_tilde)
    return st * inverse_weierstrass(loss, derivative_order, z_tilde, variance, n_terms) + (
        1 - st
    ) * inverse_weierstrass(loss, derivative_order, -z_tilde, variance, n_terms)


# --------------------------------------------------------------------------------------
# Closed-form variances of App. D.4 (multivariate, w ~ N(0, v I_p))
# --------------------------------------------------------------------------------------
def quadratic_inverse_variance(x: ArrayLike, A: ArrayLike, b: ArrayLike, *, variance: float) -> np.ndarray:
    """Var_w(W⁻¹_v[f](x + w)) for f(x) = ½xᵀAx + bᵀx + c, w ~ N(0, v I) (seed 001, App. D.4).

    With Σ = (A + Aᵀ)/2 and v = 2t: W⁻¹_v[f] = f − (v/2) tr Σ, and

        Var = v ‖Σx + b‖² + (v²/2) tr(Σ²)   (= 2t‖Σx+b‖² + 2t² tr Σ²).

    The paper prints f²(x) + 2t‖Σx+b‖² + 2t² tr Σ², which is the *second moment*
    W_v[(W⁻¹_v f)²](x) = Var + f(x)²; the variance is returned here. Vectorised over rows of x.

    Parameters
    ----------
    x : array-like of shape (p,) or (n, p)
        Clean points.
    A : array-like of shape (p, p)
        Quadratic form (only its symmetric part matters).
    b : array-like of shape (p,)
        Linear term.
    variance : float
        v ≥ 0, the per-coordinate noise variance.

    Returns
    -------
    ndarray of shape () or (n,)
    """
    x = check_array("x", x, ndim=(1, 2))
    A = check_array("A", A, ndim=2)
    b = check_array("b", b, ndim=1)
    v = check_positive("variance", variance, allow_zero=True)
    sym = 0.5 * (A + A.T)
    grad = x @ sym + b
    return v * np.sum(grad * grad, axis=-1) + 0.5 * v**2 * np.trace(sym @ sym)


def exponential_inverse_variance(x: ArrayLike, alpha: ArrayLike, *, variance: float) -> np.ndarray:
    """Var_w(W⁻¹_v[f](x + w)) for f(x) = exp(αᵀx), w ~ N(0, v I) (seed 001, App. D.4).

    W⁻¹_v[f] = e^{−v‖α‖²/2} f, so Var = e^{2αᵀx}(e^{v‖α‖²} − 1). The paper prints
    exp(2αᵀx + 2t‖α‖²) (v = 2t), the second moment W_v[(W⁻¹_v f)²](x); the variance is
    returned here. Vectorised over rows of x.

    Parameters
    ----------
    x : array-like of shape (p,) or (n, p)
        Clean points.
    alpha : array-like of shape (p,)
        Exponent direction α.
    variance : float
        v ≥ 0, the per-coordinate noise variance.

    Returns
    -------
    ndarray of shape () or (n,)
    """
    x = check_array("x", x, ndim=(1, 2))
    alpha = check_array("alpha", alpha, ndim=1)
    v = check_positive("variance", variance, allow_zero=True)
    return np.exp(2 * (x @ alpha)) * np.expm1(v * float(alpha @ alpha))
