"""The keys reference is generated from the kinds' Field declarations, and docs/cli.md holds it verbatim."""

from __future__ import annotations

from pathlib import Path

import pytest

from privaudit.audit.app import keys_reference
from privaudit.audit.schema.fields import Field
from privaudit.audit.kinds import audit_kinds

DOC = Path(__file__).resolve().parents[1] / "docs" / "cli.md"


def test_docs_hold_the_generated_reference():
    text = DOC.read_text(encoding="utf-8")
    start, end = text.index(keys_reference.BEGIN), text.index(keys_reference.END)
    assert text[start:end + len(keys_reference.END)] + "\n" == keys_reference.markdown_reference(), (
        "docs/cli.md's keys reference is stale: run python3 -m privaudit.audit.app.keys_reference docs/cli.md")


@pytest.mark.parametrize("kind", sorted(audit_kinds()))
def test_every_key_of_every_kind_is_documented(kind):
    fields = keys_reference.entry_fields(audit_kinds()[kind])
    undocumented = [key for key, f in fields.items() if not keys_reference.describe_doc(f)]
    assert not undocumented, f"kind {kind!r}: keys without a meaning: {undocumented}"
    for key in fields:
        assert f"| `{key}` |" in keys_reference.markdown_reference()


def test_a_new_field_changes_the_reference():
    """The block is derived, not stored: a field added to a kind shows up (and so the docs test would fail)."""
    kind = audit_kinds()["tradeoff"]
    before = keys_reference.markdown_reference()
    kind.fields["zz_probe"] = Field("int", 3, low=1, doc="a probe")
    try:
        after = keys_reference.markdown_reference()
    finally:
        del kind.fields["zz_probe"]
    assert "| `zz_probe` | integer | 3 | [1, ∞) | a probe |" in after and "zz_probe" not in before


def test_describe_range_and_default():
    assert keys_reference.describe_range(Field("float", 0.5, low=0.0, high=1.0, closed="neither")) == "(0, 1)"
    assert keys_reference.describe_range(Field("int", 1, low=1)) == "[1, ∞)"
    assert keys_reference.describe_range(Field("str", "a", choices=("a", "b"))) == '"a", "b"'
    assert keys_reference.describe_default(Field("bool", False)) == "false"
    assert keys_reference.describe_default(Field("str")) == "required"
    assert keys_reference.describe_default(Field("array", None)) == "unset"


def test_replace_block_refuses_a_document_without_markers():
    with pytest.raises(ValueError, match="generated block"):
        keys_reference.replace_block("no markers here", "x")


def test_text_reference_lists_each_key_of_the_kind():
    text = keys_reference.text_reference(["tradeoff"])
    for key in audit_kinds()["tradeoff"].fields:
        assert f"\n  {key} (" in text
    assert "calibration" not in text.split("\n", 1)[0]


def test_cli_lists_the_keys_of_a_kind(capsys):
    from privaudit.audit.app.cli import main

    assert main(["list", "kinds", "--keys", "tradeoff"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("tradeoff: ") and "\ncalibration" not in out
    for key in audit_kinds()["tradeoff"].fields:
        assert f"\n  {key} (" in out
    assert main(["list", "kinds", "--keys", "no-such-kind"]) == 2
    assert "unknown kind 'no-such-kind'" in capsys.readouterr().err
    assert main(["list", "presets", "--keys"]) == 2
