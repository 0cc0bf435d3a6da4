"""A kind declares which kind renders its result type; the order of registration (and of BUILTIN_MODULES) decides nothing."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import pytest

from privaudit.audit import kinds
from privaudit.audit.kinds import AuditKind, renderer
from privaudit.audit.results import AuditResult
from privaudit.audit.schema.fields import ConfigValueError
from privaudit.audit.verdicts import Verdict


def _run(params, rng):  # pragma: no cover - never run here
    return None


def _mapping() -> dict:
    out = {}
    for kind in kinds.KINDS.items().values():
        if kind.result_kind is not None:
            out[kind.result_kind] = renderer(kind.result_kind).name
    return out


def test_the_builtin_renderers():
    m = _mapping()
    assert m["tradeoff"] == "tradeoff" and m["reconstruction"] == "reconstruction"
    assert m["one-run"] == "one-run-label"
    assert all(m[r] == r for r in m if r != "one-run")


def test_reversing_the_registration_order_changes_no_renderer():
    before = _mapping()
    with kinds.KINDS.isolated() as reg:
        everything = list(reg.items().values())
        for kind in everything:
            reg.unregister(kind.name)
        for kind in reversed(everything):
            kinds.register_kind(kind)
        assert [k.name for k in reg.items().values()] == [k.name for k in reversed(everything)]
        assert _mapping() == before


@dataclasses.dataclass(frozen=True)
class ToyAudit(AuditResult):
    kind: ClassVar[str] = "toy-result"
    target: str
    verdict: Verdict


def test_primary_declares_the_renderer_whatever_the_order():
    first = AuditKind("toy-a", _run, {}, result=ToyAudit)
    second = AuditKind("toy-b", _run, {}, result=ToyAudit, primary=True)
    for order in ((first, second), (second, first)):
        with kinds.KINDS.isolated():
            for kind in order:
                kinds.register_kind(kind)
            assert renderer("toy-result") is second


def test_ambiguous_producers_are_named():
    with kinds.KINDS.isolated():
        kinds.register_kind(AuditKind("toy-a", _run, {}, result=ToyAudit))
        assert renderer("toy-result").name == "toy-a"  # the only producer
        kinds.register_kind(AuditKind("toy-b", _run, {}, result=ToyAudit))
        with pytest.raises(ConfigValueError, match="'toy-a', 'toy-b'.*declare primary=True"):
            renderer("toy-result")
        kinds.register_kind(AuditKind("toy-c", _run, {}, result=ToyAudit, primary=True))
        kinds.register_kind(AuditKind("toy-d", _run, {}, result=ToyAudit, primary=True))
        with pytest.raises(ConfigValueError, match="at most one"):
            renderer("toy-result")


def test_a_plugin_producing_a_builtin_result_does_not_take_over():
    from privaudit.audit.engines.tradeoff import TradeoffAudit

    with kinds.KINDS.isolated() as reg:
        builtin = reg.get("tradeoff")
        reg.unregister("tradeoff")
        kinds.register_kind(AuditKind("my-tradeoff", _run, {}, result=TradeoffAudit))
        kinds.register_kind(builtin)  # registered after the plugin
        assert renderer("tradeoff") is builtin
        kinds.register_kind(AuditKind("never", _run, {}, result=TradeoffAudit, primary=False))
        assert renderer("tradeoff") is builtin
