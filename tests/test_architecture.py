"""The layout is the architecture: import graph, dependency directions and dispatch, checked on the source.

Every ``.py`` file of mechanisms/, learners/, attacks/ and audit/ is parsed; every import
statement counts, function-level ones included, relative ones resolved, and importing
``a.b.c`` counts as importing the packages ``a`` and ``a.b`` too (Python runs their
``__init__`` first). On that graph:

* no two modules import each other, directly or through others;
* no two packages do (mechanisms, learners, attacks, the root of audit, and each
  subpackage of audit);
* mechanisms, learners and attacks never import privaudit.audit (each learner family
  owns its release view);
* audit/'s root holds at most :data:`MAX_AUDIT_ROOT_MODULES` modules, the rest sitting
  in subpackages named for their concern;
* audit/ never tests ``isinstance`` (or ``issubclass``) against a concrete mechanism
  class: engines dispatch on what a mechanism declares (its protocols).
"""

from __future__ import annotations

import ast
import inspect
import pathlib
from collections.abc import Iterable

import numpy as np
import pytest
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

import privaudit.mechanisms

ROOT = pathlib.Path(__file__).resolve().parents[1]
#: The code folders, each installed as ``privaudit.<folder>``.
PACKAGES = ("mechanisms", "learners", "attacks", "audit")
#: Folders that never import privaudit.audit.
BELOW_AUDIT = ("mechanisms", "learners", "attacks")
#: audit/'s root keeps the public API and the few modules every concern shares.
MAX_AUDIT_ROOT_MODULES = 10


# --------------------------------------------------------------------------- the graph
def module_files(root: pathlib.Path, packages: Iterable[str]) -> dict[str, pathlib.Path]:
    """Dotted module name (without ``privaudit.``) -> file, for every ``.py`` under ``packages``."""
    modules = {}
    for top in packages:
        for path in sorted((root / top).rglob("*.py")):
            rel = path.relative_to(root)
            if any(part.startswith(".") for part in rel.parts):
                continue
            modules[".".join(rel.with_suffix("").parts).removesuffix(".__init__")] = path
    return modules


def imported_names(name: str, path: pathlib.Path) -> set[str]:
    """Every privaudit module or attribute ``name`` imports, anywhere in the file, relative imports resolved."""
    is_package = path.name == "__init__.py"
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            out |= {a.name.removeprefix("privaudit.") for a in node.names if a.name.startswith("privaudit.")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = name.split(".") if is_package else name.split(".")[:-1]
                if node.level - 1 > len(package) - 1:
                    raise ImportError(f"{path}: relative import beyond the top package")
                base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
            elif node.module and node.module.startswith("privaudit."):
                base = node.module.removeprefix("privaudit.")
            else:
                continue
            out |= {base, *(f"{base}.{a.name}" for a in node.names)}
        elif isinstance(node, ast.Call) and _dynamic_import(node):
            out.add(node.args[0].value.removeprefix("privaudit."))
    return out


def _dynamic_import(node: ast.Call) -> bool:
    """``importlib.import_module("privaudit.…")`` or ``__import__("privaudit.…")`` with a literal name."""
    fn = node.func
    called = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else None
    return (called in ("import_module", "__import__") and bool(node.args)
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
            and node.args[0].value.startswith("privaudit."))


def import_graph(root: pathlib.Path = ROOT, packages: Iterable[str] = PACKAGES) -> dict[str, set[str]]:
    """Module -> the modules it imports (packages included: importing a.b.c runs a and a.b first)."""
    modules = module_files(root, packages)
    graph = {}
    for name, path in modules.items():
        deps = set()
        for target in imported_names(name, path):
            parts = target.split(".")
            for i in range(1, len(parts) + 1):
                dep = ".".join(parts[:i])
                # A module's own packages are already running when it is imported: not an edge.
                if dep in modules and dep != name and not name.startswith(dep + "."):
                    deps.add(dep)
        graph[name] = deps
    return graph


def package_of(module: str, root: pathlib.Path = ROOT) -> str:
    """mechanisms, learners, attacks, audit (its root modules) or audit.<subpackage>."""
    parts = module.split(".")
    if parts[0] == "audit" and len(parts) > 1 and (root / "audit" / parts[1] / "__init__.py").is_file():
        return f"audit.{parts[1]}"
    return parts[0]


def package_graph(graph: dict[str, set[str]], root: pathlib.Path = ROOT) -> dict[str, set[str]]:
    """Package -> the packages its modules import."""
    out: dict[str, set[str]] = {}
    for module, deps in graph.items():
        src = package_of(module, root)
        out.setdefault(src, set()).update(package_of(d, root) for d in deps)
        out[src].discard(src)
    return out


def cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one node (scipy's csgraph)."""
    nodes = sorted(set(graph) | {d for deps in graph.values() for d in deps})
    index = {n: i for i, n in enumerate(nodes)}
    rows = [index[a] for a, deps in graph.items() for _ in deps]
    cols = [index[b] for deps in graph.values() for b in deps]
    adj = csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(nodes), len(nodes)))
    _, labels = connected_components(adj, directed=True, connection="strong")
    comps: dict[int, set[str]] = {}
    for n, lab in zip(nodes, labels):
        comps.setdefault(int(lab), set()).add(n)
    return sorted((c for c in comps.values() if len(c) > 1), key=sorted)


def edges_within(graph: dict[str, set[str]], component: set[str], key=lambda m: m, examples: int = 3) -> list[str]:
    """The edges of ``graph`` between distinct members of ``component`` (after ``key``), a few per pair, for messages."""
    pairs: dict[tuple[str, str], list[str]] = {}
    for a, deps in sorted(graph.items()):
        for b in sorted(deps):
            if key(a) in component and key(b) in component and key(a) != key(b):
                pairs.setdefault((key(a), key(b)), []).append(f"{a} -> {b}")
    return [f"{src} -> {dst} ({len(e)} imports, e.g. {', '.join(e[:examples])})" for (src, dst), e in sorted(pairs.items())]


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    g = import_graph()
    # The kind registry imports its built-in kind modules by name (importlib, names in a tuple).
    from privaudit.audit.kinds import BUILTIN_MODULES

    g["audit.kinds"] |= {f"audit.kinds.{m}" for m in BUILTIN_MODULES}
    return g


# --------------------------------------------------------------------------- the checker checks
def test_the_graph_sees_function_level_relative_and_dynamic_imports(tmp_path):
    pkg = tmp_path / "low"
    (pkg / "sub").mkdir(parents=True)
    (tmp_path / "high").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from .sub import b\n    return b\n")
    (pkg / "sub" / "__init__.py").write_text("from .. import a\n")
    (pkg / "sub" / "b.py").write_text("import importlib\n\ndef g():\n    return importlib.import_module('privaudit.high.c')\n")
    (tmp_path / "high" / "__init__.py").write_text("")
    (tmp_path / "high" / "c.py").write_text("import os\nimport privaudit.low\n")
    g = import_graph(tmp_path, ("low", "high"))
    assert g["low.a"] == {"low.sub", "low.sub.b"}  # function level, relative, its package too
    assert g["low.sub"] == {"low.a"}  # from .. import a, inside a package's __init__
    assert g["low.sub.b"] == {"high", "high.c"}  # a literal importlib.import_module
    assert g["high.c"] == {"low"} and g["low"] == g["high"] == set()
    assert cycles(g) == [{"low.a", "low.sub"}]
    assert package_of("low.sub.b", tmp_path) == "low"
    assert package_graph(g, tmp_path) == {"low": {"high"}, "high": {"low"}}
    assert cycles(package_graph(g, tmp_path)) == [{"high", "low"}]


def test_the_cycle_finder_finds_a_cycle_and_nothing_else():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
    assert cycles({"a": {"b"}, "b": set(), "c": {"b"}}) == []


def test_audit_subpackages_are_packages_of_their_own():
    assert package_of("audit.engines.tradeoff") == "audit.engines"
    assert package_of("audit.results") == "audit"
    assert package_of("mechanisms.external.opendp") == "mechanisms"


# --------------------------------------------------------------------------- the architecture
def test_no_import_cycle_between_modules(graph):
    assert "learners.modulated_view" in graph and "audit.kinds.learner_tradeoff" in graph["audit.kinds"]
    found = cycles(graph)
    assert not found, "import cycles between modules:\n" + "\n".join(
        f"{sorted(c)}: {edges_within(graph, c)}" for c in found)


def test_no_import_cycle_between_packages(graph):
    packages = package_graph(graph)
    assert {"mechanisms", "learners", "attacks", "audit", "audit.engines", "audit.kinds"} <= set(packages)
    found = cycles(packages)
    assert not found, "import cycles between packages:\n" + "\n".join(
        f"{sorted(c)}:\n  " + "\n  ".join(edges_within(graph, c, package_of)) for c in found)


def test_mechanisms_learners_and_attacks_never_import_audit(graph):
    upward = sorted(f"{m} -> {d}" for m, deps in graph.items() for d in deps
                    if m.split(".")[0] in BELOW_AUDIT and d.split(".")[0] == "audit")
    assert not upward, f"imports of privaudit.audit from below it: {upward}"
    # The learners' views are theirs: what the audits once held now lives beside the learners.
    assert {"learners.release_view", "learners.modulated_view", "learners.iwp_view",
            "learners.dpsgd_view"} <= set(graph)


def test_dependency_directions_of_the_architecture(graph):
    # Configuration is parsed without running, rendering or the task machinery (docs/architecture.md).
    assert "audit.kinds" in graph["audit.app.config"]
    assert not {"audit.app.tasks", "audit.app.runner", "audit.reporting.render"} & graph["audit.app.config"]
    assert "audit.reporting.render" not in graph["audit.reporting.figures"]
    # The shared registry sits below attacks/ and audit/: it imports neither, nor the learners.
    assert not {m for m in graph["mechanisms.registry"] if m.startswith(("audit", "attacks", "learners"))}
    # The learner audits reach the learners' views, never the other way round.
    assert "learners.modulated_view" in graph["audit.engines.learner_audits"]
    assert "learners.release_view" in graph["audit.engines.release_views"]


def test_audit_root_holds_few_modules():
    root_modules = sorted(p.name for p in (ROOT / "audit").glob("*.py"))
    assert len(root_modules) <= MAX_AUDIT_ROOT_MODULES, (
        f"audit/ holds {len(root_modules)} modules at its root (at most {MAX_AUDIT_ROOT_MODULES}): {root_modules}")


def concrete_mechanism_classes() -> set[str]:
    """Classes exported by privaudit.mechanisms that are mechanisms (a ``sample``) and not protocols."""
    return {name for name, obj in vars(privaudit.mechanisms).items()
            if inspect.isclass(obj) and not getattr(obj, "_is_protocol", False)
            and callable(getattr(obj, "sample", None))}


def concrete_isinstance_calls(path: pathlib.Path, concrete: set[str]) -> list[str]:
    """``isinstance``/``issubclass`` calls in ``path`` whose classes include a concrete mechanism class.

    Returns ``"line: call"`` for each.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    # Local names bound to a concrete class: from privaudit.mechanisms[.x] import Name [as alias].
    local = {(a.asname or a.name): a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
             and (node.module or "").startswith("privaudit.mechanisms") for a in node.names}
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("isinstance", "issubclass") and len(node.args) == 2):
            continue
        classes = {local.get(sub.id) if isinstance(sub, ast.Name) else sub.attr if isinstance(sub, ast.Attribute)
                   else None for sub in ast.walk(node.args[1])}  # a class, a tuple of classes or A | B
        if classes & concrete:
            found.append((node.lineno, node.col_offset, f"{node.lineno}: {ast.unparse(node)}"))
    return [f for *_, f in sorted(found)]


def test_the_isinstance_finder_sees_aliases_tuples_and_attributes(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("from privaudit.mechanisms import GaussianMechanism as G, PrivacyClaim\n"
                   "import privaudit.mechanisms as pm\n"
                   "def f(m, c):\n"
                   "    return (isinstance(m, (int, G)), isinstance(m, float | pm.LaplaceMechanism),\n"
                   "            isinstance(c, PrivacyClaim), isinstance(m, pm.Mechanism))\n")
    assert concrete_isinstance_calls(src, concrete_mechanism_classes()) == [
        "4: isinstance(m, (int, G))", "4: isinstance(m, float | pm.LaplaceMechanism)"]


def test_audit_never_dispatches_on_a_concrete_mechanism_class():
    concrete = concrete_mechanism_classes()
    assert {"GaussianMechanism", "ModulatedMechanism", "RandomizedResponse"} <= concrete
    assert not {"Mechanism", "PrivacyClaim"} & concrete  # protocols and claims are not mechanisms
    found = [f"{path.relative_to(ROOT)}:{f}" for path in sorted((ROOT / "audit").rglob("*.py"))
             for f in concrete_isinstance_calls(path, concrete)]
    assert not found, "isinstance on concrete mechanism classes in audit/:\n" + "\n".join(found)
