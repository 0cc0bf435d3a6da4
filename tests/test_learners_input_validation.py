"""Every learner refuses bad input with a clear error: non-numeric targets, bad parameters, predict before fit.

The learners are discovered from ``privaudit.learners.__all__`` (every scikit-learn
estimator class there), so a learner added later is covered or the coverage test fails.
Before the shared check (:func:`~privaudit.learners.input_validation.check_numeric_target`)
the modulated and FedAvg learners crashed inside numpy with ``UFuncTypeError``, and an
object array holding ``None`` became NaN and ended in ``LinAlgError``.
"""

from __future__ import annotations

import inspect
import warnings

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


# --------------------------------------------------------------------------- parameters: scikit-learn's machinery
# Every learner declares its parameters once (``_parameter_constraints``), and its fit goes through
# scikit-learn's ``_fit_context`` / ``_validate_params``, whose errors are re-raised as privaudit's.
CLASSES = {name: getattr(learners, name) for name in ESTIMATORS}
Y = np.tile([0.0, 1.0, 2.0, 1.0], 10)
LABELS = np.where(Y > 0.5, 1.0, -1.0)
#: Small, valid settings, so that a fit that gets past validation is quick.
FAST = {"CondDPRegressor": {"epochs": 2}, "DPSGDRegressor": {"epochs": 2}}


def _valid(name: str, **params):
    kw = dict(random_state=0, **REQUIRED.get(name, {}), **FAST.get(name, {}))
    if name.startswith(("IWP", "Noisy", "SGDReal")):
        kw["bounds"] = (-4.0, 4.0)
        if name.endswith("Regressor"):
            kw["label_bounds"] = (-1.0, 3.0)
    kw.update(params)
    return CLASSES[name](**kw)


def _target(name: str) -> np.ndarray:
    return LABELS if name.endswith("Classifier") else Y


@pytest.mark.parametrize("name", ESTIMATORS)
def test_constraints_cover_exactly_the_constructor_parameters(name):
    cls = CLASSES[name]
    assert isinstance(cls._parameter_constraints, dict)
    assert set(cls._parameter_constraints) == set(cls().get_params(deep=False))


@pytest.mark.parametrize("name", ESTIMATORS)
def test_fit_validates_through_sklearn_fit_context(name, monkeypatch):
    """fit calls _validate_params once, and not when scikit-learn is told to skip validation:
    the check is scikit-learn's _fit_context, not a hand-written call."""
    from sklearn import config_context

    from privaudit.learners.parameter_constraints import ValidatedParamsMixin

    calls = []
    original = ValidatedParamsMixin._validate_params

    def spy(self):
        calls.append(type(self).__name__)
        return original(self)

    monkeypatch.setattr(ValidatedParamsMixin, "_validate_params", spy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # privacy and convergence warnings of tiny fits
        _valid(name).fit(X, _target(name))
        assert calls == [name]
        with config_context(skip_parameter_validation=True):
            _valid(name).fit(X, _target(name))
    assert calls == [name]


@pytest.mark.parametrize("name", ESTIMATORS)
@pytest.mark.parametrize("params, kind", [({"epsilon": -1.0}, "value"), ({"epsilon": "1"}, "type"),
                                          ({"epsilon": True}, "type"), ({"random_state": -1}, "value"),
                                          ({"random_state": 2**63}, "value"), ({"random_state": "x"}, "type"),
                                          ({"random_state": 1.5}, "type")])
def test_bad_parameters_raise_one_error_of_both_families(name, params, kind):
    from sklearn.utils._param_validation import InvalidParameterError as SklearnInvalidParameterError

    from privaudit.learners.parameter_constraints import LearnerParameterError, LearnerParameterTypeError
    from privaudit.mechanisms.validation import InvalidParameterError, ParameterTypeError

    (key, value), = params.items()
    with pytest.raises(SklearnInvalidParameterError, match=rf"The '{key}' parameter of {name} must be") as info:
        _valid(name, **params).fit(X, _target(name))
    err = info.value
    if kind == "value":
        assert isinstance(err, LearnerParameterError) and isinstance(err, InvalidParameterError)
        assert not isinstance(err, ParameterTypeError)
    else:
        assert isinstance(err, LearnerParameterTypeError) and isinstance(err, ParameterTypeError)
        assert not isinstance(err, InvalidParameterError)
    assert repr(value)[:10] in str(err)  # the message shows the value given


@pytest.mark.parametrize("name, params", [
    ("ModulatedRegressor", {"chunk_size": 0}), ("ModulatedRegressor", {"simulation": "exact"}),
    ("ModulatedRegressor", {"radius": float("nan")}), ("OneShotModulatedRegressor", {"psd": 1}),
    ("FedAvgDPSGDRegressor", {"learning_rate": 0.0}), ("FedAvgDPSGDRegressor", {"conversion": "bogus"}),
    ("IWPSGDClassifier", {"loss": "hinge"}), ("IWPSGDClassifier", {"bounds": 0}),
    ("IWPSGDRegressor", {"trace_every": 0}), ("CondDPRegressor", {"switch_epoch": -1}),
    ("CondDPRegressor", {"rcond": 0.0}), ("DPSGDRegressor", {"model": "cnn"}),
    ("RROnBinsRegressor", {"n_support": 1}), ("RROnBinsRegressor", {"estimator": "ols"}),
    ("WeightedLLPRegressor", {"rho": 0.0}), ("WeightedLLPRegressor", {"bag_size": 2.5}),
])
def test_each_family_refuses_its_own_bad_parameters(name, params):
    from sklearn.utils._param_validation import InvalidParameterError as SklearnInvalidParameterError

    (key, _), = params.items()
    with pytest.raises(SklearnInvalidParameterError, match=rf"The '{key}' parameter of {name}"):
        _valid(name, **params).fit(X, _target(name))


@pytest.mark.filterwarnings("ignore::privaudit.mechanisms.validation.PrivacyLeakWarning")
@pytest.mark.parametrize("name", [n for n in ESTIMATORS if n.startswith(("IWP", "Noisy", "SGDReal"))])
def test_partial_fit_validates_its_first_call(name):
    from privaudit.learners.parameter_constraints import LearnerParameterError

    with pytest.raises(LearnerParameterError, match="batch_size"):
        _valid(name, batch_size=0).partial_fit(X, _target(name))


def test_privatize_alone_is_validated_like_fit():
    from privaudit.learners.parameter_constraints import LearnerParameterError

    with pytest.raises(LearnerParameterError, match="prior_fraction"):
        _valid("RROnBinsRegressor", prior_fraction=1.0).privatize(Y, 0)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_predict_before_fit_is_not_fitted_error(name):
    """Issue 24: predict before fit raised AttributeError for the IWP classifiers."""
    from sklearn.exceptions import NotFittedError

    est = _valid(name)
    methods = [m for m in ("predict", "decision_function") if hasattr(est, m)]
    assert "predict" in methods
    for method in methods:
        with pytest.raises(NotFittedError):
            getattr(est, method)(X)
    with pytest.raises(NotFittedError):
        est.score(X, _target(name))
