"""Every learner resolves ``random_state`` by the one seed policy and records ``seed_``.

(:mod:`privaudit.mechanisms.randomness`): an int is the seed itself, a Generator is
consumed by one draw, and refitting with ``random_state=est.seed_`` reproduces the fit
exactly, which is what a report needs to state how to rerun it.
"""

from __future__ import annotations

import numpy as np
import pytest

import privaudit.learners as learners
from privaudit.mechanisms.validation import InvalidParameterError, ParameterTypeError

X = np.random.default_rng(0).normal(size=(60, 2))
Y = X @ np.array([0.5, -0.2]) + 0.1 * np.random.default_rng(1).normal(size=60)
LABELS = np.where(Y > 0, 1.0, -1.0)
SMALL = {"CondDPRegressor": {"epochs": 3}, "DPSGDRegressor": {"epochs": 3}}
SEEDED = ["ModulatedRegressor", "OneShotModulatedRegressor", "FedAvgDPSGDRegressor", "CondDPRegressor",
          "DPSGDRegressor", "IWPSGDRegressor", "NoisySGDRegressor", "SGDRealRegressor", "IWPSGDClassifier",
          "NoisySGDClassifier", "SGDRealClassifier"]


def _fit(name, random_state):
    est = getattr(learners, name)(random_state=random_state, **SMALL.get(name, {}))
    y = LABELS if name.endswith("Classifier") else Y
    if name.startswith(("IWP", "Noisy")):
        est.set_params(bounds=(-4.0, 4.0))
        if name.endswith("Regressor"):
            est.set_params(label_bounds=(-4.0, 4.0))
    return est.fit(X, y)


def _output(est):
    return est.decision_function(X) if hasattr(est, "decision_function") else est.predict(X)


@pytest.mark.parametrize("name", SEEDED)
def test_seed_is_recorded_and_reproduces_the_fit(name):
    a = _fit(name, np.random.default_rng(123))
    assert isinstance(a.seed_, int) and 0 <= a.seed_ < 2**63
    b = _fit(name, a.seed_)
    assert b.seed_ == a.seed_
    np.testing.assert_array_equal(_output(b), _output(a))
    assert _fit(name, 7).seed_ == 7  # an int is the seed itself


@pytest.mark.parametrize("name", SEEDED)
@pytest.mark.parametrize("bad, error", [("x", ParameterTypeError), (True, ParameterTypeError),
                                        (-1, InvalidParameterError), (2**63, InvalidParameterError)])
def test_bad_random_state_is_refused_by_name(name, bad, error):
    with pytest.raises(error, match="random_state"):
        _fit(name, bad)


@pytest.mark.parametrize("name", ["CondDPRegressor", "DPSGDRegressor"])
def test_dpsgd_learners_take_a_torch_generator_as_given(name):
    """The torch learners accept a torch Generator (declared in their constraints) and record its seed."""
    torch = pytest.importorskip("torch")
    est = _fit(name, torch.Generator().manual_seed(5))
    assert est.seed_ == 5
    np.testing.assert_array_equal(_output(_fit(name, 5)), _output(est))
