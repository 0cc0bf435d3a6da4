"""Reports of results made in Python: the same ``report.json``, ``report.md``, ``report.html`` and figures as the CLI.

A script or notebook that calls the audits directly (``audit_tradeoff(...)``,
``audit_reconstruction(...)``) gets typed results; :func:`write_report` writes them
as a report set, rendered by the code that renders a configuration's report. The
document has no configuration: ``config`` records the results' kinds and labels,
``source`` is ``"python"`` and ``seed`` is None (each result records its own seed).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from privaudit.mechanisms.validation import InvalidParameterError

from privaudit.audit.app.report_store import write_report as write_report_document
from privaudit.audit.reporting.render import SCHEMA, dependency_versions, summarize
from privaudit.audit.results import AuditEntry, AuditResult, as_entry

#: Longest report name (as for a configuration's ``name``: a folder name).
_MAX_NAME = 200


def results_report(results: Iterable[AuditResult | AuditEntry], *, name: str = "results",
                   description: str = "") -> dict[str, Any]:
    """The ``privaudit.report/1`` document of ``results``.

    Parameters
    ----------
    results : iterable of AuditResult or AuditEntry
        Typed results (an :class:`~privaudit.audit.results.AuditEntry` keeps its label and expectation).
    name : str
        The report's name (its title).
    description : str
        A line under the title.

    Returns
    -------
    dict
        The document: each audit is the entry's ``to_dict()`` with its position as ``task``.

    Raises
    ------
    TypeError
        An item of ``results`` is not an audit result.
    InvalidParameterError
        ``results`` is empty, or ``name`` is not a non-empty string of at most 200 bytes.
    """
    if not isinstance(name, str) or not name or len(name.encode()) > _MAX_NAME:
        raise InvalidParameterError(f"name must be a non-empty string of at most {_MAX_NAME} bytes, got name={name!r}")
    items = list(results) if not isinstance(results, AuditResult | AuditEntry) else [results]
    entries = []
    for i, r in enumerate(items):
        if not isinstance(r, AuditResult | AuditEntry):
            raise TypeError(f"results[{i}] must be an audit result (AuditResult or AuditEntry), got {type(r).__name__}")
        entries.append(dataclasses.replace(as_entry(r), task=i))
    if not entries:
        raise InvalidParameterError("results is empty: nothing to report")
    return {
        "schema": SCHEMA,
        "name": name,
        "description": str(description),
        "source": "python",
        "config": {"name": name, "description": str(description), "seed": None, "samples": 1.0, "source": "python",
                   "audits": [{"kind": e.kind, "target": e.label} for e in entries]},
        "seed": None,
        "samples": 1.0,
        "seeds": [{"task": e.task, "entropy": getattr(e.result, "seed", None), "spawn_key": [e.task]} for e in entries],
        "versions": dependency_versions(),
        "summary": summarize(entries),
        "audits": [e.to_dict() for e in entries],
    }


def write_report(results: Iterable[AuditResult | AuditEntry], out_dir: str | Path, *, name: str = "results",
                 description: str = "", figures: bool = True) -> Path:
    """Write ``results`` as a report set: ``report.json``, ``report.md``, ``report.html``, ``figures/``.

    The files are rendered as the CLI renders a configuration's report, and the set is
    replaced atomically (:func:`privaudit.audit.app.report_store.write_report`).

    Parameters
    ----------
    results : iterable of AuditResult or AuditEntry
        Typed results, e.g. of :func:`~privaudit.audit.audit_tradeoff`.
    out_dir : str or Path
        The report's folder (created if missing).
    name, description : str
        The report's title and a line under it.
    figures : bool
        Draw the figures.

    Returns
    -------
    Path
        ``out_dir``.
    """
    return write_report_document(results_report(results, name=name, description=description), out_dir,
                                 figures=figures)


__all__ = ["results_report", "write_report"]
