"""Structural protocols: what privaudit can audit, and the capabilities that unlock stronger audits.

Any object with a ``claim`` and a vectorised ``sample`` is a :class:`Mechanism`; audits
need nothing more. Each further capability is one small ``@runtime_checkable`` protocol,
and the audit engines dispatch on these protocols only, never on a concrete class: a
third-party mechanism that implements a protocol gets the same audit as a built-in one.

=====================================  =============================================================================
protocol                               unlocks
=====================================  =============================================================================
:class:`HasDensity`                    the exact likelihood-ratio attacker
:class:`HasExactTradeoff`              the exact trade-off curve beside the empirical one
:class:`HasExactEpsilon`               the exact ε of the noise drawn, beside the claim
:class:`HasExactDelta`                 the exact δ(ε) (calibration audits)
:class:`HasDPEvent`                    dp_accounting's PLD of one release (``accounting.privacy_loss_distribution``)
:class:`HasFisherInformation`          Cramér–Rao, van Trees and HCR bounds of reconstruction audits
:class:`HasMarginalFisherInformation`  bounds for an attacker who does not see hidden phases
:class:`HasLaplaceScale`               the numpy-Laplace reachability attacker
:class:`HasBatchRelease`               one release per row of a batch of inputs (one per client)
:class:`IsotropicGaussianRelease`      closed forms of x ↦ x + N(0, σ²I) (χ², GDP μ, constant I)
:class:`ModulatedRelease`              closed forms of seed 000's modulated map (phases, χ², μ)
:class:`HasNoiseFreeMap`               χ² of a release fn(x) + N(0, σ²I) (HCR bound)
:class:`HasWorstCasePair`              the trade-off audit's default pair (and its exact μ) when none is given
=====================================  =============================================================================

A runtime check of a protocol tests that the members exist, not their meaning. The two
closed-form protocols (:class:`IsotropicGaussianRelease`, :class:`ModulatedRelease`)
therefore name members that together state the release law (their docstrings say which
law): an object that has all of them asserts that law, as a built-in does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike

from .claim import PrivacyClaim
from .tradeoff import gaussian_tradeoff

if TYPE_CHECKING:
    from dp_accounting import DpEvent


@runtime_checkable
class Mechanism(Protocol):
    """A randomised map from one input to a release.

    ``sample(x, n, rng)`` returns ``n`` independent releases of the single input
    ``x``, stacked along axis 0: shape ``(n, *out_shape)``.
    """

    claim: PrivacyClaim

    def sample(self, x: np.ndarray, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """``n`` independent releases of the single input ``x``, stacked along axis 0.

        Parameters
        ----------
        x : array-like
            The single input.
        n : int
            Number of independent releases.
        rng : Generator, int or None
            Source of randomness (passed to :func:`numpy.random.default_rng`).

        Returns
        -------
        ndarray of shape (n, *out_shape)
        """
        ...


@runtime_checkable
class HasDensity(Protocol):
    """The output log-density (or log-pmf) is known in closed form."""

    def log_density(self, outputs: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Log-density of each output row given input ``x``; shape ``(n,)``.

        Parameters
        ----------
        outputs : array-like of shape (n, *out_shape)
            Releases.
        x : array-like
            The input.

        Returns
        -------
        ndarray of shape (n,)
        """
        ...


@runtime_checkable
class DensityMechanism(Mechanism, HasDensity, Protocol):
    """A :class:`Mechanism` whose output log-density is known in closed form."""


@runtime_checkable
class HasExactTradeoff(Protocol):
    """The exact trade-off curve of the worst-case pair is known.

    Mechanisms whose curve depends on the pair (e.g. the exponential mechanism) accept
    ``x`` and ``x_prime`` as keywords; the engines pass them when the signature has them.
    """

    def tradeoff(self, alpha: np.ndarray) -> np.ndarray:
        """β = f(α): the smallest type-II error of a test of type-I error α.

        Parameters
        ----------
        alpha : array-like
            Type-I error rates α in [0, 1].

        Returns
        -------
        ndarray
            β = f(α), shaped like ``alpha``.
        """
        ...


@runtime_checkable
class HasExactEpsilon(Protocol):
    """The exact ε(δ) of the noise actually drawn is known (not only the claim)."""

    def exact_epsilon(self, delta: float) -> float:
        """Exact ε at ``delta`` of the worst-case pair.

        Parameters
        ----------
        delta : float
            δ in [0, 1).

        Returns
        -------
        float
        """
        ...


@runtime_checkable
class HasExactDelta(Protocol):
    """The exact δ(ε) of the noise actually drawn is known."""

    def exact_delta(self, epsilon: float) -> float:
        """Exact δ at ``epsilon`` of the worst-case pair.

        Parameters
        ----------
        epsilon : float
            ε ≥ 0.

        Returns
        -------
        float
        """
        ...


@runtime_checkable
class HasDPEvent(Protocol):
    """The mechanism describes one release to dp_accounting.

    A mechanism without an exact event returns dp_accounting's ``UnsupportedDpEvent``
    (its docstring says why), never an event that would over-state its privacy.
    """

    def dp_event(self, distance: float | None = None) -> DpEvent:
        """The ``dp_accounting.DpEvent`` of one release between inputs at ``distance`` (default: worst case).

        Parameters
        ----------
        distance : float, optional
            Distance between the two inputs in the mechanism's sensitivity norm (default: the
            sensitivity, the worst case).

        Returns
        -------
        dp_accounting.DpEvent
        """
        ...


@runtime_checkable
class AccountableMechanism(Mechanism, HasDPEvent, Protocol):
    """A :class:`Mechanism` that states its dp_accounting event (every built-in and external mechanism does)."""


@runtime_checkable
class HasFisherInformation(Protocol):
    """The Fisher information about the input of one release is known."""

    def fisher_information(self, x: np.ndarray) -> np.ndarray:
        """Fisher information about ``x``, shape ``(d, d)``.

        Parameters
        ----------
        x : array-like of shape (d,)
            The input.

        Returns
        -------
        ndarray of shape (d, d)
        """
        ...


@runtime_checkable
class HasLaplaceScale(Protocol):
    """The release adds Laplace noise of scale ``scale`` (drawn with numpy's Laplace sampler, whose
    reachable outputs the ``reach-numpy-laplace`` attacker enumerates)."""

    scale: float


@runtime_checkable
class HasMarginalFisherInformation(Protocol):
    """The release has hidden randomness (e.g. a phase) whose marginalised Fisher information is known."""

    def marginal_fisher_information(self, x: np.ndarray | None = None) -> np.ndarray:
        """Fisher information about ``x`` of the release alone, the hidden randomness marginalised; ``(d, d)``.

        Parameters
        ----------
        x : ndarray of shape (d,), optional
            The input (None where the information does not depend on it).

        Returns
        -------
        ndarray of shape (d, d)
        """
        ...


@runtime_checkable
class HasBatchRelease(Protocol):
    """Releases a batch of different inputs at once (one client per row)."""

    def release(self, X: np.ndarray, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """One release per row of ``X``; shape ``(n, k)``.

        Parameters
        ----------
        X : ndarray of shape (n, d)
            One input per row (one client each).
        rng : Generator, int or None
            Source of randomness.

        Returns
        -------
        ndarray of shape (n, k)
        """
        ...


@runtime_checkable
class HasNoiseFreeMap(Protocol):
    """A release r = mean(x) + N(0, σ² I): the noise-free map and the noise scale are known."""

    sigma: float

    def mean(self, X: np.ndarray) -> np.ndarray:
        """Noise-free outputs per row of ``X``; shape ``(n, k)``.

        Parameters
        ----------
        X : ndarray of shape (n, d)
            Inputs, one per row.

        Returns
        -------
        ndarray of shape (n, k)
        """
        ...


@runtime_checkable
class IsotropicGaussianRelease(Protocol):
    """The Gaussian mechanism's law: r = x + N(0, σ² I) for inputs at ℓ₂ distance ≤ ``sensitivity``.

    The release is translation-equivariant (x + the release of 0 has the law of the
    release of x), its Fisher information does not depend on x, and a shift h has
    log(1 + χ²) = ‖h‖²/σ²; a release on a dithered lattice (post-processing) keeps these.
    """

    sigma: float
    sensitivity: float

    def sample(self, x: np.ndarray, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """``n`` releases x + N(0, σ² I).

        Parameters
        ----------
        x : array-like
            The single input.
        n : int
            Number of independent releases.
        rng : Generator, int or None
            Source of randomness (passed to :func:`numpy.random.default_rng`).

        Returns
        -------
        ndarray of shape (n, *out_shape)
        """
        ...

    def fisher_information(self, x: np.ndarray) -> np.ndarray:
        """Fisher information about x; it does not depend on x (I/σ² for the continuous Gaussian).

        Parameters
        ----------
        x : array-like of shape (d,)
            The input.

        Returns
        -------
        ndarray of shape (d, d)
        """
        ...

    def tradeoff(self, alpha: np.ndarray) -> np.ndarray:
        """G_μ(α) with μ = sensitivity/σ.

        Parameters
        ----------
        alpha : array-like
            Type-I error rates α in [0, 1].

        Returns
        -------
        ndarray
            β = f(α), shaped like ``alpha``.
        """
        ...

    def dp_event(self, distance: float | None = None) -> DpEvent:
        """``GaussianDpEvent`` with noise multiplier σ/distance.

        Parameters
        ----------
        distance : float, optional
            Distance between the two inputs in the mechanism's sensitivity norm (default: the
            sensitivity, the worst case).

        Returns
        -------
        dp_accounting.DpEvent
        """
        ...


@runtime_checkable
class ModulatedRelease(Protocol):
    """Seed 000's modulated release: g(x) = (1 − α)x + (λ/m) Σ_j cos(ω⟨x, v_j⟩ + φ_j) v_j + N(0, σ² I).

    φ_j are uniform phases, fresh per release unless given; the columns of ``basis`` are
    the m = ``n_vectors`` orthonormal v_j and ``lipschitz`` is L = |1 − α| + λω/m. The
    phase-averaged Fisher information ``fisher_information(x)`` does not depend on x.
    ``with_basis(V)`` is the same release (same σ and claim) with other modulation vectors.
    """

    dim: int
    alpha: float
    lam: float
    omega: float
    n_vectors: int
    sigma: float
    basis: np.ndarray
    lipschitz: float

    def release(self, X: np.ndarray, rng: np.random.Generator | int | None = None, *,
                phase: np.ndarray | None = None) -> np.ndarray:
        """One release g(x_i) per row of ``X``.

        Parameters
        ----------
        X : ndarray of shape (n, dim)
            One input per row.
        rng : Generator, int or None
            Source of the noise (and of the phases when not given).
        phase : ndarray of shape (n, m) or (m,), optional
            Phases φ_j (fresh uniform ones by default).

        Returns
        -------
        ndarray of shape (n, dim)
        """
        ...

    def fisher_information(self, x: np.ndarray, phase: np.ndarray | None = None) -> np.ndarray:
        """Fisher information about x, at given phases or averaged over uniform ones.

        Parameters
        ----------
        x : ndarray of shape (dim,)
            The input.
        phase : ndarray of shape (m,), optional
            Known phases (default: the phase average, which does not depend on x).

        Returns
        -------
        ndarray of shape (dim, dim)
        """
        ...

    def marginal_fisher_information(self, x: np.ndarray | None = None) -> np.ndarray:
        """Fisher information of the release alone, the phases marginalised.

        Parameters
        ----------
        x : ndarray of shape (dim,), optional
            The input.

        Returns
        -------
        ndarray of shape (dim, dim)
        """
        ...

    def with_basis(self, basis: np.ndarray) -> "ModulatedRelease":
        """The same release (same σ and claim) with other modulation vectors.

        Parameters
        ----------
        basis : ndarray of shape (dim, m)
            Orthonormal columns v_j.

        Returns
        -------
        ModulatedRelease
        """
        ...


@dataclass(frozen=True)
class NeighbouringPair:
    """A pair (x, x′) to audit, the mechanism to audit it on, and what is known about it.

    ``mechanism`` may wrap the original (e.g. with the phase fixed); ``exact_mu``
    is the GDP parameter of this very pair when its trade-off is Gaussian. Returned by
    :meth:`HasWorstCasePair.worst_case_pair` (and re-exported by :mod:`privaudit.attacks.pairs`).
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


@runtime_checkable
class HasWorstCasePair(Protocol):
    """The mechanism knows the neighbouring pair on which its privacy loss is largest.

    :func:`privaudit.attacks.pairs.worst_case_pair` (the trade-off audit's default pair)
    calls it; a mechanism without it gets a pair derived from its claim's neighbourhood
    (:meth:`~privaudit.mechanisms.neighbourhoods.Neighbourhood.reference_pair`).
    """

    def worst_case_pair(self, *, dim: int = 1) -> NeighbouringPair:
        """The worst-case pair, the mechanism to audit it on and, where known, its exact μ.

        Parameters
        ----------
        dim : int
            The input dimension, for mechanisms that do not fix one.

        Returns
        -------
        NeighbouringPair
        """
        ...


__all__ = [
    "AccountableMechanism", "DensityMechanism", "HasBatchRelease", "HasDPEvent", "HasDensity", "HasExactDelta",
    "HasExactEpsilon", "HasExactTradeoff", "HasFisherInformation", "HasLaplaceScale",
    "HasMarginalFisherInformation", "HasNoiseFreeMap", "HasWorstCasePair", "IsotropicGaussianRelease",
    "Mechanism", "ModulatedRelease", "NeighbouringPair",
]
