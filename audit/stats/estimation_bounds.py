"""Lower bounds on reconstruction error, and an upper bound on reconstruction success.

All MSE bounds are for the *total* squared error E‖x̂ − x‖² (sum over the d
coordinates); divide by d for the per-coordinate error that seed 000 prints.

* **Cramér–Rao** (unbiased attackers): E‖x̂ − x‖² ≥ tr(I(x)⁻¹) (:func:`crb`).
* **Seed 000, eq. (18)** — the trace form: (1/d) E‖x̂ − x‖² ≥ d / tr(I), i.e. a total
  of d²/tr(I) (:func:`seed_trace_bound`). By the AM–HM inequality on the eigenvalues
  of I, d²/tr(I) ≤ tr(I⁻¹): eq. (18) is valid but looser, with equality iff I ∝ I_d.
* **van Trees** (every attacker, x ~ π): E_π E‖x̂ − x‖² ≥ tr((E_π I(x) + J_π)⁻¹) with
  J_π = E_π[∇ log π ∇ log πᵀ] (:func:`van_trees`). Closed form for a Gaussian prior
  and constant I; Monte Carlo over π otherwise.
* **Hammersley–Chapman–Robbins** (unbiased attackers, no regularity): for each unit
  direction u, Var(uᵀx̂) ≥ sup_{t≠0} t² / χ²(P_{x+tu} ‖ P_x). Summed over an
  orthonormal basis it bounds tr Cov(x̂) (:func:`hammersley_chapman_robbins`). The t → 0
  limit of each term is 1/(uᵀIu), so HCR ≥ CRB in the eigenbasis of I. In the nonlinear
  regime of the modulated map (λω/m close to 1 − α, where the map is locally almost
  flat) the supremum sits at a finite step and HCR is strictly larger: the CRB is only
  local. Where I(x) is singular both are infinite (no unbiased estimator has finite
  variance there).
* **ReRo** (Hayes, Mahloujifar & Balle 2023): if every pair of releases of support
  points has trade-off curve ≥ f, any attacker's probability of outputting the exact
  point under a discrete prior with κ = max π(z) is ≤ 1 − f(κ) (:func:`rero_bound`).
  Proof: with test region {A = z}, power_z ≤ 1 − f(α_z); average with weights π(z),
  use concavity of 1 − f and Σ_z π(z) α_z ≤ κ.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import logsumexp, ndtr, ndtri

from privaudit.attacks.priors import DiscretePrior, GaussianPrior
from privaudit.attacks.protocol import FinitePrior
from privaudit.mechanisms.arcsine_gaussian import ArcsineGaussian
from privaudit.mechanisms.protocol import HasNoiseFreeMap, release_law
from privaudit.mechanisms.validation import (
    InvalidInputError,
    InvalidParameterError,
    check_array,
    check_int,
    check_interval,
    check_positive,
)

from privaudit.attacks.reconstruction import as_rounds

from privaudit.audit.stats.fisher import INFORMATION, release_fisher


# --- Cramér–Rao and the seed's trace form --------------------------------------------------------
def _square(info) -> np.ndarray:
    a = np.asarray(info, dtype=float)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise InvalidInputError(f"Fisher information must be square (…, d, d), got shape {a.shape}")
    return a


def crb(info: ArrayLike) -> float | np.ndarray:
    """Unbiased Cramér–Rao bound tr(I⁻¹) on the total MSE; ``inf`` where I is singular.

    Accepts a batch (…, d, d) and returns one bound per matrix.

    Parameters
    ----------
    info : array-like of shape (..., d, d)
        Fisher information matrices (a batch allowed).

    Returns
    -------
    float or ndarray of shape (...)
        tr(I⁻¹), ``inf`` for a singular matrix.
    """
    a = _square(info)
    w = np.linalg.eigvalsh(a)
    tol = 1e-12 * np.maximum(np.abs(w).max(axis=-1, keepdims=True), 1e-300)
    with np.errstate(divide="ignore"):
        out = np.where(np.all(w > tol, axis=-1), np.sum(1.0 / np.where(w > tol, w, 1.0), axis=-1), np.inf)
    return float(out) if out.ndim == 0 else out


def seed_trace_bound(info: ArrayLike) -> float | np.ndarray:
    """Seed 000 eq. (18) as a total-MSE bound: d²/tr(I) (per coordinate: d/tr(I)).

    With I = [(1 − α)² I_d + c₁ vvᵀ]/σ² + ββᵀ/σ_y² this is exactly the seed's
    1 / ( [(1 − α)² + c₁/d]/σ² + ‖β‖²/(dσ_y²) ) times d.

    Parameters
    ----------
    info : array-like of shape (..., d, d)
        Fisher information matrices (a batch allowed).

    Returns
    -------
    float or ndarray of shape (...)
        d²/tr(I).
    """
    a = _square(info)
    d = a.shape[-1]
    tr = np.trace(a, axis1=-2, axis2=-1)
    with np.errstate(divide="ignore"):
        out = np.where(tr > 0, d**2 / np.where(tr > 0, tr, 1.0), np.inf)
    return float(out) if out.ndim == 0 else out


# --- van Trees -------------------------------------------------------------------------------------
def van_trees(fisher: ArrayLike | Callable, prior: Any, *, n_mc: int = 20_000,
              rng: np.random.Generator | int | None = None) -> float:
    """Bayesian Cramér–Rao (van Trees) bound tr((E_π I(x) + J_π)⁻¹) on E_π E‖x̂ − x‖².

    Parameters
    ----------
    fisher : array (d, d) or callable
        The information I(x) — a constant matrix, or ``fisher(X) -> (n, d, d)``
        evaluated on prior draws for the Monte Carlo average E_π I.
    prior : GaussianPrior or any prior with ``sample`` and ``grad_log_density``
        J_π is Σ₀⁻¹ for a Gaussian prior (closed form), else the Monte Carlo mean of
        ∇ log π ∇ log πᵀ. Requires π to vanish on the boundary of its support
        (the van Trees regularity condition), so a discrete prior is rejected.
    n_mc : int
        Prior draws for whatever is not in closed form.
    rng : int, Generator or None

    Notes
    -----
    Valid for *every* estimator, biased or not: it bounds the prior-averaged MSE.
    With a Gaussian prior and a linear-Gaussian release it is attained by the
    posterior mean.
    """
    if isinstance(prior, FinitePrior):
        raise InvalidParameterError("van Trees needs a prior with a density that vanishes at its boundary; "
                                    "for a DiscretePrior use rero_bound")
    rng = np.random.default_rng(rng)
    n_mc = check_int("n_mc", n_mc)
    X = None
    if callable(fisher):
        X = prior.sample(n_mc, rng)
        e_info = np.mean(np.asarray(fisher(X), dtype=float), axis=0)
    else:
        e_info = _square(fisher)
    jp = prior.fisher_information() if hasattr(prior, "fisher_information") else None
    if jp is None:
        X = prior.sample(n_mc, rng) if X is None else X
        s = prior.grad_log_density(X)
        jp = s.T @ s / s.shape[0]
    return float(crb(e_info + jp))


# --- Hammersley–Chapman–Robbins -----------------------------------------------------------------------
def _log1p_chi2_mixture_shift(shifts: np.ndarray, amplitude: float, sigma: float) -> np.ndarray:
    """log(1 + χ²(p(· − s) ‖ p)) for the arcsine-plus-Gaussian law p.

    χ² = ∫ p(u)(p(u − s)/p(u) − 1)² du, written with expm1 so that small shifts do not
    cancel, summed in log space so that large ones do not overflow. Trapezoid rule
    (spectrally accurate for this smooth, Gaussian-tailed integrand) with spacing σ/8
    over ±(A + |s| + 12σ); both densities by the exact midpoint rule over φ. Zero
    shifts give 0 without quadrature.
    """
    flat = np.asarray(shifts, dtype=float).ravel()
    out = np.zeros(flat.size)
    nz = np.flatnonzero(flat != 0)
    if nz.size == 0:
        return out.reshape(np.shape(shifts))
    half = amplitude + float(np.max(np.abs(flat))) + 12 * sigma
    npts = int(min(20_001, max(801, math.ceil(2 * half / (sigma / 8)))))
    u = np.linspace(-half, half, npts)
    law = ArcsineGaussian(amplitude, sigma)
    logp = law.logpdf(u)
    for i in nz:
        z = law.logpdf(u - flat[i]) - logp
        with np.errstate(divide="ignore"):
            log_abs = np.where(z > 0, z + np.log(-np.expm1(-np.abs(z))), np.log(-np.expm1(-np.abs(z))))
        log_chi2 = logsumexp(logp + 2 * log_abs) + math.log(u[1] - u[0])
        out[i] = np.logaddexp(0.0, log_chi2)
    return out.reshape(np.shape(shifts))


def _log1p_chi2_round(mech, x: np.ndarray, h: np.ndarray, phase, information: str) -> np.ndarray:
    """log(1 + χ²) between releases of x + h_k and x, for each row h_k of h (K, d).

    A closed-form release (its :class:`~privaudit.mechanisms.protocol.ReleaseLaw`
    c·x + A Σ_j cos(ω⟨x, v_j⟩ + φ_j) v_j + N(0, σ² I)): c²‖h‖²/σ² without modulation vectors,
    else that orthogonal to V plus the phase-averaged (or, hidden, the marginal) term along each v_j.
    """
    law = release_law(mech)
    if law is not None and law.n_vectors == 0:
        return law.scale**2 * np.einsum("kd,kd->k", h, h) / law.sigma**2
    if law is not None:
        s2 = law.sigma**2
        v = law.basis
        c = law.scale
        hv = h @ v  # (K, m)
        perp = h - hv @ v.T
        log_perp = c**2 * np.einsum("kd,kd->k", perp, perp) / s2
        amp = law.amplitude
        if phase is None and information == "hidden":
            return log_perp + _log1p_chi2_mixture_shift(c * hv, amp, law.sigma).sum(axis=1)
        a = x @ v  # (m,)
        if phase is not None:
            phi = np.asarray(phase, dtype=float)[None, :, None]  # (1, m, 1)
            w = None
        else:
            q = 256
            phi = ((np.arange(q) + 0.5) * (2 * np.pi / q))[None, None, :]  # (1, 1, Q)
            w = q
        dev = c * hv[..., None] + amp * (
            np.cos(law.omega * (a + hv)[..., None] + phi) - np.cos(law.omega * a[None, :, None] + phi)
        )
        expo = dev**2 / s2  # (K, m, Q or 1)
        if w is None:
            along = expo[..., 0].sum(axis=1)
        else:  # E over each independent uniform phase, then multiply over j.
            along = (logsumexp(expo, axis=-1) - math.log(w)).sum(axis=1)
        return log_perp + along
    if isinstance(mech, HasNoiseFreeMap):
        base = mech.mean(x)[0]
        dm = mech.mean(x + h) - base
        return np.einsum("kd,kd->k", dm, dm) / mech.sigma**2
    raise InvalidParameterError(f"no χ² divergence is known for mechanism={mech!r}")


def hammersley_chapman_robbins(mechanism: Any, x: ArrayLike, *, phase: ArrayLike | None = None,
                               information: str = "known", beta: ArrayLike | None = None,
                               sigma_y: float | None = None, directions: ArrayLike | None = None,
                               t_grid: ArrayLike | None = None) -> float:
    """HCR lower bound on tr Cov(x̂) for any estimator unbiased at x and near it.

    Σ_i sup_t t² / χ²(P_{x + t u_i} ‖ P_x) over an orthonormal basis {u_i} (default:
    eigenvectors of the phase-averaged information, i.e. the modulation vectors and
    their complement for one round). χ² of Gaussian releases with mean shift Δ is
    exp(‖Δ‖²/σ²) − 1; for fresh known phases log(1 + χ²) is averaged over the phase
    (the phase factor of the likelihood cancels), for hidden phases it uses the 1-D
    marginal law along each v_j by quadrature. Independent rounds and the public
    response multiply 1 + χ².

    Parameters
    ----------
    mechanism, x, phase, information, beta, sigma_y
        As in :func:`privaudit.audit.stats.fisher.release_fisher`.
    directions : array (d, d), optional
        Orthonormal columns u_i.
    t_grid : array, optional
        Step sizes t > 0 (±t are both tried), in units of x; default 71 log-spaced
        multiples (1e−2 … 30) of the per-direction scale (uᵀ E_φI u)^(−1/2). The
        t → 0 limit 1/(uᵀ I u) is always included.
    """
    if information not in INFORMATION:
        raise InvalidParameterError(f"information must be one of {INFORMATION}, got information={information!r}")
    rounds = as_rounds(mechanism)
    x = check_array("x", x, ndim=1)
    d = x.size
    avg = release_fisher(rounds, x, information="known", beta=beta, sigma_y=sigma_y)
    # The t → 0 limit of t²/χ²(t u) is 1/(uᵀ I u), with I the information of what the
    # attacker sees; it is included exactly instead of at a numerically fragile tiny t.
    own = release_fisher(rounds, x, phase=phase, information=information, beta=beta, sigma_y=sigma_y)
    if directions is None:
        _, directions = np.linalg.eigh(avg)
    u = check_array("directions", directions, ndim=2)
    if u.shape != (d, d) or not np.allclose(u.T @ u, np.eye(d), atol=1e-8):
        raise InvalidInputError(f"directions must be a ({d}, {d}) orthogonal matrix")
    phases = None
    if phase is not None:
        phases = np.asarray(phase, dtype=float)
        phases = np.broadcast_to(phases, (len(rounds), phases.shape[-1])) if phases.ndim == 1 else phases
    total = 0.0
    for i in range(d):
        ui = u[:, i]
        scale = 1.0 / math.sqrt(float(ui @ avg @ ui))
        ts = scale * np.logspace(-2, 1.5, 71) if t_grid is None else np.asarray(t_grid, dtype=float)
        if np.any(ts <= 0):
            raise InvalidInputError("t_grid must hold positive step sizes")
        ts = np.concatenate([ts, -ts])
        h = ts[:, None] * ui
        log1p = np.zeros(ts.size)
        for t, mech in enumerate(rounds):
            log1p += _log1p_chi2_round(mech, x, h, None if phases is None else phases[t], information)
        if beta is not None:
            log1p += (h @ np.asarray(beta, dtype=float)) ** 2 / sigma_y**2
        with np.errstate(over="ignore", divide="ignore"):
            vals = np.where(log1p > 0, ts**2 / np.expm1(log1p), np.inf)
        info_u = float(ui @ own @ ui)
        limit = 1.0 / info_u if info_u > 0 else np.inf
        total += float(max(limit, np.nanmax(vals)))
    return total


# --- ReRo ---------------------------------------------------------------------------------------------
def rero_bound(kappa: float, tradeoff: Callable[[np.ndarray], np.ndarray] | None = None, *, mu: float | None = None) -> float:
    """Upper bound 1 − f(κ) on the probability of exact reconstruction (ReRo).

    Parameters
    ----------
    kappa : float
        Largest prior mass max_z π(z) (the success of guessing blind), in (0, 1].
    tradeoff : callable, optional
        f(α), a trade-off curve that lower-bounds the curve between releases of any
        two support points.
    mu : float, optional
        Instead of ``tradeoff``: μ-GDP, where 1 − G_μ(κ) = Φ(Φ⁻¹(κ) + μ).
    """
    k = check_interval("kappa", kappa, 0.0, 1.0, closed="right")
    if (tradeoff is None) == (mu is None):
        raise InvalidParameterError("give exactly one of tradeoff and mu")
    if mu is not None:
        m = check_positive("mu", mu, allow_zero=True, allow_inf=True)
        return 1.0 if math.isinf(m) or k == 1 else float(ndtr(ndtri(k) + m))
    return float(1 - np.asarray(tradeoff(np.array([k])), dtype=float)[0])


def rero_mu(mechanism: Any, prior: DiscretePrior, *, information: str = "known") -> float:
    """The GDP μ between releases of any two support points of ``prior``.

    A closed-form release (:class:`~privaudit.mechanisms.protocol.ClosedFormRelease`): its
    law's :meth:`~privaudit.mechanisms.protocol.ReleaseLaw.gdp_mu` at the support's diameter,
    max ‖z − z′‖·L/σ — exact for a Gaussian release (L = 1); for a modulated release with the
    phase known an upper bound (L-Lipschitz map), valid for ReRo. Over T rounds μ adds in
    quadrature.

    Parameters
    ----------
    mechanism : mechanism or sequence of mechanisms
        One release or the T rounds of a transcript.
    prior : DiscretePrior
        The support {z_k} of the reconstruction game.
    information : {"known", "hidden"}
        Whether the attacker sees the modulation phases.

    Returns
    -------
    float
        μ ≥ 0.

    Raises
    ------
    InvalidParameterError
        For a round without a closed-form release law.
    """
    s = prior.support
    diam = float(np.sqrt(((s[:, None, :] - s[None, :, :]) ** 2).sum(-1)).max())
    mus = []
    for mech in as_rounds(mechanism):
        law = release_law(mech)
        if law is not None:
            mus.append(law.gdp_mu(diam))
        else:
            raise InvalidParameterError(f"no GDP parameter is known for mechanism={mech!r}; pass rero_bound a tradeoff")
    return float(math.sqrt(sum(m**2 for m in mus)))


__all__ = [
    "GaussianPrior", "crb", "hammersley_chapman_robbins", "rero_bound", "rero_mu", "seed_trace_bound", "van_trees",
]
