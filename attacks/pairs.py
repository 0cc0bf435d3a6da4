"""Neighbouring-pair generators: worst-case pairs, random pairs and label canaries.

A trade-off audit is only as strong as its pair. :func:`worst_case_pair` returns the
pair (and, where the attacker is assumed to know it, the auxiliary randomness) on
which a mechanism's privacy loss is largest. A mechanism states it through the
:class:`~privaudit.mechanisms.protocol.HasWorstCasePair` capability
(``worst_case_pair(*, dim)``), as every shipped one does:

* Gaussian (ℓ₂ sensitivity Δ): x = 0, x′ = Δ e₁ — every pair at distance Δ is
  equivalent by rotation invariance.
* Laplace (ℓ₁ sensitivity Δ₁): x = 0, x′ = Δ₁ e₁ — along one coordinate the
  privacy loss reaches ε (spreading Δ₁ over coordinates is never worse).
* Randomised response: two distinct categories (all pairs are equivalent).
* Modulated map, phase known (seed 000): x and x′ = x + v₁ at distance 1 along
  the first modulation vector, with the phase φ₁ fixed at the value maximising
  the displacement of the noise-free map (:func:`modulated_pair`; the derivation is in
  :meth:`privaudit.mechanisms.modulated.ModulatedMechanism.worst_case_pair`).

A mechanism without the capability is audited on the pair its claim's neighbourhood
states (:meth:`~privaudit.mechanisms.neighbourhoods.Neighbourhood.reference_pair`, inside
the mechanism's declared ``domain`` when it has one): 0 and one full step for a vector
neighbourhood (r·e₁ under ℓ1/ℓ2, the corner r·(1, …, 1) under ℓ∞). Where nothing can be
derived (a dataset neighbourhood without a domain, ``"any"`` without one) the pair must be
given.

:class:`NeighbouringPair`, :class:`PhaseKnownRelease`, :func:`steepest_phase` and
:func:`modulated_pair` live in :mod:`privaudit.mechanisms` (the mechanisms state their own
pairs) and are re-exported here.
"""

from __future__ import annotations

import numpy as np

from privaudit.mechanisms.claim import PrivacyClaim
from privaudit.mechanisms.domains import domain_of, short_repr
from privaudit.mechanisms.modulated import PhaseKnownRelease, modulated_pair, steepest_phase
from privaudit.mechanisms.protocol import HasWorstCasePair, NeighbouringPair
from privaudit.mechanisms.validation import InvalidParameterError, check_int, check_positive


def worst_case_pair(mechanism: object, *, dim: int = 1) -> NeighbouringPair:
    """The worst-case neighbouring pair of a mechanism: its own, else the one its claim's neighbourhood states.

    Parameters
    ----------
    mechanism : object
        The mechanism to audit: one with ``worst_case_pair(*, dim)``
        (:class:`~privaudit.mechanisms.protocol.HasWorstCasePair`, e.g. Gaussian, Laplace,
        randomised response, modulated), or one whose ``claim`` states a neighbourhood
        from which a pair can be derived.
    dim : int
        The input dimension for mechanisms that do not fix one (Gaussian, Laplace, a vector
        neighbourhood without a declared domain).

    Returns
    -------
    NeighbouringPair
        ``exact_mu`` is set for Gaussian and phase-known modulated releases; None for a pair
        derived from the claim.

    Raises
    ------
    InvalidParameterError
        When the mechanism states no pair and none can be derived from its claim (pass x and
        x_prime explicitly).
    """
    dim = check_int("dim", dim)
    if isinstance(mechanism, HasWorstCasePair):
        return mechanism.worst_case_pair(dim=dim)
    claim = getattr(mechanism, "claim", None)
    if isinstance(claim, PrivacyClaim):
        nb = claim.neighbourhood
        pair = nb.reference_pair(dim, domain_of(mechanism))
        if pair is not None:
            return NeighbouringPair(pair.x, pair.x_prime, mechanism,
                                    f"{type(mechanism).__name__}, {pair.origin} from {short_repr(pair.x)} under the "
                                    f"claim's neighbourhood {nb.shorthand!r}")
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
