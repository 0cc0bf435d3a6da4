"""Parameter constraints of the learners, and their validation by scikit-learn's machinery.

Each estimator class declares one of the dicts below as ``_parameter_constraints``: one entry
per constructor parameter, a list of admissible types/ranges in the language of
:mod:`sklearn.utils._param_validation` (``Interval``, ``StrOptions``, ``"boolean"``,
``"array-like"``, ``None``...). That one declaration is used twice:

* by ``fit``: every learner's ``fit`` is decorated with scikit-learn's
  ``_fit_context``, which calls ``_validate_params`` before anything else. The learners
  inherit :class:`ValidatedParamsMixin`, whose ``_validate_params`` runs scikit-learn's own
  (``BaseEstimator._validate_params``) and only sharpens the error class (below);
* by the configuration layer (:mod:`privaudit.audit.schema.components`), which validates a
  learner table against it when the file is loaded, so ``epsilon = -1`` is refused before
  any task runs and the estimator never has to be constructed to check its parameters.

What one parameter cannot say alone stays in ``fit`` (``n_vectors ≤ dim``, ``clip=None`` only
when ε = ∞, ``switch_epoch ≤ epochs``, the entries of ``hidden``...).

Errors. scikit-learn raises its ``InvalidParameterError``, a subclass of both ``ValueError``
and ``TypeError``. The learners raise :class:`LearnerParameterError` (a value of the right kind
out of range, e.g. ``epsilon=-1``) or :class:`LearnerParameterTypeError` (a value of the wrong
kind, e.g. ``epsilon="1"``): each is also privaudit's
:class:`~privaudit.mechanisms.validation.InvalidParameterError` or
:class:`~privaudit.mechanisms.validation.ParameterTypeError`, so ``except ValueError`` /
``except TypeError`` and the project's own classes catch what they caught before, and
scikit-learn's ``InvalidParameterError``, so scikit-learn's estimator checks recognise them.
The message is scikit-learn's, naming the parameter, the estimator and the value.

Numbers. scikit-learn's ``Interval`` accepts ``True`` as the integer 1; :class:`Number`
refuses booleans, as the learners always did (``epsilon=True`` is a mistake, not ε = 1).
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions, make_constraint
from sklearn.utils._param_validation import InvalidParameterError as SklearnInvalidParameterError

from privaudit.mechanisms.accounting import ACCOUNTANTS, ZCDP_CONVERSIONS
from privaudit.mechanisms.randomness import SEED_BOUND
from privaudit.mechanisms.validation import InvalidParameterError, ParameterTypeError

from .conditioning import SCALES
from .weierstrass_transforms import LOSSES


class Number(Interval):
    """scikit-learn's ``Interval``, refusing booleans (which are ``Integral`` in Python)."""

    def is_satisfied_by(self, val: Any) -> bool:
        """Whether ``val`` is a number (not a bool) in the interval.

        Parameters
        ----------
        val : object

        Returns
        -------
        bool
        """
        return not isinstance(val, bool | np.bool_) and super().is_satisfied_by(val)


class LearnerParameterError(InvalidParameterError, SklearnInvalidParameterError):
    """A learner parameter of the right kind but out of range (``epsilon=-1``, ``conversion="bogus"``)."""


class LearnerParameterTypeError(ParameterTypeError, SklearnInvalidParameterError):
    """A learner parameter of the wrong kind (``epsilon="1"``, ``rounds=2.5``, ``random_state=True``)."""


def _right_kind(constraint: Any, value: Any) -> bool:
    """Whether ``value`` has the kind ``constraint`` constrains, so that failing it is a value error."""
    if isinstance(constraint, Interval):
        return isinstance(value, constraint.type) and not isinstance(value, bool | np.bool_)
    if isinstance(constraint, StrOptions):
        return isinstance(value, str)
    return False


def parameter_error(constraints: dict, params: dict, error: SklearnInvalidParameterError) -> Exception:
    """The learner error to raise for scikit-learn's ``error`` about ``params``.

    Parameters
    ----------
    constraints : dict
        The estimator's ``_parameter_constraints``.
    params : dict
        The parameters that were validated (``get_params(deep=False)``).
    error : sklearn.utils._param_validation.InvalidParameterError
        What scikit-learn raised; its message is kept.

    Returns
    -------
    LearnerParameterError or LearnerParameterTypeError
        A value error when the first parameter that satisfies none of its constraints has
        the kind one of them constrains (a number out of range, an unknown string), else a
        type error.
    """
    for key, value in params.items():  # scikit-learn reports the first failing parameter, in this order
        allowed = constraints.get(key)
        if allowed is None or allowed == "no_validation":
            continue
        if not any(make_constraint(c).is_satisfied_by(value) for c in allowed):
            right_kind = any(_right_kind(c, value) for c in allowed)
            return (LearnerParameterError if right_kind else LearnerParameterTypeError)(str(error))
    return LearnerParameterTypeError(str(error))


class ValidatedParamsMixin:
    """Validation of a learner's parameters by scikit-learn, with privaudit's error classes.

    Put it first among the bases, before ``BaseEstimator``, and decorate ``fit`` with
    ``sklearn.base._fit_context``.
    """

    _parameter_constraints: dict

    def _validate_params(self) -> None:
        """scikit-learn's ``BaseEstimator._validate_params``; its error re-raised as a learner error.

        Raises
        ------
        LearnerParameterError, LearnerParameterTypeError
        """
        try:
            super()._validate_params()
        except SklearnInvalidParameterError as exc:
            raise parameter_error(self._parameter_constraints, self.get_params(deep=False), exc) from None


_POSITIVE = Number(Real, 0, None, closed="neither")
#: ε = ∞ is a non-private run (DP-SGD learners, RR-on-Bins, Weighted-LLP); a radius ∞ no projection.
_POSITIVE_OR_INF = Number(Real, 0, float("inf"), closed="right")
_NONNEGATIVE = Number(Real, 0, None, closed="left")
_DELTA = Number(Real, 0, 1, closed="neither")
_FRACTION = Number(Real, 0, 1, closed="neither")
_COUNT = Number(Integral, 1, None, closed="left")
_COUNT_OR_ZERO = Number(Integral, 0, None, closed="left")
#: Seeds of :mod:`privaudit.mechanisms.randomness`: an int in [0, 2⁶³), a numpy Generator or
#: SeedSequence, or None (scikit-learn's "random_state" allows ints below 2³² and RandomState only).
RANDOM_STATE = [Number(Integral, 0, SEED_BOUND - 1, closed="both"), np.random.Generator, np.random.SeedSequence, None]
#: The DP-SGD learners also take a torch Generator (used as given).
TORCH_RANDOM_STATE = [*RANDOM_STATE, HasMethods(["manual_seed", "initial_seed"])]

MODULATED = {
    "epsilon": [_POSITIVE], "delta": [_DELTA], "alpha": [_FRACTION],
    "lam": [_NONNEGATIVE], "omega": [_NONNEGATIVE], "n_vectors": [_COUNT],
    "conversion": [StrOptions(set(ZCDP_CONVERSIONS))], "calibration": [StrOptions({"zcdp", "classical"})],
    "chunk_size": [_COUNT, None], "fit_intercept": ["boolean"], "random_state": RANDOM_STATE,
    "store_transcript": ["boolean"], "inference": ["boolean"],
    "simulation": [StrOptions({"auto", "sufficient", "clients"})],
}
MODULATED_ITERATIVE = {**MODULATED, "rounds": [_COUNT], "step": [_POSITIVE], "radius": [_POSITIVE_OR_INF]}
MODULATED_ONE_SHOT = {**MODULATED, "ridge": [_NONNEGATIVE], "psd": ["boolean"]}

FEDAVG = {
    "epsilon": [_POSITIVE], "delta": [_DELTA], "clip": [_POSITIVE], "learning_rate": [_POSITIVE],
    "rounds": [_COUNT], "radius": [_POSITIVE_OR_INF], "conversion": [StrOptions(set(ZCDP_CONVERSIONS))],
    "chunk_size": [_COUNT, None], "fit_intercept": ["boolean"], "random_state": RANDOM_STATE,
}

IWP = {
    "batch_size": [_COUNT], "step": [_POSITIVE], "lam": [_NONNEGATIVE], "radius": [_POSITIVE, None],
    "epsilon": [_POSITIVE], "delta": [_DELTA], "split": [_FRACTION],
    "bounds": ["array-like", None], "calibration": [StrOptions({"analytic", "classical"})], "shuffle": ["boolean"],
    "trace_every": [_COUNT, None], "random_state": RANDOM_STATE,
}
IWP_CLASSIFIER = {**IWP, "loss": [StrOptions(set(LOSSES))], "n_terms": [_COUNT]}
IWP_REGRESSOR = {**IWP, "label_bounds": ["array-like", None]}

DPSGD = {
    "epsilon": [_POSITIVE_OR_INF], "delta": [_DELTA], "clip": [_POSITIVE, None], "epochs": [_COUNT],
    "lr": [_POSITIVE], "batch_size": [_COUNT, None], "optimizer": [StrOptions({"sgd", "adam"})],
    "model": [StrOptions({"linear", "mlp"})], "hidden": ["array-like"], "embed_dim": [_COUNT],
    "init_std": [_NONNEGATIVE], "fit_intercept": ["boolean"], "n_public": [_COUNT_OR_ZERO, None],
    "categorical": ["array-like", None], "n_buckets": [_COUNT], "cat_embed_dim": [_COUNT],
    "label_bounds": ["array-like", None], "adjacency": [StrOptions({"label", "replace-one", "add-remove"})],
    "accountant": [StrOptions(set(ACCOUNTANTS))], "noise_multiplier": [_NONNEGATIVE, None], "rcond": [_POSITIVE],
    "max_condition": [_POSITIVE], "cond_scale": [StrOptions(set(SCALES))], "callback": [callable, None],
    "random_state": TORCH_RANDOM_STATE,
}
CONDDP = {**DPSGD, "switch_epoch": [_COUNT_OR_ZERO, None]}

RR_ON_BINS = {
    "epsilon": [_POSITIVE_OR_INF], "label_bounds": ["array-like", None],
    "n_support": [Number(Integral, 2, None, closed="left")], "prior_fraction": [_FRACTION],
    "estimator": [HasMethods(["fit", "predict"]), None], "random_state": RANDOM_STATE,
}

WEIGHTED_LLP = {
    "epsilon": [_POSITIVE_OR_INF], "delta": [_DELTA], "rho": [Number(Real, 0, 1, closed="right")],
    "alpha": [_FRACTION], "bag_size": [_COUNT, None], "bag_constant": [_POSITIVE],
    "label_bounds": ["array-like", None], "random_state": RANDOM_STATE,
}

__all__ = [
    "CONDDP", "DPSGD", "FEDAVG", "IWP_CLASSIFIER", "IWP_REGRESSOR", "MODULATED_ITERATIVE", "MODULATED_ONE_SHOT",
    "RANDOM_STATE", "RR_ON_BINS", "TORCH_RANDOM_STATE", "WEIGHTED_LLP", "LearnerParameterError",
    "LearnerParameterTypeError", "Number", "ValidatedParamsMixin", "parameter_error",
]


#: :class:`~privaudit.learners.dpgd_logistic.DPGDLogisticClassifier`.
DPGD_LOGISTIC = {
    "epsilon": [_POSITIVE], "delta": [_DELTA], "clip": [_POSITIVE], "steps": [_COUNT], "lr": [_POSITIVE],
    "random_state": RANDOM_STATE,
}
