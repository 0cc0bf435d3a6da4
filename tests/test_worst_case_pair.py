"""The worst-case pair as a capability (HasWorstCasePair) and the pair derived from a claim's neighbourhood."""

from __future__ import annotations

import numpy as np
import pytest

from privaudit.attacks.pairs import NeighbouringPair, worst_case_pair
from privaudit.audit.engines.release_views import tradeoff_setup
from privaudit.mechanisms import (GaussianMechanism, InvalidParameterError, LaplaceMechanism, ModulatedMechanism,
                                  PrivacyClaim, RandomizedResponse)
from privaudit.mechanisms.domains import Box, DatasetDomain
from privaudit.mechanisms.protocol import HasWorstCasePair


class _Shift:
    """x + N(0, 1) per coordinate, claiming the given adjacency (no pair of its own)."""

    def __init__(self, adjacency: str, domain=None) -> None:
        self.claim = PrivacyClaim(1.0, 1e-5, adjacency)
        if domain is not None:
            self.domain = domain

    def sample(self, x, n, rng=None):
        x = np.asarray(x, dtype=float)
        return x + np.random.default_rng(rng).standard_normal((n, *x.shape))


class _OwnPair(_Shift):
    """States its own worst-case pair (which the claim's neighbourhood would not give)."""

    def worst_case_pair(self, *, dim: int = 1) -> NeighbouringPair:
        return NeighbouringPair(np.full(dim, -0.5), np.full(dim, 0.5), self, "own pair", exact_mu=1.0)


def test_shipped_mechanisms_state_their_pair_through_the_capability():
    for mech in (GaussianMechanism(sigma=1.0), LaplaceMechanism(epsilon=1.0), RandomizedResponse(epsilon=1.0),
                 ModulatedMechanism(alpha=0.5, lam=0.5, omega=0.8, dim=2, sigma=2.0)):
        assert isinstance(mech, HasWorstCasePair)
        assert worst_case_pair(mech, dim=2).description == mech.worst_case_pair(dim=2).description


def test_a_user_mechanism_defining_the_capability_is_used():
    mech = _OwnPair("l2<=1")
    pair = worst_case_pair(mech, dim=3)
    assert pair.description == "own pair" and pair.mechanism is mech and pair.exact_mu == 1.0
    np.testing.assert_array_equal(pair.x, np.full(3, -0.5))
    setup = tradeoff_setup(mech)  # the release-view path takes it too
    np.testing.assert_array_equal(setup.x_prime, np.full(1, 0.5))


@pytest.mark.parametrize("adjacency,expected", [
    ("l2<=2", [2.0, 0.0, 0.0]),       # 0 vs Δ·e1 in the neighbourhood's norm
    ("l1<=0.5", [0.5, 0.0, 0.0]),
    ("linf<=1", [1.0, 1.0, 1.0]),     # the corner of the ℓ∞ ball
    ("int-l1<=3", [3.0, 0.0, 0.0]),
    ("histogram", [1.0, 0.0, 0.0]),
    ("keys(k=2,c=1.5)", [1.5, 1.5, 0.0]),
])
def test_a_mechanism_with_only_a_vector_claim_gets_the_fallback_pair(adjacency, expected):
    mech = _Shift(adjacency)
    pair = worst_case_pair(mech, dim=3)
    np.testing.assert_array_equal(pair.x, np.zeros(3))
    np.testing.assert_array_equal(pair.x_prime, expected)
    assert pair.mechanism is mech and pair.exact_mu is None and pair.exact_curve([0.1]) is None
    assert mech.claim.neighbourhood.are_neighbours(pair.x, pair.x_prime)
    assert f"claim's neighbourhood {adjacency!r}" in pair.description and "_Shift" in pair.description


def test_the_fallback_pair_lies_in_the_declared_domain():
    mech = _Shift("l2<=1", domain=Box(np.full(2, 1.0), np.full(2, 3.0)))
    pair = worst_case_pair(mech, dim=5)  # the box fixes the dimension
    np.testing.assert_array_equal(pair.x, [1.0, 1.0])
    np.testing.assert_array_equal(pair.x_prime, [2.0, 1.0])
    data = _Shift("add-remove", domain=DatasetDomain(Box(np.zeros(1), np.ones(1)), min_size=1, max_size=3))
    pair = worst_case_pair(data)
    assert data.claim.neighbourhood.are_neighbours(pair.x, pair.x_prime) and data.domain.contains(pair.x_prime)


@pytest.mark.parametrize("mech", [object(), _Shift("add-remove"), _Shift("any"), _Shift("replace-one")])
def test_without_a_pair_or_a_derivable_one_the_error_stays(mech):
    with pytest.raises(InvalidParameterError, match="no worst-case pair is known.*pass x and x_prime"):
        worst_case_pair(mech)


class _ShiftL1(_Shift):
    """A registrable mechanism with an ℓ1 claim and no pair of its own."""

    _parameter_constraints: dict = {}

    def __init__(self) -> None:
        super().__init__("l1<=2")


def test_the_tradeoff_kind_audits_the_fallback_pair_when_no_pair_is_given():
    from privaudit.audit.kinds.tradeoff import FIELDS, run
    from privaudit.audit.schema import components

    components.MECHANISMS.register("test-shift-l1", _ShiftL1)
    try:
        params = {k: f.default for k, f in FIELDS.items()}
        params.update(mechanism={"name": "test-shift-l1"}, n=2000, dim=2)
        derived = run(params, np.random.default_rng(0)).result
        explicit = run({**params, "x": [0.0, 0.0], "x_prime": [2.0, 0.0]}, np.random.default_rng(0)).result
    finally:
        components.MECHANISMS.unregister("test-shift-l1")
    assert derived.epsilon_lb == explicit.epsilon_lb and derived.operating_point == explicit.operating_point
