"""The pytest plugin, exercised through pytester: a user's suite with privacy assertions."""

import re

import numpy as np
import pytest

from privaudit.audit.testing import PrivacyPowerWarning, assert_private
from privaudit.mechanisms import PrivacyClaim, RandomizedResponse

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


def test_leaky_gaussian(privacy_rng):
    assert_private(LeakyGaussian(), np.zeros(1), np.ones(1), n=50_000, rng=privacy_rng)


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
    outcome.assert_outcomes(passed=3, failed=3)  # leaky, biased and the disagreeing marker fail
    out = outcome.stdout.str()
    assert "test_leaky_gaussian" in out and "test_biased_mean" in out
    # The failure message states the certified bound, the claim, n, the confidence and the seed.
    for fragment in ("certified epsilon >=", "epsilon=1, delta=1e-05", "n=50000", "99.9000% confidence"):
        assert fragment in out
    for fragment in ("shifted mean is biased", "p-value", "simultaneous CI", "n=20000"):
        assert fragment in out
    assert "privaudit: --privacy-seed=7" in out  # the seed is logged in the header
    # With rng=privacy_rng the message names an integer seed, never a Generator's repr.
    assert "rng=Generator" not in out and re.search(r"rerun with rng=\d+", out)
    # __tracebackhide__: the plugin's own source is not printed before the message.
    assert "def assert_private" not in out and "__tracebackhide__" not in out


def test_disagreeing_marker_is_an_error(pytester):
    pytester.makepyfile(test_user=USER_TESTS)
    result = pytester.runpytest("-q", "-rf", "-p", "no:cacheprovider", "-k", "marker")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "disagrees with the mechanism's own claim" in out and "epsilon=0.2" in out
    assert "certified epsilon" not in out  # no audit was run on a budget the mechanism never claimed
    assert "def _marker_budget" not in out  # the plugin's frames are hidden


def test_sample_scaling(pytester):
    pytester.makepyfile(test_user=USER_TESTS)
    result = pytester.runpytest("-q", "-rf", "-p", "no:cacheprovider", "--privacy-samples=0.5", "-k", "leaky")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "n=25000" in out and "n=50000" not in out


def test_reported_seed_reproduces_the_failing_audit(pytester):
    pytester.makepyfile(test_user=USER_TESTS)
    out = pytester.runpytest("-q", "-rf", "-p", "no:cacheprovider", "--privacy-seed=7", "-k", "leaky").stdout.str()
    seed = int(re.search(r"rerun with rng=(\d+)", out).group(1))
    bound = float(re.search(r"certified epsilon >= ([0-9.]+)", out).group(1))
    from privaudit.audit.engines.tradeoff import audit_tradeoff
    from privaudit.mechanisms import GaussianMechanism

    class Leaky:
        claim = PrivacyClaim(1.0, 1e-5, "l2<=1")
        inner = GaussianMechanism(sigma=0.3 * GaussianMechanism(epsilon=1.0, delta=1e-5).sigma)

        def sample(self, x, n, rng=None):
            return self.inner.sample(x, n, rng)

    again = audit_tradeoff(Leaky(), np.zeros(1), np.ones(1), n=50_000, confidence=0.999, rng=seed)
    assert f"{again.epsilon_lb:.4g}" == f"{bound:.4g}"


def _draws(pytester, seed):
    result = pytester.runpytest("-q", "-s", "-p", "no:cacheprovider", f"--privacy-seed={seed}", "-k", "fixture")
    return [line for line in result.outlines if "DRAW" in line]


def test_fixed_seed_reproduces(pytester):
    pytester.makepyfile(test_user=USER_TESTS)
    first = _draws(pytester, 3)
    assert first and first == _draws(pytester, 3)
    assert _draws(pytester, 4) != first


def test_underpowered_assertion_warns_with_its_power():
    # n = 300 per hypothesis cannot refute a Gaussian's ε = 1 at δ = 1e-5 unless its true ε is far larger.
    from privaudit.mechanisms import GaussianMechanism

    g = GaussianMechanism(epsilon=1.0, delta=1e-5)
    with pytest.warns(PrivacyPowerWarning, match="detects only a true epsilon above|cannot refute"):
        res = assert_private(g, np.zeros(1), np.ones(1), n=300, rng=0)
    assert res.min_detectable_ratio > 2.0


def test_power_is_stated_and_shrinks_with_n():
    rr = RandomizedResponse(epsilon=1.0)
    small = assert_private(rr, -1.0, 1.0, n=2_000, rng=1)
    large = assert_private(rr, -1.0, 1.0, n=20_000, rng=1)
    assert 1.0 < large.min_detectable_ratio < small.min_detectable_ratio
