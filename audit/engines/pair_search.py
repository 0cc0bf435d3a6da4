"""A search for the worst neighbouring pair.

Adjacency checks (:func:`~privaudit.mechanisms.adjacency.adjacent_claim`) live in
:mod:`privaudit.mechanisms.adjacency`.

Search
------
:func:`search_pairs` screens candidate pairs of a box domain on a small budget
(axis directions at both signs, sign flips x → −x, domain and clipping boundaries,
random directions, then directions refined around the best), and certifies the
top ``certify`` candidates on *fresh* releases, each at confidence
1 − (1 − c)/certify (Bonferroni over the certified pairs; the screening is
discarded, so its many looks cost nothing).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from privaudit.mechanisms.adjacency import (  # noqa: F401  (re-exported)
    NonAdjacentPairError,
    adjacent_claim,
    group_claim,
    local_metric,
    pair_distance,
)
from privaudit.mechanisms.claim import PrivacyClaim
from privaudit.mechanisms.protocol import HasDensity
from privaudit.mechanisms.randomness import resolve_seed
from privaudit.mechanisms.validation import InvalidParameterError, check_int, check_interval

from privaudit.audit.engines.tradeoff import audit_tradeoff

# --- search ----------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class PairCandidate:
    """One screened pair: where it came from and the screening ε̲ (not a certified bound)."""

    x: np.ndarray
    x_prime: np.ndarray
    origin: str
    screen_epsilon: float


@dataclasses.dataclass(frozen=True)
class PairSearchResult:
    """Result of :func:`search_pairs`.

    ``best`` is the certified :class:`~privaudit.audit.engines.tradeoff.TradeoffAudit` with the
    largest ε̲ among the ``certified`` audits, each at confidence 1 − (1 − c)/len(certified)
    on fresh releases, so P(best.epsilon_lb ≤ ε_true) ≥ c. ``candidates`` lists every
    screened pair, best first.
    """

    best: object
    certified: tuple
    candidates: tuple
    confidence: float
    seed: int

    @property
    def verdict(self) -> str:
        return self.best.verdict

    @property
    def epsilon_lb(self) -> float:
        return self.best.epsilon_lb

    @property
    def best_pair(self) -> PairCandidate:
        """The screened pair that ``best`` certified (the certified audits are the top candidates, in order)."""
        return self.candidates[next(i for i, a in enumerate(self.certified) if a is self.best)]


def _step(adjacency: str) -> tuple[str, float]:
    metric = local_metric(adjacency)
    return metric if metric is not None else ("l2", math.inf)  # "any": any two points of the domain


def _unit(v: np.ndarray, norm: str) -> np.ndarray:
    s = np.abs(v).sum() if norm == "l1" else np.linalg.norm(v)
    return v / s if s > 0 else v


def _fit_in_box(x: np.ndarray, u: np.ndarray, r: float, lo: np.ndarray, hi: np.ndarray):
    """x′ = x + t·u with t ≤ r as large as the box allows (clipping boundaries reached, never crossed)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.where(u > 0, (hi - x) / u, np.where(u < 0, (lo - x) / u, np.inf))
    t = min(r, float(np.min(room)))
    if not np.isfinite(t) or t <= 0:
        return None
    return x + t * u


def candidate_pairs(domain, adjacency: str, *, n_random: int = 8, rng=None) -> list[tuple[np.ndarray, np.ndarray, str]]:
    """Candidate (x, x′, origin) pairs of the box ``domain = (low, high)`` adjacent under ``adjacency``.

    Bases: the centre, the low and high corners, and mid-edges (domain and clipping
    boundaries). Directions: ±eᵢ for every axis, the sign flip x → −x (scaled to the
    radius), and ``n_random`` random directions on the metric's unit sphere.
    """
    lo, hi = (np.atleast_1d(np.asarray(b, dtype=float)) for b in domain)
    if lo.shape != hi.shape or np.any(lo > hi):
        raise InvalidParameterError(f"domain must be (low, high) with low <= high, got {domain!r}")
    d = lo.size
    norm, r = _step(adjacency)
    r = min(r, float(np.linalg.norm(hi - lo) if norm == "l2" else np.abs(hi - lo).sum()))
    gen = np.random.default_rng(rng)
    centre = (lo + hi) / 2
    bases = [("centre", centre), ("low corner", lo.copy()), ("high corner", hi.copy())]
    out = []
    dirs = [(f"+e{i}", np.eye(d)[i]) for i in range(d)] + [(f"-e{i}", -np.eye(d)[i]) for i in range(d)]
    for bname, b in bases:
        for dname, u in dirs:
            xp = _fit_in_box(b, u, r, lo, hi)
            if xp is not None:
                out.append((b, xp, f"{bname} {dname}"))
    # Sign flips: x and −x (clipped into the box), scaled to the radius.
    for bname, b in bases[1:]:
        if np.any(b != 0):
            xp = _fit_in_box(b, _unit(-b - b, norm), r, lo, hi)
            if xp is not None:
                out.append((b, xp, f"{bname} sign flip"))
    for i in range(n_random):
        u = gen.standard_normal(d)
        if norm == "l1":
            u = gen.dirichlet(np.ones(d)) * np.sign(u)
        xp = _fit_in_box(centre, _unit(u, norm), r, lo, hi)
        if xp is not None:
            out.append((centre, xp, f"random direction {i}"))
    return out


def search_pairs(
    mechanism, domain, *, n: int = 100_000, screen_n: int = 4_000, certify: int = 3, refine: int = 4,
    n_random: int = 8, confidence: float = 0.95, attacker=None, estimator: str = "clopper-pearson", rng=None,
    claim: PrivacyClaim | None = None, screen_attacker=None,
) -> PairSearchResult:
    """Find the neighbouring pair on which ``mechanism`` leaks most, and certify it on fresh releases.

    Parameters
    ----------
    mechanism : object with ``claim`` and ``sample``
        The mechanism; inputs are points of ``domain``.
    domain : (low, high)
        Box of inputs (arrays of the input's shape, or scalars for 1-d inputs).
    n : int
        Releases per hypothesis of each certification audit.
    screen_n : int
        Releases per hypothesis of each screening audit (cheap, never certified).
    certify : int
        The ``certify`` best screened pairs are re-audited on fresh releases at
        confidence 1 − (1 − c)/certify (Bonferroni).
    refine : int
        Directions drawn around the best screened direction ("learned"), screened too.
    attacker, estimator
        Passed to :func:`~privaudit.audit.engines.tradeoff.audit_tradeoff` for certification
        (default suite, Clopper–Pearson).
    screen_attacker : optional
        Attackers of the screening audits; default the cheap ones: the likelihood
        ratio (when a density is declared), the projection on x′ − x and atoms.
    rng : int, Generator, SeedSequence or None
        Root randomness; the result records the integer seed.
    """
    claim = mechanism.claim if claim is None else claim
    confidence = check_interval("confidence", confidence, 0.0, 1.0)
    certify = check_int("certify", certify)
    root, seed = resolve_seed(rng)
    cand_ss, screen_ss, refine_ss, cert_ss = root.spawn(4)
    cands = candidate_pairs(domain, claim.adjacency, n_random=n_random, rng=np.random.default_rng(cand_ss))
    if not cands:
        raise InvalidParameterError(f"no adjacent pair fits in domain={domain!r} under {claim.adjacency!r}")
    shape = np.shape(np.asarray(domain[0], dtype=float))
    if screen_attacker is None:
        screen_attacker = (["likelihood-ratio"] if isinstance(mechanism, HasDensity) else []) + [
            "projection", "atom"]
    screened = []

    def screen(pairs, ss):
        for (x, xp, origin), child in zip(pairs, ss.spawn(len(pairs))):  # a few dozen pairs, each vectorised
            res = audit_tradeoff(mechanism, x.reshape(shape), xp.reshape(shape), n=screen_n, attacker=screen_attacker,
                                 confidence=0.5, estimator=estimator, rng=child, claim=claim)
            screened.append(PairCandidate(x.reshape(shape), xp.reshape(shape), origin, res.epsilon_lb))

    screen(cands, screen_ss)
    best = max(screened, key=lambda c: c.screen_epsilon)
    lo, hi = (np.atleast_1d(np.asarray(b, dtype=float)) for b in domain)
    norm, r = _step(claim.adjacency)
    gen = np.random.default_rng(refine_ss)
    base, u0 = best.x.ravel(), best.x_prime.ravel() - best.x.ravel()
    radius = np.abs(u0).sum() if norm == "l1" else np.linalg.norm(u0)
    refined = []
    for i in range(check_int("refine", refine, minimum=0)):
        u = _unit(_unit(u0, norm) + 0.5 * _unit(gen.standard_normal(u0.size), norm), norm)
        xp = _fit_in_box(base, u, radius, lo, hi)
        if xp is not None:
            refined.append((base, xp, f"refined around '{best.origin}' {i}"))
    screen(refined, refine_ss)
    ranked = sorted(screened, key=lambda c: -c.screen_epsilon)
    top = ranked[:certify]
    level = 1 - (1 - confidence) / len(top)
    certified = tuple(
        audit_tradeoff(mechanism, c.x, c.x_prime, n=n, attacker=attacker, confidence=level, estimator=estimator,
                       rng=child, claim=claim, target=f"{getattr(mechanism, '__class__').__name__}: {c.origin}")
        for c, child in zip(top, cert_ss.spawn(len(top)))
    )
    best_cert = max(certified, key=lambda a: a.epsilon_lb)
    return PairSearchResult(best=best_cert, certified=certified, candidates=tuple(ranked), confidence=confidence,
                            seed=seed)


__all__ = ["NonAdjacentPairError", "PairCandidate", "PairSearchResult", "adjacent_claim", "candidate_pairs",
           "group_claim", "pair_distance", "search_pairs"]
