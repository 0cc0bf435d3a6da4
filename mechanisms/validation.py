"""Parameter and input validation shared by every privaudit component.

Every check raises a subclass of ``ValueError`` or ``TypeError`` whose message
names the parameter and the offending value, so that a user can act on it
without reading the code.
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Any

import numpy as np


class InvalidParameterError(ValueError):
    """A privacy or model parameter is outside its valid range."""


class InvalidInputError(ValueError):
    """Input data are malformed: non-finite values, wrong shape or out of bounds."""


class ParameterTypeError(TypeError):
    """A parameter has the wrong type."""


class PrivacyLeakWarning(UserWarning):
    """Something in the pipeline consumed private data without accounting for it.

    Raised, for example, when feature bounds are derived from the data instead of
    being declared: the bounds then depend on every record and are not covered by
    the mechanism's privacy claim.
    """


class NonContractiveWarning(UserWarning):
    """A modulated map has Lipschitz constant L >= 1 (it is not a contraction)."""


def check_real(name: str, value: Any) -> float:
    """Return ``value`` as a float, refusing booleans, non-numbers and NaN.

    Parameters
    ----------
    name : str
        Parameter name used in error messages.
    value : object
        The value to check.

    Returns
    -------
    float

    Raises
    ------
    ParameterTypeError
        When ``value`` is a bool or not a real number.
    InvalidParameterError
        When it is NaN or too large to be a float.
    """
    if isinstance(value, bool) or not isinstance(value, Real | np.floating | np.integer):
        raise ParameterTypeError(f"{name} must be a real number, got {value!r} ({type(value).__name__})")
    try:
        value = float(value)
    except OverflowError as exc:  # e.g. a Python int like 10**400
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:20] + "…" + repr(value)[-8:]
        raise InvalidParameterError(f"{name} is too large to be a float, got {name}={shown}") from exc
    if math.isnan(value):
        raise InvalidParameterError(f"{name} must not be NaN, got {value!r}")
    return value


def check_epsilon(value: Any, name: str = "epsilon", *, allow_inf: bool = False) -> float:
    """Validate a privacy parameter ε: finite and > 0 (``inf`` only if allowed).

    Parameters
    ----------
    value : object
        The value to check.
    name : str
        Parameter name used in error messages.
    allow_inf : bool
        Accept ``inf``.

    Returns
    -------
    float

    Raises
    ------
    ParameterTypeError
        When ``value`` is a bool or not a real number.
    InvalidParameterError
        When it is NaN, ≤ 0, or infinite without ``allow_inf``.
    """
    eps = check_real(name, value)
    if eps <= 0 or (math.isinf(eps) and not allow_inf):
        limit = "in (0, inf]" if allow_inf else "finite and > 0"
        raise InvalidParameterError(f"{name} must be {limit}, got {name}={value!r}")
    return eps


def check_delta(value: Any, name: str = "delta", *, allow_zero: bool = False) -> float:
    """Validate δ in (0, 1), or [0, 1) when pure DP is allowed.

    Parameters
    ----------
    value : object
        The value to check.
    name : str
        Parameter name used in error messages.
    allow_zero : bool
        Accept δ = 0 (pure DP).

    Returns
    -------
    float

    Raises
    ------
    ParameterTypeError
        When ``value`` is a bool or not a real number.
    InvalidParameterError
        When it lies outside (0, 1) ([0, 1) with ``allow_zero``).
    """
    delta = check_real(name, value)
    low_ok = delta >= 0 if allow_zero else delta > 0
    if not (low_ok and delta < 1):
        interval = "[0, 1)" if allow_zero else "(0, 1)"
        raise InvalidParameterError(f"{name} must lie in {interval}, got {name}={value!r}")
    return delta


def check_positive(name: str, value: Any, *, allow_zero: bool = False, allow_inf: bool = False) -> float:
    """Validate a strictly positive (or non-negative) real parameter.

    Parameters
    ----------
    name : str
        Parameter name used in error messages.
    value : object
        The value to check.
    allow_zero : bool
        Accept 0.
    allow_inf : bool
        Accept ``inf``.

    Returns
    -------
    float

    Raises
    ------
    ParameterTypeError
        When ``value`` is a bool or not a real number.
    InvalidParameterError
        When it is negative, zero without ``allow_zero``, or infinite without ``allow_inf``.
    """
    v = check_real(name, value)
    if (v < 0 or (v == 0 and not allow_zero)) or (math.isinf(v) and not allow_inf):
        bound = ">= 0" if allow_zero else "> 0"
        raise InvalidParameterError(f"{name} must be finite and {bound}, got {name}={value!r}")
    return v


def check_interval(name: str, value: Any, low: float, high: float, *, closed: str = "neither") -> float:
    """Validate ``low < value < high`` (``closed`` in {"neither", "left", "right", "both"}).

    Parameters
    ----------
    name : str
        Parameter name used in error messages.
    value : object
        The value to check.
    low : float
        Lower end.
    high : float
        Upper end.
    closed : {"neither", "left", "right", "both"}
        Which ends are included.

    Returns
    -------
    float

    Raises
    ------
    ParameterTypeError
        When ``value`` is a bool or not a real number.
    InvalidParameterError
        When it lies outside the interval.
    """
    v = check_real(name, value)
    left_ok = v >= low if closed in ("left", "both") else v > low
    right_ok = v <= high if closed in ("right", "both") else v < high
    if not (left_ok and right_ok):
        lb = "[" if closed in ("left", "both") else "("
        rb = "]" if closed in ("right", "both") else ")"
        raise InvalidParameterError(f"{name} must lie in {lb}{low}, {high}{rb}, got {name}={value!r}")
    return v


def check_int(name: str, value: Any, *, minimum: int = 1, maximum: int | None = None) -> int:
    """Validate an integer parameter ``>= minimum`` (and ``<= maximum`` when given).

    Parameters
    ----------
    name : str
        Parameter name used in error messages.
    value : object
        The value to check.
    minimum : int
        Smallest allowed value.
    maximum : int, optional
        Largest allowed value.

    Returns
    -------
    int

    Raises
    ------
    ParameterTypeError
        When ``value`` is a bool or not an integer.
    InvalidParameterError
        When it is below ``minimum`` or above ``maximum``.
    """
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ParameterTypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    if value < minimum:
        raise InvalidParameterError(f"{name} must be >= {minimum}, got {name}={value!r}")
    if maximum is not None and value > maximum:
        raise InvalidParameterError(f"{name} must be <= {maximum}, got {name}={value!r}")
    return int(value)


#: The largest sample size (releases, draws, records) one call accepts: 10⁸ float64 values are 0.8 GB per
#: coordinate, and the audits hold several copies. Checked before anything is allocated, so a mistyped
#: ``n=1e9`` is a clear error naming it instead of a MemoryError (or an hour of work) later.
MAX_SIZE = 10**8


class SizeLimitError(InvalidParameterError):
    """A sample size above :data:`MAX_SIZE` (checked before anything is allocated)."""


def check_size(name: str, value: Any, *, minimum: int = 1, maximum: int = MAX_SIZE) -> int:
    """Validate a sample size: an integer in ``[minimum, maximum]``, checked before anything is allocated.

    Parameters
    ----------
    name : str
        Parameter name used in error messages.
    value : object
        The value to check.
    minimum : int
        Smallest allowed size.
    maximum : int
        Largest allowed size (default :data:`MAX_SIZE`).

    Returns
    -------
    int

    Raises
    ------
    ParameterTypeError
        When ``value`` is a bool or not an integer.
    InvalidParameterError
        When it is below ``minimum``.
    SizeLimitError
        When it is above ``maximum``; the message names the value and the limit.
    """
    n = check_int(name, value, minimum=minimum)
    if n > maximum:
        raise SizeLimitError(f"{name} must be <= {maximum:.0e} (a larger size allocates more memory than one call "
                             f"may; split the work), got {name}={value!r}")
    return n


def check_array(name: str, value: Any, *, ndim: int | tuple[int, ...] | None = None, dim: int | None = None) -> np.ndarray:
    """Convert to a float array and reject NaN/inf, wrong ndim or wrong last dimension.

    Parameters
    ----------
    name : str
        Parameter name used in error messages.
    value : object
        The value to check.
    ndim : int, tuple of int or None
        Allowed numbers of dimensions.
    dim : int or None
        Required size of the last axis.

    Returns
    -------
    ndarray of float
        A finite float array (the input itself when it already is one).

    Raises
    ------
    InvalidInputError
        When it is not numeric, has a wrong ndim or last dimension, or holds NaN/inf.
    """
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{name} must be numeric array-like, got {type(value).__name__}: {exc}") from exc
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else ndim
        if arr.ndim not in allowed:
            raise InvalidInputError(f"{name} must have ndim in {allowed}, got shape {arr.shape}")
    if dim is not None and (arr.ndim == 0 or arr.shape[-1] != dim):
        raise InvalidInputError(f"{name} must have last dimension {dim}, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise InvalidInputError(
            f"{name} must be finite; found {arr[tuple(bad)]!r} at index {tuple(int(i) for i in bad)}"
        )
    return arr
