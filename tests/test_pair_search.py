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
from privaudit.mechanisms import (GaussianMechanism, InvalidInputError, InvalidParameterError, LaplaceMechanism,
                                  PrivacyClaim)


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


@pytest.mark.parametrize("adjacency,norm", [("l1<=1", 1), ("l2<=0.5", 2), ("linf<=1", np.inf)])
def test_candidates_are_adjacent_and_inside_the_domain(adjacency, norm):
    lo, hi = -np.ones(3), np.array([1.0, 2.0, 0.5])
    cands = candidate_pairs((lo, hi), adjacency, n_random=5, rng=0)
    r = float(adjacency.split("<=")[1])
    assert len(cands) > 2 * 3
    for c in cands:
        assert np.all(c.x_prime >= lo - 1e-12) and np.all(c.x_prime <= hi + 1e-12)
        assert np.all(c.x >= lo - 1e-12) and np.all(c.x <= hi + 1e-12)
        assert 0 < np.linalg.norm(c.x_prime - c.x, ord=norm) <= r * (1 + 1e-9)
    origins = " / ".join(c.origin for c in cands)
    for pattern in ("one up", "one down", "all up", "half up, half down", "-e0", "+e2", "random direction",
                    "low corner", "random point"):
        assert pattern in origins, pattern
    keys = {tuple(sorted((c.x.tobytes(), c.x_prime.tobytes()))) for c in cands}
    assert len(keys) == len(cands)  # unordered pairs are not repeated


def test_linf_patterns_move_every_answer_by_one():
    cands = candidate_pairs((np.zeros(4), np.full(4, 2.0)), "linf<=1", rng=0)
    half = [c for c in cands if c.origin.startswith("half up, half down from the centre")]
    assert len(half) == 1
    assert half[0].x.tolist() == [1, 1, 1, 1] and half[0].x_prime.tolist() == [2, 2, 0, 0]


def test_integer_and_histogram_candidates_stay_on_the_lattice():
    from privaudit.mechanisms.domains import Box

    box = Box(np.zeros(3), np.full(3, 5.0), integer=True)
    for adjacency in ("histogram", "int-l1<=2"):
        cands = candidate_pairs(box, adjacency, rng=1)
        assert cands
        for c in cands:
            assert np.all(c.x == np.round(c.x)) and np.all(c.x_prime == np.round(c.x_prime))
            assert PrivacyClaim(1.0, 0.0, adjacency).neighbourhood.are_neighbours(c.x, c.x_prime)


def test_dataset_candidates_are_true_neighbours():
    from privaudit.mechanisms.domains import Box, DatasetDomain
    from privaudit.mechanisms.neighbourhoods import AddRemove, ReplaceOne

    dom = DatasetDomain(records=Box(np.zeros(1), np.ones(1)), min_size=1, max_size=6)
    for nb in (AddRemove(), ReplaceOne()):
        cands = candidate_pairs(dom, nb, n_random=2, rng=0)
        assert len(cands) > 4
        assert all(nb.are_neighbours(c.x, c.x_prime) and dom.contains(c.x) and dom.contains(c.x_prime)
                   for c in cands)
        assert any("bound" in c.origin or "outlier" in c.origin for c in cands)


def test_group_candidates_are_several_steps_apart_and_audited_against_the_group_claim():
    cands = candidate_pairs((np.zeros(4), np.full(4, 2.0)), "l2<=1", rng=0, group=True)
    far = [c for c in cands if "every coordinate" in c.origin]
    assert far and max(PrivacyClaim(1.0, 0.0, "l2<=1").neighbourhood.group_distance(c.x, c.x_prime)
                       for c in far) == 2
    # A Laplace in l1 claimed under l2<=1 on 4 answers: an "all up" pair is 4 l1-steps but 2 l2-steps apart.
    mech = LaplaceMechanism(epsilon=0.5)
    res = search_pairs(mech, (np.zeros(4), np.full(4, 2.0)), n=20_000, screen_n=4_000, certify=2, rng=0,
                       neighbourhood="l2<=1", group=True)
    assert res.group and "group claim" in res.summary()
    assert all(a.claim.epsilon >= 0.5 for a in res.certified)


def test_search_finds_the_sign_dependent_bug_and_certifies_it():
    mech = AsymmetricLaplace()  # correct on (0, 1), exact ε = 2.5 on (0, −1)
    res = search_pairs(mech, (np.full(1, -1.0), np.full(1, 1.0)), n=50_000, screen_n=2_000, rng=0)
    assert res.verdict == "violation" and 1.0 < res.epsilon_lb <= 2.5
    best = res.best_pair
    assert min(best.x.min(), best.x_prime.min()) < 0  # the bug lives at negative inputs
    assert "x=[" in res.summary() and "runners-up" in res.summary()
    # Bonferroni over the certified pairs.
    assert all(a.confidence == pytest.approx(1 - 0.05 / len(res.certified)) for a in res.certified)
    assert isinstance(res.seed, int)


def test_search_passes_a_correct_mechanism():
    res = search_pairs(LaplaceMechanism(epsilon=1.0), (np.full(1, -1.0), np.full(1, 1.0)), n=20_000,
                       screen_n=2_000, rng=1, certify=2)
    assert res.verdict == "pass" and res.epsilon_lb <= 1.0


def test_search_is_exported_and_reads_the_declared_domain():
    from privaudit.audit import search_pairs as exported
    from privaudit.mechanisms.domains import Box

    assert exported is search_pairs
    mech = AsymmetricLaplace()
    with pytest.raises(InvalidParameterError, match="needs a domain"):
        search_pairs(mech, n=2_000)
    mech.domain = Box(np.full(1, -1.0), np.full(1, 1.0))
    res = search_pairs(mech, n=50_000, screen_n=2_000, certify=2, rng=0)
    assert res.verdict == "violation" and "box" in res.domain


def test_domain_of_the_wrong_kind_is_refused():
    from privaudit.mechanisms.domains import Box, DatasetDomain

    with pytest.raises(InvalidParameterError, match="DatasetDomain"):
        candidate_pairs(Box(np.zeros(2), np.ones(2)), "replace-one")
    with pytest.raises(InvalidParameterError, match="box"):
        candidate_pairs(DatasetDomain(records=Box(np.zeros(1), np.ones(1)), min_size=1, max_size=3), "l2<=1")


def test_cli_search_prints_the_pair_and_exits_1_on_a_violation(capsys):
    import json

    from privaudit.audit.app.cli import main

    mod = "privaudit.audit.testing.negative_controls"
    code = main(["search", f"{mod}:AsymmetricLaplace", "--allow-import", mod, "--domain", "[[-1], [1]]",
                 "-n", "20000", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["verdict"] == "violation" and out["neighbourhood"] == "l1<=1"
    assert min(out["x"] + out["x_prime"]) < 0 and out["runners_up"]
    assert main(["search", "laplace", "--params", '{"epsilon": 1.0}', "-n", "20000"]) == 2  # no domain anywhere
    assert "needs a domain" in capsys.readouterr().err
    assert main(["search", "laplace", "--params", "[1]", "--domain", "[[0], [1]]"]) == 2


class _BoundedSum:
    """Sum of records clamped to [0, clamp] + Lap(bound/ε), records declared in [0, 10]: correct iff clamp ≤ bound.

    With clamp = 10 and bound = 1 (the sensitivity computed from the wrong bound) the exact ε is 10: one record
    moving 0 → 10 shifts the sum by 10 under Lap(1).
    """

    def __init__(self, clamp: float, bound: float = 1.0, neighbourhood=None, padded: bool = True) -> None:
        from privaudit.mechanisms.domains import Box, DatasetDomain
        from privaudit.mechanisms.neighbourhoods import AddRemove

        self.clamp = clamp
        self.noise = LaplaceMechanism(epsilon=1.0, sensitivity=bound)
        self.claim = PrivacyClaim(1.0, 0.0, neighbourhood or AddRemove())
        self.domain = DatasetDomain(records=Box(np.zeros(1), np.full(1, 10.0)), min_size=1, max_size=4, padded=padded)

    def sample(self, x, n, rng=None):
        rows = np.asarray(x, dtype=float).reshape(len(x), -1)
        return self.noise.sample(np.nansum(np.clip(rows, 0.0, self.clamp), axis=0), n, rng)


@pytest.mark.parametrize("padded", [True, False])
def test_dataset_search_catches_a_clamping_bug_from_the_record_bounds(padded):
    res = search_pairs(_BoundedSum(clamp=10.0, padded=padded), n=20_000, certify=2, rng=0)
    assert res.verdict == "violation" and 1.0 < res.epsilon_lb <= 10.0
    pair = res.best_pair
    assert _BoundedSum(10.0).claim.neighbourhood.are_neighbours(pair.x, pair.x_prime)
    assert "records" in res.summary() and "add-remove" in res.summary()
    ok = search_pairs(_BoundedSum(clamp=1.0, padded=padded), n=20_000, certify=2, rng=0)
    assert ok.verdict == "pass"


@pytest.mark.privacy(domain=(np.full(1, -1.0), np.full(1, 1.0)))
def test_privacy_marker_gives_the_domain_to_search():
    from privaudit.audit.testing import PrivacyAssertionError, assert_private

    with pytest.raises(PrivacyAssertionError, match=r"found by search_pairs.*x'=\["):
        assert_private(AsymmetricLaplace(), n=20_000, rng=0)  # no pair, no declared domain: the marker's


# --- datasets: bounded sums and means with the classic clamping bugs ------------------------------------------
# Clamp [−2, 0.5] (|lower| > |upper|, so a sensitivity from the upper bound alone is wrong under both
# neighbourhoods), records of the declared domain in [−4.5, 3] (the clamp widened by its width), 1 to 10 records.
CLAMP = {"epsilon": 1.0, "lower": -2.0, "upper": 0.5}
R_LO, R_HI, MIN_SIZE = -4.5, 3.0, 1


def _exact_bound(cls, neighbourhood: str, bug: str) -> float:
    """ε on the worst pair (sensitivity-bound: exact) or an upper bound on it (clamp-after-noise), from the docstrings.

    sensitivity-bound: a Laplace shift of the correct Δ at the scale of |upper|: ε·Δ/Δ_bug, with Δ/Δ_bug =
    max(|L|, |U|)/|U| (sum, add/remove), (U − L)/|U| (sum, replace-one; the mean under both).
    clamp-after-noise: post-processing of a Laplace shift of the unclamped aggregate's sensitivity s over the
    domain at the correct scale Δ/ε: ε·s/Δ, s = max(|R_lo|, |R_hi|) or R_hi − R_lo for the sum, and
    (R_hi − R_lo)/(m + 1) or (R_hi − R_lo)/m for the mean (m = min_size; Δ carries the same divisor).
    """
    lo, hi, eps = CLAMP["lower"], CLAMP["upper"], CLAMP["epsilon"]
    add_remove = neighbourhood == "add-remove"
    if bug == "sensitivity-bound":
        ratio = max(abs(lo), abs(hi)) / abs(hi) if (cls.__name__ == "UnsafeBoundedSum" and add_remove) else \
            (hi - lo) / abs(hi)
        return eps * ratio
    if cls.__name__ == "UnsafeBoundedSum":
        return eps * (max(abs(R_LO), abs(R_HI)) / max(abs(lo), abs(hi)) if add_remove else (R_HI - R_LO) / (hi - lo))
    return eps * (R_HI - R_LO) / (hi - lo)


def _unsafe_aggregates():
    from privaudit.mechanisms.unsafe import UnsafeBoundedMean, UnsafeBoundedSum

    return UnsafeBoundedSum, UnsafeBoundedMean


# Replace-one searches screen ~4× the candidates (each extreme record replaced by each record to try): slow;
# the configuration test below covers replace-one (the mean's sensitivity bug) in the quick suite.
@pytest.mark.parametrize("neighbourhood", ["add-remove", pytest.param("replace-one", marks=pytest.mark.slow)])
@pytest.mark.parametrize("aggregate", ["sum", "mean"])
def test_dataset_search_catches_both_clamping_bugs_from_the_declared_domain(aggregate, neighbourhood):
    """Each bug is a violation on a true neighbour of the declared domain, below its exact ε; the twin passes."""
    cls = dict(zip(("sum", "mean"), _unsafe_aggregates()))[aggregate]
    for bug in ("clamp-after-noise", "sensitivity-bound"):
        mech = cls(**CLAMP, bug=bug, neighbourhood=neighbourhood)
        assert (mech.domain.records.lower[0], mech.domain.records.upper[0], mech.domain.min_size) == (R_LO, R_HI,
                                                                                                       MIN_SIZE)
        res = search_pairs(mech, n=10_000, screen_n=2_000, certify=2, rng=0)
        assert res.verdict == "violation", (bug, res.summary())
        assert 1.0 < res.epsilon_lb <= _exact_bound(cls, neighbourhood, bug), (bug, res.epsilon_lb)
        pair = res.best_pair
        assert mech.claim.neighbourhood.are_neighbours(pair.x, pair.x_prime)
        assert mech.domain.contains(pair.x) and mech.domain.contains(pair.x_prime)
        assert f"under '{neighbourhood}'" in res.summary() and "records in" in res.summary()
    ok = search_pairs(cls(**CLAMP, neighbourhood=neighbourhood), n=10_000, screen_n=2_000, certify=2, rng=0)
    assert ok.verdict == "pass" and ok.epsilon_lb <= 1.0


def test_bounded_aggregates_refuse_bad_parameters():
    from privaudit.mechanisms.unsafe import UnsafeBoundedMean, UnsafeBoundedSum

    with pytest.raises(InvalidParameterError, match="bug must be one of"):
        UnsafeBoundedSum(**CLAMP, bug="clamp-twice")
    with pytest.raises(InvalidParameterError, match="'add-remove' or 'replace-one'.*'label'"):
        UnsafeBoundedSum(**CLAMP, neighbourhood="label")
    with pytest.raises(InvalidParameterError, match="upper != 0"):
        UnsafeBoundedSum(epsilon=1.0, lower=-1.0, upper=0.0, bug="sensitivity-bound")
    with pytest.raises(InvalidParameterError, match="lower must be < upper"):
        UnsafeBoundedSum(epsilon=1.0, lower=1.0, upper=1.0)
    with pytest.raises(InvalidParameterError, match="records_low must be <= records_high"):
        UnsafeBoundedSum(**CLAMP, records_low=3.0, records_high=1.0)
    with pytest.raises(InvalidParameterError, match="min_size"):
        UnsafeBoundedMean(**CLAMP, min_size=0)  # a mean needs a record: its sensitivity divides by min_size
    with pytest.raises(InvalidInputError, match="empty dataset"):
        UnsafeBoundedMean(**CLAMP).sample(np.full(3, np.nan), 2)
    with pytest.raises(InvalidInputError, match="records of 2 values, expected 1"):
        UnsafeBoundedSum(**CLAMP).sample(np.ones((3, 2)), 2)


def test_bounded_aggregate_releases_the_clamped_aggregate():
    """Mean and spread of the releases against the closed form (a clamp before or after the noise)."""
    sum_cls, mean_cls = _unsafe_aggregates()
    x = np.array([-4.0, 0.25, 3.0])
    n = 200_000
    for mech, centre in ((sum_cls(**CLAMP), -2.0 + 0.25 + 0.5), (mean_cls(**CLAMP), (-2.0 + 0.25 + 0.5) / 3),
                         (sum_cls(**CLAMP, bug="sensitivity-bound"), -2.0 + 0.25 + 0.5)):
        out = mech.sample(x, n, rng=1)
        assert out.shape == (n, 1)
        b = mech.noise_scale  # Lap(b): sd b√2; the mean within 5 standard errors
        assert abs(out.mean() - centre) < 5 * b * math.sqrt(2 / n)
        assert out.std() == pytest.approx(b * math.sqrt(2), rel=0.02)
    assert sum_cls(**CLAMP).noise_scale == 2.0 and sum_cls(**CLAMP, bug="sensitivity-bound").noise_scale == 0.5
    clamped = mean_cls(**CLAMP, bug="clamp-after-noise").sample(x, 1000, rng=2)
    assert clamped.min() >= -2.0 and clamped.max() <= 0.5  # the release is clamped, the records were not
    # Mean 3 (unclamped) + Lap(1.25), clamped to 0.5: P(release = 0.5) = 1 − e^{−2}/2, within 5 standard errors.
    at_top = np.mean(mean_cls(**CLAMP, bug="clamp-after-noise").sample(np.full(1, 3.0), 20_000, rng=2) == 0.5)
    p = 1 - 0.5 * math.exp(-2.0)
    assert abs(at_top - p) < 5 * math.sqrt(p * (1 - p) / 20_000)


def test_dataset_domain_in_a_config_catches_both_bugs_and_passes_the_twins(tmp_path):
    """The same bugs through a configuration: a trade-off audit with domain = {kind = "datasets", ...}."""
    from privaudit.audit.app.config import parse_config
    from privaudit.audit.app.runner import run_config

    mod = "privaudit.mechanisms.unsafe"
    # At most 4 records: fewer and smaller candidate datasets than the declared 10 (the bugs show on 1 or 2 records).
    domain = {"kind": "datasets", "records": {"low": [R_LO], "high": [R_HI]}, "min_size": MIN_SIZE, "max_size": 4}
    padded = {**domain, "padded": True}
    audits = [
        {"kind": "tradeoff", "n": 10_000, "domain": padded,
         "mechanism": {"name": f"{mod}:UnsafeBoundedSum", **CLAMP, "bug": "clamp-after-noise"}},
        {"kind": "tradeoff", "n": 10_000, "domain": domain,
         "mechanism": {"name": f"{mod}:UnsafeBoundedMean", **CLAMP, "bug": "sensitivity-bound",
                       "neighbourhood": "replace-one"}},
        {"kind": "tradeoff", "n": 10_000, "domain": padded,
         "mechanism": {"name": f"{mod}:UnsafeBoundedSum", **CLAMP}},
        {"kind": "tradeoff", "n": 10_000, "domain": {"kind": "declared"},
         "mechanism": {"name": f"{mod}:UnsafeBoundedMean", **CLAMP}},
    ]
    cfg = parse_config({"name": "datasets", "seed": 3, "audits": audits}, allow_imports=[mod])
    broken_sum, broken_mean, ok_sum, ok_mean = run_config(cfg, out=tmp_path, figures=False,
                                                          use_cache=False).report["audits"]
    for res, nb in ((broken_sum, "add-remove"), (broken_mean, "replace-one")):
        assert res["verdict"] == "violation" and res["epsilon_lb"] > 1.0
        note = next(n for n in res["notes"] if "search_pairs" in n)
        assert f"under '{nb}'" in note and "x=[" in note and "x'=[" in note
    assert broken_sum["epsilon_lb"] <= _exact_bound(_unsafe_aggregates()[0], "add-remove", "clamp-after-noise")
    assert broken_mean["epsilon_lb"] <= _exact_bound(_unsafe_aggregates()[1], "replace-one", "sensitivity-bound")
    assert ok_sum["verdict"] == ok_mean["verdict"] == "pass"


def test_a_failing_assert_private_on_datasets_names_its_pair_by_coordinates():
    from privaudit.audit.testing import PrivacyAssertionError, assert_private

    mech = _unsafe_aggregates()[0](**CLAMP, bug="sensitivity-bound")
    with pytest.raises(PrivacyAssertionError) as err:
        assert_private(mech, domain=mech.domain, n=10_000, rng=0)
    text = str(err.value)
    # The pair by its records (x' adds one to x), not by a direction's index.
    assert "found by search_pairs" in text and "add a record" in text and "random direction" not in text
    x = text.split(" at x=[")[1].split("]")[0]
    x_prime = text.split(", x'=[")[1].split("]")[0]
    assert len(x_prime.split(",")) == len(x.split(",")) + 1


def test_cli_search_on_a_dataset_domain(capsys):
    import json

    from privaudit.audit.app.cli import main

    mod = "privaudit.mechanisms.unsafe"
    domain = {"kind": "datasets", "records": {"low": [R_LO], "high": [R_HI]}, "min_size": 1, "max_size": 3}
    params = {**CLAMP, "bug": "sensitivity-bound"}
    code = main(["search", f"{mod}:UnsafeBoundedSum", "--allow-import", mod, "--params", json.dumps(params),
                 "--domain", json.dumps(domain), "-n", "10000", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["verdict"] == "violation" and out["neighbourhood"] == "add-remove"
    assert abs(len(out["x"]) - len(out["x_prime"])) == 1 and "size in [1, 3]" in out["domain"]


@pytest.mark.parametrize("neighbourhood", ["add-remove", "replace-one"])
def test_bounded_aggregates_dp_event_is_the_claim_for_the_twin_and_unsupported_for_the_bugs(neighbourhood):
    """dp_accounting, independently, gives the correct twin's event ε = the claim; a bugged variant's event
    is UnsupportedDpEvent (never the Laplace event its code claims)."""
    import dp_accounting as dpa

    from privaudit.mechanisms.unsafe import UnsafeBoundedMean, UnsafeBoundedSum

    for cls in (UnsafeBoundedSum, UnsafeBoundedMean):
        twin = cls(epsilon=0.7, lower=-2.0, upper=0.5, neighbourhood=neighbourhood)
        acc = dpa.pld.PLDAccountant()
        acc.compose(twin.dp_event())
        assert acc.get_epsilon(1e-12) == pytest.approx(0.7, rel=1e-6)
        for bug in ("clamp-after-noise", "sensitivity-bound"):
            bugged = cls(epsilon=0.7, lower=-2.0, upper=0.5, neighbourhood=neighbourhood, bug=bug)
            assert isinstance(bugged.dp_event(), dpa.UnsupportedDpEvent)


def test_default_screening_scales_with_the_budget_and_two_pairs_are_certified():
    """screen_n defaults to n // 100 with a floor of 1 000 (n itself when smaller); the best third is screened on 4×."""
    from privaudit.audit.engines.pair_search import SCREEN_FLOOR, SCREEN_SHARE

    mech = LaplaceMechanism(epsilon=1.0)
    dom = (np.full(2, -1.0), np.full(2, 1.0))
    for n, first in ((600, 600), (20_000, SCREEN_FLOOR), (300_000, 300_000 // SCREEN_SHARE)):
        res = search_pairs(mech, dom, n=n, rng=0)
        assert {c.screen_n for c in res.candidates} == {first, 4 * first}, n
        assert len(res.certified) == 2 and all(a.n == n for a in res.certified)
        assert all(a.confidence == pytest.approx(1 - 0.05 / 2) for a in res.certified)


def test_plug_in_epsilon_of_a_laplace_shift_is_below_and_near_its_epsilon():
    """The screening statistic on a Laplace shift of 1 (ε = 1): two standard errors of shrinkage keep it below ε.

    Monte Carlo at 10⁵ releases per side (seed 0): the best vertex's standard error is at most a few
    hundredths in log, so the shrunk statistic lands in (0.8, 1) and the raw one within 0.1 of 1.
    """
    from privaudit.attacks.threshold_selection import empirical_curve
    from privaudit.audit.engines.pair_search import _plug_in_epsilon

    gen = np.random.default_rng(0)
    s0, s1 = (np.sort(np.clip(gen.laplace(mu, 1.0, 100_000), 0, 1)) for mu in (0.0, 1.0))  # the LR: clip(o) − ½
    fpr, fnr, _ = empirical_curve(s0, s1, presorted=True)
    shrunk, raw = _plug_in_epsilon(fpr, fnr, 0.0, 100_000), _plug_in_epsilon(fpr, fnr, 0.0, 100_000, shrink=0.0)
    assert 0.8 < shrunk < 1.0 and abs(raw - 1.0) < 0.1 and shrunk < raw
