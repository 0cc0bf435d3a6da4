"""Input domains: membership, projection, corners and boundary points, sampling, plain-data round trip, errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privaudit.mechanisms import InvalidInputError, InvalidParameterError
from privaudit.mechanisms.domains import Box, Categorical, DatasetDomain, domain_from_spec, domain_of
from privaudit.mechanisms.validation import ParameterTypeError

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True)


# ------------------------------------------------------------------------------------------- Box
def test_box_contains_checks_bounds_size_finiteness_and_integrality():
    box = Box([0.0, -1.0], [1.0, 1.0])
    assert box.contains([0.5, 0.0]) and box.contains(np.array([[1.0, -1.0]]))  # any layout of 2 coordinates
    assert not box.contains([1.5, 0.0]) and not box.contains([0.5]) and not box.contains([np.nan, 0.0])
    assert not box.contains("ab") and not box.contains([np.inf, 0.0])
    ibox = Box([0, 0], [3, 3], integer=True)
    assert ibox.contains([1, 2]) and not ibox.contains([1.5, 2])
    assert Box(0.0, 1.0).shape == (1,) and Box(np.zeros((2, 2)), np.ones((2, 2))).shape == (2, 2)


@SETTINGS
@given(st.integers(1, 4), st.booleans(), st.integers(0, 2**32 - 1))
def test_clip_is_the_nearest_point_of_the_box(d, integer, seed):
    gen = np.random.default_rng(seed)
    lo = gen.integers(-3, 1, size=d).astype(float)
    box = Box(lo, lo + gen.integers(0, 3, size=d), integer=integer)
    x = gen.normal(scale=4.0, size=d)
    p = box.clip(x)
    assert box.contains(p)
    if integer:  # brute force over every lattice point of the box
        pts = itertools.product(*[range(int(a), int(b) + 1) for a, b in zip(box.low, box.high)])
        best = min(np.linalg.norm(np.array(q) - x) for q in pts)
    else:  # no sampled point of the box is nearer, and the corners are included
        pts = box.sample(500, gen) + box.corners()
        best = min(np.linalg.norm(q - x) for q in pts)
    assert np.linalg.norm(p - x) <= best + 1e-12


def test_corners_are_all_vertices_until_the_limit_then_the_pattern_corners():
    box = Box(np.zeros(3), np.array([1.0, 2.0, 3.0]))
    corners = box.corners()
    assert len(corners) == 8 and len({c.tobytes() for c in corners}) == 8
    assert all(box.contains(c) and np.all((c == box.lower) | (c == box.upper)) for c in corners)
    big = Box(np.zeros(10), np.ones(10))
    cs = big.corners()
    assert len(cs) == 7 and all(big.contains(c) and set(np.unique(c)) <= {0.0, 1.0} for c in cs)
    assert any(np.array_equal(c, [1, 0] * 5) for c in cs)  # alternating
    assert len(Box(np.zeros(6), np.ones(6)).corners(max_count=64)) == 64


def test_boundary_points_are_corners_and_face_centres_inside_the_box():
    box = Box([0.0, 0.0], [2.0, 4.0])
    pts = box.boundary_points()
    assert all(box.contains(p) for p in pts)
    assert any(np.array_equal(p, [0.0, 2.0]) for p in pts) and any(np.array_equal(p, [2.0, 4.0]) for p in pts)
    assert len(pts) == 4 + 4


def test_sampling_is_inside_reproducible_and_uses_every_lattice_point():
    box = Box([0, 0], [1, 2], integer=True)
    a, b = box.sample(400, 3), box.sample(400, 3)
    assert all(np.array_equal(p, q) for p, q in zip(a, b))
    assert all(box.contains(p) for p in a)
    assert {tuple(p) for p in a} == set(itertools.product((0.0, 1.0), (0.0, 1.0, 2.0)))
    real = Box([0.0], [1e-3]).sample(50, 0)
    assert all(0 <= p[0] <= 1e-3 for p in real) and len({p[0] for p in real}) == 50


@pytest.mark.parametrize("make,err,match", [
    (lambda: Box([1.0], [0.0]), InvalidParameterError, r"low\[0\]=1.0 > high\[0\]=0.0"),
    (lambda: Box([np.nan], [1.0]), InvalidParameterError, "nan"),
    (lambda: Box([0.0], [np.inf]), InvalidParameterError, "inf"),
    (lambda: Box([0.0, 0.0], [1.0]), InvalidParameterError, "one shape"),
    (lambda: Box([], []), InvalidParameterError, "at least one"),
    (lambda: Box([0.5], [2.0], integer=True), InvalidParameterError, "integer bounds"),
    (lambda: Box([0.0], [1.0], integer="yes"), ParameterTypeError, "'yes'"),
    (lambda: Box("ab", "cd"), InvalidInputError, "'ab'"),
    (lambda: Box([0.0], [1.0]).clip([0.0, 1.0]), InvalidInputError, "1 coordinates"),
    (lambda: Box([0.0], [1.0]).clip([np.nan]), InvalidInputError, "NaN"),
    (lambda: Box([0.0], [1.0]).sample(0), InvalidParameterError, "n"),
    (lambda: Box([0.0], [1.0]).check("x", [2.0]), InvalidInputError, r"x=\[2.0\]"),
])
def test_bad_boxes_name_the_value(make, err, match):
    with pytest.raises(err, match=match):
        make()


# ----------------------------------------------------------------------------------- Categorical
def test_categorical_membership_index_sampling():
    c = Categorical(["a", "b", 3])
    assert c.contains("a") and c.contains(3) and c.contains(np.int64(3)) and not c.contains("z")
    assert not c.contains([1, 2]) and not c.contains({"unhashable": 1})
    assert c.index("b") == 1 and c.boundary_points() == ["a", "b", 3]
    draws = c.sample(300, 0)
    assert set(draws) == {"a", "b", 3} and draws == c.sample(300, 0)
    with pytest.raises(InvalidInputError, match="'z'"):
        c.index("z")


@pytest.mark.parametrize("cats,err,match", [
    ("abc", ParameterTypeError, "'abc'"), (["a"], InvalidParameterError, "two"), (["a", "a"], InvalidParameterError,
                                                                                  "distinct"),
    ([1.0, float("nan")], InvalidParameterError, "nan"), ([[1], [2]], ParameterTypeError, "hashable"),
    (5, ParameterTypeError, "5"),
])
def test_bad_categoricals_name_the_value(cats, err, match):
    with pytest.raises(err, match=match):
        Categorical(cats)


# -------------------------------------------------------------------------------------- datasets
def test_dataset_domain_membership_by_size_records_and_padding():
    dom = DatasetDomain(Box([0.0, 0.0], [1.0, 1.0]), min_size=1, max_size=3)
    assert dom.contains(np.array([[0.5, 0.5], [1.0, 0.0]]))
    assert not dom.contains(np.zeros((0, 2))) and not dom.contains(np.zeros((4, 2)))  # sizes 0 and 4
    assert not dom.contains(np.array([[0.5, 2.0]]))  # a record out of bounds
    assert not dom.contains(np.array([[np.nan, np.nan], [0.5, 0.5]]))  # NaN without padding
    assert not dom.contains(np.zeros((2, 3)))  # records of 3 values
    pad = DatasetDomain(Box(0.0, 10.0), min_size=0, max_size=3, padded=True)
    assert pad.contains(np.array([1.0, np.nan, 2.0])) and not pad.contains(np.array([1.0, 2.0]))
    assert pad.contains(np.full(3, np.nan))
    assert any(np.all(np.isnan(p)) for p in pad.boundary_points())  # the empty dataset is a boundary point
    np.testing.assert_array_equal(pad.present(np.array([1.0, np.nan, 2.0])), [[1.0], [2.0]])
    with pytest.raises(InvalidInputError, match="NaN only in part"):
        dom.present(np.array([[np.nan, 0.5]]))
    with pytest.raises(InvalidInputError, match="3 rows"):
        pad.present(np.array([1.0, 2.0]))


def test_dataset_pack_clip_boundary_and_sample_stay_in_the_domain():
    for padded in (False, True):
        dom = DatasetDomain(Box([0, 0], [2, 2], integer=True), min_size=1, max_size=4, padded=padded)
        x = dom.pack(np.array([[1.0, 1.0], [2.0, 0.0]]))
        assert dom.contains(x) and x.shape == ((4, 2) if padded else (2, 2))
        clipped = dom.clip(np.array([[5.2, -1.0], [1.0, 1.0]] + ([[np.nan, np.nan]] * 2 if padded else [])))
        np.testing.assert_array_equal(dom.present(clipped), [[2.0, 0.0], [1.0, 1.0]])
        pts = dom.boundary_points()
        assert pts and all(dom.contains(p) for p in pts)
        assert any(np.array_equal(dom.present(p), np.full((4, 2), 2.0)) for p in pts)  # every record high, largest
        draws = dom.sample(30, 1)
        assert all(dom.contains(p) for p in draws) and len({len(dom.present(p)) for p in draws}) > 1
    scalar = DatasetDomain(Box(0.0, 1.0), min_size=2, max_size=5)
    assert scalar.pack([[0.1], [0.2]]).shape == (2,)  # records of one value: a 1-d dataset


@pytest.mark.parametrize("make,err,match", [
    (lambda: DatasetDomain((0.0, 1.0)), ParameterTypeError, "Box"),
    (lambda: DatasetDomain(Box(0.0, 1.0), min_size=5, max_size=2), InvalidParameterError, "max_size"),
    (lambda: DatasetDomain(Box(0.0, 1.0), min_size=-1), InvalidParameterError, "min_size"),
    (lambda: DatasetDomain(Box(0.0, 1.0), max_size=2.5), ParameterTypeError, "max_size"),
    (lambda: DatasetDomain(Box(0.0, 1.0), padded=1), ParameterTypeError, "padded"),
    (lambda: DatasetDomain(Box(0.0, 1.0), max_size=10**9), InvalidParameterError, "max_size=1000000000"),
    (lambda: Box([0.0], [1.0], shape=(3,)), TypeError, "shape"),
    (lambda: DatasetDomain(Box(0.0, 1.0), max_size=1000).sample(10**6), InvalidParameterError, "n=1000000"),
    (lambda: Box(np.zeros(10), np.ones(10)).sample(10**8), InvalidParameterError, "n=100000000"),
    (lambda: DatasetDomain(Box(0.0, 1.0)).present(np.array([1.0, np.inf])), InvalidInputError, "inf"),
    (lambda: DatasetDomain(Box(0.0, 1.0)).present(3.0), InvalidInputError, "dataset"),
])
def test_bad_dataset_domains_name_the_value(make, err, match):
    with pytest.raises(err, match=match):
        make()


# ------------------------------------------------------------------------------------- specs
def test_domains_round_trip_through_plain_data_and_mechanisms_declare_them():
    doms = [Box([0.0, 1.0], [1.0, 2.0]), Box([0], [5], integer=True), Categorical(["x", "y"]),
            DatasetDomain(Box([0.0], [1.0]), min_size=0, max_size=7, padded=True)]
    for d in doms:
        assert domain_from_spec(d.to_dict()) == d
    assert domain_from_spec(([0.0], [1.0])) == Box([0.0], [1.0])
    assert domain_from_spec({"low": 0, "high": 3, "integer": True}) == Box(0, 3, integer=True)

    class WithBox:
        domain = ([-1.0, -1.0], [1.0, 1.0])

    class WithDomain:
        domain = Categorical([0, 1])

    assert domain_of(WithBox()) == Box([-1.0, -1.0], [1.0, 1.0])
    assert domain_of(WithDomain()) is WithDomain.domain and domain_of(object()) is None
    with pytest.raises(InvalidParameterError, match="'sphere'"):
        domain_from_spec({"kind": "sphere"})
    with pytest.raises(InvalidParameterError, match="colour"):
        domain_from_spec({"kind": "box", "low": 0, "high": 1, "colour": 3})
    with pytest.raises(ParameterTypeError, match="'everything'"):
        domain_from_spec("everything")
