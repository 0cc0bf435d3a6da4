"""Configuration files: validation into frozen dataclasses, errors naming key and value, presets, seeds."""

from __future__ import annotations

import dataclasses
import textwrap

import numpy as np
import pytest

from privaudit.audit.app import config as cfg
from privaudit.audit.app.config import (
    ConfigError,
    ConfigFileError,
    ConfigKeyError,
    ConfigTypeError,
    ConfigValueError,
    load_config,
    parse_config,
)
from privaudit.audit.kinds import get_kind as get_task_kind
from privaudit.audit.app.tasks import plan_tasks, scale_params
from privaudit.mechanisms import GaussianMechanism, InvalidParameterError, ParameterTypeError

GOOD = """
name = "demo"
description = "two Gaussian trade-off audits"
seed = 7
samples = 0.5

[[audits]]
kind = "tradeoff"
target = "analytic"
mechanism = { name = "gaussian", epsilon = 1.0, delta = 1e-5 }
x = [0.0]
x_prime = [1.0]
n = 4000

[[audits]]
kind = "tradeoff"
mechanism = { name = "laplace", epsilon = 0.5 }
x = [0.0]
x_prime = [1.0]
"""


def write(tmp_path, text, name="c.toml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def test_valid_file_becomes_frozen_dataclasses(tmp_path):
    c = load_config(write(tmp_path, GOOD))
    assert (c.name, c.seed, c.samples, len(c.audits)) == ("demo", 7, 0.5, 2)
    a0, a1 = c.audits
    assert a0.target == "analytic" and a0.params["n"] == 4000 and a0.params["confidence"] == 0.95
    assert a1.params["n"] == get_task_kind("tradeoff").fields["n"].default  # default filled in
    assert a1.target.startswith("laplace(")  # default label derived from the mechanism
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.seed = 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        a0.kind = "bias"
    assert c.to_dict()["audits"][0]["mechanism"] == {"name": "gaussian", "epsilon": 1.0, "delta": 1e-5}


def test_name_defaults_to_file_stem(tmp_path):
    c = load_config(write(tmp_path, GOOD.replace('name = "demo"\n', ""), "my-audit.toml"))
    assert c.name == "my-audit"


def _err(tmp_path, text):
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, text))
    return info.value


def test_unknown_top_level_key_has_hint(tmp_path):
    e = _err(tmp_path, GOOD.replace("seed = 7", "sed = 7"))
    assert isinstance(e, ConfigKeyError) and isinstance(e, ValueError)
    assert "sed = 7" in str(e) and "did you mean 'seed'" in str(e) and "c.toml" in str(e)


def test_unknown_audit_key_has_hint(tmp_path):
    e = _err(tmp_path, GOOD.replace("n = 4000", "samplez = 4000"))
    assert isinstance(e, ConfigKeyError)
    assert "audits[0].samplez = 4000" in str(e) and "did you mean 'samples'" not in str(e)
    e = _err(tmp_path, GOOD.replace("x_prime = [1.0]\nn = 4000", "x_prim = [1.0]\nn = 4000"))
    assert "audits[0].x_prim" in str(e) and "did you mean 'x_prime'" in str(e)


def test_unknown_mechanism_parameter_has_hint(tmp_path):
    e = _err(tmp_path, GOOD.replace("epsilon = 1.0, delta", "epsilom = 1.0, delta"))
    assert isinstance(e, ConfigKeyError)
    assert "audits[0].mechanism.epsilom = 1.0" in str(e) and "did you mean 'epsilon'" in str(e)


def test_wrong_type_is_a_type_error_naming_key_and_value(tmp_path):
    e = _err(tmp_path, GOOD.replace("n = 4000", 'n = "many"'))
    assert isinstance(e, ConfigTypeError) and isinstance(e, TypeError) and isinstance(e, ParameterTypeError)
    assert "audits[0].n" in str(e) and "'many'" in str(e)
    e = _err(tmp_path, GOOD.replace("x = [0.0]\nx_prime = [1.0]\nn = 4000", 'x = ["a"]\nx_prime = [1.0]'))
    assert isinstance(e, ConfigTypeError) and "audits[0].x" in str(e) and "['a']" in str(e)
    e = _err(tmp_path, GOOD.replace("seed = 7", "seed = 1.5"))
    assert isinstance(e, ConfigTypeError) and "seed = 1.5" in str(e)


def test_out_of_range_is_a_value_error_naming_key_and_value(tmp_path):
    e = _err(tmp_path, GOOD.replace("n = 4000", "n = 4000\nconfidence = 1.5"))
    assert isinstance(e, ConfigValueError) and isinstance(e, InvalidParameterError)
    assert "audits[0].confidence" in str(e) and "1.5" in str(e)
    e = _err(tmp_path, GOOD.replace("n = 4000", "n = 3"))
    assert "audits[0].n" in str(e) and "= 3" in str(e)
    e = _err(tmp_path, GOOD.replace("samples = 0.5", "samples = -2.0"))
    assert "samples = -2.0" in str(e)
    e = _err(tmp_path, GOOD.replace("epsilon = 1.0, delta", "epsilon = -1.0, delta"))
    assert isinstance(e, ConfigValueError)
    assert "audits[0].mechanism.epsilon = -1.0" in str(e)  # named at load, nothing constructed


def test_choices_unknown_kind_and_mechanism(tmp_path):
    e = _err(tmp_path, GOOD.replace('kind = "tradeoff"\ntarget', 'kind = "tradoff"\ntarget'))
    assert "audits[0].kind = 'tradoff'" in str(e) and "did you mean 'tradeoff'" in str(e)
    e = _err(tmp_path, GOOD.replace('name = "gaussian"', 'name = "gausian"'))
    assert "audits[0].mechanism.name = 'gausian'" in str(e) and "did you mean 'gaussian'" in str(e)
    e = _err(tmp_path, GOOD.replace("n = 4000", 'n = 4000\nestimator = "cp"'))
    assert "audits[0].estimator" in str(e) and "'cp'" in str(e)


def test_missing_keys(tmp_path):
    e = _err(tmp_path, GOOD.replace('mechanism = { name = "gaussian", epsilon = 1.0, delta = 1e-5 }\n', ""))
    assert isinstance(e, ConfigKeyError) and "missing required key audits[0].mechanism" in str(e)
    e = _err(tmp_path, GOOD.replace("x = [0.0]\nx_prime = [1.0]\nn = 4000", "x_prime = [1.0]"))
    assert isinstance(e, ConfigKeyError) and "audits[0].x" in str(e) and "give both x and x_prime" in str(e)
    e = _err(tmp_path, 'seed = 1\n')
    assert "missing required key audits" in str(e)


def test_missing_file_bad_toml_and_unknown_preset(tmp_path):
    with pytest.raises(ConfigFileError, match="nothere.toml"):
        load_config(tmp_path / "nothere.toml")
    e = _err(tmp_path, "seed = = 1")
    assert isinstance(e, ConfigFileError) and "not valid TOML" in str(e)
    with pytest.raises(ConfigFileError, match="did you mean 'quickstart'"):
        load_config("quickstrat")


@pytest.mark.parametrize("name", cfg.available_presets())
def test_every_preset_validates(name):
    c = load_config(name)
    assert c.name == name and c.source == f"preset:{name}" and c.audits
    assert len(plan_tasks(c)) == len(c.audits)


def test_required_presets_ship():
    assert {"quickstart", "tradeoff", "reconstruction", "bias", "modulated-figure1", "iwp-figure1",
            "conddp-synthetic", "conddp-real", "conddp-mlp"} <= set(cfg.available_presets())


def test_replace_validates_overrides(tmp_path):
    c = load_config(write(tmp_path, GOOD))
    assert c.replace(seed=11, samples=None).seed == 11 and c.replace(seed=None).seed == 7
    with pytest.raises(ConfigValueError, match="seed"):
        c.replace(seed=-1)
    with pytest.raises(ConfigTypeError, match="samples"):
        c.replace(samples="lots")


def test_samples_scale_sample_sizes_only(tmp_path):
    c = load_config(write(tmp_path, GOOD))
    kind = get_task_kind("tradeoff")
    scaled = scale_params(kind, c.audits[0].params, 0.5)
    assert scaled["n"] == 2000 and scaled["confidence"] == 0.95 and scaled["x"] == [0.0]
    assert scale_params(kind, c.audits[0].params, 1e-9)["n"] == kind.fields["n"].low  # floored at the minimum
    tasks = plan_tasks(c)  # the file's samples = 0.5 applies
    assert tasks[0].params["n"] == 2000


def test_task_generators_are_spawned_children_of_the_root_seed(tmp_path):
    c = load_config(write(tmp_path, GOOD))
    tasks = plan_tasks(c)
    children = np.random.SeedSequence(c.seed).spawn(len(tasks) + 3)
    for t in tasks:
        ref = np.random.default_rng(children[t.index]).standard_normal(5)
        np.testing.assert_array_equal(t.rng().standard_normal(5), ref)
    # keys: content hashes, distinct per task and stable across loads, changed by the seed
    assert len({t.key for t in tasks}) == len(tasks)
    assert [t.key for t in plan_tasks(load_config(write(tmp_path, GOOD)))] == [t.key for t in tasks]
    assert plan_tasks(c.replace(seed=8))[0].key != tasks[0].key


def test_mechanism_table_builds_the_mechanism(tmp_path):
    from privaudit.audit.schema.components import MECHANISMS

    c = load_config(write(tmp_path, GOOD))
    m = MECHANISMS.build(c.audits[0].params["mechanism"], "mechanism")
    ref = GaussianMechanism(epsilon=1.0, delta=1e-5)
    assert isinstance(m, GaussianMechanism) and m.sigma == ref.sigma and m.claim == ref.claim


def test_parse_config_accepts_dicts():
    c = parse_config({"audits": [{"kind": "tradeoff", "mechanism": {"name": "gaussian", "sigma": 2.0},
                                  "x": [0.0], "x_prime": [1.0]}]}, name="inline")
    assert c.name == "inline" and c.audits[0].params["mechanism"]["sigma"] == 2.0
    audits = [{"kind": "calibration", "mechanism": {"name": "laplace", "epsilon": 1.0}}]
    with pytest.raises(ConfigValueError, match=r"name must be a plain folder name, got name = '\.\./escape'"):
        parse_config({"name": "../escape", "audits": audits})


@pytest.mark.parametrize("x, why", [("[]", "must not be empty"), ("[nan]", "finite numbers only"),
                                    ("[inf]", "finite numbers only"), ("[[1.0], [1.0, 2.0]]", "rectangular")])
def test_arrays_must_be_finite_rectangular_and_non_empty(tmp_path, x, why):
    e = _err(tmp_path, GOOD.replace("x = [0.0]\nx_prime = [1.0]\nn = 4000", f"x = {x}\nx_prime = [1.0]\nn = 4000"))
    assert isinstance(e, ConfigValueError) and why in str(e) and "audits[0].x = " in str(e)
