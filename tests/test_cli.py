"""The privaudit command line: help, list, run, --json, exit codes, config errors naming key and value."""

from __future__ import annotations

import json
import shutil
import sysconfig
import subprocess
import sys
import textwrap

import pytest

from privaudit.audit.app.cli import main
from privaudit.audit.app.config import Field
from privaudit.audit.app.tasks import register_task_kind, unregister_task_kind


def verdict_task(params, rng):
    """Returns the configured verdict with a number drawn from the task's generator."""
    return {"kind": "stub", "verdict": params["verdict"], "value": float(rng.standard_normal())}


@pytest.fixture(autouse=True)
def stub_kind():
    register_task_kind("stub-verdict", fields={"verdict": Field("str", "pass")}, force=True)(verdict_task)
    yield
    unregister_task_kind("stub-verdict")


def config(tmp_path, *verdicts, name="c"):
    p = tmp_path / f"{name}.toml"
    p.write_text("seed = 1\n" + "".join(f'[[audits]]\nkind = "stub-verdict"\nverdict = "{v}"\n' for v in verdicts))
    return p


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv", [["--help"], ["run", "--help"], ["list", "--help"], ["bench", "--help"],
                                  ["bench", "attackers", "--help"], ["bench", "mia", "--help"]])
def test_help_on_every_command(argv, capsys):
    try:
        code = main(argv)  # `bench attackers --help` is answered by the benchmark's parser, which returns
    except SystemExit as exc:
        code = exc.code
    assert code == 0
    out = capsys.readouterr().out
    assert "usage: privaudit" in out or "usage:" in out and ("attackers" in out or "mia" in out)


def test_run_help_documents_options_and_exit_codes(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = capsys.readouterr().out
    for opt in ("--out", "--seed", "--samples", "--jobs", "--scheduler", "--json", "CONFIG|PRESET"):
        assert opt in out
    assert "Exit codes: 0" in out.replace("\n", " ")


def test_exit_codes_and_json_summary(tmp_path, capsys):
    code, out, _ = run(capsys, "run", config(tmp_path, "pass", "info"), "--out", tmp_path / "r", "--json")
    assert code == 0
    summary = json.loads(out)  # stdout holds nothing but the JSON summary
    assert summary["status"] == "pass" and summary["exit_code"] == 0 and summary["executed"] == [0, 1]
    assert (tmp_path / "r/c/report.json").is_file() and (tmp_path / "r/c/report.html").is_file()
    assert summary["report"] == str(tmp_path / "r/c/report.json")
    assert run(capsys, "run", config(tmp_path, "pass", "violation"), "--out", tmp_path / "r")[0] == 1
    assert run(capsys, "run", config(tmp_path, "fail", name="f"), "--out", tmp_path / "r")[0] == 1


def test_seed_and_samples_options_reach_the_tasks(tmp_path, capsys):
    conf = config(tmp_path, "pass")
    _, a, _ = run(capsys, "run", conf, "--out", tmp_path / "a", "--json", "--seed", "5")
    _, b, _ = run(capsys, "run", conf, "--out", tmp_path / "b", "--json", "--seed", "6")
    ra = json.loads((tmp_path / "a/c/report.json").read_text())
    rb = json.loads((tmp_path / "b/c/report.json").read_text())
    assert ra["seed"] == 5 and rb["seed"] == 6 and ra["audits"][0]["value"] != rb["audits"][0]["value"]
    run(capsys, "run", conf, "--out", tmp_path / "a", "--samples", "0.25")
    assert json.loads((tmp_path / "a/c/report.json").read_text())["samples"] == 0.25


@pytest.mark.parametrize("line, key, value", [
    ('verdict = "pass"\nverdit = "x"', "audits[0].verdit", "'x'"),
    ('verdict = 3', "audits[0].verdict", "3"),
])
def test_broken_config_exits_2_naming_key_and_value(tmp_path, capsys, line, key, value):
    p = tmp_path / "bad.toml"
    p.write_text(f'[[audits]]\nkind = "stub-verdict"\n{line}\n')
    code, out, err = run(capsys, "run", p, "--out", tmp_path)
    assert code == 2 and out == ""
    assert key in err and value in err and err.startswith("privaudit: error:")


@pytest.mark.parametrize("body, needles", [
    ('seed = -3\n[[audits]]\nkind = "stub-verdict"\n', ["seed", "-3"]),
    ('[[audits]]\nkind = "tradeof"\n', ["audits[0].kind", "'tradeof'", "did you mean 'tradeoff'"]),
    ('[[audits]]\nkind = "tradeoff"\nmechanism = { name = "gaussian", epsilon = -1.0, delta = 1e-5 }\n',
     ["audits[0].mechanism.epsilon", "-1.0"]),
    ('[[audits]]\nkind = "tradeoff"\nmechanism = { name = "gaussian", sigma = 1.0 }\nconfidence = 2\n',
     ["audits[0].confidence", "2"]),
    ('[[audits]]\nkind = "tradeoff"\nmechanism = { name = "gaussian", sigma = 1.0 }\nx = [0.0]\n',
     ["audits[0].x_prime"]),
    ('[[audits\nkind = 1', ["not valid TOML"]),
])
def test_more_broken_configs(tmp_path, capsys, body, needles):
    p = tmp_path / "bad.toml"
    p.write_text(body)
    code, _, err = run(capsys, "run", p, "--out", tmp_path)
    assert code == 2
    for n in needles:
        assert n in err


def test_missing_config_and_unknown_preset_exit_2(tmp_path, capsys):
    code, _, err = run(capsys, "run", tmp_path / "none.toml")
    assert code == 2 and "none.toml" in err and "does not exist" in err
    code, _, err = run(capsys, "run", "tradof")
    assert code == 2 and "did you mean 'tradeoff'" in err


@pytest.mark.parametrize("argv", [["run"], ["run", "x", "--jobs", "0"], ["run", "x", "--samples", "-1"],
                                  ["run", "x", "--seed", "abc"], ["frobnicate"], []])
def test_usage_errors_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert "usage: privaudit" in capsys.readouterr().err


def test_bad_scheduler_exits_2(tmp_path, capsys):
    code, _, err = run(capsys, "run", config(tmp_path, "pass"), "--out", tmp_path, "--scheduler", "nohost")
    assert code == 2 and "--scheduler" in err and "'nohost'" in err


def test_list(capsys):
    code, out, _ = run(capsys, "list", "--json")
    data = json.loads(out)
    assert code == 0 and set(data) == {"presets", "kinds", "mechanisms", "learners", "attackers"}
    assert "quickstart" in data["presets"] and data["presets"]["quickstart"]
    assert {"tradeoff", "reconstruction", "bias", "utility"} <= set(data["kinds"])
    assert {"gaussian", "laplace", "randomized-response", "modulated"} <= set(data["mechanisms"])
    assert "ModulatedRegressor" in data["learners"]
    code, out, _ = run(capsys, "list", "presets")
    assert code == 0 and out.startswith("presets:") and "mechanisms:" not in out


def test_console_script_is_installed(tmp_path):
    # Installing privaudit (which the suite needs to import it) installs the script beside the interpreter.
    exe = shutil.which("privaudit") or shutil.which("privaudit", path=sysconfig.get_path("scripts"))
    assert exe is not None, "the privaudit console script is not installed"
    done = subprocess.run([exe, "run", str(tmp_path / "missing.toml")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "missing.toml" in done.stderr


def _builds_wheels_offline() -> bool:
    """Whether this interpreter's setuptools can build our wheel without build isolation.

    pyproject.toml needs setuptools >= 68; bdist_wheel is part of setuptools from 70.1 and
    needs the ``wheel`` package before (a plain ``python -m venv`` on 3.11 has 65.5 and no
    ``wheel``: "invalid command 'bdist_wheel'").
    """
    import importlib.util

    try:
        import setuptools
    except ImportError:
        return False
    version = tuple(int(part) for part in setuptools.__version__.split(".")[:2] if part.isdigit())
    return version >= (70, 1) or (version >= (68, 0) and importlib.util.find_spec("wheel") is not None)


@pytest.mark.slow
def test_presets_ship_in_the_wheel(tmp_path):
    """Presets are package data: a regular (non-editable) install ships and runs every preset.

    Works from any interpreter, a virtualenv included: the wheel is built offline when this
    interpreter's setuptools can (the ``test`` extra asks for >= 70.1), else with pip's
    build isolation; the wheel is installed into a fresh venv *without* system site
    packages, which borrows the running interpreter's import path (where the dependencies
    are) through a ``.pth`` file read after its own site-packages.
    """
    import zipfile
    from pathlib import Path

    from privaudit.audit.app.config import available_presets

    root = Path(__file__).resolve().parents[1]
    src = tmp_path / "src"  # build from a copy: setuptools writes build/ and *.egg-info next to the sources
    src.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        if (root / name).exists():
            shutil.copy(root / name, src / name)
    for folder in ("audit", "mechanisms", "learners", "attacks"):
        shutil.copytree(root / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__"))
    isolation = ["--no-build-isolation"] if _builds_wheels_offline() else []
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation, "-q",
                           "-w", str(tmp_path), str(src)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    wheel = next(tmp_path.glob("privaudit-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for preset in available_presets():
        assert f"privaudit/audit/presets/{preset}.toml" in names
    assert "privaudit/audit/app/cli.py" in names
    # Every package of the source tree ships (setup.py finds them under pyproject's package-dir folders).
    packages = [init.parent.relative_to(src).as_posix() for folder in ("audit", "mechanisms", "learners", "attacks")
                for init in (src / folder).rglob("__init__.py")]
    missing = [p for p in packages if f"privaudit/{p}/__init__.py" not in names]
    assert not missing, f"packages missing from the wheel (see setup.py): {missing}"
    entry = [n for n in names if n.endswith("entry_points.txt")]
    text = zipfile.ZipFile(wheel).read(entry[0]).decode()
    assert "privaudit = privaudit.audit.app.cli:main" in textwrap.dedent(text)

    # Installed (not editable) in a fresh venv. --system-site-packages would borrow the
    # *base* interpreter's packages, not those of a virtualenv running this test, so the
    # dependencies come from the import path of the interpreter running this test instead.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    pip = subprocess.run([str(venv / "bin/python"), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                          str(wheel)], capture_output=True, text=True, timeout=300)
    assert pip.returncode == 0, pip.stderr
    # Then every import location of this process (site directories, .pth and PYTHONPATH
    # entries) is appended after the venv's own site-packages, where the wheel now is. (Added
    # before the install, pip would see this process's privaudit and skip the wheel.)
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    purelib = subprocess.run([str(venv / "bin/python"), "-c", code], capture_output=True, text=True, check=True,
                             timeout=60).stdout.strip()
    borrowed = [p for p in dict.fromkeys(sys.path) if p and Path(p).is_dir()]
    Path(purelib, "_privaudit_test_dependencies.pth").write_text("\n".join(borrowed) + "\n")
    where = subprocess.run([str(venv / "bin/python"), "-c", "import privaudit.audit.app.config as c; print(c.__file__)"],
                           capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert where.stdout.strip().startswith(str(venv)), where.stdout + where.stderr  # the installed copy
    listed = subprocess.run([str(venv / "bin/privaudit"), "list", "presets", "--json"], capture_output=True,
                            text=True, timeout=120, cwd=tmp_path)
    assert listed.returncode == 0 and set(json.loads(listed.stdout)["presets"]) == set(available_presets())
    ran = subprocess.run([str(venv / "bin/privaudit"), "run", "reconstruction", "--samples", "0.05", "--out",
                          str(tmp_path / "out"), "--json"], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert ran.returncode in (0, 1), ran.stderr[-2000:]
    assert (tmp_path / "out/reconstruction/report.html").is_file()


def two_results(params, rng):
    """A catalogue-like kind: one task, two audits."""
    return [{"kind": "stub", "target": f"r{i}", "verdict": "pass", "value": float(rng.standard_normal())}
            for i in range(2)]


def test_summary_counts_audits_and_tasks_separately(tmp_path, capsys):
    register_task_kind("stub-two", fields={"tag": Field("int", 0)}, force=True)(two_results)
    try:
        p = tmp_path / "two.toml"
        p.write_text("".join(f'[[audits]]\nkind = "stub-two"\ntag = {i}\n' for i in range(3)))
        code, out, _ = run(capsys, "run", p, "--out", tmp_path / "r")
        assert code == 0 and "(6 audits from 3 tasks," in out and "cache" not in out.splitlines()[-1]
        code, out, _ = run(capsys, "run", p, "--out", tmp_path / "r")
        assert "(6 audits from 3 tasks; 3 of the tasks (6 audits) from the cache," in out
        code, out, _ = run(capsys, "run", p, "--out", tmp_path / "r", "--json")
        summary = json.loads(out)
        assert summary["tasks"] == 3 and len(summary["audits"]) == 6 and all(a["from_cache"] for a in summary["audits"])
    finally:
        unregister_task_kind("stub-two")
