"""The built-in task kinds end to end (small sizes): what each adapter runs and how its verdict is formed."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from privaudit.audit.app.config import ConfigError, ConfigTypeError, ConfigValueError, parse_config
from privaudit.audit.app.runner import run_config
from privaudit.mechanisms import GaussianMechanism


def run(audits, tmp_path, **kw):
    cfg = parse_config({"name": "kinds", "seed": 2, "audits": audits}, allow_imports=["my_estimators"])
    return run_config(cfg, out=tmp_path, figures=False, use_cache=False, **kw).report


def test_calibration_is_analytic_and_negative_controls_invert_the_verdict(tmp_path):
    classical10 = {"name": "gaussian", "epsilon": 10.0, "delta": 1e-5, "calibration": "classical"}
    rep = run([
        {"kind": "calibration", "mechanism": {"name": "gaussian", "epsilon": 1.0, "delta": 1e-5}},
        {"kind": "calibration", "mechanism": classical10},
        {"kind": "calibration", "mechanism": classical10, "expect": "violation"},
    ], tmp_path)
    a, b, c = rep["audits"]
    exact = GaussianMechanism(epsilon=10.0, delta=1e-5, calibration="classical").exact_epsilon(1e-5)
    assert a["verdict"] == "pass" and a["epsilon_exact"] == pytest.approx(1.0, rel=1e-6)
    assert b["verdict"] == "violation" and b["epsilon_exact"] == pytest.approx(exact, rel=1e-9) and exact > 10
    assert c["verdict"] == "pass" and c["audit_verdict"] == "violation" and c["expect"] == "violation"
    assert any("negative control" in n for n in c["notes"])
    assert rep["summary"]["status"] == "violation"


def test_tradeoff_worst_case_pair_and_explicit_pair(tmp_path):
    mech = {"name": "gaussian", "epsilon": 1.0, "delta": 1e-5}
    # same position (task 0) and seed: the worst-case pair of a 1-d Gaussian is (0, Δ), so the same numbers
    (a,) = run([{"kind": "tradeoff", "mechanism": mech, "n": 4000}], tmp_path / "a")["audits"]
    (b,) = run([{"kind": "tradeoff", "mechanism": mech, "x": [0.0], "x_prime": [1.0], "n": 4000}],
               tmp_path / "b")["audits"]
    assert a["epsilon_lb"] == b["epsilon_lb"] and a["fpr"] == b["fpr"] and a["verdict"] == b["verdict"] == "pass"
    assert a["epsilon_exact"] == pytest.approx(1.0, rel=1e-6) and 0 < a["epsilon_lb"] <= 1.0
    # scalar inputs (randomised response takes a category, not a vector)
    (rr,) = run([{"kind": "tradeoff", "mechanism": {"name": "randomized-response", "epsilon": 1.0},
                  "x": -1.0, "x_prime": 1.0, "n": 4000}], tmp_path / "rr")["audits"]
    assert rr["verdict"] == "pass" and 0 < rr["epsilon_lb"] <= 1.0
    # a different position in the file is a different child seed
    rep = run([{"kind": "calibration", "mechanism": mech}, {"kind": "tradeoff", "mechanism": mech, "n": 4000}],
              tmp_path / "c")
    assert rep["audits"][1]["fpr"] != a["fpr"]


def test_gdp_on_a_claim_without_mu_needs_assume_gaussian(tmp_path):
    """The classical σ at ε = 10 (exact ε 10.39) states (10, 1e-5) without μ: GDP is refused unless
    the config asserts the Gaussian curve, and then the false claim is caught."""
    classical10 = {"name": "gaussian", "epsilon": 10.0, "delta": 1e-5, "calibration": "classical"}
    entry = {"kind": "tradeoff", "mechanism": classical10, "estimator": "gdp", "n": 200_000}
    refused, caught = run([entry, {**entry, "assume_gaussian": True}], tmp_path)["audits"]
    assert refused["verdict"] == "error" and "assume_gaussian" in refused["error"]
    assert caught["verdict"] == "violation" and caught["epsilon_lb"] > 10


def test_bias_kind_with_a_user_sampler(tmp_path, monkeypatch):
    (tmp_path / "my_estimators.py").write_text(textwrap.dedent("""
        import numpy as np

        def draw(n, rng):
            return rng.normal([1.0, -2.0], 1.0, size=(n, 2))
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    # a "module:function" reference imports code: refused unless the user opts in for that module
    with pytest.raises(ConfigValueError, match="--allow-import my_estimators"):
        parse_config({"audits": [{"kind": "bias", "sampler": "my_estimators:draw", "target_value": [1.0, -2.0]}]})
    rep = run([
        {"kind": "bias", "sampler": "my_estimators:draw", "target_value": [1.0, -2.0], "n": 20000},
        {"kind": "bias", "sampler": "my_estimators:draw", "target_value": [1.2, -2.0], "n": 20000},
    ], tmp_path / "out")
    ok, biased = rep["audits"]
    assert ok["verdict"] == "pass" and biased["verdict"] == "fail"
    assert biased["bias"][0] == pytest.approx(-0.2, abs=5 * np.sqrt(1 / 20000))
    with pytest.raises(ConfigValueError, match="audits\\[0\\].sampler"):
        parse_config({"audits": [{"kind": "bias", "sampler": "my_estimators:nothing", "target_value": [0.0]}]},
                     allow_imports=["my_estimators"])


def test_learner_tables_are_validated(tmp_path):
    def learner(**table):
        return {"audits": [{"kind": "learner-tradeoff", "learner": table}]}

    with pytest.raises(ConfigError, match="did you mean 'ModulatedRegressor'"):
        parse_config(learner(name="ModulatedRegresor"))
    with pytest.raises(ConfigError, match="audits\\[0\\].learner.epsilom = 1.0; did you mean 'epsilon'"):
        parse_config(learner(name="ModulatedRegressor", epsilom=1.0))
    # keyword arguments forwarded by **kwargs to a base class are known too
    parse_config(learner(name="CondDPRegressor", epsilon=1.0, clip=0.5, switch_epoch=2))
    with pytest.raises(ConfigValueError, match="has no learner audit|unknown"):
        parse_config(learner(name="RROnBinsRegressor"))


def test_utility_params_are_checked_against_the_experiment(tmp_path):
    with pytest.raises(ConfigError, match="audits\\[0\\].params.smal = True; did you mean 'small'"):
        parse_config({"audits": [{"kind": "utility", "experiment": "iwp-figure1", "params": {"smal": True}}]})
    with pytest.raises(ConfigTypeError, match="audits\\[0\\].params.small"):
        parse_config({"audits": [{"kind": "utility", "experiment": "iwp-figure1", "params": {"small": "yes"}}]})
    with pytest.raises(ConfigError, match="random_state"):  # randomness comes from the run's seed only
        parse_config({"audits": [{"kind": "utility", "experiment": "iwp-figure1", "params": {"random_state": 3}}]})
    with pytest.raises(ConfigValueError, match="did you mean 'iwp-figure1'"):
        parse_config({"audits": [{"kind": "utility", "experiment": "iwp-figure"}]})


def test_tradeoff_domain_searches_the_worst_pair(tmp_path):
    """A mechanism broken only on (0, −1) passes on the pair a user would try and is caught by a domain search;
    a correct Laplace passes the same search."""
    broken = {"name": "privaudit.audit.testing.negative_controls:AsymmetricLaplace"}
    box = [[-1.0], [1.0]]
    audits = [
        {"kind": "tradeoff", "mechanism": broken, "x": [0.0], "x_prime": [1.0], "n": 20_000},
        {"kind": "tradeoff", "mechanism": broken, "domain": box, "n": 20_000},
        {"kind": "tradeoff", "mechanism": {"name": "laplace", "epsilon": 1.0}, "domain": box, "n": 20_000},
    ]
    cfg = parse_config({"name": "search", "seed": 4, "audits": audits},
                       allow_imports=["privaudit.audit.testing.negative_controls"])
    given, searched, correct = run_config(cfg, out=tmp_path, figures=False, use_cache=False).report["audits"]
    assert given["verdict"] == "pass"
    assert searched["verdict"] == "violation" and searched["epsilon_lb"] > 1.0
    assert any("search_pairs" in n and ("x'=[-" in n or "x=[-" in n) for n in searched["notes"]), searched["notes"]
    assert correct["verdict"] == "pass" and correct["epsilon_lb"] <= 1.0


def test_tradeoff_domain_table_and_neighbourhood_override(tmp_path):
    """domain as a table, and adjacency naming a neighbourhood (an override of the claim's), drive the search."""
    broken = {"name": "privaudit.audit.testing.negative_controls:AsymmetricLaplace"}
    audits = [{"kind": "tradeoff", "mechanism": broken, "n": 20_000, "adjacency": "linf<=1",
               "domain": {"kind": "box", "low": [-1.0], "high": [1.0]}}]
    cfg = parse_config({"name": "search", "seed": 4, "audits": audits},
                       allow_imports=["privaudit.audit.testing.negative_controls"])
    (searched,) = run_config(cfg, out=tmp_path, figures=False, use_cache=False).report["audits"]
    assert searched["verdict"] == "violation"
    assert any("under 'linf<=1'" in n for n in searched["notes"]), searched["notes"]


@pytest.mark.parametrize("extra, match", [
    ({"domain": {"kind": "boxes"}}, "unknown domain kind 'boxes'"),
    ({"domain": {"kind": "declared", "low": 0}}, "takes no other keys"),
    ({"domain": "box"}, "must be an array of numbers or a table"),
    ({"adjacency": "linf<=1"}, "overrides the claim's for a pair search"),
    ({"domain": [[-1.0], [1.0]], "adjacency": "ball"}, "adjacency = 'ball'"),
    ({"x": [0.0], "x_prime": [1.0], "domain": [[-1.0], [1.0]]}, "not both"),
    ({"domain": [[-1.0], [0.0], [1.0]]}, r"domain must be \[low, high\]"),
])
def test_tradeoff_domain_is_checked(extra, match):
    with pytest.raises(ConfigError, match=match):
        parse_config({"audits": [{"kind": "tradeoff", "mechanism": {"name": "laplace", "epsilon": 1.0}, **extra}]})


@pytest.mark.parametrize("domain, match", [([[1.0], [-1.0]], "domain must have low <= high"),
                                           ([[0.0], [float("nan")]], "domain must hold finite numbers")])
def test_tradeoff_domain_values_are_checked(domain, match):
    with pytest.raises(ConfigValueError, match=match):
        parse_config({"audits": [{"kind": "tradeoff", "mechanism": {"name": "laplace", "epsilon": 1.0},
                                  "domain": domain}]})
