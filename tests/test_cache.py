"""The verified cache: keyed by configuration and code, authenticated, schema-checked; never trusted blindly.

Each test points the per-user HMAC key at a temporary file, so the suite never
touches ``~/.cache`` and a "foreign" key is just another file.
"""

from __future__ import annotations

import json
import os
import stat
import warnings

import pytest

import privaudit.audit.app.cache as cache
from privaudit.audit.app.config import Field, parse_config
from privaudit.audit.app.runner import run_config
from privaudit.audit.app.tasks import register_task_kind, unregister_task_kind

CALLS: list[int] = []


def verdict_task(params, rng):
    """A violation for tag 0 (the audited claim is false), a pass otherwise; a number from the task's generator."""
    CALLS.append(params["tag"])
    return {"kind": "stub", "verdict": "violation" if params["tag"] == 0 else "pass",
            "value": float(rng.standard_normal()), "curve": [[1.0, 2.0], [3.0, 4.0]], "notes": ["a note"]}


@pytest.fixture(autouse=True)
def stub_kind(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.KEY_ENV, str(tmp_path / "keys" / "key"))
    register_task_kind("stub-cache", fields={"tag": Field("int", low=0)}, force=True)(verdict_task)
    CALLS.clear()
    yield
    unregister_task_kind("stub-cache")


def config(k=3):
    return parse_config({"name": "c", "seed": 3, "audits": [{"kind": "stub-cache", "tag": i} for i in range(k)]})


def entry(out, index):
    return next((out / "c" / "cache").glob(f"{index:03d}-*.json"))


def run(out, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = run_config(config(), out=out, figures=False, **kw)
    return res, [str(w.message) for w in caught if issubclass(w.category, cache.CacheWarning)]


def test_key_file_is_created_private_and_reused(tmp_path):
    path = cache.key_file()
    assert path == tmp_path / "keys" / "key" and not path.exists()
    secret = cache.cache_secret()
    assert len(secret) == 32 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert cache.cache_secret() == secret  # reused, not regenerated


def test_tampered_verdict_is_rejected_and_recomputed(tmp_path):
    first, _ = run(tmp_path)
    assert first.status == "violation" and first.executed == [0, 1, 2]
    victim = entry(tmp_path, 0)
    doc = json.loads(victim.read_text())
    doc["results"][0]["verdict"] = "pass"  # what the issue did: the violating audit turned PASS, exit 0
    victim.write_text(json.dumps(doc))
    CALLS.clear()
    again, warned = run(tmp_path)
    assert again.status == "violation" and again.exit_code == 1  # the verdict did not change
    assert again.executed == [0] and again.cached == [1, 2] and CALLS == [0]
    assert len(warned) == 1 and "task 0" in warned[0] and "does not verify" in warned[0]
    assert again.cache_warnings == warned
    # the recomputed entry verifies again
    CALLS.clear()
    third, warned = run(tmp_path)
    assert third.cached == [0, 1, 2] and CALLS == [] and warned == []


def test_entry_written_with_another_users_key_is_rejected(tmp_path, monkeypatch):
    run(tmp_path)
    # a cache received from elsewhere: valid entries, but under someone else's key
    monkeypatch.setenv(cache.KEY_ENV, str(tmp_path / "other-user-key"))
    CALLS.clear()
    res, warned = run(tmp_path)
    assert res.executed == [0, 1, 2] and CALLS == [0, 1, 2] and len(warned) == 3


def _forge(path, mutate, secret):
    """Rewrite an entry with a *valid* MAC (as our own buggy code would): the schema check must still hold."""
    doc = json.loads(path.read_text())
    mutate(doc)
    doc["mac"] = cache._mac(secret, doc)
    path.write_text(json.dumps(doc))


@pytest.mark.parametrize("name, write", [
    ("truncated", lambda p, s: p.write_text('{"schema": "privaudit.cache/2", "res')),
    ("array", lambda p, s: p.write_text("[]")),
    ("string results", lambda p, s: p.write_text(json.dumps({**json.loads(p.read_text()), "results": "x"}))),
    ("no kind", lambda p, s: _forge(p, lambda d: d["results"][0].pop("kind"), s)),
    ("verdict error", lambda p, s: _forge(p, lambda d: d["results"][0].update(verdict="error"), s)),
    ("notes not strings", lambda p, s: _forge(p, lambda d: d["results"][0].update(notes=[1]), s)),
    ("result a list", lambda p, s: _forge(p, lambda d: d.update(results=[[1]]), s)),
    ("empty results", lambda p, s: _forge(p, lambda d: d.update(results=[]), s)),
    ("index a bool", lambda p, s: _forge(p, lambda d: d.update(index=True), s)),
    ("deep nesting", lambda p, s: p.write_text("[" * 100_000 + "]" * 100_000)),
    ("deep in results", lambda p, s: _forge(p, lambda d: d["results"][0].update(x=json.loads("[" * 60 + "]" * 60)), s)),
    ("NaN", lambda p, s: p.write_text(p.read_text().replace('"value": ', '"value": NaN, "v2": '))),
    ("not utf-8", lambda p, s: p.write_bytes(b"\xff\xfe\x00")),
])
def test_malformed_entries_are_recomputed_with_a_warning(tmp_path, name, write):
    first, _ = run(tmp_path)
    write(entry(tmp_path, 1), cache.cache_secret())
    CALLS.clear()
    res, warned = run(tmp_path)
    assert res.executed == [1] and CALLS == [1], name
    assert len(warned) == 1 and "task 1" in warned[0], warned
    assert res.report["audits"] == first.report["audits"]


def test_schema_check_catches_a_forged_entry_directly(tmp_path):
    run(tmp_path)
    secret = cache.cache_secret()
    path = entry(tmp_path, 2)
    _forge(path, lambda d: d["results"][0].update(verdict="maybe?"), secret)
    key = json.loads(path.read_text())["task_key"]
    outcome, problem = cache.load_entry(tmp_path / "c" / "cache", 2, key, secret)
    assert outcome is None and "verdict 'maybe?'" in problem


def test_entries_are_keyed_by_the_code(tmp_path, monkeypatch):
    run(tmp_path)
    monkeypatch.setattr(cache, "code_fingerprint", lambda: "0.1.0+another-build")
    CALLS.clear()
    res, warned = run(tmp_path)
    # another code version looks up other entries: everything recomputed, silently (not an attack)
    assert res.executed == [0, 1, 2] and CALLS == [0, 1, 2] and warned == []


def test_unusable_key_disables_the_cache_with_a_warning(tmp_path, monkeypatch):
    bad = tmp_path / "short-key"
    bad.write_bytes(b"0123")
    monkeypatch.setenv(cache.KEY_ENV, str(bad))
    res, warned = run(tmp_path)
    assert res.executed == [0, 1, 2] and len(warned) == 1 and "cache disabled" in warned[0]
    assert not (tmp_path / "c" / "cache").exists()


def test_run_log_says_which_results_came_from_the_cache(tmp_path):
    run(tmp_path)
    victim = entry(tmp_path, 2)
    os.unlink(victim)
    res, _ = run(tmp_path)
    log = json.loads((tmp_path / "c" / "run.log.json").read_text())
    assert [t["from_cache"] for t in log["tasks"]] == [True, True, False]
    assert log["cached"] == [0, 1] and log["executed"] == [2]
    # and the report itself is identical whatever its provenance
    fresh = run_config(config(), out=tmp_path / "fresh", figures=False, use_cache=False)
    assert (tmp_path / "c" / "report.json").read_bytes() == (tmp_path / "fresh" / "c" / "report.json").read_bytes()
    assert fresh.report == res.report
