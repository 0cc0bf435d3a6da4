"""Files and folders of a report set, opened relative to directory descriptors and never through a symlink.

A report folder may be shared, or received from someone else, so what is inside it is
untrusted: a symbolic link where a folder should be would make every write land in its
target, a FIFO would block a read forever, ``/dev/zero`` or a sparse 6 GiB file would
exhaust memory. Every file operation on a set therefore goes through this module:

* folders are opened with ``O_DIRECTORY | O_NOFOLLOW`` relative to the descriptor of
  their parent (:func:`open_dir`), so a symlink at any level inside ``--out`` (and at
  ``--out`` itself) is refused with :class:`SymlinkError` instead of being followed, and
  a folder swapped for a link after a check cannot redirect a later operation;
* files are read with ``O_NOFOLLOW | O_NONBLOCK`` and checked with ``fstat`` before a
  byte is read (:func:`read_regular`): only regular files of at most a given size;
* files are written atomically inside a folder descriptor (:func:`write_at`):
  ``O_CREAT | O_EXCL | O_NOFOLLOW`` temporary, then ``rename`` within the folder.

The folders *above* ``--out`` are the user's own path and are resolved as usual.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a writer.
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class UnsafeFileError(OSError):
    """A path inside a report set is not what privaudit wrote there (a link, a FIFO, too large, ...)."""


class SymlinkError(UnsafeFileError):
    """A folder or file that must be opened is a symbolic link (never followed)."""


def _kind(st: os.stat_result) -> str:
    mode = st.st_mode
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISREG, "a regular file")):
        if test(mode):
            return name
    return "not a regular file"  # pragma: no cover - every POSIX type is listed above


def lstat_at(name: str, dir_fd: int | None = None) -> os.stat_result | None:
    """``lstat`` of ``name`` in the folder ``dir_fd`` (None when it does not exist).

    Parameters
    ----------
    name : str
        A plain name inside the folder.
    dir_fd : int or None
        Descriptor of the folder (None: the working directory).

    Returns
    -------
    os.stat_result or None
    """
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def open_dir(path: str | Path, *, dir_fd: int | None = None, create: bool = False, shown: str | None = None) -> int:
    """Open the folder ``path`` (relative to ``dir_fd``) without following a symlink at its last component.

    Parameters
    ----------
    path : str or Path
        A folder name inside ``dir_fd``, or a path (its parents are resolved as usual).
    dir_fd : int, optional
        Descriptor of the folder ``path`` is relative to.
    create : bool
        Create the folder (mode 0777 minus the umask) when it does not exist.
    shown : str, optional
        How to name the folder in an error (default: ``path``).

    Returns
    -------
    int
        A descriptor of the folder (close it with :func:`os.close`).

    Raises
    ------
    SymlinkError
        The folder is a symbolic link.
    UnsafeFileError
        It exists but is not a folder.
    FileNotFoundError
        It does not exist and ``create`` is False.
    """
    path = os.fspath(path).rstrip("/") or "/"  # a trailing slash would make the kernel follow a link
    shown = shown or path
    for attempt in (0, 1):
        try:
            return os.open(path, _DIR_FLAGS, dir_fd=dir_fd)
        except FileNotFoundError:
            if not create or attempt:
                raise
            with contextlib.suppress(FileExistsError):
                os.mkdir(path, dir_fd=dir_fd)
        except (NotADirectoryError, OSError) as exc:
            st = lstat_at(path, dir_fd)
            if st is not None and stat.S_ISLNK(st.st_mode):
                raise SymlinkError(f"{shown!r} is a symbolic link (privaudit never follows links inside --out)") from None
            if st is not None and not stat.S_ISDIR(st.st_mode):
                raise UnsafeFileError(f"{shown!r} is {_kind(st)}, not a folder") from None
            raise exc
    raise AssertionError("unreachable")  # pragma: no cover


@contextlib.contextmanager
def opened_dir(path: str | Path, *, dir_fd: int | None = None, create: bool = False,
               shown: str | None = None) -> Iterator[int]:
    """:func:`open_dir` as a context manager that closes the descriptor.

    Parameters
    ----------
    path : str or Path
        The folder.
    dir_fd : int or None
        Descriptor of the folder (None: the working directory).
    create : bool
        Create it when missing.
    shown : str, optional
        How the folder is named in errors (default ``path``).

    Yields
    ------
    int
        The folder's descriptor, closed on exit.
    """
    fd = open_dir(path, dir_fd=dir_fd, create=create, shown=shown)
    try:
        yield fd
    finally:
        os.close(fd)


def read_regular(name: str | Path, *, dir_fd: int | None = None, limit: int, shown: str | None = None) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes, checked before anything is read.

    Parameters
    ----------
    name : str or Path
        The file, relative to ``dir_fd``; a symbolic link is refused, not followed.
    dir_fd : int, optional
        Descriptor of its folder.
    limit : int
        Largest size accepted, in bytes.
    shown : str, optional
        How to name the file in an error.

    Returns
    -------
    bytes

    Raises
    ------
    FileNotFoundError
        No such file.
    UnsafeFileError
        A symbolic link, FIFO, device, folder, or a file larger than ``limit``.
    """
    shown = shown or os.fspath(name)
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        raise
    except OSError as exc:
        st = lstat_at(os.fspath(name), dir_fd)
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise UnsafeFileError(f"{shown!r} is {_kind(st)}, not a regular file") from None
        raise exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFileError(f"{shown!r} is {_kind(st)}, not a regular file")
        if st.st_size > limit:
            raise UnsafeFileError(f"{shown!r} holds {st.st_size} bytes, more than the {limit} accepted")
        fh = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with fh:
        data = fh.read(limit + 1)
    if len(data) > limit:  # grew while we read
        raise UnsafeFileError(f"{shown!r} holds more than the {limit} bytes accepted")
    return data


def write_at(dir_fd: int, name: str, data: bytes, mode: int) -> None:
    """Write ``name`` in the folder ``dir_fd`` atomically: a fresh temporary, then ``rename`` over ``name``.

    The temporary (``.<name>.<random>.tmp``) is created with ``O_EXCL | O_NOFOLLOW``, so it
    can be neither a link nor an existing file; the rename replaces ``name`` itself (a
    link there is replaced, its target untouched).

    Parameters
    ----------
    dir_fd : int
        The folder.
    name : str
        A plain file name (no ``/``).
    data : bytes
    mode : int
        Permission bits of the file.
    """
    if "/" in name or name in ("", ".", ".."):
        raise ValueError(f"write_at takes a plain file name, got {name!r}")
    tmp = f".{name}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            os.fchmod(fh.fileno(), mode)
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise


def remove_at(name: str, dir_fd: int) -> None:
    """Delete ``name`` in ``dir_fd``: a folder recursively (links inside are removed, never followed).

    Parameters
    ----------
    name : str
        A plain name inside the folder.
    dir_fd : int
        Descriptor of the folder.
    """
    import shutil

    st = lstat_at(name, dir_fd)
    if st is None:
        return
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(name, dir_fd=dir_fd, ignore_errors=True)  # fd-based: does not follow links
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=dir_fd)
