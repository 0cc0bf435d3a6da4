"""The layout is the architecture: import graph, dependency directions and dispatch, checked on the source.

Every ``.py`` file of mechanisms/, learners/, attacks/ and audit/ is parsed; every import
statement counts, function-level ones included, relative ones resolved, and importing
``a.b.c`` counts as importing the packages ``a`` and ``a.b`` too (Python runs their
``__init__`` first). A module's own packages are already running when it is imported, so
they are no edge when only implied; an *explicit* import of one (``import privaudit.audit``,
``from privaudit.audit import name`` where ``name`` is not a submodule) is: it reads the
package's namespace, which for a lazy facade imports everything. Dynamic imports
(``importlib.import_module``, ``__import__``) count too: a literal name as it is, a name
built at run time resolved to the names it can take (module-level constants, ``__name__``,
loop variables over constant tuples) or, when a part is unknown, to every module under its
literal prefix; one with no privaudit prefix at all is listed in
:data:`UNRESOLVED_DYNAMIC_IMPORTS`. On that graph:

* no two modules import each other, directly or through others;
* no two packages do (mechanisms, learners, attacks, the root of audit, each subpackage
  of audit, and audit's ``__init__``: the public API, a node of its own above them all);
* no module imports that public API package (results draw themselves through a hook);
* mechanisms, learners and attacks never import privaudit.audit (each learner family
  owns its release view);
* audit/'s root holds at most :data:`MAX_AUDIT_ROOT_MODULES` modules, the rest sitting
  in subpackages named for their concern.

And on the source of every package:

* audit/ never tests ``isinstance`` (or ``issubclass``) against a concrete mechanism
  class, and attacks/ and learners/ no more than they do today;
* no module tests ``isinstance`` against a concrete Neighbourhood, Domain, Prior or
  mechanism class outside the module that defines it, beyond the sites of today;
* no private name (``_name``) is imported from another package, beyond the sites of today;
* the release protocols ``IsotropicGaussianRelease``/``ModulatedRelease`` are switched on
  (``isinstance``) at no more sites than today, the target being
  :data:`TARGET_RELEASE_SWITCHES`.

The last four are ratchets: each compares the sites it finds with an explicit allowlist of
the sites that existed when it was written. A new site fails the test (dispatch on what an
object declares, its Protocols, instead); an allowlisted site that no longer exists fails
it too, asking for its entry to be removed, so the lists only shrink. A site is named
``path::function: call`` (no line number, so that edits elsewhere in a file do not move it).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import itertools
import pathlib
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping

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
#: The package whose ``__init__`` is the public API, re-exporting (lazily) names of every
#: subpackage; in the package graph it is a node of its own, :data:`API_NODE`, above them all.
API_PACKAGE = "audit"
API_NODE = "audit.__init__"
#: At most this many isinstance switches over the release protocols (issue 34).
TARGET_RELEASE_SWITCHES = 4
#: The release protocols whose switches are counted.
RELEASE_PROTOCOLS = ("IsotropicGaussianRelease", "ModulatedRelease")


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


def _parse(path: pathlib.Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _package_parts(name: str, path: pathlib.Path) -> list[str]:
    """The package a module's relative imports start from (the module itself for an ``__init__``)."""
    return name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]


def _from_base(node: ast.ImportFrom, name: str, path: pathlib.Path) -> str | None:
    """The privaudit module a ``from … import`` reads from (without ``privaudit.``), None for another library."""
    if node.level:
        package = _package_parts(name, path)
        if node.level - 1 > len(package) - 1:
            raise ImportError(f"{path}: relative import beyond the top package")
        return ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
    if node.module and node.module.startswith("privaudit."):
        return node.module.removeprefix("privaudit.")
    return None


def _scoped(tree: ast.Module, kinds: type | tuple[type, ...]) -> Iterator[tuple[str, ast.AST]]:
    """Every node of ``kinds`` with the qualified name of the function or class around it (``<module>`` at the top)."""
    def visit(node: ast.AST, scope: tuple[str, ...]) -> Iterator[tuple[str, ast.AST]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, kinds):
                yield ".".join(scope) or "<module>", child
            named = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            yield from visit(child, (*scope, child.name) if named else scope)
    yield from visit(tree, ())


def _string_constants(tree: ast.Module) -> dict[str, set[str]]:
    """Names whose string values are known: module-level constants and loop variables over them.

    A module-level ``NAME = "s"``, a tuple, list or set of strings, or a dict whose values are
    strings (``NAME[key]`` then takes any value); a ``for VAR in NAME`` (a loop or a
    comprehension, anywhere) binds ``VAR`` to the values of ``NAME``.
    """
    known: dict[str, set[str]] = {}

    def strings(value: ast.expr) -> set[str] | None:
        items = (value.values if isinstance(value, ast.Dict) else value.elts
                 if isinstance(value, ast.Tuple | ast.List | ast.Set) else [value])
        if items and all(isinstance(i, ast.Constant) and isinstance(i.value, str) for i in items):
            return {i.value for i in items}
        return None

    for node in tree.body:
        target = (node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1
                  else node.target if isinstance(node, ast.AnnAssign) and node.value is not None else None)
        if isinstance(target, ast.Name) and (values := strings(node.value)) is not None:
            known[target.id] = values
    for node in ast.walk(tree):
        if (isinstance(node, ast.For | ast.comprehension) and isinstance(node.target, ast.Name)
                and isinstance(node.iter, ast.Name) and node.iter.id in known):
            known[node.target.id] = known[node.iter.id]
    return known


def _strings(node: ast.expr | None, known: Mapping[str, set[str]], own: Mapping[str, str],
             limit: int = 1000) -> set[tuple[str, bool]] | None:
    """The strings ``node`` can evaluate to, as ``(text, complete)``; an incomplete one is a literal prefix.

    None when not even a prefix is known. ``own`` gives ``__name__`` and ``__package__``.
    """
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {(node.value, True)}
    if isinstance(node, ast.Name) and node.id in own:
        return {(own[node.id], True)}
    if isinstance(node, ast.Name | ast.Subscript):
        name = node.id if isinstance(node, ast.Name) else getattr(node.value, "id", None)
        return {(v, True) for v in known[name]} if name in known else None
    if isinstance(node, ast.JoinedStr) or isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        parts = node.values if isinstance(node, ast.JoinedStr) else [node.left, node.right]
        out = {("", True)}
        for part in parts:
            sub = _strings(part.value if isinstance(part, ast.FormattedValue) else part, known, own, limit)
            if sub is None:
                return {(text, False) for text, complete in out} if out else None
            out = {(a + b, ca and cb) if ca else (a, False) for (a, ca), (b, cb) in itertools.product(out, sub)}
            if len(out) > limit:
                return None
        return out
    return None


def _called(node: ast.Call) -> str | None:
    fn = node.func
    return fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else None


def _dynamic_import_call(node: ast.Call) -> bool:
    """``importlib.import_module(…)``, ``import_module(…)`` or ``__import__(…)``."""
    return _called(node) in ("import_module", "__import__") and bool(node.args)


def dynamic_targets(node: ast.Call, name: str, path: pathlib.Path,
                    known: Mapping[str, set[str]]) -> set[str] | None:
    """The module names (with ``privaudit.``) a dynamic import can load; None when they cannot be bounded.

    A name with an unknown part is its literal prefix followed by ``*`` (any module under
    it); a relative name is resolved against the ``package`` argument.
    """
    package = ".".join(["privaudit", *_package_parts(name, path)])
    own = {"__name__": f"privaudit.{name}", "__package__": package}
    names = _strings(node.args[0], known, own)
    if names is None:
        return None
    # import_module(name, package); __import__'s second argument is globals (its relative names stay unresolved).
    anchor = None if _called(node) == "__import__" else node.args[1] if len(node.args) > 1 else next(
        (k.value for k in node.keywords if k.arg == "package"), None)
    anchors = _strings(anchor, known, own) if anchor is not None else None
    out = set()
    for text, complete in names:
        if text.startswith("."):
            if not anchors or not all(c for _, c in anchors):
                return None
            level = len(text) - len(text.lstrip("."))
            rest = text[level:]
            resolved = set()
            for anchor, _ in anchors:
                parts = anchor.split(".")
                if level - 1 > len(parts) - 1:
                    return None
                base = ".".join(parts[: len(parts) - level + 1])
                resolved.add(f"{base}.{rest}" if rest or not complete else base)
        else:
            resolved = {text}
        for full in resolved:
            if complete:
                out.add(full)
            elif full.startswith("privaudit."):
                out.add(full + "*")
            else:
                return None  # no privaudit prefix: it may load anything
    return out


def imported_names(name: str, path: pathlib.Path) -> set[str]:
    """Every privaudit module or attribute ``name`` imports, anywhere in the file, relative imports resolved.

    ``from M import a`` gives ``M.a`` (``M`` itself is implied: :func:`import_graph` counts
    it only when ``a`` is not a submodule); ``from M import *`` and ``import M`` give ``M``.
    A dynamic import gives what :func:`dynamic_targets` resolves (``M.*``: any module under ``M``).
    """
    tree = _parse(path)
    known = _string_constants(tree)
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.removeprefix("privaudit.") for a in node.names if a.name.startswith("privaudit.")}
        elif isinstance(node, ast.ImportFrom):
            base = _from_base(node, name, path)
            if base is not None:
                out |= {base if a.name == "*" else f"{base}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Call) and _dynamic_import_call(node):
            out |= {t.removeprefix("privaudit.") for t in dynamic_targets(node, name, path, known) or ()
                    if t.startswith("privaudit.")}
    return out


def unresolved_dynamic_imports(root: pathlib.Path = ROOT, packages: Iterable[str] = PACKAGES) -> list[str]:
    """``path::function: call`` of every dynamic import whose module :func:`dynamic_targets` cannot bound."""
    found = []
    for name, path in module_files(root, packages).items():
        tree = _parse(path)
        known = _string_constants(tree)
        found += [f"{path.relative_to(root).as_posix()}::{scope}: {ast.unparse(call)}"
                  for scope, call in _scoped(tree, ast.Call)
                  if _dynamic_import_call(call) and dynamic_targets(call, name, path, known) is None]
    return sorted(found)


def _edges(target: str, name: str, modules: Mapping[str, pathlib.Path]) -> set[str]:
    """The modules ``name`` runs by importing ``target`` (see :func:`imported_names`)."""
    if target.endswith("*"):
        return {d for m in modules if m.startswith(target[:-1]) and m != name for d in _edges(m, name, modules)}
    parts = target.split(".")
    known = [p for p in (".".join(parts[:i]) for i in range(1, len(parts) + 1)) if p in modules]
    if not known:
        return set()
    # The packages above what is imported run first; the module's own are already running (no edge)
    # unless imported explicitly (their namespace read: the innermost known name is what is imported).
    deps = {p for p in known[:-1] if p != name and not name.startswith(p + ".")}
    return deps | ({known[-1]} - {name})


def import_graph(root: pathlib.Path = ROOT, packages: Iterable[str] = PACKAGES) -> dict[str, set[str]]:
    """Module -> the modules it imports (packages included: importing a.b.c runs a and a.b first)."""
    modules = module_files(root, packages)
    return {name: {d for target in imported_names(name, path) for d in _edges(target, name, modules)}
            for name, path in modules.items()}


def package_of(module: str, root: pathlib.Path = ROOT) -> str:
    """mechanisms, learners, attacks, audit (its root modules), audit.<subpackage> or audit's ``__init__``."""
    if module == API_PACKAGE:
        return API_NODE
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




# --------------------------------------------------------------------------- dispatch and private names
def _site(root: pathlib.Path, path: pathlib.Path, scope: str, text: str) -> str:
    return f"{path.relative_to(root).as_posix()}::{scope}: {text}"


def class_tests(classes: Mapping[str, str], root: pathlib.Path = ROOT,
                packages: Iterable[str] = PACKAGES) -> list[str]:
    """``isinstance``/``issubclass`` calls whose classes include one of ``classes``, as ``path::function: call``.

    Parameters
    ----------
    classes : mapping
        Class name -> the module defining it (dotted, without ``privaudit.``); that module's
        own tests of its classes are not counted (a family may test its own members).
    root, packages
        Where to look.

    A class is recognised through an import from privaudit (aliases included), a class of
    the file itself, or an attribute (``pm.LaplaceMechanism``), alone, in a tuple or in ``A | B``.
    """
    found = []
    for name, path in module_files(root, packages).items():
        tree = _parse(path)
        local = {n.name: n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and _from_base(node, name, path) is not None:
                local |= {(a.asname or a.name): a.name for a in node.names}
        for scope, call in _scoped(tree, ast.Call):
            if not (isinstance(call.func, ast.Name) and call.func.id in ("isinstance", "issubclass")
                    and len(call.args) == 2):
                continue
            named = {local.get(sub.id) if isinstance(sub, ast.Name) else sub.attr
                     if isinstance(sub, ast.Attribute) else None for sub in ast.walk(call.args[1])}
            if any(classes[c] != name for c in named & set(classes)):
                found.append(_site(root, path, scope, ast.unparse(call)))
    return sorted(found)


def private_imports(root: pathlib.Path = ROOT, packages: Iterable[str] = PACKAGES) -> list[str]:
    """Private names (``_name``, a module or an attribute) imported from another package, as ``path::function: name``.

    Packages are those of :func:`package_of` (each subpackage of audit/ is one).
    """
    def private(dotted: str) -> bool:
        return any(p.startswith("_") and not p.endswith("__") for p in dotted.split("."))

    found = []
    for name, path in module_files(root, packages).items():
        for scope, node in _scoped(_parse(path), (ast.Import, ast.ImportFrom)):
            if isinstance(node, ast.Import):
                targets = [(a.name.removeprefix("privaudit."), a.name.removeprefix("privaudit."))
                           for a in node.names if a.name.startswith("privaudit.")]
            else:
                base = _from_base(node, name, path)
                targets = [] if base is None else [(base, f"{base}.{a.name}") for a in node.names]
            found += [_site(root, path, scope, dotted) for source, dotted in targets
                      if private(dotted) and package_of(source, root) != package_of(name, root)]
    return sorted(found)


def ratchet(found: Iterable[str], allowed: Iterable[str], what: str, allowlist: str, advice: str) -> str:
    """What differs between the sites found and an allowlist (as multisets); ``""`` when nothing does.

    Parameters
    ----------
    found, allowed : iterable of str
        The sites (``path::function: text``) found in the code and listed in the allowlist.
    what : str
        What a site is, for the message.
    allowlist : str
        The allowlist's name in this file.
    advice : str
        What to do instead of adding a site.
    """
    found, allowed = Counter(found), Counter(allowed)
    new, gone = sorted((found - allowed).elements()), sorted((allowed - found).elements())
    lines = []
    if new:
        lines += [f"{len(new)} new {what} (not in {allowlist}); {advice}:", *(f"  {s}" for s in new)]
    if gone:
        lines += [f"{len(gone)} {what} of {allowlist} no longer found: remove their entries from {allowlist} in "
                  "tests/test_architecture.py (the list only shrinks; if a site moved, update its entry):",
                  *(f"  {s}" for s in gone)]
    return "\n".join(lines)


def _concrete_families() -> dict[str, dict[str, str]]:
    """Family -> {class name: defining module} of the concrete classes that dispatch must not name.

    ``neighbourhood``/``domain``: subclasses of Neighbourhood/Domain (the bases are type
    checks, not dispatch); ``prior``: the classes of attacks/priors.py; ``mechanism``: the
    other classes of mechanisms/ and learners/ with a ``sample`` (mechanisms, external
    adapters, release views). Protocols are never concrete.
    """
    from privaudit.mechanisms.domains import Domain
    from privaudit.mechanisms.neighbourhoods import Neighbourhood

    families: dict[str, dict[str, str]] = {"neighbourhood": {}, "domain": {}, "prior": {}, "mechanism": {}}
    for name in module_files(ROOT, ("mechanisms", "learners", "attacks")):
        module = importlib.import_module(f"privaudit.{name}")
        for cls_name, cls in vars(module).items():
            if (not inspect.isclass(cls) or cls.__module__ != module.__name__ or getattr(cls, "_is_protocol", False)
                    or cls in (Neighbourhood, Domain)):
                continue
            family = ("neighbourhood" if issubclass(cls, Neighbourhood) else "domain" if issubclass(cls, Domain)
                      else "prior" if name == "attacks.priors"
                      else "mechanism" if callable(getattr(cls, "sample", None)) and not name.startswith("attacks")
                      else None)
            if family:
                families[family][cls_name] = name
    return families


@pytest.fixture(scope="module")
def families() -> dict[str, dict[str, str]]:
    return _concrete_families()


# --------------------------------------------------------------------------- the allowlists (ratchets)
# Each lists the sites that existed when its check was written (issue 34). A new site fails its test;
# so does an entry whose site is gone: delete it then (the lists only shrink). A site is
# ``path::function: source`` with no line number.

#: Dynamic imports whose module is only known at run time (no privaudit prefix to bound it).
UNRESOLVED_DYNAMIC_IMPORTS = (
    # A configuration's "package.module:attr" reference, imported only when the person running the
    # audit allowed that module (docs/architecture.md, "No code from configurations").
    "audit/schema/components.py::load_reference: importlib.import_module(module)",
    # The external adapters' modules, named in EXTERNAL_MECHANISMS as "privaudit.mechanisms.external.x:Class"
    # (an edge inside mechanisms/ the graph does not see).
    "mechanisms/external/__init__.py::external_mechanism_class: importlib.import_module(module)",
    # The optional third-party DP libraries (opendp, pydp, opacus), with the pip hint when missing.
    "mechanisms/external/errors.py::import_library: importlib.import_module(module)",
)

#: isinstance tests on a concrete Neighbourhood, Domain, Prior or mechanism class outside the module
#: defining it. Each is a switch a new class of that family would silently miss: it should ask the
#: object (a method, a Protocol of mechanisms/protocol.py or attacks/protocol.py) instead.
CONCRETE_CLASS_TESTS = (
    # Mechanisms, outside audit/ (audit/ has none: test_audit_never_dispatches_on_a_concrete_mechanism_class).
    "attacks/labels.py::RRLabelPosterior.predict_proba: isinstance(mech, RandomizedResponse)",
    "learners/iwp_view.py::RecordRelease._categorical_labels: isinstance(self.label_mechanism, RandomizedResponse)",
    "learners/modulated_view.py::TranscriptRelease.__init__: isinstance(m, ModulatedMechanism)",
    "learners/modulated_view.py::TranscriptRelease.of: isinstance(source, ModulatedMechanism)",
    # The trade-off audit adds the dataset attackers for a dataset domain.
    "audit/engines/tradeoff.py::default_attackers: isinstance(domain_of(mechanism), DatasetDomain)",
    # Inside mechanisms/: adjacency checks, input patterns, neighbourhoods reading their domain, and the
    # unsafe aggregates' sensitivity under add/remove.
    "mechanisms/adjacency.py::adjacent_claim: isinstance(nb, AnyPair)",
    "mechanisms/adjacency.py::adjacent_claim: isinstance(nb, NormBall)",
    "mechanisms/adjacency.py::local_metric: isinstance(nb, NormBall)",
    "mechanisms/input_patterns.py::_any_patterns: isinstance(domain, Box)",
    "mechanisms/input_patterns.py::_any_patterns: isinstance(domain, Categorical)",
    "mechanisms/input_patterns.py::input_patterns: isinstance(nb, AnyPair)",
    "mechanisms/input_patterns.py::input_patterns: isinstance(nb, _DatasetNeighbourhood)",
    "mechanisms/input_patterns.py::input_patterns: isinstance(nb, _VectorNeighbourhood)",
    "mechanisms/neighbourhoods.py::AnyPair.neighbours.key: isinstance(domain, Categorical)",
    "mechanisms/neighbourhoods.py::_DatasetNeighbourhood._start: isinstance(domain, DatasetDomain)",
    "mechanisms/neighbourhoods.py::_VectorNeighbourhood._box: isinstance(domain, Box)",
    "mechanisms/unsafe.py::UnsafeBoundedMean._sensitivity: isinstance(self.claim.neighbourhood, AddRemove)",
    "mechanisms/unsafe.py::UnsafeBoundedSum._sensitivity: isinstance(self.claim.neighbourhood, AddRemove)",
)

#: Private names imported from another package: each couples the importer to another package's
#: internals (make the name public there, or move the code to its owner).
PRIVATE_IMPORTS = (
    # The bench page reuses the report's stylesheet and HTML helpers.
    "audit/app/bench.py::render_html: audit.reporting.render._CSS",
    "audit/app/bench.py::render_html: audit.reporting.render._figure",
    "audit/app/bench.py::render_html: audit.reporting.render._html_table",
    # epsilon_bounds re-exports the threshold selection and shares its helpers.
    "audit/stats/epsilon_bounds.py::<module>: attacks.threshold_selection._check_confidence",
    "audit/stats/epsilon_bounds.py::<module>: attacks.threshold_selection._finish",
    "audit/stats/epsilon_bounds.py::<module>: attacks.threshold_selection._reverse_counts",
    "audit/stats/epsilon_bounds.py::<module>: attacks.threshold_selection._scores",
    "audit/stats/epsilon_bounds.py::<module>: attacks.threshold_selection._value",
)

#: isinstance switches over the former closed-form release protocols (23 when listed; the target is
#: TARGET_RELEASE_SWITCHES): each was an if/elif a third release form would have to join. None is left:
#: a release carries what these branches computed (``ClosedFormRelease``: its ``ReleaseLaw``, Fisher
#: information, batch release, re-noised copy), and the one adapter ``closed_form_release`` that still
#: tests the two former protocols sits in mechanisms/protocol.py, the module defining them.
RELEASE_SWITCHES: tuple[str, ...] = ()


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph()


def _write(root: pathlib.Path, files: Mapping[str, str]) -> pathlib.Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


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


def test_the_graph_sees_a_module_import_its_own_lazy_package(tmp_path):
    # The edge of issue 34: a result module reaching its renderers through the package's lazy names.
    _write(tmp_path, {
        "low/__init__.py": "from importlib import import_module\n_LAZY = {'plot_result': 'top.figures'}\n\n"
                           "def __getattr__(name):\n"
                           "    return getattr(import_module(f'.{_LAZY[name]}', __name__), name)\n",
        "low/results.py": "from . import verdicts\n\ndef plot(r):\n    import privaudit.low as api\n"
                          "    return api.plot_result(r)\n",
        "low/verdicts.py": "",
        "low/top/__init__.py": "",
        "low/top/figures.py": "from privaudit.low.results import plot\n",
        "low/named.py": "from privaudit.low import plot_result\n",  # a name of the package, not a module
    })
    g = import_graph(tmp_path, ("low",))
    assert g["low"] == {"low.top", "low.top.figures"}  # the lazy map's values
    assert g["low.results"] == {"low", "low.verdicts"}  # `from . import verdicts` reads a module: no edge to low
    assert g["low.named"] == {"low"}
    assert cycles(g) == [{"low", "low.results", "low.top.figures"}]


def test_the_graph_bounds_dynamic_names_or_lists_them(tmp_path):
    _write(tmp_path, {
        "low/__init__.py": "import importlib\nMODS = ('a', 'b')\nfor _m in MODS:\n"
                           "    importlib.import_module(f'{__name__}.{_m}')\n",
        "low/a.py": "import importlib\n\ndef load(x):\n    return importlib.import_module('privaudit.low.sub.' + x)\n",
        "low/b.py": "import importlib\n\ndef load(x):\n    importlib.import_module('json')\n"
                    "    return importlib.import_module(x)\n",
        "low/sub/__init__.py": "",
        "low/sub/c.py": "",
    })
    g = import_graph(tmp_path, ("low",))
    assert g["low"] == {"low.a", "low.b"}  # loop variable over a constant tuple
    assert g["low.a"] == {"low.sub", "low.sub.c"}  # unknown suffix: every module under the prefix
    assert g["low.b"] == set()  # json is not ours; x cannot be bounded:
    assert unresolved_dynamic_imports(tmp_path, ("low",)) == ["low/b.py::load: importlib.import_module(x)"]


def test_the_cycle_finder_finds_a_cycle_and_nothing_else():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
    assert cycles({"a": {"b"}, "b": set(), "c": {"b"}}) == []


def test_audit_subpackages_are_packages_of_their_own():
    assert package_of("audit.engines.tradeoff") == "audit.engines"
    assert package_of("audit.results") == "audit"
    assert package_of("audit") == API_NODE  # the public API, above every subpackage
    assert package_of("mechanisms.external.opendp") == "mechanisms"


def test_the_class_test_finder_sees_aliases_tuples_and_attributes(tmp_path):
    _write(tmp_path, {
        "low/__init__.py": "",
        "low/kinds.py": "class Ball:\n    pass\n\n\ndef same(a, b):\n    return isinstance(b, Ball)\n",
        "low/use.py": "from privaudit.low.kinds import Ball as B\nimport privaudit.low.kinds as k\n"
                      "from numbers import Real as Ball\n\n\n"
                      "class C:\n    def f(self, m, n):\n"
                      "        return (isinstance(m, (int, B)), issubclass(m, float | k.Ball), isinstance(n, Real),\n"
                      "                isinstance(n, Ball))\n",
    })
    # low.kinds testing its own class is not counted, nor a `Ball` imported from another library.
    found = class_tests({"Ball": "low.kinds"}, tmp_path, ("low",))
    assert found == ["low/use.py::C.f: isinstance(m, (int, B))", "low/use.py::C.f: issubclass(m, float | k.Ball)"]


def test_the_private_import_finder_sees_names_and_modules_across_packages_only(tmp_path):
    _write(tmp_path, {
        "mechanisms/__init__.py": "", "mechanisms/_impl.py": "", "mechanisms/nb.py": "class _Base:\n    pass\n",
        "mechanisms/same.py": "from ._impl import x\nfrom .nb import _Base\n",  # inside its package: fine
        "audit/__init__.py": "", "audit/engines/__init__.py": "", "audit/stats/__init__.py": "",
        "audit/stats/bounds.py": "_helper = 1\n",
        "audit/engines/search.py": "from privaudit.mechanisms.nb import _Base, Public\nimport privaudit.mechanisms._impl\n"
                                   "def f():\n    from ..stats.bounds import _helper\n    from ..stats import bounds\n",
    })
    assert private_imports(tmp_path, ("mechanisms", "audit")) == [
        "audit/engines/search.py::<module>: mechanisms._impl",
        "audit/engines/search.py::<module>: mechanisms.nb._Base",
        "audit/engines/search.py::f: audit.stats.bounds._helper",
    ]


def test_the_ratchet_names_new_and_vanished_sites():
    assert ratchet(["a", "b", "b"], ["b", "a", "b"], "sites", "LIST", "do X") == ""
    message = ratchet(["a", "b", "b", "c"], ["a", "b", "d"], "sites", "LIST", "do X")
    assert message == ("2 new sites (not in LIST); do X:\n  b\n  c\n"
                       "1 sites of LIST no longer found: remove their entries from LIST in tests/test_architecture.py "
                       "(the list only shrinks; if a site moved, update its entry):\n  d")


# --------------------------------------------------------------------------- the architecture
def test_no_import_cycle_between_modules(graph):
    # The kind registry's and the package's dynamic imports are resolved: they are edges.
    assert "learners.modulated_view" in graph and "audit.kinds.learner_tradeoff" in graph["audit.kinds"]
    assert {"audit.reporting.figures", "audit.reporting.render", "audit.app.results_report"} <= graph[API_PACKAGE]
    found = cycles(graph)
    assert not found, "import cycles between modules:\n" + "\n".join(
        f"{sorted(c)}: {edges_within(graph, c)}" for c in found)


def test_no_import_cycle_between_packages(graph):
    packages = package_graph(graph)
    assert {"mechanisms", "learners", "attacks", "audit", "audit.engines", "audit.kinds", API_NODE} <= set(packages)
    found = cycles(packages)
    assert not found, "import cycles between packages:\n" + "\n".join(
        f"{sorted(c)}:\n  " + "\n  ".join(edges_within(graph, c, package_of)) for c in found)


def test_nothing_imports_the_audit_package_api(graph):
    # privaudit.audit's __init__ re-exports every subpackage's names: importing it from inside is an
    # edge upward (results reach their renderers through audit/display/hooks.py instead).
    importers = sorted(m for m, deps in graph.items() if API_PACKAGE in deps)
    assert not importers, f"modules importing the privaudit.audit package itself: {importers}"
    assert not {d for d in graph["audit.results"] if d.startswith(("audit.kinds", "audit.reporting", "audit.app"))}
    assert not graph["audit.display.hooks"]


def test_dynamic_imports_are_bounded_or_allowlisted():
    problems = ratchet(unresolved_dynamic_imports(), UNRESOLVED_DYNAMIC_IMPORTS, "dynamic imports the graph cannot "
                       "bound", "UNRESOLVED_DYNAMIC_IMPORTS", "give the module name a literal privaudit prefix or "
                       "take it from a module-level constant")
    assert not problems, problems


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


def test_the_concrete_families_are_the_classes_of_today(families):
    assert {"GaussianMechanism", "ModulatedMechanism", "RandomizedResponse", "TranscriptRelease"} <= set(
        families["mechanism"])
    assert {"NormBall", "AddRemove", "_VectorNeighbourhood"} <= set(families["neighbourhood"])
    assert {"Box", "DatasetDomain"} <= set(families["domain"]) and {"GaussianPrior"} <= set(families["prior"])
    named = {c for f in families.values() for c in f}
    # Protocols, bases and claims are what dispatch should use, never concrete.
    assert not {"Mechanism", "PrivacyClaim", "Neighbourhood", "Domain", "Prior", *RELEASE_PROTOCOLS} & named


def test_audit_never_dispatches_on_a_concrete_mechanism_class(families):
    found = class_tests(families["mechanism"], packages=("audit",))
    assert not found, ("isinstance on concrete mechanism classes in audit/ (dispatch on the Protocols of "
                       "mechanisms/protocol.py):\n" + "\n".join(found))


def test_dispatch_on_concrete_classes_only_shrinks(families):
    # mechanisms/, learners/, attacks/ and audit/: neighbourhoods, domains, priors and mechanisms.
    found = class_tests({c: m for family in families.values() for c, m in family.items()})
    problems = ratchet(found, CONCRETE_CLASS_TESTS, "isinstance tests on a concrete class", "CONCRETE_CLASS_TESTS",
                       "ask the object (a method, or a Protocol of mechanisms/protocol.py or attacks/protocol.py) "
                       "instead of testing its class")
    assert not problems, problems


def test_private_imports_across_packages_only_shrink():
    problems = ratchet(private_imports(), PRIVATE_IMPORTS, "private names imported across packages",
                       "PRIVATE_IMPORTS", "make the name public in its package, or move the code to its owner")
    assert not problems, problems


def test_release_protocol_switches_only_shrink():
    found = class_tests(dict.fromkeys(RELEASE_PROTOCOLS, "mechanisms.protocol"))
    count = f"{len(found)} isinstance switches over {'/'.join(RELEASE_PROTOCOLS)} (target: at most " \
            f"{TARGET_RELEASE_SWITCHES}, {len(RELEASE_SWITCHES)} allowlisted)"
    print(count)
    problems = ratchet(found, RELEASE_SWITCHES, "release-protocol switches", "RELEASE_SWITCHES",
                       "let the release carry what the branch computes")
    assert not problems, f"{count}\n{problems}"
