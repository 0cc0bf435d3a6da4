"""Runner: seeds independent of workers, failing tasks recorded, cache and resumption, atomic writes.

Stub task kinds are registered for the duration of each test; their adapters draw
from the task's generator, so a wrong seed derivation changes the numbers.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from privaudit.audit.app.cache import CacheWarning
from privaudit.audit.app.config import Field, parse_config
from privaudit.audit.app.report_store import atomic_write
from privaudit.audit.app.runner import SchedulerError, run_config
from privaudit.audit.app.tasks import register_task_kind, unregister_task_kind

CALLS: list[int] = []
#: Tag of the task that raises KeyboardInterrupt (simulates Ctrl-C during that task); None: no interruption.
INTERRUPT = {"at": None}


def draw_mean(params, rng):
    """Mean of n standard normal draws of the task's generator."""
    CALLS.append(params["tag"])
    if params["tag"] == params["fail_at"]:
        raise ValueError(f"deliberate failure at tag={params['tag']}")
    if params["tag"] == INTERRUPT["at"]:
        raise KeyboardInterrupt
    z = rng.standard_normal(params["n"])
    # a 4-sigma test of E[z] = 0: deterministic given the seed, and it can fail.
    verdict = "pass" if abs(z.mean()) < 4 / np.sqrt(params["n"]) else "fail"
    return {"kind": "stub", "verdict": verdict, "mean": float(z.mean()), "first": float(z[0]), "n": params["n"]}


FIELDS = {
    "tag": Field("int", low=0),
    "n": Field("int", 1000, low=1, samples=True),
    "fail_at": Field("int", -1, low=-1),
}


@pytest.fixture(autouse=True)
def stub_kind():
    register_task_kind("stub-mean", fields=FIELDS, force=True)(draw_mean)
    CALLS.clear()
    INTERRUPT["at"] = None
    yield
    INTERRUPT["at"] = None
    unregister_task_kind("stub-mean")


def make_config(k=4, seed=5, **extra):
    audits = [{"kind": "stub-mean", "tag": i, "target": f"t{i}", **extra} for i in range(k)]
    return parse_config({"name": "stub", "seed": seed, "audits": audits})


def numbers(report):
    return [(a["target"], a["mean"], a["first"]) for a in report["audits"]]


def test_results_follow_spawned_seeds_and_not_the_worker_count(tmp_path):
    cfg = make_config()
    one = run_config(cfg, out=tmp_path / "a", jobs=1, figures=False)
    two = run_config(cfg, out=tmp_path / "b", jobs=2, figures=False)
    assert numbers(one.report) == numbers(two.report)
    children = np.random.SeedSequence(5).spawn(4)
    for i, a in enumerate(one.report["audits"]):
        z = np.random.default_rng(children[i]).standard_normal(1000)
        assert a["mean"] == z.mean() and a["first"] == z[0]
    # a different root seed gives different numbers
    other = run_config(make_config(seed=6), out=tmp_path / "c", figures=False)
    assert numbers(other.report) != numbers(one.report)
    # report.json on disk: identical bytes (nothing depends on the clock or the worker count)
    assert (tmp_path / "a/stub/report.json").read_bytes() == (tmp_path / "b/stub/report.json").read_bytes()


def test_failing_task_is_recorded_and_others_run(tmp_path):
    res = run_config(make_config(fail_at=1), out=tmp_path, figures=False)
    verdicts = [a["verdict"] for a in res.report["audits"]]
    assert verdicts == ["pass", "error", "pass", "pass"]
    err = res.report["audits"][1]
    assert "ValueError: deliberate failure at tag=1" in err["error"] and "draw_mean" in err["traceback"]
    assert res.status == "error" and res.exit_code == 1
    # the failure is not cached: a rerun retries only that task
    CALLS.clear()
    again = run_config(make_config(fail_at=1), out=tmp_path, figures=False)
    assert again.executed == [1] and again.cached == [0, 2, 3] and CALLS == [1]


def test_interrupted_run_resumes_without_redoing_finished_tasks(tmp_path):
    INTERRUPT["at"] = 2
    with pytest.raises(KeyboardInterrupt):
        run_config(make_config(), out=tmp_path, figures=False)
    assert CALLS == [0, 1, 2]
    cache = sorted(p.name for p in (tmp_path / "stub/cache").glob("*.json"))
    assert len(cache) == 2 and cache[0].startswith("000-") and cache[1].startswith("001-")
    assert not (tmp_path / "stub/report.json").exists()
    INTERRUPT["at"] = None
    CALLS.clear()
    res = run_config(make_config(), out=tmp_path, figures=False)
    assert res.cached == [0, 1] and res.executed == [2, 3] and CALLS == [2, 3]
    # the resumed report equals an uninterrupted run's
    full = run_config(make_config(), out=tmp_path / "full", figures=False, use_cache=False)
    assert numbers(res.report) == numbers(full.report)
    assert not (tmp_path / "full/stub/cache").exists()


def test_cache_is_keyed_by_content(tmp_path):
    run_config(make_config(), out=tmp_path, figures=False)
    CALLS.clear()
    res = run_config(make_config(seed=5), out=tmp_path, figures=False)
    assert res.executed == [] and CALLS == []
    # changing one task's parameters (or the samples factor) reruns exactly what changed
    cfg = make_config()
    audits = [dict(a.to_dict()) for a in cfg.audits]
    audits[3]["n"] = 500
    res = run_config(parse_config({"name": "stub", "seed": 5, "audits": audits}), out=tmp_path, figures=False)
    assert res.executed == [3] and CALLS == [3]
    CALLS.clear()
    res = run_config(cfg.replace(samples=2.0), out=tmp_path, figures=False)
    assert res.executed == [0, 1, 2, 3] and res.report["audits"][0]["n"] == 2000
    # a corrupted cache entry is ignored and rewritten
    # the entry of task 0 of the samples=2.0 run (the newest; the samples=1.0 entry stays beside it)
    victim = max((tmp_path / "stub/cache").glob("000-*.json"), key=lambda p: p.stat().st_mtime_ns)
    victim.write_text("{truncated")
    CALLS.clear()
    with pytest.warns(CacheWarning, match="task 0 .* rejected and recomputed: not valid JSON"):
        res = run_config(cfg.replace(samples=2.0), out=tmp_path, figures=False)
    assert res.executed == [0] and json.loads(victim.read_text())["ok"] is True


def test_atomic_write_leaves_old_file_on_failure(tmp_path):
    target = tmp_path / "f.json"
    atomic_write(target, "old")

    with pytest.raises(TypeError):
        atomic_write(target, 12345)  # not str/bytes: the write fails midway
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.json"]  # no temporary file left behind
    atomic_write(target, b"new")
    assert target.read_bytes() == b"new"
    mask = os.umask(0)
    os.umask(mask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~mask  # as open() would create it, not mkstemp's 0600


def test_bad_scheduler_address_is_a_usage_error(tmp_path):
    with pytest.raises(SchedulerError, match="tcp://HOST:PORT"):
        run_config(make_config(k=1), out=tmp_path, scheduler="localhost", figures=False)


KILL_SCRIPT = """
import os, sys, time
from privaudit.audit.app.config import Field
from privaudit.audit.app.tasks import register_task_kind
from privaudit.audit.app.cli import main

@register_task_kind("slow-tag", fields={"tag": Field("int", low=0)})
def run(p, rng):
    with open(sys.argv[1], "a") as fh:
        fh.write(f"{p['tag']}\\n")
    if p["tag"] == 2 and os.environ.get("SLOW_TASK") == "1":
        time.sleep(60)  # the parent kills us here
    return {"kind": "stub", "verdict": "pass", "value": float(rng.standard_normal())}

sys.exit(main(["run", sys.argv[2], "--out", sys.argv[3], "--json"]))
"""


def test_killed_cli_run_resumes_from_cache(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(KILL_SCRIPT))
    conf = tmp_path / "kill.toml"
    conf.write_text("\n".join(f'[[audits]]\nkind = "slow-tag"\ntag = {i}\n' for i in range(4)))
    log = tmp_path / "calls.txt"
    out = tmp_path / "reports"
    proc = subprocess.Popen([sys.executable, str(script), str(log), str(conf), str(out)],
                            env={**os.environ, "SLOW_TASK": "1"})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if log.exists() and log.read_text().split() == ["0", "1", "2"]:
            break
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert log.read_text().split() == ["0", "1", "2"]
    assert len(list((out / "kill/cache").glob("*.json"))) == 2
    log.write_text("")
    done = subprocess.run([sys.executable, str(script), str(log), str(conf), str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["cached"] == [0, 1] and summary["executed"] == [2, 3]
    assert log.read_text().split() == ["2", "3"]


def test_progress_bar_only_when_asked_or_on_a_terminal(tmp_path, capsys, monkeypatch):
    import privaudit.audit.app.runner as runner

    monkeypatch.setattr(runner, "PROGRESS_DELAY", 0.0)
    run_config(make_config(k=2), out=tmp_path / "a", figures=False, progress=True)
    assert "stub:" in (err := capsys.readouterr().err) and "/2 [" in err  # tqdm bar on stderr
    run_config(make_config(k=2), out=tmp_path / "b", figures=False, progress=False)
    assert capsys.readouterr().err == ""
    # default: a bar only when stdout and stderr are terminals (not here, under pytest's capture)
    run_config(make_config(k=2), out=tmp_path / "c", figures=False)
    assert capsys.readouterr().err == ""


def sleepy(params, rng):
    """Task 1 sleeps far beyond any budget (the budget's alarm interrupts it); the others are instant."""
    CALLS.append(params["tag"])
    if params["tag"] == 1:
        time.sleep(60)
    return {"kind": "stub", "verdict": "pass", "value": float(rng.standard_normal())}


def test_budget_interrupts_the_run_and_keeps_finished_tasks(tmp_path):
    from privaudit.audit.schema.limits import ResourceLimitError

    register_task_kind("stub-sleepy", fields={"tag": Field("int", low=0)}, force=True)(sleepy)
    try:
        cfg = parse_config({"name": "slow", "audits": [{"kind": "stub-sleepy", "tag": i} for i in range(3)]})
        # "after 1 of 3": the sleeping task was interrupted (had it slept through, task 2 would have run)
        with pytest.raises(ResourceLimitError, match=r"--budget 0\.5 s spent after 1 of 3 tasks"):
            run_config(cfg, out=tmp_path, figures=False, budget=0.5)
        assert CALLS == [0, 1] and len(list((tmp_path / "slow/cache").glob("*.json"))) == 1
        assert not (tmp_path / "slow/report.json").exists()
    finally:
        unregister_task_kind("stub-sleepy")


def test_budget_must_be_positive(tmp_path):
    from privaudit.audit.schema.limits import ResourceLimitError

    with pytest.raises(ResourceLimitError, match="--budget"):
        run_config(make_config(k=1), out=tmp_path, figures=False, budget=-1.0)
