"""One config path (issue 22): the CLI and the Python API load through load_config, with the same
precedence and guards, and preflight (which builds every component) runs once per run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from privaudit.audit.app import runner

from privaudit.audit.schema import components
from privaudit.audit.app.cli import main
from privaudit.audit.app.config import ConfigFileError, ConfigTypeError, ConfigValueError, load_config, parse_config
from privaudit.audit.schema.limits import ResourceLimitError

TRADEOFF = '[[audits]]\nkind = "tradeoff"\nmechanism = { name = "gaussian", epsilon = 1.0, delta = 1e-5 }\nn = 200\n'


def test_a_bare_preset_name_is_the_preset_in_the_api_as_on_the_command_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tradeoff").write_text("not toml [")
    (tmp_path / "reconstruction").mkdir()
    assert load_config("tradeoff").source == "preset:tradeoff"
    assert load_config("reconstruction").source == "preset:reconstruction"
    with pytest.raises(ConfigFileError, match="not valid TOML"):
        load_config("./tradeoff")
    with pytest.raises(ConfigFileError, match="not valid TOML"):
        load_config(Path("tradeoff"))  # a Path is a file
    with pytest.raises(ConfigFileError, match="is a directory"):
        load_config("./reconstruction")
    (tmp_path / "mine").write_text(TRADEOFF)  # a bare name that is no preset: the file
    assert load_config("mine").source == "mine"
    with pytest.raises(ConfigFileError, match="neither a config file nor a preset; did you mean 'tradeoff'"):
        load_config("tradof")


@pytest.mark.parametrize("data, error, needles", [
    ({"name": "a\x00b", "audits": [{"kind": "calibration", "mechanism": {"name": "laplace", "epsilon": 1.0}}]},
     ConfigValueError, ["name", "U+0000"]),
    ({"seed": 2**70, "audits": [{"kind": "calibration", "mechanism": {"name": "laplace", "epsilon": 1.0}}]},
     ConfigValueError, ["seed", "64-bit"]),
    ({"audits": [{"kind": "tradeoff", "mechanism": {"name": "modulated", "alpha": 0.2, "lam": 0.1, "omega": 1.0,
                                                    "dim": 1_000_000, "sigma": 1.0}}]},
     ResourceLimitError, ["audits[0].mechanism.dim = 1000000", "(--max-memory)"]),
    ({"audits": [{"kind": "bias-checks", "params": {"deep": [[[[[[[[[[[[[1.0]]]]]]]]]]]]]}}]},
     ConfigValueError, ["audits[0].params.deep", "nested"]),
    ([1, 2], ConfigTypeError, ["must be a table", "list"]),
])
def test_parse_config_applies_the_guards_of_a_file(data, error, needles):
    with pytest.raises(error) as info:
        parse_config(data, source="inline", max_memory=2**30)
    for needle in needles:
        assert needle in str(info.value), str(info.value)
    assert "(in inline)" in str(info.value)


def test_preflight_builds_each_component_once_per_run(tmp_path, monkeypatch, capsys):
    conf = tmp_path / "c.toml"
    conf.write_text(TRADEOFF)
    built, checks = [], []
    real_build, real_check = components.MECHANISMS.build, runner.check_buildable
    monkeypatch.setattr(components.MECHANISMS, "build", lambda table, path: built.append(path) or
                        real_build(table, path))
    monkeypatch.setattr(runner, "check_buildable", lambda tasks: checks.append(len(tasks)) or real_check(tasks))
    assert main(["run", str(conf), "--out", str(tmp_path / "out"), "--no-cache"]) == 0
    assert checks == [1]  # preflight ran once, in the CLI; run_config reused it
    assert built == ["audits[0].mechanism", "mechanism"]  # once to check it, once in the task
    capsys.readouterr()
    # the Python API runs preflight itself, and again when handed one made for other arguments
    config = load_config(conf)
    checked = runner.preflight(config, out=tmp_path / "out")
    runner.run_config(config, out=tmp_path / "out", use_cache=False, figures=False, checked=checked)
    assert checks == [1, 1]
    runner.run_config(config, out=tmp_path / "other", use_cache=False, figures=False, checked=checked)
    assert checks == [1, 1, 1]
    assert not checked.covers(config, tmp_path / "out", True, None)


def test_attackers_are_validated_at_load_and_a_list_runs(tmp_path, capsys):
    conf = tmp_path / "pick.toml"
    conf.write_text(TRADEOFF.replace("n = 200", 'n = 2000\nattacker = ["likelihood-ratio", "atom"]\n'
                                                'x = [0.0]\nx_prime = [1.0]'))
    config = load_config(conf)
    assert config.audits[0].params["attacker"] == ["likelihood-ratio", "atom"]  # kept as given
    assert load_config(_write(tmp_path, TRADEOFF + 'attacker = "atom"\n')).audits[0].params["attacker"] == "atom"
    assert main(["run", str(conf), "--out", str(tmp_path / "out"), "--no-cache", "--json"]) == 0
    entry = json.loads((tmp_path / "out" / "pick" / "report.json").read_text())["audits"][0]
    assert entry["verdict"] == "pass" and set(entry["attackers_tried"]) == {"likelihood-ratio", "atom"}
    with pytest.raises(ConfigValueError, match=r"unknown audits\[0\]\.attacker = 'os:system'"):
        parse_config({"audits": [{"kind": "tradeoff", "mechanism": {"name": "laplace", "epsilon": 1.0},
                                  "attacker": "os:system"}]})
    with pytest.raises(ConfigValueError, match=r"audits\[0\]\.attacker = 'naive' is a reconstruction attacker"):
        parse_config({"audits": [{"kind": "tradeoff", "mechanism": {"name": "laplace", "epsilon": 1.0},
                                  "attacker": "naive"}]})
    with pytest.raises(ConfigTypeError, match=r"audits\[0\]\.attacker must be a name or a non-empty array of names"):
        parse_config({"audits": [{"kind": "tradeoff", "mechanism": {"name": "laplace", "epsilon": 1.0},
                                  "attacker": ["atom", 3]}]})


def _write(tmp_path, text, name="c2.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path
