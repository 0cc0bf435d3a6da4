"""The server side of seed 000's modulated regression: debiased statistics, streaming and exact simulation.

What :mod:`privaudit.learners.modulated`'s learners (and the FedAvg baseline) compute from the
clients' releases, kept apart from the estimators:

* :class:`ServerStatistics` / :func:`server_statistics` / :func:`debias_moments`: the round's
  Σ_x = (Σ_g − C)/(1 − α)² and Z = (1/(K(1 − α))) Σ_i y_i g̃_i with the derived correction
  C = (λ²/(2m²)) P_V + σ² I (or the seed's printed one, for the bias audit), and the unbiased
  gradient G = Σ_x β − Z (:func:`server_gradient`); :func:`estimating_functions` gives the
  per-client ψ_i of the sandwich covariance.
* :func:`sample_noise_projection`: one exact draw of what the server sees of a round's noise
  given A = [G, y] (the QR projection plus a Bartlett–Wishart factor derived in
  :mod:`privaudit.learners.modulated`'s docstring, "Exact simulation from sufficient statistics").
* Streaming and randomness: clients are processed in blocks of :data:`BLOCK` rows
  (:func:`iter_blocks`); block b of round t draws from
  :func:`~privaudit.mechanisms.randomness.keyed_rng` (root, t, b), so a fit does not depend on
  ``chunk_size``.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from typing import Iterator

import numpy as np
from numpy.typing import ArrayLike
from threadpoolctl import threadpool_limits

from privaudit.mechanisms.modulated import ModulatedMechanism
from privaudit.mechanisms.validation import InvalidInputError, InvalidParameterError, check_array, check_int

#: Rows per random-number block: the unit of client randomness and of summation.
BLOCK = 32768
#: Covariance corrections of the server: the derived λ²/(2m²) P_V, the seed's printed λ²/(2m) P_V, none.
CORRECTIONS = ("derived", "seed", "none")


# --------------------------------------------------------------------------------------
# streaming helpers (shared with the FedAvg baseline)
# --------------------------------------------------------------------------------------
def iter_blocks(X: np.ndarray, y: np.ndarray, chunk_size: int | None,
                intercept: bool = False) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """Yield (block index, X block, y block), reading ``chunk_size`` rows (rounded up to BLOCK) at a time.

    Blocks are always BLOCK rows (the last may be shorter), whatever ``chunk_size``.
    With ``chunk_size=None`` X and y must already be validated float arrays
    (:func:`check_data`); otherwise every chunk read is checked for finiteness.
    With ``intercept`` a column of ones is appended to each X block.

    Parameters
    ----------
    X : array of shape (K, p)
        Client features (a numpy array or a lazily read array such as a memmap).
    y : array of shape (K,)
        Responses.
    chunk_size : int or None
        Rows read at once (rounded up to a multiple of BLOCK); None reads everything.
    intercept : bool
        Append a column of ones to each X block.

    Yields
    ------
    block : int
        Global block index (row offset // BLOCK), the key of the block's randomness.
    X_block : ndarray of shape (≤ BLOCK, p) or (≤ BLOCK, p + 1)
    y_block : ndarray of shape (≤ BLOCK,)
    """
    K = X.shape[0]
    read = K if chunk_size is None else max(1, math.ceil(chunk_size / BLOCK)) * BLOCK
    for start in range(0, K, read):
        if chunk_size is None:  # validated in full by check_data already
            Xc, yc = X, y
        else:
            Xc = check_array("X", X[start : start + read], ndim=2)
            yc = check_array("y", y[start : start + read], ndim=1)
        if intercept:
            Xc = np.hstack([Xc, np.ones((Xc.shape[0], 1))])
        for off in range(0, Xc.shape[0], BLOCK):
            yield (start + off) // BLOCK, Xc[off : off + BLOCK], yc[off : off + BLOCK]


def single_blas_thread(n_rows: int) -> contextlib.AbstractContextManager:
    """Context with one BLAS thread for the per-block products of ``n_rows`` clients.

    The block products have m, d or 1 columns and are memory-bound; a second BLAS
    thread made them 4–8× slower on the shared, loaded 2-core machine (measured).
    Below one block the limit is skipped: entering threadpoolctl costs ~0.3–1 ms.

    Parameters
    ----------
    n_rows : int
        Number of client rows about to be processed.

    Returns
    -------
    contextlib.AbstractContextManager
        threadpoolctl's limit when ``n_rows >= BLOCK``, else a null context.
    """
    return threadpool_limits(limits=1, user_api="blas") if n_rows >= BLOCK else contextlib.nullcontext()


def project_ball(beta: np.ndarray, radius: float) -> np.ndarray:
    """Euclidean projection onto {‖β‖₂ ≤ radius}.

    Parameters
    ----------
    beta : ndarray of shape (d,)
        The point.
    radius : float
        Ball radius R ≥ 0.

    Returns
    -------
    ndarray of shape (d,)
        ``beta`` itself when inside the ball, else β·R/‖β‖₂.
    """
    norm = float(np.linalg.norm(beta))
    return beta if norm <= radius else beta * (radius / norm)


# --------------------------------------------------------------------------------------
# server statistics
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ServerStatistics:
    """One round's debiased server statistics (leading axes = independent replicates).

    Attributes
    ----------
    Sigma_x : ndarray (..., d, d)
        (Σ_g − C)/(1 − α)², unbiased for XᵀX/K with the derived correction.
    Z : ndarray (..., d)
        (1/(K(1 − α))) Σ_i y_i g̃_i, unbiased for Xᵀy/K.
    n_clients : int
        K.
    """

    Sigma_x: np.ndarray
    Z: np.ndarray
    n_clients: int


def _correction(mechanism: ModulatedMechanism, correction: str) -> np.ndarray | None:
    if correction == "derived":
        return mechanism.second_moment_correction()
    if correction == "seed":
        return mechanism.seed_correction()
    if correction == "none":
        return None
    raise InvalidParameterError(f"correction must be one of {CORRECTIONS}, got correction={correction!r}")


def debias_moments(gram: ArrayLike, cross: ArrayLike, n_clients: int, mechanism: ModulatedMechanism, *,
                   correction: str = "derived") -> ServerStatistics:
    """Server statistics from accumulated raw sums Σ_i g̃_i g̃_iᵀ (..., d, d) and Σ_i y_i g̃_i (..., d).

    This is the streaming form of :func:`server_statistics`: accumulate the two sums
    over chunks of releases, then call this once.

    Parameters
    ----------
    gram : array-like of shape (..., d, d)
        Σ_i g̃_i g̃_iᵀ over the K clients.
    cross : array-like of shape (..., d)
        Σ_i y_i g̃_i.
    n_clients : int
        K.
    mechanism : ModulatedMechanism
        The round's mechanism (α and the correction C).
    correction : {"derived", "seed", "none"}
        Which C is subtracted (see :func:`server_statistics`).

    Returns
    -------
    ServerStatistics
        Σ_x = (gram/K − C)/(1 − α)² and Z = cross/(K(1 − α)).

    Raises
    ------
    InvalidParameterError
        For an unknown ``correction``.
    """
    a = 1.0 - mechanism.alpha
    sigma_g = np.asarray(gram, dtype=float) / n_clients
    corr = _correction(mechanism, correction)
    if corr is not None:
        sigma_g = sigma_g - corr
    return ServerStatistics(Sigma_x=sigma_g / a**2, Z=np.asarray(cross, dtype=float) / (n_clients * a), n_clients=int(n_clients))


def server_statistics(releases: ArrayLike, y: ArrayLike, mechanism: ModulatedMechanism, *, correction: str = "derived",
                      chunk_size: int | None = None) -> ServerStatistics:
    """Debiased Σ_x and Z of one round (seed 000, §3.1.4; §7 for m > 1).

    Parameters
    ----------
    releases : array (..., K, d)
        The clients' releases g̃_i of one round; leading axes are independent
        replicates (vectorised Monte Carlo).
    y : array (K,) or (..., K)
        Public responses.
    mechanism : ModulatedMechanism
        The round's mechanism (α, λ, m, σ and basis V define the correction).
    correction : {"derived", "seed", "none"}
        C = (λ²/(2m²)) P_V + σ² I (derived, unbiased), the seed's printed
        (λ²/(2m)) P_V + σ² I (biased for m > 1), or no debiasing (Σ_g/(1 − α)²).
    chunk_size : int, optional
        Accumulate over chunks of this many clients (memory O(d² + chunk·d) per replicate).

    Returns
    -------
    ServerStatistics
        Σ_x = (Σ_g − C)/(1 − α)² and Z = (1/(K(1 − α))) Σ_i y_i g̃_i.

    Raises
    ------
    InvalidInputError
        When ``releases`` is not (..., K, d) or ``y``'s last axis is not K.
    InvalidParameterError
        For an unknown ``correction``.
    """
    _correction(mechanism, correction)  # validate early
    R = np.asarray(releases) if not hasattr(releases, "shape") else releases
    if len(R.shape) < 2 or R.shape[-1] != mechanism.dim:
        raise InvalidInputError(f"releases must have shape (..., K, {mechanism.dim}), got {tuple(R.shape)}")
    K = R.shape[-2]
    yv = np.asarray(y, dtype=float)
    if yv.shape[-1] != K:
        raise InvalidInputError(f"y must have last dimension K={K}, got shape {yv.shape}")
    step = K if chunk_size is None else check_int("chunk_size", chunk_size)
    gram = np.zeros(R.shape[:-2] + (mechanism.dim, mechanism.dim))
    cross = np.zeros(R.shape[:-2] + (mechanism.dim,))
    for s in range(0, K, step):
        g = check_array("releases", R[..., s : s + step, :])
        yc = check_array("y", yv[..., s : s + step])
        gram += np.swapaxes(g, -1, -2) @ g
        cross += np.einsum("...k,...kd->...d", yc, g)
    return debias_moments(gram, cross, K, mechanism, correction=correction)


def server_gradient(stats: ServerStatistics, beta: ArrayLike) -> np.ndarray:
    """G = Σ_x β − Z, unbiased for ∇L(β) = XᵀXβ/K − Xᵀy/K; shape (..., d).

    Parameters
    ----------
    stats : ServerStatistics
        The round's debiased statistics.
    beta : array-like of shape (d,) or (..., d)
        Current parameters, broadcast against the replicate axes.

    Returns
    -------
    ndarray of shape (..., d)
    """
    beta = np.asarray(beta, dtype=float)
    return (stats.Sigma_x @ beta[..., None])[..., 0] - stats.Z


def estimating_functions(releases: np.ndarray, y: np.ndarray, beta: np.ndarray, mechanism: ModulatedMechanism) -> np.ndarray:
    """Per-client ψ_i(β) = (g̃_i g̃_iᵀ − C)β/(1 − α)² − y_i g̃_i/(1 − α), shape (K, d); mean = G.

    The derived correction C = (λ²/(2m²)) P_V + σ² I is used; the ψ_i feed the sandwich covariance.

    Parameters
    ----------
    releases : ndarray of shape (K, d)
        One round's releases g̃_i.
    y : ndarray of shape (K,)
        Responses.
    beta : ndarray of shape (d,)
        Parameters at which ψ is evaluated.
    mechanism : ModulatedMechanism
        The round's mechanism.

    Returns
    -------
    ndarray of shape (K, d)
    """
    a = 1.0 - mechanism.alpha
    coef = (releases @ beta) / a**2 - y / a
    return releases * coef[:, None] - (mechanism.second_moment_correction() @ beta) / a**2


# --------------------------------------------------------------------------------------
# exact simulation from sufficient statistics
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class NoiseProjection:
    """One exact draw of what the server sees of a round's noise Ξ (K × d) given A = [G, y].

    Attributes
    ----------
    P : ndarray (p, r)
        Q = A P (K × r) is an orthonormal basis of col(A), r = rank A, p = d + 1.
    W : ndarray (r, d)
        QᵀΞ, iid N(0, σ²).
    F : ndarray (q, d)
        Ξᵀ(I − P_A)Ξ = FᵀF: q = d and F = σR (Bartlett, R upper triangular) when
        K − r ≥ d, else q = K − r and F = σ × (q × d standard normals).
    n_perp : int
        K − r, the Wishart degrees of freedom.
    cross : ndarray (p, d)
        AᵀΞ = AᵀQ W.
    gram : ndarray (d, d)
        ΞᵀΞ = WᵀW + FᵀF.
    """

    P: np.ndarray
    W: np.ndarray
    F: np.ndarray
    n_perp: int
    cross: np.ndarray
    gram: np.ndarray


def sample_noise_projection(gram_A: ArrayLike, n_rows: int, dim: int, sigma: float,
                            rng: np.random.Generator | int | None = None) -> NoiseProjection:
    """Draw (AᵀΞ, ΞᵀΞ) exactly, for Ξ (n_rows × dim) iid N(0, σ²), from AᵀA alone.

    See the module docstring for the derivation. Rank: with S = diag(‖a_j‖) (1 for
    zero columns) and S⁻¹AᵀAS⁻¹ = UΛUᵀ, eigenvalues above max(Λ)·p·64·ε (the rounding
    floor of a symmetric eigen-decomposition of a p × p matrix with unit diagonal) span
    col(A). The Wishart_dim(n, σ²I) part, n = n_rows − r, is σ²RᵀR with R upper
    triangular, R_ii² ~ χ²(n − i) (i = 0, …, dim − 1) and R_ij ~ N(0, 1) for i < j
    (Bartlett decomposition, i.e. the R factor of the QR of an n × dim Gaussian); for
    n < dim the n × dim Gaussian itself is drawn. Draw order: W, then the Wishart part.

    Parameters
    ----------
    gram_A : array (p, p)
        AᵀA, symmetric positive semi-definite.
    n_rows : int
        K, the number of rows of A and Ξ.
    dim : int
        d, the number of columns of Ξ.
    sigma : float
        Noise standard deviation σ.
    rng : int, Generator or None

    Returns
    -------
    NoiseProjection
    """
    rng = np.random.default_rng(rng)
    gram_A = np.asarray(gram_A, dtype=float)
    p = gram_A.shape[0]
    scale = np.sqrt(np.clip(np.diag(gram_A), 0, None))
    scale[scale == 0] = 1.0
    lam, U = np.linalg.eigh(gram_A / np.outer(scale, scale))
    keep = lam > max(float(lam[-1]), 0.0) * p * 64 * np.finfo(float).eps if lam[-1] > 0 else np.zeros(p, bool)
    lam, U = lam[keep], U[:, keep]
    r = int(keep.sum())
    P = (U / np.sqrt(lam)) / scale[:, None]
    AtQ = (U * np.sqrt(lam)) * scale[:, None]
    W = sigma * rng.standard_normal((r, dim))
    n = int(n_rows) - r
    if n >= dim:
        F = np.zeros((dim, dim))
        F[np.diag_indices(dim)] = np.sqrt(rng.chisquare(n - np.arange(dim)))
        F[np.triu_indices(dim, 1)] = rng.standard_normal(dim * (dim - 1) // 2)
        F *= sigma
    else:
        F = sigma * rng.standard_normal((max(n, 0), dim))
    return NoiseProjection(P=P, W=W, F=F, n_perp=n, cross=AtQ @ W, gram=W.T @ W + F.T @ F)
