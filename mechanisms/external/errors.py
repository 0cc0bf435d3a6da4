"""Errors, input checks and the seeding caveat shared by the third-party adapters.

A third-party library reports a bad input in its own vocabulary (OpenDP raises
``OpenDPException`` or a bare ``TypeError``; Google's ``pydp`` raises
``RuntimeError`` from C++ or silently clamps). An adapter turns every such error
into a privaudit error naming the adapter, so that a user sees *which* audited
target refused *what*. Some libraries do not check inputs at all at call time
(an OpenDP measurement built on a NaN-free domain accepts NaN: its domain is a
promise the caller makes), so adapters validate inputs themselves before calling.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
from types import ModuleType

import numpy as np
from numpy.typing import ArrayLike

from ..validation import InvalidInputError, InvalidParameterError, ParameterTypeError

#: Stated in every adapter docstring and every audit note of a target that cannot be seeded.
UNSEEDED_NOTE = (
    "{library} draws its noise from its own cryptographically secure generator, which cannot be seeded: "
    "the rng argument is accepted for the mechanism protocol but does not drive the noise, so this audit "
    "is not reproducible bit for bit (its statistical guarantee, a lower bound at the stated confidence, is unaffected)"
)

#: pip command installing every optional third-party library the adapters wrap.
INSTALL_HINT = 'pip install -e ".[external]"'


class ExternalLibraryError(InvalidParameterError):
    """A third-party library refused a parameter or an input (the message names the adapter)."""


class ExternalTypeError(ParameterTypeError):
    """A third-party library refused the type of an input (the message names the adapter)."""


def import_library(module: str, adapter: str) -> ModuleType:
    """Import ``module`` for ``adapter``, or raise an ImportError telling how to install it.

    Parameters
    ----------
    module : str
        Dotted module name.
    adapter : str
        Adapter name used in the messages.

    Returns
    -------
    module

    Raises
    ------
    ImportError
        When the module is not installed (the message gives the pip command).
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"{adapter} needs the optional package {module!r}: {INSTALL_HINT} ({exc})") from exc


@contextlib.contextmanager
def library_errors(adapter: str, library: str) -> Iterator[None]:
    """Re-raise any exception of a library call as a privaudit error naming ``adapter``.

    ``TypeError`` becomes :class:`ExternalTypeError`; every other ``Exception``
    (``OpenDPException``, pybind11's ``RuntimeError``, ``ValueError``, ...) becomes
    :class:`ExternalLibraryError`. privaudit's own errors pass through unchanged.

    Parameters
    ----------
    adapter : str
        Adapter name used in the messages.
    library : str
        Library name used in the messages.

    Yields
    ------
    None
        Used as ``with library_errors(adapter, library): ...``.

    Raises
    ------
    ExternalTypeError
        For a TypeError of the library.
    ExternalLibraryError
        For any other exception of the library.
    """
    try:
        yield
    except (InvalidParameterError, InvalidInputError, ParameterTypeError):
        raise
    except TypeError as exc:
        raise ExternalTypeError(f"{adapter}: {library} refused the type: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - every library failure is reported, named by the adapter
        raise ExternalLibraryError(f"{adapter}: {library} refused the call: {type(exc).__name__}: {exc}") from exc


def check_finite_input(adapter: str, x: ArrayLike, *, integer: bool = False) -> np.ndarray:
    """``x`` as a finite float array (or an integer array with ``integer``), else an error naming ``adapter``.

    Parameters
    ----------
    adapter : str
        Adapter name used in the messages.
    x : array-like
        The input.
    integer : bool
        Require integer values (returned as int64).

    Returns
    -------
    ndarray
        float64, or int64 with ``integer``.

    Raises
    ------
    ExternalTypeError
        When x is not numeric.
    InvalidInputError
        When x is not finite, or not integral with ``integer``.
    """
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ExternalTypeError(f"{adapter}: x must be numeric array-like, got {type(x).__name__}: {exc}") from exc
    if not np.all(np.isfinite(arr)):
        raise InvalidInputError(f"{adapter}: x must be finite, got x={np.asarray(x).tolist()!r}")
    if integer:
        if not np.all(arr == np.round(arr)) or np.any(np.abs(arr) > 2**52):
            raise InvalidInputError(f"{adapter}: x must hold integers (the library's domain is integral), got "
                                    f"x={np.asarray(x).tolist()!r}")
        return arr.astype(np.int64)
    return arr


def check_records(adapter: str, x: ArrayLike, absent: float | None = None) -> np.ndarray:
    """A dataset as a 1-d float array in which NaN (or the value ``absent``) marks an absent record.

    Add/remove neighbours then have the same shape: x′ is x with one absent entry
    replaced by a value. Configuration files cannot hold NaN, hence the finite
    sentinel ``absent``. Absent entries are returned as NaN; infinite records are refused.

    Parameters
    ----------
    adapter : str
        Adapter name used in the messages.
    x : array-like of shape (m,)
        The records.
    absent : float, optional
        A finite value that also marks an absent record.

    Returns
    -------
    ndarray of shape (m,)
        float64, NaN for absent records.

    Raises
    ------
    ExternalTypeError
        When x is not numeric.
    InvalidInputError
        When x is not 1-d or holds an infinite record.
    """
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ExternalTypeError(f"{adapter}: x must be a numeric array of records, got {type(x).__name__}") from exc
    if arr.ndim != 1:
        raise InvalidInputError(f"{adapter}: x must be a 1-d array of records (NaN = absent), got shape {arr.shape}")
    if np.any(np.isinf(arr)):
        raise InvalidInputError(f"{adapter}: records must be finite or NaN (absent), got x={arr.tolist()!r}")
    if absent is not None:
        arr = np.where(arr == absent, np.nan, arr)
    return arr


__all__ = ["ExternalLibraryError", "ExternalTypeError", "INSTALL_HINT", "UNSEEDED_NOTE", "adjacency_name", "check_finite_input",
           "check_records", "import_library", "library_errors"]


def adjacency_name(norm: str, sensitivity: float) -> str:
    """``"l1<=Δ"`` / ``"l2<=Δ"`` with Δ written positionally (``1e+308`` would not parse as an adjacency).

    Parameters
    ----------
    norm : {"l1", "l2"}
        Sensitivity norm.
    sensitivity : float
        Δ.

    Returns
    -------
    str
    """
    return f"{norm}<={np.format_float_positional(float(sensitivity), trim='-')}"
