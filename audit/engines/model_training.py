"""Training a user's model on chosen rows, and reading its per-record signals: what model audits share.

A model audit retrains the model many times on subsets of the data. It accepts three kinds of model:

* a scikit-learn estimator (a privaudit learner included): cloned, its ``random_state`` set from
  the fit's seed when it has one, and fitted on the rows;
* a *trainer*: a callable ``train(X, y, seed) -> fitted`` (a torch training loop, anything),
  whose result either has ``predict_proba`` / ``predict``, or is itself a callable
  ``fitted(X, y) -> log p(y | x)`` per row (the :class:`RowScorer` protocol).

Signals (Carlini et al. 2022, §VI-A): for a classifier, the logit-scaled confidence on the true
label φ = log p_y − log Σ_{y′≠y} p_{y′} (p from ``predict_proba``, else the logistic or softmax of
``decision_function``) (computed from the other classes' probabilities, so that
p_y that rounds to 1 keeps its information); for a regressor, the Gaussian log-likelihood
−(y − ŷ)²/2 at unit variance. ``log_prob`` is log p_y (classifier) or the same log-likelihood
(regressor): what RMIA compares.

A fit that raises, returns NaN or takes longer than its time limit becomes a
:class:`TrainingError` that names the fit, its seed and the cause.
"""

from __future__ import annotations

import inspect
import multiprocessing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
from sklearn.base import clone, is_classifier

from privaudit.mechanisms.claim import PrivacyClaim, claim_of
from privaudit.mechanisms.validation import InvalidInputError, ParameterTypeError

#: Smallest probability used in log p (keeps a confident wrong model's signal finite).
PROB_FLOOR = 1e-300


class TrainingError(RuntimeError):
    """A user's model failed to train or to score rows (raised, NaN output, or time limit)."""


@runtime_checkable
class RowScorer(Protocol):
    """What a trainer may return: ``scorer(X, y)`` gives log p(y | x) for each row, shape (n,)."""

    def __call__(self, X: np.ndarray, y: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class Signals:
    """One fitted model's signals on every record: ``signal`` (LiRA, loss) and ``log_prob`` (RMIA).

    ``claim`` is the claim the fitted model carries (privaudit learners), else None.
    """

    signal: np.ndarray
    log_prob: np.ndarray
    claim: PrivacyClaim | None = None


def is_estimator(model: Any) -> bool:
    """Whether ``model`` is a scikit-learn-style estimator (``fit`` and ``get_params``).

    Parameters
    ----------
    model : Any
        an estimator or a trainer
    """
    return hasattr(model, "fit") and hasattr(model, "get_params")


def infer_task(model: Any, y: np.ndarray, task: str = "auto") -> str:
    """``"classification"`` or ``"regression"``: scikit-learn's ``is_classifier``, else the labels' type.

    Parameters
    ----------
    model : Any
        an estimator or a trainer
    y : ndarray
        labels
    task : {'auto', 'classification', 'regression'}
    """
    if task in ("classification", "regression"):
        return task
    if task != "auto":
        raise InvalidInputError(f"task must be 'auto', 'classification' or 'regression', got task={task!r}")
    if is_estimator(model):
        return "classification" if is_classifier(model) else "regression"
    return "classification" if np.issubdtype(np.asarray(y).dtype, np.integer) else "regression"


def check_model(model: Any) -> None:
    """Refuse what is neither an estimator nor a trainer callable, naming the value.

    Parameters
    ----------
    model : Any
        an estimator or a trainer
    """
    if is_estimator(model):
        return
    if not callable(model):
        raise ParameterTypeError(f"model must be a scikit-learn estimator or a trainer callable "
                                 f"train(X, y, seed), got {type(model).__name__}")
    try:
        inspect.signature(model).bind(np.zeros((1, 1)), np.zeros(1), 0)
    except (TypeError, ValueError) as exc:
        raise ParameterTypeError(f"a trainer must accept (X, y, seed); {getattr(model, '__name__', model)!r} "
                                 f"does not: {exc}") from None


def fit_model(model: Any, X: np.ndarray, y: np.ndarray, seed: int) -> Any:
    """Train ``model`` on (X, y) with ``seed``: a clone of an estimator, or the trainer's result.

    Parameters
    ----------
    model : Any
        an estimator or a trainer
    X, y : ndarray
        training rows
    seed : int
        the fit's seed (random_state, or the trainer's argument)
    """
    if not is_estimator(model):
        return model(X, y, seed)
    est = clone(model)
    if "random_state" in est.get_params(deep=False):
        est.set_params(random_state=seed)
    return est.fit(X, y)


def _proba_signals(fitted: Any, X: np.ndarray, y: np.ndarray) -> Signals:
    proba = np.asarray(fitted.predict_proba(X), dtype=float)
    classes = np.asarray(fitted.classes_)
    col = np.searchsorted(classes, y)
    known = (col < classes.size) & (classes[np.minimum(col, classes.size - 1)] == y)
    rows = np.arange(y.size)
    p = np.where(known, proba[rows, np.minimum(col, classes.size - 1)], 0.0)
    # Σ_{y′≠y} p_{y′} straight from the other columns: 1 − p_y would round to 0 for a confident fit.
    mask = np.ones_like(proba, dtype=bool)
    mask[rows[known], col[known]] = False
    others = np.where(mask, proba, 0.0).sum(1)
    log_p = np.log(np.maximum(p, PROB_FLOOR))
    return Signals(log_p - np.log(np.maximum(others, PROB_FLOOR)), log_p)


class _DecisionProba:
    """``predict_proba`` of a classifier that has only ``decision_function``: its logistic (binary) or softmax."""

    def __init__(self, fitted: Any) -> None:
        self.fitted, self.classes_ = fitted, fitted.classes_

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        z = np.asarray(self.fitted.decision_function(X), dtype=float)
        if z.ndim == 1:
            z = np.stack([np.zeros_like(z), z], axis=1)
        z = z - z.max(1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(1, keepdims=True)


def model_signals(fitted: Any, X: np.ndarray, y: np.ndarray, task: str) -> Signals:
    """The membership signals of one fitted model on rows (X, y).

    Parameters
    ----------
    fitted : estimator, or a :class:`RowScorer`
        What :func:`fit_model` returned.
    X, y : arrays
    task : {"classification", "regression"}

    Returns
    -------
    Signals
    """
    if task == "classification" and hasattr(fitted, "predict_proba") and hasattr(fitted, "classes_"):
        return _proba_signals(fitted, X, y)
    if task == "classification" and hasattr(fitted, "decision_function") and hasattr(fitted, "classes_"):
        return _proba_signals(_DecisionProba(fitted), X, y)
    if task == "regression" and hasattr(fitted, "predict"):
        ll = -0.5 * (np.asarray(y, dtype=float) - np.asarray(fitted.predict(X), dtype=float).reshape(-1)) ** 2
        return Signals(ll, ll)
    if callable(fitted):
        log_p = np.asarray(fitted(X, y), dtype=float).reshape(-1)
        if task == "classification":
            if np.any(log_p > 0):
                raise InvalidInputError("a classifier's row scorer must return log-probabilities (<= 0)")
            # log p − log(1 − p), with 1 − p from expm1 so that p near 1 keeps its digits.
            with np.errstate(divide="ignore"):
                odds = log_p - np.log(np.maximum(-np.expm1(log_p), PROB_FLOOR))
            return Signals(odds, log_p)
        return Signals(log_p, log_p)
    raise ParameterTypeError(f"a fitted {type(fitted).__name__} has no predict_proba/predict and is not callable: "
                             f"a trainer must return an estimator-like object or a scorer f(X, y) -> log p(y|x)")


def train_and_score(model: Any, X: np.ndarray, y: np.ndarray, rows: np.ndarray, seed: int, task: str,
                    index: int, y_alt: np.ndarray | None = None, y_train: np.ndarray | None = None,
                    X_train: np.ndarray | None = None, X_alt: np.ndarray | None = None) -> Signals:
    """Fit on ``rows`` of (``X_train``, ``y_train``) (default X, y) with ``seed`` and score every row of (X, y).

    With ``y_alt`` or ``X_alt`` (label or feature inference), the model's ``signal`` is the log-odds
    log p(y|x) − log p(y_alt|x_alt) of each record's true value against its replacement (the other
    part unchanged), and ``log_prob`` is log p(y|x).

    Parameters
    ----------
    model : Any
        An estimator or a trainer.
    X, y : ndarray
        Every record and its true label.
    rows : ndarray of int
        The training rows.
    seed : int
    task : {'classification', 'regression'}
    index : int
        The fit's number, for messages.
    y_alt, X_alt : ndarray or None
        Replacement labels or features (label or feature inference).
    y_train, X_train : ndarray or None
        What to train on (default y, X).

    Returns
    -------
    Signals

    Raises
    ------
    TrainingError
        When the fit or the scoring raises, or a signal is not finite; names fit ``index`` and ``seed``.
    """
    Xt = X if X_train is None else X_train
    yt = y if y_train is None else y_train
    try:
        fitted = fit_model(model, Xt[rows], yt[rows], seed)
        sig = model_signals(fitted, X, y, task)
        if y_alt is not None or X_alt is not None:
            alt = model_signals(fitted, X if X_alt is None else X_alt, y if y_alt is None else y_alt, task)
            sig = Signals(sig.log_prob - alt.log_prob, sig.log_prob)
        sig = Signals(sig.signal, sig.log_prob, claim_of(fitted))
    except Exception as exc:  # a user's code: whatever it raises is reported with the fit it belongs to
        raise TrainingError(f"fit {index} (seed {seed}, {rows.size} rows) failed: {type(exc).__name__}: {exc}") from exc
    for name in ("signal", "log_prob"):
        value = getattr(sig, name)
        if value.shape != (y.shape[0],) or not np.all(np.isfinite(value)):
            bad = int(np.flatnonzero(~np.isfinite(value))[0]) if value.shape == (y.shape[0],) else None
            what = f"shape {value.shape}" if bad is None else f"row {bad} gives {float(value[bad])!r}"
            raise TrainingError(f"fit {index} (seed {seed}) returned a non-finite or misshapen {name}: {what}")
    return sig


def run_fits(jobs: list[Callable[[], Signals]], *, n_jobs: int | None = None, timeout: float | None = None,
             progress: bool = False) -> list[Signals]:
    """Run the fits (thunks) with joblib, in order of index: every worker given is used.

    A time limit needs worker processes (joblib's ``timeout``); a fit past it is a
    :class:`TrainingError`. Under ``joblib.parallel_config(backend="dask")`` the fits go to Dask.

    Parameters
    ----------
    jobs : list of callables
        one thunk per fit
    n_jobs : int or None
        joblib workers
    timeout : float or None
        seconds a fit may take
    progress : bool
        joblib's progress lines
    """
    from joblib import Parallel, delayed

    if len(jobs) == 1 and timeout is None:
        return [jobs[0]()]
    backend = "loky" if timeout is not None and (n_jobs in (None, 1)) else None
    try:
        par = Parallel(n_jobs=n_jobs if n_jobs is not None else (2 if timeout is not None else 1),
                       backend=backend, timeout=timeout, verbose=5 if progress else 0)
        return par(delayed(job)() for job in jobs)
    except (TimeoutError, multiprocessing.TimeoutError) as exc:
        raise TrainingError(f"a fit took longer than its time limit of {timeout:g} s") from exc


__all__ = ["PROB_FLOOR", "RowScorer", "Signals", "TrainingError", "check_model", "fit_model", "infer_task",
           "is_estimator", "model_signals", "run_fits", "train_and_score"]
