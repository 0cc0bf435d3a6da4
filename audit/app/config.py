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

The keys each ``[[audits]]`` entry accepts are declared by its kind
(:mod:`privaudit.audit.kinds`) as :class:`~privaudit.audit.schema.fields.Field` objects, so
the validator here is generic: an unknown key gets a "did you mean" hint (:mod:`difflib`), a wrong type
raises :class:`ConfigTypeError` (a ``TypeError``), a value out of range
:class:`ConfigValueError` (a ``ValueError``), a missing file or preset
:class:`ConfigFileError`. Every message names the key path (``audits[2].n``) and the
offending value, and the file it came from.

Components (mechanisms, priors, learners, experiments, samplers) are named from
their registries (:mod:`privaudit.audit.schema.components`). A ``"package.module:attr"``
reference is refused unless the user opts in for that module
(``allow_imports=[...]`` here, ``--allow-import MODULE`` on the command line), and
even then nothing is called while the file is validated.

Presets are TOML files shipped as package data in ``privaudit.audit.presets`` and
read through :mod:`importlib.resources`, so they work after a non-editable install.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from privaudit.audit.schema.components import imports_allowed
from privaudit.audit.schema.limits import check_components
from privaudit.audit.app.toml_guard import check_document, parse_toml
from privaudit.audit.schema.fields import (
    REQUIRED,
    ConfigError,
    ConfigFileError,
    ConfigKeyError,
    ConfigTypeError,
    ConfigValueError,
    Field,
    check_keys,
    coerce_field,
    did_you_mean,
    validate_table,
)
from privaudit.audit.kinds import audit_kinds, get_kind
# The presets package lists and reads its own files (without this module's imports, for `privaudit list`).
from privaudit.audit.presets import available_presets, preset_text

#: Keys accepted at the top level of a configuration file.
TOP_LEVEL_KEYS = ("name", "description", "seed", "samples", "audits")


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

    def replace(self, **changes: Any) -> Config:
        """A copy with some attributes changed (e.g. ``seed`` from ``--seed``), re-validated.

        Parameters
        ----------
        **changes
            New values of configuration attributes, by name; ``seed`` and ``samples`` are
            validated as their keys are, and a None value leaves its attribute unchanged.

        Returns
        -------
        Config
        """
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


_SEED = Field("int", 0, low=0, doc="root seed: task i draws from SeedSequence(seed).spawn(...)[i]")
#: The largest ``samples`` factor: scaling a sample size by more is never meant, and 1e308 overflowed the sizes.
MAX_SAMPLES = 1e6
#: Bytes of a configuration's name: its report folder and the temporaries ``.<name>.<8 hex>.ready`` (15 bytes
#: more) must fit the 255-byte file names of common file systems.
MAX_NAME_BYTES = 200
_SAMPLES = Field("float", 1.0, low=0.0, high=MAX_SAMPLES, closed="right",
                 doc="factor applied to every sample-size field")
_NAME = Field("str", REQUIRED, doc="report folder name: reports go to <out>/<name>/ (default: the file's stem)")
#: The top-level keys besides ``audits`` (the keys reference, :mod:`privaudit.audit.app.keys_reference`, reads it).
TOP_LEVEL_FIELDS = {"name": dataclasses.replace(_NAME, default=None), "description": Field("str", "", doc="one line shown at the top of the report"),
                    "seed": _SEED, "samples": _SAMPLES}


def parse_config(data: Mapping[str, Any], *, name: str = "config", source: str = "",
                 allow_imports: Iterable[str] = (), max_memory: int | None = None) -> Config:
    """Validate a parsed TOML document (or the same data built in Python) into a :class:`Config`.

    The structural guards come first, as for a file (:func:`load_config` calls this):
    :func:`~privaudit.audit.app.toml_guard.check_document` (depth, size, 64-bit
    integers, finite numbers, no empty arrays, no control characters) and
    :func:`~privaudit.audit.schema.limits.check_components` (a component's ``dim`` within
    the memory limit); then every field of every entry.

    Parameters
    ----------
    data : mapping
        The document: top-level keys and an ``audits`` array of tables.
    name : str
        Report folder name when ``data`` has no ``name``.
    source : str
        Where ``data`` came from (a path, ``preset:<name>``), appended to error messages.
    allow_imports : iterable of str
        Modules whose ``"module:attr"`` references this document may use (besides those
        allowed process-wide by :func:`privaudit.audit.schema.components.allow_imports`).
    max_memory : int, optional
        Bytes a component may allocate when built (default: the memory available).

    Returns
    -------
    Config

    Raises
    ------
    ConfigKeyError, ConfigTypeError, ConfigValueError
        Naming the key path and the value, and ``source``.
    """
    where = f" (in {source})" if source else ""
    try:
        with imports_allowed(allow_imports):
            if isinstance(data, Mapping) and not isinstance(data, dict):
                data = dict(data)
            check_document(data)
            check_components(data, limit=max_memory)
            return _parse(data, name, source, where)
    except ConfigError as exc:
        if where and source not in str(exc):
            exc.args = (f"{exc.args[0]}{where}",)
        raise


def _parse(data: Mapping[str, Any], name: str, source: str, where: str) -> Config:
    if not isinstance(data, Mapping):
        raise ConfigTypeError(f"a configuration must be a table, got {type(data).__name__}")
    check_keys("", data, TOP_LEVEL_KEYS, where=where)
    cfg_name = coerce_field("name", _NAME, data.get("name", name))
    if not cfg_name or any(c in cfg_name for c in "/\\") or cfg_name.startswith("."):
        raise ConfigValueError(f"name must be a plain folder name, got name = {cfg_name!r}")
    if len(cfg_name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        raise ConfigValueError(
            f"name must be at most {MAX_NAME_BYTES} bytes (UTF-8) so that its folder and the temporaries "
            f"'.<name>.<8 hex>.ready' fit a file name, got {len(cfg_name.encode('utf-8', 'surrogatepass'))} "
            f"bytes: name = {cfg_name[:40]!r}…"
        )
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
    kinds = audit_kinds()
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
        task = get_kind(kind)
        target = entry.get("target", None)
        if target is not None and not isinstance(target, str):
            raise ConfigTypeError(f"{path}.target must be a string, got {path}.target = {target!r}")
        rest = {k: v for k, v in entry.items() if k not in ("kind", "target")}
        params = validate_table(path, rest, task.fields)
        task.validate(path, params)
        audits.append(AuditSpec(i, kind, target or task.default_target(params), params))
    return Config(cfg_name, seed, samples, tuple(audits), description, source)


def _is_explicit_file(spec: str) -> bool:
    """``./name``, a path with a separator, or ``*.toml``: a file, never a preset."""
    return spec.endswith(".toml") or "/" in spec or "\\" in spec or os.sep in spec or spec.startswith(".")


def read_spec(spec: str | Path) -> tuple[str, str, str]:
    """The TOML text, source and default name of ``CONFIG|PRESET``, resolved as :func:`load_config` says.

    Parameters
    ----------
    spec : str or Path
        A preset name, or the path of a configuration file.

    Returns
    -------
    text, source, name : str
        ``source`` is the path, or ``preset:<name>``; ``name`` the preset's name or the file's stem.

    Raises
    ------
    ConfigFileError
        A missing, unreadable or directory path, or a bare name that is neither a preset nor a file
        (with a "did you mean" hint).
    """
    presets = available_presets()
    explicit = isinstance(spec, Path) or _is_explicit_file(str(spec))
    spec = str(spec)
    if not explicit and spec in presets:
        return preset_text(spec), f"preset:{spec}", spec
    path = Path(spec)
    if path.is_dir():
        raise ConfigFileError(f"config file {spec!r} is a directory, not a config file")
    if not path.is_file():
        if explicit:
            raise ConfigFileError(f"config file {spec!r} does not exist")
        raise ConfigFileError(f"{spec!r} is neither a config file nor a preset{did_you_mean(spec, presets)} "
                              f"(presets: {', '.join(presets)})")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigFileError(f"cannot read config file {spec!r}: {exc}") from exc
    return text, spec, path.stem


def load_config(spec: str | Path, *, allow_imports: Iterable[str] = (), max_memory: int | None = None) -> Config:
    """Load ``CONFIG|PRESET``: the one loader of ``privaudit run`` and of the Python API.

    Resolution: a bare name of a shipped preset is the preset, even when a file or
    folder of that name exists in the current folder; ``./name``, a path with a
    separator, a name ending in ``.toml`` or a :class:`~pathlib.Path` is a file; any
    other bare name is a file if one exists, else an error suggesting the closest
    preset. The text is then parsed with the structural guards of
    :mod:`privaudit.audit.app.toml_guard` and validated by :func:`parse_config`.

    Parameters
    ----------
    spec : str or Path
        A preset name or a configuration file.
    allow_imports : iterable of str
        Modules whose ``"module:attr"`` references the file may use (``--allow-import``).
    max_memory : int, optional
        Bytes a component may allocate when built (``--max-memory``; default: the memory available).

    Returns
    -------
    Config

    Raises
    ------
    ConfigFileError
        See :func:`read_spec`; also a TOML syntax error.
    ConfigKeyError, ConfigTypeError, ConfigValueError
        Naming the key path, the value and the file (see :func:`parse_config`).
    """
    text, source, name = read_spec(spec)
    try:
        data = parse_toml(text, source)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigFileError(f"{source} is not valid TOML: {exc}") from exc
    return parse_config(data, name=name, source=source, allow_imports=allow_imports, max_memory=max_memory)


__all__ = [
    "REQUIRED", "TOP_LEVEL_KEYS", "AuditSpec", "Config", "ConfigError", "ConfigFileError", "ConfigKeyError",
    "ConfigTypeError", "ConfigValueError", "Field", "available_presets", "check_keys", "coerce_field",
    "did_you_mean", "load_config", "parse_config", "preset_text", "read_spec", "validate_table",
]
