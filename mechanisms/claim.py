"""Privacy claims as small immutable data.

A :class:`PrivacyClaim` is what a mechanism or a fitted learner *asserts*; audits
read it and hold the evidence against it. It names its neighbouring relation
explicitly, because the same noise gives different guarantees under add/remove
and replace-one adjacency.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from typing import Any

from dp_accounting import NeighboringRelation

from .validation import InvalidParameterError, check_delta, check_epsilon, check_positive

#: Adjacency names understood by privaudit and the dp_accounting relation each maps to.
#: Local relations (``l2<=r``, ``l1<=r``, ``any``) bound the change of one user's whole
#: input; their mechanisms are calibrated on that sensitivity, so dp_accounting
#: sees a single add/remove-style query of that sensitivity.
_RELATIONS = {
    "add-remove": NeighboringRelation.ADD_OR_REMOVE_ONE,
    "replace-one": NeighboringRelation.REPLACE_ONE,
    "label": NeighboringRelation.REPLACE_ONE,
    "any": NeighboringRelation.ADD_OR_REMOVE_ONE,
}
_LOCAL = re.compile(r"^(l1|l2)<=(\d+(\.\d*)?|\.\d+)$")


def neighboring_relation(adjacency: str) -> NeighboringRelation:
    """Map an adjacency name to the dp_accounting neighbouring relation.

    ``"label"`` is replace-one on the label: one label changes, which moves a
    clipped per-example gradient by up to twice the clip norm.
    """
    if adjacency in _RELATIONS:
        return _RELATIONS[adjacency]
    if _LOCAL.match(adjacency):
        return NeighboringRelation.ADD_OR_REMOVE_ONE
    known = ", ".join(sorted(_RELATIONS)) + ", l2<=r, l1<=r"
    raise InvalidParameterError(f"unknown adjacency {adjacency!r}; expected one of: {known}")


@dataclass(frozen=True)
class PrivacyClaim:
    """An (ε, δ)-DP claim under a named adjacency, with optional GDP/zCDP forms.

    Parameters
    ----------
    epsilon : float
        ε > 0; ``math.inf`` denotes a non-private release.
    delta : float
        δ in [0, 1); δ = 0 is pure DP.
    adjacency : str
        ``"add-remove"``, ``"replace-one"``, ``"label"`` (replace-one on labels),
        ``"l2<=r"`` / ``"l1<=r"`` (local DP, inputs within distance r) or ``"any"``
        (local DP over the whole declared domain).
    mu : float, optional
        μ-GDP parameter, when the mechanism is exactly Gaussian-like.
    rho : float, optional
        ρ-zCDP parameter.
    """

    epsilon: float
    delta: float
    adjacency: str
    mu: float | None = None
    rho: float | None = None

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon, allow_inf=True)
        check_delta(self.delta, allow_zero=True)
        if not isinstance(self.adjacency, str):
            raise InvalidParameterError(f"adjacency must be a string, got {self.adjacency!r}")
        neighboring_relation(self.adjacency)
        if self.mu is not None:
            check_positive("mu", self.mu, allow_inf=True)
        if self.rho is not None:
            check_positive("rho", self.rho, allow_inf=True)

    @property
    def is_private(self) -> bool:
        """False for ε = ∞ (a non-private release)."""
        return not math.isinf(self.epsilon)

    @property
    def relation(self) -> NeighboringRelation:
        """The dp_accounting neighbouring relation of :attr:`adjacency`."""
        return neighboring_relation(self.adjacency)

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form for reports (``inf`` is kept as a float)."""
        return asdict(self)
