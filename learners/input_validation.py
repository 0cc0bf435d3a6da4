"""Input validation of the learners, with scikit-learn's checks and privaudit's errors.

scikit-learn's ``validate_data`` covers NaN/inf, complex, object and sparse input,
empty arrays and y given as a column, and records ``n_features_in_``; its
``ValueError`` is re-raised as :class:`~privaudit.mechanisms.InvalidInputError` so
that every privaudit input error has one type.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted, check_X_y, validate_data

from privaudit.mechanisms.validation import InvalidInputError, check_array


def check_data(X, y, chunk_size, estimator=None) -> tuple:
    """Validate X (K, d) and y (K,); sets ``estimator.n_features_in_`` when given.

    In memory (``chunk_size=None``) both are converted and checked in full with
    scikit-learn's ``validate_data`` (NaN/inf, complex, object and sparse input, empty
    arrays, y as a column), re-raised as :class:`InvalidInputError`. When streaming,
    only shapes are checked here and values are checked chunk by chunk as they are read.
    """
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


def check_predict_data(estimator, X, fitted_attribute: str = "coef_") -> np.ndarray:
    """Validate X for ``predict`` (features must match ``n_features_in_``)."""
    check_is_fitted(estimator, fitted_attribute)
    try:
        return validate_data(estimator, X, reset=False, dtype=np.float64)
    except ValueError as exc:
        raise InvalidInputError(str(exc)) from exc
