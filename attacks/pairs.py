"""Neighbouring-pair generators: worst-case pairs, random pairs and label canaries.

A trade-off audit is only as strong as its pair. :func:`worst_case_pair` returns,
for each shipped mechanism, the pair (and, where the attacker is assumed to know
it, the auxiliary randomness) on which the mechanism's privacy loss is largest:

* Gaussian (ℓ₂ sensitivity Δ): x = 0, x′ = Δ e₁ — every pair at distance Δ is
  equivalent by rotation invariance.
* Laplace (ℓ₁ sensitivity Δ₁): x = 0, x′ = Δ₁ e₁ — along one coordinate the
  privacy loss reaches ε (spreading Δ₁ over coordinates is never worse).
* Randomised response: two distinct categories (all pairs are equivalent).
* Modulated map, phase known (seed 000): x and x′ = x + v₁ at distance 1 along
  the first modulation vector, with the phase φ₁ fixed at the value maximising
  the displacement of the noise-free map. Along v₁ the map is
  a ↦ (1 − α)a + (λ/m) cos(ωa + φ), so
  g(x′) − g(x) = [(1 − α) − (2λ/m) sin(θ + ω/2) sin(ω/2)] v₁ with θ = ω a + φ;
  its norm is maximal, D = (1 − α) + (2λ/m)|sin(ω/2)| ≤ L, at
  sin(θ + ω/2) = −sign(sin(ω/2)). The released pair is then two Gaussians at
  distance D, so the exact curve is G_{D/σ}.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privaudit.mechanisms import (
    GaussianMechanism,
    LaplaceMechanism,
    ModulatedMechanism,
    RandomizedResponse,
)
from privaudit.mechanisms.tradeoff import gaussian_tradeoff
from privaudit.mechanisms.validation import InvalidParameterError, check_int, check_positive


@dataclass(frozen=True)
class NeighbouringPair:
    """A pair (x, x′) to audit, the mechanism to audit it on, and what is known about it.

    ``mechanism`` may wrap the original (e.g. with the phase fixed); ``exact_mu``
    is the GDP parameter of this very pair when its trade-off is Gaussian.
    """

    x: Any
    x_prime: Any
    mechanism: Any
    description: str
    exact_mu: float | None = None
    extra: dict = field(default_factory=dict)

    def exact_curve(self, alpha: ArrayLike) -> np.ndarray | None:
        """G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) of this pair when its ``exact_mu`` is known.

        Parameters
        ----------
        alpha : array-like
            Type-I error rates in [0, 1].

        Returns
        -------
        ndarray or None
            The smallest type-II error at each α, shaped like ``alpha``; None without ``exact_mu``.
        """
        return None if self.exact_mu is None else gaussian_tradeoff(self.exact_mu, alpha)


class PhaseKnownRelease:
    """A modulated release whose phases are known to the attacker (fixed to ``phase``).

    Satisfies the mechanism protocol: ``sample`` draws fresh noise with the fixed
    phase, ``log_density`` is the Gaussian density around g_V(x; φ), and the claim
    is the mechanism's own.

    Parameters
    ----------
    mechanism : ModulatedMechanism
        The modulated mechanism whose phases are fixed.
    phase : array-like of shape (m,) or scalar
        The phases φ_j (radians) every release uses.
    """

    def __init__(self, mechanism: ModulatedMechanism, phase: ArrayLike) -> None:
        self.mechanism = mechanism
        self.phase = np.atleast_1d(np.asarray(phase, dtype=float))
        self.claim = mechanism.claim

    def __repr__(self) -> str:
        return f"PhaseKnown({self.mechanism!r}, phase={np.round(self.phase, 4).tolist()})"

    def sample(self, x: ArrayLike, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """``n`` releases g_V(x; φ) + N(0, σ² I) with the fixed phases.

        Parameters
        ----------
        x : array-like of shape (d,)
            The input.
        n : int
            Number of releases.
        rng : Generator, int or None
            Source of the Gaussian noise.

        Returns
        -------
        ndarray of shape (n, d)
        """
        return self.mechanism.sample(x, n, rng, phase=self.phase)

    def log_density(self, outputs: ArrayLike, x: ArrayLike) -> np.ndarray:
        """Gaussian log density of each release around g_V(x; φ) with the fixed phases.

        Parameters
        ----------
        outputs : array-like of shape (n, d)
            Releases.
        x : array-like of shape (d,)
            The input.

        Returns
        -------
        ndarray of shape (n,)
        """
        return self.mechanism.log_density(outputs, x, phase=self.phase)

    def exact_epsilon(self, delta: float) -> float:
        """The wrapped mechanism's ε(δ): that of a Gaussian of sensitivity L, the phase-known worst case.

        Parameters
        ----------
        delta : float
            δ in [0, 1).

        Returns
        -------
        float
        """
        return self.mechanism.exact_epsilon(delta)

    def tradeoff(self, alpha: ArrayLike) -> np.ndarray:
        """The wrapped mechanism's trade-off curve G_μ, μ = L/σ (the phase-known worst case).

        Parameters
        ----------
        alpha : array-like
            Type-I error rates in [0, 1].

        Returns
        -------
        ndarray
            Type-II error lower bounds, shaped like ``alpha``.
        """
        return self.mechanism.tradeoff(alpha)


def steepest_phase(mechanism: ModulatedMechanism, x: ArrayLike, x_prime: ArrayLike | None = None) -> np.ndarray:
    """Phases φ_j maximising ‖g(x′; φ) − g(x; φ)‖ (default x′ = x + v₁).

    With c_j = ⟨x′ − x, v_j⟩ and A_j = ω⟨x, v_j⟩ + φ_j, the cosine term changes by
    −2 sin(A_j + ωc_j/2) sin(ωc_j/2) along v_j; it adds to the contraction part
    (1 − α)c_j with the largest magnitude, 2|sin(ωc_j/2)|, at
    A_j + ωc_j/2 = −(π/2)·sign(c_j)·sign(sin(ωc_j/2)). Each v_j is set independently.

    Parameters
    ----------
    mechanism : ModulatedMechanism
        Supplies the basis V (d, m) and the frequency ω.
    x : array-like of shape (d,)
        The first input.
    x_prime : array-like of shape (d,), optional
        The neighbour (default x + v₁).

    Returns
    -------
    ndarray of shape (m,)
        Phases in [0, 2π).
    """
    V = mechanism.basis
    x = np.asarray(x, float)
    xp = x + V[:, 0] if x_prime is None else np.asarray(x_prime, float)
    w = mechanism.omega
    c = (xp - x) @ V
    a0 = w * (x @ V)
    sign = np.sign(c) * np.sign(np.sin(w * c / 2))
    target = -(np.pi / 2) * np.where(sign == 0, 1.0, sign)
    return (target - w * c / 2 - a0) % (2 * np.pi)


def modulated_pair(mechanism: ModulatedMechanism, *, phase_known: bool = True, offset: float = 0.0) -> NeighbouringPair:
    """Pair at distance 1 along v₁ (x = offset·v₁), phase known at its steepest or unknown.

    Parameters
    ----------
    mechanism : ModulatedMechanism
        The mechanism to audit.
    phase_known : bool
        Fix the phases at :func:`steepest_phase` (the released pair is then two Gaussians at
        distance D = ‖g(x′; φ) − g(x; φ)‖ and ``exact_mu`` = D/σ); else audit the mechanism with
        its phases marginalised.
    offset : float
        Position a of x = a·v₁ along the first basis vector.

    Returns
    -------
    NeighbouringPair
        With ``extra = {"phase", "displacement"}`` when the phase is known.
    """
    v = mechanism.basis[:, 0]
    x = offset * v
    x_prime = x + v
    if not phase_known:
        return NeighbouringPair(x, x_prime, mechanism, "modulated, distance 1 along v1, phase unknown (marginalised)")
    phase = steepest_phase(mechanism, x, x_prime)
    released = PhaseKnownRelease(mechanism, phase)
    disp = np.linalg.norm(mechanism.map(x_prime, phase) - mechanism.map(x, phase))
    return NeighbouringPair(x, x_prime, released, "modulated, distance 1 along v1, steepest phase known",
                            exact_mu=float(disp / mechanism.sigma), extra={"phase": phase, "displacement": float(disp)})


def worst_case_pair(mechanism: object, *, dim: int = 1) -> NeighbouringPair:
    """The worst-case neighbouring pair of a shipped mechanism (see module docstring).

    Parameters
    ----------
    mechanism : ModulatedMechanism, GaussianMechanism, LaplaceMechanism or RandomizedResponse
        The mechanism to audit.
    dim : int
        The input dimension for mechanisms that do not fix one (Gaussian, Laplace).

    Returns
    -------
    NeighbouringPair
        ``exact_mu`` is set for Gaussian and phase-known modulated releases.

    Raises
    ------
    InvalidParameterError
        For any other mechanism (no worst-case pair is known: pass x and x_prime explicitly).
    """
    dim = check_int("dim", dim)
    if isinstance(mechanism, ModulatedMechanism):
        return modulated_pair(mechanism, phase_known=True)
    if isinstance(mechanism, GaussianMechanism):
        x = np.zeros(dim)
        xp = x.copy()
        xp[0] = mechanism.sensitivity
        return NeighbouringPair(x, xp, mechanism, f"Gaussian, distance {mechanism.sensitivity:g} along e1",
                                exact_mu=mechanism.mu)
    if isinstance(mechanism, LaplaceMechanism):
        x = np.zeros(dim)
        xp = x.copy()
        xp[0] = mechanism.sensitivity
        return NeighbouringPair(x, xp, mechanism, f"Laplace, l1 distance {mechanism.sensitivity:g} along e1")
    if isinstance(mechanism, RandomizedResponse):
        c = mechanism.categories
        return NeighbouringPair(c[0], c[1], mechanism, "randomized response, two distinct categories")
    raise InvalidParameterError(
        f"no worst-case pair is known for {type(mechanism).__name__}; pass x and x_prime explicitly"
    )


def random_pair(dim: int, distance: float = 1.0, *, radius: float = 1.0, norm: str = "l2",
                rng: np.random.Generator | int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A random pair: x uniform in the ball of ``radius``, x′ = x + distance·u, u a random unit direction.

    ``norm="l1"`` draws u on the ℓ₁ sphere (random signs times a Dirichlet(1) split).

    Parameters
    ----------
    dim : int
        Input dimension d.
    distance : float
        ‖x′ − x‖ in the chosen norm, > 0.
    radius : float
        Radius (ℓ₂) of the ball x is drawn from, ≥ 0.
    norm : {"l2", "l1"}
        Norm of the unit direction u.
    rng : Generator, int or None
        Source of randomness.

    Returns
    -------
    x, x_prime : ndarray of shape (d,)

    Raises
    ------
    InvalidParameterError
        For another ``norm`` or an invalid ``dim``, ``distance`` or ``radius``.
    """
    dim = check_int("dim", dim)
    distance = check_positive("distance", distance)
    radius = check_positive("radius", radius, allow_zero=True)
    rng = np.random.default_rng(rng)
    g = rng.standard_normal(dim)
    x = g / np.linalg.norm(g) * radius * rng.random() ** (1.0 / dim)
    if norm == "l2":
        u = rng.standard_normal(dim)
        u /= np.linalg.norm(u)
    elif norm == "l1":
        u = rng.dirichlet(np.ones(dim)) * rng.choice((-1.0, 1.0), dim)
    else:
        raise InvalidParameterError(f"norm must be 'l2' or 'l1', got norm={norm!r}")
    return x, x + distance * u


def label_canaries(m: int, dim: int | None = None, *, label_scale: float = 1e3,
                   rng: np.random.Generator | int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """m label canaries for label-DP audits of linear learners: ``(features, labels, signs)``.

    Canary i has the unit feature e_{dim−m+i} (the last m coordinates, which real
    data should leave at zero), so its gradient touches only its own coordinate, and
    the label S_i·``label_scale`` with S_i = ±1 i.i.d. uniform, drawn before
    training as the one-run estimator requires (Steinke et al. 2023). With a large
    label scale the residual keeps the sign of the label whatever the model, so the
    clipped gradient of canary i is −S_i·c·e_i: a label flip moves the clipped
    gradient sum by exactly 2c, the label-DP sensitivity.

    Parameters
    ----------
    m : int
        Number of canaries.
    dim : int, optional
        Feature dimension (default m), at least m.
    label_scale : float
        Magnitude of the canary labels, > 0.
    rng : Generator, int or None
        Source of the signs S_i.

    Returns
    -------
    features : ndarray of shape (m, dim)
        Unit rows e_{dim−m+i}.
    labels : ndarray of shape (m,)
        S_i·``label_scale``.
    signs : ndarray of shape (m,)
        The ±1 signs S_i.

    Raises
    ------
    InvalidParameterError
        When ``dim < m`` or an argument is out of range.
    """
    m = check_int("m", m)
    dim = m if dim is None else check_int("dim", dim)
    if dim < m:
        raise InvalidParameterError(f"dim must be >= m={m}, got dim={dim}")
    rng = np.random.default_rng(rng)
    feats = np.zeros((m, dim))
    feats[np.arange(m), dim - m + np.arange(m)] = 1.0
    signs = rng.choice((-1.0, 1.0), m)
    return feats, signs * check_positive("label_scale", label_scale), signs


__all__ = ["NeighbouringPair", "PhaseKnownRelease", "label_canaries", "modulated_pair", "random_pair",
           "steepest_phase", "worst_case_pair"]
