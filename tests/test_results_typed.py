"""Typed results to the end: every result kind reads back from its JSON form, and verdicts are a str enum.

* ``entry_from_dict(d).to_dict() == d`` byte for byte for every entry of every shipped report
  (every built-in result kind, negative controls, relabelled entries, nested claims and bounds);
* ``from_dict(to_dict(r))`` is ``r`` again for results as the engines build them (arrays, tuples,
  claims, verdicts, sub-results), which is what the cache stores and loads;
* the trade-off, bias and reconstruction results are built from sub-results while their entries keep the
  flat layout of the committed reports, and the flat names still read;
* :class:`Verdict` / :class:`Outcome` cover every verdict and outcome, read as their strings, and an
  unknown verdict is refused when a result is built.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import typing
from typing import Any

import numpy as np
import pytest

from privaudit.audit.engines import reconstruction as R
from privaudit.audit.engines.reconstruction import (AuditedSetting, BoundComparison, Bounds, ErrorStatistics,
                                                    ReconstructionAudit)
from privaudit.audit.engines.bias import BiasAudit, BiasEstimate, BiasTest, DetectableBias, NormalityCheck
from privaudit.audit.engines.tradeoff import (AttackerChoice, Band, Curves, EpsilonBound, OperatingPoint, SampleSizes,
                                              TradeoffAudit, TradeoffCurve)
from privaudit.audit.kinds import entry_from_dict, get_kind, result_type
from privaudit.audit.kinds.one_run_label import OneRunLabelAudit
from privaudit.audit.results import AuditEntry, AuditResult, FailedTask, UntypedResult, apply_expectation, to_jsonable
from privaudit.audit.stats.epsilon_bounds import OneRunBound
from privaudit.audit.verdicts import OUTCOME_LABELS, Outcome, Verdict, outcome
from privaudit.mechanisms import PrivacyClaim
from result_factories import (bias_result, calibration_result, experiment_result, one_run_result,
                              reconstruction_result, tradeoff_result)

REPORTS = sorted((pathlib.Path(__file__).parents[1] / "reports").glob("*/report.json"))


def assert_same_result(a: Any, b: Any, path: str = "") -> None:
    """``a`` and ``b`` are the same result: same class, array fields equal arrays, sub-results (and dicts of
    them) the same, every other field equal data."""
    assert type(a) is type(b), path
    hints = typing.get_type_hints(type(a))
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        name = path + f.name
        members = typing.get_args(hints[f.name]) or (hints[f.name],)
        if np.ndarray in members and x is not None:
            assert isinstance(y, np.ndarray), name
            np.testing.assert_array_equal(x, y, err_msg=name)
        elif dataclasses.is_dataclass(x):
            assert_same_result(x, y, name + ".")
        elif isinstance(x, dict) and x and all(dataclasses.is_dataclass(v) for v in x.values()):
            assert isinstance(y, dict) and list(x) == list(y), name
            for k in x:
                assert_same_result(x[k], y[k], f"{name}[{k!r}].")
        elif isinstance(x, Verdict):
            assert isinstance(y, Verdict) and x is y, name
        else:
            # Untyped containers (a ``dict`` or ``list`` field) come back as JSON data.
            assert to_jsonable(x) == to_jsonable(y), name


# --------------------------------------------------------------------------- every shipped report
@pytest.mark.parametrize("path", REPORTS, ids=[p.parent.name for p in REPORTS])
def test_every_report_entry_reads_back_typed_and_writes_the_same_bytes(path):
    audits = json.loads(path.read_text())["audits"]
    assert audits
    for audit in audits:
        entry = entry_from_dict(audit)  # strict: a refused entry raises
        want = result_type(audit["kind"])
        if audit["verdict"] == "error":
            assert isinstance(entry.result, FailedTask)
        else:
            assert want is not None and type(entry.result) is want, audit["kind"]
        assert json.dumps(entry.to_dict()) == json.dumps(audit)  # same keys, same order, same values
        assert_same_result(entry_from_dict(entry.to_dict()).result, entry.result)


def test_shipped_reports_cover_every_builtin_result_kind():
    kinds = {a["kind"] for p in REPORTS for a in json.loads(p.read_text())["audits"]}
    builtin = {k.result.kind for k in (get_kind(n) for n in ("tradeoff", "calibration", "reconstruction", "bias",
                                                               "one-run-label", "utility", "opacus"))}
    assert builtin <= kinds


# --------------------------------------------------------------------------- results as the engines build them
FACTORIES = [tradeoff_result, reconstruction_result, bias_result, calibration_result, one_run_result,
             experiment_result]


@pytest.mark.parametrize("make", FACTORIES, ids=[f.__name__ for f in FACTORIES])
def test_from_dict_of_to_dict_is_the_result(make):
    r = make()
    back = type(r).from_dict(json.loads(json.dumps(r.to_dict())))
    assert_same_result(back, r)
    assert back.to_dict() == r.to_dict()
    entry = apply_expectation(r, "violation", caught="violation")
    d = dataclasses.replace(entry, target="label", task=4).to_dict()
    assert entry_from_dict(json.loads(json.dumps(d))).to_dict() == d


def _run(kind: str, **params):
    k = get_kind(kind)
    full = {name: f.default for name, f in k.fields.items()}
    return k.run({**full, **params}, np.random.default_rng(3))


@pytest.mark.parametrize("kind, params", [
    ("tradeoff", {"mechanism": {"name": "gaussian", "epsilon": 1.0, "delta": 1e-5}, "n": 400}),
    ("tradeoff", {"mechanism": {"name": "laplace", "epsilon": 1.0}, "n": 400, "estimator": "clopper-pearson",
                  "expect": "violation"}),
    ("calibration", {"mechanism": {"name": "gaussian", "epsilon": 1.0, "delta": 1e-5}}),
    ("reconstruction", {"mechanism": {"name": "gaussian", "sigma": 1.0}, "x": [0.5, -0.5], "n": 200}),
    ("one-run-label", {"m": 20, "epochs": 1}),
])
def test_fresh_results_round_trip_through_json(kind, params):
    """What a task returns, through JSON (the worker's output, the cache) and back: the same result."""
    out = _run(kind, **params)
    entry = out if isinstance(out, AuditEntry) else AuditEntry(out)
    d = json.loads(json.dumps(entry.to_dict(), allow_nan=False))
    back = entry_from_dict(d)
    # The report does not separate a result's own notes from the kind's: a result with a
    # notes field reads them all back.
    want = entry.result
    if entry.notes and "notes" in {f.name for f in dataclasses.fields(want)}:
        want = dataclasses.replace(want, notes=(*want.notes, *entry.notes))
    assert_same_result(back.result, want)
    assert back.to_dict() == d and (back.verdict, back.expect) == (entry.verdict, entry.expect)


def test_from_dict_refuses_what_is_not_an_entry_of_its_kind():
    d = tradeoff_result().to_dict()
    with pytest.raises(ValueError, match="missing field 'epsilon_lb'"):
        entry_from_dict({k: v for k, v in d.items() if k != "epsilon_lb"})
    with pytest.raises(ValueError, match="verdict"):
        entry_from_dict({**d, "verdict": "passed"})
    with pytest.raises(ValueError, match="kind 'tradeoff'"):
        type(tradeoff_result()).from_dict({**d, "kind": "bias"})
    with pytest.raises(TypeError, match="mapping"):
        entry_from_dict([d])
    with pytest.raises(ValueError, match="missing or malformed"):
        OneRunLabelAudit.from_dict({k: v for k, v in one_run_result().to_dict().items() if k != "m"})
    # not strict (re-rendering another version's report): plain data, with a warning
    with pytest.warns(RuntimeWarning, match="rendered as plain data"):
        loose = entry_from_dict({k: v for k, v in d.items() if k != "epsilon_lb"}, strict=False)
    assert isinstance(loose.result, UntypedResult) and "epsilon_lb" not in loose.to_dict()


def test_failed_and_untyped_entries_round_trip():
    failed = {"kind": "tradeoff", "target": "crashed", "verdict": "error", "error": "ValueError: boom",
              "traceback": "Traceback ...", "task": 2}
    e = entry_from_dict(failed)
    assert isinstance(e.result, FailedTask) and e.kind == "tradeoff" and e.final_verdict is Verdict.ERROR
    assert e.to_dict() == failed and list(e.to_dict()) == list(failed)
    lost = {"kind": "bias", "target": "w", "verdict": "error", "error": "KilledWorker: x"}  # no traceback
    assert entry_from_dict(lost).to_dict() == lost
    plain = {"kind": "mystery", "target": "new", "verdict": "something-new", "answer": 42}
    u = entry_from_dict(plain)
    assert isinstance(u.result, UntypedResult) and u.to_dict() == plain
    assert outcome(u) == Outcome.INCONCLUSIVE  # an unknown verdict is never a silent pass


# --------------------------------------------------------------------------- results built from sub-results
LAYERED = {"tradeoff": TradeoffAudit, "reconstruction": ReconstructionAudit, "bias": BiasAudit}
SUB_RESULTS = {
    TradeoffAudit: {"bound": EpsilonBound, "operating_point": OperatingPoint, "curve": TradeoffCurve, "band": Band,
                    "sizes": SampleSizes, "curves": Curves, "attackers": AttackerChoice},
    BiasAudit: {"estimate": BiasEstimate, "global_test": BiasTest, "detectable": DetectableBias,
                "normality": NormalityCheck},
    ReconstructionAudit: {"setting": AuditedSetting, "error": ErrorStatistics, "bounds": Bounds,
                          "comparison": BoundComparison},
}


def _committed_entries(kind: str) -> list[dict]:
    return [a for p in REPORTS for a in json.loads(p.read_text())["audits"]
            if a["kind"] == kind and a["verdict"] != "error"]


@pytest.mark.parametrize("kind", sorted(LAYERED))
def test_committed_entries_read_into_sub_results_and_back_to_the_same_entry(kind):
    """Old dict → object → dict is the identity on the committed reports, and the object is built from sub-results
    whose fields are the entry's flat values."""
    cls = LAYERED[kind]
    entries = _committed_entries(kind)
    assert entries
    for d in entries:
        res = entry_from_dict(d).result
        assert type(res) is cls
        for field, sub in SUB_RESULTS[cls].items():
            assert type(getattr(res, field)) is sub, field
        own = res.to_dict()  # the result's own keys, in the entry's order, with the entry's values
        assert list(own) == [k for k in d if k in own]
        relabelled = {"target": d.get("audited", d["target"]), "verdict": d.get("audit_verdict", d["verdict"])}
        for key, value in own.items():
            assert json.dumps(value) == json.dumps(relabelled.get(key, d[key])), key
        for key in own:  # every flat name reads the entry's value (a trade-off entry's band is a JSON object)
            if key not in ("kind", "band"):
                assert json.dumps(to_jsonable(getattr(res, key))) == json.dumps(own[key]), key
        assert_same_result(cls.from_dict(json.loads(json.dumps(own))), res)


def test_flat_names_and_keys_of_the_former_dicts_still_read():
    t = tradeoff_result()
    assert (t.epsilon_lb, t.mu_lb, t.delta, t.estimator, t.selection, t.confidence) == (0.8, None, 1e-5,
                                                                                       "clopper-pearson", "split", 0.95)
    assert t.fpr is t.curve.fpr and t.alpha is t.band.alpha and t.band_upper is t.band.upper
    assert t.operating_point["fpr"] == 0.1 and t.band["lower"] is t.band.lower and t.band["method"] == "DKW"
    r = reconstruction_result()
    assert (r.mse, r.mse_ci, r.crb, r.van_trees, r.hcr) == (0.5, (0.45, 0.56), 0.4, 0.3, None)
    assert r.bias == [0.0, 0.01] and r.applies == {"crb": True, "van_trees": True} and r.beaten == []
    rero = R.ExactReconstruction(0.4, (0.3, 0.5), 0.6, 0.25, 1.0)
    assert reconstruction_result(rero=rero).rero["success_ci"] == (0.3, 0.5)
    with pytest.raises(AttributeError):
        t.epsilon_lb = 2.0  # read-only: a result is frozen, its flat names too


def test_from_dict_names_the_key_a_sub_result_misses_or_refuses():
    d = tradeoff_result().to_dict()
    with pytest.raises(ValueError, match="missing field 'band.lower'"):
        TradeoffAudit.from_dict({**d, "band": {"upper": d["band"]["upper"]}})
    with pytest.raises(ValueError, match="field 'operating_point'.*direction"):
        TradeoffAudit.from_dict({**d, "operating_point": {**d["operating_point"], "direction": "sideways"}})
    with pytest.raises(ValueError, match="field 'bound'.*estimator"):
        TradeoffAudit.from_dict({**d, "estimator": "bootstrap"})
    r = reconstruction_result().to_dict()
    with pytest.raises(ValueError, match="missing field 'variance'"):
        ReconstructionAudit.from_dict({k: v for k, v in r.items() if k != "variance"})
    with pytest.raises(ValueError, match="field 'comparison'.*same bounds"):
        ReconstructionAudit.from_dict({**r, "applies": {"crb": True}})
    # a sub-result field with a default may be left out (an older entry): the band's method
    assert TradeoffAudit.from_dict({**d, "band": {k: v for k, v in d["band"].items() if k != "method"}}).band.method \
        == "DKW"


# --------------------------------------------------------------------------- OneRunLabelAudit
def test_one_run_label_audit_is_built_from_the_bound_and_reports_the_old_layout():
    r = one_run_result()
    assert isinstance(r.claim, PrivacyClaim) and isinstance(r.bound, OneRunBound) and r.epsilon_lb == r.bound.epsilon
    d = r.to_dict()
    assert list(d) == ["kind", "claim", "verdict", "delta", "confidence", "m", "guesses", "correct", "k",
                       "epsilon_lb", "notes"]
    assert d["claim"] == {"epsilon": 1.0, "delta": 1e-5, "adjacency": "label"}
    assert (d["m"], d["guesses"], d["correct"], d["k"], d["epsilon_lb"]) == (50, 10, 6, 5, 0.0)
    assert OneRunLabelAudit.from_dict(d) == r


# --------------------------------------------------------------------------- Verdict
def test_verdict_reads_as_its_string():
    v = Verdict.PASS
    assert v == "pass" and str(v) == "pass" and f"{v}" == "pass" and repr(v) == "'pass'"
    assert json.dumps({"verdict": v}) == '{"verdict": "pass"}' and {"pass": 1}[v] == 1
    assert to_jsonable(Verdict.INCONCLUSIVE) == "inconclusive" and type(to_jsonable(v)) is str


def test_verdicts_cover_every_outcome():
    assert set(OUTCOME_LABELS) == set(Outcome)
    assert set(Verdict) <= set(Outcome)
    assert {v.value for v in Verdict} == {"pass", "violation", "fail", "inconclusive", "info", "error"}


def test_result_verdicts_become_enum_members_and_unknown_ones_are_refused():
    assert tradeoff_result(verdict="violation").verdict is Verdict.VIOLATION
    assert not tradeoff_result(verdict="violation").passed and tradeoff_result().passed
    with pytest.raises(ValueError, match="got verdict='passed'"):
        tradeoff_result(verdict="passed")
    # the negative-control note quotes the audit's verdict as a string, as before
    note = apply_expectation(tradeoff_result(verdict="violation"), "violation", caught="violation").notes[-1]
    assert note.endswith("(audit verdict 'violation')")
