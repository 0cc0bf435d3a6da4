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

Untrusted folders
    Everything under ``--out`` may have been edited by someone else. ``--out``, the set and
    every folder in it are opened through directory descriptors without following symbolic
    links (:mod:`privaudit.audit.app.safe_files`): a link where a folder should be is an
    :class:`OutDirError` naming it, and nothing is written, moved or deleted in its target.
    A set's temporaries are recognised by their exact name ``.<name>.<8 hex>.<suffix>``
    (never by a pattern built from ``name``). The manifest is authenticated with the cache
    key (HMAC-SHA256, as cache entries are) and only names the files a set writes
    (:func:`manifest_names_problem`); without a verified manifest the set is rewritten.
    Files are read only when regular and of bounded size.

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
import re
import secrets
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from privaudit.mechanisms.validation import InvalidInputError

from privaudit.audit.app.authentication import sign, verifies
from privaudit.audit.schema.fields import ConfigError
from privaudit.audit.app.provenance import code_fingerprint
from privaudit.audit.reporting.render import report_files, report_json
from privaudit.audit.app.safe_files import (
    SymlinkError,
    UnsafeFileError,
    lstat_at,
    open_dir,
    opened_dir,
    read_regular,
    remove_at,
    write_at,
)

#: What a report set owns; anything else in the folder is carried over to the next set.
SET_NAMES = ("report.json", "report.md", "report.html", "figures", "run.log.json")
#: Files every set has (the manifest must name them all).
REQUIRED_FILES = ("report.json", "report.md", "report.html")
RUN_LOG = "run.log.json"
RUN_LOG_SCHEMA = "privaudit.runlog/1"
REPORT_SCHEMA = "privaudit.report/1"
#: Age after which an atomic_write temporary in the cache is certainly abandoned (a write takes ms).
STALE_SECONDS = 600.0
#: Largest run log read back (thousands of tasks take a few MB).
MAX_RUN_LOG_BYTES = 64 * 2**20
#: Largest file of a set read back to compare it with its manifest (report.html embeds every figure).
MAX_SET_FILE_BYTES = 512 * 2**20
_TEMP_SUFFIXES = ("tmp", "ready", "old")
#: An ``atomic_write`` / :func:`~privaudit.audit.app.safe_files.write_at` temporary: ``.<file>.<random>.tmp``.
_FILE_TEMP = re.compile(r"\..+\.tmp")


class OutDirError(ConfigError, InvalidInputError):
    """``--out`` cannot hold the report (a file, a symbolic link, unwritable, or another configuration's set): exit 2."""


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

    Parameters
    ----------
    path : str or Path
        Destination file.
    data : str or bytes
        Contents (text is written as UTF-8).
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
    """Read a ``report.json`` (a file or its folder) and check its schema.

    Parameters
    ----------
    path : str or Path
        A ``report.json`` or the folder holding it.

    Returns
    -------
    dict
        The report data.

    Raises
    ------
    ValueError
        When the file is not JSON or has another schema.
    OSError
        When it cannot be read.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "report.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("schema") != REPORT_SCHEMA:
        got = data.get("schema") if isinstance(data, dict) else type(data).__name__
        raise ValueError(f"{path} has schema {got!r}, expected {REPORT_SCHEMA!r}")
    return data


def _read_json(name: str, dir_fd: int, limit: int) -> object | None:
    """JSON of a regular file of bounded size in ``dir_fd``; None when absent, not regular, too large or invalid."""
    try:
        return json.loads(read_regular(name, dir_fd=dir_fd, limit=limit).decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return None


def _run_log_at(set_fd: int) -> dict | None:
    data = _read_json(RUN_LOG, set_fd, MAX_RUN_LOG_BYTES)
    return data if isinstance(data, dict) and data.get("schema") == RUN_LOG_SCHEMA else None


def load_run_log(out_dir: str | Path) -> dict | None:
    """The run log of a set, or None (absent, unreadable, a link, not a regular file, too large).

    Parameters
    ----------
    out_dir : str or Path
        The report set's folder (the ``--out`` destination).

    Returns
    -------
    dict or None
    """
    try:
        with opened_dir(out_dir) as fd:
            return _run_log_at(fd)
    except OSError:
        return None


# --------------------------------------------------------------------------- destination checks
def config_identity(source: str) -> str:
    """Who a set belongs to: ``preset:<name>``, an absolute config path, or ``inline``.

    Parameters
    ----------
    source : str
        The run's configuration source (``preset:<name>``, a path, or empty).

    Returns
    -------
    str
    """
    if not source:
        return "inline"
    if source.startswith("preset:"):
        return source
    try:
        return str(Path(source).resolve())
    except (OSError, ValueError):
        return source


def _owner(set_fd: int) -> str | None:
    log = _run_log_at(set_fd)
    if log is not None and isinstance(log.get("config"), str):
        return log["config"]
    report = _read_json("report.json", set_fd, MAX_SET_FILE_BYTES)
    if not isinstance(report, dict) or report.get("schema") != REPORT_SCHEMA:
        return None
    return config_identity(report.get("source") or "") if isinstance(report.get("source", ""), str) else None


def _check_name(name: str) -> None:
    if not isinstance(name, str) or name in ("", ".", "..") or "/" in name or "\0" in name or os.sep in name:
        raise OutDirError(f"name = {name!r} cannot be a folder name under --out (one path component, "
                          f"no '/', not '.' or '..')")


@contextlib.contextmanager
def _out_fd(out: Path, *, create: bool) -> Iterator[int]:
    """``--out`` opened without following a link at its last component (its parents resolve as usual)."""
    try:
        if create:
            out.parent.mkdir(parents=True, exist_ok=True)
        fd = open_dir(out, create=create, shown=f"--out {out}")
    except SymlinkError:
        raise OutDirError(f"--out {str(out)!r} is a symbolic link; privaudit never follows links inside --out "
                          f"(give the folder it points to)") from None
    except UnsafeFileError:
        raise OutDirError(f"--out {str(out)!r} is a file, not a folder") from None
    except OSError as exc:
        raise OutDirError(f"cannot write into --out {str(out)!r}: {exc}") from exc
    try:
        yield fd
    finally:
        os.close(fd)


def _open_set(out_fd: int, out_dir: Path, *, create: bool = False) -> int:
    """The set folder ``out_dir`` (``name`` in ``out_fd``), a link or a file refused with an OutDirError."""
    try:
        return open_dir(out_dir.name, dir_fd=out_fd, create=create, shown=str(out_dir))
    except SymlinkError:
        raise OutDirError(f"{str(out_dir)!r} is a symbolic link; privaudit never follows links inside --out "
                          f"(remove it, or choose another --out)") from None
    except UnsafeFileError:
        raise OutDirError(f"--out {str(out_dir.parent)!r} already has a file {out_dir.name!r} where the report "
                          f"folder would go") from None


def _check_inner(set_fd: int, out_dir: Path) -> None:
    """Refuse a set whose ``figures/`` or ``cache/`` is a link (a linked file is just replaced, never read)."""
    for name in ("figures", "cache"):
        st = lstat_at(name, set_fd)
        if st is not None and stat.S_ISLNK(st.st_mode):
            raise OutDirError(f"{str(out_dir / name)!r} is a symbolic link; privaudit never follows links inside "
                              f"--out (remove it)")
        if st is not None and name in ("figures", "cache") and not stat.S_ISDIR(st.st_mode):
            raise OutDirError(f"{str(out_dir / name)!r} is not a folder (remove it)")


def check_destination(out: str | Path, name: str, source: str, *, overwrite: bool = False) -> Path:
    """Check, before any work, that ``<out>/<name>/`` can receive this configuration's report set.

    Creates ``out`` if needed and probes that a file can be created in it.

    Parameters
    ----------
    out : str or Path
        ``--out``.
    name : str
        The configuration's name (one path component).
    source : str
        Where the configuration came from (:func:`config_identity`).
    overwrite : bool
        Accept a set written from another configuration of the same name.

    Returns
    -------
    Path
        ``<out>/<name>``.

    Raises
    ------
    OutDirError
        ``out`` (or ``out/name``) is a file or a symbolic link, ``figures/`` or ``cache/`` of
        the set is a link, ``out`` cannot be created or written, or it holds the set of another
        configuration with the same ``name`` (unless ``overwrite``).
    """
    out = Path(out)
    _check_name(name)
    target = out / name
    with _out_fd(out, create=True) as out_fd:
        probe = f".privaudit-probe.{secrets.token_hex(4)}.tmp"
        try:
            os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=out_fd))
            os.unlink(probe, dir_fd=out_fd)
        except OSError as exc:
            raise OutDirError(f"cannot write into --out {str(out)!r}: {exc}") from exc
        if lstat_at(name, out_fd) is None:
            return target
        set_fd = _open_set(out_fd, target)
        try:
            _check_inner(set_fd, target)
            if not overwrite:
                mine, theirs = config_identity(source), _owner(set_fd)
                if theirs is not None and theirs != mine:
                    raise OutDirError(
                        f"{str(target)!r} holds the report of another configuration with name = {name!r} "
                        f"(from {theirs}, this one is from {mine}); give this configuration another name, "
                        f"choose another --out, or pass --overwrite"
                    )
        finally:
            os.close(set_fd)
    return target


@contextlib.contextmanager
def open_set_folder(out_dir: str | Path, sub: str | None = None) -> Iterator[int]:
    """A descriptor of ``out_dir`` (or of its folder ``sub``, e.g. ``cache``), created when missing.

    ``--out``, the set and ``sub`` are each opened without following a symbolic link, so
    whatever is written through the descriptor lands inside ``--out``.

    Parameters
    ----------
    out_dir : str or Path
        The report set's folder (the ``--out`` destination).
    sub : str, optional
        A folder inside the set (e.g. ``"cache"``).

    Yields
    ------
    int
        The directory file descriptor (closed on exit).

    Raises
    ------
    OutDirError
        One of them is a symbolic link or a file.
    """
    out_dir = Path(out_dir)
    _check_name(out_dir.name)
    with _out_fd(out_dir.parent, create=True) as out_fd:
        set_fd = _open_set(out_fd, out_dir, create=True)
        try:
            if sub is None:
                yield set_fd
                return
            try:
                sub_fd = open_dir(sub, dir_fd=set_fd, create=True, shown=str(out_dir / sub))
            except SymlinkError:
                raise OutDirError(f"{str(out_dir / sub)!r} is a symbolic link; privaudit never follows links "
                                  f"inside --out (remove it)") from None
            except UnsafeFileError:
                raise OutDirError(f"{str(out_dir / sub)!r} is not a folder (remove it)") from None
            try:
                yield sub_fd
            finally:
                os.close(sub_fd)
        finally:
            os.close(set_fd)


# --------------------------------------------------------------------------- the swap
@contextlib.contextmanager
def _locked(folder: Path | int) -> Iterator[None]:
    """Exclusive advisory lock of ``folder`` (a path or a descriptor): one writer of the sets under it at a time."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock, stale-file cleaning is by age only
        yield
        return
    fd = os.dup(folder) if isinstance(folder, int) else os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _exchange(dir_fd: int, a: str, b: str) -> bool:
    """Swap the entries ``a`` and ``b`` of ``dir_fd`` atomically (``renameat2(RENAME_EXCHANGE)``); False where
    unsupported."""
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    rename_exchange = 2
    if fn(dir_fd, os.fsencode(a), dir_fd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):  # kernel or file system without it
        return False
    raise OSError(err, os.strerror(err), b)


def _temp_pattern(name: str, suffix: str) -> re.Pattern[str]:
    """Exactly the temporaries :func:`_swap_in` names for the set ``name``: ``.<name>.<8 hex>.<suffix>``."""
    return re.compile(rf"\.{re.escape(name)}\.[0-9a-f]{{8}}\.{suffix}")


def _temps(out_fd: int, name: str, suffix: str) -> list[tuple[str, bool, float]]:
    """``(entry, is a real folder, mtime)`` of the leftovers of ``name`` with ``suffix``, oldest first."""
    pattern, found = _temp_pattern(name, suffix), []
    with os.scandir(out_fd) as entries:
        for entry in entries:
            if pattern.fullmatch(entry.name):
                st = entry.stat(follow_symlinks=False)
                found.append((entry.name, stat.S_ISDIR(st.st_mode), st.st_mtime))
    return sorted(found, key=lambda t: t[2])


def _carry(src_fd: int, dst_fd: int) -> None:
    """Move every entry of ``src_fd`` that a set does not own into ``dst_fd`` (unless ``dst_fd`` has it).

    ``rename`` moves an entry itself: a link is moved as a link, never followed.
    """
    with os.scandir(src_fd) as entries:
        names = [e.name for e in entries]
    for entry in names:
        if entry not in SET_NAMES and lstat_at(entry, dst_fd) is None:
            os.rename(entry, entry, src_dir_fd=src_fd, dst_dir_fd=dst_fd)


def _clean_temporaries(folder_fd: int, min_age: float, now: float) -> None:
    with os.scandir(folder_fd) as entries:
        for entry in entries:
            if _FILE_TEMP.fullmatch(entry.name):
                with contextlib.suppress(OSError):
                    st = entry.stat(follow_symlinks=False)
                    if stat.S_ISREG(st.st_mode) and now - st.st_mtime >= min_age:
                        os.unlink(entry.name, dir_fd=folder_fd)


def _clean_stale_at(out_fd: int, out_dir: Path) -> None:
    name = out_dir.name
    live = lstat_at(name, out_fd)
    if live is None:
        complete = [t for t in _temps(out_fd, name, "ready") if t[1]] or [t for t in _temps(out_fd, name, "old") if t[1]]
        if complete:
            os.rename(complete[-1][0], name, src_dir_fd=out_fd, dst_dir_fd=out_fd)
            live = lstat_at(name, out_fd)
    set_fd = _open_set(out_fd, out_dir) if live is not None else None
    try:
        if set_fd is not None:
            _check_inner(set_fd, out_dir)
        for suffix in _TEMP_SUFFIXES:
            for leftover, is_dir, _ in _temps(out_fd, name, suffix):
                if is_dir and set_fd is not None:
                    with opened_dir(leftover, dir_fd=out_fd) as left_fd:
                        _carry(left_fd, set_fd)
                remove_at(leftover, out_fd)  # a link is removed, not followed
        if set_fd is None:
            return
        now = time.time()
        _clean_temporaries(set_fd, 0.0, now)
        for sub, min_age in (("figures", 0.0), ("cache", STALE_SECONDS)):
            if lstat_at(sub, set_fd) is not None:
                with opened_dir(sub, dir_fd=set_fd, shown=str(out_dir / sub)) as sub_fd:
                    _clean_temporaries(sub_fd, min_age, now)
    finally:
        if set_fd is not None:
            os.close(set_fd)


def clean_stale(out_dir: str | Path) -> None:
    """Finish or undo an interrupted swap of ``out_dir`` and delete abandoned temporaries.

    Call with the lock of ``out_dir.parent`` held (:func:`write_set` does).

    Parameters
    ----------
    out_dir : str or Path
        The report set's folder (the ``--out`` destination).

    Raises
    ------
    OutDirError
        ``out_dir``, its ``figures/`` or ``cache/`` is a symbolic link (nothing is touched).
    """
    out_dir = Path(out_dir)
    with _out_fd(out_dir.parent, create=False) as out_fd:
        _clean_stale_at(out_fd, out_dir)


def recover_set(out_dir: str | Path) -> None:
    """:func:`clean_stale` under the lock: run before a run's tasks, so a cache that a killed
    writer left in its temporary folder is back in place before it is read.

    Parameters
    ----------
    out_dir : str or Path
        The report set's folder (the ``--out`` destination).
    """
    out_dir = Path(out_dir)
    if out_dir.parent.is_dir():
        with _out_fd(out_dir.parent, create=False) as out_fd, _locked(out_fd):
            _clean_stale_at(out_fd, out_dir)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _plain_name(name: str) -> bool:
    return bool(name) and "/" not in name and "\0" not in name and not name.startswith(".")


def manifest_names_problem(files: object) -> str | None:
    """Why a manifest's file list is not one a set writes (None when it is).

    A set writes ``report.json``, ``report.md``, ``report.html`` and ``figures/<plain name>``;
    any other entry (an absolute path, ``..``, a subfolder, a cache entry) is refused, so a
    manifest never makes privaudit read or keep a file outside the set.

    Parameters
    ----------
    files : object
        The ``files`` mapping of a manifest: relative path -> SHA-256.

    Returns
    -------
    str or None
    """
    if not isinstance(files, dict):
        return "the file list is not an object"
    missing = [f for f in REQUIRED_FILES if f not in files]
    if missing:
        return f"it omits {', '.join(missing)}"
    for rel, digest in files.items():
        folder, _, leaf = rel.rpartition("/")
        if rel not in REQUIRED_FILES and not (folder == "figures" and _plain_name(leaf)):
            return f"it names {rel!r}, which is not a file of a report set"
        if not (isinstance(digest, str) and re.fullmatch(r"[0-9a-f]{64}", digest)):
            return f"the hash of {rel!r} is not a SHA-256"
    return None


def _verified_manifest(set_fd: int, secret: bytes | None) -> dict | None:
    """The manifest of the set in ``set_fd`` when it verifies under ``secret`` and names only set files."""
    log = _run_log_at(set_fd) if secret is not None else None
    manifest = log.get("set") if log else None
    if not isinstance(manifest, dict) or not verifies(secret, {k: v for k, v in manifest.items() if k != "mac"},
                                                      manifest.get("mac")):
        return None
    return manifest if manifest_names_problem(manifest.get("files")) is None else None


def _unchanged(set_fd: int, manifest: dict | None, report_json: bytes, figures: bool) -> bool:
    """True when the set on disk is exactly what this run would write (per its verified manifest)."""
    if manifest is None or manifest.get("code") != code_fingerprint() or manifest.get("figures") != figures:
        return False
    files = manifest["files"]
    if files.get("report.json") != _sha(report_json):
        return False
    try:
        with opened_dir("figures", dir_fd=set_fd) as fig_fd, os.scandir(fig_fd) as entries:
            on_disk = {f"figures/{e.name}" for e in entries}
    except FileNotFoundError:
        on_disk = set()
    except OSError:
        return False
    if on_disk != {f for f in files if f.startswith("figures/")}:
        return False
    for rel, digest in files.items():
        folder, _, leaf = rel.rpartition("/")
        try:
            if folder:
                with opened_dir(folder, dir_fd=set_fd) as sub_fd:
                    data = read_regular(leaf, dir_fd=sub_fd, limit=MAX_SET_FILE_BYTES)
            else:
                data = read_regular(leaf, dir_fd=set_fd, limit=MAX_SET_FILE_BYTES)
        except OSError:
            return False
        if _sha(data) != digest:
            return False
    return True


def _run_log_bytes(run_log: dict | None, manifest: dict) -> bytes:
    doc = {"schema": RUN_LOG_SCHEMA, **(run_log or {}), "set": manifest}
    return (json.dumps(doc, indent=2, allow_nan=False) + "\n").encode()


def write_set(out_dir: str | Path, report_json: bytes, render: Callable[[], dict[str, bytes]], *,
              figures: bool = True, run_log: dict | None = None, secret: bytes | None = None) -> bool:
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
    secret : bytes, optional
        The cache key: the manifest is authenticated with it, and a set is kept unrendered
        only when its manifest verifies under it. Without it the set is always rewritten.

    Returns
    -------
    bool
        False when only the run log was replaced (the set was already identical).

    Raises
    ------
    OutDirError
        ``--out``, the set, its ``figures/`` or ``cache/`` is a symbolic link or a file.
    """
    out_dir = Path(out_dir)
    _check_name(out_dir.name)
    with _out_fd(out_dir.parent, create=True) as out_fd, _locked(out_fd):
        _clean_stale_at(out_fd, out_dir)
        if lstat_at(out_dir.name, out_fd) is not None:
            set_fd = _open_set(out_fd, out_dir)
            try:
                manifest = _verified_manifest(set_fd, secret)
                if _unchanged(set_fd, manifest, report_json, figures):
                    write_at(set_fd, RUN_LOG, _run_log_bytes(run_log, manifest), _FILE_MODE)
                    return False
            finally:
                os.close(set_fd)
        files = {"report.json": report_json, **render()}
        manifest = {"code": code_fingerprint(), "figures": figures,
                    "files": {rel: _sha(data) for rel, data in sorted(files.items())}}
        if secret is not None:
            manifest["mac"] = sign(secret, manifest)
        files[RUN_LOG] = _run_log_bytes(run_log, manifest)
        _swap_in(out_fd, out_dir, files)
    return True


def write_report(report: dict, out_dir: str | Path, *, figures: bool = True, run_log: dict | None = None) -> Path:
    """Write ``report.json``, ``report.md``, ``report.html`` and ``figures/*.png`` into ``out_dir`` as one unit.

    Parameters
    ----------
    report : dict
        The report document (:func:`privaudit.audit.reporting.render.build_report`).
    out_dir : str or Path
        ``<out>/<name>``.
    figures : bool
        Draw the figures.
    run_log : dict, optional
        Fields of ``run.log.json``.

    Returns
    -------
    Path
        ``out_dir``. The whole set replaces the previous one atomically (:func:`write_set`);
        when the set on disk is already identical only ``run.log.json`` is rewritten.
    """
    write_set(out_dir, report_json(report), lambda: report_files(report, figures=figures), figures=figures,
              run_log=run_log)
    return Path(out_dir)


def _write_tree(root_fd: int, files: dict[str, bytes]) -> None:
    """Write ``files`` (``name`` or ``folder/name``) under the fresh folder ``root_fd``."""
    folders: dict[str, int] = {"": root_fd}
    try:
        for rel, data in files.items():
            folder, _, leaf = rel.rpartition("/")
            if folder not in folders:
                if "/" in folder or not _plain_name(folder):
                    raise ValueError(f"a report set holds files and folder/file, got {rel!r}")
                os.mkdir(folder, 0o700, dir_fd=root_fd)
                folders[folder] = open_dir(folder, dir_fd=root_fd)
            fd = os.open(leaf, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                         dir_fd=folders[folder])
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                os.fchmod(fh.fileno(), _FILE_MODE)
        for fd in folders.values():
            os.fchmod(fd, _DIR_MODE)
    finally:
        for folder, fd in folders.items():
            if folder:
                os.close(fd)


def _swap_in(out_fd: int, out_dir: Path, files: dict[str, bytes]) -> None:
    name = out_dir.name
    stem = f".{name}.{secrets.token_hex(4)}"
    tmp, ready, old = f"{stem}.tmp", f"{stem}.ready", f"{stem}.old"
    os.mkdir(tmp, 0o700, dir_fd=out_fd)
    with opened_dir(tmp, dir_fd=out_fd) as tmp_fd:
        _write_tree(tmp_fd, files)
    os.rename(tmp, ready, src_dir_fd=out_fd, dst_dir_fd=out_fd)  # complete: from here on, recovery prefers it
    if lstat_at(name, out_fd) is None:
        os.rename(ready, name, src_dir_fd=out_fd, dst_dir_fd=out_fd)
        return
    live_fd = _open_set(out_fd, out_dir)
    try:
        with opened_dir(ready, dir_fd=out_fd) as ready_fd:
            _carry(live_fd, ready_fd)
    finally:
        os.close(live_fd)
    if _exchange(out_fd, ready, name):
        remove_at(ready, out_fd)  # now holds the old set
        return
    os.rename(name, old, src_dir_fd=out_fd, dst_dir_fd=out_fd)
    os.rename(ready, name, src_dir_fd=out_fd, dst_dir_fd=out_fd)
    remove_at(old, out_fd)
