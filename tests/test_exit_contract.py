"""The exit-code contract, case by case (issue 15): every bad input is exit 2, naming key and value, before work.

Each configuration below is one that used to give a traceback, exit 1, a PASS, or an
allocation of many GiB. Each must now be refused by ``privaudit run`` with exit code 2,
a one-line ``privaudit: error:`` message containing the key path and the value, no
traceback, and no report written (nothing ran). ``--out`` problems, same-name clashes,
preset resolution, broken pipes and the bench's ``--out`` are the CLI edges of issue 16.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from privaudit.audit.app.cli import UNEXPECTED, main

GAUSS = 'mechanism = { name = "gaussian", epsilon = 1.0, delta = 1e-5 }'


def tradeoff(*lines: str, mechanism: str = GAUSS) -> str:
    return "\n".join(["[[audits]]", 'kind = "tradeoff"', mechanism, "n = 200", *lines]) + "\n"


CASES = [
    ("list in a component table", tradeoff(mechanism='mechanism = { name = "gaussian", epsilon = [1.0, 2.0] }'),
     ["audits[0].mechanism.epsilon", "[1.0, 2.0]"]),
    ("TOML nested 1000 deep", "x = " + "[" * 1000 + "]" * 1000 + "\n", ["x (line 1)", "[[["]),
    ("1000 dotted keys", "a." + ".".join(f"k{i}" for i in range(1000)) + " = 1\n", ["a.k0.k1", "nested"]),
    ("integer beyond float range", tradeoff(mechanism='mechanism = { name = "gaussian", epsilon = ' + "9" * 400
                                            + ", delta = 1e-5 }"), ["audits[0].mechanism.epsilon", "999"]),
    ("randomized response at 1e308", tradeoff(mechanism='mechanism = { name = "randomized-response", '
                                                        'epsilon = 1e308 }'), ["audits[0].mechanism", "1e+308"]),
    ("Laplace sensitivity 5e-324", tradeoff(mechanism='mechanism = { name = "laplace", epsilon = 1.0, '
                                                      'sensitivity = 5e-324 }'), ["audits[0].mechanism", "5e-324"]),
    ("modulated dim = 1e6", tradeoff(mechanism='mechanism = { name = "modulated", alpha = 0.2, lam = 0.1, '
                                               'omega = 1.0, dim = 1000000, epsilon = 1.0, delta = 1e-5 }'),
     ["audits[0].mechanism.dim", "1000000", "memory limit"]),
    ("builtins:int", tradeoff(mechanism='mechanism = { name = "builtins:int" }'),
     ["audits[0].mechanism.name", "'builtins:int'", "--allow-import"]),
    ("a bare colon", tradeoff(mechanism='mechanism = { name = ":" }'), ["audits[0].mechanism.name", "':'"]),
    ("NUL in the name", 'name = "a\\u0000b"\n' + tradeoff(), ["name", "U+0000", "'a\\x00b'"]),
    ("NaN in x", tradeoff("x = [nan]", "x_prime = [1.0]"), ["audits[0].x[0]", "nan"]),
    ("NaN in target_value", '[[audits]]\nkind = "bias-checks"\nsmall = true\nn_scale = nan\n',
     ["audits[0].n_scale", "nan"]),
    ("NaN in learner parameters", '[[audits]]\nkind = "learner-tradeoff"\n'
                                  'learner = { name = "IWPSGDClassifier", epsilon = nan }\n',
     ["audits[0].learner.epsilon", "nan"]),
    ("learner epsilon = -1", '[[audits]]\nkind = "learner-tradeoff"\n'
                             'learner = { name = "IWPSGDClassifier", epsilon = -1 }\n',
     ["audits[0].learner.epsilon", "-1"]),
    ("x = []", tradeoff("x = []", "x_prime = []"), ["audits[0].x", "[]"]),
    ("n = 10**9", tradeoff().replace("n = 200", "n = 1000000000"),
     ["audits[0].n = 1000000000", "GiB", "memory limit"]),
    ("n below the audit's minimum", tradeoff().replace("n = 200", "n = 100"), ["audits[0].n = 100", "200"]),
    ("seed beyond 64 bits", "seed = " + "9" * 30 + "\n" + tradeoff(), ["seed", "999999"]),
    ("attacker = 'os:system'", tradeoff('attacker = "os:system"'), ["unknown audits[0].attacker = 'os:system'"]),
    ("an unknown attacker in a list", tradeoff('attacker = ["atom", "likelihood-ratoi"]'),
     ["audits[0].attacker[1] = 'likelihood-ratoi'", "did you mean 'likelihood-ratio'"]),
    ("a reconstruction attacker in a tradeoff", tradeoff('attacker = "naive"'),
     ["audits[0].attacker = 'naive'", "reconstruction attacker, not a distinguisher"]),
    ("a distinguisher in a reconstruction", '[[audits]]\nkind = "reconstruction"\nattacker = "atom"\n'
                                            'mechanism = { name = "gaussian", sigma = 1.0 }\n',
     ["audits[0].attacker = 'atom'", "distinguisher attacker, not a reconstruction"]),
    ("attacker = 3", tradeoff("attacker = 3"), ["audits[0].attacker = 3", "a name or a non-empty array of names"]),
    ("attacker = []", tradeoff("attacker = []"), ["audits[0].attacker", "[]"]),
    # issue 24, round 2: each of these passed --check and then failed as a task error (or worse)
    ("a non-adjacent pair", tradeoff("x = [0.0]", "x_prime = [3.0]"),
     ["audits[0].x = [0.0] and audits[0].x_prime = [3.0]", "'l2<=1'", 'set audits[0].adjacency = "group"']),
    ("adjacency = 'group' without a pair", tradeoff('adjacency = "group"'), ["audits[0].adjacency = 'group'"]),
    ("IWP bounds = 0", '[[audits]]\nkind = "learner-tradeoff"\nlearner = { name = "IWPSGDClassifier", bounds = 0 }\n',
     ["audits[0].learner.bounds = 0", "[low, high]"]),
    ("IWP bounds = -1", '[[audits]]\nkind = "learner-tradeoff"\nlearner = { name = "IWPSGDClassifier", bounds = -1 }\n',
     ["audits[0].learner.bounds = -1", "[low, high]"]),
    ("IWP bounds = [[0.0]]", '[[audits]]\nkind = "learner-tradeoff"\n'
                             'learner = { name = "IWPSGDClassifier", bounds = [[0.0]] }\n',
     ["audits[0].learner.bounds = [[0.0]]", "[low, high]"]),
    ("IWP bounds of the wrong width", '[[audits]]\nkind = "learner-reconstruction"\n'
                                      'learner = { name = "IWPSGDRegressor", bounds = [[-1.0, -1.0], [1.0, 1.0]] }\n',
     ["audits[0].learner.bounds = [[-1.0, -1.0], [1.0, 1.0]]", "two arrays of 3 numbers"]),
    ("IWP bounds low > high", '[[audits]]\nkind = "learner-tradeoff"\n'
                              'learner = { name = "IWPSGDClassifier", bounds = [1.0, -1.0] }\n',
     ["audits[0].learner.bounds = [1.0, -1.0]", "low <= high"]),
    ("a 300-byte name", 'name = "' + "a" * 300 + '"\n' + tradeoff(), ["name must be at most 200 bytes", "300 bytes"]),
    ("samples = 1e308", "samples = 1e308\n" + tradeoff(), ["samples = 1e+308"]),
    ("learner epochs = 10**15", '[[audits]]\nkind = "learner-tradeoff"\n'
                                'learner = { name = "CondDPRegressor", epochs = 1000000000000000 }\n',
     ["audits[0].learner.epochs = 1000000000000000", "1e+06"]),
    ("experiment n = 10**12", '[[audits]]\nkind = "utility"\nexperiment = "iwp-figure1"\n'
                              'params = { n = 1000000000000 }\n', ["audits[0].params.n = 1000000000000", "1e+08"]),
    ("one-run m = 10**6", '[[audits]]\nkind = "one-run-label"\nm = 1000000\n',
     ["audits[0].m = 1000000", "TiB", "m × m canary features"]),
    ("one-run lr = 1e308", '[[audits]]\nkind = "one-run-label"\nlr = 1e308\n',
     ["audits[0].lr = 1e+308", "overflow"]),
    ("small = true with tasks", '[[audits]]\nkind = "utility"\nexperiment = "modulated-figure1"\n'
                                'params = { small = true, tasks = ["co2"] }\n',
     ["audits[0].params.tasks = ['co2'] would be ignored", "small = true"]),
    ("learner data of 10**11 values", '[[audits]]\nkind = "learner-tradeoff"\nlearner = { name = "IWPSGDClassifier" }\n'
                                      'n_train = 10000000\ndim = 10000\n',
     ["audits[0].n_train = 10000000", "TiB", "n_train × dim 10000"]),
    ("100,000 dotted keys", "a." + ".".join(f"k{i}" for i in range(100_000)) + " = 1\n",
     ["line 1", "dotted key of more than 64 parts", "a.k0.k1"]),
]


@pytest.mark.parametrize("body, needles", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_exits_2_naming_key_and_value_before_any_work(tmp_path, capsys, body, needles):
    conf = tmp_path / "bad.toml"
    conf.write_text(body)
    code = main(["run", str(conf), "--out", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    assert code == 2 and out == "", err
    assert err.startswith("privaudit: error: ") and err.count("\n") == 1 and UNEXPECTED not in err, err
    for needle in needles:
        assert needle in err, (needle, err)
    assert not (tmp_path / "out" / "bad").exists()  # nothing ran, nothing was written


def test_a_config_that_would_run_code_writes_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    conf = tmp_path / "pwn.toml"
    conf.write_text(tradeoff(mechanism='mechanism = { name = "os:system", command = "touch pwned" }'))
    assert main(["run", str(conf), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "audits[0].mechanism.name = 'os:system'" in err and "--allow-import os" in err
    assert not (tmp_path / "pwned").exists() and not (tmp_path / "out" / "pwn").exists()


def test_a_size_over_an_explicit_limit_names_the_limit(tmp_path, capsys):
    conf = tmp_path / "c.toml"
    conf.write_text(tradeoff().replace("n = 200", "n = 2000000"))
    assert main(["run", str(conf), "--out", str(tmp_path), "--max-memory", "64M", "--check"]) == 2
    err = capsys.readouterr().err
    assert "audits[0].n = 2000000" in err and "64.0 MiB (--max-memory)" in err
    assert main(["run", str(conf), "--out", str(tmp_path), "--max-memory", "1G", "--check"]) == 0


# --------------------------------------------------------------------------- --out
def test_out_problems_are_exit_2_before_work(tmp_path, capsys):
    conf = tmp_path / "c.toml"
    conf.write_text(tradeoff())
    a_file = tmp_path / "file"
    a_file.write_text("x")
    for out, needle in [(a_file, "is a file"), (a_file / "sub", "cannot write into --out"),
                        ("/proc/privaudit-no", "cannot write into --out")]:
        assert main(["run", str(conf), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert needle in err and str(out) in err, err
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "c").write_text("a file where the report folder goes")
    assert main(["run", str(conf), "--out", str(tmp_path / "o")]) == 2
    assert "already has a file 'c'" in capsys.readouterr().err


def test_same_name_from_another_config_is_refused_unless_overwrite(tmp_path, capsys):
    one, two = tmp_path / "one.toml", tmp_path / "two.toml"
    one.write_text('name = "shared"\n' + tradeoff().replace("n = 200", "n = 400"))
    two.write_text('name = "shared"\n' + tradeoff().replace("n = 200", "n = 500"))
    out = tmp_path / "r"
    assert main(["run", str(one), "--out", str(out)]) == 0
    before = (out / "shared" / "report.json").read_bytes()
    assert main(["run", str(two), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "name = 'shared'" in err and str(one) in err and "--overwrite" in err
    assert (out / "shared" / "report.json").read_bytes() == before  # untouched
    assert main(["run", str(one), "--out", str(out)]) == 0  # the same config may rewrite its own set
    assert main(["run", str(two), "--out", str(out), "--overwrite"]) == 0
    assert json.loads((out / "shared" / "report.json").read_text())["source"] == str(two)


# --------------------------------------------------------------------------- presets vs folders
def test_preset_wins_over_a_same_named_folder_and_file(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tradeoff").mkdir()  # e.g. `privaudit run tradeoff --out .` made this folder before
    (tmp_path / "reconstruction").write_text("not toml [")
    assert main(["run", "tradeoff", "--out", ".", "--check"]) == 0
    assert "tradeoff: configuration valid" in capsys.readouterr().out
    assert main(["run", "reconstruction", "--check"]) == 0
    capsys.readouterr()
    # an explicit path means the file
    assert main(["run", "./reconstruction", "--check"]) == 2
    assert "not valid TOML" in capsys.readouterr().err
    assert main(["run", "./tradeoff", "--check"]) == 2
    assert "is a directory" in capsys.readouterr().err
    (tmp_path / "mine.toml").write_text(tradeoff())
    assert main(["run", "mine.toml", "--check"]) == 0


# --------------------------------------------------------------------------- pipes and bench
def test_list_into_a_closed_pipe_is_quiet(tmp_path):
    code = ("import sys; from privaudit.audit.app.cli import main; sys.exit(main(['list', 'presets', '--json']))")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.read(10)
    proc.stdout.close()  # like `| head -c 10`
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0 and "BrokenPipeError" not in err and "Traceback" not in err, err


def test_bench_out_problems_are_exit_2_before_work(tmp_path, capsys, monkeypatch):
    import privaudit.audit.app.bench as bench

    ran = []
    monkeypatch.setattr(bench, "run_attacker_benchmark", lambda **kw: ran.append(kw))
    a_file = tmp_path / "f"
    a_file.write_text("x")
    assert main(["bench", "attackers", "--out", str(a_file)]) == 2
    assert "is a file" in capsys.readouterr().err and ran == []


@pytest.mark.slow
def test_bench_prints_its_leaderboard(tmp_path):
    done = subprocess.run([sys.executable, "-m", "privaudit.audit.app.cli", "bench", "attackers", "--samples", "200",
                           "--repeats", "1", "--out", str(tmp_path)], capture_output=True, text=True, timeout=900,
                          env={**os.environ})
    assert done.returncode == 0, done.stderr[-2000:]
    table = (tmp_path / "attackers" / "leaderboard.md").read_text()
    assert table.strip() in done.stdout and "|" in done.stdout


# --------------------------------------------------------------------------- what --check accepts runs
def test_a_far_pair_with_adjacency_group_runs_against_the_group_claim(tmp_path, capsys):
    conf = tmp_path / "far.toml"
    conf.write_text(tradeoff("x = [0.0]", "x_prime = [3.0]", 'adjacency = "group"').replace("n = 200", "n = 400"))
    assert main(["run", str(conf), "--out", str(tmp_path), "--check"]) == 0
    # exit 0 or 1 (a small n may leave the audit inconclusive), never a task error
    assert main(["run", str(conf), "--out", str(tmp_path), "--no-cache"]) in (0, 1), capsys.readouterr().err
    entry = json.loads((tmp_path / "far" / "report.json").read_text())["audits"][0]
    assert "error" not in entry and entry["verdict"] in ("pass", "inconclusive"), entry.get("error")
    assert entry["claim"]["epsilon"] == pytest.approx(3.0)
    assert any("group-privacy claim" in note for note in entry["notes"])


def test_learner_reconstruction_infers_the_input_from_the_declared_box(tmp_path, capsys):
    """A record release states no dimension: the input comes from the entry's dim, inside the declared box."""
    conf = tmp_path / "rec.toml"
    conf.write_text('[[audits]]\nkind = "learner-reconstruction"\nn = 50\n'
                    'learner = { name = "IWPSGDRegressor", bounds = [[-0.2, -0.2, -0.2], [0.2, 0.2, 0.2]] }\n')
    assert main(["run", str(conf), "--out", str(tmp_path), "--no-cache"]) == 0, capsys.readouterr().err
    entry = json.loads((tmp_path / "rec" / "report.json").read_text())["audits"][0]
    assert entry["verdict"] == "pass", entry.get("error")


def test_a_100000_level_dotted_key_is_refused_before_the_parser(tmp_path):
    """The parser's work is quadratic in a dotted key's parts (5.7 GB at 100,000): the text is refused first."""
    conf = tmp_path / "deep.toml"
    conf.write_text("a." + ".".join(f"k{i}" for i in range(100_000)) + " = 1\n")
    code = ("import resource, sys; from privaudit.audit.app.cli import main; code = main(['run', sys.argv[1], "
            "'--check']); print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss); sys.exit(code)")
    done = subprocess.run([sys.executable, "-c", code, str(conf)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "dotted key" in done.stderr, done.stderr[-2000:]
    # The same command on a two-part key, refused too, is the baseline (what importing the CLI costs in
    # this environment: 350 MB alone, more when the suite's environment makes the CLI load more); the
    # deep key may add at most 256 MiB to it, far from the 5.7 GB the parser took.
    small = tmp_path / "shallow.toml"
    small.write_text("a.b = 1\n")
    base = subprocess.run([sys.executable, "-c", code, str(small)], capture_output=True, text=True, timeout=300)
    assert base.returncode == 2, base.stderr[-2000:]
    assert int(done.stdout.split()[-1]) < int(base.stdout.split()[-1]) + 256 * 1024, (done.stdout, base.stdout)
