"""Audit configurations: TOML files validated into frozen dataclasses.

A configuration names what to audit and how hard to look::

    name = "tradeoff"                  # report folder name (default: the file's stem)
    description = "Trade-off audits of the shipped mechanisms"
    seed = 0                           # root of every task's SeedSequence
    samples = 1.0                      # multiplies every sample size (``--samples``)

    [[audits]]
    kind = "tradeoff"                  # a registered task kind (see ``privaudit list``)
    target = "Gaussian, analytic"      # label shown in the report
    mechanism = { name = "gaussian", epsilon = 1.0, delta = 1e-5 }
    x = [0.0]
    x_prime = [1.0]
    n = 20000                          # a sample size: scaled by ``samples``

The keys each ``[[audits]]`` entry accepts are declared by its task kind
(:mod:`privaudit.audit.tasks`) as :class:`Field` objects, so the validator here is
generic: an unknown key gets a "did you mean" hint (:mod:`difflib`), a wrong type
raises :class:`ConfigTypeError` (a ``TypeError``), a value out of range
:class:`ConfigValueError` (a ``ValueError``), a missing file or preset
:class:`ConfigFileError`. Every message names the key path (``audits[2].n``) and the
offending value, and the file it came from.

Presets are TOML files shipped as package data in ``privaudit.audit.presets`` and
read through :mod:`importlib.resources`, so they work after a non-editable install.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import tomllib
from collections.abc import Callable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from privaudit.mechanisms.validation import InvalidInputError, InvalidParameterError, ParameterTypeError

#: Keys accepted at the top level of a configuration file.
TOP_LEVEL_KEYS = ("name", "description", "seed", "samples", "audits")
#: Marker of a required field (no default).
REQUIRED = object()
_PRESET_PACKAGE = "privaudit.audit.presets"


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


def did_you_mean(word: str, candidates) -> str:
    """``"; did you mean 'x'?"`` for the closest candidate (difflib ratio ≥ 0.6), else ``""``."""
    close = difflib.get_close_matches(str(word), [str(c) for c in candidates], n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def check_keys(path: str, table: Mapping[str, Any], allowed, *, where: str = "") -> None:
    """Raise :class:`ConfigKeyError` for the first key of ``table`` not in ``allowed``."""
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
    type : {"float", "int", "str", "bool", "array", "strings", "table"}
        ``"array"`` is a (nested) list of numbers or a single number, kept as
        lists/floats so that the configuration stays plain data; ``"strings"`` a list of strings;
        ``"table"`` an inline TOML table (a dict).
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
    "array": "a number or an array of numbers", "strings": "an array of strings", "table": "a table",
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
    """Type-check, range-check and normalise one value; raise naming ``path`` and ``value``."""
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
    elif t == "strings":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _type_error(path, field, value)
        value = list(value)
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
    """Validate ``table`` against ``fields``: unknown keys, missing keys, types, ranges; fill defaults."""
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


@dataclasses.dataclass(frozen=True)
class AuditSpec:
    """One validated ``[[audits]]`` entry.

    ``params`` holds every field of the kind (defaults filled in, arrays as lists):
    plain data, so that a task can be hashed for the cache and shipped to a worker.
    """

    index: int
    kind: str
    target: str
    params: dict

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "target": self.target, **self.params}


@dataclasses.dataclass(frozen=True)
class Config:
    """A validated configuration.

    Attributes
    ----------
    name : str
        Report folder name: reports go to ``<out>/<name>/``.
    seed : int
        Root seed; task ``i`` draws from ``SeedSequence(seed).spawn(...)[i]``.
    samples : float
        Factor applied to every sample-size field.
    audits : tuple of AuditSpec
    description : str
    source : str
        Where the configuration came from (a path, or ``preset:<name>``).
    """

    name: str
    seed: int
    samples: float
    audits: tuple[AuditSpec, ...]
    description: str = ""
    source: str = ""

    def replace(self, **changes) -> Config:
        """A copy with some attributes changed (e.g. ``seed`` from ``--seed``), re-validated."""
        if "seed" in changes and changes["seed"] is not None:
            changes["seed"] = coerce_field("seed", _SEED, changes["seed"])
        if "samples" in changes and changes["samples"] is not None:
            changes["samples"] = coerce_field("samples", _SAMPLES, changes["samples"])
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})

    def to_dict(self) -> dict[str, Any]:
        """Plain data, as recorded in ``report.json``."""
        return {
            "name": self.name, "description": self.description, "seed": self.seed, "samples": self.samples,
            "source": self.source, "audits": [a.to_dict() for a in self.audits],
        }


_SEED = Field("int", 0, low=0, doc="root seed")
_SAMPLES = Field("float", 1.0, low=0.0, closed="right", doc="sample-size factor")
_NAME = Field("str", REQUIRED)


def parse_config(data: Mapping[str, Any], *, name: str = "config", source: str = "") -> Config:
    """Validate a parsed TOML document into a :class:`Config`.

    Raises
    ------
    ConfigKeyError, ConfigTypeError, ConfigValueError
        Naming the key path and the value, and ``source``.
    """
    from .tasks import get_task_kind, task_kinds  # the task registry declares each kind's fields

    where = f" (in {source})" if source else ""
    try:
        check_keys("", data, TOP_LEVEL_KEYS, where=where)
        cfg_name = coerce_field("name", _NAME, data.get("name", name))
        if not cfg_name or any(c in cfg_name for c in "/\\") or cfg_name.startswith("."):
            raise ConfigValueError(f"name must be a plain folder name, got name = {cfg_name!r}")
        seed = coerce_field("seed", _SEED, data.get("seed", 0))
        samples = coerce_field("samples", _SAMPLES, data.get("samples", 1.0))
        description = coerce_field("description", Field("str"), data.get("description", ""))
        raw_audits = data.get("audits")
        if raw_audits is None:
            raise ConfigKeyError("missing required key audits (an array of [[audits]] tables)")
        if not isinstance(raw_audits, list) or not all(isinstance(a, dict) for a in raw_audits):
            raise ConfigTypeError(f"audits must be an array of tables ([[audits]]), got audits = {raw_audits!r}")
        if not raw_audits:
            raise ConfigValueError("audits must hold at least one [[audits]] entry, got audits = []")
        audits = []
        kinds = task_kinds()
        for i, entry in enumerate(raw_audits):
            path = f"audits[{i}]"
            kind = entry.get("kind")
            if kind is None:
                raise ConfigKeyError(f"missing required key {path}.kind (one of: {', '.join(sorted(kinds))})")
            if not isinstance(kind, str):
                raise ConfigTypeError(f"{path}.kind must be a string, got {path}.kind = {kind!r}")
            if kind not in kinds:
                raise ConfigValueError(
                    f"unknown {path}.kind = {kind!r}{did_you_mean(kind, kinds)} (known: {', '.join(sorted(kinds))})"
                )
            task = get_task_kind(kind)
            target = entry.get("target", None)
            if target is not None and not isinstance(target, str):
                raise ConfigTypeError(f"{path}.target must be a string, got {path}.target = {target!r}")
            rest = {k: v for k, v in entry.items() if k not in ("kind", "target")}
            params = validate_table(path, rest, task.fields)
            task.validate(path, params)
            audits.append(AuditSpec(i, kind, target or task.default_target(params), params))
    except ConfigError as exc:
        if where and source not in str(exc):
            exc.args = (f"{exc.args[0]}{where}",)
        raise
    return Config(cfg_name, seed, samples, tuple(audits), description, source)


def available_presets() -> list[str]:
    """Names of the presets shipped in ``privaudit.audit.presets``."""
    files = resources.files(_PRESET_PACKAGE)
    return sorted(p.name[: -len(".toml")] for p in files.iterdir() if p.name.endswith(".toml"))


def preset_text(name: str) -> str:
    """The TOML text of preset ``name``."""
    presets = available_presets()
    if name not in presets:
        raise ConfigFileError(f"unknown preset {name!r}{did_you_mean(name, presets)} (presets: {', '.join(presets)})")
    return (resources.files(_PRESET_PACKAGE) / f"{name}.toml").read_text(encoding="utf-8")


def _parse_toml(text: str, source: str) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigFileError(f"{source} is not valid TOML: {exc}") from exc


def load_config(spec: str | Path) -> Config:
    """Load a configuration from a file path, or a shipped preset by name.

    A path that exists is read as a file; otherwise ``spec`` must name a preset.
    A name ending in ``.toml`` (or containing a path separator) that does not exist
    raises :class:`ConfigFileError`, as does an unknown preset (with a hint).
    """
    path = Path(spec)
    if path.is_file():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigFileError(f"cannot read config file {str(path)!r}: {exc}") from exc
        return parse_config(_parse_toml(text, str(path)), name=path.stem, source=str(path))
    spec = str(spec)
    if spec.endswith(".toml") or "/" in spec or "\\" in spec or path.is_dir():
        what = "is a directory, not a config file" if path.is_dir() else "does not exist"
        raise ConfigFileError(f"config file {spec!r} {what}")
    presets = available_presets()
    if spec not in presets:
        raise ConfigFileError(
            f"{spec!r} is neither a config file nor a preset{did_you_mean(spec, presets)} (presets: {', '.join(presets)})"
        )
    return parse_config(_parse_toml(preset_text(spec), f"preset:{spec}"), name=spec, source=f"preset:{spec}")
