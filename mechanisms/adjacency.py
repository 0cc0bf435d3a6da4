"""Adjacency of an audited pair under a claim, and the group-privacy claim of a farther pair.

A claim is about *neighbouring* inputs. :func:`pair_distance` measures a pair in
the claim's own metric and :func:`adjacent_claim` decides what an audit may test:

* ``"l1<=r"`` / ``"l2<=r"``: the pair must be within r (relative tolerance 1e−9);
* ``"any"``: every pair of the domain is adjacent (local DP);
* ``"replace-one"``, ``"label"``, ``"add-remove"``: the audited pair is a derived
  release (a transcript, a canary flip) whose adjacency the caller established; it
  is not checkable from (x, x′) alone and is accepted with a note.

A pair at distance D > r is k = ⌈D/r⌉ steps apart. By group privacy an (ε, δ)-DP
mechanism is (kε, k·e^{(k−1)ε}·δ)-DP on it (Dwork & Roth 2014, Thm 2.2 and its
(ε, δ) extension), and a μ-GDP one is kμ-GDP (Dong, Roth & Su 2019, Thm 2.14).
``mode="check"`` refuses such a pair; ``mode="group"`` audits it against that
group claim.
"""

from __future__ import annotations

import math
import re

import numpy as np

from .claim import PrivacyClaim
from .validation import InvalidInputError, InvalidParameterError

_LOCAL = re.compile(r"^(l1|l2)<=(\d+(\.\d*)?|\.\d+)$")
_MODES = ("check", "group", "ignore")
_TOL = 1e-9


class NonAdjacentPairError(InvalidInputError):
    """The audited pair is farther apart than the claim's adjacency allows."""


def local_metric(adjacency: str) -> tuple[str, float] | None:
    """(norm, radius) of a local adjacency ``"l1<=r"`` / ``"l2<=r"``; None for any other adjacency."""
    m = _LOCAL.match(adjacency)
    return (m.group(1), float(m.group(2))) if m else None


def pair_distance(adjacency: str, x, x_prime) -> tuple[float, float] | None:
    """(distance, radius) of the pair in the metric of a local adjacency ``l1<=r``/``l2<=r``; None otherwise."""
    metric = local_metric(adjacency)
    if metric is None:
        return None
    a, b = np.asarray(x, dtype=float).ravel(), np.asarray(x_prime, dtype=float).ravel()
    if a.shape != b.shape:
        raise InvalidInputError(f"x and x_prime must have the same shape, got {np.shape(x)} and {np.shape(x_prime)}")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise InvalidInputError(f"x and x_prime must be finite to measure their {adjacency!r} distance, "
                                f"got x={a.tolist()!r:.80}, x_prime={b.tolist()!r:.80}")
    norm, radius = metric
    return (float(np.abs(a - b).sum()) if norm == "l1" else float(np.linalg.norm(a - b))), radius


def group_claim(claim: PrivacyClaim, k: int) -> PrivacyClaim:
    """The claim for inputs k adjacency steps apart: (kε, k·e^{(k−1)ε}·δ), kμ-GDP, k²ρ-zCDP."""
    if k == 1:
        return claim
    eps = k * claim.epsilon
    delta = min(k * math.exp(min((k - 1) * claim.epsilon, 700.0)) * claim.delta, 1.0 - 1e-12) if claim.delta else 0.0
    return PrivacyClaim(eps, delta, claim.adjacency,
                        mu=None if claim.mu is None else k * claim.mu,
                        rho=None if claim.rho is None else k * k * claim.rho)


def adjacent_claim(claim: PrivacyClaim, x, x_prime, *, mode: str = "check") -> tuple[PrivacyClaim, str]:
    """The claim an audit of (x, x′) must test, and a note on the pair's adjacency.

    Raises :class:`NonAdjacentPairError` for a non-adjacent pair when ``mode="check"``.
    """
    if mode not in _MODES:
        raise InvalidParameterError(f"adjacency must be one of {_MODES}, got adjacency={mode!r}")
    if mode == "ignore" or claim.adjacency == "any":
        return claim, ""
    dist = pair_distance(claim.adjacency, x, x_prime)
    if dist is None:
        return claim, (f"adjacency {claim.adjacency!r} is not checkable from (x, x_prime); the pair is taken "
                       "as adjacent as given")
    d, r = dist
    if d <= r * (1 + _TOL):
        return claim, ""
    k = math.ceil(d / r * (1 - _TOL))
    if mode == "check":
        raise NonAdjacentPairError(
            f"x and x_prime are at distance {d:.6g} but the claim's adjacency is {claim.adjacency!r}: they are "
            f"{k} steps apart, not neighbours. Audit a pair within {r:g}, or pass adjacency='group' to test the "
            f"group-privacy claim (k={k}) instead."
        )
    g = group_claim(claim, k)
    return g, (f"pair at distance {d:.6g} = {k} adjacency steps of {claim.adjacency!r}: audited against the "
               f"group-privacy claim (epsilon={g.epsilon:.4g}, delta={g.delta:.3g})")
