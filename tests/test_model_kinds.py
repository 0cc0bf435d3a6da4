"""The membership and record-reconstruction kinds (issue 35): configs validated at load, reports rendered."""

from __future__ import annotations

import numpy as np
import pytest

from privaudit.audit.app.config import ConfigError, parse_config
from privaudit.audit.app.runner import run_config
from privaudit.learners.datasets import load_model_dataset


def run(audits, tmp_path, figures=False):
    cfg = parse_config({"name": "models-kinds", "seed": 1, "audits": audits})
    return run_config(cfg, out=tmp_path, figures=figures, use_cache=False).report


def test_membership_entry_runs_and_renders_its_roc(tmp_path):
    rep = run([{"kind": "membership", "model": {"name": "LogisticRegression", "C": 100.0, "max_iter": 300},
                "dataset": "iris", "n_reference": 3}], tmp_path, figures=True)
    (entry,) = rep["audits"]
    assert entry["kind"] == "membership" and entry["verdict"] == "info" and entry["unit"] == "membership"
    assert set(entry["attacks"]) == {"loss", "lira-offline", "lira-online", "rmia", "rmia-offline"}
    assert 0 <= entry["attacks"]["lira-online"]["auc"] <= 1 and entry["n_fits"] == 4
    html = next(tmp_path.rglob("report.html")).read_text()
    assert "membership" in html and "best attack" in html
    assert any(p.name.endswith("membership-roc.png") for p in tmp_path.rglob("*.png"))


def test_an_under_noised_model_is_caught_as_a_negative_control(tmp_path):
    common = {"kind": "membership", "dataset": "sparse", "n_reference": 2, "canaries": 600, "canary_kind": "ood"}
    rep = run([{**common, "model": {"name": "QuarterNoiseDPGDClassifier", "epsilon": 4.0, "steps": 30, "lr": 0.01},
                "expect": "violation"},
               {**common, "model": {"name": "DPGDLogisticClassifier", "epsilon": 4.0, "steps": 30, "lr": 0.01}}],
              tmp_path)
    caught, correct = rep["audits"]
    assert caught["audit_verdict"] == "violation" and caught["verdict"] == "pass"
    assert caught["epsilon_lb"] > 4.0
    assert correct["verdict"] == "pass" and correct["epsilon_lb"] <= 4.0


def test_record_reconstruction_entry(tmp_path):
    rep = run([{"kind": "record-reconstruction", "model": {"name": "Ridge", "alpha": 1.0}, "dataset": "diabetes",
                "index": 5}], tmp_path)
    (entry,) = rep["audits"]
    X, y, _ = load_model_dataset("diabetes")
    assert entry["exact"] and np.allclose(entry["reconstructed"], X[5], atol=1e-8)


@pytest.mark.parametrize("audit, message", [
    ({"kind": "membership", "model": {"name": "MLPClasifier"}}, "MLPClassifier"),
    ({"kind": "membership", "model": {"name": "MLPClassifier", "hidden_layer_size": [3]}}, "hidden_layer_size"),
    ({"kind": "membership", "model": {"name": "LogisticRegression"}, "dataset": "mnist"}, "mnist"),
    ({"kind": "membership", "model": {"name": "LogisticRegression"}, "canary_kind": "loud"}, "canary_kind"),
    ({"kind": "membership", "model": {"name": "LogisticRegression"}, "n_reference": 0}, "n_reference"),
    ({"kind": "record-reconstruction", "model": {"name": "MLPClassifier"}}, "no closed-form reconstruction"),
    ({"kind": "record-reconstruction", "model": {"name": "Ridge"}, "n_records": 50, "index": 50}, "index = 50"),
])
def test_bad_entries_are_refused_when_the_config_loads(audit, message):
    with pytest.raises(ConfigError, match=message):
        parse_config({"audits": [audit]})


def test_a_failing_entry_is_reported_and_the_others_still_run(tmp_path):
    # digits has 3 constant pixels: 10 out-of-distribution canaries cannot be placed.
    rep = run([{"kind": "membership", "model": {"name": "LogisticRegression", "max_iter": 200}, "dataset": "digits",
                "n_records": 200, "n_reference": 2, "canaries": 10, "canary_kind": "ood"},
               {"kind": "record-reconstruction", "model": {"name": "Ridge"}, "dataset": "diabetes", "index": 1}],
              tmp_path)
    failed, ok = rep["audits"]
    assert failed["verdict"] == "error" and "constant features" in failed["error"]
    assert ok["verdict"] == "info" and ok["exact"]
