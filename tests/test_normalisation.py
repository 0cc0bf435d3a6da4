"""Averaged DP-SGD releases: the accounted noisy sum passes, data-dependent divisors are caught (issue 26)."""

import pytest

from privaudit.audit.dpsgd.normalisation import averaged_release_runs, opacus_normaliser_runs
from privaudit.mechanisms.validation import InvalidParameterError


def test_noisy_sum_passes_and_data_dependent_divisors_are_certified_violations():
    ok = averaged_release_runs(4000, normaliser="sum", rng=0)
    assert not ok.violation and ok.epsilon_lb <= ok.epsilon_claimed
    expected = averaged_release_runs(4000, normaliser="expected", rng=0)  # q·|D|, |D| counting the canary
    actual = averaged_release_runs(4000, normaliser="actual", rng=0)  # the realised Poisson batch size
    assert expected.violation and expected.epsilon_lb > 3 * expected.epsilon_claimed
    assert actual.violation and actual.epsilon_lb > 2 * actual.epsilon_claimed
    with pytest.raises(InvalidParameterError, match="normaliser"):
        averaged_release_runs(10, normaliser="median")


def test_opacus_make_private_divisor_reveals_one_added_record():
    res = opacus_normaliser_runs(200, rng=0)
    assert res.details["settings"] == {"100": {"sample_rate": 0.1, "expected_batch_size": 10},
                                       "101": {"sample_rate": 1 / 11, "expected_batch_size": 9}}
    assert res.violation and res.epsilon_lb > 2.0 > res.epsilon_claimed
    with pytest.raises(InvalidParameterError, match="steps"):
        opacus_normaliser_runs(10, steps=11)
