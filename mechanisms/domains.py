"""Input domains: the sets of inputs on which a privacy claim is made and searched.

A claim says "for every pair of neighbouring inputs *of the domain*". Three kinds
are modelled, as frozen dataclasses with plain (hashable) fields:

* :class:`Box` — a product of intervals [lowᵢ, highᵢ] of an input of fixed shape,
  with real or (``integer=True``) integer coordinates (counts, histograms, integer
  queries);
* :class:`Categorical` — a finite set of values (randomised response, categories);
* :class:`DatasetDomain` — datasets: arrays whose axis 0 indexes records, every
  record inside a record :class:`Box`, the number of records in
  [``min_size``, ``max_size``]. With ``padded=True`` a dataset is stored as
  ``max_size`` rows and absent records are rows of NaN, so that datasets of
  different sizes (add/remove neighbours) share one shape.

Every domain answers ``contains(x)``, draws random points (``sample``) and lists
its ``boundary_points`` (corners, extreme datasets), where the worst case of many
mechanisms lies; boxes and datasets also project onto themselves (``clip``). A pair
search starts from each domain's ``search_bases`` (:class:`SearchBase`).
A mechanism may declare its own domain as a ``domain`` attribute; read it with
:func:`domain_of`. :func:`domain_from_spec` builds one from plain data (a config).
"""

from __future__ import annotations

import abc
import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .validation import InvalidInputError, InvalidParameterError, ParameterTypeError, check_int

#: At most this many corners are listed by :meth:`Box.corners` (2^d grows fast).
MAX_CORNERS = 64
#: Largest dataset size a :class:`DatasetDomain` accepts (datasets of it are allocated when sampled or padded).
MAX_DATASET_SIZE = 10**7
#: Largest number of values one ``sample`` call may allocate.
MAX_SAMPLE_VALUES = 10**8


def _sample_size(n: Any, values_per_point: int) -> int:
    """``n`` checked as a count of points, refused before allocating more than :data:`MAX_SAMPLE_VALUES` values."""
    n = check_int("n", n)
    if n * values_per_point > MAX_SAMPLE_VALUES:
        raise InvalidParameterError(f"n = {n} points of {values_per_point} values exceed the {MAX_SAMPLE_VALUES} values "
                                    f"one sample may allocate; got n={n}")
    return n


def short_repr(x: Any, width: int = 80) -> str:
    """A short text of a value for error messages (its list form, cut to ``width`` characters).

    Parameters
    ----------
    x : object
    width : int

    Returns
    -------
    str
    """
    try:
        text = repr(np.asarray(x).tolist())
    except Exception:  # noqa: BLE001 - only used to describe a value that failed a check
        text = repr(x)
    return text if len(text) <= width else text[: width - 1] + "…"


def as_float_array(name: str, x: Any) -> np.ndarray:
    """``x`` as a float array, or an :class:`InvalidInputError` naming ``name`` and the value.

    Parameters
    ----------
    name : str
        Name used in error messages.
    x : object
        The value to convert.

    Returns
    -------
    ndarray of float

    Raises
    ------
    InvalidInputError
        For strings, bytes and values numpy cannot convert.
    """
    if isinstance(x, str | bytes):
        raise InvalidInputError(f"{name} must be a numeric array, got {name}={x!r}")
    try:
        return np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{name} must be a numeric array, got {name}={short_repr(x)} ({exc})") from exc


def _bound(name: str, value: Any) -> np.ndarray:
    arr = as_float_array(name, value)
    if np.any(np.isnan(arr)) or np.any(np.isinf(arr)):
        raise InvalidParameterError(f"{name} must be finite, got {name}={short_repr(value)}")
    return arr


@dataclass(frozen=True, eq=False)
class SearchBase:
    """A point a pair search proposes neighbours from, how their origins name it, and how far it explores.

    Parameters
    ----------
    point : object
        The base point, a point of the domain.
    label : str
        Appended to the origin of every pair proposed from it (e.g. ``"from the centre"``);
        empty: the origins are kept as they are.
    explore : bool
        Besides the input patterns, the neighbourhood's own proposals (axis, diagonal and
        random moves, random records) start from this point.
    """

    point: Any
    label: str
    explore: bool

    def origin(self, origin: str) -> str:
        """``origin`` with :attr:`label` appended to each of its " / "-joined parts.

        Parameters
        ----------
        origin : str
            How a pair was proposed (origins of coinciding proposals joined with " / ").

        Returns
        -------
        str
        """
        if not self.label:
            return origin
        return " / ".join(f"{o} {self.label}" for o in origin.split(" / "))


class Domain(abc.ABC):
    """A set of inputs: membership, projection where it makes sense, boundary points and sampling."""

    kind: ClassVar[str] = ""
    #: What the points are: "vectors" (of one shape, :class:`Box`), "categories" or "datasets"; a neighbourhood
    #: reads it to tell whether it can search the domain.
    points: ClassVar[str] = ""

    def search_bases(self, rng: np.random.Generator, *, n_random: int = 2,
                     max_boundary: int = 4) -> list[SearchBase]:
        """Base points of a pair search: the first ``max_boundary`` boundary points and ``n_random`` random ones.

        Every base explores (the neighbourhood's own proposals start from each).

        Parameters
        ----------
        rng : Generator
            Source of the random bases (drawn before any proposal).
        n_random : int
            Random base points.
        max_boundary : int
            Boundary points used (where the domain has a bounded number of them).

        Returns
        -------
        list of SearchBase
        """
        bases = [(f"boundary point {i}", p) for i, p in enumerate(self.boundary_points()[:max_boundary])]
        bases += [(f"random point {i}", p) for i, p in enumerate(self.sample(n_random, rng))]
        return [SearchBase(p, f"from the {name}", True) for name, p in bases]

    @abc.abstractmethod
    def contains(self, x: Any) -> bool:
        """True when ``x`` is a point of the domain (never raises on malformed input).

        Parameters
        ----------
        x : object
            The candidate point.

        Returns
        -------
        bool
        """

    @abc.abstractmethod
    def sample(self, n: int, rng: np.random.Generator | int | None = None) -> list:
        """``n`` points drawn uniformly at random (for datasets: a random size, then uniform records).

        Parameters
        ----------
        n : int
            Number of points (bounded so that the sample stays small in memory).
        rng : Generator, int or None
            Source of randomness.

        Returns
        -------
        list
            ``n`` points.
        """

    @abc.abstractmethod
    def boundary_points(self) -> list:
        """Extreme points of the domain (corners, extreme datasets), where worst cases often lie."""

    def check(self, name: str, x: Any) -> None:
        """Raise :class:`InvalidInputError` naming ``name`` and ``x`` when ``x`` is outside the domain.

        Parameters
        ----------
        name : str
            Name used in error messages.
        x : object
            The candidate point.

        Raises
        ------
        InvalidInputError
            When ``x`` is outside the domain.
        """
        if not self.contains(x):
            raise InvalidInputError(f"{name} is not in the domain {self}: {name}={short_repr(x)}")


@dataclass(frozen=True)
class Box(Domain):
    """The box {x : low ≤ x ≤ high} of inputs of a fixed shape, real or integer-valued.

    Parameters
    ----------
    low, high : float or array-like
        Finite bounds of the input's shape (scalars give a 1-coordinate input), low ≤ high.
        Stored as flat tuples; :attr:`shape` keeps the shape.
    integer : bool
        Integer coordinates only (the bounds must then be integers).
    """

    low: tuple
    high: tuple
    integer: bool = False
    shape: tuple = field(default=(), init=False, compare=False)

    kind: ClassVar[str] = "box"
    points: ClassVar[str] = "vectors"

    def __post_init__(self) -> None:
        lo, hi = _bound("low", self.low), _bound("high", self.high)
        if lo.ndim == 0:
            lo = lo.reshape(1)
        if hi.ndim == 0:
            hi = hi.reshape(1)
        if lo.shape != hi.shape:
            raise InvalidParameterError(f"low and high must have one shape, got {lo.shape} and {hi.shape}")
        if lo.size == 0:
            raise InvalidParameterError(f"a box needs at least one coordinate, got low={short_repr(self.low)}")
        if np.any(lo > hi):
            i = int(np.argmax(lo > hi))
            raise InvalidParameterError(f"low must be <= high, got low[{i}]={float(lo.flat[i])!r} > "
                                        f"high[{i}]={float(hi.flat[i])!r}")
        if not isinstance(self.integer, bool | np.bool_):
            raise ParameterTypeError(f"integer must be a bool, got integer={self.integer!r}")
        if self.integer and not (np.all(lo == np.round(lo)) and np.all(hi == np.round(hi))):
            raise InvalidParameterError(f"an integer box needs integer bounds, got low={short_repr(lo)}, "
                                        f"high={short_repr(hi)}")
        object.__setattr__(self, "low", tuple(float(v) for v in lo.ravel()))
        object.__setattr__(self, "high", tuple(float(v) for v in hi.ravel()))
        object.__setattr__(self, "integer", bool(self.integer))
        object.__setattr__(self, "shape", tuple(lo.shape))

    def __str__(self) -> str:
        kind = "integer box" if self.integer else "box"
        return f"{kind}(low={short_repr(self.lower)}, high={short_repr(self.upper)})"

    @property
    def lower(self) -> np.ndarray:
        """The lower bounds as an array of :attr:`shape`."""
        return np.asarray(self.low, dtype=float).reshape(self.shape)

    @property
    def upper(self) -> np.ndarray:
        """The upper bounds as an array of :attr:`shape`."""
        return np.asarray(self.high, dtype=float).reshape(self.shape)

    @property
    def dim(self) -> int:
        """Number of coordinates."""
        return len(self.low)

    @property
    def centre(self) -> np.ndarray:
        """(low + high)/2, rounded down to the lattice for an integer box."""
        c = (self.lower + self.upper) / 2
        return np.floor(c) if self.integer else c

    def contains(self, x: Any) -> bool:
        """True for a finite point of the box (integer-valued for an integer box), in any layout of ``dim`` coordinates.

        Parameters
        ----------
        x : object
            The candidate point.

        Returns
        -------
        bool
        """
        try:
            a = np.asarray(x, dtype=float)
        except (TypeError, ValueError):
            return False
        if a.size != self.dim:  # any layout of the right number of coordinates (a scalar for one)
            return False
        a = a.ravel()
        if not np.all(np.isfinite(a)):
            return False
        if self.integer and not np.all(a == np.round(a)):
            return False
        return bool(np.all(a >= np.asarray(self.low)) and np.all(a <= np.asarray(self.high)))

    def clip(self, x: Any) -> np.ndarray:
        """The nearest point of the box (Euclidean projection; the nearest lattice point when integer).

        Coordinate-wise clipping is the Euclidean projection on a box; for an
        integer box rounding each coordinate to the nearest integer and clipping
        is the nearest lattice point of the box (the distance is a sum over coordinates).

        Parameters
        ----------
        x : array-like
            A point with the box's number of coordinates.

        Returns
        -------
        ndarray
            Of the box's shape.

        Raises
        ------
        InvalidInputError
            For a wrong number of coordinates or NaN.
        """
        a = as_float_array("x", x)
        if a.size != self.dim:
            raise InvalidInputError(f"x must have {self.dim} coordinates (shape {self.shape}), got shape {a.shape}")
        if np.any(np.isnan(a)):
            raise InvalidInputError(f"x must not contain NaN, got x={short_repr(x)}")
        a = a.reshape(self.shape)
        if self.integer:
            a = np.round(a)
        return np.clip(a, self.lower, self.upper)

    def corners(self, max_count: int = MAX_CORNERS) -> list[np.ndarray]:
        """The 2^d corners when 2^d ≤ ``max_count``; otherwise the low and high corners and the sign-pattern corners.

        The sign-pattern corners (first coordinate high and the rest low, and the
        reverse; first half high; alternating) are the corners the input patterns
        of :mod:`privaudit.mechanisms.input_patterns` move towards.

        Parameters
        ----------
        max_count : int
            Largest number of corners enumerated in full.

        Returns
        -------
        list of ndarray
            Distinct corners, each of the box's shape.
        """
        lo, hi = np.asarray(self.low), np.asarray(self.high)
        d = self.dim
        if d <= 30 and 2**d <= max_count:
            masks = [np.array(bits, dtype=bool) for bits in itertools.product((False, True), repeat=d)]
        else:
            idx = np.arange(d)
            masks = [np.zeros(d, bool), np.ones(d, bool), idx == 0, idx != 0, idx < (d + 1) // 2, idx % 2 == 0,
                     idx % 2 == 1]
        out, seen = [], set()
        for m in masks:
            c = np.where(m, hi, lo)
            key = c.tobytes()
            if key not in seen:
                seen.add(key)
                out.append(c.reshape(self.shape))
        return out

    def boundary_points(self) -> list[np.ndarray]:
        """The corners (see :meth:`corners`) and the centre of each face."""
        lo, hi = np.asarray(self.low), np.asarray(self.high)
        centre = self.centre.ravel()
        faces = []
        for i in range(self.dim):
            for b in (lo[i], hi[i]):
                f = centre.copy()
                f[i] = b
                faces.append(f.reshape(self.shape))
        pts, seen = [], set()
        for p in self.corners() + faces:
            if p.tobytes() not in seen:
                seen.add(p.tobytes())
                pts.append(p)
        return pts

    def search_bases(self, rng: np.random.Generator, *, n_random: int = 2,
                     max_boundary: int = 4) -> list[SearchBase]:
        """The centre (which alone explores: axis, diagonal and random moves), the low and high corners and
        ``n_random`` random points, each naming its pairs ``"from the centre"``, ``"from the low corner"``, ….

        Parameters
        ----------
        rng : Generator
            Source of the random bases.
        n_random : int
            Random base points.
        max_boundary : int
            Unused (the corners are the low and high ones).

        Returns
        -------
        list of SearchBase
        """
        bases = [("centre", self.clip(self.centre)), ("low corner", self.lower.copy()),
                 ("high corner", self.upper.copy())]
        bases += [(f"random point {i}", p) for i, p in enumerate(self.sample(n_random, rng))]
        return [SearchBase(p, f"from the {name}", i == 0) for i, (name, p) in enumerate(bases)]

    def sample(self, n: int, rng: np.random.Generator | int | None = None) -> list[np.ndarray]:
        """``n`` points drawn uniformly from the box (uniform integers for an integer box).

        Parameters
        ----------
        n : int
            Number of points (bounded so that the sample stays small in memory).
        rng : Generator, int or None
            Source of randomness.

        Returns
        -------
        list of ndarray
            ``n`` points of the box's shape.
        """
        n = _sample_size(n, self.dim)
        gen = np.random.default_rng(rng)
        lo, hi = np.asarray(self.low), np.asarray(self.high)
        if self.integer:
            pts = gen.integers(lo.astype(np.int64), hi.astype(np.int64), size=(n, self.dim), endpoint=True)
            pts = pts.astype(float)
        else:
            pts = gen.uniform(lo, hi, size=(n, self.dim))
        return [p.reshape(self.shape) for p in pts]

    def to_dict(self) -> dict[str, Any]:
        """Plain data (``domain_from_spec`` reads it back)."""
        return {"kind": self.kind, "low": self.lower.tolist(), "high": self.upper.tolist(), "integer": self.integer}


@dataclass(frozen=True)
class Categorical(Domain):
    """A finite set of values (numbers or strings), e.g. the categories of randomised response.

    Parameters
    ----------
    categories : sequence
        Distinct hashable values, at least two (a claim over one value is empty).
    """

    categories: tuple

    kind: ClassVar[str] = "categorical"
    points: ClassVar[str] = "categories"

    def __post_init__(self) -> None:
        if isinstance(self.categories, str | bytes) or not hasattr(self.categories, "__iter__"):
            raise ParameterTypeError(f"categories must be a sequence of values, got categories={self.categories!r}")
        cats = tuple(c.item() if isinstance(c, np.generic) else c for c in self.categories)
        for c in cats:
            if isinstance(c, float) and not math.isfinite(c):
                raise InvalidParameterError(f"categories must be finite, got {c!r} in categories={cats!r}")
            try:
                hash(c)
            except TypeError as exc:
                raise ParameterTypeError(f"categories must be hashable, got {c!r} in categories={cats!r}") from exc
        if len(set(cats)) != len(cats):
            raise InvalidParameterError(f"categories must be distinct, got categories={cats!r}")
        if len(cats) < 2:
            raise InvalidParameterError(f"a categorical domain needs at least two values, got categories={cats!r}")
        object.__setattr__(self, "categories", cats)

    def __str__(self) -> str:
        return f"categorical({short_repr(list(self.categories))})"

    def _value(self, x: Any) -> Any:
        if isinstance(x, np.ndarray):
            if x.size != 1:
                return None
            x = x.reshape(()).item()
        return x.item() if isinstance(x, np.generic) else x

    def contains(self, x: Any) -> bool:
        """True when ``x`` (a scalar or a one-element array) is one of the categories.

        Parameters
        ----------
        x : object
            The candidate point.

        Returns
        -------
        bool
        """
        v = self._value(x)
        try:
            return v in self.categories
        except TypeError:  # unhashable
            return False

    def index(self, x: Any) -> int:
        """Position of ``x`` among :attr:`categories` (an :class:`InvalidInputError` when absent).

        Parameters
        ----------
        x : object
            The candidate point.

        Returns
        -------
        int

        Raises
        ------
        InvalidInputError
            When ``x`` is not a category.
        """
        self.check("x", x)
        return self.categories.index(self._value(x))

    def boundary_points(self) -> list:
        """Every category (a finite domain is all boundary)."""
        return list(self.categories)

    def search_bases(self, rng: np.random.Generator, *, n_random: int = 2,
                     max_boundary: int = 4) -> list[SearchBase]:
        """Every category, none exploring (its patterns already reach every other category); origins kept.

        Parameters
        ----------
        rng : Generator
            Unused.
        n_random : int
            Unused.
        max_boundary : int
            Unused.

        Returns
        -------
        list of SearchBase
        """
        return [SearchBase(c, "", False) for c in self.categories]

    def sample(self, n: int, rng: np.random.Generator | int | None = None) -> list:
        """``n`` categories drawn uniformly.

        Parameters
        ----------
        n : int
            Number of points (bounded so that the sample stays small in memory).
        rng : Generator, int or None
            Source of randomness.

        Returns
        -------
        list
            ``n`` categories.
        """
        n = _sample_size(n, 1)
        idx = np.random.default_rng(rng).integers(len(self.categories), size=n)
        return [self.categories[i] for i in idx]

    def to_dict(self) -> dict[str, Any]:
        """Plain data (``domain_from_spec`` reads it back)."""
        return {"kind": self.kind, "categories": list(self.categories)}


@dataclass(frozen=True)
class DatasetDomain(Domain):
    """Datasets of records: axis 0 indexes records, each record inside ``records``, size in [min_size, max_size].

    A dataset is an array of shape ``(n, *records.shape)`` (records of one
    coordinate: a 1-d array of n values). With ``padded=True`` every dataset has
    ``max_size`` rows and absent records are rows that are entirely NaN, so that
    neighbours under add/remove (sizes n and n+1) share one shape; this is the
    convention of the pydp adapters.

    Parameters
    ----------
    records : Box
        Bounds of one record (real or integer coordinates).
    min_size, max_size : int
        Range of the number of (present) records, 0 ≤ min_size ≤ max_size.
    padded : bool
        Datasets are ``max_size`` rows with NaN rows for absent records.
    """

    records: Box
    min_size: int = 1
    max_size: int = 100
    padded: bool = False

    kind: ClassVar[str] = "datasets"
    points: ClassVar[str] = "datasets"

    def __post_init__(self) -> None:
        if not isinstance(self.records, Box):
            raise ParameterTypeError(f"records must be a Box of record bounds, got records={self.records!r}")
        lo = check_int("min_size", self.min_size, minimum=0)
        hi = check_int("max_size", self.max_size, minimum=max(lo, 1))
        if hi > MAX_DATASET_SIZE:
            raise InvalidParameterError(f"max_size must be <= {MAX_DATASET_SIZE} (datasets of that size are allocated "
                                        f"when sampled or padded), got max_size={hi}")
        if not isinstance(self.padded, bool | np.bool_):
            raise ParameterTypeError(f"padded must be a bool, got padded={self.padded!r}")
        object.__setattr__(self, "min_size", lo)
        object.__setattr__(self, "max_size", hi)
        object.__setattr__(self, "padded", bool(self.padded))

    def __str__(self) -> str:
        pad = ", padded" if self.padded else ""
        return f"datasets(records in {self.records}, size in [{self.min_size}, {self.max_size}]{pad})"

    def present(self, x: Any, name: str = "x") -> np.ndarray:
        """The present records of the dataset ``x`` as an (n, p) array (NaN rows dropped when padded).

        Raises :class:`InvalidInputError` naming ``name`` for a non-numeric array,
        a record of the wrong shape, infinite values, or NaN outside whole absent rows.

        Parameters
        ----------
        x : array-like
            A dataset.
        name : str
            Name used in error messages.

        Returns
        -------
        ndarray of shape (n, p)

        Raises
        ------
        InvalidInputError
            For a malformed dataset (see above).
        """
        rows = dataset_rows(name, x, record_size=self.records.dim)
        if self.padded:
            if rows.shape[0] != self.max_size:
                raise InvalidInputError(f"a padded dataset has {self.max_size} rows (NaN for absent), got "
                                        f"{rows.shape[0]} rows in {name}={short_repr(x)}")
        elif np.any(np.isnan(rows)):
            raise InvalidInputError(f"{name} has NaN records but the domain is not padded: {name}={short_repr(x)}")
        return rows[~np.isnan(rows).any(axis=1)]

    def contains(self, x: Any) -> bool:
        """True for a well-formed dataset of an allowed size whose records lie in the record box.

        Parameters
        ----------
        x : object
            The candidate point.

        Returns
        -------
        bool
        """
        try:
            recs = self.present(x)
        except (InvalidInputError, ValueError, TypeError):
            return False
        if not (self.min_size <= recs.shape[0] <= self.max_size):
            return False
        return all(self.records.contains(r) for r in recs)

    def pack(self, records: Any) -> np.ndarray:
        """The dataset holding ``records`` (an (n, p) array) in this domain's representation.

        Parameters
        ----------
        records : array-like of shape (n, p)
            The records.

        Returns
        -------
        ndarray
            ``(n, *records.shape)``, or 1-d for one-coordinate records; padded with NaN rows to ``max_size`` when padded.

        Raises
        ------
        InvalidInputError
            When a padded domain cannot hold that many records.
        """
        recs = np.asarray(records, dtype=float).reshape(-1, self.records.dim)
        if self.padded:
            if recs.shape[0] > self.max_size:
                raise InvalidInputError(f"{recs.shape[0]} records do not fit in {self.max_size} padded rows")
            recs = np.vstack([recs, np.full((self.max_size - recs.shape[0], self.records.dim), np.nan)])
        return recs.reshape((recs.shape[0], *self.records.shape)) if self.records.shape != (1,) else recs.reshape(-1)

    def clip(self, x: Any) -> np.ndarray:
        """Every present record projected onto the record box (the size is kept).

        Parameters
        ----------
        x : array-like
            A dataset of this domain.

        Returns
        -------
        ndarray
            The clipped dataset, packed.
        """
        recs = self.present(x)
        return self.pack(np.array([self.records.clip(r).ravel() for r in recs]).reshape(-1, self.records.dim))

    def boundary_points(self) -> list[np.ndarray]:
        """Extreme datasets: the empty one (if allowed); every record at one record corner, at the least and most sizes."""
        out = [self.pack(np.zeros((0, self.records.dim)))] if self.min_size == 0 else []
        for size in sorted({max(self.min_size, 1), self.max_size}):
            for c in self.records.corners():
                out.append(self.pack(np.tile(c.ravel(), (size, 1))))
        return out

    def search_bases(self, rng: np.random.Generator, *, n_random: int = 2,
                     max_boundary: int = 4) -> list[SearchBase]:
        """The first ``max_boundary`` boundary datasets and ``n_random`` random ones, each exploring, naming its
        pairs ``"(boundary dataset 0 of 3 records)"``, ``"(random dataset 1 of 5 records)"``, ….

        Parameters
        ----------
        rng : Generator
            Source of the random datasets.
        n_random : int
            Random base datasets.
        max_boundary : int
            Boundary datasets used.

        Returns
        -------
        list of SearchBase
        """
        bases = [(f"boundary dataset {i}", p) for i, p in enumerate(self.boundary_points()[:max_boundary])]
        bases += [(f"random dataset {i}", p) for i, p in enumerate(self.sample(n_random, rng))]
        return [SearchBase(p, f"({name} of {self.present(p).shape[0]} records)", True) for name, p in bases]

    def sample(self, n: int, rng: np.random.Generator | int | None = None) -> list[np.ndarray]:
        """``n`` datasets: a size uniform in [min_size, max_size], then uniform records.

        Parameters
        ----------
        n : int
            Number of points (bounded so that the sample stays small in memory).
        rng : Generator, int or None
            Source of randomness.

        Returns
        -------
        list of ndarray
            ``n`` datasets.
        """
        n = _sample_size(n, self.max_size * self.records.dim)
        gen = np.random.default_rng(rng)
        sizes = gen.integers(self.min_size, self.max_size, size=n, endpoint=True)
        out = []
        for s in sizes:
            recs = self.records.sample(int(s), gen) if s > 0 else []
            out.append(self.pack(np.array([r.ravel() for r in recs]).reshape(-1, self.records.dim)))
        return out

    def to_dict(self) -> dict[str, Any]:
        """Plain data (``domain_from_spec`` reads it back)."""
        return {"kind": self.kind, "records": self.records.to_dict(), "min_size": self.min_size,
                "max_size": self.max_size, "padded": self.padded}


def dataset_rows(name: str, x: Any, record_size: int | None = None) -> np.ndarray:
    """The dataset ``x`` as an (n, p) float array of rows (axis 0 indexes records), NaN rows kept.

    Parameters
    ----------
    name : str
        Named in errors.
    x : array-like
        The dataset.
    record_size : int, optional
        The number p of values of a record, when known.

    Returns
    -------
    numpy.ndarray
        Shape (n, p).

    Raises :class:`InvalidInputError` naming ``name`` when ``x`` is not numeric,
    is a scalar, holds ±inf, has a row that is NaN only in part, or (with
    ``record_size``) has records of another size.
    """
    a = as_float_array(name, x)
    if a.ndim == 0:
        raise InvalidInputError(f"{name} must be a dataset (an array whose axis 0 indexes records), "
                                f"got {name}={short_repr(x)}")
    width = record_size if record_size is not None else max(int(np.prod(a.shape[1:])), 1)
    rows = a.reshape(a.shape[0], -1) if a.shape[0] else np.zeros((0, width))
    if record_size is not None and rows.shape[1] != record_size:
        raise InvalidInputError(f"{name} has records of {rows.shape[1]} values, expected {record_size}: "
                                f"shape {a.shape}")
    if np.any(np.isinf(rows)):
        raise InvalidInputError(f"{name} must not contain inf, got {name}={short_repr(x)}")
    nan = np.isnan(rows)
    partial = nan.any(axis=1) & ~nan.all(axis=1)
    if np.any(partial):
        raise InvalidInputError(f"{name} has a record that is NaN only in part (row {int(np.argmax(partial))}); "
                                f"a NaN row marks an absent record and must be NaN throughout")
    return rows


def domain_of(mechanism: Any) -> Domain | None:
    """The domain a mechanism declares in its ``domain`` attribute (None when it declares none).

    Parameters
    ----------
    mechanism : object
        Any object; its ``domain`` attribute may be a :class:`Domain`, a ``(low, high)``
        pair (a real :class:`Box`) or a mapping read by :func:`domain_from_spec`.

    Returns
    -------
    Domain or None
    """
    dom = getattr(mechanism, "domain", None)
    if dom is None or isinstance(dom, Domain):
        return dom
    return domain_from_spec(dom)


def domain_from_spec(spec: Any) -> Domain:
    """A domain from plain data: a :class:`Domain`, a ``(low, high)`` pair, or a mapping with ``kind``.

    Parameters
    ----------
    spec : Domain, (low, high) or mapping
        Mappings: ``{"kind": "box", "low": ..., "high": ..., "integer": false}``,
        ``{"kind": "categorical", "categories": [...]}`` and ``{"kind": "datasets",
        "records": {<box>}, "min_size": 1, "max_size": 100, "padded": false}``; ``kind``
        may be omitted for a box. The inverse of each domain's ``to_dict``.

    Returns
    -------
    Domain

    Raises
    ------
    InvalidParameterError
        Unknown kinds or fields, invalid bounds (naming them).
    ParameterTypeError
        Anything else.
    """
    if isinstance(spec, Domain):
        return spec
    if isinstance(spec, Mapping):
        data = dict(spec)
        kind = data.pop("kind", "box")
        try:
            if kind == "box":
                return Box(**data)
            if kind == "categorical":
                return Categorical(**data)
            if kind == "datasets":
                records = data.pop("records", None)
                return DatasetDomain(records=domain_from_spec(records) if records is not None else None, **data)
        except TypeError as exc:
            if isinstance(exc, ParameterTypeError):
                raise
            raise InvalidParameterError(f"domain {spec!r}: {exc}") from exc
        raise InvalidParameterError(f"unknown domain kind {kind!r}; expected one of: box, categorical, datasets")
    if isinstance(spec, tuple | list) and len(spec) == 2 and not isinstance(spec[0], str):
        return Box(spec[0], spec[1])
    raise ParameterTypeError(f"a domain must be a Domain, a (low, high) pair or a mapping with 'kind', got {spec!r}")


__all__ = ["Box", "Categorical", "DatasetDomain", "Domain", "MAX_CORNERS", "MAX_DATASET_SIZE", "MAX_SAMPLE_VALUES",
           "SearchBase", "as_float_array", "dataset_rows", "domain_from_spec", "domain_of", "short_repr"]
