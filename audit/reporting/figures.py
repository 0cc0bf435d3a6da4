"""Figures, headlines and summary tables of a report, rendered from its typed entries.

Every function here takes :class:`~privaudit.audit.results.AuditEntry` objects: a
fresh run's, or those read back from ``report.json``
(:func:`privaudit.audit.kinds.entry_from_dict`), so a report can be re-rendered
from its JSON alone. What to draw and say about an entry is declared by the kind
that produces its result (:mod:`privaudit.audit.kinds`: ``headline``, ``figures``,
``table_rows``, called with the entry); this module only iterates over the registry.
Entries of a kind nobody registered (an
:class:`~privaudit.audit.results.UntypedResult`) render their scalar fields in the
report's tables (:func:`privaudit.audit.reporting.render.scalar_rows`) and no figure.

Summary tables (:data:`SUMMARY_TABLES`): claimed / exact / certified ε of every
privacy audit, with the largest ε its sample size could certify, and every bias audit.
"""

from __future__ import annotations

import re
import textwrap
import warnings
from typing import TYPE_CHECKING, Any

from privaudit.audit.display.formatting import fnum, num
from privaudit.audit.kinds import AuditKind, renderer
from privaudit.audit.display.plotting import new_figure, png
from privaudit.audit.results import AuditEntry, as_entry
from privaudit.audit.verdicts import Verdict, outcome_label

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: Summary tables: name -> (title, header after "#", note, figure file name). Kinds contribute rows
#: through ``AuditKind.table_rows[name]``.
SUMMARY_TABLES = {
    "epsilon": (
        "Privacy: claimed, exact and certified ε",
        ["target", "claimed ε", "δ", "exact ε", "certified ε̲", "estimator (assumption)", "n (eval, per hypothesis)",
         "max certifiable ε", "outcome"],
        "Certified ε̲: a lower confidence bound on the ε of the target, from the estimator named in its row: "
        "Clopper–Pearson bounds on the attack's error rates hold for every mechanism; the GDP fit assumes the "
        "trade-off curve is Gaussian and is an estimate under that assumption. A claim is refuted when ε̲ exceeds "
        "it. Max certifiable ε: the largest ε̲ a Clopper–Pearson audit with this many evaluation samples per "
        "hypothesis can reach (zero errors on both sides of its widest test: the pooled test of a split audit counts "
        "both thresholds' errors over m = 2n trials, a Bonferroni audit's tests m = n): ln((1−δ−u)/u), "
        "u = 1−((1−c)/2)^{1/m}, ≈ ln(m/ln(2/(1−c))); a claim above it cannot be refuted at this sample size.",
        "epsilon-table.png",
    ),
    "bias": (
        "Bias checks",
        ["estimator", "expect", "‖bias‖", "relative bias", "min detectable rel. bias", "p-value", "n", "outcome"],
        "A claimed-unbiased estimator fails when the test rejects E[θ̂] = θ; a known-biased control passes "
        "when its bias is detected.",
        "bias-table.png",
    ),
}


def _renderer(entry: AuditEntry) -> AuditKind | None:
    """The registered kind that renders ``entry`` (None for a failed task or a result no kind declares)."""
    if entry.final_verdict == Verdict.ERROR:
        return None
    kind = renderer(entry.kind)
    return kind if kind is not None and kind.renders(entry) else None


# --------------------------------------------------------------------------- headlines
def headline(entry: AuditEntry, *, with_outcome: bool = True) -> str:
    """One-line summary of an audit entry for the overview table.

    Parameters
    ----------
    entry : AuditEntry
    with_outcome : bool
        Start a negative control's headline with its outcome ("violation expected — caught: ...");
        False where the outcome is shown beside it already.

    Returns
    -------
    str
        The kind's headline; a failed task's error; else the first three numeric fields.
    """
    if entry.final_verdict == Verdict.ERROR:
        return str(getattr(entry.result, "error", "error"))[:160]
    prefix = f"{outcome_label(entry)}: " if with_outcome and entry.expectation == "violation" else ""
    kind = _renderer(entry)
    if kind is not None and kind.headline is not None:
        return prefix + kind.headline(entry)
    scalars = [(k, v) for k, v in entry.to_dict().items() if k not in ("kind", "target", "verdict", "task")
               and num(v) is not None]
    return prefix + ", ".join(f"{k} = {fnum(v)}" for k, v in scalars[:3])


# --------------------------------------------------------------------------- figures
def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", str(text)).strip("-").lower()[:40] or "audit"


def render_figures(entries: list[AuditEntry]) -> dict[int, list[tuple[str, bytes, str]]]:
    """PNG figures of every audit, keyed by the audit's position: ``{i: [(filename, png, caption), ...]}``.

    File names are ``<i>-<kind>-<target slug>-<figure>.png``. A figure that fails to
    render is skipped with a RuntimeWarning (the report still has the numbers);
    entries whose kind declares no figures get none.

    Parameters
    ----------
    entries : list of AuditEntry
        The report's entries, in order.

    Returns
    -------
    dict of int to list of (str, bytes, str)
    """
    out: dict[int, list[tuple[str, bytes, str]]] = {}
    for i, entry in enumerate(entries):
        kind = _renderer(entry)
        if kind is None or kind.figures is None:
            continue
        items = []
        try:
            figs = kind.figures(entry)
        except Exception as exc:  # noqa: BLE001 - a malformed entry must not lose the whole report
            warnings.warn(f"no figure for audit {i} ({entry.kind}: {entry.label}): {exc!r}",
                          RuntimeWarning, stacklevel=2)
            figs = []
        for suffix, fig, caption in figs:
            name = f"{i:02d}-{entry.kind}-{_slug(entry.label)}-{suffix}.png"
            items.append((name, png(fig), caption))
        if items:
            out[i] = items
    return out


def entry_figures(entry: AuditEntry) -> list:
    """The kind's figures of one entry, ``[(name, matplotlib figure, caption), ...]`` (none when no kind draws it).

    Parameters
    ----------
    entry : AuditEntry

    Returns
    -------
    list of (str, Figure, str)
    """
    kind = _renderer(entry)
    return [] if kind is None or kind.figures is None else list(kind.figures(entry))


def plot_result(result: Any, which: int | str = 0) -> Figure:
    """A result's figure as a matplotlib Figure (``result.plot()``), drawn by its kind.

    Parameters
    ----------
    result : AuditResult or AuditEntry
        A typed result (e.g. from :func:`~privaudit.audit.audit_tradeoff`) or a report entry.
    which : int or str
        The figure: its position among the kind's figures, or its name (``"tradeoff"``, ``"roc"``).

    Returns
    -------
    matplotlib.figure.Figure
        Not closed: shown inline in a notebook, or saved with ``savefig``.

    Raises
    ------
    ValueError
        No registered kind draws this result, or it has no figure ``which``.
    TypeError
        ``result`` is not an audit result.
    """
    import matplotlib.pyplot as plt

    entry = as_entry(result)
    kind = _renderer(entry)
    if kind is None or kind.figures is None:
        raise ValueError(f"no registered audit kind draws a result of kind {entry.kind!r} (verdict "
                         f"{entry.final_verdict!r})")
    figs = kind.figures(entry)
    names = [suffix for suffix, _, _ in figs]
    pick = which if isinstance(which, int) and not isinstance(which, bool) else (
        names.index(which) if which in names else None)
    if pick is None or not -len(figs) <= pick < len(figs):
        for _, fig, _ in figs:
            plt.close(fig)
        raise ValueError(f"which={which!r}: this {entry.kind} result has the figures {names}")
    for k, (_, fig, _) in enumerate(figs):
        if k != pick % len(figs):
            plt.close(fig)
    return figs[pick][1]


def table_figure(title: str, header: list[str], rows: list[list[str]], note: str = "") -> Figure:
    """A summary table drawn as a figure (for ``figures/``; the Markdown and HTML carry it as text).

    Column widths follow the longest text of each column (cells cut at 48 characters);
    the figure is as wide as the text needs, at 8 pt.

    Parameters
    ----------
    title : str
        The table's title.
    header : list of str
        Column names.
    rows : list of list of str
        The rows' cells, as text.
    note : str
        A line under the table.

    Returns
    -------
    matplotlib.figure.Figure
    """
    cells = [[c if len(c) <= 48 else c[:45] + "..." for c in r] for r in rows]
    chars = [max([len(header[j])] + [len(r[j]) for r in cells]) + 2 for j in range(len(header))]
    width = min(max(0.085 * sum(chars), 6.0), 24.0)  # ~0.085 in per character at 8 pt
    note_lines = textwrap.wrap(note, int(width * 14)) if note else []
    row_h = 0.24
    height = row_h * (len(rows) + 1) + 0.45 + 0.16 * len(note_lines)
    fig, ax = new_figure(size=(width, height))
    ax = ax[0, 0]
    ax.axis("off")
    # Axes coordinates: the table fills the top, the note sits below it.
    table_h = row_h * (len(rows) + 1) / height
    top = 1 - 0.35 / height
    table = ax.table(cellText=cells, colLabels=header, cellLoc="left", colWidths=[c / sum(chars) for c in chars],
                     bbox=[0.0, top - table_h, 1.0, table_h])
    table.auto_set_font_size(False)
    table.set_fontsize(8)
    ax.text(0.5, 1.0, title, fontsize=10, ha="center", va="top", transform=ax.transAxes)
    if note_lines:
        ax.text(0.0, top - table_h - 0.05 / height, "\n".join(note_lines), fontsize=7, va="top",
                transform=ax.transAxes)
    return fig


def render_table_figures(entries: list[AuditEntry]) -> list[tuple[str, bytes, str]]:
    """``figures/epsilon-table.png`` and ``figures/bias-table.png`` when the report has such audits.

    Parameters
    ----------
    entries : list of AuditEntry
        The report's entries, in order.

    Returns
    -------
    list of (file name, PNG bytes, title)
    """
    files = {title: file for title, _, _, file in SUMMARY_TABLES.values()}
    return [(files[title], png(table_figure(title, header, rows, note)), title)
            for title, header, rows, note in summary_tables(entries) if title in files]


# --------------------------------------------------------------------------- summary tables
def summary_tables(entries: list[AuditEntry]) -> list[tuple[str, list[str], list[list[str]], str]]:
    """Cross-audit tables (:data:`SUMMARY_TABLES`) with the rows the entries' kinds contribute.

    Parameters
    ----------
    entries : list of AuditEntry
        The report's entries, in order.

    Returns
    -------
    list of (title, header, rows, note)
        Columns ``#, target, outcome, ...``; a table without rows is left out.
    """
    rows: dict[str, list[list[str]]] = {name: [] for name in SUMMARY_TABLES}
    for i, entry in enumerate(entries):
        kind = _renderer(entry)
        if kind is None:
            continue
        for name, row_of in kind.table_rows.items():
            row = row_of(entry) if name in rows else None
            if row is not None:
                rows[name].append([str(i), *_outcome_first(row)])
    return [(title, ["#", *_outcome_first(header)], rows[name], note)
            for name, (title, header, note, _) in SUMMARY_TABLES.items() if rows[name]]


def _outcome_first(row: list[str]) -> list[str]:
    """Kinds give ``[target, ..., outcome]``; tables show ``[target, outcome, ...]`` (read first, seen on phones)."""
    return [row[0], row[-1], *row[1:-1]]


__all__ = ["SUMMARY_TABLES", "headline", "plot_result", "render_figures", "render_table_figures", "summary_tables", "table_figure"]
