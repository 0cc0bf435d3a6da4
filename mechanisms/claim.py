"""Privacy claims as small immutable data.

A :class:`PrivacyClaim` is what a mechanism or a fitted learner *asserts*; audits
read it and hold the evidence against it. It names its neighbouring relation
explicitly, because the same noise gives different guarantees under add/remove
and replace-one adjacency.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from dp_accounting import NeighboringRelation

from .neighbourhoods import Neighbourhood, parse_neighbourhood
from .validation import InvalidParameterError, ParameterTypeError, check_delta, check_epsilon, check_positive


def neighboring_relation(adjacency: str | Neighbourhood) -> NeighboringRelation:
    """Map an adjacency (a shorthand string or a neighbourhood object) to dp_accounting's neighbouring relation.

    ``"replace-one"`` and ``"label"`` are replace-one (``"label"``: one label changes,
    which moves a clipped per-example gradient by up to twice the clip norm).
    Local relations (``l1<=r``, ``l2<=r``, ``linf<=r``, lattices, ``any``) bound the
    change of one user's whole input; their mechanisms are calibrated on that
    sensitivity, so dp_accounting sees a single add/remove-style query of that
    sensitivity. Histograms (one count ±1) and key contributions are add/remove;
    ``histogram-replace`` is replace-one.

    Parameters
    ----------
    adjacency : str or Neighbourhood
        E.g. ``"add-remove"``, ``"l2<=1"`` or ``ReplaceOne()``.

    Returns
    -------
    dp_accounting.NeighboringRelation

    Raises
    ------
    InvalidParameterError
        For an unknown name or an invalid radius (e.g. ``"l2<=0"``), naming it.
    """
    return parse_neighbourhood(adjacency).relation


@dataclass(frozen=True)
class PrivacyClaim:
    """An (ε, δ)-DP claim under a named adjacency, with optional GDP/zCDP forms.

    Parameters
    ----------
    epsilon : float
        ε > 0; ``math.inf`` denotes a non-private release.
    delta : float
        δ in [0, 1); δ = 0 is pure DP.
    adjacency : str or Neighbourhood
        The neighbouring relation: a :class:`~privaudit.mechanisms.neighbourhoods.Neighbourhood`
        or its shorthand, e.g. ``"add-remove"``, ``"replace-one"``, ``"label"``
        (replace-one on labels), ``"l2<=r"`` / ``"l1<=r"`` / ``"linf<=r"`` (local DP,
        inputs within distance r), ``"int-l1<=r"`` (integer lattice), ``"histogram"``,
        ``"keys(k=K,c=C)"`` or ``"any"`` (local DP over the whole declared domain). A
        mapping (the neighbourhood's ``to_dict``) is read back into the object. The
        value is kept as given; :attr:`neighbourhood` is always the object.
    mu : float, optional
        μ-GDP parameter, when the mechanism is exactly Gaussian-like.
    rho : float, optional
        ρ-zCDP parameter.
    """

    epsilon: float
    delta: float
    adjacency: str | Neighbourhood
    mu: float | None = None
    rho: float | None = None

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon, allow_inf=True)
        check_delta(self.delta, allow_zero=True)
        if isinstance(self.adjacency, Mapping):
            object.__setattr__(self, "adjacency", parse_neighbourhood(self.adjacency))
        if not isinstance(self.adjacency, str | Neighbourhood):
            raise InvalidParameterError(f"adjacency must be a string or a Neighbourhood, got {self.adjacency!r}")
        parse_neighbourhood(self.adjacency)
        if self.mu is not None:
            check_positive("mu", self.mu, allow_inf=True)
        if self.rho is not None:
            check_positive("rho", self.rho, allow_inf=True)

    @property
    def is_private(self) -> bool:
        """False for ε = ∞ (a non-private release)."""
        return not math.isinf(self.epsilon)

    @property
    def neighbourhood(self) -> Neighbourhood:
        """The neighbourhood object of :attr:`adjacency` (parsed from the shorthand when a string was given)."""
        return parse_neighbourhood(self.adjacency)

    @property
    def relation(self) -> NeighboringRelation:
        """The dp_accounting neighbouring relation of :attr:`adjacency`."""
        return self.neighbourhood.relation

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form for reports (``inf`` is kept as a float; a neighbourhood object as its ``to_dict``)."""
        if isinstance(self.adjacency, str):
            return asdict(self)
        return {**asdict(self), "adjacency": self.adjacency.to_dict()}


class ClaimTypeError(ParameterTypeError, InvalidParameterError):
    """An object's ``.claim`` is not a :class:`PrivacyClaim` (or it has none where one is required).

    Both a :class:`ParameterTypeError` (a ``TypeError``) and an :class:`InvalidParameterError`
    (a ``ValueError``): the audits used to raise the latter for a mechanism without a claim and
    the pytest plugin the former, and callers catching either still catch it.
    """


def claim_of(obj: Any, *, required: bool = False, name: str = "mechanism") -> PrivacyClaim | None:
    """The :class:`PrivacyClaim` an object exposes as ``.claim``.

    The one place that reads a mechanism's (or fitted learner's, or release view's) claim:
    audits, kinds and the pytest plugin call it instead of testing ``getattr(obj, "claim")``
    themselves.

    Parameters
    ----------
    obj : object
        Anything; a mechanism declares its claim as the attribute ``claim``.
    required : bool
        When True, an object without a claim (no ``claim`` attribute, or ``claim`` is None)
        raises instead of returning None.
    name : str
        What ``obj`` is called in the error message (e.g. the argument's name).

    Returns
    -------
    PrivacyClaim or None
        ``obj.claim``; None when ``obj`` has no claim (no attribute, or None) and ``required``
        is False.

    Raises
    ------
    ClaimTypeError
        When ``obj.claim`` is set but is not a :class:`PrivacyClaim`, or when ``required`` and
        ``obj`` has no claim; the message names the value and the object's type.

    Examples
    --------
    >>> from privaudit.mechanisms import GaussianMechanism, claim_of
    >>> claim_of(GaussianMechanism(epsilon=1.0, delta=1e-5)).epsilon
    1.0
    >>> claim_of(object()) is None
    True
    """
    claim = getattr(obj, "claim", None)
    if isinstance(claim, PrivacyClaim):
        return claim
    if claim is not None:
        raise ClaimTypeError(f"{name} must expose a PrivacyClaim as .claim, got {name}.claim={claim!r:.200} "
                             f"({type(claim).__name__}) on {type(obj).__name__}")
    if required:
        raise ClaimTypeError(f"{name} must expose a PrivacyClaim as .claim, got {name}={obj!r:.200} "
                             f"({type(obj).__name__}), which has none")
    return None
