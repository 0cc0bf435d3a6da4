"""candidate_pairs dispatches through Domain.search_bases and Neighbourhood methods, so new kinds plug in."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import numpy as np
import pytest

from privaudit.audit.engines.pair_search import candidate_pairs
from privaudit.mechanisms import InvalidParameterError
from privaudit.mechanisms.domains import Box, DatasetDomain, Domain, SearchBase
from privaudit.mechanisms.neighbourhoods import CandidatePair, Neighbourhood


@dataclasses.dataclass(frozen=True)
class FirstCoordinate(Neighbourhood):
    """x ~ x′ iff they differ in the first coordinate only, by at most 1 (a third-party neighbourhood)."""

    kind: ClassVar[str] = "first-coordinate"

    @property
    def shorthand(self) -> str:
        return "first-coordinate"

    def group_distance(self, x: Any, x_prime: Any) -> float:
        d = np.asarray(x_prime, float) - np.asarray(x, float)
        return np.inf if np.any(d[1:]) else float(np.ceil(abs(d[0])))

    def neighbours(self, x, domain=None, rng=None, *, n_random=8):
        x = np.asarray(x, float)
        return [CandidatePair(x, x + s * np.eye(x.size)[0], name) for s, name in ((1.0, "up"), (-1.0, "down"))]

    def check_search_domain(self, domain: Domain) -> None:
        if domain.points != "vectors":
            raise InvalidParameterError("first-coordinate needs vectors")

    def search_proposals(self, x, domain, rng, *, n_random, explore, patterns):
        return self.neighbours(x, domain, rng)


@dataclasses.dataclass(frozen=True)
class Segment(Domain):
    """The points (t, 0) for t in [0, 3] (a third-party domain with the default search bases)."""

    points: ClassVar[str] = "vectors"

    def contains(self, x):
        x = np.asarray(x, float)
        return x.shape == (2,) and 0 <= x[0] <= 3 and x[1] == 0

    def sample(self, n, rng=None):
        return [np.array([t, 0.0]) for t in np.random.default_rng(rng).uniform(0, 3, n)]

    def boundary_points(self):
        return [np.zeros(2), np.array([3.0, 0.0])]


def test_a_new_neighbourhood_and_domain_plug_into_the_search():
    cands = candidate_pairs(Segment(), FirstCoordinate(), rng=0)
    origins = [c.origin for c in cands]
    assert "up from the boundary point 0" in origins and "down from the boundary point 1" in origins
    assert any("random point 1" in o for o in origins)
    assert all(FirstCoordinate().are_neighbours(c.x, c.x_prime) for c in cands)
    base = SearchBase(np.zeros(2), "from here", True)
    assert base.origin("a / b") == "a from here / b from here"
    assert SearchBase(0, "", False).origin("a / b") == "a / b"


def test_a_neighbourhood_without_a_search_is_refused_naming_both():
    class NoSearch(FirstCoordinate):
        check_search_domain = Neighbourhood.check_search_domain

    with pytest.raises(InvalidParameterError, match="no pair search for neighbourhood 'first-coordinate' on domain"):
        candidate_pairs(Box(np.zeros(2), np.ones(2)), NoSearch())


def test_an_empty_base_dataset_is_named_by_its_size():
    dom = DatasetDomain(Box(np.zeros(2), np.ones(2)), min_size=0, max_size=3)
    cands = candidate_pairs(dom, "add-remove", n_random=1, rng=0)
    assert any(c.origin.startswith("add a record at corner [0.0, 0.0] (boundary dataset 0 of 0 records)")
               for c in cands)
    assert all(dom.contains(c.x) and dom.contains(c.x_prime) for c in cands)
