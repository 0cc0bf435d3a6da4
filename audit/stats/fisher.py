"""Fisher information of a release about the client's private input x.

For a release r = f(x) + ξ with ξ ~ N(0, σ² I) (seed 000, §6),

    I(x) = J_f(x)ᵀ J_f(x) / σ²,

where J_f is the Jacobian of the noise-free map. This module provides it

* analytically for every mechanism that declares it
  (:class:`~privaudit.mechanisms.protocol.HasFisherInformation`: the Gaussian's I/σ²) and
  for every closed-form release (:class:`~privaudit.mechanisms.protocol.ClosedFormRelease`:
  the Gaussian, seed 000's modulated release) — per phase, I(x | φ) = JᵀJ/σ²,
  and averaged over the uniform phase, E_φ I(x | φ), which is the information of an
  observer who sees the release *and* its phase (the phase law does not depend on x);
  both are delegated to the mechanism;
* for the **phase-marginalised** modulated release (the observer does not see φ),
  through the mechanism's hidden-phase law
  (:class:`~privaudit.mechanisms.arcsine_gaussian.ArcsineGaussian`; :func:`marginal_fisher`);
* by torch autograd for any differentiable map with Gaussian noise
  (:func:`autograd_fisher`, :class:`GaussianNoiseMap` for a user's own mechanism);
* for the public response y = xᵀβ + N(0, σ_y²): ββᵀ/σ_y² (:func:`side_information_fisher`);
* over the T rounds of the iterative protocol, where independent releases add:
  I_{1:T}(x) = Σ_t I_t(x) (:func:`compose_fisher`, :func:`release_fisher`).

All matrices are (d, d), in units of 1/(feature unit)².
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from privaudit.attacks.reconstruction import as_rounds
from privaudit.mechanisms import PrivacyClaim
from privaudit.mechanisms.protocol import HasFisherInformation, HasMarginalFisherInformation, closed_form_release
from privaudit.mechanisms.validation import (
    InvalidInputError,
    InvalidParameterError,
    check_array,
    check_int,
    check_size,
    check_positive,
)

if TYPE_CHECKING:
    import torch

#: How an attacker relates to the modulation phases of the releases it sees.
INFORMATION = ("known", "hidden")


# --- building blocks -------------------------------------------------------------------------
def side_information_fisher(beta: ArrayLike, sigma_y: float) -> np.ndarray:
    """Fisher information ββᵀ/σ_y² of a public response y = xᵀβ + N(0, σ_y²) (seed 000, §6).

    Rank one: y reveals x only along β.

    Parameters
    ----------
    beta : array-like of shape (d,)
        Regression vector β.
    sigma_y : float
        Response noise std σ_y > 0.

    Returns
    -------
    ndarray of shape (d, d)
    """
    b = check_array("beta", beta, ndim=1)
    s = check_positive("sigma_y", sigma_y)
    return np.outer(b, b) / s**2


def compose_fisher(infos: Sequence[np.ndarray]) -> np.ndarray:
    """Fisher information of independent releases: the sum Σ_t I_t (additivity).

    Parameters
    ----------
    infos : sequence of ndarray
        Information matrices of one square shape.

    Returns
    -------
    ndarray
        Σ_t I_t, of the common shape.

    Raises
    ------
    InvalidParameterError
        For an empty sequence.
    InvalidInputError
        When the matrices are not square of one shape.
    """
    mats = [np.asarray(m, dtype=float) for m in infos]
    if not mats:
        raise InvalidParameterError("compose_fisher needs at least one information matrix, got none")
    shape = mats[0].shape
    if len(shape) < 2 or shape[-1] != shape[-2] or any(m.shape != shape for m in mats):
        raise InvalidInputError(f"information matrices must share one square shape, got {[m.shape for m in mats]}")
    return np.sum(mats, axis=0)


def marginal_fisher(mechanism: object, x: ArrayLike | None = None) -> np.ndarray:
    """Fisher information of the phase-marginalised release (observer without φ).

    For the modulated release the phase law is uniform, so cos(ω⟨x, v_j⟩ + φ_j) has
    the law of cos φ_j whatever x: along v_j the release is (1 − α)a_j + (λ/m)cos φ_j
    + σz, a location family in a_j = ⟨x, v_j⟩. Hence, independent of x and ω,

        I_marg = (1 − α)² [ (I − P_V)/σ² + I_loc(λ/m, σ) P_V ],

    with I_loc the location information of the arcsine⊛Gaussian law
    (:meth:`ModulatedMechanism.marginal_fisher_information`, delegated to the
    mechanism). I_marg ⪯ E_φ I(x | φ): hiding the phase only removes information.
    For a mechanism without hidden randomness (a Gaussian) it is its own
    ``fisher_information``.

    Parameters
    ----------
    mechanism : mechanism
        A release with ``marginal_fisher_information`` or ``fisher_information``.
    x : array-like of shape (d,), optional
        The input (None: a scalar input, for a mechanism whose information is constant).

    Returns
    -------
    ndarray of shape (d, d)

    Raises
    ------
    InvalidParameterError
        When the mechanism declares no Fisher information.
    """
    if isinstance(mechanism, HasMarginalFisherInformation):
        return mechanism.marginal_fisher_information(x)
    if isinstance(mechanism, HasFisherInformation):
        # No hidden randomness beyond the noise: the release's own information (a
        # Gaussian's is constant in x; x = None stands for a scalar input).
        return mechanism.fisher_information(np.zeros(1) if x is None else x)
    raise InvalidParameterError(f"no Fisher information is known for mechanism={mechanism!r}")


# --- autograd ----------------------------------------------------------------------------------
def autograd_fisher(fn: Callable, x: ArrayLike, sigma: ArrayLike, *, phase: ArrayLike | None = None) -> np.ndarray:
    """Fisher information JᵀJ/σ² of r = fn(x) + N(0, diag(σ²)) by torch autograd.

    Parameters
    ----------
    fn : callable
        A torch function mapping a batch of inputs (n, d) (and, if ``phase`` is
        given, phases (n, m)) to noise-free outputs (n, k), row by row.
    x : array (d,) or (n, d)
        Input(s) at which to evaluate the information.
    sigma : float or array (k,)
        Noise std per output coordinate.
    phase : array (m,) or (n, m), optional
        Extra non-differentiated argument of ``fn``.

    Returns
    -------
    array (d, d) or (n, d, d)
        One matrix per input row, computed with ``torch.func.vmap(jacrev)`` in float64.
    """
    import torch
    from torch.func import jacrev, vmap

    X = check_array("x", x, ndim=(1, 2))
    single = X.ndim == 1
    X2 = np.atleast_2d(X)
    xt = torch.as_tensor(X2, dtype=torch.float64)
    if phase is None:
        jac = vmap(jacrev(lambda v: fn(v[None])[0]))(xt)
    else:
        p = np.broadcast_to(np.atleast_2d(check_array("phase", phase, ndim=(1, 2))), (X2.shape[0], np.shape(phase)[-1]))
        pt = torch.as_tensor(np.array(p), dtype=torch.float64)
        jac = vmap(jacrev(lambda v, q: fn(v[None], q[None])[0]))(xt, pt)
    s = np.asarray(sigma, dtype=float)
    if np.any(s <= 0) or not np.all(np.isfinite(s)):
        raise InvalidParameterError(f"sigma must be finite and > 0, got sigma={sigma!r}")
    w = torch.as_tensor(np.broadcast_to(1.0 / s**2, (jac.shape[1],)).copy(), dtype=torch.float64)
    info = torch.einsum("nki,k,nkj->nij", jac, w, jac).numpy()
    return info[0] if single else info


class GaussianNoiseMap:
    """A user's mechanism: a differentiable torch map plus isotropic Gaussian noise.

    Release r = fn(x) + N(0, σ² I_k). Satisfies the privaudit mechanism protocol
    (``claim``, ``sample``, ``release``, ``log_density``) and exposes
    ``fisher_information`` (autograd) and ``torch_map`` (used by the generic autodiff
    attacker), so that reconstruction audits work on it unchanged.

    Parameters
    ----------
    fn : callable
        torch function, (n, d) float64 tensor -> (n, k) tensor, applied row-wise.
    dim : int
        Input dimension d.
    sigma : float
        Noise std σ.
    claim : PrivacyClaim, optional
        What the user asserts (default: no claim, ε = ∞).
    """

    def __init__(self, fn: Callable, *, dim: int, sigma: float, claim: PrivacyClaim | None = None) -> None:
        self.fn = fn
        self.dim = check_int("dim", dim)
        self.sigma = check_positive("sigma", sigma)
        self.claim = claim if claim is not None else PrivacyClaim(math.inf, 0.0, "any")

    def __repr__(self) -> str:
        return f"GaussianNoiseMap(fn={getattr(self.fn, '__name__', 'fn')}, dim={self.dim}, sigma={self.sigma:.6g})"

    def torch_map(self, xt: torch.Tensor, phase: object = None) -> torch.Tensor:
        """The noise-free map on a torch batch (the phase is ignored).

        Parameters
        ----------
        xt : torch.Tensor of shape (n, d)
            Inputs, float64.
        phase : object
            Ignored (the map has no phases).

        Returns
        -------
        torch.Tensor of shape (n, k)
        """
        return self.fn(xt)

    def mean(self, X: ArrayLike) -> np.ndarray:
        """Noise-free outputs fn(x) per row, shape (n, k).

        Parameters
        ----------
        X : array-like of shape (n, d) or (d,)
            Inputs, one per row.

        Returns
        -------
        ndarray of shape (n, k)
        """
        import torch

        X = np.atleast_2d(check_array("x", X, ndim=(1, 2), dim=self.dim))
        with torch.no_grad():
            return self.fn(torch.as_tensor(X, dtype=torch.float64)).numpy()

    def release(self, X: ArrayLike, rng: np.random.Generator | int | None = None, *, phase: object = None) -> np.ndarray:
        """One release per row of X.

        Parameters
        ----------
        X : array-like of shape (n, d) or (d,)
            Inputs, one per row.
        rng : Generator, int or None
            Source of the noise.
        phase : object
            Ignored (the map has no phases).

        Returns
        -------
        ndarray of shape (n, k)
        """
        mu = self.mean(X)
        return mu + self.sigma * np.random.default_rng(rng).standard_normal(mu.shape)

    def sample(self, x: ArrayLike, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """``n`` releases of one input x.

        Parameters
        ----------
        x : array-like of shape (d,)
            The input.
        n : int
            Number of releases.
        rng : Generator, int or None
            Source of the noise.

        Returns
        -------
        ndarray of shape (n, k)
        """
        x = check_array("x", x, ndim=1, dim=self.dim)
        return self.release(np.broadcast_to(x, (check_size("n", n), self.dim)), rng)

    def log_density(self, outputs: ArrayLike, x: ArrayLike) -> np.ndarray:
        """Gaussian log-density of each output row given x.

        Parameters
        ----------
        outputs : array-like of shape (n, k)
            Releases.
        x : array-like of shape (d,)
            The input.

        Returns
        -------
        ndarray of shape (n,)
        """
        mu = self.mean(x)[0]
        r = np.atleast_2d(np.asarray(outputs, dtype=float)) - mu
        k = r.shape[1]
        return -0.5 * np.einsum("ij,ij->i", r, r) / self.sigma**2 - k * math.log(self.sigma * math.sqrt(2 * math.pi))

    def fisher_information(self, x: ArrayLike, phase: object = None) -> np.ndarray:
        """JᵀJ/σ² by autograd.

        Parameters
        ----------
        x : array-like of shape (d,) or (n, d)
            Input(s).
        phase : object
            Ignored (the map has no phases).

        Returns
        -------
        ndarray of shape (d, d) or (n, d, d)
        """
        return autograd_fisher(self.fn, x, self.sigma)


# --- one call for an audit ----------------------------------------------------------------------
def release_fisher(mechanism: object, x: ArrayLike, *, phase: ArrayLike | None = None, information: str = "known",
                   beta: ArrayLike | None = None, sigma_y: float | None = None) -> np.ndarray:
    """Fisher information about x of everything an attacker observes.

    Parameters
    ----------
    mechanism : mechanism or sequence of mechanisms
        One release, or the T rounds of a transcript (independent releases, whose
        information adds).
    x : array (d,)
        The input.
    phase : array (m,) or (T, m), optional
        Fixed, known phases: I(x | φ_t) per round (seed 000, §6, "at each fixed
        realization of the phase").
    information : {"known", "hidden"}
        With ``phase=None``: ``"known"`` — fresh uniform phases that the attacker
        sees, information E_φ I(x | φ); ``"hidden"`` — the attacker sees only the
        release, information of the phase-marginalised density (:func:`marginal_fisher`).
    beta, sigma_y : optional
        Add the public response's ββᵀ/σ_y².

    Returns
    -------
    ndarray of shape (d, d)
        The sum of the rounds' (and the response's) information.

    Raises
    ------
    InvalidParameterError
        For an unknown ``information``, a round without known Fisher information, or ``beta`` without ``sigma_y``.
    InvalidInputError
        When ``phase`` has not one row per round.
    """
    if information not in INFORMATION:
        raise InvalidParameterError(f"information must be one of {INFORMATION}, got information={information!r}")
    rounds = as_rounds(mechanism)
    x = check_array("x", x, ndim=1)
    phases = None
    if phase is not None:
        phases = np.asarray(phase, dtype=float)
        phases = np.broadcast_to(phases, (len(rounds), phases.shape[-1])) if phases.ndim == 1 else phases
        if phases.shape[0] != len(rounds):
            raise InvalidInputError(f"phase must have one row per round ({len(rounds)}), got shape {phases.shape}")
    infos = []
    for t, mech in enumerate(rounds):
        release = closed_form_release(mech)
        if release is not None:  # its information, per phase, phase-averaged or phase-marginalised
            if phases is not None:
                infos.append(release.fisher_information(x, phases[t]))
            elif information == "hidden":
                infos.append(release.marginal_fisher_information(x))
            else:
                infos.append(release.fisher_information(x))
        elif isinstance(mech, HasFisherInformation):
            infos.append(np.asarray(mech.fisher_information(x), dtype=float))
        else:
            raise InvalidParameterError(f"no Fisher information is known for mechanism={mech!r}")
    if beta is not None:
        if sigma_y is None:
            raise InvalidParameterError("sigma_y is required with beta (public response y = xᵀβ + N(0, σ_y²))")
        infos.append(side_information_fisher(beta, sigma_y))
    return compose_fisher(infos)
