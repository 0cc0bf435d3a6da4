"""One Registry class for kinds, components and attackers: one clash rule, and broken plugins isolated.

A clash raises naming both sources (``force=True`` replaces); entry points are read on the
first lookup that needs them; an entry point that cannot be used (a malformed name, a
module that fails to import, a missing attribute, the wrong kind of object, a clash) is
named in a PluginWarning and skipped, so ``privaudit list`` and every run keep working.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import textwrap

import pytest

from privaudit.attacks import registry as attack_registry
from privaudit.attacks import AttackRegistryError, get_attack, register_attack
from privaudit.audit import kinds
from privaudit.audit.schema import components
from privaudit.audit.schema.fields import ConfigValueError
from privaudit.mechanisms import GaussianMechanism, LaplaceMechanism
from privaudit.mechanisms.registry import PluginWarning, Registry, RegistryError


# --------------------------------------------------------------------------- the clash rule
def test_a_clash_names_both_sources_and_force_replaces():
    reg = Registry("widget")
    reg.register("w", LaplaceMechanism)
    reg.register("w", LaplaceMechanism)  # the same object again: not a clash
    with pytest.raises(RegistryError) as info:
        reg.register("w", GaussianMechanism)
    msg = str(info.value)
    assert "built-in privaudit.mechanisms.laplace:LaplaceMechanism" in msg
    assert "built-in privaudit.mechanisms.gaussian:GaussianMechanism" in msg and "force=True" in msg
    assert reg.get("w") is LaplaceMechanism
    reg.register("w", GaussianMechanism, source="entry point mypkg:Thing", force=True)
    assert reg.get("w") is GaussianMechanism and reg.source("w") == "entry point mypkg:Thing"


@pytest.mark.parametrize("name", ["", "a:b", None, 3])
def test_malformed_names_are_refused(name):
    with pytest.raises(RegistryError, match="non-empty strings without ':'"):
        Registry("widget").register(name, object())


def test_unknown_names_get_a_hint_and_the_list():
    reg = Registry("widget")
    reg.register("laplace", LaplaceMechanism)
    with pytest.raises(RegistryError, match=r"unknown widget 'laplce'; did you mean 'laplace'\?; registered: laplace"):
        reg.get("laplce")
    assert reg.find("laplce") is None
    with pytest.raises(RegistryError, match=r"unknown widget \['laplace'\]"):
        reg.get(["laplace"])  # not a TypeError about hashing


def test_the_three_registries_share_the_rule():
    class Toy:
        kind = "distinguisher"

    with pytest.raises(AttackRegistryError) as info:
        register_attack("atom", Toy)
    assert "built-in privaudit.attacks.distinguishers:AtomAttack" in str(info.value)
    assert "test_plugins:test_the_three_registries_share_the_rule.<locals>.Toy" in str(info.value)
    with pytest.raises(ConfigValueError, match="built-in privaudit.mechanisms:GaussianMechanism"):
        components.MECHANISMS.register("gaussian", "mypkg:Thing")
    with pytest.raises(ConfigValueError, match="built-in privaudit.audit.kinds.tradeoff:run"):
        kinds.register_kind(kinds.AuditKind("tradeoff", lambda p, rng: None, {}))
    for registry in (attack_registry.ATTACKS, kinds.KINDS, components.MECHANISMS.registry):
        assert isinstance(registry, Registry)


# --------------------------------------------------------------------------- plugins
class _EP:
    """An entry point of a fake installed distribution (importlib.metadata.EntryPoint has the same surface)."""

    def __init__(self, name: str, value: str, group: str) -> None:
        self.name, self.value, self.group, self.dist = name, value, group, None

    def load(self):
        return importlib.metadata.EntryPoint(self.name, self.value, self.group).load()


@pytest.fixture()
def plugin_module(tmp_path, monkeypatch):
    """Two importable plugin modules: ``good_plugin`` (a kind, an attacker, a mechanism) and ``boom_plugin``."""
    (tmp_path / "good_plugin.py").write_text(textwrap.dedent("""
        from privaudit.audit.kinds import AuditKind

        class Attack:
            kind = "distinguisher"

        class Mechanism:
            pass

        KIND = AuditKind("good-kind", lambda params, rng: None, {})
        NOT_A_KIND = object()
    """))
    (tmp_path / "boom_plugin.py").write_text("raise RuntimeError('this plugin is broken')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    for mod in ("good_plugin", "boom_plugin"):
        sys.modules.pop(mod, None)


CASES = {
    # registry, group, a good entry point's (name, value), a wrong-object one
    "attacks": (attack_registry.ATTACKS, "privaudit.attacks", ("good", "good_plugin:Attack"), "good_plugin:Mechanism"),
    "kinds": (kinds.KINDS, "privaudit.audit_kinds", ("good-kind", "good_plugin:KIND"), "good_plugin:NOT_A_KIND"),
    "mechanisms": (components.MECHANISMS.registry, "privaudit.mechanisms", ("good", "good_plugin:Mechanism"), None),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_broken_entry_points_are_named_and_skipped(case, plugin_module, monkeypatch):
    registry, group, (good, good_ref), wrong_ref = CASES[case]
    bad = [_EP("bad:name", "good_plugin:Attack", group), _EP("boom", "boom_plugin:X", group),
           _EP("missing", "good_plugin:Nothing", group), _EP("nomodule", "no_such_module_xyz:X", group)]
    if wrong_ref is not None:
        bad.append(_EP("wrong", wrong_ref, group))
    eps = [*bad, _EP(good, good_ref, group)]
    calls = []
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: calls.append(group) or
                        [e for e in eps if e.group == group])
    with registry.isolated():
        with pytest.warns(PluginWarning) as record:
            names = registry.names()
        assert good in names and not {e.name for e in bad} & set(names)
        messages = [str(w.message) for w in record]
        assert len(messages) == len(bad)
        for ep, msg in zip(bad, messages):
            assert repr(ep.name) in msg and ep.value in msg and group in msg
        assert "RuntimeError: this plugin is broken" in messages[1]
        registry.names()
        assert calls == [group]  # read once
    monkeypatch.undo()
    assert good not in registry.names()  # isolated() restored the registry


def test_an_entry_point_clashing_with_a_builtin_is_skipped_naming_both(plugin_module, monkeypatch):
    ep = _EP("atom", "good_plugin:Attack", "privaudit.attacks")
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: [ep] if group == ep.group else [])
    with attack_registry.ATTACKS.isolated():
        with pytest.warns(PluginWarning) as record:
            assert "atom" in attack_registry.available_attacks()
        msg = str(record[0].message)
        assert "built-in privaudit.attacks.distinguishers:AtomAttack" in msg and "entry point good_plugin:Attack" in msg
        assert get_attack("atom").__name__ == "AtomAttack"


def test_lookups_of_builtins_never_read_entry_points(monkeypatch):
    def boom(group):
        raise AssertionError(f"entry points of {group} read")

    monkeypatch.setattr(importlib.metadata, "entry_points", boom)
    with attack_registry.ATTACKS.isolated(), kinds.KINDS.isolated(), components.MECHANISMS.registry.isolated():
        assert get_attack("atom").__name__ == "AtomAttack"
        assert kinds.get_kind("tradeoff").name == "tradeoff"
        assert "gaussian" in components.MECHANISMS


# --------------------------------------------------------------------------- an installed broken distribution
ENTRY_POINTS_TXT = """\
[privaudit.attacks]
bad:name = no_such_module_xyz:Attack
boom = boom_plugin:Attack

[privaudit.audit_kinds]
bad:name = no_such_module_xyz:KIND
boom = boom_plugin:KIND

[privaudit.mechanisms]
bad:name = no_such_module_xyz:Mechanism
boom = boom_plugin:Mechanism

[privaudit.learners]
bad:name = no_such_module_xyz:Learner
"""


@pytest.fixture()
def broken_distribution(tmp_path):
    site = tmp_path / "site"
    info = site / "brokenplugin-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: brokenplugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS_TXT)
    (site / "boom_plugin.py").write_text("raise RuntimeError('this plugin is broken')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    return env


def _cli(env, *args, cwd):
    return subprocess.run([sys.executable, "-m", "privaudit.audit.app.cli", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_privaudit_list_and_runs_survive_a_broken_installed_plugin(broken_distribution, tmp_path):
    listed = _cli(broken_distribution, "list", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "Traceback" not in listed.stderr
    for group in ("privaudit.attacks", "privaudit.audit_kinds", "privaudit.mechanisms", "privaudit.learners"):
        assert f"plugin 'bad:name' (entry point no_such_module_xyz:" in listed.stderr
        assert f"distribution brokenplugin 1.0), entry-point group {group})" in listed.stderr
    assert "RuntimeError: this plugin is broken" in listed.stderr
    assert "atom" in listed.stdout and "gaussian" in listed.stdout and "tradeoff" in listed.stdout

    checked = _cli(broken_distribution, "run", "tradeoff", "--check", "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    assert "configuration valid" in checked.stdout and "Traceback" not in checked.stderr

    # a configuration that names the broken plugin is refused (exit 2), and the warning says why
    conf = tmp_path / "uses_boom.toml"
    conf.write_text('[[audits]]\nkind = "calibration"\nmechanism = { name = "boom" }\n')
    refused = _cli(broken_distribution, "run", str(conf), "--check", "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "audits[0].mechanism.name = 'boom'" in refused.stderr
    assert "skipped mechanism plugin 'boom'" in refused.stderr
