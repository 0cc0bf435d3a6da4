"""Audit kinds and components as plugins: registries, no code from configs, typed results.

The import graph (no cycles, no upward imports) is checked in tests/test_architecture.py.

The toy learner and the toy kind below are defined in this file only: they run end to
end (configuration, runner, report) without any edit to a privaudit module.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
from numbers import Real
from typing import ClassVar

import numpy as np
import pytest
from sklearn.utils._param_validation import Interval

from privaudit.audit import kinds
from privaudit.audit.schema import components
from privaudit.audit.app.cli import main
from privaudit.audit.app.config import ConfigError, ConfigValueError, Field, parse_config
from privaudit.audit.kinds import AuditKind, get_kind, register_kind, result_type, unregister_kind
from privaudit.audit.app.report_store import write_report
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
    from privaudit.audit.display.plotting import arr, new_figure

    fig, ax = new_figure()
    ax[0, 0].plot(arr(entry.result.frequencies))  # renderers get the typed entry
    return [("frequency", fig, "running frequency of heads")]


COIN = AuditKind("toy-coin", run_coin, {"n": Field("int", 2000, low=10, samples=True), "p": Field("float", 0.5)},
                 result=CoinAudit, headline=lambda e: f"{e.result.heads} heads in {e.result.n} flips", figures=coin_figures)


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
    assert isinstance(back.result, CoinAudit) and back.to_dict() == fair  # the task index included


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
        assert back.to_dict() == entry  # the task index included
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


def test_experiment_results_round_trip_through_json():
    from privaudit.audit.results import ExperimentResult

    res = ExperimentResult(name="demo", target="demo", xlabel="ε", ylabel="R²", xscale="log",
                           series={"a": {"x": [0.5, float("inf")], "y": [0.1, 0.2]}}, reference={"OLS": 0.7},
                           notes=["n1"], seed=3)
    entry = with_note(res, "from the kind").to_dict()
    assert entry["series"]["a"]["x"] == [0.5, "inf"] and entry["notes"] == ["n1", "from the kind"]
    back = AuditEntry.from_dict(json.loads(json.dumps(entry)), result_type("utility"))
    assert isinstance(back.result, ExperimentResult) and back.to_dict() == entry
