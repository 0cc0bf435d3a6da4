"""A search for the worst neighbouring pair, from the claim's neighbourhood and an input domain alone.

Adjacency checks (:func:`~privaudit.mechanisms.adjacency.adjacent_claim`) live in
:mod:`privaudit.mechanisms.adjacency`; neighbourhoods, domains and input patterns in
:mod:`privaudit.mechanisms.neighbourhoods`, :mod:`privaudit.mechanisms.domains` and
:mod:`privaudit.mechanisms.input_patterns`.

Search
------
:func:`candidate_pairs` proposes true neighbours of the domain under the claim's
neighbourhood: from a few base points (the centre of a box, its low and high
corners, random points; the boundary datasets of a dataset domain and random ones;
every category) it takes the StatDP / DP-Sniper input patterns (one up, one down,
one up and the rest down, half up and half down, all up, all down, alternating),
their dataset analogues (a record added at each bound, at the mean, an outlier;
removed; replaced), axis and diagonal moves and random directions. With
``group=True`` it adds, for vector neighbourhoods, the patterns with *every* moved
coordinate moved by the neighbourhood's radius (an ℓ∞ step under an ℓ1 or ℓ2
claim), which are several neighbour steps apart and are audited against the
group-privacy claim at their measured distance.

:func:`search_pairs` screens every candidate cheaply (``screen_n`` releases per input,
default n/100 with a floor of 1 000, or n when smaller; the cheap attackers' scores and
the penalised plug-in ε of their empirical trade-off curves, without the audit's
threshold selection), screens the best third again on ``4·screen_n`` fresh releases,
refines directions around the best one, and certifies the ``certify`` best (default 2)
by full audits on fresh releases, each at confidence 1 − (1 − c)/certify (Bonferroni
over the certified pairs: the union bound needs no independence, and the screening
releases are discarded, so its many looks cost nothing). The result names the pair by
its coordinates and origin, with the runners-up.

Cost (measured, ``benchmarks/bench_tradeoff.py --speed-only``, CPU time against one full
audit of (0, e₀) in the same run, box [0, 1]¹⁰, n = 10⁶): 2.6 audits for a Gaussian
mechanism (7.8 with the former screening by small audits, 3 certified); 66 candidates
screened at 10⁴ releases, 26 again at 4·10⁴, about half an audit in all, and 2 full
certifications. For a Laplace mechanism 4.4 (was 8.1): its certified pairs move every
coordinate, where the default suite's ``reach-numpy-laplace`` costs 2.5× its cost on
(0, e₀); against an audit of the certified pair the search costs 2.4–2.8 audits.
Power (tests/sniper_bank.py at 10⁶, these defaults, seed 0): every broken case but
float-safe SVT3 is a violation on a true neighbour, every correct one passes.
False violations (slow tests; each certified ε̲ holds at the joint confidence 0.95, so the
rate is at most 0.05): 0 in 200 searches of correct vector mechanisms
(tests/test_sniper_bank.py; Clopper–Pearson 95 % interval [0, 0.018]) and 1 in 200 of
correct dataset mechanisms (tests/test_dataset_search_null.py; [0.0001, 0.028]).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from privaudit.mechanisms.adjacency import (  # noqa: F401  (re-exported)
    NonAdjacentPairError,
    adjacent_claim,
    group_claim,
    local_metric,
    pair_distance,
)
from privaudit.mechanisms.claim import PrivacyClaim
from privaudit.mechanisms.domains import Box, Domain, domain_from_spec, domain_of
from privaudit.mechanisms.input_patterns import input_patterns, sign_patterns
from privaudit.mechanisms.neighbourhoods import CandidatePair, Neighbourhood, parse_neighbourhood
from privaudit.mechanisms.protocol import HasDensity
from privaudit.mechanisms.randomness import RandomLike, resolve_seed
from privaudit.mechanisms.validation import InvalidParameterError, check_int, check_interval

from privaudit.attacks.distinguishers import make_attacker
from privaudit.attacks.protocol import distinguisher_traits
from privaudit.audit.engines.attack_scores import safe_scores, single_threaded_blas
from privaudit.audit.engines.tradeoff import Splits, audit_tradeoff, default_attackers, draw_releases, fit_attackers
from privaudit.audit.stats import epsilon_bounds as eb

#: Random base points of a box or dataset domain (besides the centre, corners and boundary datasets).
N_RANDOM_BASES = 2
#: Boundary datasets used as base points of a dataset domain.
MAX_DATASET_BASES = 4
#: Releases behind each side of a screened test for the plug-in ε (tails rarer than this are not ranked on).
MIN_SCREEN_COUNT = 30
#: Default screening size: n // SCREEN_SHARE releases per input and pair, at least SCREEN_FLOOR (or n if smaller).
SCREEN_SHARE = 100
SCREEN_FLOOR = 1000
#: Share of a screened pair's releases that fits the screening attackers needing training (atoms).
SCREEN_TRAIN_FRACTION = 0.25


# --- candidates ------------------------------------------------------------------------------------
def _fmt(x: Any) -> str:
    if isinstance(x, str):
        return repr(x)
    a = np.asarray(x, dtype=float)
    if a.size <= 12:
        return str(np.round(a, 6).tolist())
    return f"array{a.shape}(first {np.round(a.ravel()[:6], 6).tolist()})"


def describe_pair(x: Any, x_prime: Any, origin: str) -> str:
    """``"<origin> at x=[...], x'=[...]"``: a pair named by its origin and its coordinates.

    A pair proposed several ways is named by its first two origins and the count of the others.

    Parameters
    ----------
    x : array-like
        One input of the pair.
    x_prime : array-like
        The other input.
    origin : str
        How the pair was proposed (origins joined with " / ").

    Returns
    -------
    str
    """
    parts = origin.split(" / ")
    if len(parts) > 2:
        origin = f"{' / '.join(parts[:2])} (and {len(parts) - 2} more)"
    return f"{origin} at x={_fmt(x)}, x'={_fmt(x_prime)}"


def _first_origin(origin: str) -> str:
    return origin.split(" / ")[0]


def _as_domain(domain: Any) -> Domain:
    if isinstance(domain, tuple | list) and len(domain) == 2 and not isinstance(domain[0], str):
        lo, hi = (np.atleast_1d(np.asarray(b, dtype=float)) for b in domain)
        if lo.shape != hi.shape or np.any(lo > hi):
            raise InvalidParameterError(f"domain must be (low, high) with low <= high, got {domain!r}")
        return Box(lo, hi)
    return domain_from_spec(domain)


def _group_moves(nb: Neighbourhood, a: np.ndarray, box: Box | None) -> list[CandidatePair]:
    """Every moved coordinate of each pattern moved by the neighbourhood's ``group_step`` (several steps under ℓ1/ℓ2).

    Only a neighbourhood with a group step (norm balls, integer lattices; searched in a box) has such moves.
    """
    r = nb.group_step
    if r is None:
        return []
    a = np.asarray(a, dtype=float)
    out = []
    for name, u in sign_patterns(a.size):
        xp = a.ravel() + r * u
        if box is not None:
            xp = np.clip(xp, np.asarray(box.low, dtype=float).ravel(), np.asarray(box.high, dtype=float).ravel())
        xp = xp.reshape(a.shape)
        if not np.array_equal(xp, a):
            out.append(CandidatePair(a, xp, f"{name}, every coordinate by {r:g}"))
    return out


def candidate_pairs(
    domain: Any, neighbourhood: str | Neighbourhood, *, n_random: int = 8, rng: Any = None, group: bool = False,
) -> list[CandidatePair]:
    """Labelled candidate pairs (x, x′) of ``domain`` that are neighbours under ``neighbourhood``.

    Parameters
    ----------
    domain : Domain, (low, high) or mapping
        A :class:`~privaudit.mechanisms.domains.Box` (real or integer) for vector
        neighbourhoods, a :class:`~privaudit.mechanisms.domains.DatasetDomain` for dataset
        ones, a Box or a :class:`~privaudit.mechanisms.domains.Categorical` for ``"any"``.
    neighbourhood : str or Neighbourhood
        The claim's neighbourhood (or its shorthand).
    n_random : int
        Random directions (vectors) or random records (datasets) per base point.
    rng : int, Generator or None
        Randomness of the random bases and proposals.
    group : bool
        Add vector pairs several neighbour steps apart (see the module docstring); they
        must be audited against the group claim (``adjacency="group"``).

    Returns
    -------
    list of CandidatePair
        Distinct unordered pairs, each a true neighbour inside the domain (or, with
        ``group``, connected by a chain of neighbours), origins of coinciding pairs
        joined by " / ", in the order they were proposed (patterns first).
    """
    dom = _as_domain(domain)
    nb = parse_neighbourhood(neighbourhood)
    n_random = check_int("n_random", n_random, minimum=0)
    gen = np.random.default_rng(rng)
    nb.check_search_domain(dom)
    proposals: list[CandidatePair] = []
    # The domain gives the bases (a box: its centre, which alone explores, corners and random points; datasets: the
    # boundary datasets and random ones; categories), the neighbourhood what each base proposes.
    for base in dom.search_bases(gen, n_random=N_RANDOM_BASES, max_boundary=MAX_DATASET_BASES):
        pats = nb.search_proposals(base.point, dom, gen, n_random=n_random, explore=base.explore,
                                   patterns=input_patterns)
        if group:
            pats += _group_moves(nb, base.point, dom)
        proposals += [CandidatePair(p.x, p.x_prime, base.origin(p.origin)) for p in pats]
    return _unordered_unique(proposals)


def _key(x: Any) -> bytes:
    """Identity of an input; vectors equal to 1e-9 (rounding of a rescaled move) are one input."""
    if isinstance(x, str):
        return repr(x).encode()
    return np.round(np.asarray(x, dtype=float), 9).tobytes() + repr(np.shape(x)).encode()


def _pair_key(p: Any) -> tuple[bytes, ...]:
    return tuple(sorted((_key(p.x), _key(p.x_prime))))


def _unordered_unique(pairs: list[CandidatePair]) -> list[CandidatePair]:
    """Distinct unordered pairs (an audit tests both directions of a pair), origins of duplicates joined."""
    out: dict[tuple[bytes, ...], CandidatePair] = {}
    for p in pairs:
        k = _pair_key(p)
        if k in out:
            if p.origin not in out[k].origin.split(" / "):
                out[k] = CandidatePair(out[k].x, out[k].x_prime, f"{out[k].origin} / {p.origin}")
        else:
            out[k] = p
    return list(out.values())


# --- search ----------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class PairCandidate:
    """One screened pair: where it came from and its screening statistics (plug-in ε, not certified bounds).

    ``screen_estimate`` is the penalised plug-in ε that ranks the pairs, ``screen_epsilon``
    the same without the shrinkage (the tie-break), both the largest over the screening
    attackers, from ``screen_n`` releases per input (:func:`_plug_in_epsilon`).
    """

    x: Any
    x_prime: Any
    origin: str
    screen_epsilon: float
    screen_estimate: float = 0.0
    screen_n: int = 0

    def describe(self) -> str:
        """The pair by its origin and coordinates."""
        return describe_pair(self.x, self.x_prime, self.origin)


@dataclasses.dataclass(frozen=True)
class PairSearchResult:
    """Result of :func:`search_pairs`.

    ``best`` is the certified :class:`~privaudit.audit.engines.tradeoff.TradeoffAudit` with the
    largest ε̲ among the ``certified`` audits, each at confidence 1 − (1 − c)/len(certified)
    on fresh releases, so P(best.epsilon_lb ≤ ε_true) ≥ c. ``candidates`` lists every
    screened pair, best first (the certified ones are its first ``len(certified)``).
    ``group`` says whether pairs several neighbour steps apart were searched (then each
    certified audit tests the group-privacy claim of its pair's distance).
    """

    best: object
    certified: tuple
    candidates: tuple
    confidence: float
    seed: int
    neighbourhood: str = ""
    domain: str = ""
    group: bool = False

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

    @property
    def runners_up(self) -> tuple:
        """The other screened pairs, best first (up to 3)."""
        best = self.best_pair
        return tuple(c for c in self.candidates if c is not best)[:3]

    def summary(self) -> str:
        """One paragraph: the pair, its certified ε̲, how it was found, and the runners-up."""
        b, pair = self.best, self.best_pair
        ups = "; ".join(f"{c.describe()} (screened ε ≈ {c.screen_estimate:.3g})" for c in self.runners_up)
        group = ", pairs several neighbour steps apart audited against their group claim" if self.group else ""
        return (f"worst pair {pair.describe()}: ε̲ = {b.epsilon_lb:.4g} ({b.attacker}); found by search_pairs in "
                f"{self.domain} under {self.neighbourhood!r}{group}: {len(self.candidates)} candidate pairs screened, "
                f"the best {len(self.certified)} certified on fresh releases at confidence {b.confidence:.6g} each "
                f"(Bonferroni; the maximum holds at {self.confidence:.6g}); runners-up: {ups or 'none'}")


def _plug_in_epsilon(fpr: np.ndarray, fnr: np.ndarray, delta: float, n_eval: int,
                     shrink: float = 2.0) -> float:
    """A penalised ε of an empirical trade-off curve: a ranking statistic only (no confidence).

    At each vertex (α, β) with at least :data:`MIN_SCREEN_COUNT` releases on each side,
    log((1 − δ − β − shrink·se(β)) / (α + shrink·se(α))) with binomial standard errors,
    and the same with the roles swapped; the maximum over vertices (0 if none is
    positive). The raw maximum over vertices (``shrink=0``) is dominated by the noise of
    the rarest tails; two standard errors of shrinkage keep the ranking on the pairs
    whose signal is real.
    """
    n_eval = max(n_eval, 1)
    m = MIN_SCREEN_COUNT / n_eval
    best = 0.0
    for a, b in ((fpr, fnr), (fnr, fpr)):
        ok = (a >= m) & (1 - delta - b >= m)
        if np.any(ok):
            a, b = a[ok], b[ok]
            num = 1 - delta - b - shrink * np.sqrt(b * (1 - b) / n_eval)
            den = a + shrink * np.sqrt(a * (1 - a) / n_eval)
            good = num > 0
            if np.any(good):
                best = max(best, float(np.max(np.log(num[good] / den[good]))))
    return best


def _screen_pair(mechanism: Any, pair: Any, size: int, attackers: Any, seed: np.random.SeedSequence,
                 delta: float) -> PairCandidate:
    """Screen one pair: ``size`` releases per input, the cheap attackers' scores, the plug-in ε of their curves.

    No threshold is selected and nothing is certified (the screening is discarded
    before certification): each attacker's empirical curve
    (:func:`~privaudit.audit.stats.epsilon_bounds.empirical_curve`) on the releases it was
    not fitted on gives :func:`_plug_in_epsilon`, and the pair's statistic is the largest.
    An attacker that must be fitted (atoms) is fitted on the first
    :data:`SCREEN_TRAIN_FRACTION` of the releases; the others read every release.
    This skips the audit's selection stage, whose per-threshold Clopper–Pearson bounds
    cost more than the releases at screening sizes (measured: 3 s of the 5.5 s that 66
    screening audits at 2 000 releases took).
    """
    s0, s1, s_attack = seed.spawn(3)
    specs = list(attackers) if isinstance(attackers, list | tuple) else [attackers]
    made = [make_attacker(spec, random_state=np.random.default_rng(child))
            for spec, child in zip(specs, s_attack.spawn(len(specs)))]
    n_train = int(SCREEN_TRAIN_FRACTION * size) if any(
        distinguisher_traits(a).requires_training for a in made) else 0
    releases = draw_releases(mechanism, pair.x, pair.x_prime, size, s0, s1)
    with single_threaded_blas():
        fitted = fit_attackers(made, releases, Splits(n_train, 0, size - n_train), mechanism, pair.x, pair.x_prime)
    estimate = raw = 0.0
    for a in fitted:
        # the density attackers (the exact likelihood ratio) are fitted on nothing: every release is held out
        start = 0 if distinguisher_traits(a).requires_density else n_train
        scores = [np.sort(safe_scores(a, out[start:], releases.shape)) for out in (releases.out0, releases.out1)]
        fpr, fnr, _ = eb.empirical_curve(*scores, presorted=True)
        estimate = max(estimate, _plug_in_epsilon(fpr, fnr, delta, size - start))
        raw = max(raw, _plug_in_epsilon(fpr, fnr, delta, size - start, shrink=0.0))
    return PairCandidate(pair.x, pair.x_prime, pair.origin, raw, estimate, size)


def search_pairs(mechanism: Any, domain: Any = None, *, n: int = 100_000, screen_n: int | None = None,
                 certify: int = 2, refine: int = 4, n_random: int = 8, confidence: float = 0.95, attacker: Any = None,
                 estimator: str = "clopper-pearson", rng: RandomLike = None, claim: PrivacyClaim | None = None,
                 screen_attacker: Any = None, neighbourhood: str | Neighbourhood | None = None,
                 group: bool = False) -> PairSearchResult:
    """Find the neighbouring pair on which ``mechanism`` leaks most, and certify it on fresh releases.

    Parameters
    ----------
    mechanism : object with ``claim`` and ``sample``
        The mechanism; inputs are points of the domain.
    domain : Domain, (low, high), mapping or None
        The input domain (:func:`~privaudit.mechanisms.domains.domain_from_spec`); None:
        the domain the mechanism declares (``mechanism.domain``).
    n : int
        Releases per hypothesis of each certification audit.
    screen_n : int, optional
        Releases per input of each first-round screening of a pair (cheap, never
        certified); default n // 100, at least 1 000 (or n if smaller), so a small
        budget screens small. The best third is screened again on 4·screen_n fresh
        releases.
    certify : int
        The ``certify`` best screened pairs are re-audited on fresh releases at
        confidence 1 − (1 − c)/certify (Bonferroni).
    refine : int
        Directions drawn around the best screened vector direction, screened too.
    n_random : int
        Random directions (or records) per base point.
    confidence : float
        Joint confidence of the certified ε̲ (split over the ``certify`` pairs).
    attacker, estimator
        Passed to :func:`~privaudit.audit.engines.tradeoff.audit_tradeoff` for certification
        (default suite, Clopper–Pearson).
    claim : PrivacyClaim, optional
        The claim to test; default ``mechanism.claim``.
    screen_attacker : optional
        Attackers of the screening; default the cheap ones: the likelihood ratio and
        the projection on x′ − x when a density is declared, else the projection and
        atoms. A pair's screening statistic is the largest penalised plug-in ε of
        their curves.
    neighbourhood : str or Neighbourhood, optional
        Overrides the claim's neighbourhood (the claim holds under this one instead).
    group : bool
        Also search vector pairs several neighbour steps apart, audited against the
        group-privacy claim of their distance (said in the result).
    rng : int, Generator, SeedSequence or None
        Root randomness; the result records the integer seed.

    Returns
    -------
    PairSearchResult

    Raises
    ------
    InvalidParameterError
        No domain (none given, none declared), a domain that does not fit the
        neighbourhood, or no neighbouring pair in it.
    """
    claim = mechanism.claim if claim is None else claim
    if neighbourhood is not None:
        claim = dataclasses.replace(claim, adjacency=parse_neighbourhood(neighbourhood))
    confidence = check_interval("confidence", confidence, 0.0, 1.0)
    certify = check_int("certify", certify)
    n = check_int("n", n)
    screen_n = max(min(SCREEN_FLOOR, n), n // SCREEN_SHARE) if screen_n is None else check_int("screen_n", screen_n)
    if domain is None:
        domain = domain_of(mechanism)
        if domain is None:
            raise InvalidParameterError(f"search_pairs needs a domain: pass domain= or declare one as "
                                        f"{type(mechanism).__name__}.domain")
    dom = _as_domain(domain)
    nb = claim.neighbourhood
    root, seed = resolve_seed(rng)
    cand_ss, screen_ss, rescreen_ss, refine_ss, cert_ss = root.spawn(5)
    cands = candidate_pairs(dom, nb, n_random=n_random, rng=np.random.default_rng(cand_ss), group=group)
    if not cands:
        raise InvalidParameterError(f"no neighbouring pair fits in the domain {dom} under {nb.shorthand!r}")
    if screen_attacker is None:
        # With a declared density the likelihood ratio ranks the pairs (the certifying suite still runs
        # atoms); without one, atoms screen for the point masses of discrete and degenerate releases.
        # Hashing every release for atoms was a third of the screening time of a 10-d Gaussian search.
        screen_attacker = ["likelihood-ratio", "projection"] if isinstance(mechanism, HasDensity) else [
            "projection", "atom"]
    adjacency = "group" if group else "check"
    delta = claim.delta

    def screen(pairs, ss, size):
        return [_screen_pair(mechanism, p, size, _for_pair(screen_attacker, p, mechanism), child, delta)
                for p, child in zip(pairs, ss.spawn(len(pairs)))]  # a few dozen pairs, each vectorised

    def rank(cs):
        return sorted(cs, key=lambda c: (-c.screen_estimate, -c.screen_epsilon))

    first = rank(screen(cands, screen_ss, screen_n))
    keep = max(certify, math.ceil(len(first) / 3))
    second = screen([CandidatePair(c.x, c.x_prime, c.origin) for c in first[:keep]], rescreen_ss, 4 * screen_n)
    refined = _refine(second, nb, dom, check_int("refine", refine, minimum=0), np.random.default_rng(refine_ss))
    second += screen(refined, refine_ss, 4 * screen_n)
    ranked = rank(second) + first[keep:]
    top = ranked[:certify]
    level = 1 - (1 - confidence) / len(top)
    name = type(mechanism).__name__
    certified = tuple(
        audit_tradeoff(mechanism, c.x, c.x_prime, n=n, attacker=_for_pair(attacker, c, mechanism),
                       confidence=level, estimator=estimator, rng=child, claim=claim, adjacency=adjacency,
                       target=f"{name}: {c.describe()}")
        for c, child in zip(top, cert_ss.spawn(len(top)))
    )
    best_cert = max(certified, key=lambda a: a.epsilon_lb)
    return PairSearchResult(best=best_cert, certified=certified, candidates=tuple(ranked), confidence=confidence,
                            seed=seed, neighbourhood=nb.shorthand, domain=str(dom), group=group)


def _for_pair(attackers: Any, pair: Any, mechanism: Any) -> Any:
    """The attackers for one pair: without the projection on x′ − x when x and x′ differ in shape.

    Datasets of different sizes (add/remove, unpadded) have no difference vector to
    project on; every other attacker reads the releases only.
    """
    if np.shape(pair.x) == np.shape(pair.x_prime) or isinstance(pair.x, str):
        return attackers
    specs = attackers if isinstance(attackers, list | tuple) else (
        default_attackers(mechanism) if attackers is None else [attackers])
    return [a for a in specs if a != "projection"]


def _refine(screened: list[PairCandidate], nb: Neighbourhood, dom: Domain, count: int,
            gen: np.random.Generator) -> list[CandidatePair]:
    """Directions drawn around the best screened vector move, scaled to one step of the neighbourhood."""
    if not count or not nb.directional:  # a directional neighbourhood is only ever searched in a box
        return []
    best = max(screened, key=lambda c: c.screen_estimate)
    base = np.asarray(best.x, dtype=float)
    u0 = (np.asarray(best.x_prime, dtype=float) - base).ravel()
    scale = np.linalg.norm(u0)
    if scale == 0 or u0.size == 1:  # one coordinate: a direction has no neighbourhood to refine in
        return []
    moves = [(f"refined around '{_first_origin(best.origin)}' {i}",
              u0 / scale + 0.5 * gen.standard_normal(u0.size) / math.sqrt(u0.size)) for i in range(count)]
    seen = {_pair_key(c) for c in screened}
    return [p for p in nb.propose(base, moves, dom) if _pair_key(p) not in seen]  # only pairs not screened yet


__all__ = ["NonAdjacentPairError", "PairCandidate", "PairSearchResult", "adjacent_claim", "candidate_pairs",
           "describe_pair", "group_claim", "pair_distance", "search_pairs"]
