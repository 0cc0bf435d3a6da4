"""docs/thirdparty.md's result tables are those of the committed report reports/thirdparty (docs/thirdparty_tables.py)."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tables_module():
    spec = importlib.util.spec_from_file_location("thirdparty_tables", ROOT / "docs" / "thirdparty_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


tables = _tables_module()


@pytest.fixture(scope="module")
def report():
    return json.loads(tables.REPORT.read_text(encoding="utf-8"))


def test_the_document_shows_the_committed_report(report):
    text = tables.DOC.read_text(encoding="utf-8")
    assert tables.updated(text, report) == text, "run python docs/thirdparty_tables.py --write"


def test_opacus_bounds_are_the_reports(report):
    opacus = [a for a in report["audits"] if a["kind"] == "opacus"]
    table = tables.opacus_table(report).split("\n")[2:]
    assert len(table) == len(opacus) == 4
    for row, audit in zip(table, opacus):
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[3] == f"{audit['epsilon_lb']:.2f}"  # the white-box one-run view is the best one here
        assert cells[1] == f"{audit['opacus_epsilon']:.3f}"


def test_a_changed_report_changes_the_document(report):
    text = tables.DOC.read_text(encoding="utf-8")
    changed = copy.deepcopy(report)
    opacus = next(a for a in changed["audits"] if a["kind"] == "opacus")
    opacus["epsilon_lb"] = opacus["views"][0]["epsilon_lb"] = opacus["views"][1]["epsilon_lb"] = 0.5
    new = tables.updated(text, changed)
    assert new != text and "| 0.50 | 0.50 |" in new and "| 0.50 | one run" in new


def test_an_audit_without_a_label_is_named(report):
    changed = copy.deepcopy(report)
    changed["audits"][0]["target"] = "a new audit"
    with pytest.raises(KeyError, match="a new audit"):
        tables.audit_table(changed)


@pytest.mark.parametrize("value, text", [(0.0, "0"), (1e-5, "1e−5"), (6.17049020433802e-05, "6.2e−5"), (2.5e-7, "2.5e−7")])
def test_delta_format(value, text):
    assert tables._delta(value) == text


@pytest.mark.parametrize("value, text", [(None, "—"), (float("inf"), "∞"), (1.0, "1"), (0.99987, "0.9999"),
                                         (4.377178, "4.377"), (1.81, "1.810")])
def test_epsilon_format(value, text):
    assert tables._epsilon(value) == text


def test_a_missing_table_is_a_value_error():
    with pytest.raises(ValueError, match="found 0"):
        tables.replace_table("no table here\n", "| target |", "| x |")

