"""Every public function and class of the four packages is documented and typed (issue 22).

An AST scan (nothing is imported) of mechanisms/, attacks/, learners/ and audit/. A public
function is a module-level function, or a method of a public class, whose name does not start
with ``_`` (so ``__init__`` and other dunders are left out). Each one that takes arguments besides
``self``/``cls`` must have a numpydoc ``Parameters`` section naming every argument (numpydoc's
``x, x_prime : ...`` groups count for each name), and every function must annotate each argument,
``*args``/``**kwargs`` included, and its return value. Every public class needs a docstring.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("mechanisms", "attacks", "learners", "audit")

#: A numpydoc section header: its title, then a line of dashes.
_SECTION = re.compile(r"^([A-Z][A-Za-z ]+)\n-{3,}\s*$", re.M)


def _sections(doc: str) -> dict[str, str]:
    """The numpydoc sections of a (dedented) docstring, by title."""
    heads = list(_SECTION.finditer(doc))
    return {m.group(1): doc[m.end():heads[i + 1].start() if i + 1 < len(heads) else len(doc)]
            for i, m in enumerate(heads)}


def _documented_names(section: str) -> set[str]:
    """Names a Parameters section documents: the text before `` : `` of each unindented line."""
    names = set()
    for line in section.splitlines():
        if line and not line[0].isspace():
            head = line.split(" : ")[0].rstrip(" :")
            names.update(part.strip().lstrip("*") for part in head.split(","))
    return names


def _public_items(tree: ast.Module):
    """(qualified name, node) of every public function, public method of a public class, and public class."""
    def visit(body, prefix):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
                yield prefix + node.name, node
            elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                yield prefix + node.name, node
                yield from visit(node.body, f"{prefix}{node.name}.")

    yield from visit(tree.body, "")


def _problems(node: ast.AST) -> list[str]:
    doc = ast.get_docstring(node) or ""
    if isinstance(node, ast.ClassDef):
        return [] if doc.strip() else ["no docstring"]
    out = []
    a = node.args
    named = [x for x in a.posonlyargs + a.args + a.kwonlyargs if x.arg not in ("self", "cls")]
    if named:
        params = _sections(doc).get("Parameters")
        if params is None:
            out.append("no numpydoc Parameters section")
        else:
            missing = [x.arg for x in named if x.arg not in _documented_names(params)]
            if missing:
                out.append(f"Parameters does not name {missing}")
    variadic = [x for x in (a.vararg, a.kwarg) if x is not None]
    untyped = [x.arg for x in named + variadic if x.annotation is None]
    if untyped:
        out.append(f"no type hint on {untyped}")
    if node.returns is None:
        out.append("no return type hint")
    return out


def _report(package: str) -> list[str]:
    lines = []
    for path in sorted((ROOT / package).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for name, node in _public_items(tree):
            for problem in _problems(node):
                lines.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}: {problem}")
    return lines


@pytest.mark.parametrize("package", PACKAGES)
def test_public_api_is_documented_and_typed(package: str) -> None:
    problems = _report(package)
    assert not problems, f"{len(problems)} undocumented or untyped public items in {package}/:\n" + "\n".join(problems)


def test_the_check_catches_what_it_claims() -> None:
    """The scan itself: a function without a Parameters entry, a hint or a docstring is reported."""
    tree = ast.parse(
        "class Pub:\n"
        '    """A documented class."""\n'
        "    def ok(self, x: int) -> int:\n"
        '        """Doc.\n\n        Parameters\n        ----------\n        x : int\n            X.\n        """\n'
        "    def _private(self, y): ...\n"
        "def half(x: int, y) -> int:\n"
        '    """Doc.\n\n    Parameters\n    ----------\n    x, z : int\n        X.\n    """\n'
        "def bare(*args):\n    pass\n"
        "class NoDoc:\n    pass\n"
    )
    found = {name: _problems(node) for name, node in _public_items(tree)}
    assert found["Pub"] == [] and found["Pub.ok"] == []
    assert "Pub._private" not in found
    assert found["half"] == ["Parameters does not name ['y']", "no type hint on ['y']"]
    assert found["bare"] == ["no type hint on ['args']", "no return type hint"]
    assert found["NoDoc"] == ["no docstring"]
