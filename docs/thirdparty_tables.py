"""The result tables of docs/thirdparty.md, written from the committed report reports/thirdparty/report.json.

    python docs/thirdparty_tables.py            # exit 1 and name the tables that differ from the report
    python docs/thirdparty_tables.py --write    # rewrite them in docs/thirdparty.md

Two tables are generated: the audits (claimed, exact and certified ε, attacker, releases,
outcome) and Opacus side by side (Opacus' ε, the PLD's, each view's ε̲). A table is
found by the start of its header line and replaced up to its last ``|`` line; the prose
around it is left alone. tests/test_docs_thirdparty.py fails when the document and the
report disagree, so regenerating reports/thirdparty without this script is noticed.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "reports" / "thirdparty" / "report.json"
DOC = ROOT / "docs" / "thirdparty.md"

#: Report target -> how the document names it, in the document's order (libraries, then negative controls).
AUDIT_LABELS = {
    "OpenDP make_laplace (float vector), scale 1: ε = 1": "OpenDP `make_laplace`, scale 1",
    "OpenDP make_laplace (float vector), scale 1: ε = 1, worst pair searched in [−1000, 1000]":
        "OpenDP `make_laplace`, scale 1, **worst pair searched** in [−1000, 1000] (`domain`)",
    "OpenDP make_gaussian (float vector), scale 1: ρ = 0.5, ε(1e-5) by OpenDP's conversion":
        "OpenDP `make_gaussian`, scale 1 (ρ = 0.5)",
    "OpenDP make_laplace (integer vector, discrete Laplace), scale 1: ε = 1": "OpenDP `make_laplace`, integers, scale 1",
    "OpenDP make_geometric (integer vector), scale 1: ε = 1": "OpenDP `make_geometric`, scale 1",
    "OpenDP make_composition of two Gaussians (scales 2, 3), zCDP, then make_zCDP_to_approxDP":
        "OpenDP `make_composition` of Gaussians (2, 3), zCDP → (ε, δ)",
    "OpenDP make_laplace_threshold (scale 1, threshold 10): a key's count 9.5 vs 10.5, around the threshold":
        "OpenDP `make_laplace_threshold` (1, T = 10), counts 9.5 vs 10.5",
    "pydp LaplaceMechanism ε = 1": "pydp `LaplaceMechanism` ε = 1",
    "pydp GaussianMechanism ε = 1, δ = 1e-5": "pydp `GaussianMechanism` ε = 1, δ = 1e−5",
    "pydp BoundedSum ε = 1 on [0, 1]: worst add/remove pair searched among datasets of 0 to 10 records in [−1, 2]":
        "pydp `BoundedSum` ε = 1 on [0, 1], **worst add/remove pair searched** (datasets of 0–10 records in [−1, 2])",
    "pydp BoundedMean ε = 1 on [0, 1]: worst add/remove pair searched among datasets of 0 to 10 records in [−1, 2]":
        "pydp `BoundedMean` ε = 1 on [0, 1], **worst add/remove pair searched** (datasets of 0–10 records in [−1, 2])",
    "Opacus DP-SGD, per-sample gradients by hooks, full batch, target ε = 2 (one run)":
        "Opacus DP-SGD, hooks, full batch, target ε = 2",
    "Opacus DP-SGD, per-sample gradients by hooks, full batch, target ε = 8":
        "Opacus DP-SGD, hooks, full batch, target ε = 8",
    "Opacus DP-SGD, ghost clipping, full batch, target ε = 8": "Opacus DP-SGD, ghost clipping, full batch, target ε = 8",
    "Opacus DP-SGD, hooks, Poisson sampling q = 0.5, target ε = 2 (one run)":
        "Opacus DP-SGD, hooks, Poisson q = 0.5, target ε = 2",
    "NEGATIVE CONTROL: OpenDP Laplace claiming scale 1 (ε = 1), drawing at scale 0.5 (ε = 2)":
        "negative control: OpenDP Laplace claiming scale 1, drawing at 0.5",
    "NEGATIVE CONTROL: OpenDP Laplace threshold whose δ is computed at threshold 10, releasing at threshold 3 "
    "(a new key leaks w.p. 0.068)": "negative control: OpenDP threshold, δ for T = 10, releasing at T = 3",
}

AUDIT_HEADER = ["target", "claimed (ε, δ)", "exact ε", "certified ε̲", "attacker", "n", "outcome"]
OPACUS_HEADER_START = "| configuration | Opacus ε |"


# --------------------------------------------------------------------------- number formats
def _epsilon(value: float | None) -> str:
    """``1`` for a whole number, ``∞``, ``—`` for none, 4 decimals below 1 and 3 from 1 on."""
    if value is None:
        return "—"
    if math.isinf(value):
        return "∞"
    if value == round(value):
        return f"{value:.0f}"
    return f"{value:.4f}" if value < 1 else f"{value:.3f}"


def _delta(value: float) -> str:
    """``0``, or two significant digits with a minus sign: ``1e−5``, ``6.2e−5``."""
    if value == 0:
        return "0"
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"{mantissa.removesuffix('.0')}e{int(exponent)}".replace("-", "−")


def _thousands(n: int) -> str:
    return f"{n:,}".replace(",", " ")


# --------------------------------------------------------------------------- tables
def _entries(report: Mapping[str, Any]) -> dict[str, Any]:
    from privaudit.audit.reporting.render import report_entries

    return {entry.label: entry for entry in report_entries(dict(report))}


def _outcome(entry: Any) -> str:
    from privaudit.audit.verdicts import Outcome, outcome, outcome_label

    result = outcome(entry)
    if result == Outcome.VIOLATION:
        return "**violation** (see below)"  # the finding is explained after the tables
    return {Outcome.PASS: "pass", Outcome.EXPECTED_VIOLATION_CAUGHT: "caught"}.get(result, outcome_label(entry))


def _opacus_runs(views: Sequence[Mapping[str, Any]]) -> int | None:
    """Training runs per hypothesis of the trade-off view, if there is one."""
    runs = [v["n_runs"] for v in views if v["method"] == "tradeoff"]
    return runs[0] if runs else None


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join([*lines, *("| " + " | ".join(r) + " |" for r in rows)])


def audit_table(report: Mapping[str, Any]) -> str:
    """The trade-off and Opacus audits of the report as the document's Markdown table.

    Parameters
    ----------
    report : mapping
        reports/thirdparty/report.json, read.

    Returns
    -------
    str

    Raises
    ------
    KeyError
        A statistical audit of the report has no label in :data:`AUDIT_LABELS`, or a
        label no audit.
    """
    entries = _entries(report)
    audited = {label for label, e in entries.items() if e.kind in ("tradeoff", "opacus")}
    if audited != set(AUDIT_LABELS):
        raise KeyError(f"audits without a label: {sorted(audited - set(AUDIT_LABELS))}; "
                       f"labels without an audit: {sorted(set(AUDIT_LABELS) - audited)}")
    rows = []
    for target, label in AUDIT_LABELS.items():
        r = entries[target].result
        violation = _outcome(entries[target]).startswith("**")
        bound = f"{r.epsilon_lb:.2f}"
        if r.kind == "opacus":
            m = r.views[0]["m"]
            attacker, runs = f"one run, {m} canaries", _opacus_runs(r.views)
            n = "1 run" if runs is None else f"1 + 2×{runs} runs"
        else:
            attacker, n = r.attacker, _thousands(r.n)
        rows.append([f"**{label}**" if violation else label,
                     f"({_epsilon(r.claim.epsilon)}, {_delta(r.claim.delta)})" if r.kind != "opacus" else
                     f"({r.claim.epsilon:.3f}, {_delta(r.claim.delta)})",
                     _epsilon(r.epsilon_exact), f"**{bound}**" if violation else bound, attacker, n,
                     _outcome(entries[target])])
    return _table(AUDIT_HEADER, rows)


def opacus_table(report: Mapping[str, Any]) -> str:
    """Opacus' ε, the PLD accountant's exact ε and each view's ε̲, one row per Opacus audit.

    Parameters
    ----------
    report : mapping
        reports/thirdparty/report.json, read.

    Returns
    -------
    str
    """
    audits = [e.result for e in _entries(report).values() if e.kind == "opacus"]
    runs = sorted({n for r in audits if (n := _opacus_runs(r.views)) is not None})
    header = ["configuration", "Opacus ε", "exact ε (PLD)", "one run, white box", "one run, black box",
              f"2×{'/'.join(map(str, runs))} runs, white box"]
    rows = []
    for r in audits:
        mode = {"ghost": "ghost clipping", "functorch": "functorch"}.get(r.grad_sample_mode, r.grad_sample_mode)
        batch = "full batch" if r.sampling_rate == 1 else f"Poisson q = {r.sampling_rate:g}"
        by_view = {v["view"].split(" (")[0]: v["epsilon_lb"] for v in r.views}
        trade = [v["epsilon_lb"] for v in r.views if v["method"] == "tradeoff"]
        rows.append([f"{mode}, {batch}, z = {r.noise_multiplier:.3f}, T = {r.steps}", f"{r.opacus_epsilon:.3f}",
                     f"{r.epsilon_exact:.3f}", f"{by_view['one-run, white box']:.2f}",
                     f"{by_view['one-run, black box']:.2f}", f"{trade[0]:.2f}" if trade else "—"])
    return _table(header, rows)


def replace_table(text: str, header_start: str, table: str) -> str:
    """``text`` with the Markdown table whose header line starts with ``header_start`` replaced by ``table``.

    Parameters
    ----------
    text : str
        The document.
    header_start : str
        The start of the table's header line (the table is found by it).
    table : str
        The new table.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        No line, or more than one, starts with ``header_start``.
    """
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith(header_start)]
    if len(starts) != 1:
        raise ValueError(f"expected one table whose header starts with {header_start!r}, found {len(starts)}")
    end = starts[0]
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return "\n".join([*lines[:starts[0]], table, *lines[end:]])


def updated(text: str, report: Mapping[str, Any]) -> str:
    """The document ``text`` with both tables written from ``report``.

    Parameters
    ----------
    text : str
        docs/thirdparty.md.
    report : mapping
        reports/thirdparty/report.json, read.

    Returns
    -------
    str
    """
    text = replace_table(text, "| target | claimed (ε, δ) |", audit_table(report))
    return replace_table(text, OPACUS_HEADER_START, opacus_table(report))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="rewrite the tables in docs/thirdparty.md")
    args = ap.parse_args(argv)
    report = json.loads(REPORT.read_text(encoding="utf-8"))
    text = DOC.read_text(encoding="utf-8")
    new = updated(text, report)
    if args.write:
        DOC.write_text(new, encoding="utf-8")
        print(f"wrote {DOC}")
        return 0
    if new != text:
        print(f"{DOC} disagrees with {REPORT}: run python docs/thirdparty_tables.py --write", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
