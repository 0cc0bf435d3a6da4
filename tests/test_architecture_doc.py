"""docs/architecture.md against the code: every subpackage, module and built-in kind it should name, and the imports it draws.

The page's subpackage table (header ``| subpackage | concern | modules | imports (in `audit/`) |``)
has one row per subpackage of audit/ (and one for its root): its modules column names every
module of that folder (a nested package as ``name/``), its last column what the subpackage
may import inside audit/. The "Built-in kinds:" sentence names every kind the registry's
built-in modules register, and the ``AuditKind`` attribute table every field of the record.
A module, subpackage or kind added to the code and not to the page fails here, naming it;
so does a name the page keeps after the code dropped it.
"""

from __future__ import annotations

import dataclasses
import importlib
import re

import pytest

from test_architecture import ROOT, import_graph, package_graph

DOC = ROOT / "docs" / "architecture.md"
#: A module or nested package in a table cell: `name` or `name/`.
_NAME = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*/?)`")


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def subpackage_table(text: str) -> dict[str, tuple[set[str], set[str]]]:
    """Row -> (modules named, audit packages it may import): ``"root"`` or a subpackage's name (``"engines"``)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| subpackage | concern | modules | imports"))
    rows = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        first, _, modules, imports = _cells(line)
        row = "root" if first == "root" else first.strip("`").rstrip("/")
        may = {f"audit.{sub}" for sub in re.findall(r"`([a-z_]+)/`", imports)}
        if re.search(r"\broot\b", imports):
            may.add("audit")
        rows[row] = ({m for m in _NAME.findall(modules)}, may)
    return rows


def builtin_kinds_named(text: str) -> set[str]:
    """The kinds of the sentence "Built-in kinds: `a`, `b`, … ." (up to its first period)."""
    sentence = re.search(r"Built-in kinds:(.*?)\.(\s|$)", text, flags=re.S)
    assert sentence, "docs/architecture.md has no \"Built-in kinds: ...\" sentence"
    return set(re.findall(r"`([a-z0-9-]+)`", sentence.group(1)))


def kind_attributes_named(text: str) -> set[str]:
    """The names in the first column of the ``| attribute | what |`` table (``run(params, rng)`` gives ``run``)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| attribute | what |"))
    names = set()
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        names |= set(re.findall(r"`([a-z_]+)", _cells(line)[0]))
    return names


def folder_modules(folder) -> set[str]:
    """A folder's modules (``__init__`` left out) and nested packages (``name/``)."""
    return ({p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
            | {f"{d.name}/" for d in folder.iterdir() if (d / "__init__.py").is_file()})


def audit_subpackages() -> set[str]:
    return {d.name for d in (ROOT / "audit").iterdir() if (d / "__init__.py").is_file()}


@pytest.fixture(scope="module")
def doc() -> str:
    return DOC.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def table(doc) -> dict[str, tuple[set[str], set[str]]]:
    return subpackage_table(doc)


# --------------------------------------------------------------------------- the parser checks
def test_the_parsers_read_a_table_and_the_kinds_sentence():
    text = ("| subpackage | concern | modules | imports (in `audit/`) |\n|---|---|---|---|\n"
            "| root | base | `__init__`, `results` | `display/` |\n"
            "| `engines/` | see `plan → judge` | a: `tradeoff`, `bias` (x); `sub/` | root, `stats/` |\n"
            "| `stats/` | s | `fisher` | — |\n\nafter\n"
            "Built-in kinds: `tradeoff`, `bias-checks`,\n`one-run-label`. Several `kinds` may\n")
    assert subpackage_table(text) == {"root": ({"__init__", "results"}, {"audit.display"}),
                                      "engines": ({"tradeoff", "bias", "sub/"}, {"audit", "audit.stats"}),
                                      "stats": ({"fisher"}, set())}
    assert builtin_kinds_named(text) == {"tradeoff", "bias-checks", "one-run-label"}


def test_the_modules_check_names_a_new_engine_module(tmp_path):
    # What a new engine module gives: the folder has a module the row does not name.
    (tmp_path / "membership.py").write_text("")
    (tmp_path / "tradeoff.py").write_text("")
    (tmp_path / "__init__.py").write_text("")
    assert _differences("engines", {"tradeoff"}, folder_modules(tmp_path)) == [
        "audit/engines/membership.py is not named in the `engines/` row of docs/architecture.md's subpackage table"]
    assert _differences("engines", {"tradeoff", "gone"}, {"tradeoff"}) == [
        "docs/architecture.md's `engines/` row names `gone`, which is not in audit/engines/"]


def _differences(row: str, named: set[str], actual: set[str]) -> list[str]:
    folder = "audit" if row == "root" else f"audit/{row}"
    label = "root" if row == "root" else f"`{row}/`"
    return ([f"{folder}/{m.rstrip('/')}{'/' if m.endswith('/') else '.py'} is not named in the {label} row of "
             f"docs/architecture.md's subpackage table" for m in sorted(actual - named)]
            + [f"docs/architecture.md's {label} row names `{m}`, which is not in {folder}/" for m in sorted(named - actual)])


# --------------------------------------------------------------------------- the page
def test_every_subpackage_of_audit_has_a_row(table):
    rows = set(table) - {"root"}
    missing, gone = sorted(audit_subpackages() - rows), sorted(rows - audit_subpackages())
    assert not missing and not gone, (
        f"subpackages of audit/ without a row in docs/architecture.md's subpackage table: {missing}; "
        f"rows naming no subpackage: {gone}")


@pytest.mark.parametrize("row", sorted(audit_subpackages() | {"root"}))
def test_every_module_is_named_in_its_row(table, row):
    assert row in table, f"docs/architecture.md's subpackage table has no row for {row}"
    folder = ROOT / "audit" if row == "root" else ROOT / "audit" / row
    actual = folder_modules(folder) - {f"{d}/" for d in audit_subpackages()} if row == "root" \
        else folder_modules(folder)
    named = table[row][0] - {"__init__"}
    problems = _differences(row, named, actual)
    assert not problems, "\n".join(problems)


def test_the_engines_and_app_rows_are_checked(table):
    # The rows the page is most often behind on (issue 34): present, and naming real modules.
    assert {"tradeoff", "pair_search", "release_views"} <= table["engines"][0]
    assert {"cli", "config", "runner", "results_report"} <= table["app"][0]


def test_each_subpackage_imports_only_what_its_row_allows(table):
    graph = package_graph(import_graph())
    problems = []
    for row, (_, may) in sorted(table.items()):
        package = "audit" if row == "root" else f"audit.{row}"
        actual = {p for p in graph.get(package, set()) if p == "audit" or p.startswith("audit.")}
        if extra := sorted(actual - may):
            problems.append(f"{package} imports {extra}, which its row of docs/architecture.md does not allow "
                            "(draw the edge in the page if it belongs, or remove the import)")
    assert not problems, "\n".join(problems)


def test_every_builtin_kind_is_named(doc):
    from privaudit.audit.kinds import BUILTIN_MODULES

    modules = [importlib.import_module(f"privaudit.audit.kinds.{m}") for m in BUILTIN_MODULES]
    # A module registers its KIND, or each kind of its KINDS.
    registered = {k.name for mod in modules for k in getattr(mod, "KINDS", (mod.KIND,))}
    named = builtin_kinds_named(doc)
    missing, gone = sorted(registered - named), sorted(named - registered)
    assert not missing and not gone, (f"built-in kinds missing from docs/architecture.md's \"Built-in kinds\": "
                                      f"{missing}; named there but not registered: {gone}")


def test_every_field_of_audit_kind_is_in_its_table(doc):
    from privaudit.audit.kinds.base import AuditKind

    fields = {f.name for f in dataclasses.fields(AuditKind)}
    named = kind_attributes_named(doc)
    missing, gone = sorted(fields - named), sorted(named - fields)
    assert not missing and not gone, (f"AuditKind fields missing from docs/architecture.md's attribute table: "
                                      f"{missing}; named there but not fields: {gone}")
