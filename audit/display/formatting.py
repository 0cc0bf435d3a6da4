"""Formatting of report values: compact numbers, JSON scalars back to floats.

Reports render from ``report.json``, where non-finite floats are the strings
``"inf"``, ``"-inf"`` and ``"nan"`` (:func:`privaudit.audit.results.to_jsonable`);
:func:`num` reads them back and :func:`fmt` prints any value in 4 significant digits.
"""

from __future__ import annotations

import math
from typing import Any


def fmt(value: Any) -> str:
    """Compact human formatting of a scalar (4 significant digits).

    Parameters
    ----------
    value : object
        A scalar (numbers, ``None``, strings, or JSON strings such as ``"inf"``).
    """
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "∞" if value > 0 else "−∞"
        return f"{value:.4g}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(fmt(v) for v in value) + "]"
    if isinstance(value, dict):
        return ", ".join(f"{k}={fmt(v)}" for k, v in value.items())
    return str(value)


def num(value: Any) -> float | None:
    """A float from a JSON scalar (``"inf"``/``"nan"`` strings included), else None.

    Parameters
    ----------
    value : object
        A scalar (numbers, ``None``, strings, or JSON strings such as ``"inf"``).
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and value in ("inf", "-inf", "nan"):
        return float(value)
    return None


def title_lines(what: str, label: str, width: int = 48) -> str:
    """``"what: label"`` wrapped onto at most two lines of ``width`` characters (an ellipsis beyond).

    A figure's title then stays inside the figure however long the configuration's label is.

    Parameters
    ----------
    what : str
        The figure's subject ("ROC (log–log)").
    label : str
        The audit's label.
    width : int
        Characters per line.

    Returns
    -------
    str
    """
    import textwrap

    lines = textwrap.wrap(f"{what}: {label}", width)
    return "\n".join(lines[:2]) + ("…" if len(lines) > 2 else "")


def fnum(value: Any) -> str:
    """:func:`fmt` of a JSON value, with ``"inf"``-style strings read as floats.

    Parameters
    ----------
    value : object
        A scalar (numbers, ``None``, strings, or JSON strings such as ``"inf"``).
    """
    if isinstance(value, str) and num(value) is not None:
        value = num(value)
    return fmt(value)
