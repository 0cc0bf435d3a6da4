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

The key file
    Anyone who can read or write the key can forge entries, so it is used only when it is
    a regular file (not a link) owned by this user, with no permission for group or others
    (0600 or 0400), in a folder owned by this user (or root) that group and others cannot
    write. Otherwise :func:`cache_secret` raises :class:`CacheUnavailable` naming the file
    and the fix (``chmod 600``), and the run goes on *without* the cache, with a warning:
    a verdict is then always computed, never read.

Code outside privaudit
    The code fingerprint covers privaudit's own sources only. A task that uses code from
    elsewhere (a ``"module:attr"`` reference opted in with ``--allow-import``, or a
    component, attacker or audit kind an installed plugin registers) can change without
    the fingerprint changing, so such a task is never cached: the runner runs it every
    time and says so (run log ``not_cached``, a note on stderr). See :func:`outside_code`.
    Kinds and components registered in-process through the Python API (a script's
    ``register_task_kind``) are the caller's own code and are cached like privaudit's:
    after editing them, run with ``use_cache=False``.

Loading
    :func:`load_entry` never raises for a bad file: it returns the outcome, or ``None``
    and the reason (a link, FIFO, folder or device; larger than :data:`MAX_ENTRY_BYTES`;
    not JSON, nested too deep, wrong schema, bad MAC, results not matching the result
    schema). The file is opened without following links and checked before a byte is
    read. The runner recomputes such tasks and emits a :class:`CacheWarning` naming the
    file and the reason.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from privaudit.audit.app.authentication import canonical_json, sign, verifies
from privaudit.audit.app.provenance import code_fingerprint
from privaudit.audit.app.safe_files import UnsafeFileError, lstat_at, opened_dir, read_regular, remove_at, write_at

SCHEMA = "privaudit.cache/2"
KEY_ENV = "PRIVAUDIT_CACHE_KEY_FILE"
#: A verdict is a short lower-case word ("pass", "violation", "inconclusive", ...); "error" is never cached.
VERDICT_PATTERN = re.compile(r"[a-z][a-z-]{0,31}")
#: Deepest nesting accepted in a cached result (results are tables of curves: depth ≤ 6 in practice).
MAX_DEPTH = 32
#: Largest cache entry read (results are tables of curves: a few MB at most in practice).
MAX_ENTRY_BYTES = 256 * 2**20
#: Largest key file read (the key is 32 bytes).
MAX_KEY_BYTES = 4096
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


def _key_problem(path: Path, st: os.stat_result, folder: os.stat_result) -> str | None:
    """Why the key at ``path`` could be read or replaced by someone else (None when it is private)."""
    uid = os.geteuid()
    if st.st_uid != uid:
        return f"is owned by uid {st.st_uid}, not by this user (uid {uid})"
    if stat.S_IMODE(st.st_mode) & 0o077:
        return (f"has mode {stat.S_IMODE(st.st_mode):#o}: group or others may read or write it "
                f"(run: chmod 600 {str(path)!r})")
    if folder.st_uid not in (uid, 0):
        return f"is in the folder {str(path.parent)!r} owned by uid {folder.st_uid}, not by this user"
    if stat.S_IMODE(folder.st_mode) & 0o022:
        return (f"is in the folder {str(path.parent)!r} of mode {stat.S_IMODE(folder.st_mode):#o}, writable by others "
                f"(who could replace the key; run: chmod go-w {str(path.parent)!r})")
    return None


def _read_secret(path: Path) -> bytes:
    try:
        # The folder as it is (a link to it is fine: what is checked is the folder opened).
        folder_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            folder = os.fstat(folder_fd)
            fd = os.open(path.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder_fd)
        finally:
            os.close(folder_fd)
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise CacheUnavailable(f"cache key {str(path)!r} is not a regular file")
            problem = _key_problem(path, st, folder)
            if problem is not None:
                raise CacheUnavailable(f"cache key {str(path)!r} {problem}")
            data = fh.read(MAX_KEY_BYTES + 1)
    except (FileNotFoundError, CacheUnavailable):
        raise
    except OSError as exc:
        if os.path.islink(path):
            raise CacheUnavailable(f"cache key {str(path)!r} is not a regular file (a symbolic link)") from None
        raise CacheUnavailable(f"cannot read the cache key {str(path)!r}: {exc}") from exc
    if len(data) > MAX_KEY_BYTES:
        raise CacheUnavailable(f"cache key {str(path)!r} holds more than {MAX_KEY_BYTES} bytes")
    if len(data) < 16:
        raise CacheUnavailable(f"cache key {str(path)!r} holds {len(data)} bytes, fewer than 16")
    return data


def entry_key(task_key: str) -> str:
    """Key of a task's entry under the current code: SHA-256(task key ‖ code fingerprint).

    Parameters
    ----------
    task_key : str
        The task's content hash (:func:`~privaudit.audit.app.tasks.task_key`).

    Returns
    -------
    str
        Hex digest.
    """
    return hashlib.sha256(f"{task_key}\0{code_fingerprint()}".encode()).hexdigest()[:32]


def entry_name(index: int, task_key: str) -> str:
    """``<index>-<entry key>.json``: the index first, so a listing reads in task order.

    Parameters
    ----------
    index : int
        The task's position in the configuration.
    task_key : str
        The task's content hash (:func:`~privaudit.audit.app.tasks.task_key`).

    Returns
    -------
    str
    """
    return f"{index:03d}-{entry_key(task_key)}.json"


def entry_path(cache_dir: Path, index: int, task_key: str) -> Path:
    """``<cache_dir>/<index>-<entry key>.json``.

    Parameters
    ----------
    cache_dir : Path
        The set's cache folder.
    index : int
        The task's position in the configuration.
    task_key : str
        The task's content hash (:func:`~privaudit.audit.app.tasks.task_key`).

    Returns
    -------
    Path
    """
    return Path(cache_dir) / entry_name(index, task_key)


@contextlib.contextmanager
def _folder(cache_dir: Path | int, *, create: bool) -> Iterator[int]:
    """A descriptor of the cache folder: given (an ``int``), or ``cache_dir`` opened without following a link."""
    if isinstance(cache_dir, int):
        yield cache_dir
        return
    with opened_dir(cache_dir, create=create) as fd:
        yield fd


_canonical = canonical_json


def _mac(secret: bytes, doc: dict) -> str:
    return sign(secret, {k: v for k, v in doc.items() if k != "mac"})


def _file_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def store_entry(cache_dir: Path | int, index: int, task_key: str, results: list[dict], secret: bytes) -> str:
    """Write a successful task's results as an authenticated entry (atomically).

    Parameters
    ----------
    cache_dir : Path or int
        The cache folder (created when missing; a link is refused), or a descriptor of it.
    index : int
        The task's position.
    task_key : str
        The task's content hash.
    results : list of dict
        The task's JSON results.
    secret : bytes
        The per-user key.

    Returns
    -------
    str
        The entry's file name in the cache folder.

    Raises
    ------
    OSError
        The folder is a link (:class:`~privaudit.audit.app.safe_files.SymlinkError`) or
        the entry cannot be written (e.g. a folder is in its place).
    """
    doc = {"schema": SCHEMA, "task_key": task_key, "code": code_fingerprint(), "index": index, "ok": True,
           "results": results}
    doc["mac"] = _mac(secret, doc)
    name = entry_name(index, task_key)
    # Key order as computed (not sorted), so a cached result renders exactly as a fresh one.
    data = json.dumps(doc, indent=1, allow_nan=False).encode()
    with _folder(cache_dir, create=True) as fd:
        st = lstat_at(name, fd)
        if st is not None and stat.S_ISDIR(st.st_mode):  # not ours to keep: a folder where our entry goes
            remove_at(name, fd)
        write_at(fd, name, data, _file_mode())
    return name


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
    """Why ``result`` does not match the result schema (None when it does).

    Parameters
    ----------
    result : object
        A decoded cache entry's result.

    Returns
    -------
    str or None
    """
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


def load_entry(cache_dir: Path | int, index: int, task_key: str, secret: bytes) -> tuple[dict | None, str | None]:
    """``(outcome, None)`` for a verified entry, ``(None, None)`` when absent, ``(None, reason)`` when rejected.

    Parameters
    ----------
    cache_dir : Path or int
        The cache folder (a link is never followed), or a descriptor of it.
    index : int
    task_key : str
    secret : bytes

    Returns
    -------
    tuple
        The outcome ``{"key", "index", "ok": True, "results"}`` as the runner produces it,
        or None, and the reason of a rejection, or None.
    """
    name = entry_name(index, task_key)
    try:
        with _folder(cache_dir, create=False) as fd:
            text = read_regular(name, dir_fd=fd, limit=MAX_ENTRY_BYTES).decode("utf-8")
    except FileNotFoundError:
        return None, None
    except UnsafeFileError as exc:
        return None, f"refused before reading: {exc}"
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"unreadable ({exc})"
    try:
        doc = json.loads(text, parse_constant=_no_constants)
    except RecursionError:
        return None, "nested too deeply"
    except ValueError as exc:
        return None, f"not valid JSON ({exc})"
    problem = _envelope_problem(doc, index, task_key)
    if problem is None and not verifies(secret, {k: v for k, v in doc.items() if k != "mac"}, doc["mac"]):
        problem = "its authentication code does not verify (edited, or written with another user's key)"
    if problem is None:
        problem = next((p for p in map(result_problem, doc["results"]) if p), None)
    if problem is not None:
        return None, problem
    return {"key": task_key, "index": index, "ok": True, "results": doc["results"]}, None


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


# --------------------------------------------------------------------------- code outside privaudit
#: A ``"package.module:attr"`` reference (what ``--allow-import`` opts in to).
_REFERENCE = re.compile(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*):[A-Za-z_]\w*", re.ASCII)


def _outside(module: str | None) -> bool:
    return bool(module) and module != "privaudit" and not module.startswith("privaudit.")


def _registered_module(name: str, key: str) -> str | None:
    """The module of the component or attacker registered as ``name`` (None when none is)."""
    from privaudit.audit.schema import components

    for registry in (components.MECHANISMS, components.PRIORS, components.LEARNERS, components.EXPERIMENTS,
                     components.SAMPLERS):
        if name in registry:
            ref = registry.get(name).ref
            return ref.partition(":")[0] if isinstance(ref, str) else getattr(ref, "__module__", None)
    if "attack" in key:
        try:
            from privaudit.attacks import get_attack

            return getattr(get_attack(name), "__module__", None)
        except Exception:  # noqa: BLE001 - not an attacker name: nothing registered under it
            return None
    return None


def outside_code(params: Any) -> list[str]:
    """Modules outside privaudit whose code a task's parameters bring in (sorted, without repeats).

    These are the modules of ``"module:attr"`` references (opted in with ``--allow-import``)
    and of registered components and attackers that an installed plugin, not privaudit,
    provides. Their code is not part of the code fingerprint, so a task naming one is
    never cached.

    Parameters
    ----------
    params : object
        A task's parameters (JSON-like data).

    Returns
    -------
    list of str
    """
    found, stack = set(), [("", params)]
    while stack:
        key, value = stack.pop()
        if isinstance(value, dict):
            stack.extend((str(k), v) for k, v in value.items())
        elif isinstance(value, list | tuple):
            stack.extend((key, v) for v in value)
        elif isinstance(value, str):
            ref = _REFERENCE.fullmatch(value)
            module = ref.group(1) if ref else _registered_module(value, key)
            if _outside(module):
                found.add(module)
    return sorted(found)
