"""HMAC-SHA256 of JSON documents under the per-user cache key: what privaudit wrote, it can recognise.

Cache entries (:mod:`privaudit.audit.app.cache`) and the manifest of a report set
(:mod:`privaudit.audit.app.report_store`) are read back from folders others may write
to. Each carries ``mac = HMAC-SHA256(secret, canonical JSON of the document)``, so an
edit by anyone without the secret is detected. A MAC read from a file is untrusted
input too: :func:`verifies` accepts only 64 lower-case hexadecimal ASCII characters
before comparing, so a non-ASCII or non-string value is a rejection, not a TypeError.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from typing import Any

_MAC = re.compile(r"[0-9a-f]{64}", re.ASCII)


def canonical_json(doc: Any) -> bytes:
    """The canonical bytes of JSON data: sorted keys, no spaces, ASCII, no NaN (raises ValueError/TypeError).

    Parameters
    ----------
    doc : object
        JSON data (dicts, lists, strings, numbers, booleans, None).

    Returns
    -------
    bytes

    Raises
    ------
    ValueError
        For NaN or infinite floats.
    TypeError
        For a value that is not JSON data.
    """
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode()


def sign(secret: bytes, doc: dict) -> str:
    """HMAC-SHA256 (hex) of the canonical JSON of ``doc`` under ``secret``.

    Parameters
    ----------
    secret : bytes
        The per-user key.
    doc : dict
        JSON data (without its ``mac``).

    Returns
    -------
    str
        64 lower-case hexadecimal characters.
    """
    return hmac.new(secret, canonical_json(doc), hashlib.sha256).hexdigest()


def verifies(secret: bytes | None, doc: Any, mac: Any) -> bool:
    """Whether ``mac`` is the MAC of ``doc`` under ``secret`` (False for anything malformed, never raises).

    Parameters
    ----------
    secret : bytes or None
        The per-user key (None: nothing verifies).
    doc : object
        The document as read (without its ``mac``).
    mac : object
        The MAC as read.

    Returns
    -------
    bool
    """
    if secret is None or not isinstance(mac, str) or not _MAC.fullmatch(mac):
        return False
    try:
        expected = sign(secret, doc)
    except (TypeError, ValueError):  # not serialisable canonically: cannot be ours
        return False
    return hmac.compare_digest(mac, expected)
