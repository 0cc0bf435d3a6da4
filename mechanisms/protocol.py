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
:class:`ClosedFormRelease`             the one closed-form release r = c·x + A Σ_j cos(ω⟨x, v_j⟩ + φ_j) v_j + N(0, σ²I)
                                       (its :class:`ReleaseLaw`, Fisher information, batch release, re-noising)
:class:`IsotropicGaussianRelease`      the former closed form of x ↦ x + N(0, σ²I), still accepted (adapted)
:class:`ModulatedRelease`              the former closed form of seed 000's modulated map, still accepted (adapted)
:class:`HasNoiseFreeMap`               χ² of a release fn(x) + N(0, σ²I) (HCR bound)
:class:`HasWorstCasePair`              the trade-off audit's default pair (and its exact μ) when none is given
=====================================  =============================================================================

A runtime check of a protocol tests that the members exist, not their meaning. The two
former closed-form protocols (:class:`IsotropicGaussianRelease`, :class:`ModulatedRelease`)
therefore name members that together state the release law (their docstrings say which
law): an object that has all of them asserts that law, as a built-in does.

One release protocol. The Gaussian and the modulated releases are one family,
r = c·x + A Σ_j cos(ω⟨x, v_j⟩ + φ_j) v_j + N(0, σ² I) (a Gaussian mechanism: c = 1, A = 0,
no vectors), stated as data by :class:`ReleaseLaw`. A release that implements
:class:`ClosedFormRelease` returns its law and its information, draws a batch and re-noises
itself; engines, attackers and bounds ask :func:`closed_form_release` for it and never
switch on the release's kind. :func:`closed_form_release` is also the one adapter for
objects that only match the two former protocols, so that they keep their audits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Callable
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


@dataclass(frozen=True, eq=False)
class ReleaseLaw:
    """The law of one closed-form release: r = c·x + A Σ_j cos(ω⟨x, v_j⟩ + φ_j) v_j + N(0, σ² I).

    φ_j are uniform phases, fresh per release unless given; the columns v_j of ``basis`` are
    orthonormal. A Gaussian mechanism is c = 1, A = 0 and no vectors (``basis=None``: it
    fixes no dimension); seed 000's modulated release is c = 1 − α, A = λ/m, ω, V.

    Attributes
    ----------
    sigma : float
        Noise std σ.
    scale : float
        The linear coefficient c.
    amplitude : float
        The modulation amplitude A (0: no modulation).
    omega : float
        The modulation frequency ω.
    basis : ndarray of shape (d, m) or None
        The modulation vectors v_j (None: none, whatever the dimension).
    lipschitz : float
        L = |c| + Aω, the Lipschitz constant of the noise-free map (GDP μ = L·distance/σ with
        the phases known).
    dim : int or None
        The input dimension, when the release fixes one.
    """

    sigma: float
    scale: float = 1.0
    amplitude: float = 0.0
    omega: float = 0.0
    basis: np.ndarray | None = None
    lipschitz: float = 1.0
    dim: int | None = None

    @property
    def n_vectors(self) -> int:
        """Number m of modulation vectors (0 without any)."""
        return 0 if self.basis is None else int(self.basis.shape[1])

    @property
    def modulated(self) -> bool:
        """Whether the release has a modulation term (A > 0 and at least one vector)."""
        return self.amplitude > 0 and self.n_vectors > 0

    @property
    def isotropic(self) -> bool:
        """Whether the release is x + N(0, σ² I): c = 1, A = 0 and no vectors."""
        return self.n_vectors == 0 and self.scale == 1.0 and self.amplitude == 0.0

    def gdp_mu(self, distance: float) -> float:
        """GDP μ = distance·L/σ between releases of two inputs at ℓ₂ ``distance`` (phases known; exact when linear).

        Parameters
        ----------
        distance : float
            ℓ₂ distance of the two inputs.

        Returns
        -------
        float
        """
        return distance * self.lipschitz / self.sigma

    def torch_map(self) -> Any:
        """The noise-free map as a torch function ``f(x (n, d), phase (n, m) | None)`` on float64 tensors.

        Returns
        -------
        callable
            x ↦ x for an isotropic release; else x ↦ c·x + A Σ_j cos(ω⟨x, v_j⟩ + φ_j) v_j (which
            needs the phases unless A = 0).
        """
        import torch

        from .validation import InvalidInputError

        if self.isotropic:
            return lambda x, phase=None: x
        c, amp, w = self.scale, self.amplitude, self.omega
        if self.n_vectors == 0:
            return lambda x, phase=None: c * x
        v = torch.as_tensor(self.basis, dtype=torch.float64)

        def modulated(x, phase=None):
            if phase is None:
                if amp == 0:
                    return c * x
                raise InvalidInputError("the modulated map needs its phases")
            return c * x + (amp * torch.cos(w * (x @ v) + phase)) @ v.T

        return modulated


@runtime_checkable
class ClosedFormRelease(Protocol):
    """The one closed-form release protocol: r = c·x + A Σ_j cos(ω⟨x, v_j⟩ + φ_j) v_j + N(0, σ² I).

    :meth:`release_law` states the law (:class:`ReleaseLaw`); the information, the batch
    release and the re-noised copy follow it. A release with modulation vectors also has
    ``with_basis(V)`` (the same release with other vectors).
    """

    sigma: float

    def release_law(self) -> ReleaseLaw:
        """The law of one release.

        Returns
        -------
        ReleaseLaw
        """
        ...

    def fisher_information(self, x: np.ndarray, phase: np.ndarray | None = None) -> np.ndarray:
        """Fisher information about x, at given phases or averaged over uniform ones (no phases: ignored).

        Parameters
        ----------
        x : ndarray of shape (d,)
            The input.
        phase : ndarray of shape (m,), optional
            Known phases (default: the phase average).

        Returns
        -------
        ndarray of shape (d, d)
        """
        ...

    def marginal_fisher_information(self, x: np.ndarray | None = None) -> np.ndarray:
        """Fisher information of the release alone, the phases marginalised (no phases: the information).

        Parameters
        ----------
        x : ndarray of shape (d,), optional
            The input.

        Returns
        -------
        ndarray of shape (d, d)
        """
        ...

    def release_batch(self, X: np.ndarray, rng: np.random.Generator | int | None = None, *,
                      phase: np.ndarray | None = None) -> np.ndarray:
        """One release per row of ``X`` (one client each).

        Parameters
        ----------
        X : ndarray of shape (n, d)
            One input per row.
        rng : Generator, int or None
            Source of the noise (and of the phases when not given).
        phase : ndarray of shape (n, m), optional
            Phases φ_j (fresh uniform ones by default; ignored without vectors).

        Returns
        -------
        ndarray of shape (n, d)
        """
        ...

    def with_sigma(self, sigma: float) -> "ClosedFormRelease":
        """The same release with noise std ``sigma``.

        Parameters
        ----------
        sigma : float
            The new noise std σ > 0.

        Returns
        -------
        ClosedFormRelease
        """
        ...


#: Re-noised copies of releases that only match a former protocol: ``"isotropic"`` / ``"modulated"`` ->
#: ``factory(mechanism, sigma)``, the built-in release of that law with noise σ. Registered by
#: mechanisms/gaussian.py and mechanisms/modulated.py, which import this module (so it cannot import them).
LEGACY_RENOISING: dict[str, Callable[[Any, float], Any]] = {}


class _IsotropicAdapter:
    """A :class:`ClosedFormRelease` view of an object that only matches :class:`IsotropicGaussianRelease`."""

    def __init__(self, mechanism: Any) -> None:
        self.mechanism = mechanism
        self.sigma = mechanism.sigma

    def release_law(self) -> ReleaseLaw:
        return ReleaseLaw(sigma=self.mechanism.sigma)

    def fisher_information(self, x, phase=None):
        return np.asarray(self.mechanism.fisher_information(x), dtype=float)

    def marginal_fisher_information(self, x=None):
        return self.fisher_information(np.zeros(1) if x is None else x)

    def release_batch(self, X, rng=None, *, phase=None):
        m = self.mechanism
        if isinstance(m, HasBatchRelease):
            return np.asarray(m.release(X, rng), dtype=float)
        # x + N(0, σ²I) is translation-equivariant: shift noise drawn at 0.
        return X + m.sample(np.zeros(X.shape[1]), X.shape[0], rng)

    def with_sigma(self, sigma):
        return LEGACY_RENOISING["isotropic"](self.mechanism, sigma)


class _ModulatedAdapter:
    """A :class:`ClosedFormRelease` view of an object that only matches :class:`ModulatedRelease`."""

    def __init__(self, mechanism: Any) -> None:
        self.mechanism = mechanism
        self.sigma = mechanism.sigma

    def release_law(self) -> ReleaseLaw:
        m = self.mechanism
        return ReleaseLaw(sigma=m.sigma, scale=1 - m.alpha, amplitude=m.lam / m.n_vectors, omega=m.omega,
                          basis=m.basis, lipschitz=m.lipschitz, dim=m.dim)

    def fisher_information(self, x, phase=None):
        m = self.mechanism
        return m.fisher_information(x) if phase is None else m.fisher_information(x, phase)

    def marginal_fisher_information(self, x=None):
        return self.mechanism.marginal_fisher_information(x)

    def release_batch(self, X, rng=None, *, phase=None):
        return self.mechanism.release(X, rng, phase=phase)

    def with_sigma(self, sigma):
        return LEGACY_RENOISING["modulated"](self.mechanism, sigma)


def closed_form_release(mechanism: Any) -> ClosedFormRelease | None:
    """The mechanism as a :class:`ClosedFormRelease`, or None when its release has no closed form.

    A mechanism implementing the protocol is returned as it is; one that only matches a
    former protocol (:class:`ModulatedRelease`, then :class:`IsotropicGaussianRelease`) is
    wrapped in an adapter that reads its members. This is the one place that tests those.

    Parameters
    ----------
    mechanism : object
        Any mechanism (one round).

    Returns
    -------
    ClosedFormRelease or None
    """
    if isinstance(mechanism, ClosedFormRelease):
        return mechanism
    if isinstance(mechanism, ModulatedRelease):
        return _ModulatedAdapter(mechanism)
    if isinstance(mechanism, IsotropicGaussianRelease):
        return _IsotropicAdapter(mechanism)
    return None


def release_law(mechanism: Any) -> ReleaseLaw | None:
    """The :class:`ReleaseLaw` of a mechanism (through :func:`closed_form_release`), or None.

    Parameters
    ----------
    mechanism : object
        Any mechanism (one round).

    Returns
    -------
    ReleaseLaw or None
    """
    release = closed_form_release(mechanism)
    return None if release is None else release.release_law()


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
    "AccountableMechanism", "ClosedFormRelease", "DensityMechanism", "HasBatchRelease", "HasDPEvent", "HasDensity", "HasExactDelta",
    "HasExactEpsilon", "HasExactTradeoff", "HasFisherInformation", "HasLaplaceScale",
    "HasMarginalFisherInformation", "HasNoiseFreeMap", "HasWorstCasePair", "IsotropicGaussianRelease",
    "Mechanism", "ModulatedRelease", "NeighbouringPair", "ReleaseLaw", "closed_form_release", "release_law",
]
