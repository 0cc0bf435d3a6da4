"""Writing report sets as one unit: atomic files, atomic folders, stale temporaries, owners.

A report set is the folder ``<out>/<name>/`` holding :data:`SET_NAMES` (``report.json``,
``report.md``, ``report.html``, ``figures/`` and the run log ``run.log.json``) plus
entries the set does not own (the task ``cache/``, a user's notes), which are carried
over from one set to the next.

Invariant: a reader, or a run killed at any instant, sees either the complete old set
or the complete new one, never a mix.

Protocol (:func:`write_set`)
    1. Every file of the new set is written into a fresh sibling folder
       ``<out>/.<name>.<random>.tmp``, which is then renamed ``….ready`` (complete).
    2. Entries the set does not own are moved (``rename``) from the live folder into it.
    3. The two folders are exchanged in one ``renameat2(RENAME_EXCHANGE)`` system call
       (Linux ≥ 3.15). Where that call is missing the live folder is renamed ``….old``
       and the ready one takes its place: two renames, with a gap that step 4 repairs.
    4. :func:`clean_stale`, run before every write under an exclusive lock of ``<out>``,
       completes or undoes an interrupted swap (a missing live folder gets the newest
       ``.ready`` set, else the ``.old`` one back), moves carried entries back from
       leftover folders and deletes them, and deletes the stale ``.*.tmp`` files of
       :func:`atomic_write` (in the cache only when older than :data:`STALE_SECONDS`,
       since a concurrent run may be writing there).

Run log
    ``run.log.json`` holds what legitimately differs between runs of one configuration
    (wall times, which tasks came from the cache, cache warnings) and the manifest of the
    set (SHA-256 of each file, the code fingerprint). Everything else is a function of the
    configuration, the seed and the code, so a rerun writes byte-identical files. When the
    manifest shows that the set on disk already is what this run would write, only the run
    log is replaced (figures are not rendered again): a fully cached rerun takes seconds.

Owners
    The run log names the configuration a set came from (an absolute path or
    ``preset:<name>``). :func:`check_destination` refuses, before any task runs, to replace a
    set written from another configuration of the same ``name`` unless asked to.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import json
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from privaudit.mechanisms.validation import InvalidInputError

from privaudit.audit.app.fields import ConfigError
from privaudit.audit.app.provenance import code_fingerprint

#: What a report set owns; anything else in the folder is carried over to the next set.
SET_NAMES = ("report.json", "report.md", "report.html", "figures", "run.log.json")
RUN_LOG = "run.log.json"
RUN_LOG_SCHEMA = "privaudit.runlog/1"
REPORT_SCHEMA = "privaudit.report/1"
#: Age after which an atomic_write temporary in the cache is certainly abandoned (a write takes ms).
STALE_SECONDS = 600.0
_TEMP_SUFFIXES = (".tmp", ".ready", ".old")


class OutDirError(ConfigError, InvalidInputError):
    """``--out`` cannot hold the report (a file, unwritable, or another configuration's set): exit code 2."""


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: Permissions of written files: what ``open()`` would give (mkstemp creates 0600 files).
_FILE_MODE = 0o666 & ~_umask()
_DIR_MODE = 0o777 & ~_umask()


def atomic_write(path: str | Path, data: str | bytes) -> None:
    """Write ``data`` to ``path`` atomically: a temporary file in the same folder, then :func:`os.replace`.

    A reader (or an interrupted run) sees either the old file or the new one, never a
    truncated file. The temporary is named ``.<name>.<random>.tmp``; :func:`clean_stale`
    removes those an interrupted run left behind.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = "wb" if isinstance(data, bytes) else "w"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, mode, **({} if mode == "wb" else {"encoding": "utf-8"})) as fh:
            fh.write(data)
        os.chmod(tmp, _FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_report(path: str | Path) -> dict:
    """Read a ``report.json`` (a file or its folder) and check its schema."""
    path = Path(path)
    if path.is_dir():
        path = path / "report.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("schema") != REPORT_SCHEMA:
        got = data.get("schema") if isinstance(data, dict) else type(data).__name__
        raise ValueError(f"{path} has schema {got!r}, expected {REPORT_SCHEMA!r}")
    return data


def load_run_log(out_dir: str | Path) -> dict | None:
    """The run log of a set, or None (absent or unreadable)."""
    try:
        data = json.loads((Path(out_dir) / RUN_LOG).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) and data.get("schema") == RUN_LOG_SCHEMA else None


# --------------------------------------------------------------------------- destination checks
def config_identity(source: str) -> str:
    """Who a set belongs to: ``preset:<name>``, an absolute config path, or ``inline``."""
    if not source:
        return "inline"
    if source.startswith("preset:"):
        return source
    try:
        return str(Path(source).resolve())
    except (OSError, ValueError):
        return source


def _owner(out_dir: Path) -> str | None:
    log = load_run_log(out_dir)
    if log is not None and isinstance(log.get("config"), str):
        return log["config"]
    try:
        report = load_report(out_dir)
    except (OSError, ValueError, RecursionError):
        return None
    return config_identity(report.get("source") or "") if isinstance(report.get("source", ""), str) else None


def check_destination(out: str | Path, name: str, source: str, *, overwrite: bool = False) -> Path:
    """Check, before any work, that ``<out>/<name>/`` can receive this configuration's report set.

    Creates ``out`` if needed and probes that a file can be created in it.

    Raises
    ------
    OutDirError
        ``out`` (or ``out/name``) is a file, cannot be created or written, or holds the set
        of another configuration with the same ``name`` (unless ``overwrite``).
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise OutDirError(f"--out {str(out)!r} is a file, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".privaudit-probe.", suffix=".tmp", dir=out)
        os.close(fd)
        os.unlink(probe)
    except (OSError, ValueError) as exc:
        raise OutDirError(f"cannot write into --out {str(out)!r}: {exc}") from exc
    target = out / name
    if target.exists() and not target.is_dir():
        raise OutDirError(f"--out {str(out)!r} already has a file {name!r} where the report folder would go")
    if target.is_dir() and not overwrite:
        mine, theirs = config_identity(source), _owner(target)
        if theirs is not None and theirs != mine:
            raise OutDirError(
                f"{str(target)!r} holds the report of another configuration with name = {name!r} "
                f"(from {theirs}, this one is from {mine}); give this configuration another name, "
                f"choose another --out, or pass --overwrite"
            )
    return target


# --------------------------------------------------------------------------- the swap
@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """Exclusive advisory lock of ``folder`` (one writer of the sets under it at a time)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock, stale-file cleaning is by age only
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _exchange(a: Path, b: Path) -> bool:
    """Swap two folders atomically (``renameat2(RENAME_EXCHANGE)``); False where unsupported."""
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    at_fdcwd, rename_exchange = -100, 2
    if fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):  # kernel or file system without it
        return False
    raise OSError(err, os.strerror(err), str(b))


def _temps(out_dir: Path, suffix: str) -> list[Path]:
    found = out_dir.parent.glob(f".{out_dir.name}.*{suffix}")
    return sorted((p for p in found if p.is_dir()), key=lambda p: p.stat().st_mtime)


def _carry(src: Path, dst: Path) -> None:
    """Move every entry of ``src`` that a set does not own into ``dst`` (unless ``dst`` has it)."""
    if not src.is_dir():
        return
    for entry in src.iterdir():
        if entry.name not in SET_NAMES and not (dst / entry.name).exists():
            os.rename(entry, dst / entry.name)


def clean_stale(out_dir: str | Path) -> None:
    """Finish or undo an interrupted swap of ``out_dir`` and delete abandoned temporaries.

    Call with the lock of ``out_dir.parent`` held (:func:`write_set` does).
    """
    out_dir = Path(out_dir)
    if not out_dir.exists():
        ready, old = _temps(out_dir, ".ready"), _temps(out_dir, ".old")
        if ready or old:
            os.rename((ready or old)[-1], out_dir)
    for suffix in _TEMP_SUFFIXES:
        for leftover in _temps(out_dir, suffix):
            if out_dir.is_dir():
                _carry(leftover, out_dir)
            shutil.rmtree(leftover, ignore_errors=True)
    now = time.time()
    for folder, min_age in ((out_dir, 0.0), (out_dir / "figures", 0.0), (out_dir / "cache", STALE_SECONDS)):
        for tmp in folder.glob(".*.tmp") if folder.is_dir() else ():
            with contextlib.suppress(OSError):
                if tmp.is_file() and now - tmp.stat().st_mtime >= min_age:
                    tmp.unlink()


def recover_set(out_dir: str | Path) -> None:
    """:func:`clean_stale` under the lock: run before a run's tasks, so a cache that a killed
    writer left in its temporary folder is back in place before it is read."""
    out_dir = Path(out_dir)
    if out_dir.parent.is_dir():
        with _locked(out_dir.parent):
            clean_stale(out_dir)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _unchanged(out_dir: Path, report_json: bytes, figures: bool) -> bool:
    """True when the set on disk is exactly what this run would write (per its manifest)."""
    log = load_run_log(out_dir)
    manifest = log.get("set") if log else None
    if not isinstance(manifest, dict) or manifest.get("code") != code_fingerprint():
        return False
    files = manifest.get("files")
    if manifest.get("figures") != figures or not isinstance(files, dict):
        return False
    if files.get("report.json") != _sha(report_json):
        return False
    on_disk = {p.relative_to(out_dir).as_posix() for p in (out_dir / "figures").glob("*")} \
        if (out_dir / "figures").is_dir() else set()
    if on_disk != {f for f in files if f.startswith("figures/")}:
        return False
    for rel, digest in files.items():
        try:
            if _sha((out_dir / rel).read_bytes()) != digest:
                return False
        except OSError:
            return False
    return True


def _run_log_bytes(run_log: dict | None, manifest: dict) -> bytes:
    doc = {"schema": RUN_LOG_SCHEMA, **(run_log or {}), "set": manifest}
    return (json.dumps(doc, indent=2, allow_nan=False) + "\n").encode()


def write_set(out_dir: str | Path, report_json: bytes, render: Callable[[], dict[str, bytes]], *,
              figures: bool = True, run_log: dict | None = None) -> bool:
    """Replace the report set ``out_dir`` by ``report.json`` plus the files ``render()`` returns, as one unit.

    Parameters
    ----------
    out_dir : path
        ``<out>/<name>``.
    report_json : bytes
        The record; compared with the manifest on disk before anything is rendered.
    render : callable() -> {relative path: bytes}
        The other files (``report.md``, ``report.html``, ``figures/<name>.png``); called
        only when the set changes.
    figures : bool
        Whether the figures were requested (part of the manifest).
    run_log : dict, optional
        Fields of ``run.log.json`` (timings, cache provenance, owner).

    Returns
    -------
    bool
        False when only the run log was replaced (the set was already identical).
    """
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    with _locked(out_dir.parent):
        clean_stale(out_dir)
        if out_dir.is_dir() and _unchanged(out_dir, report_json, figures):
            manifest = load_run_log(out_dir)["set"]
            atomic_write(out_dir / RUN_LOG, _run_log_bytes(run_log, manifest))
            return False
        files = {"report.json": report_json, **render()}
        manifest = {"code": code_fingerprint(), "figures": figures,
                    "files": {rel: _sha(data) for rel, data in sorted(files.items())}}
        files[RUN_LOG] = _run_log_bytes(run_log, manifest)
        _swap_in(out_dir, files)
    return True


def _swap_in(out_dir: Path, files: dict[str, bytes]) -> None:
    stem = f".{out_dir.name}.{secrets.token_hex(4)}"
    tmp = out_dir.parent / f"{stem}.tmp"
    tmp.mkdir(mode=0o700)
    for rel, data in files.items():
        path = tmp / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        os.chmod(path, _FILE_MODE)
    for sub in [tmp, *(p for p in tmp.rglob("*") if p.is_dir())]:
        os.chmod(sub, _DIR_MODE)
    ready = tmp.with_name(f"{stem}.ready")
    os.rename(tmp, ready)  # complete: from here on, recovery prefers it to the old set
    if not out_dir.exists():
        os.rename(ready, out_dir)
        return
    _carry(out_dir, ready)
    if _exchange(ready, out_dir):
        shutil.rmtree(ready, ignore_errors=True)  # now holds the old set
        return
    old = out_dir.parent / f"{stem}.old"
    os.rename(out_dir, old)
    os.rename(ready, out_dir)
    shutil.rmtree(old, ignore_errors=True)
