"""The schema language of configuration tables: :class:`Field`, its coercion, and the config errors.

A configuration is plain TOML data; every table of it (the top level, an
``[[audits]]`` entry, a component table) is validated against a mapping of key ->
:class:`Field`. This module knows nothing of audits: kinds
(:mod:`privaudit.audit.kinds`) declare their fields with it, components
(:mod:`privaudit.audit.schema.components`) their parameters, and :mod:`privaudit.audit.app.config`
assembles the whole file. Every error names the key path (``audits[2].n``) and the
offending value, and is a ``TypeError`` or ``ValueError`` subclass (the CLI maps
:class:`ConfigError` to exit code 2).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from privaudit.mechanisms.registry import did_you_mean
from privaudit.mechanisms.validation import InvalidInputError, InvalidParameterError, ParameterTypeError

#: Marker of a required field (no default).
REQUIRED = object()


class ConfigError(Exception):
    """Mixin of every configuration error (the CLI maps it to exit code 2)."""


class ConfigKeyError(ConfigError, InvalidParameterError):
    """An unknown or missing key."""


class ConfigValueError(ConfigError, InvalidParameterError):
    """A value outside its valid range or set of choices."""


class ConfigTypeError(ConfigError, ParameterTypeError):
    """A value of the wrong type."""


class ConfigFileError(ConfigError, InvalidInputError):
    """A missing or unreadable configuration file, a TOML syntax error or an unknown preset."""


def check_keys(path: str, table: Mapping[str, Any], allowed: Iterable[str], *, where: str = "") -> None:
    """Raise :class:`ConfigKeyError` for the first key of ``table`` not in ``allowed``.

    Parameters
    ----------
    path : str
        Key path named in errors (``audits[0]``).
    table : mapping
        The table read from the configuration.
    allowed : iterable of str
        The keys the table may hold.
    where : str
        Suffix of the messages (e.g. the file).

    Raises
    ------
    ConfigKeyError
        Naming the key, with the closest allowed one.
    """
    allowed = list(allowed)
    for key, value in table.items():
        if key not in allowed:
            loc = f"{path}.{key}" if path else key
            raise ConfigKeyError(
                f"unknown key {loc} = {value!r}{where}{did_you_mean(key, allowed)} "
                f"(allowed: {', '.join(sorted(allowed))})"
            )


@dataclasses.dataclass(frozen=True)
class Field:
    """One key of an audit entry: its type, default, range and role.

    Parameters
    ----------
    type : {"float", "int", "str", "bool", "array", "strings", "names", "table", "array-or-table"}
        ``"array"`` is a (nested) list of numbers or a single number, kept as
        lists/floats so that the configuration stays plain data; ``"strings"`` a list of strings;
        ``"names"`` a string or a non-empty list of strings (kept as given: one name, or several);
        ``"table"`` an inline TOML table (a dict); ``"array-or-table"`` either (e.g. a ``[low, high]`` box or
        a domain table).
    default : Any
        Value when the key is absent; :data:`REQUIRED` makes the key mandatory.
        ``None`` means "let the audit choose".
    low, high, closed : optional
        Admissible range of a number (``closed`` as in
        :func:`privaudit.mechanisms.validation.check_interval`).
    choices : tuple, optional
        Admissible values of a string.
    samples : bool
        The field is a sample size and is multiplied by the run's ``samples`` factor.
    validate : callable(path, value) -> value, optional
        Further validation/normalisation after the type check (e.g. building a
        mechanism from its table to check its parameters); it raises errors naming
        the key path and value.
    doc : str
        One line for ``privaudit list``.
    """

    type: str
    default: Any = REQUIRED
    low: float | None = None
    high: float | None = None
    closed: str = "both"
    choices: tuple | None = None
    samples: bool = False
    validate: Callable[[str, Any], Any] | None = None
    doc: str = ""

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


_TYPE_NAMES = {
    "float": "a number", "int": "an integer", "str": "a string", "bool": "a boolean (true/false)",
    "array": "a number or an array of numbers", "strings": "an array of strings",
    "names": "a name or a non-empty array of names", "table": "a table",
    "array-or-table": "an array of numbers or a table",
}


def _type_error(path: str, field: Field, value: Any) -> ConfigTypeError:
    return ConfigTypeError(
        f"{path} must be {_TYPE_NAMES[field.type]}, got {path} = {value!r} ({type(value).__name__})"
    )


def _is_number_array(value: Any) -> bool:
    if isinstance(value, list):
        return all(_is_number_array(v) for v in value)
    return isinstance(value, int | float) and not isinstance(value, bool)


def coerce_field(path: str, field: Field, value: Any) -> Any:
    """Type-check, range-check and normalise one value; raise naming ``path`` and ``value``.

    Parameters
    ----------
    path : str
        Key path named in errors (``audits[0]``).
    field : Field
        The key's declaration.
    value : object
        The value as read.

    Returns
    -------
    object
        The normalised value (e.g. an int for an integral float).

    Raises
    ------
    ConfigTypeError
        For a value of the wrong type.
    ConfigValueError
        For a value out of range or not among the choices.
    """
    if value is None:  # only reachable through a None default
        return None
    t = field.type
    if t == "float":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _type_error(path, field, value)
        value = float(value)
        if math.isnan(value):
            raise ConfigValueError(f"{path} must not be NaN, got {path} = {value!r}")
    elif t == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                raise _type_error(path, field, value)
    elif t == "str":
        if not isinstance(value, str):
            raise _type_error(path, field, value)
    elif t == "bool":
        if not isinstance(value, bool):
            raise _type_error(path, field, value)
    elif t == "array":
        # a bare number is a 0-d input (e.g. a category of randomised response)
        if not _is_number_array(value):
            raise _type_error(path, field, value)
        value = _floats(value)
        flat = np.ravel(np.asarray(value, dtype=float)) if _rectangular(value) else None
        if flat is None:
            raise ConfigValueError(f"{path} must be a rectangular array (rows of equal length), got {path} = {value!r}")
        if flat.size == 0:
            raise ConfigValueError(f"{path} must not be empty, got {path} = {value!r}")
        if not np.isfinite(flat).all():
            raise ConfigValueError(f"{path} must hold finite numbers only, got {path} = {value!r}")
    elif t == "strings":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _type_error(path, field, value)
        value = list(value)
    elif t == "names":
        if not isinstance(value, str) and not (isinstance(value, list) and value
                                               and all(isinstance(v, str) for v in value)):
            raise _type_error(path, field, value)
        value = value if isinstance(value, str) else list(value)
    elif t == "array-or-table":
        if isinstance(value, dict):
            value = dict(value)
        else:  # checked exactly as an "array" field, errors naming this field's type
            try:
                value = coerce_field(path, dataclasses.replace(field, type="array", validate=None, choices=None), value)
            except ConfigTypeError:
                raise _type_error(path, field, value) from None
    elif t == "table":
        if not isinstance(value, dict):
            raise _type_error(path, field, value)
        value = dict(value)
    else:  # pragma: no cover - a programming error in a task declaration
        raise ValueError(f"unknown field type {t!r} for {path}")
    if t in ("float", "int"):
        _check_range(path, field, value)
    if field.choices is not None and value not in field.choices:
        raise ConfigValueError(
            f"{path} must be one of {list(field.choices)}, got {path} = {value!r}{did_you_mean(value, field.choices)}"
        )
    if field.validate is not None:
        value = field.validate(path, value)
    return value


def _rectangular(value) -> bool:
    """Whether nested lists have equal lengths at every depth (so that they form one array)."""
    if not isinstance(value, list):
        return True
    if any(isinstance(v, list) for v in value):
        if not all(isinstance(v, list) for v in value) or len({len(v) for v in value}) > 1:
            return False
        return all(_rectangular(v) for v in value)
    return True


def _floats(value):
    return [_floats(v) for v in value] if isinstance(value, list) else float(value)


def _check_range(path: str, field: Field, value: float) -> None:
    lo_ok = field.low is None or (value >= field.low if field.closed in ("left", "both") else value > field.low)
    hi_ok = field.high is None or (value <= field.high if field.closed in ("right", "both") else value < field.high)
    if not (lo_ok and hi_ok) or (isinstance(value, float) and math.isinf(value)):
        lb = "[" if field.closed in ("left", "both") and field.low is not None else "("
        rb = "]" if field.closed in ("right", "both") and field.high is not None else ")"
        lo = "-inf" if field.low is None else f"{field.low:g}"
        hi = "inf" if field.high is None else f"{field.high:g}"
        raise ConfigValueError(f"{path} must lie in {lb}{lo}, {hi}{rb} and be finite, got {path} = {value!r}")


def validate_table(path: str, table: Mapping[str, Any], fields: Mapping[str, Field], *, where: str = "") -> dict:
    """Validate ``table`` against ``fields``: unknown keys, missing keys, types, ranges; fill defaults.

    Parameters
    ----------
    path : str
        Key path named in errors (``audits[0]``).
    table : mapping
        The table read from the configuration.
    fields : mapping of str to Field
        The declarations of the table's keys.
    where : str
        Suffix of the messages (e.g. the file).

    Returns
    -------
    dict
        Every declared key, defaults filled in.

    Raises
    ------
    ConfigKeyError
        For an unknown or a missing required key.
    ConfigTypeError
        For a value of the wrong type.
    ConfigValueError
        For a value out of range.
    """
    check_keys(path, table, fields, where=where)
    out = {}
    for key, field in fields.items():
        loc = f"{path}.{key}" if path else key
        if key not in table:
            if field.required:
                raise ConfigKeyError(f"missing required key {loc}{where}")
            out[key] = field.default
            continue
        out[key] = coerce_field(loc, field, table[key])
    return out
