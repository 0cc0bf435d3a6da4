"""Every bad parameter raises a ValueError/TypeError subclass naming the parameter and value."""

import math

import numpy as np
import pytest

from privaudit.mechanisms import (
    GaussianMechanism,
    InvalidInputError,
    InvalidParameterError,
    LaplaceMechanism,
    ModulatedMechanism,
    NonContractiveWarning,
    ParameterTypeError,
    PrivacyClaim,
    RandomizedResponse,
    tradeoff_curve,
)

MOD = dict(alpha=0.5, lam=0.2, omega=1.0, dim=3, sigma=1.0)

CASES = [
    (lambda: GaussianMechanism(epsilon=0, delta=1e-5), ValueError, "epsilon=0"),
    (lambda: GaussianMechanism(epsilon=-1.0, delta=1e-5), ValueError, "epsilon=-1.0"),
    (lambda: GaussianMechanism(epsilon=math.inf, delta=1e-5), ValueError, "epsilon=inf"),
    (lambda: GaussianMechanism(epsilon=math.nan, delta=1e-5), ValueError, "epsilon must not be NaN"),
    (lambda: GaussianMechanism(epsilon=1.0, delta=0.0), ValueError, "delta=0.0"),
    (lambda: GaussianMechanism(epsilon=1.0, delta=1.0), ValueError, "delta=1.0"),
    (lambda: GaussianMechanism(epsilon=1.0, delta=1e-5, sensitivity=0), ValueError, "sensitivity=0"),
    (lambda: GaussianMechanism(epsilon=1.0, delta=1e-5, calibration="magic"), ValueError, "calibration='magic'"),
    (lambda: GaussianMechanism(epsilon=1.0), ValueError, "delta=None"),
    (lambda: GaussianMechanism(sigma=-2.0), ValueError, "sigma=-2.0"),
    (lambda: GaussianMechanism(epsilon="1", delta=1e-5), TypeError, "epsilon must be a real number"),
    (lambda: LaplaceMechanism(epsilon=0.0), ValueError, "epsilon=0.0"),
    (lambda: LaplaceMechanism(epsilon=1.0, scale=0), ValueError, "scale=0"),
    (lambda: RandomizedResponse(epsilon=1.0, categories=(1,)), ValueError, "categories=(1,)"),
    (lambda: RandomizedResponse(epsilon=1.0, categories=(1, 1)), ValueError, "categories=(1, 1)"),
    (lambda: RandomizedResponse(epsilon=1.0, keep_probability=0.2), ValueError, "keep_probability=0.2"),
    (lambda: ModulatedMechanism(**{**MOD, "alpha": 1.0}), ValueError, "alpha=1.0"),
    (lambda: ModulatedMechanism(**{**MOD, "alpha": 0.0}), ValueError, "alpha=0.0"),
    (lambda: ModulatedMechanism(**{**MOD, "lam": -0.1}), ValueError, "lam=-0.1"),
    (lambda: ModulatedMechanism(**{**MOD, "omega": -1}), ValueError, "omega=-1"),
    (lambda: ModulatedMechanism(**MOD, n_vectors=4), ValueError, "n_vectors=4"),
    (lambda: ModulatedMechanism(**MOD, n_vectors=0), ValueError, "n_vectors=0"),
    (lambda: ModulatedMechanism(**MOD, n_vectors=1.5), TypeError, "n_vectors must be an integer"),
    (lambda: ModulatedMechanism(**MOD, basis=np.ones((3, 1))), ValueError, "orthonormal"),
    (lambda: ModulatedMechanism(**MOD, basis=np.eye(3)), ValueError, "shape"),
    (lambda: PrivacyClaim(1.0, 1e-5, "neighbours"), ValueError, "'neighbours'"),
    (lambda: PrivacyClaim(1.0, -0.1, "add-remove"), ValueError, "delta=-0.1"),
    (lambda: tradeoff_curve(1.0, 1e-5, [0.5, 1.5]), ValueError, "alpha must lie in"),
    # Issue 15: extreme values must fail with a named ValueError, not OverflowError / inf / NaN.
    (lambda: GaussianMechanism(epsilon=10**400, delta=1e-5), ValueError, "epsilon is too large to be a float"),
    (lambda: GaussianMechanism(epsilon=1e300, delta=1e-5), ValueError, "epsilon=1e+300"),
    (lambda: GaussianMechanism(sigma=1e-300), ValueError, "sigma=1e-300"),
    (lambda: GaussianMechanism(sigma=1e300), ValueError, "sigma=1e+300"),
    (lambda: LaplaceMechanism(epsilon=5e-324), ValueError, "epsilon=5e-324"),
    (lambda: LaplaceMechanism(epsilon=1e300), ValueError, "epsilon=1e+300"),
    (lambda: RandomizedResponse(epsilon=1e308), ValueError, "epsilon=1e+308"),
    (lambda: RandomizedResponse(epsilon=10**400), ValueError, "epsilon is too large to be a float"),
    (lambda: RandomizedResponse(epsilon=1.0, categories=[math.nan, 1]), ValueError, "categories=[nan, 1]"),
    (lambda: RandomizedResponse(epsilon=1.0, categories=[math.inf, 1]), ValueError, "categories=[inf, 1]"),
    (lambda: RandomizedResponse(epsilon=1.0, categories=["a", "b"]), ValueError, "categories=['a', 'b']"),
]


@pytest.mark.parametrize("build,exc,fragment", CASES, ids=[c[2] for c in CASES])
def test_bad_parameters(build, exc, fragment):
    with pytest.raises(exc) as info:
        build()
    assert fragment in str(info.value)
    assert isinstance(info.value, ValueError | TypeError)


@pytest.mark.parametrize(
    "x,fragment",
    [(np.array([0.0, np.nan, 1.0]), "nan"), (np.array([np.inf, 0, 0]), "inf"), (np.zeros(4), "last dimension 3")],
)
def test_bad_inputs(x, fragment):
    mech = ModulatedMechanism(**MOD)
    with pytest.raises(InvalidInputError, match=fragment):
        mech.sample(x, 10, rng=0)


def test_bad_sample_count_and_category():
    with pytest.raises(InvalidParameterError, match="n=0"):
        GaussianMechanism(sigma=1.0).sample(np.zeros(2), 0)
    with pytest.raises(ParameterTypeError):
        GaussianMechanism(sigma=1.0).sample(np.zeros(2), 2.5)
    with pytest.raises(InvalidInputError, match="7.0"):
        RandomizedResponse(epsilon=1.0).release([1, -1, 7])


def test_non_contractive_map_warns():
    with pytest.warns(NonContractiveWarning, match="L = "):
        ModulatedMechanism(alpha=0.1, lam=1.0, omega=1.0, dim=2, sigma=1.0)


def test_randomized_response_at_large_epsilon_still_flips_with_the_right_probability():
    """ε = 45: p = 1 − 2.9e−20 rounds to 1.0, yet q and the exact ε stay exact (the flip uses a full-precision exponential)."""
    rr = RandomizedResponse(epsilon=45.0)
    assert rr.flip_probability == pytest.approx(math.exp(-45) / (1 + math.exp(-45)), rel=1e-12)
    assert rr.true_epsilon == pytest.approx(45.0, rel=1e-12)
    assert rr.exact_delta(44.0) == pytest.approx(rr.keep_probability - math.exp(44) * rr.flip_probability, rel=1e-9)
    rr700 = RandomizedResponse(epsilon=700.0)
    assert rr700.flip_probability > 0 and rr700.true_epsilon == pytest.approx(700.0)
