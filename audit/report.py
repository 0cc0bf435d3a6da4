"""The report of one configuration: ``report.json``, ``report.md``, ``report.html``, ``figures/``.

``report.json`` (schema ``privaudit.report/1``) is the record; the Markdown and HTML
files and the figures are renderings of it, so a report can be re-rendered from its
JSON alone (:func:`write_report`). The document holds::

    {"schema": "privaudit.report/1", "name", "description", "source",
     "config": {... the validated configuration ...},
     "seed", "samples",
     "seeds": [{"task": i, "entropy": seed, "spawn_key": [i]}, ...],
     "versions": {"privaudit", "python", "numpy", "scipy", ...},
     "summary": {"status", "counts", "n_audits"},
     "audits": [{"kind", "target", "verdict", <the kind's fields>, "task": i}, ...]}

Each audit entry is its result's :meth:`~privaudit.audit.results.AuditResult.to_dict`;
the renderers are generic over it (every scalar field is tabulated, so fields a
renderer does not know still show), with the headline, figures and summary-table
rows each kind declares (:mod:`privaudit.audit.kinds`, rendered by
:mod:`privaudit.audit.figures`). A task that failed is an entry with verdict
``"error"`` and its error message. Nothing in the JSON depends on the wall clock, so
two runs with the same seed and versions produce identical files.

``report.html`` is self-contained: CSS inline and figures embedded as base64 PNG
``data:`` URIs, so it opens in any browser without the ``figures/`` folder.
"""

from __future__ import annotations

import base64
import html
import json
import platform
from collections import Counter
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from .figures import headline, render_figures, render_table_figures, summary_tables
from .formatting import fmt
from .report_store import atomic_write, load_report, write_set  # noqa: F401 - re-exported

SCHEMA = "privaudit.report/1"
#: Distributions whose versions are recorded in every report.
KEY_DEPENDENCIES = (
    "privaudit", "numpy", "scipy", "scikit-learn", "torch", "dp-accounting", "opacus", "matplotlib", "joblib",
    "dask", "distributed",
)
#: Order of severity of verdicts, used for the overall status.
_SEVERITY = {"info": 0, "pass": 0, "fail": 2, "violation": 3, "error": 1}


def dependency_versions() -> dict[str, str]:
    """Installed versions of privaudit and its key dependencies (``None`` when absent)."""
    out = {"python": platform.python_version()}
    for dist in KEY_DEPENDENCIES:
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = None
    return out


def summarize(audits: list[dict]) -> dict[str, Any]:
    """Overall status and verdict counts.

    The status is ``"pass"`` when every audit passed or is informational;
    otherwise the most severe verdict present: ``"violation"`` > ``"fail"`` > ``"error"``.
    """
    counts = Counter(a.get("verdict", "info") for a in audits)
    worst = max(counts, key=lambda v: _SEVERITY.get(v, 1), default="pass")
    status = "pass" if _SEVERITY.get(worst, 1) == 0 else worst
    return {"status": status, "counts": dict(sorted(counts.items())), "n_audits": len(audits)}


def build_report(config, tasks, outcomes: dict[int, dict]) -> dict[str, Any]:
    """Assemble the ``privaudit.report/1`` document from the tasks' outcomes (in task order)."""
    audits = []
    for task in tasks:
        for res in outcomes[task.index]["results"]:
            audits.append({**res, "task": task.index})
    return {
        "schema": SCHEMA,
        "name": config.name,
        "description": config.description,
        "source": config.source,
        "config": config.to_dict(),
        "seed": config.seed,
        "samples": config.samples,
        "seeds": [{"task": t.index, "entropy": t.seed, "spawn_key": [t.index], "cache_key": t.key} for t in tasks],
        "versions": dependency_versions(),
        "summary": summarize(audits),
        "audits": audits,
    }


# --------------------------------------------------------------------------- text helpers
def _is_scalar(v: Any) -> bool:
    return v is None or isinstance(v, str | int | float | bool)


def scalar_rows(audit: dict, *, max_list: int = 4) -> list[tuple[str, str]]:
    """(field, formatted value) of every scalar field, short list and flat small dict of an audit entry.

    Long arrays (curves) are left to the figures and the JSON.
    """
    rows = []
    for key, value in audit.items():
        if key in ("kind", "target", "verdict", "task", "traceback"):
            continue
        if _is_scalar(value):
            rows.append((key, fmt(value)))
        elif isinstance(value, list) and len(value) <= max_list and all(_is_scalar(v) for v in value):
            rows.append((key, fmt(value)))
        elif isinstance(value, dict) and len(value) <= 8 and all(_is_scalar(v) for v in value.values()):
            rows.append((key, fmt(value)))
    return rows


# --------------------------------------------------------------------------- writers
def _md_table(header: list[str], rows: list[list[str]]) -> str:
    esc = [[str(c).replace("|", "\\|").replace("\n", " ") for c in r] for r in rows]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in esc]
    return "\n".join(lines)


def render_markdown(report: dict, figures: dict[int, list[tuple[str, bytes, str]]],
                    tables: list[tuple[str, list[str], list[list[str]], str]],
                    table_links: dict[str, str] | None = None) -> str:
    """The Markdown report; figures are linked from ``figures/`` (``table_links``: title -> PNG of a table)."""
    s = report["summary"]
    counts = ", ".join(f"{n} {v}" for v, n in s["counts"].items())
    out = [f"# privaudit report: {report['name']}", ""]
    if report.get("description"):
        out += [report["description"], ""]
    out += [
        f"**Status: {s['status'].upper()}** ({s['n_audits']} audits: {counts})", "",
        f"Seed {report['seed']}, samples ×{fmt(report['samples'])}, source `{report['source'] or 'inline'}`, "
        f"privaudit {report['versions'].get('privaudit')}.", "",
        "## Summary", "",
        _md_table(["#", "kind", "target", "verdict", "result"],
                  [[str(i), a["kind"], a["target"], a["verdict"], headline(a)]
                   for i, a in enumerate(report["audits"])]),
        "",
    ]
    for title, header, rows, note in tables:
        out += [f"## {title}", "", _md_table(header, rows), ""]
        if note:
            out += [note, ""]
        if table_links and title in table_links:
            out += [f"(As a figure: [figures/{table_links[title]}](figures/{table_links[title]}).)", ""]
    for i, a in enumerate(report["audits"]):
        out += [f"## {i}. {a['kind']}: {a['target']}", "", f"Verdict: **{a['verdict']}**", ""]
        if a.get("error"):
            out += ["```", a.get("traceback") or a["error"], "```", ""]
        for name, _png, caption in figures.get(i, []):
            out += [f"![{caption}](figures/{name})", ""]
        rows = scalar_rows(a)
        if rows:
            out += [_md_table(["field", "value"], [list(r) for r in rows]), ""]
        for note in a.get("notes", []) or []:
            out += [f"- {note}"]
        out += [""]
    v = report["versions"]
    out += ["## Versions", "", ", ".join(f"{k} {val}" for k, val in v.items() if val), ""]
    return "\n".join(out)


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;
color:#222;line-height:1.45}
table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left;
font-size:.92em}th{background:#f3f3f3}code,pre{background:#f6f6f6;padding:.1em .3em}pre{padding:.6em;overflow:auto}
img{max-width:100%;height:auto;border:1px solid #eee;margin:.4em 0;display:block}
.v-pass{color:#176117;font-weight:600}.v-violation,.v-fail,.v-error{color:#a40000;font-weight:600}
.v-info{color:#555;font-weight:600}section{border-top:1px solid #ddd;margin-top:1.5em}
"""


def _html_table(header: list[str], rows: list[list[str]], raw_cols: tuple[int, ...] = ()) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{c if j in raw_cols else html.escape(str(c))}</td>" for j, c in enumerate(r)) + "</tr>"
        for r in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _verdict(v: str) -> str:
    return f'<span class="v-{html.escape(v)}">{html.escape(v)}</span>'


def render_html(report: dict, figures: dict[int, list[tuple[str, bytes, str]]],
                tables: list[tuple[str, list[str], list[list[str]], str]]) -> str:
    """The self-contained HTML report (figures embedded as base64 PNG)."""
    s = report["summary"]
    counts = ", ".join(f"{n} {v}" for v, n in s["counts"].items())
    e = html.escape
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>privaudit report: {e(report['name'])}</title><style>{_CSS}</style></head><body>",
        f"<h1>privaudit report: {e(report['name'])}</h1>",
    ]
    if report.get("description"):
        parts.append(f"<p>{e(report['description'])}</p>")
    parts += [
        f"<p><b>Status: {_verdict(s['status'])}</b> ({s['n_audits']} audits: {e(counts)})<br>",
        f"Seed {report['seed']}, samples ×{e(fmt(report['samples']))}, source <code>{e(report['source'] or 'inline')}</code>, "
        f"privaudit {e(str(report['versions'].get('privaudit')))}.</p>",
        "<h2>Summary</h2>",
        _html_table(["#", "kind", "target", "verdict", "result"],
                    [[f"<a href='#audit-{i}'>{i}</a>", e(a["kind"]), e(a["target"]), _verdict(a["verdict"]),
                      e(headline(a))] for i, a in enumerate(report["audits"])], raw_cols=(0, 1, 2, 3, 4)),
    ]
    for title, header, rows, note in tables:
        parts += [f"<h2>{e(title)}</h2>", _html_table(header, rows)]
        if note:
            parts.append(f"<p>{e(note)}</p>")
    for i, a in enumerate(report["audits"]):
        parts += [f"<section id='audit-{i}'><h2>{i}. {e(a['kind'])}: {e(a['target'])}</h2>",
                  f"<p>Verdict: {_verdict(a['verdict'])}</p>"]
        if a.get("error"):
            parts.append(f"<pre>{e(a.get('traceback') or a['error'])}</pre>")
        for name, png, caption in figures.get(i, []):
            b64 = base64.b64encode(png).decode("ascii")
            parts.append(f"<figure><img alt='{e(caption)}' title='{e(name)}' src='data:image/png;base64,{b64}'>"
                         f"<figcaption>{e(caption)}</figcaption></figure>")
        rows = scalar_rows(a)
        if rows:
            parts.append(_html_table(["field", "value"], [list(r) for r in rows]))
        notes = a.get("notes") or []
        if notes:
            parts.append("<ul>" + "".join(f"<li>{e(str(n))}</li>" for n in notes) + "</ul>")
        parts.append("</section>")
    versions = ", ".join(f"{k} {val}" for k, val in report["versions"].items() if val)
    parts += [f"<section><h2>Versions</h2><p>{e(versions)}</p></section>", "</body></html>"]
    return "\n".join(parts)


def report_json(report: dict) -> bytes:
    """The bytes of ``report.json``: the record, keys in the order the report was built, strict JSON."""
    return (json.dumps(report, indent=2, sort_keys=False, allow_nan=False) + "\n").encode()


def report_files(report: dict, *, figures: bool = True) -> dict[str, bytes]:
    """Every rendered file of the set but ``report.json``: relative path -> bytes."""
    from .figures import render_figures, render_table_figures, summary_tables

    figs = render_figures(report) if figures else {}
    tables = summary_tables(report)
    # The summary tables as PNG too (figures/epsilon-table.png, bias-table.png): the
    # Markdown links them, the HTML shows the tables themselves.
    table_figs = render_table_figures(report) if figures else []
    out = {f"figures/{name}": png for items in [*figs.values(), table_figs] for name, png, _ in items}
    table_links = {title: name for name, _, title in table_figs}
    out["report.md"] = render_markdown(report, figs, tables, table_links).encode()
    out["report.html"] = render_html(report, figs, tables).encode()
    return out


def write_report(report: dict, out_dir: str | Path, *, figures: bool = True, run_log: dict | None = None) -> Path:
    """Write ``report.json``, ``report.md``, ``report.html`` and ``figures/*.png`` into ``out_dir`` as one unit.

    The whole set replaces the previous one atomically (:func:`privaudit.audit.report_store.write_set`);
    when the set on disk is already identical only ``run.log.json`` is rewritten. Returns ``out_dir``.
    """
    write_set(out_dir, report_json(report), lambda: report_files(report, figures=figures), figures=figures,
              run_log=run_log)
    return Path(out_dir)
