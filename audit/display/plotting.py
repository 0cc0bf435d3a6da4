"""Matplotlib helpers of the report figures: a figure on the Agg backend, PNG bytes, float arrays of results.

PNGs carry no timestamp or software metadata, so the same data give the same file.
matplotlib is imported when a figure is drawn, not when this module is imported.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from privaudit.audit.display.formatting import num

FIGSIZE = (6.4, 4.2)
DPI = 100


def png(fig) -> bytes:
    """The figure as PNG bytes (the figure is closed)."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


def new_figure(nrows: int = 1, ncols: int = 1, size=FIGSIZE):
    """``(figure, axes)`` with axes always a 2-d array (``squeeze=False``), on the Agg backend."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt.subplots(nrows, ncols, figsize=size, squeeze=False)


def arr(value: Any) -> np.ndarray | None:
    """A float array from a result's array, tuple or list (``"inf"`` strings of JSON included), else None.

    Parameters
    ----------
    value : Any
        An array field of a result (an ndarray, or the list it was read back as).

    Returns
    -------
    ndarray of float, or None
        None for anything empty or not numeric.
    """
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if not isinstance(value, list | tuple) or not value:
        return None
    try:
        return np.asarray([num(v) if isinstance(v, str) else v for v in value], dtype=float)
    except (TypeError, ValueError):
        return None
