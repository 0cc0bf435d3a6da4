"""Declarative parameter constraints of the learners (scikit-learn's ``_parameter_constraints`` format).

Each estimator class carries one of these dicts as ``_parameter_constraints``: one
entry per constructor parameter, a list of admissible types/ranges in the language of
:mod:`sklearn.utils._param_validation` (``Interval``, ``StrOptions``, ``"boolean"``,
``"array-like"``, ``"random_state"``, ``None``...). The configuration layer
(:mod:`privaudit.audit.app.components`) validates a learner table against it when the file
is loaded, so ``epsilon = -1`` is refused before any task runs, naming the key and
the value, and the estimator never has to be constructed to check its parameters.
The estimators' own checks in ``fit`` are unchanged (they also cover constraints
spanning several parameters, e.g. ``n_vectors ≤ dim``).
"""

from __future__ import annotations

from numbers import Integral, Real

from sklearn.utils._param_validation import Interval, StrOptions

from privaudit.mechanisms.accounting import ACCOUNTANTS, ZCDP_CONVERSIONS

from .conditioning import SCALES
from .weierstrass_transforms import LOSSES

_POSITIVE = Interval(Real, 0, None, closed="neither")
_NONNEGATIVE = Interval(Real, 0, None, closed="left")
_DELTA = Interval(Real, 0, 1, closed="neither")
_COUNT = Interval(Integral, 1, None, closed="left")
#: ε = ∞ is a non-private run of the DP-SGD learners.
_EPSILON_OR_INF = Interval(Real, 0, float("inf"), closed="right")

MODULATED = {
    "epsilon": [_POSITIVE], "delta": [_DELTA], "alpha": [Interval(Real, 0, 1, closed="both")],
    "lam": [_NONNEGATIVE], "omega": [_NONNEGATIVE], "n_vectors": [_COUNT],
    "conversion": [StrOptions(set(ZCDP_CONVERSIONS))], "calibration": [StrOptions({"zcdp", "classical"})],
    "chunk_size": [_COUNT, None], "fit_intercept": ["boolean"], "random_state": ["random_state"],
    "store_transcript": ["boolean"], "inference": ["boolean"],
    "simulation": [StrOptions({"auto", "sufficient", "clients"})],
}
MODULATED_ITERATIVE = {**MODULATED, "rounds": [_COUNT], "step": [_POSITIVE], "radius": [_POSITIVE, None]}
MODULATED_ONE_SHOT = {**MODULATED, "ridge": [_NONNEGATIVE], "psd": ["boolean"]}

IWP = {
    "batch_size": [_COUNT], "step": [_POSITIVE], "lam": [_NONNEGATIVE], "radius": [_POSITIVE, None],
    "epsilon": [_POSITIVE], "delta": [_DELTA], "split": [Interval(Real, 0, 1, closed="neither")],
    "bounds": ["array-like", None], "calibration": [StrOptions({"analytic", "classical"})], "shuffle": ["boolean"],
    "trace_every": [_COUNT, None], "random_state": ["random_state"],
}
IWP_CLASSIFIER = {**IWP, "loss": [StrOptions(set(LOSSES))], "n_terms": [_COUNT]}
IWP_REGRESSOR = {**IWP, "label_bounds": ["array-like", None]}

DPSGD = {
    "epsilon": [_EPSILON_OR_INF], "delta": [_DELTA], "clip": [_POSITIVE], "epochs": [_COUNT], "lr": [_POSITIVE],
    "batch_size": [_COUNT, None], "optimizer": [StrOptions({"sgd", "adam"})],
    "model": [StrOptions({"linear", "mlp"})], "hidden": ["array-like"], "embed_dim": [_COUNT],
    "init_std": [_NONNEGATIVE], "fit_intercept": ["boolean"], "n_public": [Interval(Integral, 0, None, closed="left"), None],
    "categorical": ["array-like", None], "n_buckets": [_COUNT], "cat_embed_dim": [_COUNT],
    "label_bounds": ["array-like", None], "adjacency": [StrOptions({"label", "replace-one", "add-remove"})],
    "accountant": [StrOptions(set(ACCOUNTANTS))], "noise_multiplier": [_POSITIVE, None], "rcond": [_NONNEGATIVE],
    "max_condition": [_POSITIVE], "cond_scale": [StrOptions(set(SCALES))], "callback": [callable, None],
    "random_state": ["random_state"],
}
CONDDP = {**DPSGD, "switch_epoch": [Interval(Integral, 0, None, closed="left"), None]}

__all__ = ["CONDDP", "DPSGD", "IWP_CLASSIFIER", "IWP_REGRESSOR", "MODULATED_ITERATIVE", "MODULATED_ONE_SHOT"]
