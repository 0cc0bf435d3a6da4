"""The attack registry is filled on import, refuses clashes, and attacks/ depends on mechanisms/ only."""

import ast
import json
import pathlib
import subprocess
import sys

import pytest

from privaudit.attacks import AttackRegistryError, available_attacks, register_attack

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_fresh_interpreter_lists_the_builtins_on_import():
    code = ("import json, sys, privaudit.attacks as a; "
            "print(json.dumps({'names': sorted(a.available_attacks()), "
            "'learners': sorted(m for m in sys.modules if m.startswith('privaudit.learners') "
            "or m.startswith('privaudit.audit'))}))")
    out = json.loads(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout)
    assert {"naive", "split-mle", "split-mle-marginal", "likelihood-ratio", "atom", "rr-label-posterior",
            "dpsgd-label", "discrete-map"} <= set(out["names"])
    assert out["names"] == sorted(available_attacks())
    assert out["learners"] == []                                 # importing attacks pulls in no learner or audit


def test_attacks_import_only_mechanisms_from_privaudit():
    # Every import in attacks/*.py, module level or inside functions.
    bad = []
    for path in sorted((ROOT / "attacks").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
            bad += [f"{path.name}: {n}" for n in names
                    if n.startswith("privaudit.") and not n.startswith(("privaudit.mechanisms", "privaudit.attacks"))]
    assert bad == []


def test_name_clash_is_refused():
    class Toy:
        kind = "distinguisher"

    with pytest.raises(AttackRegistryError, match="already registered"):
        register_attack("naive", Toy)
    with pytest.raises(AttackRegistryError, match="kind"):
        register_attack("toy-without-kind", type("NoKind", (), {}))
