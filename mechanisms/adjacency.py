"""Adjacency of an audited pair under a claim, and the group-privacy claim of a farther pair.

A claim is about *neighbouring* inputs; its neighbourhood
(:mod:`privaudit.mechanisms.neighbourhoods`) measures how many neighbour steps
separate an audited pair, and :func:`adjacent_claim` decides what an audit may test:

* norm balls ``"l1<=r"`` / ``"l2<=r"`` / ``"linf<=r"``: the pair must be within r
  (relative tolerance 1e−9), measured by :func:`pair_distance`;
* ``"any"``: every pair of the domain is adjacent (local DP);
* the other neighbourhoods given as objects (lattices, histograms, key
  contributions, datasets under add/remove, replace-one or label) and the new
  shorthands (``"int-l1<=r"``, ``"histogram"``, ``"keys(k=K,c=C)"``): the pair must
  be one group step apart (:meth:`~privaudit.mechanisms.neighbourhoods.Neighbourhood.group_distance`);
* the shorthand *strings* ``"replace-one"``, ``"label"`` and ``"add-remove"``: the
  audited pair of such a claim is usually a derived release (a transcript, a canary
  flip) whose adjacency the caller established; it is not checkable from (x, x′)
  alone and is accepted with a note. Pass the neighbourhood object (e.g.
  :class:`~privaudit.mechanisms.neighbourhoods.ReplaceOne`) to have datasets checked.

A pair k ≥ 2 steps apart is covered by group privacy (:func:`group_epsilon_delta`):
an (ε, δ)-DP mechanism is (kε, k·e^{(k−1)ε}·δ)-DP on it (Dwork & Roth 2014,
Thm 2.2 and its (ε, δ) extension), a μ-GDP one is kμ-GDP (Dong, Roth & Su 2019,
Thm 2.14) and a ρ-zCDP one k²ρ-zCDP (Bun & Steinke 2016, Prop. 1.9).
``mode="check"`` refuses such a pair; ``mode="group"`` audits it against that
group claim. A pair no chain connects (datasets of different sizes under
replace-one) is refused in every mode but ``"ignore"``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .claim import PrivacyClaim
from .neighbourhoods import AnyPair, Neighbourhood, NormBall, parse_neighbourhood
from .validation import InvalidInputError, InvalidParameterError, check_delta, check_epsilon, check_int

_MODES = ("check", "group", "ignore")
_TOL = 1e-9
#: Shorthands whose audited pair is a derived release, accepted as given (see the module docstring).
_DERIVED = ("replace-one", "label", "add-remove")


class NonAdjacentPairError(InvalidInputError):
    """The audited pair is farther apart than the claim's adjacency allows."""


def local_metric(adjacency: str | Neighbourhood) -> tuple[str, float] | None:
    """(norm, radius) of a norm-ball adjacency ``"l1<=r"`` / ``"l2<=r"`` / ``"linf<=r"``; None for any other.

    Parameters
    ----------
    adjacency : str or Neighbourhood
        A claim's adjacency (unknown or malformed strings give None, as before).

    Returns
    -------
    (str, float) or None
    """
    try:
        nb = parse_neighbourhood(adjacency)
    except (InvalidParameterError, TypeError):
        return None
    return (nb.norm, nb.radius) if isinstance(nb, NormBall) else None


def pair_distance(adjacency: str | Neighbourhood, x: Any, x_prime: Any) -> tuple[float, float] | None:
    """(distance, radius) of the pair in the metric of a norm-ball adjacency (``l1<=r``, ``l2<=r``, ``linf<=r``).

    Parameters
    ----------
    adjacency : str or Neighbourhood
    x, x_prime : array-like
        The pair, of one size, finite.

    Returns
    -------
    (float, float) or None
        None when the adjacency is not a norm ball.

    Raises
    ------
    InvalidInputError
        Different sizes, NaN or inf.
    """
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
    if norm == "l1":
        return float(np.abs(a - b).sum()), radius
    if norm == "l2":
        return float(np.linalg.norm(a - b)), radius
    return float(np.abs(a - b).max()) if a.size else 0.0, radius


def group_epsilon_delta(epsilon: float, delta: float, k: int) -> tuple[float, float]:
    """(ε_k, δ_k) = (kε, k·e^{(k−1)ε}·δ) of an (ε, δ)-DP mechanism on inputs k neighbour steps apart.

    Derivation (Dwork & Roth 2014, Thm 2.2 and its (ε, δ) extension): for a chain
    x = z₀ ~ z₁ ~ … ~ z_k = x′ and any event S, applying the claim to each link,

        P[M(z₀) ∈ S] ≤ e^ε P[M(z₁) ∈ S] + δ ≤ e^ε (e^ε P[M(z₂) ∈ S] + δ) + δ ≤ …
                     ≤ e^{kε} P[M(z_k) ∈ S] + δ (1 + e^ε + … + e^{(k−1)ε}),

    and the sum of k terms, each at most e^{(k−1)ε}, is at most k·e^{(k−1)ε}. The
    exponent is capped at 700 (e^700 ≈ 10^304, no overflow) and δ_k at 1 − 10⁻¹²
    (a claim needs δ < 1); δ = 0 stays 0.

    Parameters
    ----------
    epsilon : float
        ε > 0 (``inf`` allowed).
    delta : float
        δ in [0, 1).
    k : int
        Number of neighbour steps, ≥ 1.

    Returns
    -------
    (float, float)
        (kε, δ_k).
    """
    epsilon = check_epsilon(epsilon, allow_inf=True)
    delta = check_delta(delta, allow_zero=True)
    k = check_int("k", k)
    eps = k * epsilon
    return eps, (min(k * math.exp(min((k - 1) * epsilon, 700.0)) * delta, 1.0 - 1e-12) if delta else 0.0)


def group_claim(claim: PrivacyClaim, k: int) -> PrivacyClaim:
    """The claim for inputs k adjacency steps apart: (kε, k·e^{(k−1)ε}·δ), kμ-GDP, k²ρ-zCDP.

    Parameters
    ----------
    claim : PrivacyClaim
    k : int
        Group distance of the pair, ≥ 1 (see :func:`group_epsilon_delta`).

    Returns
    -------
    PrivacyClaim
        ``claim`` itself for k = 1; its neighbourhood is kept.
    """
    if k == 1:
        return claim
    eps, delta = group_epsilon_delta(claim.epsilon, claim.delta, k)
    return PrivacyClaim(eps, delta, claim.adjacency,
                        mu=None if claim.mu is None else k * claim.mu,
                        rho=None if claim.rho is None else k * k * claim.rho)


def adjacent_claim(claim: PrivacyClaim, x: Any, x_prime: Any, *, mode: str = "check") -> tuple[PrivacyClaim, str]:
    """The claim an audit of (x, x′) must test, and a note on the pair's adjacency.

    Parameters
    ----------
    claim : PrivacyClaim
        The claim, with its neighbourhood.
    x, x_prime : array-like
        The audited pair.
    mode : {"check", "group", "ignore"}
        ``"check"``: a pair farther than one step is an error; ``"group"``: it is
        audited against the group-privacy claim; ``"ignore"``: the claim as is.

    Returns
    -------
    (PrivacyClaim, str)
        The claim to test and a note ("" for an adjacent pair).

    Raises
    ------
    NonAdjacentPairError
        For a non-adjacent pair when ``mode="check"``, and for a pair that no chain
        of neighbours connects in modes ``"check"`` and ``"group"``.
    """
    if mode not in _MODES:
        raise InvalidParameterError(f"adjacency must be one of {_MODES}, got adjacency={mode!r}")
    if mode == "ignore" or claim.adjacency == "any":
        return claim, ""
    if isinstance(claim.adjacency, str) and claim.adjacency in _DERIVED:
        return claim, (f"adjacency {claim.adjacency!r} is not checkable from (x, x_prime); the pair is taken "
                       "as adjacent as given")
    nb = claim.neighbourhood
    if isinstance(nb, AnyPair):
        return claim, ""
    adj = claim.adjacency
    if isinstance(nb, NormBall):  # the messages of the norm balls are those that predate the other kinds
        d, r = pair_distance(adj, x, x_prime)
        if d <= r * (1 + _TOL):
            return claim, ""
        ratio = d / r * (1 - _TOL)
        k = math.ceil(ratio) if math.isfinite(ratio) else math.inf
        apart = f"at distance {d:.6g} but the claim's adjacency is {adj!r}: they are {k} steps apart"
        fix, pair = f"within {r:g}", f"pair at distance {d:.6g} = {k} adjacency steps of {adj!r}"
    else:
        k = nb.group_distance(x, x_prime)
        if k <= 1:
            return claim, ""
        apart = f"{k} steps apart under the claim's adjacency {adj!r}"
        fix, pair = "of neighbours", f"pair {k} adjacency steps apart under {adj!r}"
    if math.isinf(k):
        raise NonAdjacentPairError(
            f"x and x_prime are not connected by any chain of neighbours under the claim's adjacency {adj!r} "
            f"(e.g. datasets of different sizes under replace-one, or a distance too large for a finite group size), "
            f"so no group-privacy claim covers them. Audit a pair {fix}."
        )
    if mode == "check":
        raise NonAdjacentPairError(
            f"x and x_prime are {apart}, not neighbours. Audit a pair {fix}, or pass adjacency='group' to test the "
            f"group-privacy claim (k={k}) instead."
        )
    g = group_claim(claim, k)
    return g, (f"{pair}: audited against the group-privacy claim (epsilon={g.epsilon:.4g}, delta={g.delta:.3g})")
