"""Planned tasks: one per ``[[audits]]`` entry, with its scaled parameters, seed and content hash.

A :class:`Task` is plain data (the kind's name, validated parameters, seed and a
content hash). The runner (:mod:`privaudit.audit.app.runner`) ships it to joblib or Dask
workers together with the kind's ``run`` function, so kinds registered at run time
(a user's script, a test) also run on workers, provided the function pickles
(cloudpickle: by reference when its module is importable on the worker, by value
for ``__main__``). What each kind does is declared by the kind itself
(:mod:`privaudit.audit.kinds`).

Randomness. A run with root seed ``s`` gives task ``i`` the generator
``default_rng(SeedSequence(s, spawn_key=(i,)))``, which is exactly
``SeedSequence(s).spawn(k)[i]`` for any ``k > i``. A result therefore depends on the
seed and on the task's position in the configuration, never on the number of
workers or the order in which they finish.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import traceback
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from privaudit.audit.app.config import Config
from privaudit.audit.kinds import AuditKind, get_kind, register_task_kind, unregister_task_kind
from privaudit.audit.app.provenance import privaudit_version
from privaudit.audit.results import AuditEntry, AuditResult, FailedTask, UntypedResult, as_entry, to_jsonable
from privaudit.audit.verdicts import Verdict
from privaudit.mechanisms.randomness import keyed_seed_sequence

#: Version of the task encoding: part of every cache key.
TASK_FORMAT = 1

# Older name of the registry lookup (the runner imports it from here).
get_task_kind = get_kind


@dataclasses.dataclass(frozen=True)
class Task:
    """One unit of work: plain data that pickles to any worker.

    ``key`` is the SHA-256 of the canonical JSON of everything that determines the
    result (kind, target, scaled parameters, root seed, index, task format), used as
    the cache file name.
    """

    index: int
    kind: str
    target: str
    params: dict
    seed: int
    key: str

    @property
    def seed_sequence(self) -> np.random.SeedSequence:
        """``SeedSequence(seed).spawn(k)[index]``, rebuilt from its spawn key."""
        return keyed_seed_sequence(np.random.SeedSequence(self.seed), self.index)

    def rng(self) -> np.random.Generator:
        return np.random.default_rng(self.seed_sequence)


def scale_params(kind: AuditKind, params: dict, samples: float) -> dict:
    """Multiply every sample-size field by ``samples``.

    Integer fields are rounded and kept at least at the field's minimum (and ≥ 1);
    float fields (scale factors such as ``n_scale``) are multiplied as they are.

    Parameters
    ----------
    kind : AuditKind
        The entry's kind (its fields say which are sample sizes).
    params : dict
        The entry's validated parameters.
    samples : float
        The sample-size factor (``--samples``).

    Returns
    -------
    dict
        A new parameter dict.
    """
    out = dict(params)
    for name, field in kind.fields.items():
        if field.samples and out.get(name) is not None:
            if field.type == "int":
                floor = int(field.low) if field.low is not None else 1
                out[name] = max(floor, 1, int(round(out[name] * samples)))
            else:
                out[name] = float(out[name]) * samples
    return out


def task_key(kind: str, target: str, params: dict, seed: int, index: int) -> str:
    """Content hash of a task: what determines its result, plus the privaudit version.

    Parameters
    ----------
    kind : str
        The kind's name.
    target : str
        The entry's label.
    params : dict
        The entry's scaled parameters.
    seed : int
        The run's root seed.
    index : int
        The entry's position.

    Returns
    -------
    str
        Hex digest.
    """
    payload = {"format": TASK_FORMAT, "kind": kind, "target": target, "params": params, "seed": seed,
               "index": index, "version": privaudit_version()}
    blob = json.dumps(to_jsonable(payload), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def plan_tasks(config: Config) -> list[Task]:
    """The tasks of ``config``, one per ``[[audits]]`` entry, with scaled sample sizes and keys.

    Parameters
    ----------
    config : Config
        A loaded configuration.

    Returns
    -------
    list of Task
    """
    tasks = []
    for spec in config.audits:
        kind = get_kind(spec.kind)
        params = scale_params(kind, spec.params, config.samples)
        key = task_key(spec.kind, spec.target, params, config.seed, spec.index)
        tasks.append(Task(spec.index, spec.kind, spec.target, params, config.seed, key))
    return tasks


def task_entries(result: Any, task: Task) -> list[AuditEntry]:
    """The report entries of what a kind's ``run`` returned (one result, an entry, or a list of them).

    One result: the configuration's label names it (the audit's own name is kept as
    ``audited``). Several (a catalogue such as the bias checks): each keeps its own
    name. Plain dicts (quick kinds in scripts and tests) become
    :class:`~privaudit.audit.results.UntypedResult` entries, reported as they are.

    Parameters
    ----------
    result : AuditResult, AuditEntry, dict, or a list or tuple of them
        What the kind's ``run`` returned.
    task : Task
        The task that ran (its label and kind).

    Returns
    -------
    list of AuditEntry

    Raises
    ------
    TypeError
        ``run`` returned something else.
    """
    items = result if isinstance(result, list | tuple) else [result]
    out = []
    for item in items:
        if isinstance(item, AuditResult | AuditEntry):
            entry = as_entry(item)
            own = getattr(entry.result, "target", None)
            if len(items) == 1 or not own:
                entry = dataclasses.replace(entry, target=task.target)
        elif isinstance(item, Mapping):
            d = to_jsonable(dict(item))
            d.setdefault("kind", task.kind)
            if len(items) == 1 or not d.get("target"):
                if d.get("target") and d["target"] != task.target:
                    d["audited"] = d["target"]
                d["target"] = task.target
            d.setdefault("verdict", Verdict.INFO.value)
            entry = AuditEntry(UntypedResult(d))
        else:
            raise TypeError(f"task kind {task.kind!r} returned {type(item).__name__}, expected an AuditResult")
        out.append(entry)
    return out


def entry_dicts(result: Any, task: Task) -> list[dict]:
    """The JSON form (:meth:`~privaudit.audit.results.AuditEntry.to_dict`) of :func:`task_entries`.

    Parameters
    ----------
    result : AuditResult, AuditEntry, dict, or a list or tuple of them
        What the kind's ``run`` returned.
    task : Task

    Returns
    -------
    list of dict
    """
    return [entry.to_dict() for entry in task_entries(result, task)]


def execute_task(task: Task, run: Callable | None = None) -> dict:
    """Run one task; never raises for an ordinary exception.

    ``run`` is the kind's function, shipped with the task so that kinds registered at
    run time also run on worker processes and Dask workers (cloudpickle serialises
    it); by default it is looked up in this process's registry.

    Returns ``{"key", "index", "ok", "results": [dict, ...]}``: the results in their
    JSON form (:func:`entry_dicts`), since they travel from a worker process or a Dask
    worker and into the cache; :func:`privaudit.audit.kinds.entry_from_dict` reads each
    back into its typed entry. A failing audit is recorded as one result with verdict ``"error"`` (a
    :class:`~privaudit.audit.results.FailedTask`), its exception and a traceback, so
    that the other tasks of the run still complete. ``KeyboardInterrupt`` and
    ``SystemExit`` propagate (an interrupted run is resumed from the cache).

    Parameters
    ----------
    task : Task
        The task.
    run : callable, optional
        The kind's function (default: looked up in this process's registry).
    """
    try:
        run = run if run is not None else get_kind(task.kind).run
        results = entry_dicts(run(dict(task.params), task.rng()), task)
        ok = True
    except Exception as exc:  # noqa: BLE001 - recorded in the report, the run goes on
        tb = traceback.format_exception(type(exc), exc, exc.__traceback__)
        failure = FailedTask(task.kind, task.target, f"{type(exc).__name__}: {exc}", "".join(tb[-6:]))
        results = [AuditEntry(failure).to_dict()]
        ok = False
    return {"key": task.key, "index": task.index, "ok": ok, "results": results}


__all__ = [
    "TASK_FORMAT", "Task", "entry_dicts", "execute_task", "get_task_kind", "plan_tasks", "privaudit_version",
    "register_task_kind", "scale_params", "task_entries", "task_key", "unregister_task_kind",
]
