"""The report of one configuration: ``report.json``, ``report.md``, ``report.html``, ``figures/``.

``report.json`` (schema ``privaudit.report/1``) is the record; the Markdown and HTML
files and the figures are renderings of it, so a report can be re-rendered from its
JSON alone (:func:`report_files`; :func:`privaudit.audit.app.report_store.write_report` writes the set). The document holds::

    {"schema": "privaudit.report/1", "name", "description", "source",
     "config": {... the validated configuration ...},
     "seed", "samples",
     "seeds": [{"task": i, "entropy": seed, "spawn_key": [i]}, ...],
     "versions": {"privaudit", "python", "numpy", "scipy", ...},
     "summary": {"status", "counts" (per outcome, see privaudit.audit.verdicts), "n_audits"},
     "audits": [{"kind", "target", "verdict", <the kind's fields>, "task": i}, ...]}

Each audit entry is the :meth:`~privaudit.audit.results.AuditEntry.to_dict` of a typed
entry (:func:`build_report`). The renderers take the typed entries, read back from
the document with :func:`report_entries` (the same path re-renders an existing
``report.json``): every scalar field of an entry's JSON form is tabulated, so fields
a renderer does not know still show, beside the headline, figures and summary-table
rows each kind declares (:mod:`privaudit.audit.kinds`, rendered by
:mod:`privaudit.audit.reporting.figures`). A task that failed is an entry with verdict
``"error"`` and its error message. Nothing in the JSON depends on the wall clock, so
two runs with the same seed and versions produce identical files.

``report.html`` is self-contained: CSS inline and figures embedded as base64 PNG
``data:`` URIs, so it opens in any browser without the ``figures/`` folder. Both
renderings read at a glance: the verdict (with the outcome counts), the claimed /
exact / certified ε table (estimator and n per row) and the headline figures come
first; every audit's details follow (collapsed ``<details>`` in HTML, open when the
audit went wrong); empty fields are not listed and each note appears once. In HTML
a figure enlarges to the window on click (CSS only, no script); Markdown escapes any
HTML in strings from the configuration.
"""

from __future__ import annotations

import base64
import dataclasses
import html
import json
import platform
import re
import struct
from collections import Counter
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from privaudit.audit.reporting.figures import headline, render_figures, render_table_figures, summary_tables
from privaudit.audit.display.formatting import fmt, num
from privaudit.audit.kinds import entry_from_dict
from privaudit.audit.results import AuditEntry, as_entry
from privaudit.audit.verdicts import (OUTCOME_LABELS, Outcome, outcome, outcome_counts, outcome_label, overall_status,
                                      status_sentence)

SCHEMA = "privaudit.report/1"
#: Distributions whose versions are recorded in every report.
KEY_DEPENDENCIES = (
    "privaudit", "numpy", "scipy", "scikit-learn", "torch", "dp-accounting", "opacus", "matplotlib", "joblib",
    "dask", "distributed",
)
#: The version recorded for a key dependency this machine does not have (an optional extra such as opacus or
#: dask): every report lists the same distributions, so two machines of one kind write the same block.
NOT_INSTALLED = "not installed"


def dependency_versions() -> dict[str, str]:
    """Versions of Python, privaudit and each of :data:`KEY_DEPENDENCIES` (:data:`NOT_INSTALLED` when absent).

    Returns
    -------
    dict of str to str
        ``python`` first, then the distributions in the order of :data:`KEY_DEPENDENCIES`.
    """
    out = {"python": platform.python_version()}
    for dist in KEY_DEPENDENCIES:
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = NOT_INSTALLED
    return out


def summarize(entries: list[AuditEntry]) -> dict[str, Any]:
    """Overall status and the number of audits of each outcome (:mod:`privaudit.audit.verdicts`).

    ``counts`` are outcomes, not raw verdicts: a negative control that was caught is
    ``expected-violation-caught`` (its verdict is ``"pass"``), one that was missed is
    ``expected-violation-missed``, an audit in which no bound or test applied is
    ``inconclusive``. The status is ``"pass"`` unless an audit failed, raised or refuted
    its claim (then the most severe: ``"violation"`` > ``"fail"`` > ``"error"``), or no audit
    tested anything and some were inconclusive (``"inconclusive"``).

    Parameters
    ----------
    entries : list of AuditEntry
        The report's entries.

    Returns
    -------
    dict
        ``{"status", "counts", "n_audits"}`` as plain JSON data.
    """
    counts = outcome_counts(entries)
    return {"status": overall_status(counts).value, "counts": counts, "n_audits": len(entries)}


def build_report(config: Any, tasks: list, outcomes: dict[int, dict]) -> dict[str, Any]:
    """Assemble the ``privaudit.report/1`` document from the tasks' outcomes (in task order).

    Parameters
    ----------
    config : Config
        The configuration that was run.
    tasks : list of Task
        Its planned tasks.
    outcomes : dict of int to dict
        Per task index, ``{"results": [...]}``: typed entries, or their JSON form (a
        worker's output, a cache entry), read with :func:`~privaudit.audit.kinds.entry_from_dict`.

    Returns
    -------
    dict
        The document; each audit is the typed entry's ``to_dict()`` with its ``task`` index.
    """
    entries = [dataclasses.replace(res if isinstance(res, AuditEntry) else entry_from_dict(res, strict=False),
                                   task=task.index)
               for task in tasks for res in outcomes[task.index]["results"]]
    audits = [entry.to_dict() for entry in entries]
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
        "summary": summarize(entries),
        "audits": audits,
    }


def report_entries(report: dict) -> list[AuditEntry]:
    """The typed entries of a ``privaudit.report/1`` document (a fresh one, or a ``report.json`` read back).

    An entry its kind's dataclass refuses (a report of another version) is kept as plain
    data (:class:`~privaudit.audit.results.UntypedResult`) with a RuntimeWarning.

    Parameters
    ----------
    report : dict
        The document.

    Returns
    -------
    list of AuditEntry
    """
    return [entry_from_dict(audit, strict=False) for audit in report.get("audits", [])]


# --------------------------------------------------------------------------- text helpers
#: Entry keys shown elsewhere than in the field table (title, verdict line, notes list, error block).
_NOT_FIELDS = ("kind", "target", "verdict", "task", "traceback", "notes", "error", "expect", "audit_verdict")


def _is_scalar(v: Any) -> bool:
    return v is None or isinstance(v, str | int | float | bool)


def _is_empty(v: Any) -> bool:
    """None, empty strings and containers, and dicts whose values are all empty: rows a reader skips."""
    if v is None or v == "" or v == [] or v == {}:
        return True
    return isinstance(v, dict) and all(_is_empty(x) for x in v.values())


def scalar_rows(entry: AuditEntry, *, max_list: int = 4) -> list[tuple[str, str]]:
    """(field, formatted value) of every non-empty scalar field, short list and flat small dict of an entry.

    Long arrays (curves) are left to the figures and the JSON; empty fields (``None``,
    ``[]``) are left out, and so are the fields the report shows elsewhere (notes, error).
    The fields are those of the entry's JSON form, so a field no renderer knows still shows.

    Parameters
    ----------
    entry : AuditEntry
    max_list : int
        Longest list shown as a field.

    Returns
    -------
    list of (str, str)
    """
    rows = []
    for key, value in entry.to_dict().items():
        if key in _NOT_FIELDS or _is_empty(value):
            continue
        if _is_scalar(value):
            rows.append((key, fmt(value)))
        elif isinstance(value, list) and len(value) <= max_list and all(_is_scalar(v) for v in value):
            rows.append((key, fmt(value)))
        elif isinstance(value, dict) and len(value) <= 8 and all(_is_scalar(v) for v in value.values()):
            rows.append((key, fmt({k: v for k, v in value.items() if v is not None})))
        elif isinstance(value, dict) and len(value) <= 8 and all(
                isinstance(v, dict) and len(v) <= 8 and all(_is_scalar(x) for x in v.values()) for v in value.values()):
            # A small table of records (a trade-off's epsilon_lb_by_family): one row per record.
            rows += [(f"{key}.{k}", fmt({f: x for f, x in v.items() if x is not None})) for k, v in value.items()]
    return rows


def entry_notes(entry: AuditEntry) -> list[str]:
    """The entry's notes, each once (a kind and its result may state the same note).

    Parameters
    ----------
    entry : AuditEntry

    Returns
    -------
    list of str
    """
    notes = entry.to_dict().get("notes") or []
    return list(dict.fromkeys(str(n) for n in ([notes] if isinstance(notes, str) else notes)))


def headline_figures(entries: list[AuditEntry], figures: dict[int, list[tuple[str, bytes, str]]],
                     *, limit: int = 12) -> list[tuple[int, tuple[str, bytes, str]]]:
    """Figures shown at the top: the first figure of each task, and every figure of an audit gone wrong.

    Bias entries (catalogues of dozens) are summarised by the bias table instead, unless they failed.

    Parameters
    ----------
    entries : list of AuditEntry
        The report's entries, in order.
    figures : dict of int to list of (name, png, caption)
        :func:`~privaudit.audit.reporting.figures.render_figures` of the entries.
    limit : int
        At most this many figures.

    Returns
    -------
    list of (int, (str, bytes, str))
        ``[(audit index, (name, png, caption)), ...]`` in audit order.
    """
    seen_tasks, out = set(), []
    for i, entry in enumerate(entries):
        figs = figures.get(i, [])
        task = entry.task if entry.task is not None else i
        if not figs:
            continue
        bad = outcome(entry) in (Outcome.VIOLATION, Outcome.FAIL, Outcome.EXPECTED_VIOLATION_MISSED)
        if bad:
            out += [(i, f) for f in figs]
        elif task not in seen_tasks and entry.kind != "bias":
            out.append((i, figs[0]))
        seen_tasks.add(task)
    return out[:limit]


def _status_line(report: dict) -> tuple[str, str]:
    """(status word, sentence): ``("PASS", "no claim refuted; 12 audits: 7 pass, ...")``."""
    s = report["summary"]
    meaning = {"pass": "no claim refuted, every check that applied passed",
               "violation": "a privacy claim is refuted", "fail": "a check failed",
               "error": "an audit could not run", "inconclusive": "nothing could be tested"}
    counts = s.get("counts", {})
    return s["status"].upper(), f"{meaning.get(s['status'], s['status'])}. {status_sentence(counts, s['n_audits'])}."


def _run_line(report: dict) -> str:
    return (f"Seed {report['seed']}, samples ×{fmt(report['samples'])}, source {report['source'] or 'inline'}, "
            f"privaudit {report['versions'].get('privaudit')}.")


def _error_of(entry: AuditEntry) -> str | None:
    """A failed entry's traceback (else its error message), None for an entry that did not fail."""
    d = entry.to_dict()
    return (d.get("traceback") or d["error"]) if d.get("error") else None


# --------------------------------------------------------------------------- Markdown
#: Markdown syntax a string from a configuration or a result must not carry into report.md: emphasis and
#: strikethrough (``*``, ``~``), code spans, math (``$``, rendered by GitHub), and the backslash that would
#: undo these escapes. Links, images and link definitions, ``_`` and block markers are handled by position
#: (below), so that plain text such as an interval ``[0.5, 1]`` or ``n_eval`` is left as it reads.
_MD_ALWAYS = re.compile(r"([\\`*~$])")
#: A ``]`` that closes link or image text (``[x](url)``, ``![x](url)``, ``[x][ref]``) or defines a link
#: (``[ref]: url``): without it no link forms.
_MD_LINK = re.compile(r"\](?=[(\[:])")
#: ``_`` opens or closes emphasis only at a word boundary (CommonMark: never between two letters or digits of
#: any script, as in n_eval or Σ_x); an ``_`` beside another ``_`` or punctuation is escaped.
_MD_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")
#: What makes a heading, list item or rule of a line it opens (``# x``, ``- x``, ``1. x``, ``---``, ``===``).
_MD_BLOCK = re.compile(r"^(\s*)(#{1,6}|[-+]|\d{1,9}[.)])(?=\s|$)|^(\s*)([-=])(?=[-=\s]*$)")


def _md(text: Any) -> str:
    """Text from the configuration or an entry, shown as written in Markdown: one line, HTML escaped, and every
    character that would start emphasis, a code span, a link or an image (or a heading or list, at the start)
    backslash-escaped, so ``[link](javascript:…)``, ``![](https://remote/img)`` and ``*bold*`` stay text."""
    one_line = html.escape(str(text), quote=False).replace("\r", " ").replace("\n", " ")
    escaped = _MD_LINK.sub(r"\\]", _MD_UNDERSCORE.sub(r"\\_", _MD_ALWAYS.sub(r"\\\1", one_line)))
    return _MD_BLOCK.sub(_escape_marker, escaped, count=1)


def _escape_marker(match: re.Match) -> str:
    """The block marker of :data:`_MD_BLOCK` with its last character backslash-escaped."""
    space, marker = (match.group(1), match.group(2)) if match.group(2) else (match.group(3), match.group(4))
    return f"{space}{marker[:-1]}\\{marker[-1]}"


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks in ``text`` (so the text cannot close it)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    esc = [[_md(c).replace("|", "\\|") for c in r] for r in rows]
    lines = ["| " + " | ".join(_md(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in esc]
    return "\n".join(lines)


def render_markdown(report: dict, entries: list[AuditEntry], figures: dict[int, list[tuple[str, bytes, str]]],
                    tables: list[tuple[str, list[str], list[list[str]], str]],
                    table_links: dict[str, str] | None = None) -> str:
    """The Markdown report: verdict, ε table and headline figures first, then every audit.

    Figures are linked from ``figures/`` (``table_links``: title -> PNG of a table). Every
    string that comes from the configuration or an entry is HTML-escaped.

    Parameters
    ----------
    report : dict
        The document (its name, description, summary, versions).
    entries : list of AuditEntry
        Its entries (:func:`report_entries`).
    figures : dict of int to list of (name, png, caption)
        Figures per entry index.
    tables : list of (title, header, rows, note)
        :func:`~privaudit.audit.reporting.figures.summary_tables` of the entries.
    table_links : dict of str to str, optional
        Table title -> PNG file of the table.

    Returns
    -------
    str
    """
    word, sentence = _status_line(report)
    out = [f"# privaudit report: {_md(report['name'])}", "", f"**{word}**: {_md(sentence)}", ""]
    if report.get("description"):
        out += [_md(report["description"]), ""]
    out += [_md(_run_line(report)), ""]
    top = headline_figures(entries, figures)
    top_md = ["## Headline figures", "", *[f"![#{i}: {_md(cap)}](figures/{name})" for i, (name, _, cap) in top],
              ""] if top else []
    for k, (title, header, rows, note) in enumerate(tables):
        if k == 1:
            out += top_md
        out += [f"## {_md(title)}", "", _md_table(header, rows), ""]
        if note:
            out += [_md(note), ""]
        if table_links and title in table_links:
            out += [f"(As a figure: [figures/{table_links[title]}](figures/{table_links[title]}).)", ""]
    if len(tables) < 2:
        out += top_md
    out += ["## All audits", "",
            _md_table(["#", "kind", "target", "outcome", "result"],
                      [[str(i), a.kind, a.label, outcome_label(a), headline(a, with_outcome=False)]
                       for i, a in enumerate(entries)]), ""]
    for i, a in enumerate(entries):
        out += [f"### {i}. {_md(a.kind)}: {_md(a.label)}", "", f"Outcome: **{_md(outcome_label(a))}** — "
                f"{_md(headline(a, with_outcome=False))}", ""]
        error = _error_of(a)
        if error:
            out += [_fence(error), error, _fence(error), ""]
        for name, _png, caption in figures.get(i, []):
            out += [f"![{_md(caption)}](figures/{name})", ""]
        rows = scalar_rows(a)
        if rows:
            out += [_md_table(["field", "value"], [list(r) for r in rows]), ""]
        out += [f"- {_md(n)}" for n in entry_notes(a)]
        out += [""]
    v = report["versions"]
    out += ["## Versions", "", _md(", ".join(f"{k} {val}" for k, val in v.items() if val)), ""]
    return "\n".join(out)


# --------------------------------------------------------------------------- HTML
_CSS = """
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1360px;margin:0 auto;padding:.6em 1em;
color:#1d1d1d;line-height:1.4;font-size:15px}
h1{font-size:1.35em;margin:.3em 0}h2{font-size:1.15em;margin:1em 0 .4em}h3{font-size:1em}
.verdict{border-radius:6px;padding:.55em .9em;margin:.4em 0 .6em;border:1px solid}
.verdict .word{font-size:1.5em;font-weight:700;margin-right:.5em}
.s-pass{background:#eaf6ea;border-color:#8bc58b}.s-violation,.s-fail,.s-error{background:#fdecec;border-color:#e08a8a}
.s-inconclusive{background:#fff6e0;border-color:#e0c070}
.meta{color:#555;font-size:.88em;margin:.2em 0}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:.3em 0}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;
font-size:.88em;vertical-align:top}th{background:#f3f3f3}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
table.fields td{max-width:60em}table.fields td.num{text-align:left}
code,pre{background:#f6f6f6;padding:.1em .3em}pre{padding:.6em;overflow:auto}
.o-pass,.o-expected-violation-caught{color:#176117;font-weight:600}
.o-violation,.o-fail,.o-error,.o-expected-violation-missed{color:#a40000;font-weight:700}
.o-inconclusive{color:#8a5a00;font-weight:600}.o-info{color:#555}
.note{font-size:.85em;color:#444;max-width:75em}
.figs{display:grid;grid-template-columns:repeat(auto-fill,minmax(380px,1fr));grid-auto-flow:dense;gap:.6em;
margin:.4em 0}
figure{margin:0}figure.wide{grid-column:span 2}figcaption{font-size:.82em;color:#444}
label.zoom{cursor:zoom-in;display:block}
label.zoom input{display:none}
img{max-width:100%;height:auto;border:1px solid #eee;display:block;background:#fff}
label.zoom input:checked+img{position:fixed;inset:0;width:100vw;height:100vh;max-width:none;object-fit:contain;
z-index:10;cursor:zoom-out;padding:1em;background:rgba(255,255,255,.97);border:0}
details{border-top:1px solid #ddd;padding:.3em 0}details.note{border:0}details>summary{cursor:pointer}
details.audit>summary{font-size:.95em}
@media (max-width:820px){figure.wide{grid-column:auto}}
@media (max-width:600px){body{font-size:14px;padding:.4em .5em}.figs{grid-template-columns:1fr}
td,th{font-size:.74em;padding:.15em .25em}.verdict .word{font-size:1.25em}
table.summary td,table.summary th{max-width:6.5em;font-size:.66em;padding:.12em .18em;hyphens:auto;
overflow-wrap:break-word}
table.summary .wide-only{display:none}
figure.wide{grid-column:auto}}
"""


#: Summary-table columns left out on a phone-sized screen (the details keep them): long prose that pushed
#: the certified ε̲ and the ceiling off a 400 px screen.
_WIDE_ONLY = ("estimator (assumption)", "n (eval, per hypothesis)")


def _html_table(header: list[str], rows: list[list[str]], raw_cols: tuple[int, ...] = (), cls: str = "") -> str:
    wide = {j for j, h in enumerate(header) if h in _WIDE_ONLY}
    head = "".join(f"<th{' class=wide-only' if j in wide else ''}>{html.escape(h)}</th>" for j, h in enumerate(header))

    def cell(j: int, c: Any) -> str:
        text = c if j in raw_cols else html.escape(str(c))
        numeric = num(c) is not None or _looks_numeric(str(c))
        classes = " ".join(k for k, on in (("num", numeric), ("wide-only", j in wide)) if on)
        return f"<td class='{classes}'>{text}</td>" if classes else f"<td>{text}</td>"

    body = "".join("<tr>" + "".join(cell(j, c) for j, c in enumerate(r)) + "</tr>" for r in rows)
    return f"<div class='scroll'><table{f' class={cls!r}' if cls else ''}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"


def _looks_numeric(text: str) -> bool:
    try:
        float(text.replace("−", "-").replace("∞", "inf"))
    except ValueError:
        return False
    return True


def _outcome(entry: AuditEntry) -> str:
    return f'<span class="o-{outcome(entry)}">{html.escape(outcome_label(entry))}</span>'


def _figure_id(name: str) -> str:
    return "fig-" + re.sub(r"[^A-Za-z0-9-]", "-", name.rsplit(".", 1)[0])


def _figure(name: str, png: bytes, caption: str) -> str:
    """A figure that enlarges to the window on click (a hidden checkbox: pure CSS, no script)."""
    e = html.escape
    b64 = base64.b64encode(png).decode("ascii")
    width, height = struct.unpack(">II", png[16:24]) if png[:8] == b"\x89PNG\r\n\x1a\n" else (1, 1)
    wide = " class='wide'" if width > 1.8 * height else ""  # multi-panel figures get two grid columns
    return (f"<figure{wide} id='{_figure_id(name)}'><label class='zoom' title='click to enlarge'><input type='checkbox'>"
            f"<img alt='{e(caption)}' src='data:image/png;base64,{b64}' data-name='{e(name)}'></label>"
            f"<figcaption>{e(caption)}</figcaption></figure>")


#: Outcome of a summary-table cell's label (for its colour).
_LABEL_OUTCOME = {**{label: key for key, label in OUTCOME_LABELS.items()},
                  "bias expected — detected": "expected-violation-caught",
                  "bias expected — MISSED": "expected-violation-missed"}


def _summary_rows(rows: list[list[str]]) -> list[list[str]]:
    """Summary-table rows as HTML cells, the outcome column (index 2) coloured by its outcome."""
    out = []
    for r in rows:
        cells = [html.escape(str(c)) for c in r]
        if len(r) > 2 and r[2] in _LABEL_OUTCOME:
            cells[2] = f'<span class="o-{_LABEL_OUTCOME[r[2]]}">{cells[2]}</span>'
        out.append(cells)
    return out


def _html_headline_figures(entries: list[AuditEntry], figures: dict[int, list[tuple[str, bytes, str]]]) -> list[str]:
    top = headline_figures(entries, figures)
    if not top:
        return []
    return ["<h2>Headline figures</h2><div class='figs'>",
            *[_figure(name, png, f"#{i}: {caption}") for i, (name, png, caption) in top], "</div>"]


def _row_outcomes(rows: list[list[str]]) -> str:
    """``"25 pass, 8 bias expected — detected"`` from the outcome column of summary-table rows."""
    counts = Counter(r[2] for r in rows)  # columns: #, target, outcome, ...
    return ", ".join(f"{n} {label}" for label, n in counts.most_common())


def render_html(report: dict, entries: list[AuditEntry], figures: dict[int, list[tuple[str, bytes, str]]],
                tables: list[tuple[str, list[str], list[list[str]], str]]) -> str:
    """The self-contained HTML report: verdict, ε table and headline figures first, details collapsed.

    Figures are embedded as base64 PNG and enlarge on click (CSS only); nothing is
    loaded from outside the file.

    Parameters
    ----------
    report : dict
        The document (its name, description, summary, versions).
    entries : list of AuditEntry
        Its entries (:func:`report_entries`).
    figures : dict of int to list of (name, png, caption)
        Figures per entry index.
    tables : list of (title, header, rows, note)
        :func:`~privaudit.audit.reporting.figures.summary_tables` of the entries.

    Returns
    -------
    str
    """
    e = html.escape
    word, sentence = _status_line(report)
    status = report["summary"]["status"]
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>privaudit report: {e(report['name'])}</title><style>{_CSS}</style></head><body>",
        f"<h1>privaudit report: {e(report['name'])}</h1>",
        f"<div class='verdict s-{e(status)}' id='verdict'><span class='word'>{e(word)}</span>{e(sentence)}</div>",
    ]
    if report.get("description"):
        parts.append(f"<p class='meta'>{e(report['description'])}</p>")
    # The first table (the ε table when there are privacy audits) opens the report; the
    # others (long bias catalogues) follow the headline figures, collapsed.
    for k, (title, header, rows, note) in enumerate(tables):
        if k == 1:
            parts += _html_headline_figures(entries, figures)
        table = [_html_table(header, _summary_rows(rows), raw_cols=tuple(range(len(header))), cls="summary")]
        if note:
            table.append(f"<details class='note'><summary>How to read this table</summary>{e(note)}</details>")
        if k == 0:
            parts += [f"<h2 id='table-{k}'>{e(title)}</h2>", *table]
        else:
            parts += [f"<details id='table-{k}'><summary><b>{e(title)}</b> ({len(rows)} rows: "
                      f"{e(_row_outcomes(rows))})</summary>", *table, "</details>"]
    all_audits = [
        f"<details open><summary><b>All audits ({len(entries)})</b></summary>",
        _html_table(["#", "kind", "target", "outcome", "result"],
                    [[f"<a href='#audit-{i}'>{i}</a>", e(a.kind), e(a.label), _outcome(a), e(headline(a, with_outcome=False))]
                     for i, a in enumerate(entries)], raw_cols=(0, 1, 2, 3, 4)),
        "</details>",
    ]
    if not tables:  # no privacy audit (e.g. reconstruction only): the audits' one-line results open the report
        parts += all_audits
    if len(tables) < 2:
        parts += _html_headline_figures(entries, figures)
    if tables:
        parts += all_audits
    parts.append("<h2>Details</h2>")
    on_top = {name for _, (name, _, _) in headline_figures(entries, figures)}
    for i, a in enumerate(entries):
        bad = outcome(a) in (Outcome.VIOLATION, Outcome.FAIL, Outcome.ERROR, Outcome.EXPECTED_VIOLATION_MISSED)
        parts.append(f"<details class='audit' id='audit-{i}'{' open' if bad else ''}><summary>{i}. "
                     f"{_outcome(a)} — {e(a.kind)}: {e(a.label)}</summary>")
        parts.append(f"<p>{e(headline(a, with_outcome=False))}</p>")
        error = _error_of(a)
        if error:
            parts.append(f"<pre>{e(error)}</pre>")
        # Each PNG is embedded once: a headline figure is linked from its audit, not repeated.
        figs = [f for f in figures.get(i, []) if f[0] not in on_top]
        links = [f for f in figures.get(i, []) if f[0] in on_top]
        if links:
            parts.append("<p>" + " ".join(f"<a href='#{_figure_id(n)}'>↑ {e(cap)} (in the headline figures)</a>"
                                          for n, _, cap in links) + "</p>")
        if figs:
            parts.append("<div class='figs'>" + "".join(_figure(*f) for f in figs) + "</div>")
        rows = scalar_rows(a)
        if rows:
            parts.append(_html_table(["field", "value"], [list(r) for r in rows], cls="fields"))
        notes = entry_notes(a)
        if notes:
            parts.append("<ul class='note'>" + "".join(f"<li>{e(n)}</li>" for n in notes) + "</ul>")
        parts.append("</details>")
    versions = ", ".join(f"{k} {val}" for k, val in report["versions"].items() if val)
    parts += [f"<p class='meta'>{e(_run_line(report))} Versions: {e(versions)}</p>", "</body></html>"]
    return "\n".join(parts)


#: The report's styles a notebook cell needs, scoped to the result's block (a notebook's own styles stay as they are).
_NOTEBOOK_CSS = (
    ".privaudit-result .o-pass,.privaudit-result .o-expected-violation-caught{color:#176117;font-weight:600}"
    ".privaudit-result .o-violation,.privaudit-result .o-fail,.privaudit-result .o-error,"
    ".privaudit-result .o-expected-violation-missed{color:#a40000;font-weight:700}"
    ".privaudit-result .o-inconclusive{color:#8a5a00;font-weight:600}"
    ".privaudit-result .figs{display:grid;grid-template-columns:repeat(auto-fill,minmax(320px,1fr));gap:.5em}"
    ".privaudit-result figure{margin:0}.privaudit-result img{max-width:100%;height:auto}"
    ".privaudit-result figcaption,.privaudit-result .note{font-size:.85em;color:#444}"
    ".privaudit-result label.zoom input{display:none}"
    ".privaudit-result td.num{text-align:right}"
)


def result_html(result: Any) -> str:
    """An HTML fragment of one result for notebooks (``_repr_html_``): outcome, headline, figures, fields, notes.

    Parameters
    ----------
    result : AuditResult or AuditEntry

    Returns
    -------
    str
        Self-contained HTML (figures embedded as PNG); strings from the result are escaped.
    """
    from privaudit.audit.display.plotting import png
    from privaudit.audit.reporting.figures import entry_figures

    e = html.escape
    entry = as_entry(result)
    parts = [f"<div class='privaudit-result'><style>{_NOTEBOOK_CSS}</style>",
             f"<p><b>{e(entry.kind)}: {e(entry.label)}</b> — {_outcome(entry)}</p>",
             f"<p>{e(headline(entry, with_outcome=False))}</p>"]
    error = _error_of(entry)
    if error:
        parts.append(f"<pre>{e(error)}</pre>")
    figs = entry_figures(entry)
    if figs:
        parts.append("<div class='figs'>" + "".join(_figure(f"{suffix}.png", png(fig), caption)
                                                     for suffix, fig, caption in figs) + "</div>")
    rows = scalar_rows(entry)
    if rows:
        parts.append(_html_table(["field", "value"], [list(r) for r in rows], cls="fields"))
    notes = entry_notes(entry)
    if notes:
        parts.append("<ul class='note'>" + "".join(f"<li>{e(n)}</li>" for n in notes) + "</ul>")
    return "\n".join(parts + ["</div>"])


#: Significant digits of every float a report writes. Sums and BLAS kernels may differ in the last bit
#: between two machines of one kind (a 1-ulp difference in a bias statistic); 12 digits keep every number
#: a report shows and drop those differences, so the same run writes the same bytes.
SIGNIFICANT_DIGITS = 12


def significant(value: Any, digits: int = SIGNIFICANT_DIGITS) -> Any:
    """``value`` with every float (in nested dicts, lists and tuples) rounded to ``digits`` significant digits.

    Parameters
    ----------
    value : object
        A JSON-like document.
    digits : int
        Significant digits kept.

    Returns
    -------
    object
        The same structure (tuples become lists, as JSON writes them); ints, strings,
        booleans and None unchanged; ``float(f"{x:.{digits}g}")`` for each float (±inf and
        NaN unchanged).
    """
    if isinstance(value, float):
        return float(f"{value:.{digits}g}")
    if isinstance(value, dict):
        return {k: significant(v, digits) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [significant(v, digits) for v in value]
    return value


def report_json(report: dict) -> bytes:
    """The bytes of ``report.json``: the record, keys in the order the report was built, strict JSON,
    every float at :data:`SIGNIFICANT_DIGITS` significant digits.

    Parameters
    ----------
    report : dict
        A report built by :func:`build_report`.

    Returns
    -------
    bytes
        UTF-8, ending with a newline.
    """
    return (json.dumps(significant(report), indent=2, sort_keys=False, allow_nan=False) + "\n").encode()


def report_files(report: dict, *, figures: bool = True) -> dict[str, bytes]:
    """Every rendered file of the set but ``report.json``: relative path -> bytes.

    The renderers take the document's typed entries (:func:`report_entries`).

    Parameters
    ----------
    report : dict
        The ``privaudit.report/1`` document.
    figures : bool
        Render the PNG figures.

    Returns
    -------
    dict of str to bytes
    """
    report = significant(report)  # the numbers report.json holds, so that every file shows the same
    entries = report_entries(report)
    figs = render_figures(entries) if figures else {}
    tables = summary_tables(entries)
    # The summary tables as PNG too (figures/epsilon-table.png, bias-table.png): the
    # Markdown links them, the HTML shows the tables themselves.
    table_figs = render_table_figures(entries) if figures else []
    out = {f"figures/{name}": png for items in [*figs.values(), table_figs] for name, png, _ in items}
    table_links = {title: name for name, _, title in table_figs}
    out["report.md"] = render_markdown(report, entries, figs, tables, table_links).encode()
    out["report.html"] = render_html(report, entries, figs, tables).encode()
    return out
