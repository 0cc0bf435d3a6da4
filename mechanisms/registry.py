"""One registry class for everything privaudit looks up by name: audit kinds, configuration components, attackers.

Every registry follows the same rules:

Names
    A name is a non-empty string without ``":"`` (a ``":"`` marks a ``"module:attr"``
    reference in configurations, never a registered name).
Clashes
    Registering a *different* object under a taken name raises the registry's error,
    naming both sources (``"built-in privaudit.mechanisms:LaplaceMechanism"`` and
    ``"entry point mypkg:Thing"``); registering the same object again is a no-op;
    ``force=True`` replaces.
Entry points
    Installed packages add entries through an entry-point group. The group is read on
    the first lookup that needs it (listing, or a name not registered yet), not on
    import. An entry point that cannot be used (its name is malformed, its module
    fails to import, it loads to the wrong kind of object, or it clashes with a
    registered name) is named in a :class:`PluginWarning` and skipped: one broken
    plugin never breaks a run, or a listing, that does not need it.

This module lives in :mod:`privaudit.mechanisms` so that :mod:`privaudit.attacks` can use
it without importing :mod:`privaudit.audit`.

Mechanisms declare themselves next to their code
    ``@register_mechanism("gaussian", check=sigma_or_epsilon_delta)`` on a class puts it in
    :data:`DECLARED_MECHANISMS` under its configuration name; its parameters are the class's own
    ``_parameter_constraints`` (scikit-learn's vocabulary,
    :mod:`privaudit.mechanisms.parameter_constraints`), ``check`` the rule spanning several
    of them. Adapters whose module must not be imported yet are declared by reference
    (``register_mechanism("opendp-laplace", "module:Class", constraints=...)``). The
    configuration registry (``privaudit.audit.schema.components.MECHANISMS``) is filled
    from these declarations.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import importlib.metadata
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Generic, TypeVar

from .validation import InvalidParameterError

T = TypeVar("T")


class RegistryError(InvalidParameterError):
    """A malformed name, an unknown name, a name clash or an object a registry refuses."""


class PluginWarning(UserWarning):
    """An installed entry point could not be used and was skipped (the message names it and why)."""


def did_you_mean(word: str, candidates: Iterable[Any]) -> str:
    """``"; did you mean 'x'?"`` for the closest candidate (difflib ratio >= 0.6), else ``""``.

    Parameters
    ----------
    word : str
        The unknown name.
    candidates : iterable
        The known names.

    Returns
    -------
    str
        The hint, ready to append to a message.
    """
    close = difflib.get_close_matches(str(word), [str(c) for c in candidates], n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def reference(obj: Any) -> str:
    """``"module:qualname"`` of a class or function (a string reference is returned as it is).

    Parameters
    ----------
    obj : object
        A class, a function, an instance, or a ``"module:attr"`` string.

    Returns
    -------
    str
        Where ``obj`` is defined; for an instance, where its class is (``"... instance"``).
    """
    if isinstance(obj, str):
        return obj
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str):
        return f"{module}:{qualname}"
    cls = type(obj)
    return f"{cls.__module__}:{cls.__qualname__} instance"


def _default_source(ref: str) -> str:
    return f"built-in {ref}" if ref.startswith("privaudit.") else f"registered {ref}"


def entry_point_source(ep: importlib.metadata.EntryPoint) -> str:
    """How an entry point is named in messages: ``"entry point mypkg:Thing (distribution mypkg 1.0)"``.

    Parameters
    ----------
    ep : importlib.metadata.EntryPoint

    Returns
    -------
    str
    """
    try:
        dist = ep.dist
        of = f" (distribution {dist.metadata['Name']} {dist.version})" if dist is not None else ""
    except Exception:  # noqa: BLE001 - broken metadata still lets the entry point be named
        of = ""
    return f"entry point {ep.value}{of}"


@dataclasses.dataclass(frozen=True)
class _Entry(Generic[T]):
    obj: T
    source: str


class Registry(Generic[T]):
    """Objects of one sort, by name, with the clash and plugin rules of this module.

    Parameters
    ----------
    sort : str
        What the registry holds, for messages (``"attack"``, ``"audit kind"``, ``"mechanism"``).
    group : str, optional
        Entry-point group of third-party entries (none: built-ins and run-time registrations only).
    error : type of Exception
        Raised for a malformed name, an unknown name, a clash or a refused object.
    validate : callable(name, obj), optional
        Raises ``error`` (naming ``name``) for an object this registry must not hold.
    identity : callable(obj) -> hashable, optional
        What makes two objects "the same" for the clash rule (default: the object itself, with ``==``).
    describe : callable(obj) -> str, optional
        ``"module:attr"`` of an object, for messages (default: :func:`reference`).
    from_entry_point : callable(EntryPoint) -> obj, optional
        Turns an entry point into the object to register (default: ``ep.load()``).
    """

    def __init__(
        self, sort: str, group: str | None = None, *, error: type[Exception] = RegistryError,
        validate: Callable[[str, T], None] | None = None, identity: Callable[[T], Any] | None = None,
        describe: Callable[[T], str] | None = None,
        from_entry_point: Callable[[importlib.metadata.EntryPoint], T] | None = None,
    ) -> None:
        self.sort, self.group, self.error = sort, group, error
        self._validate = validate
        self._identity = identity or (lambda obj: obj)
        self._describe = describe or reference
        self._from_entry_point = from_entry_point or (lambda ep: ep.load())
        self._entries: dict[str, _Entry[T]] = {}
        self._entry_points_loaded = group is None

    # ------------------------------------------------------------------ registering
    def register(self, name: str, obj: T, *, source: str | None = None, force: bool = False) -> T:
        """Register ``obj`` under ``name``; returns ``obj``.

        Parameters
        ----------
        name : str
            Non-empty, without ``":"``.
        obj : object
            What the name stands for.
        source : str, optional
            Where ``obj`` comes from, for clash messages (default: ``"built-in module:attr"``
            for privaudit's own objects, ``"registered module:attr"`` otherwise).
        force : bool
            Replace an entry of the same name holding a different object.

        Returns
        -------
        object
            ``obj``.

        Raises
        ------
        error
            A malformed name, an object ``validate`` refuses, or a clash without ``force``;
            a clash message names both sources.
        """
        self._check_name(name)
        if self._validate is not None:
            self._validate(name, obj)
        source = source or _default_source(self._describe(obj))
        old = self._entries.get(name)
        if old is not None and not force:
            if self._identity(old.obj) == self._identity(obj):
                return obj
            raise self.error(f"{self.sort} {name!r} is already registered ({old.source}); cannot also register "
                             f"{source} under that name; pass force=True to replace it")
        self._entries[name] = _Entry(obj, source)
        return obj

    def _check_name(self, name: object) -> None:
        if not isinstance(name, str) or not name or ":" in name:
            raise self.error(f"{self.sort} names must be non-empty strings without ':', got {name!r}")

    def unregister(self, name: str) -> None:
        """Remove ``name`` (no error when it is not registered).

        Parameters
        ----------
        name : str
        """
        self._entries.pop(name, None)

    # ------------------------------------------------------------------ lookups
    def get(self, name: str) -> T:
        """The object registered as ``name`` (entry points are read first if ``name`` is not registered).

        Parameters
        ----------
        name : str

        Returns
        -------
        object

        Raises
        ------
        error
            ``name`` is not registered; the message suggests the closest name and lists them all.
        """
        entry = self._lookup(name)
        if entry is None:
            known = sorted(self._entries)
            raise self.error(f"unknown {self.sort} {name!r}{did_you_mean(name, known)}; "
                             f"registered: {', '.join(known) or '(none)'}")
        return entry.obj

    def find(self, name: str) -> T | None:
        """The object registered as ``name``, or None (reads entry points like :meth:`get`).

        Parameters
        ----------
        name : str

        Returns
        -------
        object or None
        """
        entry = self._lookup(name)
        return None if entry is None else entry.obj

    def source(self, name: str) -> str:
        """Where the entry ``name`` came from (``"built-in ..."``, ``"entry point ..."``, ``"registered ..."``).

        Parameters
        ----------
        name : str

        Returns
        -------
        str
        """
        self.get(name)
        return self._entries[name].source

    def names(self) -> list[str]:
        """Every registered name, in registration order (built-ins first, then entry points).

        Returns
        -------
        list of str
        """
        self._load_entry_points()
        return list(self._entries)

    def items(self) -> dict[str, T]:
        """Every entry, by name, in registration order (a copy).

        Returns
        -------
        dict
        """
        self._load_entry_points()
        return {n: e.obj for n, e in self._entries.items()}

    def __contains__(self, name: object) -> bool:
        return self._lookup(name) is not None

    def _lookup(self, name: object) -> _Entry[T] | None:
        if not isinstance(name, str):
            return None  # (an unhashable name would raise TypeError below): get() names it as unknown
        if name not in self._entries:
            self._load_entry_points()  # only when needed: lookups of built-ins never read entry points
        return self._entries.get(name)

    # ------------------------------------------------------------------ plugins
    def _load_entry_points(self) -> None:
        if self._entry_points_loaded:
            return
        self._entry_points_loaded = True
        try:
            found = importlib.metadata.entry_points(group=self.group)
        except Exception as exc:  # noqa: BLE001 - unreadable package metadata must not break privaudit
            warnings.warn(f"cannot read the {self.group} entry points: {type(exc).__name__}: {exc}",
                          PluginWarning, stacklevel=3)
            return
        for ep in found:
            source = entry_point_source(ep)
            try:
                self._check_name(ep.name)  # before loading: an unusable entry point imports nothing
                self.register(ep.name, self._from_entry_point(ep), source=source)
            except Exception as exc:  # noqa: BLE001 - whatever a plugin raises, it is skipped and named
                warnings.warn(f"skipped {self.sort} plugin {ep.name!r} ({source}, entry-point group {self.group}): "
                              f"{type(exc).__name__}: {exc}", PluginWarning, stacklevel=3)

    @contextlib.contextmanager
    def isolated(self) -> Iterator[Registry[T]]:
        """Restore this registry on exit, and read entry points afresh inside (for tests of plugins).

        Returns
        -------
        context manager yielding this registry
        """
        saved, loaded = dict(self._entries), self._entry_points_loaded
        self._entry_points_loaded = self.group is None
        try:
            yield self
        finally:
            self._entries, self._entry_points_loaded = saved, loaded


# --------------------------------------------------------------------------- mechanism declarations
class MissingParameterError(InvalidParameterError):
    """A required parameter of a mechanism table is missing (a configuration then reports a missing key)."""


#: A rule spanning several parameters: ``check(path, params)`` raises, naming ``path`` (where the
#: parameters come from, e.g. ``audits[0].mechanism``): :class:`MissingParameterError` for a
#: missing key, :class:`~privaudit.mechanisms.validation.InvalidParameterError` for a bad value,
#: :class:`~privaudit.mechanisms.validation.ParameterTypeError` for a value of the wrong kind.
Check = Callable[[str, dict], None]


def public_reference(obj: Any) -> str:
    """``"package:Name"`` of a class as its users import it (the shortest package exporting it).

    ``privaudit.mechanisms.gaussian.GaussianMechanism`` is ``"privaudit.mechanisms:GaussianMechanism"``
    once :mod:`privaudit.mechanisms` exports it; a string reference is returned as it is.

    Parameters
    ----------
    obj : class or str

    Returns
    -------
    str
    """
    if isinstance(obj, str):
        return obj
    module, name = getattr(obj, "__module__", ""), getattr(obj, "__qualname__", "")
    parts = module.split(".")
    for i in range(1, len(parts)):
        package = sys.modules.get(".".join(parts[:i]))
        if package is not None and getattr(package, name, None) is obj:
            return f"{package.__name__}:{name}"
    return reference(obj)


@dataclasses.dataclass(frozen=True)
class MechanismDeclaration:
    """A mechanism declared under its configuration name.

    Attributes
    ----------
    name : str
        The ``name`` of a configuration's mechanism table.
    cls : type or str
        The mechanism class, or ``"module:Class"`` for an adapter imported on first use.
    check : callable(path, params), optional
        Validation spanning several parameters (see :data:`Check`).
    constraints : mapping, optional
        scikit-learn parameter constraints of a class declared by reference (a class carries
        its own ``_parameter_constraints``).
    doc : str
        One line for ``privaudit list`` (default: the class docstring's first line).
    """

    name: str
    cls: Any
    check: Check | None = None
    constraints: Mapping[str, list] | None = None
    doc: str = ""

    @property
    def ref(self) -> str:
        """``"package:Class"`` as users import it (see :func:`public_reference`)."""
        return public_reference(self.cls)


def _check_declaration(name: str, decl: object) -> None:
    cls = getattr(decl, "cls", None)
    if not isinstance(decl, MechanismDeclaration) or not (isinstance(cls, type) or isinstance(cls, str)):
        raise RegistryError(f"mechanism {name!r}: expected a class or a 'module:Class' reference, got {cls!r}")
    own = getattr(cls, "_parameter_constraints", None)
    if own is not None and not isinstance(own, Mapping):
        raise RegistryError(f"mechanism {name!r}: {reference(cls)}._parameter_constraints must be a mapping "
                            f"of parameter name to constraints, got {type(own).__name__}")


#: Every mechanism declared with :func:`register_mechanism`, by configuration name.
DECLARED_MECHANISMS: Registry[MechanismDeclaration] = Registry(
    "mechanism", None, validate=_check_declaration, identity=lambda decl: decl.cls,
    describe=lambda decl: reference(decl.cls))


def register_mechanism(name: str, cls: type | str | None = None, *, check: Check | None = None,
                       constraints: Mapping[str, list] | None = None, doc: str = "",
                       force: bool = False) -> Any:
    """Declare the mechanism ``cls`` under the configuration name ``name``; a class decorator when ``cls`` is omitted.

    Parameters
    ----------
    name : str
        Non-empty, without ``":"``.
    cls : type or str, optional
        The class (its ``_parameter_constraints`` are its parameter specification), or
        ``"module:Class"`` for a class imported on first use (give ``constraints`` then).
    check : callable(path, params), optional
        Validation spanning several parameters (see :data:`Check`).
    constraints : mapping, optional
        Parameter specification of a class declared by reference.
    doc : str
        One line for ``privaudit list``.
    force : bool
        Replace another class declared under ``name``.

    Returns
    -------
    type, str or callable
        ``cls``, or the decorator declaring the class it decorates.

    Raises
    ------
    RegistryError
        A malformed name or class, or a clash (naming both sources) without ``force``.
    """
    if cls is None:
        return lambda c: register_mechanism(name, c, check=check, constraints=constraints, doc=doc, force=force)
    DECLARED_MECHANISMS.register(name, MechanismDeclaration(name, cls, check, constraints, doc), force=force)
    return cls


# ------------------------------------------------------------------ checks spanning several parameters
def requires(*keys: str) -> Check:
    """A check refusing a table without each of ``keys``.

    Parameters
    ----------
    *keys : str

    Returns
    -------
    callable(path, params)
        Raises :class:`MissingParameterError` ``"missing required key {path}.{key}"``.
    """
    def check(path: str, p: dict) -> None:
        for k in keys:
            if k not in p:
                raise MissingParameterError(f"missing required key {path}.{k}")
    return check


def sigma_or_epsilon_delta(path: str, p: dict) -> None:
    """σ, or ε with δ (σ with ε/δ is a deliberately miscalibrated claim).

    Parameters
    ----------
    path : str
    p : dict

    Raises
    ------
    MissingParameterError
    """
    if p.get("sigma") is None and (p.get("epsilon") is None or p.get("delta") is None):
        raise MissingParameterError(f"{path} needs sigma, or epsilon and delta, got {path} = {p!r}")


def modulated_parameters(path: str, p: dict) -> None:
    """The modulated release: σ or (ε, δ), ``alpha``, ``lam``, ``omega`` and ``dim``, and ``n_vectors <= dim``.

    Parameters
    ----------
    path : str
    p : dict

    Raises
    ------
    MissingParameterError, InvalidParameterError
    """
    sigma_or_epsilon_delta(path, p)
    if "dim" not in p or not all(k in p for k in ("alpha", "lam", "omega")):
        missing = [k for k in ("alpha", "lam", "omega", "dim") if k not in p]
        raise MissingParameterError(f"missing required key {path}.{missing[0]}")
    if p.get("n_vectors", 1) > p["dim"]:
        raise InvalidParameterError(
            f"{path}.n_vectors must be <= dim = {p['dim']}, got {path}.n_vectors = {p['n_vectors']!r}")


def epsilon_and_categories(path: str, p: dict) -> None:
    """Randomised response: ``epsilon``, and ``categories`` (when given) >= 2 distinct numbers.

    Parameters
    ----------
    path : str
    p : dict

    Raises
    ------
    MissingParameterError, InvalidParameterError
    """
    requires("epsilon")(path, p)
    cats = p.get("categories")
    if cats is not None and (not isinstance(cats, list) or len(cats) < 2 or len(set(map(str, cats))) != len(cats)
                             or any(isinstance(c, list) for c in cats)):
        raise InvalidParameterError(
            f"{path}.categories must be >= 2 distinct numbers, got {path}.categories = {cats!r}")


__all__ = ["DECLARED_MECHANISMS", "Check", "MechanismDeclaration", "MissingParameterError", "PluginWarning", "Registry",
           "RegistryError", "did_you_mean", "entry_point_source", "epsilon_and_categories", "modulated_parameters",
           "public_reference", "reference", "register_mechanism", "requires", "sigma_or_epsilon_delta"]
