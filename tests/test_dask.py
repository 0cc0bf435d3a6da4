"""A real Dask cluster on loopback: `privaudit run --scheduler tcp://...` gives the local run's numbers.

The cluster is a ``dask.distributed.LocalCluster`` on 127.0.0.1 whose scheduler and
two workers talk over TCP (``protocol="tcp"``), so tasks and results are serialised
and shipped as on a real cluster. The workers run in this process
(``processes=False``) to keep the test fast on two shared cores; the slow test at the
end repeats the comparison with worker *processes*.
"""

from __future__ import annotations

import json
import shutil

import distributed  # a plain import: CI installs the "distributed" extra, so these tests never skip
import pytest

from privaudit.audit.app.cli import main

CONFIG = """
name = "dask-small"
seed = 11

[[audits]]
kind = "tradeoff"
target = "Gaussian ε=1"
mechanism = { name = "gaussian", epsilon = 1.0, delta = 1e-5 }
n = 3000

[[audits]]
kind = "tradeoff"
target = "Randomised response ε=1"
mechanism = { name = "randomized-response", epsilon = 1.0 }
n = 3000

[[audits]]
kind = "tradeoff"
target = "Laplace, claim false"
mechanism = { name = "laplace", epsilon = 1.0, scale = 0.25 }
n = 3000
expect = "violation"
"""


def local_cluster(processes: bool):
    return distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=processes, host="127.0.0.1", protocol="tcp",
        dashboard_address=":0", worker_dashboard_address=":0", silence_logs=40,
    )


@pytest.fixture(scope="module")
def cluster():
    with local_cluster(processes=False) as c:
        yield c


def test_dask_run_equals_local_run(cluster, tmp_path, capsys):
    conf = tmp_path / "small.toml"
    conf.write_text(CONFIG)
    address = cluster.scheduler_address
    assert address.startswith("tcp://127.0.0.1:")

    assert main(["run", str(conf), "--out", str(tmp_path / "local"), "--jobs", "1", "--json"]) == 0
    local_summary = json.loads(capsys.readouterr().out)
    assert main(["run", str(conf), "--out", str(tmp_path / "dask"), "--scheduler", address, "--json"]) == 0
    dask_summary = json.loads(capsys.readouterr().out)
    assert dask_summary["executed"] == local_summary["executed"] == [0, 1, 2] and dask_summary["cached"] == []

    local = json.loads((tmp_path / "local/dask-small/report.json").read_text())
    remote = json.loads((tmp_path / "dask/dask-small/report.json").read_text())
    assert remote["audits"] == local["audits"]
    assert remote == local  # nothing else differs either (seeds, versions, config)
    # the numbers are real audits, not empty shells
    assert [a["verdict"] for a in remote["audits"]] == ["pass", "pass", "pass"]
    assert remote["audits"][2]["audit_verdict"] == "violation"
    assert all(isinstance(a["epsilon_lb"], float) and a["epsilon_lb"] >= 0 for a in remote["audits"])
    assert remote["audits"][2]["epsilon_lb"] > 1.0  # the false claim (ε = 1) is refuted: real numbers, not shells

    # the tasks really ran on the cluster's workers
    with distributed.Client(address, timeout=30) as client:
        done = client.run_on_scheduler(lambda dask_scheduler: [str(k) for k in dask_scheduler.task_prefixes])
    assert any(k.startswith("privaudit") for k in done)

    # a rerun through the cluster finds every task in the cache
    assert main(["run", str(conf), "--out", str(tmp_path / "dask"), "--scheduler", address, "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["executed"] == [] and again["cached"] == [0, 1, 2]


def set_bytes(folder):
    """Every file of a report set but the run log (which holds the wall times): relative path -> bytes."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != "run.log.json" and "cache" not in p.parts}


def test_report_files_are_byte_identical_across_jobs_dask_and_cache(cluster, tmp_path, capsys):
    conf = tmp_path / "small.toml"
    conf.write_text(CONFIG)
    sets = {}
    for label, extra in [("jobs1", ["--jobs", "1"]), ("jobs2", ["--jobs", "2"]),
                         ("dask", ["--scheduler", cluster.scheduler_address])]:
        assert main(["run", str(conf), "--out", str(tmp_path / label), *extra]) == 0
        sets[label] = set_bytes(tmp_path / label / "dask-small")
    # every result from the cache, rendered again (the run log, hence the manifest, removed)
    shutil.copytree(tmp_path / "jobs1", tmp_path / "cached")
    (tmp_path / "cached/dask-small/run.log.json").unlink()
    shutil.rmtree(tmp_path / "cached/dask-small/figures")
    capsys.readouterr()
    assert main(["run", str(conf), "--out", str(tmp_path / "cached"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["cached"] == [0, 1, 2] and summary["executed"] == []
    sets["cached"] = set_bytes(tmp_path / "cached" / "dask-small")
    reference = sets["jobs1"]
    assert {"report.json", "report.md", "report.html"} <= set(reference)
    assert sum(name.startswith("figures/") for name in reference) >= 3
    for label, files in sets.items():
        assert files.keys() == reference.keys(), label
        assert [n for n in files if files[n] != reference[n]] == [], label
    # no date or software in the PNGs (tEXt/tIME chunks), no run time in the record
    for name, data in reference.items():
        if name.endswith(".png"):
            assert b"tIME" not in data and b"Software" not in data and b"matplotlib" not in data, name
    assert "seconds" not in reference["report.json"].decode()
    log = json.loads((tmp_path / "cached/dask-small/run.log.json").read_text())
    assert all(t["from_cache"] for t in log["tasks"])


def test_unreachable_scheduler_is_a_usage_error(tmp_path):
    from privaudit.audit.app.config import parse_config
    from privaudit.audit.app.runner import SchedulerError, run_config
    import tomllib

    cfg = parse_config(tomllib.loads(CONFIG))
    with pytest.raises(SchedulerError, match=r"cannot connect.*tcp://127\.0\.0\.1:9"):
        run_config(cfg, out=tmp_path, scheduler="tcp://127.0.0.1:9", timeout=2)


@pytest.mark.slow
def test_dask_worker_processes_equal_local_run(tmp_path, capsys):
    conf = tmp_path / "small.toml"
    conf.write_text(CONFIG)
    assert main(["run", str(conf), "--out", str(tmp_path / "local"), "--json"]) == 0
    with local_cluster(processes=True) as c:
        assert main(["run", str(conf), "--out", str(tmp_path / "dask"), "--scheduler", c.scheduler_address,
                     "--json"]) == 0
    capsys.readouterr()
    local = json.loads((tmp_path / "local/dask-small/report.json").read_text())
    remote = json.loads((tmp_path / "dask/dask-small/report.json").read_text())
    assert remote == local


def test_a_port_that_does_not_speak_dask_fails_fast_without_traceback(tmp_path):
    """A TCP port that answers with something else (here HTTP) used to hang 20-60 s, then print Client.__del__ noise."""
    import socket
    import subprocess
    import sys
    import threading

    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def answer_http():
        for _ in range(4):
            try:
                conn, _ = server.accept()
            except OSError:
                return
            conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n" * 64)
            conn.close()

    threading.Thread(target=answer_http, daemon=True).start()
    conf = tmp_path / "small.toml"
    conf.write_text(CONFIG)
    try:
        for address in (f"tcp://127.0.0.1:{port}", "tcp://127.0.0.1:9"):
            done = subprocess.run([sys.executable, "-m", "privaudit.audit.app.cli", "run", str(conf), "--out",
                                   str(tmp_path / "out"), "--scheduler", address],
                                  capture_output=True, text=True, timeout=120)
            assert done.returncode == 2, done.stderr
            assert done.stderr.startswith(f"privaudit: error: cannot connect to the Dask scheduler at --scheduler "
                                          f"{address}") and "Traceback" not in done.stderr, done.stderr
            assert not (tmp_path / "out" / "dask-small" / "report.json").exists()
    finally:
        server.close()
