"""Structural protocols of attackers, and the traits a distinguisher declares.

The audit engines accept any object that implements one of these protocols, built-in or
not: the registered attackers derive from the base classes
:class:`privaudit.attacks.distinguishers.Distinguisher` and
:class:`privaudit.attacks.reconstruction.ReconstructionAttacker`, which implement them.

A distinguisher states what it needs and what its scores mean as class attributes
(:class:`DistinguisherTraits`). An attacker written without the base class may omit them;
:func:`distinguisher_traits` then applies the documented defaults, the conservative ones:
it is trained, cannot read non-finite outputs, needs no density, and its scores are not
exact log-likelihood ratios.
"""

from __future__ import annotations

import abc
import dataclasses
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike


#: What an explicit subclass of :class:`Distinguisher` declares unless it says otherwise: the
#: documented defaults of :func:`distinguisher_traits` and :func:`leak_family`, and its ``kind``.
DISTINGUISHER_DEFAULTS = {"kind": "distinguisher", "requires_training": True, "handles_nonfinite": False,
                          "requires_density": False, "llr_scores": False, "leak_family": "distribution"}


@runtime_checkable
class Distinguisher(Protocol):
    """Scores releases, higher meaning "the input was x′": the one distinguisher protocol, and the base class.

    What an attacker must provide (checked by ``isinstance(obj, Distinguisher)``):

    ``fit(outputs0, outputs1, *, mechanism=None, x=None, x_prime=None) -> attacker``
        receives training releases under x and x′ (``None`` for attackers with
        ``requires_training = False``) and returns the fitted attacker;
    ``score(outputs) -> ndarray of shape (n,)``
        vectorised over the n releases.

    What it may declare, as class attributes (read through :func:`distinguisher_traits` and
    :func:`leak_family`, which apply the documented, conservative defaults to an attacker
    that declares nothing):

    ``requires_training`` (True), ``handles_nonfinite`` (False), ``requires_density`` (False), ``llr_scores`` (False)
        see :class:`DistinguisherTraits`;
    ``leak_family`` ("distribution")
        the class of leak it looks for, one of :data:`LEAK_FAMILIES`: ``"floating-point"``
        (the float representation: bit patterns, lattices, outputs a sampler can reach),
        ``"distribution"`` (the law of the release: likelihood ratio, projection,
        classifiers) or ``"degenerate"`` (outputs one input never gives: NaN, inf, atoms).
        A trade-off audit certifies the best attacker of each family it ran and reports each
        family's ε̲ apart, so a floating-point leak does not hide a wrong calibration;
    ``kind`` ("distinguisher")
        what :func:`~privaudit.attacks.registry.register_attack` requires of a registered class.

    The built-in attackers subclass this class explicitly: a subclass must implement ``fit``
    and ``score`` (they are abstract), gets the defaults above as class attributes
    (:data:`DISTINGUISHER_DEFAULTS`, set on the first concrete subclass, so that they are no
    protocol members an attacker must have) and a scikit-learn style ``repr``.
    """

    @abc.abstractmethod
    def fit(self, outputs0: ArrayLike | None = None, outputs1: ArrayLike | None = None, *, mechanism: object = None,
            x: ArrayLike | None = None, x_prime: ArrayLike | None = None) -> "Distinguisher":
        """Learn from training releases; returns the attacker.

        Parameters
        ----------
        outputs0, outputs1 : array-like of shape (n, ...) or None
            Training releases under x and under x′ (``None`` when the attacker needs no training).
        mechanism : object, optional
            The audited mechanism (read by attackers that need its density or scale).
        x, x_prime : array-like or None
            The neighbouring inputs of the audited pair.

        Returns
        -------
        Distinguisher
            The fitted attacker.
        """

    @abc.abstractmethod
    def score(self, outputs: ArrayLike) -> np.ndarray:
        """Score each release, higher meaning "the input was x′".

        Parameters
        ----------
        outputs : array-like of shape (n, ...)
            Releases, one per row of the leading axis.

        Returns
        -------
        ndarray of shape (n,)
            One real score per release.
        """

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.__dict__.get("_is_protocol", False):
            for name, value in DISTINGUISHER_DEFAULTS.items():
                if not hasattr(cls, name):
                    setattr(cls, name, value)

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.endswith("_"))
        return f"{type(self).__name__}({params})"


@runtime_checkable
class Reconstructor(Protocol):
    """Estimates the client's input from releases: ``reconstruct(outputs, *, phase, y) -> (n, d)``."""

    def reconstruct(self, outputs: np.ndarray, *, phase: np.ndarray | None = None,
                    y: np.ndarray | None = None) -> np.ndarray:
        """Estimate the client's input from each release.

        Parameters
        ----------
        outputs : ndarray of shape (n, ...)
            Releases, one per row of the leading axis.
        phase : ndarray or None
            Modulation phases of the releases when the attacker sees them.
        y : ndarray or None
            Side information (e.g. labels) the release was computed with.

        Returns
        -------
        ndarray of shape (n, d)
            One estimate of the d-dimensional input per release.
        """
        ...


@runtime_checkable
class ReconstructionAttackerClass(Protocol):
    """What a registered reconstruction attacker *class* provides, so that an audit can pick and build it.

    A reconstruction audit given no attacker takes, among the registered classes of
    ``kind = "reconstruction"`` that are ``applicable`` to the mechanism, the one of highest
    ``strength`` (ties: the later name), then constructs it with the signature below and calls
    ``reconstruct`` (:class:`Reconstructor`) on the instance; an instance with a ``fit(outputs)``
    method first learns from a population split drawn from the prior. Besides, it may declare
    ``unbiased``/``is_unbiased`` (read by :func:`declares_unbiased`) and ``needs_phase``.
    :class:`privaudit.attacks.reconstruction.ReconstructionAttacker` implements all of it.

    Attributes
    ----------
    kind : str
        ``"reconstruction"``.
    strength : int
        Rank among the applicable attackers (higher is stronger).
    """

    kind: ClassVar[str]
    strength: ClassVar[int]

    def __call__(self, mechanism: object, *, prior: object = None, beta: ArrayLike | None = None,
                 sigma_y: float | None = None, random_state: np.random.Generator | int | None = None) -> Reconstructor:
        """Build the attacker (``__init__`` only stores its parameters).

        Parameters
        ----------
        mechanism : mechanism or sequence of mechanisms
            The release, or the T rounds of a transcript, being attacked.
        prior : object, optional
            The attacker's prior on x (:class:`Prior`; Bayesian attackers).
        beta, sigma_y : optional
            Model of the public response y = xᵀβ + N(0, σ_y²) (attackers using side information).
        random_state : int, Generator or None
            Randomness of multi-start and tie-breaking.

        Returns
        -------
        Reconstructor
        """
        ...

    def applicable(self, mechanism: object, *, prior: object = None, phase_known: bool = True,
                   side_info: bool = False) -> bool:
        """Whether the attacker supports this mechanism, prior and knowledge (a classmethod on the class).

        Parameters
        ----------
        mechanism : mechanism or sequence of mechanisms
            One release or the T rounds of a transcript.
        prior : object, optional
            The prior the audit would hand the attacker.
        phase_known : bool
            Whether the attacker is shown the modulation phases.
        side_info : bool
            Whether the public response y is available.

        Returns
        -------
        bool
        """
        ...


@runtime_checkable
class Prior(Protocol):
    """A prior on the client's input: ``dim`` and ``sample(n, rng) -> (n, dim)``."""

    dim: int

    def sample(self, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """Draw ``n`` inputs from the prior.

        Parameters
        ----------
        n : int
            Number of draws.
        rng : Generator, int or None
            Source of randomness (passed to :func:`numpy.random.default_rng`).

        Returns
        -------
        ndarray of shape (n, dim)
        """
        ...


@runtime_checkable
class FinitePrior(Prior, Protocol):
    """A prior on finitely many points (``support``, (K, d)) whose largest mass is ``kappa``.

    Reconstruction audits measure exact reconstruction (ReRo) under it; van Trees, which
    needs a density vanishing at the boundary of its support, does not apply.
    """

    support: np.ndarray
    kappa: float


@runtime_checkable
class WeightedFinitePrior(FinitePrior, Protocol):
    """A :class:`FinitePrior` that states the mass of each support point (``probs``, (K,)): what a MAP over
    the support (``discrete-map``) needs."""

    probs: np.ndarray


@dataclasses.dataclass(frozen=True)
class GaussianMoments:
    """A Gaussian prior N(``mean``, ``cov``) in closed form, with its precision ``cov``⁻¹.

    What the conjugate attackers (``posterior-mean``, ``map``) read of a prior: a prior says it
    is Gaussian by returning these from ``gaussian_moments()`` (:class:`HasGaussianMoments`).
    """

    mean: np.ndarray
    cov: np.ndarray
    precision: np.ndarray

    @property
    def dim(self) -> int:
        """Dimension d of the prior."""
        return int(self.mean.size)


@runtime_checkable
class HasGaussianMoments(Protocol):
    """A prior that says whether it is Gaussian: its moments, or None when it is not."""

    def gaussian_moments(self) -> GaussianMoments | None:
        """The prior's mean, covariance and precision when it is Gaussian, else None.

        Returns
        -------
        GaussianMoments or None
        """
        ...


def gaussian_moments(prior: object) -> GaussianMoments | None:
    """The Gaussian moments of ``prior``: None for no prior, a non-Gaussian one, or one that does not say.

    Parameters
    ----------
    prior : object or None
        A prior (e.g. :class:`~privaudit.attacks.priors.GaussianPrior`).

    Returns
    -------
    GaussianMoments or None
    """
    return prior.gaussian_moments() if isinstance(prior, HasGaussianMoments) else None


def declares_unbiased(attacker: object, mechanism: object, information: str = "known") -> bool:
    """Whether a reconstruction attacker declares itself exactly unbiased on ``mechanism``.

    Parameters
    ----------
    attacker : object
        A reconstruction attacker (class or instance).
    mechanism : mechanism or sequence of mechanisms
        The release it attacks.
    information : {"known", "hidden", "fixed"}
        What it sees of the modulation phases.

    Returns
    -------
    bool
        ``attacker.is_unbiased(mechanism, information=...)`` when it has that method, else its
        ``unbiased`` attribute, else False (the unbiased bounds then do not bind it).
    """
    if callable(getattr(attacker, "is_unbiased", None)):
        return bool(attacker.is_unbiased(mechanism, information=information))
    return bool(getattr(attacker, "unbiased", False))


@dataclasses.dataclass(frozen=True)
class DistinguisherTraits:
    """What a distinguisher declares about itself.

    Attributes
    ----------
    requires_training : bool
        ``fit`` needs training releases (default True: the audit then spends a training split).
    handles_nonfinite : bool
        ``score`` reads NaN/inf outputs itself (default False: the audit replaces them by 0).
    requires_density : bool
        The attacker needs ``mechanism.log_density`` (default False); it is dropped when
        the output shape depends on the input, where no declared density applies.
    llr_scores : bool
        Scores are exact log-likelihood ratios (default False): the audit may then pool
        the two hypotheses' rate estimates when choosing the test.
    """

    requires_training: bool = True
    handles_nonfinite: bool = False
    requires_density: bool = False
    llr_scores: bool = False


def distinguisher_traits(attacker: object) -> DistinguisherTraits:
    """The traits ``attacker`` (an instance or a class) declares, with the documented defaults for the rest.

    Parameters
    ----------
    attacker : object
        A distinguisher instance or class.

    Returns
    -------
    DistinguisherTraits
        Each trait from the attacker's attribute of that name, the conservative default where it has none.
    """
    defaults = DistinguisherTraits()
    return DistinguisherTraits(**{
        f.name: bool(getattr(attacker, f.name, getattr(defaults, f.name))) for f in dataclasses.fields(defaults)
    })


#: The classes of leak a distinguisher looks for (its ``leak_family``), as reports name them:
#: "floating-point" (the float representation: bit patterns, lattices, reachable outputs of a
#: sampler), "distribution" (the law of the release: likelihood ratio, projection, classifiers)
#: and "degenerate" (outputs one input never gives: NaN, inf, atoms).
LEAK_FAMILIES = ("floating-point", "distribution", "degenerate")


def leak_family(attacker: object) -> str:
    """The leak family ``attacker`` (an instance or a class) declares; ``"distribution"`` by default.

    A trade-off audit certifies the best attacker of each family it ran and reports each
    family's ε̲ apart, so a floating-point leak does not hide a wrong calibration.

    Parameters
    ----------
    attacker : object
        A distinguisher instance or class; its ``leak_family`` attribute, when set, must be
        one of :data:`LEAK_FAMILIES`.

    Returns
    -------
    str
        One of :data:`LEAK_FAMILIES`.

    Raises
    ------
    ValueError
        The attacker declares a family that is not one of :data:`LEAK_FAMILIES`.
    """
    family = getattr(attacker, "leak_family", "distribution")
    if family not in LEAK_FAMILIES:
        name = getattr(attacker, "__name__", type(attacker).__name__)
        raise ValueError(f"{name}.leak_family must be one of {LEAK_FAMILIES}, got leak_family={family!r}")
    return family


__all__ = ["DISTINGUISHER_DEFAULTS", "Distinguisher", "DistinguisherTraits", "ReconstructionAttackerClass", "FinitePrior", "GaussianMoments", "HasGaussianMoments",
           "LEAK_FAMILIES", "Prior", "Reconstructor", "WeightedFinitePrior", "declares_unbiased",
           "distinguisher_traits", "gaussian_moments", "leak_family"]
