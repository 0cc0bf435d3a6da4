"""Audit kinds and components as plugins: registries, no code from configs, typed results, no import cycles.

The toy learner and the toy kind below are defined in this file only: they run end to
end (configuration, runner, report) without any edit to a privaudit module.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib.metadata
import json
import pathlib
from numbers import Real
from typing import ClassVar

import numpy as np
import pytest
from sklearn.utils._param_validation import Interval

import privaudit
from privaudit.audit import kinds
from privaudit.audit.app import components
from privaudit.audit.app.cli import main
from privaudit.audit.app.config import ConfigError, ConfigValueError, Field, parse_config
from privaudit.audit.kinds import AuditKind, get_kind, register_kind, result_type, unregister_kind
from privaudit.audit.reporting.render import write_report
from privaudit.audit.results import AuditEntry, AuditResult, apply_expectation, with_note
from privaudit.audit.app.runner import run_config
from privaudit.mechanisms import GaussianMechanism


# --------------------------------------------------------------------------- no code from configs
@pytest.mark.parametrize("table", [
    {"kind": "tradeoff", "mechanism": {"name": "os:system", "command": "touch pwned"}},
    {"kind": "calibration", "mechanism": {"name": "os:system", "command": "touch pwned"}},
    {"kind": "reconstruction", "mechanism": {"name": "gaussian", "sigma": 1.0},
     "prior": {"name": "os:system", "command": "touch pwned"}},
    {"kind": "learner-tradeoff", "learner": {"name": "os:system", "command": "touch pwned"}},
    {"kind": "bias", "sampler": "os:system", "target_value": [0.0]},
])
def test_a_module_reference_is_refused_without_opt_in(table, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigValueError, match="--allow-import os") as info:
        parse_config({"audits": [table]})
    assert "os:system" in str(info.value)
    assert not (tmp_path / "pwned").exists()


def test_the_code_execution_config_writes_nothing_through_the_cli(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    conf = tmp_path / "evil.toml"
    conf.write_text('[[audits]]\nkind = "tradeoff"\nmechanism = { name = "os:system", command = "touch pwned" }\n')
    assert main(["run", str(conf), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "audits[0].mechanism.name = 'os:system'" in err and "--allow-import os" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evil.toml"]  # no pwned, no report folder


def test_opted_in_references_are_imported_but_never_called_at_validation(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = parse_config({"audits": [{"kind": "tradeoff", "mechanism": {"name": "os:system", "command": "touch pwned"},
                                    "x": [0.0], "x_prime": [1.0]}]}, allow_imports=["os"])
    assert cfg.audits[0].params["mechanism"]["name"] == "os:system"
    assert not (tmp_path / "pwned").exists()  # validated against the signature only
    with pytest.raises(ConfigError, match="mechanism.cmd = "):  # keys are still checked
        parse_config({"audits": [{"kind": "tradeoff", "mechanism": {"name": "os:system", "cmd": "x"}}]},
                     allow_imports=["os"])
    # the opt-in is scoped to that call
    with pytest.raises(ConfigValueError, match="--allow-import os"):
        parse_config({"audits": [{"kind": "tradeoff", "mechanism": {"name": "os:system", "command": "x"}}]})


@pytest.mark.parametrize("name", ["builtins:int", ":", "os:", "os:system:x", "a b:c", "\x00:x"])
def test_malformed_or_builtin_references_are_config_errors(name):
    with pytest.raises(ConfigValueError, match="mechanism.name"):
        parse_config({"audits": [{"kind": "calibration", "mechanism": {"name": name}}]})


def test_parameters_are_checked_declaratively_naming_key_and_value():
    def err(mechanism=None, learner=None):
        entry = ({"kind": "calibration", "mechanism": mechanism} if mechanism is not None
                 else {"kind": "learner-tradeoff", "learner": learner})
        with pytest.raises(ConfigError) as info:
            parse_config({"audits": [entry]})
        return info.value

    e = err(learner={"name": "ModulatedRegressor", "epsilon": -1})
    assert isinstance(e, ValueError) and "audits[0].learner.epsilon = -1" in str(e)
    e = err(learner={"name": "CondDPRegressor", "epochs": "ten"})
    assert isinstance(e, TypeError) and "audits[0].learner.epochs = 'ten'" in str(e)
    e = err(mechanism={"name": "laplace", "epsilon": 1.0, "sensitivity": float("nan")})
    assert "audits[0].mechanism.sensitivity" in str(e) and "nan" in str(e)
    e = err(mechanism={"name": "modulated", "alpha": 0.5, "lam": 0.5, "omega": 1.0, "dim": 2, "sigma": 1.0,
                       "basis": [[1.0, 0.0], [0.0]]})  # ragged: used to crash in np.asarray on the worker
    assert isinstance(e, ValueError) and "audits[0].mechanism.basis" in str(e) and "rectangular" in str(e)
    e = err(mechanism={"name": "gaussian", "epsilon": 1.0})  # δ missing: a rule spanning two keys
    assert "audits[0].mechanism needs sigma, or epsilon and delta" in str(e)


# --------------------------------------------------------------------------- registries
def test_registries_refuse_clashes_and_list_the_builtins():
    assert {"tradeoff", "calibration", "reconstruction", "bias", "bias-checks", "learner-tradeoff",
            "learner-reconstruction", "one-run-label", "utility"} <= set(kinds.audit_kinds())
    clash = dataclasses.replace(get_kind("tradeoff"), doc="another tradeoff")
    with pytest.raises(ConfigValueError, match="already registered"):
        register_kind(clash)
    register_kind(get_kind("tradeoff"))  # the same kind again is not a clash
    with pytest.raises(ConfigValueError, match="already registered"):
        components.MECHANISMS.register("gaussian", "privaudit.mechanisms:LaplaceMechanism")
    with pytest.raises(ConfigValueError, match="without ':'"):
        components.MECHANISMS.register("a:b", GaussianMechanism)


def test_entry_point_kinds_are_loaded_lazily(monkeypatch):
    class FakeEntryPoint:
        name, value = "ep-kind", "somepkg:KIND"

        def load(self):
            return AuditKind("ep-kind", lambda p, rng: None, {})

    seen = []
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: seen.append(group) or [FakeEntryPoint()])
    with kinds.KINDS.isolated():
        get_kind("tradeoff")
        assert seen == []  # a built-in name never reads the entry points
        assert "ep-kind" in kinds.audit_kinds() and seen == [kinds.ENTRY_POINT_GROUP]
        kinds.audit_kinds()
        assert seen == [kinds.ENTRY_POINT_GROUP]  # loaded once
        assert kinds.KINDS.source("ep-kind") == "entry point somepkg:KIND"
    assert "ep-kind" not in kinds.audit_kinds()


# --------------------------------------------------------------------------- a toy learner and a toy kind
class ToyLearner:
    """Releases x + N(0, σ²) with σ calibrated for its claimed ε, or (``honest = false``) σ for 4ε."""

    _parameter_constraints = {"epsilon": [Interval(Real, 0, None, closed="neither")], "honest": ["boolean"]}

    def __init__(self, *, epsilon: float = 1.0, honest: bool = True) -> None:
        self.epsilon, self.honest = epsilon, honest

    def release_view(self, *, n_train: int, dim: int, mode: str, rng):
        if self.honest:
            return GaussianMechanism(epsilon=self.epsilon, delta=1e-5)
        noise = GaussianMechanism(epsilon=4 * self.epsilon, delta=1e-5).sigma
        return GaussianMechanism(sigma=noise, epsilon=self.epsilon, delta=1e-5)  # a false claim


@dataclasses.dataclass(frozen=True)
class CoinAudit(AuditResult):
    """Is a coin fair? Heads in n flips against a two-sided 4-sigma band."""

    kind: ClassVar[str] = "coin"
    target: str
    n: int
    heads: int
    verdict: str
    frequencies: np.ndarray


def run_coin(params, rng):
    flips = rng.random(params["n"]) < params["p"]
    heads = int(flips.sum())
    fair = abs(heads - params["n"] / 2) <= 4 * np.sqrt(params["n"] / 4)
    freq = np.cumsum(flips) / np.arange(1, params["n"] + 1)
    return CoinAudit(target="coin", n=params["n"], heads=heads, verdict="pass" if fair else "fail",
                     frequencies=freq[:: max(params["n"] // 50, 1)])


def coin_figures(entry):
    from privaudit.audit.reporting.plotting import arr, new_figure

    fig, ax = new_figure()
    ax[0, 0].plot(arr(entry["frequencies"]))
    return [("frequency", fig, "running frequency of heads")]


COIN = AuditKind("toy-coin", run_coin, {"n": Field("int", 2000, low=10, samples=True), "p": Field("float", 0.5)},
                 result=CoinAudit, headline=lambda e: f"{e['heads']} heads in {e['n']} flips", figures=coin_figures)


@pytest.fixture()
def toy_plugins():
    register_kind(COIN)
    components.LEARNERS.register("ToyLearner", ToyLearner)
    yield
    unregister_kind("toy-coin")
    components.LEARNERS.unregister("ToyLearner")


def test_a_toy_learner_and_a_toy_kind_run_end_to_end(toy_plugins, tmp_path):
    cfg = parse_config({"name": "toys", "seed": 4, "audits": [
        {"kind": "learner-tradeoff", "learner": {"name": "ToyLearner", "epsilon": 1.0}, "n": 4000},
        {"kind": "learner-tradeoff", "learner": {"name": "ToyLearner", "epsilon": 1.0, "honest": False}, "n": 4000},
        {"kind": "toy-coin", "p": 0.5},
        {"kind": "toy-coin", "p": 0.6},
    ]})
    with pytest.raises(ConfigError, match="learner.epsilon = 0"):  # the toy's own constraints apply at load
        parse_config({"audits": [{"kind": "learner-tradeoff", "learner": {"name": "ToyLearner", "epsilon": 0}}]})
    rep = run_config(cfg, out=tmp_path, figures=True, use_cache=False).report
    honest, broken, fair, biased = rep["audits"]
    assert honest["kind"] == "tradeoff" and honest["verdict"] == "pass" and 0 < honest["epsilon_lb"] <= 1.0
    assert broken["verdict"] == "violation" and broken["epsilon_lb"] > 1.0  # the false claim is caught
    assert (fair["verdict"], biased["verdict"]) == ("pass", "fail")  # 0.6: 9 sigma off at n = 2000
    md = (tmp_path / "toys" / "report.md").read_text()
    assert f"{fair['heads']} heads in 2000 flips" in md  # the kind's own headline
    figs = sorted(p.name for p in (tmp_path / "toys" / "figures").glob("0*.png"))
    assert "02-coin-toy-coin-frequency.png" in figs and "00-tradeoff-toylearner-epsilon-1-0-tradeoff.png" in figs
    # the toy result reads back from the report's JSON
    back = AuditEntry.from_dict(fair, result_type("coin"))
    assert isinstance(back.result, CoinAudit) and back.to_dict() == {k: v for k, v in fair.items() if k != "task"}


# --------------------------------------------------------------------------- typed results
def _normal_draws(n, rng):
    return rng.normal([1.0, -2.0], 1.0, size=(n, 2))


@pytest.fixture()
def registered_sampler():
    components.SAMPLERS.register("toy-normal", _normal_draws)
    yield
    components.SAMPLERS.unregister("toy-normal")


def test_report_entries_of_the_builtin_kinds_read_back_into_their_dataclasses(tmp_path, registered_sampler):
    cfg = parse_config({"name": "typed", "seed": 1, "audits": [
        {"kind": "bias", "sampler": "toy-normal", "target_value": [1.0, -2.0], "n": 2000},
        {"kind": "bias", "sampler": "toy-normal", "target_value": [1.5, -2.0], "n": 2000, "expect": "biased"},
        {"kind": "tradeoff", "mechanism": {"name": "gaussian", "epsilon": 1.0, "delta": 1e-5}, "n": 2000},
        {"kind": "tradeoff", "mechanism": {"name": "gaussian", "epsilon": 1.0, "delta": 1e-5,
                                           "calibration": "classical"}, "n": 2000, "expect": "violation"},
        {"kind": "calibration", "mechanism": {"name": "laplace", "epsilon": 1.0, "scale": 0.5},
         "expect": "violation"},
        {"kind": "reconstruction", "mechanism": {"name": "gaussian", "sigma": 1.0},
         "prior": {"name": "gaussian", "mean": [0.0], "cov": [[1.0]]}, "n": 500},
        {"kind": "one-run-label", "m": 50, "epochs": 1},
    ]})
    rep = run_config(cfg, out=tmp_path, figures=False, use_cache=False).report
    assert all(a["verdict"] != "error" for a in rep["audits"]), [a.get("error") for a in rep["audits"]]
    for entry in json.loads((tmp_path / "typed" / "report.json").read_text())["audits"]:
        cls = result_type(entry["kind"])
        back = AuditEntry.from_dict(entry, cls)
        assert type(back.result) is cls
        assert back.to_dict() == {k: v for k, v in entry.items() if k != "task"}
    assert [a["verdict"] for a in rep["audits"][:2]] == ["pass", "pass"]  # a registered sampler, no import
    ctrl = AuditEntry.from_dict(rep["audits"][4], result_type("calibration"))
    assert ctrl.result.verdict == "violation" and ctrl.final_verdict == "pass" and ctrl.expect == "violation"


def test_verdict_rewriting_returns_new_frozen_dataclasses():
    @dataclasses.dataclass(frozen=True)
    class R(AuditResult):
        kind: ClassVar[str] = "r"
        target: str
        verdict: str

    r = R("t", "violation")
    caught = apply_expectation(r, "violation", caught="violation")
    missed = apply_expectation(R("t", "pass"), "violation", caught="violation")
    assert caught.result is r and r.verdict == "violation"  # the audit's own result is untouched
    assert (caught.final_verdict, missed.final_verdict) == ("pass", "fail")
    assert apply_expectation(r, "private", caught="violation").final_verdict == "violation"
    noted = with_note(caught, "n2")
    assert noted.notes[-1] == "n2" and len(caught.notes) == 1
    d = noted.to_dict()
    assert (d["verdict"], d["audit_verdict"], d["expect"]) == ("pass", "violation", "violation")
    assert "caught" in d["notes"][0] and d["notes"][1] == "n2"
    with pytest.raises(dataclasses.FrozenInstanceError):
        noted.verdict = "fail"


# --------------------------------------------------------------------------- import cycles
ROOT = pathlib.Path(privaudit.__file__).parent if privaudit.__file__ else pathlib.Path(__file__).parents[1]
#: Modules this architecture relies on being outside any import cycle (function-level imports included).
ARCHITECTURE = ("audit.app.config", "audit.app.tasks", "audit.kinds", "audit.reporting.render",
                "audit.reporting.figures", "audit.app.components", "audit.app.fields", "audit.results",
                "audit.reporting.formatting", "audit.reporting.plotting", "audit.engines.learner_audits",
                "audit.engines.release_views", "mechanisms.registry", "attacks.registry", "learners.modulated",
                "learners.iwp", "learners.conddp")


def _import_graph() -> dict[str, set[str]]:
    modules = {}
    for p in ROOT.rglob("*.py"):
        rel = p.relative_to(ROOT)
        if rel.parts[0] in ("tests", "benchmarks") or any(s.startswith(".") for s in rel.parts):
            continue
        name = ".".join(rel.with_suffix("").parts).removesuffix(".__init__")
        modules[name] = p
    graph = {}
    for name, path in modules.items():
        is_pkg = path.name == "__init__.py"
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):  # every import, function-level too
            if isinstance(node, ast.Import):
                targets = [a.name.removeprefix("privaudit.") for a in node.names if a.name.startswith("privaudit")]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    pkg = name.split(".") if is_pkg else name.split(".")[:-1]
                    base = ".".join(pkg[: len(pkg) - node.level + 1] + ([node.module] if node.module else []))
                elif node.module and node.module.startswith("privaudit"):
                    base = node.module.removeprefix("privaudit").lstrip(".")
                else:
                    continue
                targets = [base, *(f"{base}.{a.name}" for a in node.names)]
            else:
                continue
            for t in targets:
                parts = t.split(".")
                for i in range(1, len(parts) + 1):  # importing a.b.c runs a and a.b first
                    dep = ".".join(parts[:i])
                    if dep in modules and dep != name and not name.startswith(dep + "."):
                        deps.add(dep)
        graph[name] = deps
    # the registry imports its built-in kind modules dynamically (importlib): add those edges too
    graph["audit.kinds"] |= {f"audit.kinds.{m}" for m in kinds.BUILTIN_MODULES}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """Strongly connected components with more than one module (iterative Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(comp)
    return out


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]


def test_no_import_cycle_through_the_audit_architecture():
    graph = _import_graph()
    assert "audit.kinds.tradeoff" in graph and "audit.kinds" in graph["audit.app.config"]
    assert [m for m in ARCHITECTURE if m not in graph] == []  # a renamed module must be renamed here too
    bad = [c for c in _cycles(graph) if any(m == a or m.startswith(a + ".") for m in c for a in ARCHITECTURE)]
    assert not bad, f"import cycles: {bad}"
    # the dependency directions of docs/architecture.md
    assert not {"audit.app.tasks", "audit.app.runner", "audit.reporting.render"} & graph["audit.app.config"]
    assert "audit.reporting.render" not in graph["audit.reporting.figures"]
    # the shared registry sits below attacks/ and audit/: it imports neither
    assert not {m for m in graph["mechanisms.registry"] if m.startswith(("audit", "attacks", "learners"))}


def test_experiment_results_round_trip_through_json():
    from privaudit.audit.results import ExperimentResult

    res = ExperimentResult(name="demo", target="demo", xlabel="ε", ylabel="R²", xscale="log",
                           series={"a": {"x": [0.5, float("inf")], "y": [0.1, 0.2]}}, reference={"OLS": 0.7},
                           notes=["n1"], seed=3)
    entry = with_note(res, "from the kind").to_dict()
    assert entry["series"]["a"]["x"] == [0.5, "inf"] and entry["notes"] == ["n1", "from the kind"]
    back = AuditEntry.from_dict(json.loads(json.dumps(entry)), result_type("utility"))
    assert isinstance(back.result, ExperimentResult) and back.to_dict() == entry
