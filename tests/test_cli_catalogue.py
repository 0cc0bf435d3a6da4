"""`privaudit list` and `--help` import no heavy library, and the listing's snapshot matches the registries.

What is tested is what gets imported (``sys.modules`` in a fresh interpreter), never wall-clock
time: benchmarks/bench_cli.py measures the time.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from privaudit.audit.app import catalogue
from privaudit.audit.app.catalogue_snapshot import BUILTINS

#: Libraries that cost seconds to import and that listing or help never needs.
HEAVY = ("torch", "sklearn", "matplotlib", "dp_accounting", "scipy.stats", "pandas", "opacus")

_PROBE = """
import contextlib, io, json, sys
from privaudit.audit.app.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        code = main(sys.argv[1:])
    except SystemExit as exc:  # --help exits through argparse
        code = exc.code
print(json.dumps({"code": code, "stdout": out.getvalue(), "modules": sorted(sys.modules)}))
"""


def _probe(*argv: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("argv", [["list"], ["list", "--json"], ["list", "attackers"], ["--help"], ["list", "--help"]])
def test_list_and_help_import_no_heavy_library(argv):
    probe = _probe(*argv)
    assert probe["code"] == 0
    assert probe["stdout"].strip()
    imported = set(probe["modules"])
    assert [m for m in HEAVY if m in imported] == []


def test_the_probe_would_see_a_heavy_import():
    # The probe itself is able to fail: a command that needs scikit-learn shows it in sys.modules.
    probe = _probe("run", "tradeoff", "--check", "--out", "/nonexistent-dir/for/the/probe")
    assert "sklearn" in probe["modules"]


def test_the_snapshot_matches_the_registries():
    exact = catalogue.builtin_listing()
    assert exact == BUILTINS, ("audit/app/catalogue_snapshot.py is stale: "
                               "run `python -m privaudit.audit.app.catalogue --write`")


def test_listing_equals_the_exact_listing():
    assert catalogue.listing() == catalogue.exact_listing()
    assert list(catalogue.listing()) == list(catalogue.SECTIONS)
    assert catalogue.listing("kinds") == {"kinds": BUILTINS["kinds"]}


def test_entry_point_groups_are_the_registries_groups():
    from privaudit.attacks import registry as attack_registry
    from privaudit.audit import kinds
    from privaudit.audit.schema import components

    assert catalogue.ENTRY_POINT_GROUPS == {
        "kinds": (kinds.ENTRY_POINT_GROUP,), "mechanisms": (components.MECHANISMS.group,),
        "learners": (components.LEARNERS.group,), "attackers": (attack_registry.ENTRY_POINT_GROUP,),
    }


def test_a_section_with_plugins_comes_from_the_registry(monkeypatch):
    from privaudit.attacks import registry as attack_registry

    class PluginAttack:
        """A stand-in for an attacker an installed plugin registers."""

        kind = "distinguisher"

    attack_registry.register_attack("plugin-stand-in", PluginAttack)
    try:
        assert "plugin-stand-in" not in catalogue.listing("attackers")["attackers"]  # the snapshot has no plugins
        monkeypatch.setattr(catalogue, "plugin_sections", lambda: {"attackers"})
        listed = catalogue.listing("attackers")["attackers"]
        assert listed["plugin-stand-in"] == "distinguisher: A stand-in for an attacker an installed plugin registers."
        assert catalogue.listing("kinds")["kinds"] == BUILTINS["kinds"]
    finally:
        attack_registry.ATTACKS.unregister("plugin-stand-in")


def test_snapshot_writing_refuses_installed_plugins(monkeypatch):
    monkeypatch.setattr(catalogue, "plugin_sections", lambda: {"mechanisms"})
    with pytest.raises(RuntimeError, match="installed plugins add to mechanisms"):
        catalogue.builtin_listing()


def test_snapshot_text_round_trips():
    namespace: dict = {}
    exec(catalogue.snapshot_text(BUILTINS), namespace)  # noqa: S102 - our own generated source
    assert namespace["BUILTINS"] == BUILTINS


def test_an_unknown_section_is_a_value_error():
    with pytest.raises(ValueError, match="what='mechanism'"):
        catalogue.listing("mechanism")
