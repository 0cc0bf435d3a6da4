"""The verified task cache: a finished task's results, reused only when provably ours and current.

Threat model
    A cache directory may be stale (written by other code), corrupted (a truncated or
    hand-edited file, malformed-but-valid JSON) or hostile (shared, or received with a
    report folder). None of these may change a verdict or crash a run.

Entries
    ``<out>/<name>/cache/<index>-<entry key>.json`` holds::

        {"schema": "privaudit.cache/2", "task_key", "code", "index", "ok": true,
         "results": [{"kind", "target", "verdict", ...}, ...], "mac"}

    The entry key is ``SHA-256(task key ‖ code fingerprint)``: the task key hashes the
    configuration of the task (kind, target, scaled parameters, seed, position), the
    code fingerprint (:func:`privaudit.audit.app.provenance.code_fingerprint`) the version and
    the installed sources, so an upgrade or an edited checkout never reuses old results.

Authentication
    ``mac`` is HMAC-SHA256, under a per-user secret, of the canonical JSON of every other
    field. The secret is 32 random bytes in ``~/.cache/privaudit/key`` (``$XDG_CACHE_HOME``
    respected), created on first use with mode 0600; ``PRIVAUDIT_CACHE_KEY_FILE`` points
    elsewhere (e.g. a CI secret). Someone without the secret cannot produce an entry that
    verifies, so a tampered entry (a ``verdict`` edited to ``"pass"``) is rejected.

Loading
    :func:`load_entry` never raises for a bad file: it returns the outcome, or ``None``
    and the reason (unreadable, not JSON, nested too deep, wrong schema, bad MAC, results
    not matching the result schema). The runner recomputes such tasks and emits a
    :class:`CacheWarning` naming the file and the reason.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import stat
from pathlib import Path
from typing import Any

from privaudit.audit.app.provenance import code_fingerprint
from privaudit.audit.app.report_store import atomic_write

SCHEMA = "privaudit.cache/2"
KEY_ENV = "PRIVAUDIT_CACHE_KEY_FILE"
#: A verdict is a short lower-case word ("pass", "violation", "inconclusive", ...); "error" is never cached.
VERDICT_PATTERN = re.compile(r"[a-z][a-z-]{0,31}")
#: Deepest nesting accepted in a cached result (results are tables of curves: depth ≤ 6 in practice).
MAX_DEPTH = 32
_ENVELOPE = {"schema": str, "task_key": str, "code": str, "index": int, "ok": bool, "results": list, "mac": str}


class CacheWarning(UserWarning):
    """A cache entry was rejected (tampered, malformed, stale) or the cache is unavailable."""


class CacheUnavailable(OSError):
    """The per-user cache secret can be neither read nor created."""


def key_file() -> Path:
    """Where the per-user HMAC secret lives (``$PRIVAUDIT_CACHE_KEY_FILE`` overrides)."""
    if os.environ.get(KEY_ENV):
        return Path(os.environ[KEY_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "privaudit" / "key"


def cache_secret() -> bytes:
    """The per-user secret, created (32 random bytes, mode 0600) on first use.

    Raises
    ------
    CacheUnavailable
        When the file can be neither read nor created, or holds fewer than 16 bytes.
    """
    path = key_file()
    try:
        return _read_secret(path)
    except FileNotFoundError:
        pass
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process created it between our read and our open
        return _read_secret(path)
    except OSError as exc:
        raise CacheUnavailable(f"cannot create the cache key {str(path)!r}: {exc}") from exc
    with os.fdopen(fd, "wb") as fh:
        fh.write(secrets.token_bytes(32))
    return _read_secret(path)


def _read_secret(path: Path) -> bytes:
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise CacheUnavailable(f"cache key {str(path)!r} is not a regular file")
        data = path.read_bytes()
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise CacheUnavailable(f"cannot read the cache key {str(path)!r}: {exc}") from exc
    if len(data) < 16:
        raise CacheUnavailable(f"cache key {str(path)!r} holds {len(data)} bytes, fewer than 16")
    return data


def entry_key(task_key: str) -> str:
    """Key of a task's entry under the current code: SHA-256(task key ‖ code fingerprint)."""
    return hashlib.sha256(f"{task_key}\0{code_fingerprint()}".encode()).hexdigest()[:32]


def entry_path(cache_dir: Path, index: int, task_key: str) -> Path:
    """``<cache_dir>/<index>-<entry key>.json``: the index first, so a listing reads in task order."""
    return Path(cache_dir) / f"{index:03d}-{entry_key(task_key)}.json"


def _canonical(doc: dict) -> bytes:
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode()


def _mac(secret: bytes, doc: dict) -> str:
    return hmac.new(secret, _canonical({k: v for k, v in doc.items() if k != "mac"}), hashlib.sha256).hexdigest()


def store_entry(cache_dir: Path, index: int, task_key: str, results: list[dict], secret: bytes) -> Path:
    """Write a successful task's results as an authenticated entry (atomically)."""
    doc = {"schema": SCHEMA, "task_key": task_key, "code": code_fingerprint(), "index": index, "ok": True,
           "results": results}
    doc["mac"] = _mac(secret, doc)
    path = entry_path(cache_dir, index, task_key)
    # Key order as computed (not sorted), so a cached result renders exactly as a fresh one.
    atomic_write(path, json.dumps(doc, indent=1, allow_nan=False))
    return path


def _no_constants(name: str):
    raise ValueError(f"non-finite number {name} (privaudit writes them as strings)")


def _depth(value: Any) -> int:
    """Nesting depth of JSON data, iteratively (a hostile file must not exhaust the stack)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        deepest = max(deepest, d)
        if d > MAX_DEPTH:
            return d
        if isinstance(v, dict):
            stack.extend((x, d + 1) for x in v.values())
        elif isinstance(v, list):
            stack.extend((x, d + 1) for x in v)
    return deepest


def result_problem(result: Any) -> str | None:
    """Why ``result`` does not match the result schema (None when it does)."""
    if not isinstance(result, dict):
        return f"a result is {type(result).__name__}, not an object"
    for field in ("kind", "target", "verdict"):
        if not isinstance(result.get(field), str):
            return f"result field {field!r} is {result.get(field)!r}, not a string"
    if not VERDICT_PATTERN.fullmatch(result["verdict"]) or result["verdict"] == "error":
        return f"result verdict {result['verdict']!r} is not the verdict of a successful audit"
    notes = result.get("notes", [])
    if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
        return "result field 'notes' is not a list of strings"
    return None


def load_entry(cache_dir: Path, index: int, task_key: str, secret: bytes) -> tuple[dict | None, str | None]:
    """``(outcome, None)`` for a verified entry, ``(None, None)`` when absent, ``(None, reason)`` when rejected.

    The outcome is ``{"key", "index", "ok": True, "results"}`` as the runner produces it.
    """
    path = entry_path(cache_dir, index, task_key)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, None
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"unreadable ({exc})"
    try:
        doc = json.loads(text, parse_constant=_no_constants)
    except RecursionError:
        return None, "nested too deeply"
    except ValueError as exc:
        return None, f"not valid JSON ({exc})"
    problem = _envelope_problem(doc, index, task_key)
    if problem is None and not hmac.compare_digest(str(doc["mac"]), _mac_or_empty(secret, doc)):
        problem = "its authentication code does not verify (edited, or written with another user's key)"
    if problem is None:
        problem = next((p for p in map(result_problem, doc["results"]) if p), None)
    if problem is not None:
        return None, problem
    return {"key": task_key, "index": index, "ok": True, "results": doc["results"]}, None


def _mac_or_empty(secret: bytes, doc: dict) -> str:
    try:
        return _mac(secret, doc)
    except (TypeError, ValueError):  # not serialisable canonically: cannot be ours
        return ""


def _envelope_problem(doc: Any, index: int, task_key: str) -> str | None:
    if not isinstance(doc, dict):
        return f"top level is {type(doc).__name__}, not an object"
    for field, typ in _ENVELOPE.items():
        if not isinstance(doc.get(field), typ) or (typ is int and isinstance(doc.get(field), bool)):
            return f"field {field!r} is missing or not {typ.__name__}"
    if doc["schema"] != SCHEMA:
        return f"schema {doc['schema']!r}, expected {SCHEMA!r}"
    if doc["code"] != code_fingerprint() or doc["task_key"] != task_key or doc["index"] != index:
        return "written for another task or another version of the code"
    if not doc["ok"] or not doc["results"]:
        return "not a successful result"
    if _depth(doc["results"]) > MAX_DEPTH:
        return f"results nested deeper than {MAX_DEPTH}"
    return None
