"""Neighbourhoods carried by a claim: parsing, pair checks, group distance, proposals, patterns, group privacy.

Every proposal is checked against an *independent* adjacency test written here
(norms, record comparisons), and group distances against breadth-first searches
over small lattices and sequence spaces, not against the code under test.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections import deque

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm as normal

from privaudit.mechanisms import (
    ExponentialMechanism,
    GaussianMechanism,
    InvalidInputError,
    InvalidParameterError,
    PrivacyClaim,
)
from privaudit.mechanisms.adjacency import (
    NonAdjacentPairError,
    adjacent_claim,
    group_claim,
    group_epsilon_delta,
    local_metric,
    pair_distance,
)
from privaudit.mechanisms.claim import neighboring_relation
from privaudit.mechanisms.domains import Box, Categorical, DatasetDomain
from privaudit.mechanisms.input_patterns import input_patterns, sign_patterns
from privaudit.mechanisms.neighbourhoods import (
    AddRemove,
    AnyPair,
    Histogram,
    IntegerLattice,
    KeyContributions,
    Label,
    Neighbourhood,
    NormBall,
    ReplaceOne,
    parse_neighbourhood,
)
from privaudit.mechanisms.validation import ParameterTypeError
from dp_accounting import NeighboringRelation

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True)
ORD = {"l1": 1, "l2": 2, "linf": np.inf}


# ------------------------------------------------------------------------------------ parsing
@pytest.mark.parametrize("text,expected", [
    ("l1<=1", NormBall("l1", 1.0)), ("l2<=0.5", NormBall("l2", 0.5)), ("linf<=1", NormBall("linf", 1.0)),
    ("l2<=.5", NormBall("l2", 0.5)), ("l2<=1e-05", NormBall("l2", 1e-5)), ("l1<=1e+308", NormBall("l1", 1e308)),
    ("int-l1<=2", IntegerLattice("l1", 2.0)), ("int-linf<=1", IntegerLattice("linf", 1.0)),
    ("add-remove", AddRemove()), ("replace-one", ReplaceOne()), ("label", Label()), ("any", AnyPair()),
    ("histogram", Histogram()), ("histogram-replace", Histogram(replace=True)),
    ("keys(k=3,c=2.5)", KeyContributions(3, 2.5)), ("int-keys(k=2,c=1)", KeyContributions(2, 1, integer=True)),
])
def test_shorthands_parse_to_objects_and_back(text, expected):
    nb = parse_neighbourhood(text)
    assert nb == expected and type(nb) is type(expected)
    assert parse_neighbourhood(nb.shorthand) == nb
    assert Neighbourhood.from_dict(nb.to_dict()) == nb
    assert parse_neighbourhood(nb) is nb


def test_relations_of_todays_strings_are_unchanged():
    # The mapping before neighbourhood objects existed (mechanisms/claim.py, _RELATIONS and the local regex).
    old = {"add-remove": NeighboringRelation.ADD_OR_REMOVE_ONE, "replace-one": NeighboringRelation.REPLACE_ONE,
           "label": NeighboringRelation.REPLACE_ONE, "any": NeighboringRelation.ADD_OR_REMOVE_ONE,
           "l2<=1": NeighboringRelation.ADD_OR_REMOVE_ONE, "l1<=0.5": NeighboringRelation.ADD_OR_REMOVE_ONE}
    for name, rel in old.items():
        assert neighboring_relation(name) == rel == PrivacyClaim(1.0, 0.0, name).relation
    assert neighboring_relation(Histogram(replace=True)) == NeighboringRelation.REPLACE_ONE


def test_claim_accepts_linf_and_objects_and_keeps_the_string():
    c = PrivacyClaim(1.0, 0.0, "linf<=1")
    assert c.adjacency == "linf<=1" and c.neighbourhood == NormBall("linf", 1.0)
    assert c.to_dict() == {"epsilon": 1.0, "delta": 0.0, "adjacency": "linf<=1", "mu": None, "rho": None}
    o = PrivacyClaim(1.0, 1e-6, ReplaceOne())
    assert o.neighbourhood is o.adjacency and o.relation == NeighboringRelation.REPLACE_ONE
    assert o.to_dict()["adjacency"] == {"kind": "replace-one"}
    assert PrivacyClaim(1.0, 1e-6, o.to_dict()["adjacency"]) == o  # a mapping is read back into the object
    assert repr(PrivacyClaim(1.0, 0.0, "l2<=1")) == (
        "PrivacyClaim(epsilon=1.0, delta=0.0, adjacency='l2<=1', mu=None, rho=None)")


def test_claims_with_objects_pickle_hash_and_replace():
    import dataclasses
    import pickle

    for adj in (NormBall("linf", 1.0), KeyContributions(2, 1.5, integer=True), Label(), Histogram(replace=True)):
        c = PrivacyClaim(0.5, 1e-6, adj)
        assert pickle.loads(pickle.dumps(c)) == c and hash(c) == hash(PrivacyClaim(0.5, 1e-6, adj))
        assert dataclasses.replace(c, epsilon=1.0).neighbourhood == adj


def test_claim_round_trips_through_report_json():
    from privaudit.audit.results import from_jsonable, to_jsonable

    for adj in ("l2<=1", KeyContributions(2, 1.5), NormBall("linf", 2.0), AddRemove()):
        c = PrivacyClaim(0.5, 1e-6, adj, mu=0.3)
        assert from_jsonable(PrivacyClaim, to_jsonable(c)) == c


@pytest.mark.parametrize("text,match", [
    ("l2<=4.94066e-324", "4.94066e-324"), ("l2<=5e-324", "5e-324"), ("l2<=0", "radius"), ("l2<=-1", "-1"),
    ("l2<=nan", "nan"), ("l2<=inf", "inf"), ("l1<=1e400", "inf"), ("l2<=abc", "'abc'"), ("l3<=1", "unknown adjacency"),
    ("bogus", "unknown adjacency 'bogus'"), ("", "unknown adjacency ''"), ("keys(k=0,c=1)", "k"),
    ("keys(k=1.5,c=1)", "1.5"), ("keys(k=2,c=0)", "max_per_key"), ("int-l1<=0.5", "radius >= 1"),
    ("int-keys(k=1,c=0.5)", "max_per_key"),
])
def test_bad_shorthands_name_the_value(text, match):
    with pytest.raises(InvalidParameterError, match=match):
        parse_neighbourhood(text)
    with pytest.raises(InvalidParameterError, match=match):
        PrivacyClaim(1.0, 0.0, text)


def test_the_tiny_sensitivity_of_issue_24_is_a_clear_error():
    # Was "unknown adjacency 'l2<=4.94066e-324'": the radius was not even recognised as a number.
    with pytest.raises(InvalidParameterError, match=r"'l2<=4.94066e-324'.*radius must be a finite number >= "
                                                    r"2.2250738585072014e-308 .*got radius=5e-324"):
        GaussianMechanism(epsilon=1.0, delta=1e-5, sensitivity=5e-324)
    with pytest.raises(InvalidParameterError, match=r"'l1<=4.94066e-324'"):
        ExponentialMechanism(epsilon=1.0, sensitivity=5e-324)


@pytest.mark.parametrize("make,err,match", [
    (lambda: NormBall("l4", 1.0), InvalidParameterError, "l4"),
    (lambda: NormBall("l2", float("nan")), InvalidParameterError, "NaN"),
    (lambda: NormBall("l2", -1.0), InvalidParameterError, "-1.0"),
    (lambda: NormBall("l2", math.inf), InvalidParameterError, "inf"),
    (lambda: NormBall("l2", "1"), ParameterTypeError, "'1'"),
    (lambda: NormBall("l2", True), ParameterTypeError, "True"),
    (lambda: KeyContributions(0, 1.0), InvalidParameterError, "max_keys"),
    (lambda: KeyContributions(2.0, 1.0), ParameterTypeError, "max_keys"),
    (lambda: Histogram(replace="yes"), ParameterTypeError, "replace"),
    (lambda: parse_neighbourhood(3), ParameterTypeError, "3"),
    (lambda: parse_neighbourhood(None), ParameterTypeError, "None"),
    (lambda: parse_neighbourhood({"kind": "ball"}), InvalidParameterError, "'ball'"),
    (lambda: parse_neighbourhood({"kind": "norm-ball", "norm": "l2", "radius": 1, "x": 2}), InvalidParameterError,
     "'x'"),
    (lambda: PrivacyClaim(1.0, 0.0, 3), InvalidParameterError, "adjacency"),
])
def test_bad_objects_name_the_value(make, err, match):
    with pytest.raises(err, match=match):
        make()


# ------------------------------------------------------------------------------ pair checks, errors
@pytest.mark.parametrize("nb,x,xp,match", [
    (NormBall("l2", 1.0), [0.0, 1.0], [0.0], "same shape"),
    (NormBall("l2", 1.0), [np.nan], [0.0], "finite"),
    (NormBall("linf", 1.0), [np.inf], [0.0], "finite"),
    (IntegerLattice("l1", 1.0), [0.5], [1.0], "integer-valued"),
    (Histogram(), [1.0, 2.0], [1.0, 2.5], "integer-valued"),
    (KeyContributions(1, 1, integer=True), [0.0], [0.5], "integer-valued"),
    (AddRemove(), [[0.0, np.nan]], [[0.0, 1.0]], "NaN only in part"),
    (ReplaceOne(), [[0.0, 1.0]], [[0.0, 1.0, 2.0]], "records of one size"),
    (ReplaceOne(), [np.inf], [1.0], "inf"),
    (AddRemove(), 3.0, [3.0], "dataset"),
    (AnyPair(), [np.nan], [0.0], "NaN"),
    (AddRemove(), np.arange(10_000.0), np.arange(10_000.0)[::-1] + 0.5, "differ in 10000 and 10000 records"),
    (NormBall("l1", 1.0), "abc", [0.0], "numeric"),
])
def test_malformed_pairs_raise_input_errors(nb, x, xp, match):
    with pytest.raises(InvalidInputError, match=match):
        nb.group_distance(x, xp)


def test_linf_neighbourhood_admits_the_all_coordinates_move_that_l2_refuses():
    x, xp = np.ones(5), np.ones(5) + np.array([1, -1, 1, -1, 1.0])
    assert NormBall("linf", 1.0).are_neighbours(x, xp)
    assert not NormBall("l2", 1.0).are_neighbours(x, xp)
    assert NormBall("l2", 1.0).group_distance(x, xp) == 3  # ‖(±1)^5‖₂ = √5 ≈ 2.24


# -------------------------------------------------------------------- group distance vs brute force
@functools.lru_cache(maxsize=None)
def _bfs_lattice_all(steps: tuple[tuple[int, ...], ...], d: int, bound: int) -> dict:
    """Fewest steps from 0 to every point of [−bound, bound]^d, paths inside that box (breadth-first search)."""
    start = (0,) * d
    dist = {start: 0}
    queue = deque([start])
    while queue:
        p = queue.popleft()
        for s in steps:
            q = tuple(a + b for a, b in zip(p, s))
            if q not in dist and all(abs(c) <= bound for c in q):
                dist[q] = dist[p] + 1
                queue.append(q)
    return dist


def _bfs_lattice(steps: list[tuple[int, ...]], target: tuple[int, ...], bound: int) -> float:
    return _bfs_lattice_all(tuple(steps), len(target), bound).get(tuple(target), math.inf)


def _integer_steps(d: int, reach: int, ok) -> list[tuple[int, ...]]:
    return [s for s in itertools.product(range(-reach, reach + 1), repeat=d) if any(s) and ok(np.array(s, float))]


@pytest.mark.parametrize("norm,radius,d", [("l1", 1.0, 2), ("l1", 2.0, 3), ("l2", 1.0, 3), ("l2", 1.5, 3),
                                           ("l2", 2.3, 2), ("l2", 1.0, 4), ("linf", 1.0, 3), ("linf", 2.0, 2)])
def test_integer_lattice_group_distance_matches_breadth_first_search(norm, radius, d):
    nb = IntegerLattice(norm, radius)
    steps = _integer_steps(d, int(radius), lambda s: np.linalg.norm(s, ord=ORD[norm]) <= radius + 1e-12)
    vals = range(-3, 4) if d <= 3 else range(0, 3)
    for v in itertools.product(vals, repeat=d):
        expected = _bfs_lattice(steps, v, bound=4)
        x = np.arange(d, dtype=float)
        assert nb.group_distance(x, x + np.array(v, float)) == expected, (norm, radius, v)


def test_l2_lattice_needs_four_unit_steps_for_the_all_ones_move():
    assert IntegerLattice("l2", 1.0).group_distance(np.zeros(4), np.ones(4)) == 4
    assert NormBall("l2", 1.0).group_distance(np.zeros(4), np.ones(4)) == 2


@pytest.mark.parametrize("replace", [False, True])
def test_histogram_group_distance_matches_breadth_first_search(replace):
    nb = Histogram(replace=replace)
    d = 3
    if replace:
        steps = [s for s in itertools.product((-1, 0, 1), repeat=d) if sorted(s) == [-1, 0, 1]]
    else:
        steps = [s for s in itertools.product((-1, 0, 1), repeat=d) if sum(map(abs, s)) == 1]
    for v in itertools.product(range(-2, 3), repeat=d):
        assert nb.group_distance(np.full(d, 5.0), np.full(d, 5.0) + v) == _bfs_lattice(steps, v, bound=3), v


@pytest.mark.parametrize("k,c", [(1, 1), (2, 1), (2, 2), (3, 1)])
def test_key_contributions_group_distance_matches_breadth_first_search(k, c):
    d = 3
    steps = _integer_steps(d, c, lambda s: np.count_nonzero(s) <= k and np.max(np.abs(s)) <= c)
    for v in itertools.product(range(-3, 4), repeat=d):
        expected = _bfs_lattice(steps, v, bound=4)
        x = np.zeros(d)
        assert KeyContributions(k, c, integer=True).group_distance(x, x + v) == expected, (k, c, v)
        # Real contributions of integer size need as many steps (pieces vᵢ/mᵢ are ≤ c either way).
        assert KeyContributions(k, float(c)).group_distance(x, x + v) == expected, (k, c, v)


@SETTINGS
@given(st.sampled_from(["l1", "l2", "linf"]), st.floats(0.1, 3.0),
       st.lists(st.floats(-10, 10), min_size=1, max_size=5))
def test_norm_ball_group_distance_is_attained_by_the_straight_chain_and_not_less(norm, r, v):
    nb = NormBall(norm, r)
    x, xp = np.zeros(len(v)), np.array(v)
    k = nb.group_distance(x, xp)
    dist = np.linalg.norm(xp - x, ord=ORD[norm])
    if dist == 0:
        assert k == 0
        return
    chain = [x + (xp - x) * i / k for i in range(k + 1)]
    assert all(np.linalg.norm(b - a, ord=ORD[norm]) <= r * (1 + 1e-9) for a, b in zip(chain, chain[1:]))
    assert dist > (k - 1) * r * (1 - 1e-9)  # k − 1 steps of length ≤ r cannot cover the distance


def _bfs_sequences(a: tuple, b: tuple, moves, limit: int) -> float:
    dist = {a: 0}
    queue = deque([a])
    while queue:
        p = queue.popleft()
        if p == b:
            return dist[p]
        for q in moves(p):
            if q not in dist and len(q) <= limit:
                dist[q] = dist[p] + 1
                queue.append(q)
    return math.inf


def _add_remove_moves(p, alphabet=(0, 1, 2)):
    for i in range(len(p)):
        yield p[:i] + p[i + 1:]
    for i in range(len(p) + 1):
        for s in alphabet:
            yield p[:i] + (s,) + p[i:]


def _replace_moves(p, alphabet=(0, 1, 2)):
    for i in range(len(p)):
        for s in alphabet:
            if s != p[i]:
                yield p[:i] + (s,) + p[i + 1:]


def test_dataset_group_distances_match_breadth_first_search():
    seqs = [t for n in range(4) for t in itertools.product((0, 1, 2), repeat=n)]
    rng = np.random.default_rng(0)
    pairs = [(seqs[i], seqs[j]) for i, j in rng.integers(len(seqs), size=(150, 2))]
    for a, b in pairs:
        xa, xb = np.array(a, float).reshape(-1, 1), np.array(b, float).reshape(-1, 1)
        assert AddRemove().group_distance(xa, xb) == _bfs_sequences(a, b, _add_remove_moves, 5), (a, b)
        assert AddRemove().group_distance(xb, xa) == AddRemove().group_distance(xa, xb)
        expected = _bfs_sequences(a, b, _replace_moves, 5) if len(a) == len(b) else math.inf
        assert ReplaceOne().group_distance(xa, xb) == expected, (a, b)


def test_padded_datasets_are_their_present_records():
    x = np.array([1.0, np.nan, 2.0, np.nan])
    assert AddRemove().group_distance(x, np.array([1.0, 5.0, 2.0, np.nan])) == 1  # insertion between the two
    assert AddRemove().group_distance(x, np.array([1.0, 2.0])) == 0
    assert ReplaceOne().group_distance(x, np.array([np.nan, 1.0, 3.0, np.nan])) == 1
    rows = np.array([[1.0, 0.0], [2.0, 1.0]])
    assert Label().group_distance(rows, np.array([[1.0, 1.0], [2.0, 1.0]])) == 1
    assert Label().group_distance(rows, np.array([[1.5, 0.0], [2.0, 1.0]])) == math.inf
    assert AddRemove().group_distance(np.arange(3000.0), np.delete(np.arange(3000.0), 1234)) == 1


def test_any_pair_distance():
    assert AnyPair().group_distance([0.0], [100.0]) == 1 and AnyPair().group_distance([2.0], [2.0]) == 0
    assert AnyPair().group_distance("a", "b") == 1


# --------------------------------------------------------------------- proposals are true neighbours
def _vector_ok(nb, x, xp) -> bool:
    """Independent adjacency test of the vector kinds."""
    v = np.ravel(xp) - np.ravel(x)
    if isinstance(nb, NormBall):
        return np.linalg.norm(v, ord=ORD[nb.norm]) <= nb.radius * (1 + 1e-9)
    if isinstance(nb, IntegerLattice):
        return np.all(v == np.round(v)) and np.linalg.norm(v, ord=ORD[nb.norm]) <= nb.radius * (1 + 1e-9)
    if isinstance(nb, Histogram):
        if nb.replace:
            return sorted(v[v != 0].tolist()) == [-1.0, 1.0]
        return np.abs(v).sum() == 1 and np.all(v == np.round(v))
    if isinstance(nb, KeyContributions):
        ok = np.count_nonzero(v) <= nb.max_keys and np.max(np.abs(v)) <= nb.max_per_key * (1 + 1e-9)
        return ok and (not nb.integer or np.all(v == np.round(v)))
    raise AssertionError(nb)


def _in_box(box: Box, xp) -> bool:
    a = np.ravel(xp)
    ok = np.all(a >= np.asarray(box.low)) and np.all(a <= np.asarray(box.high))
    return bool(ok and (not box.integer or np.all(a == np.round(a))))


VECTOR_KINDS = st.sampled_from([NormBall("l1", 1.0), NormBall("l2", 0.7), NormBall("linf", 1.0), NormBall("l2", 3.0),
                                IntegerLattice("l1", 2.0), IntegerLattice("l2", 1.5), IntegerLattice("linf", 1.0),
                                Histogram(), Histogram(replace=True), KeyContributions(2, 1.5),
                                KeyContributions(2, 1, integer=True)])


@SETTINGS
@given(VECTOR_KINDS, st.integers(1, 5), st.booleans(), st.integers(0, 2**32 - 1))
def test_vector_neighbours_and_patterns_are_true_neighbours_inside_the_box(nb, d, integer, seed):
    gen = np.random.default_rng(seed)
    integer = integer or nb.integer_moves
    lo = gen.integers(-3, 1, size=d).astype(float)
    hi = lo + gen.integers(0, 4, size=d)
    box = Box(lo, hi, integer=integer)
    x = box.sample(1, gen)[0]
    cands = nb.neighbours(x, box, gen, n_random=4) + input_patterns(nb, box, x)
    claim = PrivacyClaim(1.0, 1e-6, nb)
    for c in cands:
        assert _vector_ok(nb, x, c.x_prime), (nb, x, c)
        assert _in_box(box, c.x_prime) and not np.array_equal(c.x_prime, x), (box, c)
        assert np.array_equal(c.x, x)
        assert adjacent_claim(claim, c.x, c.x_prime) == (claim, "")  # the audit's check accepts every proposal
        assert nb.group_distance(c.x_prime, c.x) == 1  # and the relation is symmetric on them


@SETTINGS
@given(st.sampled_from([AddRemove(), ReplaceOne(), Label()]), st.integers(1, 3), st.integers(0, 4), st.booleans(),
       st.booleans(), st.integers(0, 2**32 - 1))
def test_dataset_neighbours_and_patterns_are_true_neighbours_inside_the_domain(nb, p, n, integer, padded, seed):
    gen = np.random.default_rng(seed)
    records = Box(np.zeros(p), np.full(p, 3.0), integer=integer)
    dom = DatasetDomain(records, min_size=0, max_size=5, padded=padded)
    recs = np.array([r.ravel() for r in records.sample(n, gen)]).reshape(n, p) if n else np.zeros((0, p))
    x = dom.pack(recs)
    cands = nb.neighbours(x, dom, gen, n_random=3) + input_patterns(nb, dom, x)
    if not isinstance(nb, AddRemove) and n == 0:
        assert cands == []
    for c in cands:
        xp = np.asarray(c.x_prime)
        assert xp.shape[0] == (5 if padded else xp.shape[0])
        a, b = _present(x, p), _present(xp, p)
        assert all(_in_box(records, r) for r in b) and len(b) <= 5, c
        if isinstance(nb, AddRemove):
            assert abs(len(a) - len(b)) == 1
            long, short = (a, b) if len(a) > len(b) else (b, a)
            assert any(np.array_equal(np.delete(long, i, axis=0), short) for i in range(len(long))), c
        else:
            assert a.shape == b.shape and np.sum(np.any(a != b, axis=1)) == 1, c
            if isinstance(nb, Label):
                assert np.array_equal(a[:, :-1], b[:, :-1]), c


def _present(x, p):
    rows = np.asarray(x, float).reshape(-1, p)
    return rows[~np.isnan(rows).any(axis=1)]


def test_any_proposals_are_other_points_of_the_domain():
    box = Box([0.0, 0.0], [1.0, 2.0])
    cands = AnyPair().neighbours([0.5, 0.5], box, 0, n_random=3) + input_patterns("any", box, [0.5, 0.5])
    assert len(cands) >= 8 and all(box.contains(c.x_prime) and not np.array_equal(c.x_prime, [0.5, 0.5])
                                   for c in cands)
    cats = Categorical(("a", "b", "c"))
    assert [c.x_prime for c in input_patterns("any", cats, "b")] == ["a", "c"]
    assert {c.x_prime for c in AnyPair().neighbours("b", cats, 0, n_random=5)} <= {"a", "c"}
    assert [c.x_prime for c in AnyPair().neighbours(1.0, Categorical([0, 1, 2]), 0, n_random=0)] == [0, 2]
    padded = DatasetDomain(Box(0.0, 1.0), min_size=0, max_size=2, padded=True)
    x = np.array([0.0, np.nan])
    cands = AnyPair().neighbours(x, padded, 0, n_random=6)
    assert cands and all(padded.contains(c.x_prime) and not np.array_equal(c.x_prime, x, equal_nan=True)
                         for c in cands)


def test_proposals_refuse_points_outside_the_domain_and_wrong_domain_kinds():
    with pytest.raises(InvalidInputError, match=r"x=\[5.0\]"):
        NormBall("l2", 1.0).neighbours([5.0], Box(0.0, 1.0))
    with pytest.raises(ParameterTypeError, match="DatasetDomain"):
        AddRemove().neighbours([1.0, 2.0], Box(0.0, 1.0))
    with pytest.raises(ParameterTypeError, match="Box"):
        NormBall("l2", 1.0).neighbours([1.0], DatasetDomain(Box(0.0, 1.0)))
    with pytest.raises(InvalidInputError, match="integer-valued"):
        IntegerLattice("l1", 1.0).neighbours([0.5])
    with pytest.raises(InvalidParameterError, match="domain"):
        AnyPair().neighbours([0.5])
    with pytest.raises(InvalidParameterError, match="n_random=-1"):
        AddRemove().neighbours(np.array([0.5]), DatasetDomain(Box(0.0, 1.0)), n_random=-1)
    with pytest.raises(InvalidParameterError, match="n_random=-1"):
        NormBall("l2", 1.0).neighbours([0.0], n_random=-1)
    with pytest.raises(InvalidInputError, match="direction 'up' has 1 coordinates, x has 2"):
        NormBall("l2", 1.0).propose([0.0, 0.0], [("up", [1.0])], None)


# -------------------------------------------------------------------------------------- patterns
def test_linf_patterns_move_every_named_answer_by_exactly_one():
    x = np.full(4, 2.0)
    got = {c.origin: c.x_prime - x for c in input_patterns("linf<=1", Box(np.zeros(4), np.full(4, 5.0)), x)}
    expected = {"one up": [1, 0, 0, 0], "one down": [-1, 0, 0, 0], "one up, rest down": [1, -1, -1, -1],
                "one down, rest up": [-1, 1, 1, 1], "half up, half down": [1, 1, -1, -1], "all up": [1, 1, 1, 1],
                "all down": [-1, -1, -1, -1], "alternating": [1, -1, 1, -1]}
    assert got.keys() == expected.keys()
    for name, move in expected.items():
        np.testing.assert_array_equal(got[name], move)


def test_l1_patterns_spend_the_radius_and_keys_patterns_move_k_keys():
    x = np.zeros(4)
    for c in input_patterns("l1<=2", None, x):
        assert np.abs(c.x_prime - x).sum() == pytest.approx(2.0)
    allup = {c.origin: c.x_prime for c in input_patterns("keys(k=2,c=3)", None, x)}["half up, half down / all up"]
    np.testing.assert_array_equal(allup, [3, 3, 0, 0])


def test_patterns_are_clamped_into_the_box_and_merged_when_they_coincide():
    cands = input_patterns("linf<=1", Box(0.0, 1.0), [1.0])
    assert [(c.origin, c.x_prime.tolist()) for c in cands] == [("one down / all down", [0.0])]
    assert [name for name, _ in sign_patterns(1)] == ["one up", "one down", "all up", "all down"]


def test_dataset_patterns_name_the_bounds_the_mean_and_the_outlier():
    dom = DatasetDomain(Box(0.0, 10.0), min_size=1, max_size=4)
    origins = " | ".join(c.origin for c in input_patterns("add-remove", dom, np.array([1.0, 2.0, 3.0])))
    for part in ("add a record at the low bound", "add a record at the high bound", "add a record at the mean",
                 "add an outlier", "remove the highest record", "remove the record nearest the mean"):
        assert part in origins
    rep = {c.origin: c.x_prime for c in input_patterns("replace-one", dom, np.array([1.0, 2.0, 3.0]))}
    assert any("replace the lowest record by a record at the high bound" in o for o in rep)


# ------------------------------------------------------------------------------------ group privacy
def test_group_epsilon_is_exact_for_k_composed_laplace_shifts():
    # Lap(0, b) vs Lap(kΔ, b): the privacy loss log p(y)/p(y − kΔ) is maximal, kΔ/b = kε, for y ≤ 0;
    # computed on a grid, independently of the formula.
    b, delta_sens = 0.7, 1.0
    eps = delta_sens / b
    y = np.linspace(-20, 20, 40_001)
    for k in range(1, 6):
        loss = (-np.abs(y) + np.abs(y - k * delta_sens)) / b
        exact = float(np.max(np.abs(loss)))
        assert group_epsilon_delta(eps, 0.0, k) == (pytest.approx(exact, rel=1e-12), 0.0)


def _hockey_stick(p: np.ndarray, q: np.ndarray, eps: float) -> float:
    """δ(ε) = max over events S of P(S) − e^ε Q(S) = Σ (p − e^ε q)⁺, both directions."""
    return max(np.clip(p - math.exp(eps) * q, 0, None).sum(), np.clip(q - math.exp(eps) * p, 0, None).sum())


@pytest.mark.parametrize("seed", range(20))
def test_group_delta_bounds_every_chain_of_eps_delta_close_distributions(seed):
    gen = np.random.default_rng(seed)
    eps, k = float(gen.uniform(0.1, 1.0)), int(gen.integers(2, 6))
    chain = [gen.dirichlet(np.ones(6))]
    for _ in range(k):  # each link a small perturbation of the last, so δ per link is small but non-zero
        chain.append(0.8 * chain[-1] + 0.2 * gen.dirichlet(np.ones(6)))
    delta = max(_hockey_stick(p, q, eps) for p, q in zip(chain, chain[1:]))
    eps_k, delta_k = group_epsilon_delta(eps, delta, k)
    geometric = delta * sum(math.exp(j * eps) for j in range(k))  # the chain bound before k·e^{(k−1)ε}
    assert eps_k == pytest.approx(k * eps)
    assert _hockey_stick(chain[0], chain[-1], eps_k) <= geometric * (1 + 1e-12) + 1e-15
    assert geometric <= delta_k * (1 + 1e-12) or delta_k == 1.0 - 1e-12


def test_group_delta_bounds_the_exact_gaussian_at_distance_k():
    g = GaussianMechanism(epsilon=1.0, delta=1e-5)
    for k in range(2, 6):
        eps_k, delta_k = group_epsilon_delta(g.claim.epsilon, g.claim.delta, k)
        mu = k / g.sigma  # the pair at distance k is k·Δ/σ-GDP; δ(ε) of Balle & Wang 2018, Thm 8
        exact = normal.cdf(-eps_k / mu + mu / 2) - math.exp(eps_k) * normal.cdf(-eps_k / mu - mu / 2)
        assert exact <= delta_k


def test_group_epsilon_delta_validates_and_caps():
    with pytest.raises(InvalidParameterError, match="k"):
        group_epsilon_delta(1.0, 0.0, 0)
    with pytest.raises(InvalidParameterError, match="delta"):
        group_epsilon_delta(1.0, 1.5, 2)
    assert group_epsilon_delta(5.0, 0.1, 400)[1] == 1.0 - 1e-12


# ------------------------------------------------------------------------- adjacency check and claims
def _legacy_adjacent_claim(claim, x, x_prime, mode="check"):
    """adjacent_claim as it was before neighbourhood objects (git f99222b), for today's strings."""
    import re

    local = re.compile(r"^(l1|l2)<=(\d+(\.\d*)?|\.\d+)$")
    if mode == "ignore" or claim.adjacency == "any":
        return claim, ""
    m = local.match(claim.adjacency)
    if m is None:
        return claim, (f"adjacency {claim.adjacency!r} is not checkable from (x, x_prime); the pair is taken "
                       "as adjacent as given")
    a, b = np.asarray(x, dtype=float).ravel(), np.asarray(x_prime, dtype=float).ravel()
    norm, r = m.group(1), float(m.group(2))
    d = float(np.abs(a - b).sum()) if norm == "l1" else float(np.linalg.norm(a - b))
    if d <= r * (1 + 1e-9):
        return claim, ""
    k = math.ceil(d / r * (1 - 1e-9))
    if mode == "check":
        return ("error", f"x and x_prime are at distance {d:.6g} but the claim's adjacency is {claim.adjacency!r}: "
                f"they are {k} steps apart, not neighbours. Audit a pair within {r:g}, or pass adjacency='group' "
                f"to test the group-privacy claim (k={k}) instead.")
    eps = k * claim.epsilon
    delta = min(k * math.exp(min((k - 1) * claim.epsilon, 700.0)) * claim.delta, 1.0 - 1e-12) if claim.delta else 0.0
    g = PrivacyClaim(eps, delta, claim.adjacency, mu=None if claim.mu is None else k * claim.mu,
                     rho=None if claim.rho is None else k * k * claim.rho)
    return g, (f"pair at distance {d:.6g} = {k} adjacency steps of {claim.adjacency!r}: audited against the "
               f"group-privacy claim (epsilon={g.epsilon:.4g}, delta={g.delta:.3g})")


@pytest.mark.parametrize("adj", ["l2<=1", "l1<=0.5", "l2<=2.", "l1<=.25", "any", "label", "replace-one",
                                 "add-remove"])
@pytest.mark.parametrize("mode", ["check", "group", "ignore"])
def test_todays_strings_give_todays_adjacency_results(adj, mode):
    gen = np.random.default_rng(7)
    claim = PrivacyClaim(0.7, 1e-6, adj, mu=0.4, rho=0.08)
    for _ in range(30):
        x, xp = gen.normal(size=3), gen.normal(size=3) * gen.choice([0.01, 0.3, 3.0])
        expected = _legacy_adjacent_claim(claim, x, xp, mode)
        if expected[0] == "error":
            with pytest.raises(NonAdjacentPairError) as info:
                adjacent_claim(claim, x, xp, mode=mode)
            assert str(info.value) == expected[1]
        else:
            assert adjacent_claim(claim, x, xp, mode=mode) == expected


def test_adjacency_check_and_group_claim_for_object_neighbourhoods():
    c = PrivacyClaim(0.5, 1e-6, Histogram())
    assert adjacent_claim(c, [3.0, 1.0], [4.0, 1.0]) == (c, "")
    with pytest.raises(NonAdjacentPairError, match="3 steps apart under the claim.s adjacency Histogram"):
        adjacent_claim(c, [3.0, 1.0], [5.0, 0.0])
    g, note = adjacent_claim(c, [3.0, 1.0], [5.0, 0.0], mode="group")
    assert g == group_claim(c, 3) and g.epsilon == pytest.approx(1.5) and "3 adjacency steps" in note
    r = PrivacyClaim(1.0, 0.0, ReplaceOne())
    assert adjacent_claim(r, [[1.0], [2.0]], [[1.0], [7.0]]) == (r, "")
    for mode in ("check", "group"):
        with pytest.raises(NonAdjacentPairError, match="not connected"):
            adjacent_claim(r, [[1.0], [2.0]], [[1.0]], mode=mode)
    # The string "replace-one" keeps accepting the pair as given (a derived release), with the note.
    assert "not checkable" in adjacent_claim(PrivacyClaim(1.0, 0.0, "replace-one"), [0.0], [5.0, 1.0])[1]
    linf = PrivacyClaim(1.0, 0.0, "linf<=1")
    assert adjacent_claim(linf, np.zeros(3), np.ones(3)) == (linf, "")
    with pytest.raises(NonAdjacentPairError, match="at distance 2 "):
        adjacent_claim(linf, np.zeros(3), np.full(3, 2.0))


def test_local_metric_and_pair_distance_cover_linf_and_objects():
    assert local_metric("linf<=2") == ("linf", 2.0) and local_metric(NormBall("l1", 0.5)) == ("l1", 0.5)
    assert local_metric("histogram") is None and local_metric("not an adjacency") is None
    assert pair_distance("linf<=1", [0.0, 0.0], [0.5, -2.0]) == (2.0, 1.0)
    assert pair_distance(IntegerLattice("l1", 1.0), [0], [1]) is None


def test_greedy_l2_lattice_chain_is_never_shorter_than_the_exact_distance():
    # Beyond the state limit the greedy chain length is returned: it must be an upper bound (a real chain).
    from privaudit.mechanisms.neighbourhoods import _greedy_l2_steps

    for radius in (1.0, 1.5, 2.3):
        steps = _integer_steps(3, int(radius), lambda s: np.linalg.norm(s) <= radius + 1e-12)
        for v in itertools.product(range(0, 4), repeat=3):
            if any(v):
                assert _greedy_l2_steps(np.array(v, float), radius) >= _bfs_lattice(steps, v, bound=4), (radius, v)
    big = np.zeros(40)
    big[:30] = 3.0  # 4^30 states: past the exact limit, the greedy chain is used
    assert IntegerLattice("l2", 1.5).group_distance(np.zeros(40), big) == _greedy_l2_steps(big[:30], 1.5)
    # Far pairs take a few rounds, not one per step: 2·10¹² unit steps for r = 1 (exact: ‖v‖₁ when r < √2).
    assert IntegerLattice("l2", 1.0).group_distance([0.0, 0.0], [1e12, 1e12]) == 2 * 10**12
    k = IntegerLattice("l2", 5.0).group_distance(np.zeros(3), np.full(3, 1e9))
    assert math.ceil(math.sqrt(3) * 1e9 / 5.0) <= k <= 3 * 1e9 / 5.0  # between the ℓ2 bound and the axis chain


class _CoordinateLaplace:
    """Laplace noise of scale b on each of d coordinates: ε-DP for ‖x − x′‖∞ ≤ 1 exactly when b ≥ d/ε."""

    def __init__(self, scale: float, epsilon: float) -> None:
        self.scale, self.claim = scale, PrivacyClaim(epsilon, 0.0, "linf<=1")

    def sample(self, x, n, rng=None):
        x = np.asarray(x, dtype=float)
        return x + np.random.default_rng(rng).laplace(scale=self.scale, size=(n, x.size))


def test_the_all_up_pattern_catches_a_linf_claim_calibrated_for_one_coordinate():
    # The issue's failure mode: a mechanism correct for moving one answer (b = 1/ε) claims the ℓ∞ neighbourhood.
    # Its exact ε on "all up" (d = 2) is 2ε; on "one up" it is ε. The correct b = 2/ε passes on "all up".
    from privaudit.audit.engines.tradeoff import audit_tradeoff

    box = Box(np.zeros(2), np.full(2, 4.0))
    pats = {c.origin: c for c in input_patterns("linf<=1", box, box.centre)}

    def audit(scale, pattern):
        c = pats[pattern]
        return audit_tradeoff(_CoordinateLaplace(scale, 1.0), c.x, c.x_prime, n=20_000, rng=0, attacker="projection")

    assert audit(2.0, "all up").verdict == "pass"
    caught = audit(1.0, "all up")
    assert caught.verdict == "violation" and 1.0 < caught.epsilon_lb <= 2.0
    assert audit(1.0, "one up").verdict == "pass"


class _BoundedSum:
    """Σ of the present records clamped to [0, upper] + Laplace(noise_bound/ε); correct when noise_bound = upper."""

    def __init__(self, upper: float, noise_bound: float, epsilon: float = 1.0) -> None:
        self.upper, self.noise_bound, self.epsilon = upper, noise_bound, epsilon
        self.claim = PrivacyClaim(epsilon, 0.0, AddRemove())

    def sample(self, x, n, rng=None):
        x = np.asarray(x, dtype=float)
        total = np.clip(x[~np.isnan(x)], 0.0, self.upper).sum()
        noise = np.random.default_rng(rng).laplace(scale=self.noise_bound / self.epsilon, size=n)
        return (total + noise).reshape(n, 1)


def test_the_high_bound_record_catches_a_bounded_sum_with_the_wrong_sensitivity():
    # Records in [0, 10], noise calibrated on 5: adding a record at the high bound moves the sum by 10, exact ε = 2.
    # The audit checks the pair against the claim's AddRemove object (padded datasets share one shape).
    from privaudit.audit.engines.tradeoff import audit_tradeoff

    dom = DatasetDomain(Box(0.0, 10.0), min_size=1, max_size=8, padded=True)
    x = dom.pack(np.array([[2.0], [5.0], [7.0]]))
    pats = {c.origin: c for c in input_patterns(AddRemove(), dom, x)}
    pair = pats["add a record at the high bound / add an outlier"]

    def audit(noise_bound):
        return audit_tradeoff(_BoundedSum(10.0, noise_bound), pair.x, pair.x_prime, n=20_000, rng=0,
                              attacker="logistic")

    assert audit(10.0).verdict == "pass"
    caught = audit(5.0)
    assert caught.verdict == "violation" and 1.0 < caught.epsilon_lb <= 2.0
    with pytest.raises(NonAdjacentPairError, match="2 steps apart under the claim.s adjacency AddRemove"):
        audit_tradeoff(_BoundedSum(10.0, 10.0), x, dom.pack(np.array([[2.0], [5.0], [7.0], [1.0], [1.0]])), n=2_000)
