"""Neighbourhoods: which inputs a privacy claim calls neighbours, as objects a claim carries.

A DP claim bounds the privacy loss between *neighbouring* inputs x ~ x′. Each
neighbourhood here is a frozen dataclass that can

* check a pair (:meth:`Neighbourhood.are_neighbours`);
* measure the **group distance** of a pair (:meth:`Neighbourhood.group_distance`):
  the smallest k such that x = z₀ ~ z₁ ~ … ~ z_k = x′ (0 for x = x′, ``math.inf``
  when no chain exists). By group privacy an (ε, δ)-DP mechanism is
  (kε, k·e^{(k−1)ε}·δ)-DP on such a pair (see
  :func:`privaudit.mechanisms.adjacency.group_epsilon_delta`);
* propose neighbours of a point inside a domain (:meth:`Neighbourhood.neighbours`),
  each one a true neighbour and a point of the domain.

Kinds (shorthand string → object, :func:`parse_neighbourhood`):

==========================================  ===============================================================
``"l1<=r"``, ``"l2<=r"``, ``"linf<=r"``     :class:`NormBall` — ‖x − x′‖ ≤ r (vector sensitivity)
``"int-l1<=r"`` (l2, linf)                  :class:`IntegerLattice` — integer inputs, integer moves within r
``"add-remove"``                            :class:`AddRemove` — one record added or removed
``"replace-one"``                           :class:`ReplaceOne` — one record replaced
``"label"``                                 :class:`Label` — one record's label (its last value) replaced
``"histogram"``                             :class:`Histogram` — one count ±1
``"histogram-replace"``                     :class:`Histogram` (``replace=True``) — one count +1, another −1
``"keys(k=K,c=C)"``                         :class:`KeyContributions` — ≤ K keys change, each by ≤ C
``"any"``                                   :class:`AnyPair` — every two points of the domain (local DP)
==========================================  ===============================================================

Datasets are arrays whose axis 0 indexes records; a row that is entirely NaN is an
absent record (so that add/remove neighbours can share one shape, the convention of
:class:`~privaudit.mechanisms.domains.DatasetDomain` with ``padded=True``). Datasets
are *sequences*: the group distance of add/remove is the insertion/deletion edit
distance and that of replace-one the Hamming distance. Sequence semantics is the
weaker assumption: a mechanism that depends on the order of its records is not
credited with a multiset claim it never made.

Numerical tolerance: a pair of a :class:`NormBall` within r·(1 + 10⁻⁹) is adjacent,
as in the adjacency check that predates these objects.
"""

from __future__ import annotations

import abc
import dataclasses
import functools
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from dp_accounting import NeighboringRelation

from .domains import Box, Categorical, DatasetDomain, Domain, short_repr, as_float_array, dataset_rows
from .validation import InvalidInputError, InvalidParameterError, ParameterTypeError, check_int, check_real

#: Relative tolerance of the norm checks (a pair at r·(1 + TOL) is still within r).
TOL = 1e-9
NORMS = ("l1", "l2", "linf")
_ORD = {"l1": 1, "l2": 2, "linf": np.inf}
_TINY = float(np.finfo(float).tiny)  # the smallest normal float, 2.2250738585072014e-308
#: Exact l2-lattice group distances are computed by dynamic programming up to this many states.
_LATTICE_DP_STATES = 200_000
#: ... and up to this many (state, step) pairs per breadth-first layer.
_LATTICE_DP_WORK = 5_000_000
#: Largest (records of x) × (records of x′) table of the add/remove edit distance, after the common prefix and suffix.
_LCS_PAIRS = 50_000_000


def norm_of(v: np.ndarray, norm: str) -> float:
    """‖v‖ in ``norm`` ("l1", "l2" or "linf") of the flattened array.

    Parameters
    ----------
    v : array-like
    norm : {"l1", "l2", "linf"}

    Returns
    -------
    float
    """
    v = np.ravel(v)
    return float(np.linalg.norm(v, ord=_ORD[norm])) if v.size else 0.0


def _text(r: float) -> str:
    """The shortest text that parses back to ``r`` (``1.0`` as ``1``)."""
    s = repr(float(r))
    return s[:-2] if s.endswith(".0") else s


def check_radius(value: Any, name: str = "radius") -> float:
    """A radius: a finite *normal* float > 0.

    Subnormal radii (< 2.2·10⁻³⁰⁸) are refused: a distance divided by one overflows,
    so no group distance could be computed.

    Parameters
    ----------
    value : real
    name : str
        Named in the error.

    Returns
    -------
    float

    Raises
    ------
    InvalidParameterError
        NaN, inf, ≤ 0 or subnormal, naming the value.
    ParameterTypeError
        Not a real number.
    """
    r = check_real(name, value)
    if not (math.isfinite(r) and r >= _TINY):
        raise InvalidParameterError(f"{name} must be a finite number >= {_TINY!r} (a normal float > 0), "
                                    f"got {name}={value!r}")
    return r


@dataclass(frozen=True, eq=False)
class CandidatePair:
    """A proposed pair: x, a neighbour x′ of it, and where the pair came from (e.g. ``"one up"``)."""

    x: Any
    x_prime: Any
    origin: str


# --------------------------------------------------------------------------------------------- base
@dataclass(frozen=True)
class Neighbourhood(abc.ABC):
    """Base of every neighbourhood: pair check, group distance, proposals, plain-data round trip."""

    kind: ClassVar[str] = ""
    relation: ClassVar[NeighboringRelation] = NeighboringRelation.ADD_OR_REMOVE_ONE
    #: Proposals are moves x + v along directions (:meth:`propose`), which a search can refine around.
    directional: ClassVar[bool] = False

    @property
    def group_step(self) -> float | None:
        """The size by which a group pattern moves every moved coordinate (several neighbour steps under ℓ1/ℓ2).

        None where the neighbourhood has no such step (the default; norm balls and integer lattices have one).
        """
        return None

    @property
    @abc.abstractmethod
    def shorthand(self) -> str:
        """The string form (``parse_neighbourhood(nb.shorthand) == nb``)."""

    def __str__(self) -> str:
        return self.shorthand

    @abc.abstractmethod
    def group_distance(self, x: Any, x_prime: Any) -> float:
        """Smallest k with a chain x = z₀ ~ … ~ z_k = x′ of neighbours (0 if equal, ``math.inf`` if none).

        Parameters
        ----------
        x, x_prime : array-like
            The pair (vectors of one shape, or datasets for the dataset kinds).

        Returns
        -------
        int or float
            k, an ``int``, or ``math.inf`` when no chain of neighbours connects the pair.

        Raises
        ------
        InvalidInputError
            For malformed inputs (NaN, inf, shapes the neighbourhood cannot compare).
        """

    def are_neighbours(self, x: Any, x_prime: Any) -> bool:
        """True when x ~ x′ (group distance ≤ 1; a point is its own neighbour).

        Parameters
        ----------
        x, x_prime : array-like
            The pair.

        Returns
        -------
        bool
        """
        return self.group_distance(x, x_prime) <= 1

    @abc.abstractmethod
    def neighbours(self, x: Any, domain: Domain | None = None, rng: Any = None, *,
                   n_random: int = 8) -> list[CandidatePair]:
        """Neighbours x′ ≠ x of ``x`` inside ``domain``, each labelled by its origin.

        Parameters
        ----------
        x : array-like
            A point of ``domain``.
        domain : Domain, optional
            Where x′ must lie (vector kinds accept None: unbounded reals).
        rng : int, Generator or None
            Randomness of the random proposals.
        n_random : int
            Number of random proposals (besides the deterministic ones).

        Returns
        -------
        list of CandidatePair
            Every x′ satisfies ``are_neighbours(x, x′)`` and ``domain.contains(x′)``.
        """

    def check_search_domain(self, domain: Domain) -> None:
        """Raise unless a pair search under this neighbourhood can run in ``domain`` (the default: it never can).

        Parameters
        ----------
        domain : Domain
            The domain to search.

        Raises
        ------
        InvalidParameterError
            Naming the neighbourhood and the domain.
        """
        raise InvalidParameterError(f"no pair search for neighbourhood {self.shorthand!r} on domain {domain}")

    def search_proposals(self, x: Any, domain: Domain, rng: Any, *, n_random: int, explore: bool,
                         patterns: Callable[[Neighbourhood, Domain, Any], list[CandidatePair]]) -> list[CandidatePair]:
        """The pairs a search proposes from the base ``x``: its input patterns, then (``explore``) :meth:`neighbours`.

        Parameters
        ----------
        x : object
            The base point, a point of ``domain``.
        domain : Domain
            The searched domain (accepted by :meth:`check_search_domain`).
        rng : Generator
            Randomness of the random proposals.
        n_random : int
            Random proposals of :meth:`neighbours`.
        explore : bool
            Add :meth:`neighbours` (axis, diagonal and random moves) to the patterns.
        patterns : callable
            ``patterns(neighbourhood, domain, x)``: the StatDP / DP-Sniper input patterns
            (:func:`privaudit.mechanisms.input_patterns.input_patterns`, which builds on this module).

        Returns
        -------
        list of CandidatePair
            In the order proposed (patterns first), duplicates not merged.
        """
        found = patterns(self, domain, x)
        if explore:
            found += self.neighbours(x, domain, rng, n_random=n_random)
        return found

    def reference_pair(self, dim: int = 1, domain: Domain | None = None) -> CandidatePair | None:
        """A neighbouring pair that the neighbourhood (with a domain) states alone: the pair audited by default
        for a mechanism that names no worst-case pair of its own.

        The default: the first deterministic neighbour (:meth:`neighbours` without random
        proposals) of the first boundary point of ``domain`` that has one; None without a
        domain. Vector neighbourhoods move a point by one full step (:class:`NormBall`: 0 and
        r·e₁ under ℓ1 and ℓ2, r·(1, …, 1) under ℓ∞).

        Parameters
        ----------
        dim : int
            Input dimension, where the neighbourhood does not fix one (vectors without a domain).
        domain : Domain, optional
            The inputs the pair must lie in (e.g. the mechanism's declared ``domain``).

        Returns
        -------
        CandidatePair or None
            A true neighbour inside ``domain``, its ``origin`` saying how it was chosen; None
            when nothing can be derived.
        """
        if domain is None:
            return None
        for base in domain.boundary_points():
            found = self.neighbours(base, domain, 0, n_random=0)
            if found:
                return found[0]
        return None

    def to_dict(self) -> dict[str, Any]:
        """Plain data: ``{"kind": ..., <fields>}`` (read back by :meth:`from_dict`)."""
        return {"kind": self.kind, **{f.name: getattr(self, f.name) for f in dataclasses.fields(self)}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Neighbourhood:
        """The neighbourhood whose :meth:`to_dict` is ``data``.

        Parameters
        ----------
        data : mapping
            A ``{"kind": ..., <fields>}`` mapping.

        Returns
        -------
        Neighbourhood

        Raises
        ------
        InvalidParameterError
            Without a ``kind``, for an unknown kind, or for unknown fields.
        """
        if not isinstance(data, Mapping) or "kind" not in data:
            raise InvalidParameterError(f"a neighbourhood mapping needs a 'kind', got {data!r}")
        kinds = {k.kind: k for k in _KINDS}
        if data["kind"] not in kinds:
            raise InvalidParameterError(f"unknown neighbourhood kind {data['kind']!r}; expected one of: "
                                        f"{', '.join(sorted(kinds))}")
        target = kinds[data["kind"]]
        names = {f.name for f in dataclasses.fields(target)}
        extra = set(data) - names - {"kind"}
        if extra:
            raise InvalidParameterError(f"unknown field(s) {sorted(extra)} for neighbourhood kind {data['kind']!r}")
        return target(**{k: v for k, v in data.items() if k != "kind"})

    # -- shared validation ----------------------------------------------------------------------
    def _vectors(self, x: Any, x_prime: Any) -> tuple[np.ndarray, np.ndarray]:
        a, b = as_float_array("x", x), as_float_array("x_prime", x_prime)
        if a.shape != b.shape:
            raise InvalidInputError(f"x and x_prime must have the same shape, got {a.shape} and {b.shape}")
        if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
            raise InvalidInputError(f"x and x_prime must be finite to measure their {self.shorthand!r} distance, "
                                    f"got x={short_repr(a)}, x_prime={short_repr(b)}")
        return a.ravel(), b.ravel()


def _integer_valued(name: str, a: np.ndarray, nb: Neighbourhood) -> None:
    if not np.all(a == np.round(a)):
        raise InvalidInputError(f"{name} must be integer-valued under {nb.shorthand!r}, got {name}={short_repr(a)}")


# ----------------------------------------------------------------------------- vector neighbourhoods
class _VectorNeighbourhood(Neighbourhood):
    """Neighbourhoods of vectors of a fixed shape; proposals are moves x′ = x + v clamped into a box."""

    #: Moves must be integer vectors (the inputs are integer-valued).
    integer_moves: ClassVar[bool] = False
    directional: ClassVar[bool] = True

    def check_search_domain(self, domain: Domain) -> None:
        """A vector neighbourhood is searched in a domain of vectors (``domain.points == "vectors"``: a Box).

        Parameters
        ----------
        domain : Domain
            The domain to search.

        Raises
        ------
        InvalidParameterError
            For any other domain.
        """
        if domain.points != "vectors":
            raise InvalidParameterError(f"neighbourhood {self.shorthand!r} relates vectors: the domain must be a box, "
                                        f"got {domain}")

    @abc.abstractmethod
    def move_along(self, direction: Any, *, integer: bool = False) -> np.ndarray | None:
        """The largest single-step move v (a neighbour of 0) pointing along ``direction``; None if there is none.

        Parameters
        ----------
        direction : array-like
            A non-zero direction (its scale is irrelevant).
        integer : bool
            The move must be an integer vector (an integer domain).

        Returns
        -------
        numpy.ndarray or None
            The flat move v, with ``are_neighbours(0, v)``; None for a zero direction or when no move fits.
        """

    def _box(self, domain: Domain | None) -> Box | None:
        if domain is not None and not isinstance(domain, Box):
            raise ParameterTypeError(f"{type(self).__name__} proposes vectors: the domain must be a Box, "
                                     f"got {domain!r}")
        return domain

    def reference_direction(self, dim: int) -> np.ndarray:
        """Direction of :meth:`reference_pair`'s step: every coordinate (the neighbourhood's extreme move along it).

        Parameters
        ----------
        dim : int
            Input dimension.

        Returns
        -------
        ndarray of shape (dim,)
        """
        return np.ones(dim)

    def reference_pair(self, dim: int = 1, domain: Domain | None = None) -> CandidatePair | None:
        """x = 0 (the point of a Box ``domain`` nearest 0) and x + one full step along :meth:`reference_direction`.

        The step is :meth:`move_along` the direction, clamped into the domain as in :meth:`propose`.

        Parameters
        ----------
        dim : int
            Input dimension when there is no ``domain`` (a Box fixes its own).
        domain : Box, optional
            Where the pair must lie.

        Returns
        -------
        CandidatePair or None
            None when no step fits (e.g. a box of one point).
        """
        box = self._box(domain)
        x = np.zeros(check_int("dim", dim)) if box is None else box.clip(np.zeros(box.dim))
        u = self.reference_direction(x.size)
        where = "e1" if np.count_nonzero(u) == 1 and u[0] else "every coordinate"
        found = self.propose(x, [(f"a full step along {where}", u)], box)
        return found[0] if found else None

    def _start(self, x: Any, domain: Domain | None) -> tuple[np.ndarray, Box | None]:
        self._box(domain)
        a = as_float_array("x", x)
        if not np.all(np.isfinite(a)):
            raise InvalidInputError(f"x must be finite, got x={short_repr(a)}")
        if domain is not None:
            domain.check("x", a)
        if (self.integer_moves or (domain is not None and domain.integer)):
            _integer_valued("x", a, self)
        return a, domain

    def propose(self, x: Any, moves: list[tuple[str, np.ndarray]], domain: Box | None) -> list[CandidatePair]:
        """x + v for each labelled direction, scaled by :meth:`move_along` and clamped into ``domain``.

        Clamping a coordinate only shrinks it towards x, so a move stays within
        every coordinate-monotone constraint (norm balls, lattices, key limits);
        every result is nevertheless checked before it is returned. Duplicates are
        merged, their origins joined with " / ".

        Parameters
        ----------
        x : array-like
            The base point, inside ``domain``.
        moves : list of (str, array-like)
            Labelled directions, each of x's size.
        domain : Box or None
            Where x′ must lie (None: unbounded reals).

        Returns
        -------
        list of CandidatePair
            The proposals that are neighbours of x inside the domain and differ from x.
        """
        a, box = self._start(x, domain)
        for origin, u in moves:
            if np.size(u) != a.size:
                raise InvalidInputError(f"direction {origin!r} has {np.size(u)} coordinates, x has {a.size}")
        integer = self.integer_moves or (box is not None and box.integer)
        flat = a.ravel()
        out: dict[bytes, CandidatePair] = {}
        for origin, u in moves:
            v = self.move_along(u, integer=integer)
            if v is None:
                continue
            xp = flat + v
            if box is not None:
                xp = np.clip(xp, np.asarray(box.low), np.asarray(box.high))
            xp = xp.reshape(a.shape)
            self._keep(out, a, xp, origin, box)
        return list(out.values())

    def _keep(self, out: dict, a: np.ndarray, xp: np.ndarray, origin: str, box: Domain | None) -> None:
        if np.array_equal(xp, a) or not self.are_neighbours(a, xp) or (box is not None and not box.contains(xp)):
            return
        key = xp.tobytes()
        if key in out:
            out[key] = CandidatePair(a, out[key].x_prime, f"{out[key].origin} / {origin}")
        else:
            out[key] = CandidatePair(a, xp, origin)

    def neighbours(self, x: Any, domain: Domain | None = None, rng: Any = None, *,
                   n_random: int = 8) -> list[CandidatePair]:
        """Axis moves ±eᵢ, the diagonals ±(1, …, 1) and ``n_random`` random directions (see :meth:`propose`)."""
        a = as_float_array("x", x)
        d = a.size
        n_random = check_int("n_random", n_random, minimum=0)
        eye = np.eye(d)
        moves = [(f"+e{i}", eye[i]) for i in range(d)] + [(f"-e{i}", -eye[i]) for i in range(d)]
        moves += [("all up", np.ones(d)), ("all down", -np.ones(d))]
        gen = np.random.default_rng(rng)
        moves += [(f"random direction {i}", gen.standard_normal(d)) for i in range(n_random)]
        return self.propose(x, moves, domain)


def _integer_move(u: np.ndarray, norm: str, radius: float) -> np.ndarray | None:
    """The integer move along u: u scaled to the radius and truncated towards 0, else unit steps on its largest axes.

    Truncation towards 0 never increases |vᵢ|, so ‖v‖ ≤ radius in every norm.
    """
    s = radius / norm_of(u, norm)
    v = np.trunc(u * s * (1 + 1e-12))  # 2.9999999 → 3 where the scaling is exact in real arithmetic
    if norm_of(v, norm) > radius * (1 + TOL):
        v = np.trunc(u * s)
    if np.any(v):
        return v
    v = np.zeros_like(u)
    for i in np.argsort(-np.abs(u), kind="stable"):
        if u[i] == 0:
            break
        v[i] = np.sign(u[i])
        if norm_of(v, norm) > radius * (1 + TOL):
            v[i] = 0
            break
    return v if np.any(v) else None


def _direction(direction: Any) -> np.ndarray | None:
    u = as_float_array("direction", direction).ravel()
    if not np.all(np.isfinite(u)):
        raise InvalidInputError(f"direction must be finite, got direction={short_repr(u)}")
    return u if np.any(u) else None


def _check_norm(norm: Any) -> str:
    if norm not in NORMS:
        raise InvalidParameterError(f"norm must be one of {NORMS}, got norm={norm!r}")
    return norm


@dataclass(frozen=True)
class NormBall(_VectorNeighbourhood):
    """x ~ x′ iff ‖x − x′‖ ≤ r in ℓ1, ℓ2 or ℓ∞: a query of that sensitivity (local DP within r).

    Group distance: ⌈‖x − x′‖/r⌉ — the straight segment cut into pieces of length r
    is a chain (inside any convex domain), and by the triangle inequality no shorter
    chain exists. With the tolerance: pairs within r(1 + 10⁻⁹) are adjacent and
    k = ⌈(d/r)(1 − 10⁻⁹)⌉ otherwise.

    Parameters
    ----------
    norm : {"l1", "l2", "linf"}
    radius : float
        r, a finite normal float > 0.
    """

    norm: str
    radius: float

    kind: ClassVar[str] = "norm-ball"

    def __post_init__(self) -> None:
        _check_norm(self.norm)
        object.__setattr__(self, "radius", check_radius(self.radius))

    @property
    def shorthand(self) -> str:
        return f"{self.norm}<={_text(self.radius)}"

    @property
    def group_step(self) -> float:
        """The radius r."""
        return self.radius

    def reference_direction(self, dim: int) -> np.ndarray:
        """e₁ under ℓ1 and ℓ2 (r·e₁ is an extreme point of the ball), every coordinate under ℓ∞ (its corner).

        Parameters
        ----------
        dim : int
            Input dimension.

        Returns
        -------
        ndarray of shape (dim,)
        """
        return np.ones(dim) if self.norm == "linf" else np.eye(dim)[0]

    def distance(self, x: Any, x_prime: Any) -> float:
        """‖x − x′‖ in the ball's norm (inputs of one shape, finite).

        Parameters
        ----------
        x : array-like
            One input of the pair.
        x_prime : array-like
            The other input.

        Returns
        -------
        float
        """
        a, b = self._vectors(x, x_prime)
        return norm_of(a - b, self.norm)

    def group_distance(self, x: Any, x_prime: Any) -> float:
        """⌈‖x − x′‖/radius⌉ (0 for equal inputs), with a relative tolerance at the boundary.

        Parameters
        ----------
        x : array-like
            One input of the pair.
        x_prime : array-like
            The other input.

        Returns
        -------
        int or float
            k, or ``math.inf`` when no chain of neighbours connects the pair.
        """
        return steps_of(self.distance(x, x_prime), self.radius)

    def move_along(self, direction: Any, *, integer: bool = False) -> np.ndarray | None:
        """The direction scaled to the ball's radius in its norm (the largest integer move inside the ball with ``integer``).

        Parameters
        ----------
        direction : array-like
            A non-zero direction (its scale is irrelevant).
        integer : bool
            The move must be an integer vector.

        Returns
        -------
        ndarray or None
            The flat move v, or None for a zero direction (or when no move fits).
        """
        u = _direction(direction)
        if u is None:
            return None
        if integer:
            return _integer_move(u, self.norm, self.radius)
        return u * (self.radius / norm_of(u, self.norm))


def steps_of(distance: float, radius: float) -> float:
    """Group distance of a metric neighbourhood: 0, 1 within r(1 + TOL), else ⌈(d/r)(1 − TOL)⌉ (inf on overflow).

    Parameters
    ----------
    distance : float
        d ≥ 0, the distance of the pair.
    radius : float
        r > 0, the neighbourhood's radius.

    Returns
    -------
    int or float
        k, or ``math.inf`` when d/r overflows.
    """
    if distance == 0:
        return 0
    if distance <= radius * (1 + TOL):
        return 1
    ratio = distance / radius * (1 - TOL)
    return math.ceil(ratio) if math.isfinite(ratio) else math.inf


@dataclass(frozen=True)
class IntegerLattice(_VectorNeighbourhood):
    """Integer-valued inputs; x ~ x′ iff x − x′ is an integer vector with ‖x − x′‖ ≤ r.

    Group distance of v = x′ − x (integer): the fewest integer steps of norm ≤ r
    summing to v. With m = ⌊r⌋:

    * ℓ1: ⌈‖v‖₁/m⌉ (integer steps of ℓ1 norm ≤ r have ℓ1 norm ≤ m; split v into
      unit moves, m per step);
    * ℓ∞: ⌈‖v‖∞/m⌉ (each coordinate needs that many steps of size ≤ m, and they can run in parallel);
    * ℓ2: no closed form ((1, 1, 1, 1) needs 4 unit steps although its ℓ2 norm is 2).
      Steps can be taken with the signs of v and below |v| coordinate-wise (two steps of
      opposite signs on a coordinate can both move towards 0 without lengthening), so a
      breadth-first search over the box [0, |v|] is exact; it is used up to 200,000
      states (and 5·10⁶ state-step pairs). Beyond, a greedy chain gives k, an upper bound on the smallest (a chain of
      that length exists, so the group claim at k is still implied by the claim).

    Parameters
    ----------
    norm : {"l1", "l2", "linf"}
    radius : float
        r ≥ 1 (no non-zero integer move fits in a smaller ball).
    """

    norm: str
    radius: float

    kind: ClassVar[str] = "integer-lattice"
    integer_moves: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _check_norm(self.norm)
        r = check_radius(self.radius)
        if r < 1:
            raise InvalidParameterError(f"an integer lattice needs radius >= 1 (no integer move fits), "
                                        f"got radius={r!r}")
        object.__setattr__(self, "radius", r)

    @property
    def shorthand(self) -> str:
        return f"int-{self.norm}<={_text(self.radius)}"

    @property
    def group_step(self) -> float:
        """⌊r⌋, the largest integer move of one coordinate."""
        return float(math.floor(self.radius))

    def reference_direction(self, dim: int) -> np.ndarray:
        """e₁ under ℓ1 and ℓ2 (r·e₁ is an extreme point of the ball), every coordinate under ℓ∞ (its corner).

        Parameters
        ----------
        dim : int
            Input dimension.

        Returns
        -------
        ndarray of shape (dim,)
        """
        return np.ones(dim) if self.norm == "linf" else np.eye(dim)[0]

    def group_distance(self, x: Any, x_prime: Any) -> float:
        """Fewest integer steps of norm ≤ radius from x to x′: ⌈‖v‖₁/m⌉, ⌈‖v‖∞/m⌉ (m = ⌊radius⌋), or the exact ℓ₂ lattice count.

        Parameters
        ----------
        x : array-like
            One input of the pair.
        x_prime : array-like
            The other input.

        Returns
        -------
        int or float
            k, or ``math.inf`` when no chain of neighbours connects the pair.
        """
        a, b = self._vectors(x, x_prime)
        _integer_valued("x", a, self)
        _integer_valued("x_prime", b, self)
        v = np.abs(b - a)
        if not np.any(v):
            return 0
        m = math.floor(self.radius * (1 + TOL))
        if self.norm == "l1":
            return math.ceil(float(v.sum()) / m)
        if self.norm == "linf":
            return math.ceil(float(v.max()) / m)
        return _l2_lattice_steps(v, self.radius)

    def move_along(self, direction: Any, *, integer: bool = True) -> np.ndarray | None:
        """The largest integer move inside the ball along the direction.

        Parameters
        ----------
        direction : array-like
            A non-zero direction (its scale is irrelevant).
        integer : bool
            The move must be an integer vector.

        Returns
        -------
        ndarray or None
            The flat move v, or None for a zero direction (or when no move fits).
        """
        u = _direction(direction)
        return None if u is None else _integer_move(u, self.norm, self.radius)


def _l2_lattice_steps(v: np.ndarray, radius: float) -> float:
    """Fewest integer steps of ℓ2 norm ≤ radius summing to v ≥ 0 (exact up to the state limit, else greedy)."""
    v = np.sort(v[v > 0].astype(np.int64))[::-1]
    r2 = radius * radius * (1 + 2 * TOL)
    lower = math.ceil(float(np.sqrt((v.astype(float) ** 2).sum())) / radius * (1 - TOL))
    greedy = _greedy_l2_steps(v.astype(float), radius)
    states = math.prod(int(t) + 1 for t in v) if v.size <= 64 else math.inf
    if greedy == lower or states > _LATTICE_DP_STATES:
        return greedy
    shape = tuple(int(t) + 1 for t in v)
    # Steps: non-negative integer vectors within the ball, at most v coordinate-wise.
    grids = np.meshgrid(*[np.arange(min(s, math.isqrt(int(r2)) + 1)) for s in shape], indexing="ij")
    cand = np.stack([g.ravel() for g in grids], axis=1)
    steps = cand[((cand.astype(float) ** 2).sum(axis=1) <= r2) & cand.any(axis=1)]
    if states * len(steps) > _LATTICE_DP_WORK:
        return greedy
    reach = np.zeros(shape, dtype=bool)
    reach[(0,) * len(shape)] = True
    for k in range(1, greedy + 1):
        new = reach.copy()
        for s in steps:
            src = tuple(slice(0, n - int(t)) for n, t in zip(shape, s))
            dst = tuple(slice(int(t), n) for n, t in zip(shape, s))
            new[dst] |= reach[src]
        reach = new
        if reach[tuple(n - 1 for n in shape)]:
            return k
    return greedy


def _greedy_l2_steps(v: np.ndarray, radius: float) -> int:
    """Length of a greedy chain to v ≥ 0 (integer): each step the largest truncated move towards the rest, topped up.

    Each step is an integer vector within the ball and at most the rest, so the chain is real: its length bounds the
    group distance from above. A step is repeated as long as it fits in the rest, so that far pairs (|v| ≫ r) take
    a few rounds, not one per step.
    """
    rest = v.copy()
    k = 0
    r2 = radius * radius * (1 + 2 * TOL)
    while np.any(rest):
        s = np.trunc(rest * min(1.0, radius / float(np.linalg.norm(rest))))
        s = np.minimum(s, rest)
        while True:  # top up the coordinates with the largest remainder while the step stays in the ball
            gap = rest - s
            i = int(np.argmax(gap))
            if gap[i] <= 0:
                break
            s[i] += 1
            if float((s**2).sum()) > r2:
                s[i] -= 1
                break
        used = s > 0
        q = int(np.min(np.floor(rest[used] / s[used])))  # ≥ 1, as s ≤ rest
        rest = rest - q * s
        k += q
    return k


@dataclass(frozen=True)
class Histogram(_VectorNeighbourhood):
    """Histograms of counts: one count ±1 (add/remove a record), or one +1 and another −1 (``replace=True``).

    Group distance: ‖x − x′‖₁ for add/remove; ‖x − x′‖₁/2 for replace when the
    totals agree (each step moves one unit of count from one bin to another), and
    ``math.inf`` when they differ (replace keeps the total).
    """

    replace: bool = False

    kind: ClassVar[str] = "histogram"
    integer_moves: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if not isinstance(self.replace, bool | np.bool_):
            raise ParameterTypeError(f"replace must be a bool, got replace={self.replace!r}")
        object.__setattr__(self, "replace", bool(self.replace))

    @property
    def relation(self) -> NeighboringRelation:  # type: ignore[override]
        return NeighboringRelation.REPLACE_ONE if self.replace else NeighboringRelation.ADD_OR_REMOVE_ONE

    @property
    def shorthand(self) -> str:
        return "histogram-replace" if self.replace else "histogram"

    def reference_pair(self, dim: int = 1, domain: Domain | None = None) -> CandidatePair | None:
        """The empty histogram and one count in bin 0; with ``replace``, one count moved from bin 1 to bin 0.

        Inside a Box ``domain`` the base is its point nearest the empty histogram (nearest e₁ with ``replace``).

        Parameters
        ----------
        dim : int
            Number of bins when there is no ``domain``.
        domain : Box, optional
            Where the pair must lie.

        Returns
        -------
        CandidatePair or None
            None when the move leaves the domain (or ``replace`` with one bin).
        """
        box = self._box(domain)
        d = check_int("dim", dim) if box is None else box.dim
        if self.replace and d < 2:
            return None
        x = np.zeros(d)
        if self.replace:
            x[1] = 1.0
        x = x if box is None else box.clip(x)
        u = np.eye(d)[0] - (np.eye(d)[1] if self.replace else 0.0)
        found = self.propose(x, [("one count moved from bin 1 to bin 0" if self.replace
                                  else "one count added to bin 0", u)], box)
        return found[0] if found else None

    def group_distance(self, x: Any, x_prime: Any) -> float:
        """Σ|x′ − x| count changes (add/remove), or half of it with ``replace`` (∞ when the totals differ).

        Parameters
        ----------
        x : array-like
            One input of the pair.
        x_prime : array-like
            The other input.

        Returns
        -------
        int or float
            k, or ``math.inf`` when no chain of neighbours connects the pair.
        """
        a, b = self._vectors(x, x_prime)
        _integer_valued("x", a, self)
        _integer_valued("x_prime", b, self)
        moved = float(np.abs(b - a).sum())
        if not self.replace:
            return int(moved)
        if a.sum() != b.sum():
            return math.inf
        return int(moved) // 2

    def move_along(self, direction: Any, *, integer: bool = True) -> np.ndarray | None:
        """One count ±1 on the direction's largest coordinate; ``replace``: +1 on its largest, −1 on its smallest.

        Parameters
        ----------
        direction : array-like
            A non-zero direction (its scale is irrelevant).
        integer : bool
            The move must be an integer vector.

        Returns
        -------
        ndarray or None
            The flat move v, or None for a zero direction (or when no move fits).
        """
        u = _direction(direction)
        if u is None:
            return None
        v = np.zeros_like(u)
        if not self.replace:
            i = int(np.argmax(np.abs(u)))
            v[i] = np.sign(u[i])
            return v
        if u.size < 2:
            return None
        up = int(np.argmax(u))
        down = int(np.argmin(u))
        if down == up:  # a constant direction: the next bin gives the unit
            down = (up + 1) % u.size
        v[up], v[down] = 1.0, -1.0
        return v

    def propose(self, x: Any, moves: list[tuple[str, np.ndarray]], domain: Box | None) -> list[CandidatePair]:
        """x + v for each labelled direction; moves that leave the box are dropped, not clamped.

        Parameters
        ----------
        x : array-like
            The base point, inside ``domain``.
        moves : list of (str, array-like)
            Labelled directions, each of x's size.
        domain : Box or None
            Where x′ must lie (None: unbounded).

        Returns
        -------
        list of CandidatePair
            Neighbours x′ ≠ x inside the domain, labelled by origin.
        """
        # Replace moves are not coordinate-monotone (clamping one end would change the total): drop those
        # that leave the box instead of clamping them.
        a, box = self._start(x, domain)
        out: dict[bytes, CandidatePair] = {}
        for origin, u in moves:
            v = self.move_along(u)
            if v is not None:
                self._keep(out, a, (a.ravel() + v).reshape(a.shape), origin, box)
        return list(out.values())


@dataclass(frozen=True)
class KeyContributions(_VectorNeighbourhood):
    """One user's contribution to several keys (partition selection): ≤ k keys change, each by ≤ c.

    x ~ x′ iff x′ − x has at most ``max_keys`` non-zero coordinates, each of absolute
    value at most ``max_per_key`` (the ℓ0/ℓ∞ sensitivity pair of Google's DP library);
    with ``integer=True`` inputs and changes are integers.

    Group distance of v = x′ − x: key i needs mᵢ = ⌈|vᵢ|/c⌉ steps (c = ⌊max_per_key⌋
    when integer) and a step touches at most k keys, so
    K = max(maxᵢ mᵢ, ⌈Σᵢ mᵢ / k⌉). This is attained: lay the Σ mᵢ unit tasks key by
    key down the K rows of a K × k grid, column after column (McNaughton's
    wrap-around); a key with mᵢ ≤ K units lands in distinct rows, so every row (a
    step) touches ≤ k keys once each, and vᵢ split into mᵢ equal pieces has pieces ≤ c.
    """

    max_keys: int
    max_per_key: float
    integer: bool = False

    kind: ClassVar[str] = "key-contributions"

    def __post_init__(self) -> None:
        object.__setattr__(self, "max_keys", check_int("max_keys", self.max_keys))
        c = check_radius(self.max_per_key, "max_per_key")
        if not isinstance(self.integer, bool | np.bool_):
            raise ParameterTypeError(f"integer must be a bool, got integer={self.integer!r}")
        if self.integer and c < 1:
            raise InvalidParameterError(f"integer contributions need max_per_key >= 1, got max_per_key={c!r}")
        object.__setattr__(self, "max_per_key", c)
        object.__setattr__(self, "integer", bool(self.integer))

    @property
    def integer_moves(self) -> bool:  # type: ignore[override]
        return self.integer

    @property
    def shorthand(self) -> str:
        return f"{'int-' if self.integer else ''}keys(k={self.max_keys},c={_text(self.max_per_key)})"

    def _cap(self) -> float:
        return float(math.floor(self.max_per_key * (1 + TOL))) if self.integer else self.max_per_key

    def group_distance(self, x: Any, x_prime: Any) -> float:
        """K = max(maxᵢ mᵢ, ⌈Σᵢ mᵢ/k⌉) with mᵢ = ⌈|vᵢ|/c⌉ (see the class docstring).

        Parameters
        ----------
        x : array-like
            One input of the pair.
        x_prime : array-like
            The other input.

        Returns
        -------
        int or float
            k, or ``math.inf`` when no chain of neighbours connects the pair.
        """
        a, b = self._vectors(x, x_prime)
        if self.integer:
            _integer_valued("x", a, self)
            _integer_valued("x_prime", b, self)
        v = np.abs(b - a)
        v = v[v > 0]
        if v.size == 0:
            return 0
        c = self._cap()
        # mᵢ as in steps_of, vectorised: 1 within c(1 + TOL), else ⌈(|vᵢ|/c)(1 − TOL)⌉.
        with np.errstate(over="ignore"):
            m = np.where(v <= c * (1 + TOL), 1.0, np.ceil(v / c * (1 - TOL)))
        if not np.all(np.isfinite(m)):
            return math.inf
        return int(max(m.max(), math.ceil(m.sum() / self.max_keys)))

    def move_along(self, direction: Any, *, integer: bool = False) -> np.ndarray | None:
        """±c on the ``max_keys`` largest coordinates of the direction (ties: the first), scaled by their size.

        Parameters
        ----------
        direction : array-like
            A non-zero direction (its scale is irrelevant).
        integer : bool
            The move must be an integer vector.

        Returns
        -------
        ndarray or None
            The flat move v, or None for a zero direction (or when no move fits).
        """
        u = _direction(direction)
        if u is None:
            return None
        keep = np.argsort(-np.abs(u), kind="stable")[: self.max_keys]
        v = np.zeros_like(u)
        v[keep] = u[keep] / np.max(np.abs(u[keep])) * self._cap()
        if integer or self.integer:
            v = np.trunc(v * (1 + 1e-12))
            v = np.clip(v, -self._cap(), self._cap())
        return v if np.any(v) else None


@dataclass(frozen=True)
class AnyPair(Neighbourhood):
    """Every two points of the domain are neighbours (local DP over the whole domain).

    Group distance: 0 for equal points, 1 otherwise.
    """

    kind: ClassVar[str] = "any"

    @property
    def shorthand(self) -> str:
        return "any"

    def check_search_domain(self, domain: Domain) -> None:
        """Local DP is searched in a domain of vectors (a Box) or of categories (a Categorical).

        Parameters
        ----------
        domain : Domain
            The domain to search.

        Raises
        ------
        InvalidParameterError
            For any other domain.
        """
        if domain.points not in ("vectors", "categories"):
            super().check_search_domain(domain)

    def group_distance(self, x: Any, x_prime: Any) -> float:
        """0 for equal points (or equal category strings), 1 otherwise.

        Parameters
        ----------
        x : array-like
            One input of the pair.
        x_prime : array-like
            The other input.

        Returns
        -------
        int or float
            k, or ``math.inf`` when no chain of neighbours connects the pair.
        """
        if isinstance(x, str) or isinstance(x_prime, str):
            return 0 if x == x_prime else 1
        a, b = as_float_array("x", x), as_float_array("x_prime", x_prime)
        if np.any(np.isnan(a)) or np.any(np.isnan(b)):
            raise InvalidInputError(f"x and x_prime must not be NaN, got x={short_repr(a)}, x_prime={short_repr(b)}")
        return 0 if a.shape == b.shape and np.array_equal(a, b) else 1

    def neighbours(self, x: Any, domain: Domain | None = None, rng: Any = None, *,
                   n_random: int = 8) -> list[CandidatePair]:
        """Every boundary point of the domain (corners, categories) and ``n_random`` random points, except x.

        Parameters
        ----------
        x : array-like
            The base point, inside ``domain``.
        domain : Domain or None
            Where x′ must lie.
        rng : int, Generator or None
            Randomness of the random proposals.
        n_random : int
            Number of random proposals.

        Returns
        -------
        list of CandidatePair
            Neighbours x′ ≠ x inside the domain, labelled by origin.

        Raises
        ------
        InvalidParameterError
            When ``domain`` is None.
        """
        if domain is None:
            raise InvalidParameterError("the 'any' neighbourhood proposes points of a domain; pass domain=")
        domain.check("x", x)
        pts = [(f"boundary point {i}", p) for i, p in enumerate(domain.boundary_points())]
        if check_int("n_random", n_random, minimum=0):
            pts += [(f"random point {i}", p) for i, p in enumerate(domain.sample(n_random, rng))]

        def key(p: Any) -> str:  # NaN (absent rows) compare equal; categories by position (1 == 1.0)
            return str(domain.index(p)) if isinstance(domain, Categorical) else repr(np.asarray(p, float).tolist())

        out, seen = [], {key(x)}  # x itself is not proposed
        for origin, p in pts:
            k = key(p)
            if k not in seen:
                seen.add(k)
                out.append(CandidatePair(x, p, origin))
        return out


# ---------------------------------------------------------------------------- dataset neighbourhoods
def _row_ids(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Integer ids of the rows of a and b (equal rows, equal ids)."""
    both = np.vstack([a, b]) if a.size or b.size else np.zeros((0, max(a.shape[1], b.shape[1])))
    if both.shape[0] == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    _, inv = np.unique(both, axis=0, return_inverse=True)
    inv = inv.ravel()
    return inv[: a.shape[0]], inv[a.shape[0]:]


def _lcs(a: np.ndarray, b: np.ndarray) -> int:
    """Length of the longest common subsequence of two integer sequences (common prefix/suffix stripped first).

    Row i of the LCS table from row i − 1: L[i, j] = max(L[i−1, j], L[i−1, j−1] + [aᵢ = bⱼ])
    followed by a running maximum along j, which supplies the L[i, j−1] term
    (the table is non-decreasing along j).
    """
    m = min(a.size, b.size)
    neq = a[:m] != b[:m]
    p = int(np.argmax(neq)) if neq.any() else m
    neq = a[::-1][: m - p] != b[::-1][: m - p]
    s = int(np.argmax(neq)) if neq.any() else m - p
    a, b = a[p: a.size - s], b[p: b.size - s]
    if a.size * b.size > _LCS_PAIRS:
        raise InvalidInputError(f"the datasets differ in {a.size} and {b.size} records between their common prefix and "
                                f"suffix; their add/remove group distance (an edit distance, O(n·m)) is computed up to "
                                f"{_LCS_PAIRS:.0e} record pairs")
    row = np.zeros(b.size + 1, dtype=np.int64)
    for t in a:
        cand = np.maximum(row[1:], row[:-1] + (b == t))
        row = np.concatenate([[0], np.maximum.accumulate(cand)])
    return p + s + int(row[-1])


class _DatasetNeighbourhood(Neighbourhood):
    """Neighbourhoods of datasets (arrays whose axis 0 indexes records; NaN rows are absent)."""

    def check_search_domain(self, domain: Domain) -> None:
        """A dataset neighbourhood is searched in a domain of datasets (a DatasetDomain).

        Parameters
        ----------
        domain : Domain
            The domain to search.

        Raises
        ------
        InvalidParameterError
            For any other domain.
        """
        if domain.points != "datasets":
            raise InvalidParameterError(f"neighbourhood {self.shorthand!r} relates datasets: the domain must be a "
                                        f"DatasetDomain, got {domain}")

    def search_proposals(self, x: Any, domain: Domain, rng: Any, *, n_random: int, explore: bool,
                         patterns: Callable[[Neighbourhood, Domain, Any], list[CandidatePair]]) -> list[CandidatePair]:
        """:meth:`neighbours` of ``x`` when exploring (they hold the datasets' analogues of the patterns), else those.

        Parameters
        ----------
        x : object
            The base dataset, a point of ``domain``.
        domain : Domain
            The searched :class:`~privaudit.mechanisms.domains.DatasetDomain`.
        rng : Generator
            Randomness of the random records.
        n_random : int
            Random records of :meth:`neighbours`.
        explore : bool
            Propose :meth:`neighbours` (with random records) rather than the patterns only.
        patterns : callable
            ``patterns(neighbourhood, domain, x)``, the input patterns.

        Returns
        -------
        list of CandidatePair
        """
        return self.neighbours(x, domain, rng, n_random=n_random) if explore else patterns(self, domain, x)

    def _datasets(self, x: Any, x_prime: Any) -> tuple[np.ndarray, np.ndarray]:
        a, b = dataset_rows("x", x), dataset_rows("x_prime", x_prime)
        if a.shape[1] != b.shape[1]:
            raise InvalidInputError(f"x and x_prime must hold records of one size, got records of {a.shape[1]} and "
                                    f"{b.shape[1]} values")
        return a[~np.isnan(a).any(axis=1)], b[~np.isnan(b).any(axis=1)]

    def _start(self, x: Any, domain: Domain | None, n_random: int) -> tuple[np.ndarray, np.ndarray, DatasetDomain]:
        check_int("n_random", n_random, minimum=0)
        if not isinstance(domain, DatasetDomain):
            raise ParameterTypeError(f"{type(self).__name__} proposes datasets: the domain must be a DatasetDomain, "
                                     f"got {domain!r}")
        domain.check("x", x)
        rows = dataset_rows("x", x, record_size=domain.records.dim)
        return as_float_array("x", x), rows, domain

    def _emit(self, out: dict, x: np.ndarray, rows: np.ndarray, domain: DatasetDomain, origin: str) -> None:
        """Keep the dataset of ``rows`` (padded rows kept in place) if it is a new neighbour inside the domain."""
        if domain.padded:
            xp = rows.reshape(x.shape)
        else:
            xp = domain.pack(rows[~np.isnan(rows).any(axis=1)])
        if not domain.contains(xp) or self.group_distance(x, xp) != 1:
            return
        key = (xp.shape, np.nan_to_num(xp, nan=np.inf).tobytes())
        if key in out:
            out[key] = CandidatePair(x, out[key].x_prime, f"{out[key].origin} / {origin}")
        else:
            out[key] = CandidatePair(x, xp, origin)

    @staticmethod
    def _records_to_try(domain: DatasetDomain, present: np.ndarray, gen: np.random.Generator,
                        n_random: int) -> list[tuple[str, np.ndarray]]:
        """Records at each bound (record corners), at the centre and the mean of x, and random ones."""
        box = domain.records
        corners = box.corners(max_count=8)
        names = (["the low bound", "the high bound"] if len(corners) == 2
                 else [f"corner {c.ravel().tolist()}" for c in corners])
        recs = [(f"a record at {n}", c.ravel()) for n, c in zip(names, corners)]
        recs.append(("a record at the centre", box.centre.ravel()))
        if present.shape[0]:
            recs.append(("a record at the mean", box.clip(present.mean(axis=0)).ravel()))
            recs.append(("an outlier", _outlier(box, present)))
        if n_random:
            recs += [(f"a random record {i}", r.ravel()) for i, r in enumerate(box.sample(n_random, gen))]
        return recs


def _outlier(box: Box, present: np.ndarray) -> np.ndarray:
    """The record corner farthest (ℓ2) from the mean of the present records."""
    mean = present.mean(axis=0)
    corners = [c.ravel() for c in box.corners()]
    return corners[int(np.argmax([np.linalg.norm(c - mean) for c in corners]))]


def _extreme_rows(present: np.ndarray) -> list[tuple[str, int]]:
    """Indices (among present records) of the lowest, the highest, the one nearest the mean and the outlier.

    "Lowest"/"highest" order records by the sum of their values; a record picked twice keeps its first name.
    """
    if present.shape[0] == 0:
        return []
    mean = present.mean(axis=0)
    dist = np.linalg.norm(present - mean, axis=1)
    total = present.sum(axis=1)
    picks = [("the lowest record", int(np.argmin(total))), ("the highest record", int(np.argmax(total))),
             ("the record nearest the mean", int(np.argmin(dist))), ("the outlying record", int(np.argmax(dist)))]
    seen: set[int] = set()
    return [(name, j) for name, j in picks if not (j in seen or seen.add(j))]  # one name per record: the first


@dataclass(frozen=True)
class AddRemove(_DatasetNeighbourhood):
    """Datasets one record apart by adding or removing it (unbounded DP).

    Group distance: the insertion/deletion edit distance |x| + |x′| − 2·LCS(x, x′)
    between the sequences of present records (each step inserts or deletes one record).
    """

    kind: ClassVar[str] = "add-remove"
    relation: ClassVar[NeighboringRelation] = NeighboringRelation.ADD_OR_REMOVE_ONE

    @property
    def shorthand(self) -> str:
        return "add-remove"

    def group_distance(self, x: Any, x_prime: Any) -> float:
        """The insertion/deletion edit distance |x| + |x′| − 2·LCS(x, x′) of the present records.

        Parameters
        ----------
        x : array-like
            One input of the pair.
        x_prime : array-like
            The other input.

        Returns
        -------
        int or float
            k, or ``math.inf`` when no chain of neighbours connects the pair.
        """
        a, b = self._datasets(x, x_prime)
        ia, ib = _row_ids(a, b)
        return int(a.shape[0] + b.shape[0] - 2 * _lcs(ia, ib))

    def neighbours(self, x: Any, domain: Domain | None = None, rng: Any = None, *,
                   n_random: int = 8) -> list[CandidatePair]:
        """Add a record at each bound, the centre, the mean, an outlier, at random; remove an extreme or random one.

        Parameters
        ----------
        x : array-like
            The base point, inside ``domain``.
        domain : Domain or None
            Where x′ must lie.
        rng : int, Generator or None
            Randomness of the random proposals.
        n_random : int
            Number of random proposals.

        Returns
        -------
        list of CandidatePair
            Neighbours x′ ≠ x inside the domain, labelled by origin.
        """
        arr, rows, dom = self._start(x, domain, n_random)
        gen = np.random.default_rng(rng)
        present_mask = ~np.isnan(rows).any(axis=1)
        present = rows[present_mask]
        out: dict = {}
        if present.shape[0] < dom.max_size:
            free = np.flatnonzero(~present_mask)
            for name, rec in self._records_to_try(dom, present, gen, n_random):
                new = rows.copy()
                if dom.padded:
                    new[free[0]] = rec
                else:
                    new = np.vstack([rows, rec[None, :]])
                self._emit(out, arr, new, dom, f"add {name}")
        if present.shape[0] > dom.min_size:
            where = np.flatnonzero(present_mask)
            picks = _extreme_rows(present) + [(f"a random record {i}", int(j)) for i, j in
                                              enumerate(gen.integers(present.shape[0], size=n_random))]
            for name, j in picks:
                new = rows.copy()
                if dom.padded:
                    new[where[j]] = np.nan
                else:
                    new = np.delete(rows, where[j], axis=0)
                self._emit(out, arr, new, dom, f"remove {name}")
        return list(out.values())


@dataclass(frozen=True)
class ReplaceOne(_DatasetNeighbourhood):
    """Datasets of one size differing in one record (bounded DP).

    Group distance: the Hamming distance between the sequences of present records
    (``math.inf`` when the sizes differ: replacing never changes the size).
    """

    kind: ClassVar[str] = "replace-one"
    relation: ClassVar[NeighboringRelation] = NeighboringRelation.REPLACE_ONE

    @property
    def shorthand(self) -> str:
        return "replace-one"

    def _differing(self, a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
        if a.shape != b.shape:
            return None
        return np.any(a != b, axis=1)

    def group_distance(self, x: Any, x_prime: Any) -> float:
        """The Hamming distance of the present records (∞ when the sizes differ).

        Parameters
        ----------
        x : array-like
            One input of the pair.
        x_prime : array-like
            The other input.

        Returns
        -------
        int or float
            k, or ``math.inf`` when no chain of neighbours connects the pair.
        """
        a, b = self._datasets(x, x_prime)
        diff = self._differing(a, b)
        return math.inf if diff is None else int(diff.sum())

    def neighbours(self, x: Any, domain: Domain | None = None, rng: Any = None, *,
                   n_random: int = 8) -> list[CandidatePair]:
        """Replace each extreme record (lowest, highest, nearest the mean, outlying) by each record to try.

        Parameters
        ----------
        x : array-like
            The base point, inside ``domain``.
        domain : Domain or None
            Where x′ must lie.
        rng : int, Generator or None
            Randomness of the random proposals.
        n_random : int
            Number of random proposals.

        Returns
        -------
        list of CandidatePair
            Neighbours x′ ≠ x inside the domain, labelled by origin.
        """
        arr, rows, dom = self._start(x, domain, n_random)
        gen = np.random.default_rng(rng)
        where = np.flatnonzero(~np.isnan(rows).any(axis=1))
        present = rows[where]
        out: dict = {}
        for rname, j in _extreme_rows(present):
            for name, rec in self._records_to_try(dom, present, gen, n_random):
                new = rows.copy()
                new[where[j]] = rec
                self._emit(out, arr, new, dom, f"replace {rname} by {name}")
        return list(out.values())


@dataclass(frozen=True)
class Label(ReplaceOne):
    """Replace-one on the label: datasets differing in the last value (the label) of one record only.

    Group distance: the number of records whose label differs, ``math.inf`` when any
    record differs elsewhere or the sizes differ.
    """

    kind: ClassVar[str] = "label"

    @property
    def shorthand(self) -> str:
        return "label"

    def _differing(self, a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
        if a.shape != b.shape or np.any(a[:, :-1] != b[:, :-1]):
            return None
        return a[:, -1] != b[:, -1]

    def neighbours(self, x: Any, domain: Domain | None = None, rng: Any = None, *,
                   n_random: int = 8) -> list[CandidatePair]:
        """Set the label of each extreme record to the label bounds, the label centre and random labels.

        Parameters
        ----------
        x : array-like
            The base point, inside ``domain``.
        domain : Domain or None
            Where x′ must lie.
        rng : int, Generator or None
            Randomness of the random proposals.
        n_random : int
            Number of random proposals.

        Returns
        -------
        list of CandidatePair
            Neighbours x′ ≠ x inside the domain, labelled by origin.
        """
        arr, rows, dom = self._start(x, domain, n_random)
        gen = np.random.default_rng(rng)
        lo, hi = dom.records.low[-1], dom.records.high[-1]
        labels = [("the low label", lo), ("the high label", hi),
                  ("the middle label", float(np.floor((lo + hi) / 2)) if dom.records.integer else (lo + hi) / 2)]
        draws = (gen.integers(int(lo), int(hi), size=n_random, endpoint=True) if dom.records.integer
                 else gen.uniform(lo, hi, size=n_random))
        labels += [(f"a random label {i}", float(t)) for i, t in enumerate(draws)]
        where = np.flatnonzero(~np.isnan(rows).any(axis=1))
        out: dict = {}
        for rname, j in _extreme_rows(rows[where]):
            for name, t in labels:
                new = rows.copy()
                new[where[j], -1] = t
                self._emit(out, arr, new, dom, f"set the label of {rname} to {name}")
        return list(out.values())


# ------------------------------------------------------------------------------------------ parsing
_KINDS = (NormBall, IntegerLattice, Histogram, KeyContributions, AnyPair, AddRemove, ReplaceOne, Label)
_NAMED = {"any": AnyPair(), "add-remove": AddRemove(), "replace-one": ReplaceOne(), "label": Label(),
          "histogram": Histogram(), "histogram-replace": Histogram(replace=True)}
_BALL = re.compile(r"^(int-)?(l1|l2|linf)<=(.*)$")
_KEYS = re.compile(r"^(int-)?keys\(k=([^,]*),c=([^)]*)\)$")
#: The shorthand forms, for messages.
SHORTHANDS = tuple(sorted(_NAMED)) + ("l1<=r", "l2<=r", "linf<=r", "int-l1<=r", "int-l2<=r", "int-linf<=r",
                                      "keys(k=K,c=C)", "int-keys(k=K,c=C)")


def _number(adjacency: str, text: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise InvalidParameterError(f"adjacency {adjacency!r}: the {what} {text!r} is not a number") from None


@functools.lru_cache(maxsize=256)
def _parse(adjacency: str) -> Neighbourhood:
    if adjacency in _NAMED:
        return _NAMED[adjacency]
    try:
        m = _BALL.match(adjacency)
        if m:
            cls = IntegerLattice if m.group(1) else NormBall
            return cls(m.group(2), _number(adjacency, m.group(3), "radius"))
        m = _KEYS.match(adjacency)
        if m:
            k = _number(adjacency, m.group(2), "key count k")
            if k != int(k):
                raise InvalidParameterError(f"k must be an integer, got k={m.group(2)!r}")
            return KeyContributions(int(k), _number(adjacency, m.group(3), "per-key bound c"), bool(m.group(1)))
    except InvalidParameterError as exc:
        if str(exc).startswith("adjacency "):
            raise
        raise InvalidParameterError(f"adjacency {adjacency!r}: {exc}") from None
    raise InvalidParameterError(f"unknown adjacency {adjacency!r}; expected one of: {', '.join(SHORTHANDS)}")


def parse_neighbourhood(adjacency: str | Neighbourhood | Mapping[str, Any]) -> Neighbourhood:
    """The neighbourhood of a shorthand string, a mapping (``to_dict`` form) or a neighbourhood (returned as is).

    Parameters
    ----------
    adjacency : str, Neighbourhood or mapping
        E.g. ``"linf<=1"``, ``ReplaceOne()`` or ``{"kind": "norm-ball", "norm": "l2", "radius": 1.0}``.

    Returns
    -------
    Neighbourhood

    Raises
    ------
    InvalidParameterError
        Unknown names, and radii or bounds that are not finite normal floats > 0
        (the message names the adjacency and the value).
    ParameterTypeError
        Anything else (numbers, None, lists).
    """
    if isinstance(adjacency, Neighbourhood):
        return adjacency
    if isinstance(adjacency, str):
        return _parse(adjacency)
    if isinstance(adjacency, Mapping):
        return Neighbourhood.from_dict(adjacency)
    raise ParameterTypeError(f"adjacency must be a string such as 'l2<=1' or a Neighbourhood, got {adjacency!r} "
                             f"({type(adjacency).__name__})")


__all__ = ["AddRemove", "AnyPair", "CandidatePair", "Histogram", "IntegerLattice", "KeyContributions", "Label",
           "Neighbourhood", "NormBall", "NORMS", "ReplaceOne", "SHORTHANDS", "TOL", "check_radius", "norm_of",
           "parse_neighbourhood", "steps_of"]
