"""Audit kinds: what an ``[[audits]]`` entry of a configuration can ask for.

An :class:`AuditKind` declares everything about one kind in one place: the keys its
entry accepts (:class:`~privaudit.audit.schema.fields.Field`), the function that runs it,
the dataclass of its result, and how a report shows that result (a one-line
headline, figures, rows of the cross-audit summary tables). The configuration
loader, the runner, the report and the figures iterate over this registry; none of
them switches on kind names, so adding a kind is one module::

    from privaudit.audit.kinds import AuditKind, register_kind

    register_kind(AuditKind("my-kind", run=my_run, fields={...}, result=MyResult,
                            headline=my_headline, figures=my_figures))

Built-in kinds are the modules of this package, registered when it is imported.
Installed packages add kinds through the entry-point group ``privaudit.audit_kinds``
(each entry point names an :class:`AuditKind`), loaded on first lookup; one that fails
to load is skipped with a :class:`~privaudit.mechanisms.registry.PluginWarning`. A name
clash raises, naming both sources, unless ``force=True``.

Kinds and result kinds
    Several kinds may produce the same result type (``tradeoff`` and
    ``learner-tradeoff`` both give a :class:`~privaudit.audit.engines.tradeoff.TradeoffAudit`).
    A report entry records its *result* kind (``TradeoffAudit.kind``); it is rendered
    by the kind that declares itself its renderer (``AuditKind.primary``), by default
    the kind the result names (``TradeoffAudit.kind == "tradeoff"``) or the only kind
    producing it (:func:`renderer`). The order of registration, and of
    :data:`BUILTIN_MODULES`, plays no part.
"""

from __future__ import annotations

import importlib
import inspect
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from privaudit.mechanisms.registry import Registry, reference

from privaudit.audit.schema.fields import ConfigValueError, Field
from privaudit.audit.results import AuditEntry, AuditResult, UntypedResult
from privaudit.audit.kinds.base import AuditKind

#: Entry-point group of third-party audit kinds.
ENTRY_POINT_GROUP = "privaudit.audit_kinds"
#: Built-in kind modules of this package, registered on import (their order decides nothing: see :func:`renderer`).
BUILTIN_MODULES = ("tradeoff", "calibration", "reconstruction", "bias", "bias_checks", "learner_tradeoff",
                   "learner_reconstruction", "one_run_label", "utility", "opacus", "dpsgd", "membership")


def _check_kind(name: str, kind: object) -> None:
    if not isinstance(kind, AuditKind) or kind.name != name:
        raise ConfigValueError(f"audit kind {name!r} must be an AuditKind named {name!r}, got {kind!r:.120}")


#: Every audit kind, by name (see :class:`~privaudit.mechanisms.registry.Registry` for the clash and plugin rules).
KINDS: Registry[AuditKind] = Registry("audit kind", ENTRY_POINT_GROUP, error=ConfigValueError, validate=_check_kind,
                                      describe=lambda kind: reference(kind.run))


def register_kind(kind: AuditKind, *, force: bool = False) -> AuditKind:
    """Register ``kind`` under ``kind.name``.

    Parameters
    ----------
    kind : AuditKind
    force : bool
        Replace a different kind of the same name.

    Returns
    -------
    AuditKind
        ``kind``.

    Raises
    ------
    TypeError
        ``kind`` is not an :class:`AuditKind`.
    ConfigValueError
        A different kind of that name is registered (the message names both sources) and not ``force``.
    """
    if not isinstance(kind, AuditKind):
        raise TypeError(f"register_kind needs an AuditKind, got {type(kind).__name__}")
    return KINDS.register(kind.name, kind, force=force)


def register_task_kind(
    name: str, *, fields: Mapping[str, Field], doc: str = "", target: Callable[[dict], str] | None = None,
    check: Callable[[str, dict], None] | None = None, force: bool = False, **rendering: Any,
) -> Callable:
    """Decorator form of :func:`register_kind` for a bare ``run(params, rng)`` function.

    ``rendering`` takes the other :class:`AuditKind` attributes (``result``,
    ``headline``, ``figures``, ``table_rows``). ``run`` may return plain dicts (e.g. a
    quick experiment in a script); they are reported as they are.

    Parameters
    ----------
    name : str
        The kind's name (``kind = "..."`` in configurations).
    fields : mapping of str to Field
        The keys its entries take.
    doc : str
        One line for ``privaudit list kinds`` and the keys reference (default: the first line of
        ``run``'s docstring).
    target : callable, optional
        Default label of an entry from its parameters.
    check : callable, optional
        Checks spanning several fields, raising config errors naming the path.
    force : bool
        Replace a kind already registered under ``name``.

    Returns
    -------
    callable
        The decorator: it registers ``run`` as the kind and returns it unchanged.
    """

    def deco(run: Callable) -> Callable:
        old = KINDS.find(name)
        if old is not None and old.run is run:
            return run
        register_kind(AuditKind(name, run, dict(fields), doc=doc or (inspect.getdoc(run) or "").split("\n")[0],
                                target=target, check=check, **rendering), force=force)
        return run

    return deco


def unregister_kind(name: str) -> None:
    """Remove a kind (for tests that register temporary kinds).

    Parameters
    ----------
    name : str
    """
    KINDS.unregister(name)


unregister_task_kind = unregister_kind


def audit_kinds() -> dict[str, AuditKind]:
    """Registered kinds, by name, sorted (built-ins, entry points, and kinds registered at run time).

    Returns
    -------
    dict of str to AuditKind
    """
    return dict(sorted(KINDS.items().items()))


def get_kind(name: str) -> AuditKind:
    """The kind called ``name``.

    Parameters
    ----------
    name : str

    Returns
    -------
    AuditKind

    Raises
    ------
    ConfigValueError
        Unknown name, with a hint.
    """
    return KINDS.get(name)


def renderer(result_kind: str | None) -> AuditKind | None:
    """The kind that renders report entries whose result has kind ``result_kind``.

    Among the registered kinds producing such results: the one declaring ``primary=True``;
    else the one the result names (its ``name`` is ``result_kind``) unless it declares
    ``primary=False``; else the only one not declaring ``primary=False``. Registration
    order plays no part.

    Parameters
    ----------
    result_kind : str or None

    Returns
    -------
    AuditKind or None
        None when no registered kind produces such results.

    Raises
    ------
    ConfigValueError
        Two kinds declare ``primary=True`` for one result kind, or several produce it and
        none is named by it or declares ``primary=True`` (the message names them).
    """
    producers = [k for k in KINDS.items().values() if k.result_kind is not None and k.result_kind == result_kind]
    declared = [k for k in producers if k.primary is True]
    if len(declared) > 1:
        raise ConfigValueError(f"audit kinds {', '.join(repr(k.name) for k in declared)} all declare primary=True "
                               f"for report entries of kind {result_kind!r}; at most one may")
    if declared:
        return declared[0]
    candidates = [k for k in producers if k.primary is None]
    named = [k for k in candidates if k.name == result_kind]
    if named:
        return named[0]
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    raise ConfigValueError(f"audit kinds {', '.join(repr(k.name) for k in candidates)} all produce report entries "
                           f"of kind {result_kind!r} and none is named {result_kind!r}: declare primary=True on the "
                           f"one that renders them")


def result_type(result_kind: str | None) -> type[AuditResult] | None:
    """The result dataclass of report entries of kind ``result_kind`` (for ``from_dict``), if registered.

    Parameters
    ----------
    result_kind : str or None

    Returns
    -------
    type of AuditResult or None
    """
    kind = renderer(result_kind)
    return kind.result if kind is not None else None


def entry_from_dict(data: Mapping[str, Any], *, strict: bool = True) -> AuditEntry:
    """The typed entry of a report or cache entry: the inverse of :meth:`~privaudit.audit.results.AuditEntry.to_dict`.

    The result dataclass is the one the registry names for the entry's ``kind``
    (:func:`result_type`); an error entry is a
    :class:`~privaudit.audit.results.FailedTask`, an entry of a kind with no result
    dataclass an :class:`~privaudit.audit.results.UntypedResult`.
    ``entry_from_dict(e.to_dict()).to_dict() == e.to_dict()`` for every entry ``e``.

    Parameters
    ----------
    data : mapping
        The JSON entry.
    strict : bool
        Raise on an entry its result dataclass refuses (the cache rejects it). False:
        keep it as an :class:`~privaudit.audit.results.UntypedResult`, with a
        :class:`RuntimeWarning` (re-rendering a report written by another version).

    Returns
    -------
    AuditEntry

    Raises
    ------
    TypeError, ValueError
        With ``strict``: ``data`` is not an entry of its kind's result dataclass.
    """
    try:
        return AuditEntry.from_dict(data, result_type(data.get("kind") if isinstance(data, Mapping) else None))
    except (TypeError, ValueError) as exc:
        if strict or not isinstance(data, Mapping):
            raise
        warnings.warn(f"report entry of kind {data.get('kind')!r} ({data.get('target')!r}) is not a valid result of "
                      f"its kind, rendered as plain data: {exc}", RuntimeWarning, stacklevel=2)
        return AuditEntry(UntypedResult.from_dict(data), task=data.get("task"))


# Older names (the registry lived in privaudit.audit.app.tasks).
task_kinds = audit_kinds
get_task_kind = get_kind

for _module in BUILTIN_MODULES:
    # A module registers its KIND, or every kind of its KINDS (several kinds of one concern).
    _loaded = importlib.import_module(f"{__name__}.{_module}")
    for _kind in getattr(_loaded, "KINDS", (getattr(_loaded, "KIND", None),)):
        register_kind(_kind)

__all__ = [
    "AuditKind", "ENTRY_POINT_GROUP", "KINDS", "audit_kinds", "entry_from_dict", "get_kind", "get_task_kind",
    "register_kind", "register_task_kind", "renderer", "result_type", "task_kinds", "unregister_kind",
    "unregister_task_kind",
]
