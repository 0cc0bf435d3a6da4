"""Trust, round 2 (issue 24): no stale or forged verdict, no code from a listener, nothing touched outside --out.

Each test reproduces one attack of the issue through the command line (in this process,
so the cache key is a temporary file) and checks that the verdict is the one a fresh
``--no-cache`` run gives, that nothing outside ``--out`` changed, and that the error,
when there is one, is exit 2 naming the file, without a traceback.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import stat
import sys
import threading
import time

import pytest

import privaudit.audit.app.cache as cache
from privaudit.audit.app import report_store
from privaudit.audit.app.cli import main

CONFIG = """
name = "cal"
seed = 5

[[audits]]
kind = "tradeoff"
target = "Gaussian ε=1"
mechanism = { name = "gaussian", epsilon = 1.0, delta = 1e-5 }
n = 2000
"""

SAFE_MECH = """
from privaudit.mechanisms import LaplaceMechanism


class MyLaplace(LaplaceMechanism):
    def __init__(self, *, epsilon):
        super().__init__(epsilon=epsilon)
"""

# The same class after an edit: noise 4x too small for the claimed ε (a leak).
LEAKY_MECH = SAFE_MECH.replace("super().__init__(epsilon=epsilon)", "super().__init__(epsilon=epsilon, scale=0.25)")

USER_CONFIG = """
name = "mine"
seed = 5

[[audits]]
kind = "tradeoff"
target = "my Laplace ε=1"
mechanism = { name = "trust_user_mech:MyLaplace", epsilon = 1.0 }
n = 4000
"""


@pytest.fixture(autouse=True)
def private_key(tmp_path, monkeypatch):
    key_dir = tmp_path / "keys"
    key_dir.mkdir(mode=0o700)
    monkeypatch.setenv(cache.KEY_ENV, str(key_dir / "key"))


def cli(capsys, *args):
    code = main(["run", *map(str, args)])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def summary(capsys, *args):
    code, out, err = cli(capsys, *args, "--json")
    return code, (json.loads(out) if out.strip() else None), err


def snapshot(folder):
    """Every path under ``folder`` (symlinks not followed) with its type, content hash and mtime."""
    found = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(root, name)
            st = os.lstat(path)
            digest = None
            if stat.S_ISREG(st.st_mode):
                with open(path, "rb") as fh:
                    digest = hashlib.sha256(fh.read()).hexdigest()
            found[os.path.relpath(path, folder)] = (stat.S_IFMT(st.st_mode), digest, st.st_mtime_ns)
    return found


# --------------------------------------------------------------------------- 1. stale cache
def test_edited_user_mechanism_is_not_served_from_the_cache(tmp_path, capsys, monkeypatch):
    """The issue: PASS, edit the module to leak, rerun -> "PASS from the cache". Now: VIOLATION."""
    mods = tmp_path / "mods"
    mods.mkdir()
    monkeypatch.syspath_prepend(str(mods))
    monkeypatch.delitem(sys.modules, "trust_user_mech", raising=False)
    (mods / "trust_user_mech.py").write_text(SAFE_MECH)
    conf = tmp_path / "mine.toml"
    conf.write_text(USER_CONFIG)
    out = tmp_path / "out"
    code, first, err = summary(capsys, conf, "--out", out, "--allow-import", "trust_user_mech")
    assert code == 0 and first["status"] == "pass" and first["cached"] == []
    assert "not cached" in err and "trust_user_mech" in err  # said, not silent
    assert [t["index"] for t in first["not_cached"]] == [0] and "trust_user_mech" in first["not_cached"][0]["reason"]
    log = json.loads((out / "mine" / "run.log.json").read_text())
    assert log["not_cached"] and "trust_user_mech" in log["not_cached"][0]["reason"]

    (mods / "trust_user_mech.py").write_text(LEAKY_MECH)  # the edit
    monkeypatch.delitem(sys.modules, "trust_user_mech")  # a new process would import the new code
    code, again, _ = summary(capsys, conf, "--out", out, "--allow-import", "trust_user_mech")
    assert again["cached"] == [] and again["executed"] == [0]
    assert code == 1 and again["status"] == "violation"
    monkeypatch.delitem(sys.modules, "trust_user_mech")
    code, fresh, _ = summary(capsys, conf, "--out", tmp_path / "fresh", "--allow-import", "trust_user_mech",
                             "--no-cache")
    assert code == 1 and fresh["audits"][0]["verdict"] == again["audits"][0]["verdict"]


# --------------------------------------------------------------------------- 2. key file
@pytest.mark.parametrize("mode", [0o666, 0o644, 0o777, 0o640])
def test_key_file_readable_or_writable_by_others_is_refused(tmp_path, capsys, monkeypatch, mode):
    key = tmp_path / "keys" / "shared-key"
    key.write_bytes(os.urandom(32))
    os.chmod(key, mode)
    monkeypatch.setenv(cache.KEY_ENV, str(key))
    with pytest.raises(cache.CacheUnavailable, match=r"shared-key.*mode 0o?%o.*chmod 600" % mode):
        cache.cache_secret()
    conf = tmp_path / "cal.toml"
    conf.write_text(CONFIG)
    code, res, err = summary(capsys, conf, "--out", tmp_path / "out")
    assert code == 0 and res["cached"] == [] and "cache disabled" in err and "shared-key" in err
    assert not (tmp_path / "out" / "cal" / "cache").exists()  # nothing written under a key others can read


def test_key_in_a_folder_writable_by_others_is_refused(tmp_path, monkeypatch):
    folder = tmp_path / "open"
    folder.mkdir()
    os.chmod(folder, 0o777)
    key = folder / "key"
    key.write_bytes(os.urandom(32))
    os.chmod(key, 0o600)
    monkeypatch.setenv(cache.KEY_ENV, str(key))
    with pytest.raises(cache.CacheUnavailable, match="writable by others"):
        cache.cache_secret()


def test_key_that_is_a_symlink_is_refused(tmp_path, monkeypatch):
    real = tmp_path / "keys" / "real"
    real.write_bytes(os.urandom(32))
    os.chmod(real, 0o600)
    link = tmp_path / "keys" / "link"
    link.symlink_to(real)
    monkeypatch.setenv(cache.KEY_ENV, str(link))
    with pytest.raises(cache.CacheUnavailable, match="not a regular file"):
        cache.cache_secret()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
@pytest.mark.parametrize("what", ["key", "folder"])
def test_key_or_folder_owned_by_another_user_is_refused(tmp_path, monkeypatch, what):
    key = tmp_path / "keys" / "key"
    key.write_bytes(os.urandom(32))
    os.chmod(key, 0o600)
    os.chown(key if what == "key" else key.parent, 65534, 65534)
    monkeypatch.setenv(cache.KEY_ENV, str(key))
    with pytest.raises(cache.CacheUnavailable, match="owned by uid 65534"):
        cache.cache_secret()


def test_private_key_in_a_private_folder_is_accepted(tmp_path):
    secret = cache.cache_secret()  # created 0600 in the 0700 folder of the fixture
    assert cache.cache_secret() == secret


# --------------------------------------------------------------------------- 3. manifest
def test_manifest_omitting_report_html_does_not_keep_a_forged_report(tmp_path, capsys):
    conf = tmp_path / "cal.toml"
    conf.write_text(CONFIG)
    out = tmp_path / "out"
    assert cli(capsys, conf, "--out", out, "--seed", "1")[0] == 0
    good = (out / "cal" / "report.html").read_bytes()
    for flags in (["--no-cache"], []):
        (out / "cal" / "report.html").write_text("<h1>PASS (forged)</h1>")
        log = json.loads((out / "cal" / "run.log.json").read_text())
        log["set"]["files"].pop("report.html")
        (out / "cal" / "run.log.json").write_text(json.dumps(log))
        assert cli(capsys, conf, "--out", out, "--seed", "1", *flags)[0] == 0
        assert (out / "cal" / "report.html").read_bytes() == good, flags


def test_manifest_with_a_forged_hash_does_not_keep_a_forged_report(tmp_path, capsys):
    conf = tmp_path / "cal.toml"
    conf.write_text(CONFIG)
    out = tmp_path / "out"
    assert cli(capsys, conf, "--out", out)[0] == 0
    good = (out / "cal" / "report.md").read_bytes()
    forged = b"# PASS (forged)\n"
    (out / "cal" / "report.md").write_bytes(forged)
    log = json.loads((out / "cal" / "run.log.json").read_text())
    log["set"]["files"]["report.md"] = hashlib.sha256(forged).hexdigest()
    (out / "cal" / "run.log.json").write_text(json.dumps(log))
    assert cli(capsys, conf, "--out", out)[0] == 0
    assert (out / "cal" / "report.md").read_bytes() == good


@pytest.mark.parametrize("entry", ["/dev/zero", "../../outside.fifo", "figures/../../../outside.fifo"])
def test_manifest_entries_outside_the_set_are_never_read(tmp_path, capsys, entry):
    """A manifest naming /dev/zero (MemoryError) or a FIFO outside the set (a hang) used to be read."""
    import subprocess

    conf = tmp_path / "cal.toml"
    conf.write_text(CONFIG)
    out = tmp_path / "out"
    os.mkfifo(tmp_path / "outside.fifo")
    assert cli(capsys, conf, "--out", out)[0] == 0
    log = json.loads((out / "cal" / "run.log.json").read_text())
    log["set"]["files"][entry] = "0" * 64  # last: every other file matches, so a reader gets to it
    (out / "cal" / "run.log.json").write_text(json.dumps(log))
    # a child process: if it hangs on the FIFO, the timeout fails the test instead of hanging the suite
    done = subprocess.run([sys.executable, "-m", "privaudit.audit.app.cli", "run", str(conf), "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert entry not in json.loads((out / "cal" / "run.log.json").read_text())["set"]["files"]
    assert stat.S_ISFIFO(os.lstat(tmp_path / "outside.fifo").st_mode)


def test_unit_manifest_names_are_validated():
    h = "0" * 64
    good = {"report.json": h, "report.md": h, "report.html": h, "figures/x-1.png": h}
    assert report_store.manifest_names_problem(good) is None
    for bad in ("/dev/zero", "../x", "figures/../x", "figures/a/b.png", "cache/000-x.json", "figures/.x.png",
                "figures/", "report.json\0"):
        problem = report_store.manifest_names_problem({**good, bad: h})
        assert problem is not None and repr(bad) in problem, bad
    assert "omits report.html" in report_store.manifest_names_problem({"report.json": h, "report.md": h})
    assert "SHA-256" in report_store.manifest_names_problem({**good, "report.md": "é" * 64})
    assert report_store.manifest_names_problem(["report.json"]) is not None


# --------------------------------------------------------------------------- 4. crafted files
def _cache_entry(out):
    return next((out / "cal" / "cache").glob("000-*.json"))


def _make_fifo(path):
    path.unlink()
    os.mkfifo(path)


def _make_dev_zero(path):
    path.unlink()
    path.symlink_to("/dev/zero")


def _make_dir(path):
    path.unlink()
    path.mkdir()
    (path / "x").write_text("x")


def _make_sparse(path):
    path.unlink()
    with open(path, "wb") as fh:
        fh.truncate(6 * 2**30)


def _non_ascii_mac(path):
    doc = json.loads(path.read_text())
    doc["mac"] = "é" * 64
    path.write_text(json.dumps(doc))


def _mac_wrong_type(path):
    doc = json.loads(path.read_text())
    doc["mac"] = "0" * 63 + "\u0660"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")


@pytest.mark.parametrize("craft", [_make_fifo, _make_dev_zero, _make_dir, _make_sparse, _non_ascii_mac,
                                   _mac_wrong_type], ids=["fifo", "dev-zero", "directory", "sparse-6GiB",
                                                          "non-ascii-mac", "arabic-digit-mac"])
def test_crafted_cache_entries_are_refused_before_reading(tmp_path, capsys, craft):
    conf = tmp_path / "cal.toml"
    conf.write_text(CONFIG)
    out = tmp_path / "out"
    code, first, _ = summary(capsys, conf, "--out", out)
    assert code == 0
    craft(_cache_entry(out))
    start = time.monotonic()
    code, res, err = summary(capsys, conf, "--out", out)  # a FIFO must not hang, a 6 GiB file not be read
    assert time.monotonic() - start < 120
    assert code == 0, err
    assert res["executed"] == [0] and res["cached"] == [] and len(res["cache_warnings"]) == 1
    assert res["audits"][0]["verdict"] == first["audits"][0]["verdict"]


@pytest.mark.parametrize("craft", [_make_fifo, _make_dev_zero, _make_dir, _make_sparse],
                         ids=["fifo", "dev-zero", "directory", "sparse-6GiB"])
def test_crafted_run_logs_are_refused_before_reading(tmp_path, capsys, craft):
    conf = tmp_path / "cal.toml"
    conf.write_text(CONFIG)
    out = tmp_path / "out"
    assert cli(capsys, conf, "--out", out)[0] == 0
    craft(out / "cal" / "run.log.json")
    start = time.monotonic()
    code, _, err = cli(capsys, conf, "--out", out)
    assert time.monotonic() - start < 120
    assert code == 0, err
    assert json.loads((out / "cal" / "run.log.json").read_text())["schema"] == report_store.RUN_LOG_SCHEMA


# --------------------------------------------------------------------------- 5. symlinks, names
def _elsewhere(tmp_path):
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "precious.txt").write_text("do not move me")
    (other / ".precious.json.abc.tmp").write_text("do not delete me")
    return other


@pytest.mark.parametrize("where", ["set", "cache", "figures", "out"])
def test_symlinked_folders_are_refused_and_their_targets_untouched(tmp_path, capsys, where):
    conf = tmp_path / "cal.toml"
    conf.write_text(CONFIG)
    out = tmp_path / "out"
    assert cli(capsys, conf, "--out", out)[0] == 0
    other = _elsewhere(tmp_path)
    link = {"set": out / "cal", "cache": out / "cal" / "cache", "figures": out / "cal" / "figures",
            "out": out}[where]
    target = other
    if where == "out":
        os.rename(out, tmp_path / "real-out")
        target = tmp_path / "real-out"
    elif where == "set":
        import shutil

        shutil.rmtree(link)
    else:
        import shutil

        shutil.rmtree(link)
    link.symlink_to(target, target_is_directory=True)
    before = snapshot(tmp_path / "elsewhere"), snapshot(tmp_path / "real-out") if where == "out" else None
    for flags in ([], ["--check"], ["--no-cache"]):
        code, out_text, err = cli(capsys, conf, "--out", out, *flags)
        assert code == 2, (flags, err)
        assert "symbolic link" in err and str(link) in err, err
    after = snapshot(tmp_path / "elsewhere"), snapshot(tmp_path / "real-out") if where == "out" else None
    assert after == before
    assert os.path.islink(link)
    leftovers = [p.name for p in link.parent.iterdir() if p.name.startswith(".")]
    assert leftovers == []  # no stale .ready symlink, no temporary


def test_report_store_refuses_a_symlinked_set_directly(tmp_path):
    other = _elsewhere(tmp_path)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "r").symlink_to(other)
    before = snapshot(other)
    with pytest.raises(report_store.OutDirError, match="symbolic link"):
        report_store.write_set(tmp_path / "out" / "r", b"{}", lambda: {"report.md": b"", "report.html": b""})
    with pytest.raises(report_store.OutDirError, match="symbolic link"):
        report_store.recover_set(tmp_path / "out" / "r")
    assert snapshot(other) == before
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["r"]


def test_stale_ready_symlink_is_removed_not_followed(tmp_path):
    other = _elsewhere(tmp_path)
    out = tmp_path / "out"
    report_store.write_set(out / "r", b"{}", lambda: {"report.md": b"m", "report.html": b"h"})
    (out / ".r.0123abcd.ready").symlink_to(other)
    (out / ".r.0123abce.old").symlink_to(other)
    before = snapshot(other)
    report_store.write_set(out / "r", b"{}", lambda: {"report.md": b"m", "report.html": b"h"})
    assert snapshot(other) == before
    assert sorted(p.name for p in out.iterdir()) == ["r"]
    assert (out / "r" / "report.md").read_bytes() == b"m"


def test_a_name_is_literal_not_a_glob(tmp_path, capsys):
    """`name = "*"` used to adopt and delete another configuration's leftovers (`.cal.<hex>.ready`)."""
    out = tmp_path / "out"
    out.mkdir()
    theirs = out / ".cal.0123abcd.ready"
    theirs.mkdir()
    (theirs / "report.json").write_text("{}")
    (theirs / "cache").mkdir()
    (theirs / "cache" / "000-x.json").write_text("their entry")
    also = out / ".x.tmp"
    also.write_text("not ours either")
    before = snapshot(out)
    star = tmp_path / "star.toml"
    star.write_text(CONFIG.replace('name = "cal"', 'name = "*"'))
    code, _, err = cli(capsys, star, "--out", out)
    assert code in (0, 2), err
    if code == 0:
        assert (out / "*" / "report.json").is_file()
    after = {k: v for k, v in snapshot(out).items() if not k.startswith("*")}
    assert after == before


def test_leftovers_are_matched_exactly(tmp_path):
    out = tmp_path / "out"
    report_store.write_set(out / "r", b"{}", lambda: {"report.md": b"m", "report.html": b"h"})
    kept = [out / ".r.extra.0123abcd.ready", out / ".r.0123abcd.ready.bak", out / ".rr.0123abcd.tmp",
            out / ".r.NOTHEX00.old"]
    for k in kept:
        k.mkdir()
        (k / "f").write_text("keep")
    report_store.write_set(out / "r", b"{}", lambda: {"report.md": b"m2", "report.html": b"h"})
    assert all((k / "f").read_text() == "keep" for k in kept)


# --------------------------------------------------------------------------- 6. Dask
class _Evil:
    """Unpickling this creates a marker file: what a hostile listener sends."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _pickle_listener(marker, answers=4, seconds=20.0):
    """A loopback listener answering every connection with a Dask handshake that carries a pickle; stops by itself.

    The message is framed by Dask itself, so Dask's own reader would unpickle it (and create ``marker``).
    """
    from distributed.protocol import Serialize, dumps
    from distributed.protocol.utils import pack_frames

    frames = pack_frames(dumps({"compression": None, "python": (3, 11, 7), "pickle-protocol": 5,
                                "op": Serialize(_Evil(str(marker)))}))
    message = len(frames).to_bytes(8, "little") + frames
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def serve():
        deadline = time.monotonic() + seconds
        try:
            for _ in range(answers):
                server.settimeout(max(deadline - time.monotonic(), 0.01))
                conn, _ = server.accept()
                with conn:
                    conn.settimeout(2)
                    try:
                        conn.sendall(message)
                        conn.recv(65536)
                    except OSError:
                        pass
        except OSError:
            pass
        finally:
            server.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return port, thread


def test_dask_own_reader_would_execute_the_listeners_pickle(tmp_path):
    """The premise of the next test: what the listener sends is code for Dask's deserialiser."""
    from distributed.protocol import Serialize, dumps, loads

    marker = tmp_path / "EXECUTED-BY-DASK"
    loads(dumps({"op": Serialize(_Evil(str(marker)))}))
    assert marker.exists()


def test_probing_a_scheduler_never_unpickles_what_it_sends(tmp_path, capsys):
    marker = tmp_path / "EXECUTED"
    port, thread = _pickle_listener(marker)
    conf = tmp_path / "cal.toml"
    conf.write_text(CONFIG)
    from privaudit.audit.app.runner import probe_scheduler

    probe_scheduler(f"tcp://127.0.0.1:{port}", timeout=3)  # a TCP connect: the listener is there
    code, _, err = cli(capsys, conf, "--out", tmp_path / "out", "--check", "--scheduler", f"tcp://127.0.0.1:{port}")
    assert code == 0, err
    thread.join(30)
    assert not marker.exists()


def test_non_loopback_plain_tcp_scheduler_needs_an_opt_in(tmp_path, capsys):
    from privaudit.audit.app.runner import SchedulerError, check_scheduler

    conf = tmp_path / "cal.toml"
    conf.write_text(CONFIG)
    for address in ("tcp://10.0.0.7:8786", "tcp://scheduler.example:8786", "ws://192.168.1.2:8786"):
        with pytest.raises(SchedulerError, match="--insecure-scheduler"):
            check_scheduler(address)
        code, _, err = cli(capsys, conf, "--out", tmp_path / "out", "--check", "--scheduler", address)
        assert code == 2 and "--insecure-scheduler" in err and "TLS" in err, err
    for address in ("tcp://127.0.0.1:8786", "tcp://localhost:8786", "tcp://[::1]:8786", "tls://10.0.0.7:8786",
                    "wss://scheduler.example:443"):
        assert check_scheduler(address) == address
    assert check_scheduler("tcp://10.0.0.7:8786", insecure=True) == "tcp://10.0.0.7:8786"


def _plugin_run(params, rng):
    return {"kind": "plugin-kind", "verdict": "pass", "value": float(rng.standard_normal())}


def test_a_plugin_kind_is_never_cached(tmp_path):
    """A kind installed by a plugin is code outside privaudit: never read from or written to the cache."""
    from privaudit.audit.app.config import parse_config
    from privaudit.audit.app.runner import run_config
    from privaudit.audit.kinds import KINDS, AuditKind

    KINDS.register("trust-plugin-kind", AuditKind("trust-plugin-kind", _plugin_run, {}),
                   source="entry point trust_plugin:run (distribution trust-plugin 1.0)")
    try:
        cfg = parse_config({"name": "p", "seed": 1, "audits": [{"kind": "trust-plugin-kind"}, {"kind": "tradeoff",
                            "mechanism": {"name": "gaussian", "epsilon": 1.0, "delta": 1e-5}, "n": 1000}]})
        first = run_config(cfg, out=tmp_path, figures=False)
        again = run_config(cfg, out=tmp_path, figures=False)
    finally:
        KINDS.unregister("trust-plugin-kind")
    assert list(first.not_cached) == [0] and "entry point trust_plugin:run" in first.not_cached[0]
    assert again.executed == [0] and again.cached == [1]
    assert [p.name[:3] for p in (tmp_path / "p" / "cache").iterdir()] == ["001"]
