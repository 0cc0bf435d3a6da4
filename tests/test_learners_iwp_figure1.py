"""Smoke and shape tests of the seed-001 Figure 1 experiment (audit/experiments/iwp_figure1.py)."""

import json

import numpy as np
import pytest

from privaudit.audit.studies.experiments.iwp_figure1 import METHODS, run_iwp_figure1
from privaudit.audit.results import ExperimentResult, to_jsonable
from privaudit.mechanisms.validation import InvalidParameterError


@pytest.mark.parametrize("variant", ["synthetic", "logistic", "real"])
def test_small_run_shapes(variant):
    res = run_iwp_figure1(small=True, variant=variant, rng=1)
    assert isinstance(res, ExperimentResult) and res.verdict == "info"
    names = [k for k in res.panels if "averaged" not in k]
    assert len(names) == 2 and len(res.panels) == 4
    for name in names:
        panel = res.panels[name]
        assert set(panel) == set(METHODS)
        for curve in panel.values():
            assert len(curve["x"]) == len(curve["y"]) == len(curve["yerr"]) > 0
            assert np.all(np.isfinite(curve["y"])) and np.all(np.diff(curve["x"]) > 0)
    assert len(res.table) == 2 and all(np.isfinite(row["sigma"]) for row in res.table)
    json.dumps(to_jsonable(res.to_dict()))  # strict-JSON serialisable


def test_small_run_is_seeded():
    a = run_iwp_figure1(small=True, rng=3)
    b = run_iwp_figure1(small=True, rng=3)
    assert a.table == b.table


def test_noisy_bias_visible_on_real_variant():
    """Fair data (ε = 10): noisy SGD ends farther from SGD-real than IWP-SGD's averaged model."""
    res = run_iwp_figure1(variant="real", epsilon=10.0, n_repeats=8, rng=0)
    row = res.table[0]
    noisy, iwp = METHODS[1], METHODS[2]
    assert row[f"{noisy}: averaged-model excess"] > 3 * abs(row[f"{iwp}: averaged-model excess"])
    assert row["noisy: ||mean θ − θ̃*||"] < row["||θ* − θ̃*|| (bias of the noisy objective)"] / 2


def test_bad_arguments():
    with pytest.raises(InvalidParameterError, match="variant"):
        run_iwp_figure1(variant="folktables", small=True)
    with pytest.raises(InvalidParameterError, match="pair"):
        run_iwp_figure1(p=(2, 10), epsilon=(2.0,), small=True)
    with pytest.raises(InvalidParameterError, match="loss"):
        run_iwp_figure1(variant="logistic", loss="exponential", small=True)
