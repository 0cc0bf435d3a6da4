"""The pytest plugin, exercised through pytester: a user's suite with privacy assertions."""

import pytest

pytest_plugins = ["pytester"]

USER_TESTS = '''
import numpy as np
import pytest
from privaudit.audit.testing import assert_private, assert_unbiased
from privaudit.mechanisms import GaussianMechanism, PrivacyClaim


class LeakyGaussian:
    """Claims (1, 1e-5) but uses 30% of the noise it needs."""
    claim = PrivacyClaim(1.0, 1e-5, "l2<=1")
    def __init__(self):
        self.inner = GaussianMechanism(sigma=0.3 * GaussianMechanism(epsilon=1.0, delta=1e-5).sigma)
    def sample(self, x, n, rng=None):
        return self.inner.sample(x, n, rng)


def test_correct_gaussian():
    assert_private(GaussianMechanism(epsilon=1.0, delta=1e-5), np.zeros(1), np.ones(1), n=50_000)


def test_leaky_gaussian():
    assert_private(LeakyGaussian(), np.zeros(1), np.ones(1), n=50_000)


@pytest.mark.privacy(epsilon=0.2)
def test_budget_from_marker():
    assert_private(GaussianMechanism(epsilon=1.0, delta=1e-5), np.zeros(1), np.ones(1), n=50_000)


def test_unbiased_mean():
    assert_unbiased(lambda n, rng: rng.normal(2.0, 1.0, size=(n, 2)), [2.0, 2.0], n=20_000, name="mean")


def test_biased_mean():
    assert_unbiased(lambda n, rng: rng.normal(2.1, 1.0, size=(n, 2)), [2.0, 2.0], n=20_000, name="shifted mean")


def test_rng_fixture(privacy_rng):
    print("DRAW", privacy_rng.integers(1 << 30))
'''


@pytest.fixture
def outcome(pytester):
    pytester.makepyfile(test_user=USER_TESTS)
    return pytester.runpytest("-rf", "-s", "-p", "no:cacheprovider", "--privacy-seed=7")


def test_correct_mechanism_passes_and_broken_one_fails_with_useful_message(outcome):
    outcome.assert_outcomes(passed=3, failed=3)  # leaky, biased and the marker budget (ε = 0.2) fail
    out = outcome.stdout.str()
    assert "test_leaky_gaussian" in out and "test_biased_mean" in out
    # The failure message states the certified bound, the claim, n, the confidence and the seed.
    for fragment in ("certified epsilon >=", "epsilon=1, delta=1e-05", "n=50000", "99.9000% confidence", "--privacy-seed=7"):
        assert fragment in out
    for fragment in ("shifted mean is biased", "p-value", "simultaneous CI", "n=20000"):
        assert fragment in out
    assert "privaudit: --privacy-seed=7" in out  # the seed is logged in the header


def test_marker_budget_and_sample_scaling(pytester):
    pytester.makepyfile(test_user=USER_TESTS)
    result = pytester.runpytest("-q", "-rf", "-p", "no:cacheprovider", "--privacy-samples=0.5", "-k", "marker or leaky")
    # ε = 0.2 (from the marker) is far below what σ(1, 1e-5) delivers, so the certified bound exceeds it;
    # --privacy-samples=0.5 halves n in every assertion.
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    assert "epsilon=0.2, delta=1e-05" in out
    assert "n=25000" in out and "n=50000" not in out


def _draws(pytester, seed):
    result = pytester.runpytest("-q", "-s", "-p", "no:cacheprovider", f"--privacy-seed={seed}", "-k", "fixture")
    return [line for line in result.outlines if "DRAW" in line]


def test_fixed_seed_reproduces(pytester):
    pytester.makepyfile(test_user=USER_TESTS)
    first = _draws(pytester, 3)
    assert first and first == _draws(pytester, 3)
    assert _draws(pytester, 4) != first
