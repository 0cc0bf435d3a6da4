"""Input validation of the learners, with scikit-learn's checks and privaudit's errors.

scikit-learn's ``validate_data`` covers NaN/inf, complex, object and sparse input,
empty arrays and y given as a column, and records ``n_features_in_``; its
``ValueError`` is re-raised as :class:`~privaudit.mechanisms.InvalidInputError` so
that every privaudit input error has one type.

Targets are checked first by :func:`check_numeric_target`: with ``y_numeric=True``
scikit-learn converts only ``object`` arrays (and does not re-check them for NaN after
the conversion, so ``None`` became NaN), and leaves string arrays to fail later inside
numpy with a ``UFuncTypeError`` that names neither the estimator nor y.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils.validation import check_is_fitted, check_X_y, validate_data

from privaudit.mechanisms.validation import InvalidInputError, check_array


class NonNumericTargetError(InvalidInputError):
    """A learner was given string or other non-numeric targets y."""


def check_numeric_target(y: ArrayLike | None, estimator: object = None, *, check_values: bool = True) -> ArrayLike | None:
    """Refuse string or non-numeric targets with an error naming the estimator.

    String arrays (numpy kinds ``U``/``S``) are refused even when every entry parses as a
    number: the learners are regressors (or take numeric class labels), and a string
    array is almost always labels that need an explicit encoding. ``object`` arrays must
    convert to finite floats; complex, datetime and timedelta targets are refused.

    Parameters
    ----------
    y : array-like
        The targets (anything with a ``dtype``, e.g. a memmap, is not converted).
    estimator : estimator or str, optional
        Named in the message (its class name).
    check_values : bool
        Convert and check the values (in-memory fits); ``False`` checks the dtype only
        (streaming fits, whose values are checked chunk by chunk).

    Returns
    -------
    y
        Unchanged if it has a numeric dtype or ``check_values`` is false, else as float64.

    Raises
    ------
    NonNumericTargetError
        For string, complex, datetime or timedelta targets, or object targets that do not
        convert to finite floats.
    """
    if estimator is None:
        name = "the estimator"
    else:
        name = estimator if isinstance(estimator, str) else type(estimator).__name__
    if y is None:  # left to scikit-learn's "requires y" error
        return y
    arr = y if hasattr(y, "dtype") else _as_array(y)
    kind = arr.dtype.kind
    if kind in "biuf":
        return y
    if kind == "c":  # scikit-learn's wording, which its estimator checks expect
        raise NonNumericTargetError(f"Complex data not supported: {name} needs real targets y, got dtype {arr.dtype}")
    if kind in "USmM":
        what = "string" if kind in "US" else {"m": "timedelta", "M": "datetime"}[kind]
        first = np.ravel(np.asarray(arr[:1] if getattr(arr, "ndim", 0) else arr))  # one entry, even of a dask array
        example = f" (first value {first.tolist()[0]!r})" if first.size else ""
        raise NonNumericTargetError(
            f"{name} needs numeric targets y, got {what} targets of dtype {arr.dtype}{example}; "
            f"encode labels as numbers first (e.g. y.astype(float) if they are numbers written as text)")
    if not check_values:
        return y
    try:
        out = np.asarray(arr, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise NonNumericTargetError(f"{name} needs numeric targets y, got dtype {arr.dtype} that does not convert "
                                    f"to float: {exc}") from exc
    if not np.all(np.isfinite(out)):
        bad = int(np.flatnonzero(~np.isfinite(out.ravel()))[0])
        value = np.ravel(arr).tolist()[bad]
        raise NonNumericTargetError(f"{name} needs finite numeric targets y, got {value!r} at index {bad}")
    return out


def _as_array(y) -> np.ndarray:
    """``np.asarray(y)``, as an object array when numpy cannot infer a dtype (ragged input)."""
    try:
        return np.asarray(y)
    except ValueError:
        return np.asarray(y, dtype=object)


def check_data(X: ArrayLike, y: ArrayLike, chunk_size: int | None, estimator: object = None) -> tuple:
    """Validate X (K, d) and y (K,); sets ``estimator.n_features_in_`` when given.

    In memory (``chunk_size=None``) both are converted and checked in full with
    scikit-learn's ``validate_data`` (NaN/inf, complex, object and sparse input, empty
    arrays, y as a column), re-raised as :class:`InvalidInputError`. When streaming,
    only shapes are checked here and values are checked chunk by chunk as they are read.

    Parameters
    ----------
    X : array-like of shape (K, d)
        Features (when streaming: any 2-d object with ``shape`` and slicing, e.g. a memmap).
    y : array-like of shape (K,)
        Numeric targets.
    chunk_size : int or None
        None for an in-memory fit (full validation); else the fit streams and only shapes are checked.
    estimator : estimator, optional
        Gets ``n_features_in_``; named in error messages.

    Returns
    -------
    (X, y)
        float64 arrays in memory; the inputs themselves (y possibly converted) when streaming.

    Raises
    ------
    InvalidInputError
        On any invalid value or shape (:class:`NonNumericTargetError` for non-numeric targets).
    """
    y = check_numeric_target(y, estimator, check_values=chunk_size is None)
    if chunk_size is None:
        try:
            if estimator is not None:
                X, y = validate_data(estimator, X, y, y_numeric=True, dtype=np.float64)
            else:
                X, y = check_X_y(X, y, y_numeric=True, dtype=np.float64)
        except ValueError as exc:
            raise InvalidInputError(str(exc)) from exc
        return X, y
    if not hasattr(X, "shape") or len(X.shape) != 2:
        raise InvalidInputError(f"X must be a 2-d array with shape and slicing, got {type(X).__name__}")
    if not hasattr(y, "shape"):
        y = check_array("y", y, ndim=1)
    if len(y.shape) != 1:
        raise InvalidInputError(f"y must be 1-d, got shape {tuple(y.shape)}")
    if X.shape[0] != y.shape[0]:
        raise InvalidInputError(f"X and y must have the same number of rows, got X.shape={tuple(X.shape)}, y.shape={tuple(y.shape)}")
    if X.shape[0] < 1 or X.shape[1] < 1:
        raise InvalidInputError(f"X must have at least one row and one column, got shape {tuple(X.shape)}")
    if estimator is not None:
        estimator.n_features_in_ = int(X.shape[1])
    return X, y


def check_predict_data(estimator: object, X: ArrayLike, fitted_attribute: str = "coef_") -> np.ndarray:
    """Validate X for ``predict`` (features must match ``n_features_in_``).

    Parameters
    ----------
    estimator : estimator
        A fitted learner.
    X : array-like of shape (n, d)
        Features.
    fitted_attribute : str
        Attribute whose presence marks the estimator as fitted.

    Returns
    -------
    ndarray of shape (n, d), float64

    Raises
    ------
    sklearn.exceptions.NotFittedError
        Before ``fit``.
    InvalidInputError
        On invalid values or a feature count other than ``n_features_in_``.
    """
    check_is_fitted(estimator, fitted_attribute)
    try:
        return validate_data(estimator, X, reset=False, dtype=np.float64)
    except ValueError as exc:
        raise InvalidInputError(str(exc)) from exc
