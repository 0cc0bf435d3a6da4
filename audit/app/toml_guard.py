"""Structural checks of a parsed configuration document, before any field is validated.

The field validators (:mod:`privaudit.audit.app.config`) know what each key means; this
module refuses what no key can mean, without recursion (a hostile file must not
exhaust the stack) and before any component is built:

* nesting deeper than :data:`MAX_DEPTH` (``[[[[…]]]]`` 1000 deep, 1000 dotted keys);
* more than :data:`MAX_VALUES` values in total;
* integers outside TOML's 64-bit range (TOML 1.0: "if an integer cannot be represented
  losslessly, an error must be thrown"), which would overflow on conversion to float;
* NaN or ±inf anywhere (every privaudit parameter and input is a finite number);
* empty arrays (``x = []`` would audit nothing and report "pass");
* control characters (NUL, ESC, …) in strings or keys, which cannot name a file,
  a component or a label.

Every message names the key path and the value, as the exit-code contract requires.
"""

from __future__ import annotations

import math
import re
from typing import Any

from privaudit.audit.schema.fields import ConfigTypeError, ConfigValueError

MAX_DEPTH = 12
MAX_VALUES = 5_000_000
INT_MIN, INT_MAX = -(2**63), 2**63 - 1
_ALLOWED_CONTROLS = {"\t", "\n", "\r"}
#: Parts of a dotted key (``a.b.c``) read before the parser runs. tomllib records every prefix of a
#: dotted key, so its time and memory grow with the square of the parts (100,000 parts took 5.7 GB); a
#: document with more parts than this is refused from its text. Any configuration has at most
#: :data:`MAX_DEPTH`, so the bound only has to stay well below what makes the parser slow.
MAX_KEY_PARTS = 64
# MAX_KEY_PARTS parts in a row: a bare key (starting where no key character precedes it, so that a long
# run of key characters is tried once) or a quoted key on one line, then a dot. Possessive quantifiers
# (never backtrack): linear in the text.
_DOTTED_RUN = re.compile(
    r"""(?<![A-Za-z0-9_-])(?:(?:[A-Za-z0-9_-]++|"[^"\n]*+"|'[^'\n]*+')[ \t]*+\.[ \t]*+)"""
    + "{" + str(MAX_KEY_PARTS) + "}"
)


class GuardValueError(ConfigValueError):
    """A value no configuration key can take (exit code 2)."""


class GuardTypeError(ConfigTypeError):
    """A document that is not a table at the top (exit code 2)."""


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 5]}…{text[-4:]}"


def _join(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def _bad_control(text: str) -> str | None:
    for ch in text:
        if (ord(ch) < 32 and ch not in _ALLOWED_CONTROLS) or ord(ch) == 127:
            return f"U+{ord(ch):04X}"
    return None


def _check_scalar(path: str, value: Any, owner: tuple[str, list] | None) -> None:
    """``owner`` is the key holding the array ``value`` sits in (named with its value), if any."""
    if isinstance(value, bool):
        return
    if isinstance(value, int) and not INT_MIN <= value <= INT_MAX:
        digits = len(str(abs(value)))
        raise GuardValueError(
            f"{path} is an integer of {digits} digits, outside the 64-bit range TOML allows "
            f"(|value| < 2**63), got {path} = {_short(value)}"
        )
    if isinstance(value, float) and not math.isfinite(value):
        if owner is not None:
            key, array = owner
            raise GuardValueError(f"{key} must hold finite numbers only, got {key} = {_short(array)} "
                                  f"({path} = {value!r})")
        raise GuardValueError(f"{path} must be a finite number, got {path} = {value!r}")
    if isinstance(value, str) and (bad := _bad_control(value)):
        raise GuardValueError(f"{path} contains the control character {bad}, got {path} = {_short(value)}")


def check_document(data: Any, *, where: str = "") -> None:
    """Raise :class:`GuardValueError` naming the first key path and value no key can take.

    ``where`` (e.g. ``" (in my.toml)"``) is appended to messages.

    Parameters
    ----------
    data : object
        The parsed document.
    where : str
        Suffix of the messages.

    Raises
    ------
    GuardValueError
        For a value (e.g. a number out of range, an over-long string) no key can take.
    """
    if not isinstance(data, dict):
        raise GuardTypeError(f"a configuration must be a table of keys, got {type(data).__name__}{where}")
    # (key path, value, depth, the key whose array holds the value: named in messages about its elements)
    stack: list[tuple[str, Any, int, tuple[str, list] | None]] = [("", data, 0, None)]
    count = 0
    try:
        while stack:
            path, value, depth, owner = stack.pop()
            count += 1
            if count > MAX_VALUES:
                raise GuardValueError(f"the configuration holds more than {MAX_VALUES} values (at {path})")
            if depth > MAX_DEPTH:
                raise GuardValueError(
                    f"{path[:120]}{'…' if len(path) > 120 else ''} is nested {depth} levels deep, "
                    f"more than the {MAX_DEPTH} any configuration needs"
                )
            if isinstance(value, dict):
                for key, item in reversed(value.items()):  # reversed: popped in document order
                    if bad := _bad_control(str(key)):
                        raise GuardValueError(f"key {_short(_join(path, key))} contains the control character {bad}")
                    stack.append((_join(path, key), item, depth + 1, None))
            elif isinstance(value, list):
                if not value:
                    raise GuardValueError(f"{path} must not be empty, got {path} = []")
                holder = owner or (path, value)
                stack.extend((_join(path, i), item, depth + 1, holder) for i, item in reversed(list(enumerate(value))))
            else:
                _check_scalar(path, value, owner)
    except GuardValueError as exc:
        exc.args = (f"{exc.args[0]}{where}",)
        raise


def parse_toml(text: str, source: str) -> dict:
    """:func:`tomllib.loads` that turns a stack overflow on deep nesting into a message naming the key.

    Parameters
    ----------
    text : str
        The TOML text.
    source : str
        Where it comes from, named in messages.

    Returns
    -------
    dict
        The parsed document.

    Raises
    ------
    GuardValueError
        The document nests arrays or tables too deeply for the parser; the message names
        the key and line where the nesting exceeds :data:`MAX_DEPTH`. Or a dotted key has more
        than :data:`MAX_KEY_PARTS` parts (refused from the text, before the parser's quadratic work).
    tomllib.TOMLDecodeError
        Any other syntax error (the caller names the file).
    """
    import tomllib

    if (run := _DOTTED_RUN.search(text)) is not None:
        line = text.count("\n", 0, run.start()) + 1
        raise GuardValueError(
            f"line {line} holds a dotted key of more than {MAX_KEY_PARTS} parts, nested deeper than the "
            f"{MAX_DEPTH} levels any configuration needs, got {_short(run.group(0), 60)} (in {source})"
        )
    try:
        return tomllib.loads(text)
    except RecursionError:
        key, line = _deep_key(text)
        raise GuardValueError(
            f"{key} (line {line}) nests arrays or tables more than {MAX_DEPTH} levels deep, too deep to parse; "
            f"got {key} = {_short(text.splitlines()[line - 1].partition('=')[2].strip(), 40)} (in {source})"
        ) from None


def _deep_key(text: str) -> tuple[str, int]:
    """The key whose value first opens more than MAX_DEPTH brackets, and its line (1-based)."""
    key, depth = "?", 0
    for number, line in enumerate(text.splitlines(), start=1):
        if depth == 0 and "=" in line:
            key = line.partition("=")[0].strip() or "?"
        for ch in line:
            depth += ch in "[{"
            depth -= ch in "]}"
            if depth > MAX_DEPTH:
                return key, number
    return key, 1
