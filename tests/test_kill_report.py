"""Report sets are one unit: SIGKILL at random instants while sets are written leaves the old or the new set.

A writer process (forked, so it starts instantly) replaces the set ``out/r`` again and
again, alternating two versions whose every file carries its version's marker; the
parent kills it with SIGKILL after a random delay, then checks what a reader finds.
With ``renameat2(RENAME_EXCHANGE)`` the live folder is always a complete set, even
right after the kill. Where that call is missing (simulated), the two-rename swap
may leave the live folder missing for an instant, and :func:`clean_stale` (which every
writer runs first) must restore a complete set. Either way, the next write cleans
every temporary the killed writer left behind.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import time

import numpy as np
import pytest

from privaudit.audit.app import report_store
from privaudit.audit.app.report_store import clean_stale, write_set

KILLS = 25
FIGURES = 12


def files_of(version: int, generation: int) -> tuple[bytes, dict[str, bytes]]:
    """A set whose every file names its version; version 1 has one figure fewer (stale figures must go)."""
    marker = f"version-{version}".encode()
    report = json.dumps({"schema": "privaudit.report/1", "marker": marker.decode(), "generation": generation}).encode()
    body = marker * 20_000  # 180 kB per file: writes take long enough to be interrupted
    rest = {"report.md": b"md " + body, "report.html": b"html " + body}
    for k in range(FIGURES - version):
        rest[f"figures/{k:02d}.png"] = b"png " + body
    return report, rest


def writer(out_dir: str) -> None:
    generation = 0
    while True:
        generation += 1
        report, rest = files_of(generation % 2, generation)
        write_set(out_dir, report, lambda rest=rest: rest, run_log={"generation": generation})


def check_complete(out_dir, *, repaired: bool) -> int:
    """The version of the complete set at ``out_dir``; fails on a mix or a missing file.

    Entries the set does not own (the cache) move between folders in the instant before
    the swap; right after a kill they may sit in the writer's temporary folder, and the
    repair (:func:`clean_stale`) must bring them back.
    """
    marker = json.loads((out_dir / "report.json").read_text())["marker"]
    version = int(marker.rsplit("-", 1)[1])
    _, expected = files_of(version, 0)
    found = {p.relative_to(out_dir).as_posix() for p in out_dir.rglob("*") if p.is_file()}
    own = found - {"cache/keep.txt"}
    assert own == {"report.json", "run.log.json", *expected}, sorted(own ^ set(expected))
    for rel, data in expected.items():
        assert (out_dir / rel).read_bytes() == data, rel
    keep = [out_dir / "cache" / "keep.txt"] if repaired else list(out_dir.parent.glob("*/cache/keep.txt"))
    assert len(keep) == 1 and keep[0].read_text() == "cached results survive"
    return version


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2-exchange", "two-renames"])
def test_killed_writers_leave_the_old_or_the_new_complete_set(tmp_path, monkeypatch, exchange):
    if not exchange:
        monkeypatch.setattr(report_store, "_exchange", lambda dir_fd, a, b: False)  # inherited by the forked writer
    out_dir = tmp_path / "r"
    report, rest = files_of(0, 0)
    write_set(out_dir, report, lambda: rest)
    (out_dir / "cache").mkdir()
    (out_dir / "cache" / "keep.txt").write_text("cached results survive")
    ctx = multiprocessing.get_context("fork")
    rng = np.random.default_rng(20261130)
    versions = []
    for _ in range(KILLS):
        proc = ctx.Process(target=writer, args=(str(out_dir),))
        proc.start()
        time.sleep(float(rng.uniform(0.02, 0.4)))
        os.kill(proc.pid, signal.SIGKILL)
        proc.join()
        assert proc.exitcode == -signal.SIGKILL  # it was killed mid-work, it did not just finish
        if exchange:
            versions.append(check_complete(out_dir, repaired=False))  # no repair needed: what a reader sees right away
        with report_store._locked(tmp_path):
            clean_stale(out_dir)
        versions.append(check_complete(out_dir, repaired=True))
        leftovers = [p.name for p in tmp_path.iterdir() if p.name != "r"]
        assert leftovers == [], leftovers
        assert not list(out_dir.rglob(".*.tmp"))
    assert set(versions) == {0, 1}  # kills landed while either version was being written


def test_stale_atomic_write_temporaries_are_cleaned(tmp_path):
    out_dir = tmp_path / "r"
    report, rest = files_of(0, 0)
    write_set(out_dir, report, lambda: rest)
    (out_dir / ".report.html.abc123.tmp").write_bytes(b"x" * 1000)  # what a killed atomic_write left
    (out_dir / "figures" / ".00.png.def.tmp").write_bytes(b"x")
    cache_dir = out_dir / "cache"
    cache_dir.mkdir()
    old, fresh = cache_dir / ".000-k.json.old.tmp", cache_dir / ".001-k.json.new.tmp"
    old.write_text("{")
    fresh.write_text("{")
    os.utime(old, (time.time() - 2 * report_store.STALE_SECONDS,) * 2)
    report, rest = files_of(1, 1)
    write_set(out_dir, report, lambda: rest)
    assert not (out_dir / ".report.html.abc123.tmp").exists() and not list((out_dir / "figures").glob(".*"))
    # in the cache only what is certainly abandoned (a concurrent run may be writing the fresh one)
    assert not old.exists() and fresh.exists()


def test_a_run_after_a_kill_finds_its_cache_first(tmp_path):
    """Killed between moving the cache into the new set and the swap: the next run recovers it before reading it."""
    from privaudit.audit.app.report_store import recover_set

    out_dir = tmp_path / "r"
    report, rest = files_of(0, 0)
    write_set(out_dir, report, lambda: rest)
    ready = tmp_path / ".r.0123abcd.ready"
    ready.mkdir()
    (ready / "report.json").write_bytes(b"{}")  # the complete new set, not swapped in yet ...
    (ready / "cache").mkdir()
    (ready / "cache" / "000-k.json").write_text("entry")  # ... with the live set's cache already moved in
    recover_set(out_dir)
    assert (out_dir / "cache" / "000-k.json").read_text() == "entry" and not ready.exists()
    assert check_complete_files(out_dir, version=0)


def check_complete_files(out_dir, *, version: int) -> bool:
    _, expected = files_of(version, 0)
    return all((out_dir / rel).read_bytes() == data for rel, data in expected.items())


def test_identical_set_is_not_rewritten(tmp_path):
    out_dir = tmp_path / "r"
    report, rest = files_of(0, 0)
    calls = []
    secret = b"k" * 32

    def render():
        calls.append(1)
        return rest

    assert write_set(out_dir, report, render, run_log={"seconds": 1.0}, secret=secret) is True
    inode = (out_dir / "report.html").stat().st_ino
    assert write_set(out_dir, report, render, run_log={"seconds": 2.0}, secret=secret) is False
    assert calls == [1] and (out_dir / "report.html").stat().st_ino == inode
    assert json.loads((out_dir / "run.log.json").read_text())["seconds"] == 2.0
    # a damaged file is noticed (manifest hash) and the set rewritten
    (out_dir / "report.html").write_bytes(b"edited")
    assert write_set(out_dir, report, render, secret=secret) is True and calls == [1, 1]
    assert (out_dir / "report.html").read_bytes() == rest["report.html"]
    # the manifest is authenticated: under another key, or without one, the set is rendered again
    assert write_set(out_dir, report, render, secret=b"o" * 32) is True and calls == [1, 1, 1]
    assert write_set(out_dir, report, render) is True and calls == [1, 1, 1, 1]
    # and a manifest edited to match an edited file (hash recomputed) does not verify
    assert write_set(out_dir, report, render, secret=secret) is True and calls == [1] * 5
    import hashlib

    (out_dir / "report.html").write_bytes(b"forged")
    log = json.loads((out_dir / "run.log.json").read_text())
    log["set"]["files"]["report.html"] = hashlib.sha256(b"forged").hexdigest()
    (out_dir / "run.log.json").write_text(json.dumps(log))
    assert write_set(out_dir, report, render, secret=secret) is True and calls == [1] * 6
    assert (out_dir / "report.html").read_bytes() == rest["report.html"]


SMALL = """
name = "small"
[[audits]]
kind = "tradeoff"
target = "Gaussian"
mechanism = { name = "gaussian", epsilon = 1.0, delta = 1e-5 }
n = 2000
[[audits]]
kind = "tradeoff"
target = "Laplace"
mechanism = { name = "laplace", epsilon = 1.0 }
n = 2000
"""


def check_manifest(out_dir) -> None:
    """Every file of the set is the one its run log's manifest names (the run log is part of the set)."""
    import hashlib

    log = json.loads((out_dir / "run.log.json").read_text())
    files = log["set"]["files"]
    found = {p.relative_to(out_dir).as_posix() for p in out_dir.rglob("*")
             if p.is_file() and "cache" not in p.parts and p.name != "run.log.json"}
    assert found == set(files), sorted(found ^ set(files))
    for rel, digest in files.items():
        assert hashlib.sha256((out_dir / rel).read_bytes()).hexdigest() == digest, rel
    seed = json.loads((out_dir / "report.json").read_text())["seed"]
    assert f"Seed {seed}" in (out_dir / "report.md").read_text()


def _temporaries(out) -> bool:
    """Whether a report set is being written under ``out`` (its temporary folder exists)."""
    with os.scandir(out) as entries:
        return any(e.name.startswith(".small.") for e in entries)


@pytest.mark.slow
def test_killed_cli_runs_leave_a_consistent_report_set(tmp_path):
    """25 `privaudit run` processes killed while they write their report (seeds alternate, so sets differ)."""
    import subprocess
    import sys

    conf = tmp_path / "small.toml"
    conf.write_text(SMALL)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "privaudit.audit.app.cli", "run", str(conf), "--out", str(out)]
    for seed in (1, 2):  # fill the cache, so that the killed runs spend their time writing
        assert subprocess.run([*cmd, "--seed", str(seed)], capture_output=True, timeout=600).returncode == 0
    rng = np.random.default_rng(7)
    killed_while_writing = 0
    for k in range(KILLS):
        proc = subprocess.Popen([*cmd, "--seed", str(1 + k % 2)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 300
        # The set is rendered in memory first and written in a few milliseconds: spin (no sleep) until
        # its temporary folder appears, then kill after a random fraction of that window.
        while proc.poll() is None and not _temporaries(out) and time.monotonic() < deadline:
            pass
        wake = time.perf_counter() + float(rng.uniform(0.0, 0.004))
        while time.perf_counter() < wake:
            pass
        if proc.poll() is None:
            killed_while_writing += bool(_temporaries(out))
            proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        check_manifest(out / "small")  # right after the kill, before any repair
    assert killed_while_writing >= KILLS // 2, killed_while_writing
    done = subprocess.run([*cmd, "--seed", "1"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    check_manifest(out / "small")
    assert [p.name for p in out.iterdir()] == ["small"]  # the killed runs' temporaries are gone
