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
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import importlib.metadata
import warnings
from collections.abc import Callable, Iterable, Iterator
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


__all__ = ["PluginWarning", "Registry", "RegistryError", "did_you_mean", "entry_point_source", "reference"]
