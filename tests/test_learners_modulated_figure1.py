"""Smoke test of the modulated Figure-1 experiment (small size)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from privaudit.audit.studies.experiments.modulated_figure1 import METHODS, run_modulated_figure1
from privaudit.audit.results import ExperimentResult
from privaudit.learners.datasets import PAPER_OLS_R2
from privaudit.mechanisms.validation import InvalidParameterError


def test_small_run_structure_and_determinism():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = run_modulated_figure1(small=True, rng=3)
        again = run_modulated_figure1(small=True, rng=3)
    assert isinstance(res, ExperimentResult) and res.kind == "utility"
    assert set(res.panels) == {"modechoice", "co2"}
    for task, panel in res.panels.items():
        assert set(panel) == set(METHODS)
        for s in panel.values():
            assert len(s["x"]) == len(s["y"]) == len(s["yerr"]) == len(s["mean"]) == 2 and all(np.isfinite(s["y"]))
            assert all(lo <= med for lo, med in zip(s["min"], s["y"]))
        assert panel == again.panels[task]
    for row in res.table:
        assert row["paper_ols_r2"] == PAPER_OLS_R2[row["task"]]
        assert row["measured_ols_r2"] == pytest.approx(res.reference[f"{row['task']}: OLS"], abs=1e-4)
        assert {"iterative_hyper", "one-shot_hyper", "dp-sgd_hyper"} <= set(row)
    assert res.notes and res.notes[0].startswith("Measured pattern")
    res.to_dict()  # JSON-safe


def test_bad_arguments():
    with pytest.raises(InvalidParameterError, match="task"):
        run_modulated_figure1(tasks=("nope",), small=False, epsilons=(1.0,), n_repeats=1)
    with pytest.raises(InvalidParameterError, match="statistic"):
        run_modulated_figure1(small=True, statistic="mode")
    with pytest.raises(InvalidParameterError, match="simulation"):
        run_modulated_figure1(small=True, simulation="auto")
    with pytest.raises(InvalidParameterError, match="grids"):
        run_modulated_figure1(tasks=("modechoice",), epsilons=(1.0,), grids={"iterative": [{"step": 1.0}]})
