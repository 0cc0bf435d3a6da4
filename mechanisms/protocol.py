"""Structural protocols for what privaudit can audit.

Any object with a ``claim`` and a vectorised ``sample`` is a :class:`Mechanism`;
audits need nothing more. Mechanisms whose output density is known also satisfy
:class:`DensityMechanism`, which unlocks the exact likelihood-ratio attacker and
Fisher-information bounds. Mechanisms that describe themselves to dp_accounting
satisfy :class:`AccountableMechanism`: audits then get their exact privacy curve
through :func:`privaudit.mechanisms.accounting.privacy_loss_distribution` without
knowing their type.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from .claim import PrivacyClaim


@runtime_checkable
class Mechanism(Protocol):
    """A randomised map from one input to a release.

    ``sample(x, n, rng)`` returns ``n`` independent releases of the single input
    ``x``, stacked along axis 0: shape ``(n, *out_shape)``.
    """

    claim: PrivacyClaim

    def sample(self, x: np.ndarray, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray: ...


@runtime_checkable
class DensityMechanism(Mechanism, Protocol):
    """A mechanism whose output log-density is known in closed form."""

    def log_density(self, outputs: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Log-density (or log-pmf) of each output row given input ``x``; shape ``(n,)``."""
        ...


@runtime_checkable
class AccountableMechanism(Mechanism, Protocol):
    """A mechanism that states its dp_accounting event (every built-in mechanism does)."""

    def dp_event(self, distance: float | None = None):
        """The ``dp_accounting.DpEvent`` of one release between inputs at ``distance`` (default: worst case)."""
        ...
