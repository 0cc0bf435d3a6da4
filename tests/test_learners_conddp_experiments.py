"""Smoke runs of the seed 002 experiments (small=True); structure and sanity, not outcomes."""

import json
import math

import numpy as np
import pytest

from privaudit.audit.results import ExperimentResult

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("name", ["run_conddp_synthetic", "run_conddp_real", "run_conddp_mlp"])
def test_small_experiment_runs(name):
    from privaudit.audit.studies.experiments import conddp

    res = getattr(conddp, name)(small=True, rng=3)
    assert isinstance(res, ExperimentResult) and res.panels and res.table
    json.dumps(res.to_dict())  # strict-JSON serialisable
    methods = {row["method"] for row in res.table if "method" in row}
    assert {"DP-SGD"} <= methods and ({"Cond-DP"} & methods or {"Switch-Cond-DP"} & methods)
    for row in res.table:
        if "val_mse_mean" in row:
            assert np.isfinite(row["val_mse_mean"]) and row["val_mse_std"] >= 0
    # non-private DP-SGD is at least as good as its ε = 0.5/1 private version on the same setting
    by = {(r["setting"], r["method"], r["epsilon"]): r["val_mse_mean"] for r in res.table if "method" in r}
    for (setting, method, eps), v in by.items():
        if method == "DP-SGD" and eps != "inf" and (setting, method, "inf") in by:
            assert by[(setting, method, "inf")] <= v * 1.05


def test_synthetic_panels_include_spectra():
    from privaudit.audit.studies.experiments.conddp import run_conddp_synthetic

    res = run_conddp_synthetic(small=True, rng=4)
    spectra = res.panels["singular spectra"]
    for p_label, curve in spectra.items():
        p = float(p_label.split("=")[1])
        y = np.asarray(curve["y"])
        np.testing.assert_allclose(y / y[0], 1.0 / np.arange(1, y.size + 1) ** p, rtol=1e-12)
    assert any("Theory check" in n for n in res.notes)
    assert math.isfinite(res.table[-1]["ratio_cond_over_dpsgd"])
