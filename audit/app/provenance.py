"""Which code produced a result: the package version plus a hash of the installed sources.

A cached result is only valid for the code that computed it, and the version number
alone does not change when a checkout is edited or a fix is installed without a
version bump. :func:`code_fingerprint` therefore hashes every ``.py`` and ``.toml``
file of the installed privaudit sub-packages (path relative to its package root and
content, in sorted order) together with the distribution version. The cache keys its
entries by it (:mod:`privaudit.audit.app.cache`) and the report writer records it, so
that an upgrade invalidates old entries without the user passing ``--no-cache``.

The hash is computed once per process (a few milliseconds for ~150 files).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
from pathlib import Path

#: Sub-packages whose sources determine a result.
PACKAGES = ("privaudit.mechanisms", "privaudit.learners", "privaudit.attacks", "privaudit.audit")
#: File suffixes that are code or shipped data.
SUFFIXES = (".py", ".toml")


def privaudit_version() -> str:
    """The installed distribution's version (``0+unknown`` from a bare checkout)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("privaudit")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "0+unknown"


def _source_roots() -> list[tuple[str, Path]]:
    roots = []
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        for loc in (spec.submodule_search_locations or []) if spec is not None else []:
            roots.append((name, Path(loc)))
    return roots


@functools.cache
def code_fingerprint() -> str:
    """``"<version>+<sha256[:16]>"`` of the installed privaudit sources (memoised per process)."""
    h = hashlib.sha256()
    for name, root in _source_roots():
        files = sorted(p for p in root.rglob("*") if p.suffix in SUFFIXES and "__pycache__" not in p.parts)
        for path in files:
            try:
                data = path.read_bytes()
            except OSError:  # a file removed while we read: it is not part of the code either
                continue
            rel = path.relative_to(root).as_posix()
            h.update(f"{name}/{rel}\0{len(data)}\0".encode())
            h.update(data)
    return f"{privaudit_version()}+{h.hexdigest()[:16]}"
