"""Adjacency of audited pairs, group-privacy claims and the worst-pair search."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privaudit.audit.testing.negative_controls import AsymmetricLaplace
from privaudit.audit.engines.pair_search import (
    NonAdjacentPairError,
    adjacent_claim,
    candidate_pairs,
    group_claim,
    pair_distance,
    search_pairs,
)
from privaudit.mechanisms import GaussianMechanism, InvalidParameterError, LaplaceMechanism, PrivacyClaim


def test_pair_distance_in_the_claims_metric():
    assert pair_distance("l1<=1", [0, 0], [0.5, -0.5]) == (1.0, 1.0)
    d, r = pair_distance("l2<=2", [0, 0], [3, 4])
    assert (d, r) == (5.0, 2.0)
    assert pair_distance("replace-one", [0], [1]) is None


def test_group_claim_matches_composition_of_k_steps():
    # (ε, δ)-DP over k steps: (kε, k e^{(k−1)ε} δ) (Dwork & Roth, Thm 2.2 and its δ extension); μ-GDP: kμ.
    c = PrivacyClaim(0.5, 1e-6, "l2<=1", mu=0.3)
    g = group_claim(c, 3)
    assert g.epsilon == pytest.approx(1.5) and g.delta == pytest.approx(3 * math.exp(1.0) * 1e-6)
    assert g.mu == pytest.approx(0.9)
    # For a Gaussian the GDP part is exact: the pair at distance 3 is G_{3μ}.
    gm = GaussianMechanism(sigma=2.0)
    assert group_claim(gm.claim, 3).mu == pytest.approx(3 / 2.0)


def test_adjacent_claim_modes():
    c = LaplaceMechanism(epsilon=1.0).claim
    assert adjacent_claim(c, [0.0], [1.0])[0] is c
    with pytest.raises(NonAdjacentPairError, match="2 steps apart"):
        adjacent_claim(c, [0.0], [1.5])
    g, note = adjacent_claim(c, [0.0], [1.5], mode="group")
    assert g.epsilon == pytest.approx(2.0) and "group-privacy" in note
    assert adjacent_claim(PrivacyClaim(1.0, 0.0, "any"), [0.0], [100.0])[1] == ""
    assert "not checkable" in adjacent_claim(PrivacyClaim(1.0, 0.0, "label"), [0.0], [5.0])[1]
    with pytest.raises(InvalidParameterError, match="adjacency"):
        adjacent_claim(c, [0.0], [1.0], mode="sometimes")


@pytest.mark.parametrize("adjacency,norm", [("l1<=1", 1), ("l2<=0.5", 2)])
def test_candidates_are_adjacent_and_inside_the_domain(adjacency, norm):
    lo, hi = -np.ones(3), np.array([1.0, 2.0, 0.5])
    cands = candidate_pairs((lo, hi), adjacency, n_random=5, rng=0)
    r = float(adjacency.split("<=")[1])
    assert len(cands) > 2 * 3
    for x, xp, _ in cands:
        assert np.all(xp >= lo - 1e-12) and np.all(xp <= hi + 1e-12)
        assert 0 < np.linalg.norm(xp - x, ord=norm) <= r * (1 + 1e-9)
    origins = " ".join(o for _, _, o in cands)
    assert "-e0" in origins and "+e2" in origins and "sign flip" in origins and "random" in origins


def test_search_finds_the_sign_dependent_bug_and_certifies_it():
    mech = AsymmetricLaplace()  # correct on (0, 1), exact ε = 2.5 on (0, −1)
    res = search_pairs(mech, (np.full(1, -1.0), np.full(1, 1.0)), n=50_000, screen_n=2_000, rng=0)
    assert res.verdict == "violation" and 1.0 < res.epsilon_lb <= 2.5
    best = res.candidates[0]
    assert min(best.x.min(), best.x_prime.min()) < 0  # the bug lives at negative inputs
    # Bonferroni over the certified pairs.
    assert all(a.confidence == pytest.approx(1 - 0.05 / len(res.certified)) for a in res.certified)
    assert isinstance(res.seed, int)


def test_search_passes_a_correct_mechanism():
    res = search_pairs(LaplaceMechanism(epsilon=1.0), (np.full(1, -1.0), np.full(1, 1.0)), n=20_000,
                       screen_n=2_000, rng=1, certify=2)
    assert res.verdict == "pass" and res.epsilon_lb <= 1.0
