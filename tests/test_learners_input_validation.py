"""Every learner refuses string and non-numeric targets with an error naming it.

The learners are discovered from ``privaudit.learners.__all__`` (every scikit-learn
estimator class there), so a learner added later is covered or the coverage test fails.
Before the shared check (:func:`~privaudit.learners.input_validation.check_numeric_target`)
the modulated and FedAvg learners crashed inside numpy with ``UFuncTypeError``, and an
object array holding ``None`` became NaN and ended in ``LinAlgError``.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from sklearn.base import BaseEstimator

import privaudit.learners as learners
from privaudit.learners.input_validation import NonNumericTargetError, check_numeric_target
from privaudit.mechanisms.validation import InvalidInputError

ESTIMATORS = sorted(
    name for name in learners.__all__
    if inspect.isclass(obj := getattr(learners, name)) and issubclass(obj, BaseEstimator)
)
#: Parameters without which a learner refuses to fit at all (so the target check is reached).
REQUIRED = {"RROnBinsRegressor": {"label_bounds": (0.0, 2.0)}, "WeightedLLPRegressor": {"label_bounds": (0.0, 2.0)}}
X = np.random.default_rng(0).normal(size=(40, 2))
BAD_TARGETS = {
    "letters": np.array(["a", "b"] * 20),
    "numbers as text": np.array(["1.0", "2"] * 20),
    "bytes": np.array([b"1", b"2"] * 20),
    "list of str": ["low", "high"] * 20,
    "object with None": np.array([1.0, None] * 20, dtype=object),
    "object with str": np.array([1.0, "x"] * 20, dtype=object),
    "datetime": np.array(["2024-01-01"] * 40, dtype="datetime64[D]"),
}


def test_every_learner_is_covered():
    assert len(ESTIMATORS) >= 13
    assert {"ModulatedRegressor", "FedAvgDPSGDRegressor", "CondDPRegressor", "RROnBinsRegressor",
            "WeightedLLPRegressor", "IWPSGDClassifier"} <= set(ESTIMATORS)


@pytest.mark.parametrize("name", ESTIMATORS)
@pytest.mark.parametrize("target", list(BAD_TARGETS))
def test_non_numeric_targets_get_an_error_naming_the_estimator(name, target):
    est = getattr(learners, name)(random_state=0, **REQUIRED.get(name, {}))
    with pytest.raises(NonNumericTargetError, match=name) as info:
        est.fit(X, BAD_TARGETS[target])
    assert isinstance(info.value, InvalidInputError) and isinstance(info.value, ValueError)
    assert "targets y" in str(info.value)


@pytest.mark.parametrize("name", ["ModulatedRegressor", "FedAvgDPSGDRegressor"])
def test_streaming_fits_check_the_target_dtype_up_front(name):
    est = getattr(learners, name)(random_state=0, chunk_size=16)
    with pytest.raises(NonNumericTargetError, match=f"{name} needs numeric targets y, got string"):
        est.fit(X, BAD_TARGETS["letters"])


@pytest.mark.filterwarnings("ignore::privaudit.mechanisms.validation.PrivacyLeakWarning")  # IWP's data-derived bounds
@pytest.mark.parametrize("name", ["ModulatedRegressor", "OneShotModulatedRegressor", "FedAvgDPSGDRegressor",
                                  "IWPSGDRegressor", "RROnBinsRegressor"])
def test_numeric_object_and_integer_targets_still_fit(name):
    """The check refuses only what is not numeric: the same fit from float, int-valued object
    and integer targets gives the same coefficients."""
    y = np.tile([0.0, 1.0, 2.0, 1.0], 10)
    kw = dict(random_state=0, **REQUIRED.get(name, {}))
    cls = getattr(learners, name)
    ref = cls(**kw).fit(X, y).predict(X)
    np.testing.assert_array_equal(cls(**kw).fit(X, y.astype(object)).predict(X), ref)
    np.testing.assert_array_equal(cls(**kw).fit(X, y.astype(int)).predict(X), ref)


def test_check_numeric_target_contract():
    y = np.arange(3.0)
    assert check_numeric_target(y) is y  # numeric input passes through untouched
    out = check_numeric_target(np.array([1, 2.5], dtype=object))
    assert out.dtype == np.float64 and out.tolist() == [1.0, 2.5]
    with pytest.raises(NonNumericTargetError, match=r"MyEstimator needs numeric targets y, got string .*'a'"):
        check_numeric_target(["a", "b"], "MyEstimator")
    with pytest.raises(NonNumericTargetError, match="complex"):
        check_numeric_target(np.array([1 + 1j]))
    with pytest.raises(NonNumericTargetError, match=r"finite .* got nan at index 1"):
        check_numeric_target(np.array([1.0, float("nan")], dtype=object))
    ragged = check_numeric_target([[1.0], [2.0, 3.0]], check_values=False)  # dtype-only: left to later checks
    assert len(ragged) == 2
