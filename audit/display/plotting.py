"""Matplotlib helpers of the report figures: a figure on the Agg backend, PNG bytes, float arrays of results.

PNGs carry no timestamp or software metadata, so the same data give the same file.
matplotlib is imported when a figure is drawn, not when this module is imported.

Text is drawn as written. Labels, titles and legends carry strings from configurations
and results (a target such as ``"costs $x^{$ per query"``); matplotlib would read
``$…$`` as mathtext (or, with ``text.usetex``, as LaTeX) and fail on it, after every task
ran. Figures made by :func:`new_figure` switch both off for each of their texts before
anything is laid out or drawn (:class:`PlainTextFigure`).
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

import numpy as np

from privaudit.audit.display.formatting import num

if TYPE_CHECKING:
    from matplotlib.figure import Figure

FIGSIZE = (6.4, 4.2)
DPI = 100


def png(fig: Figure) -> bytes:
    """The figure as PNG bytes (the figure is closed).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure (closed afterwards).
    """
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


def _plain_text_figure_class():
    """:class:`matplotlib.figure.Figure` whose texts are never parsed as mathtext or LaTeX (built on first use,
    so that importing this module does not import matplotlib)."""
    global PlainTextFigure
    if PlainTextFigure is not None:
        return PlainTextFigure
    from matplotlib.figure import Figure
    from matplotlib.table import Table
    from matplotlib.text import Text

    class _PlainTextFigure(Figure):
        """A figure drawing every text as written: ``$`` is a dollar sign, never mathtext or LaTeX.

        A text's parsing mode is fixed when the text is created, from the rcParams of the
        time; the texts of a figure are created after it (titles, legends, annotations), so
        the mode is switched off for all of them at every point where matplotlib lays out
        or draws text: :meth:`draw` (``savefig``, a notebook), :meth:`get_tightbbox`
        (``bbox_inches="tight"``) and :meth:`tight_layout`.
        """

        def _plain_text(self) -> None:
            # A table's cells hold their texts outside the artist tree findobj walks.
            cells = [cell.get_text() for table in self.findobj(Table) for cell in table.get_celld().values()]
            numbers = _number_labels(self)
            for text in [*self.findobj(Text), *cells]:
                if text not in numbers:
                    text.set_parse_math(False)
                    text.set_usetex(False)

        def draw(self, renderer):
            self._plain_text()
            return super().draw(renderer)

        def get_tightbbox(self, *args, **kwargs):
            self._plain_text()
            return super().get_tightbbox(*args, **kwargs)

        def tight_layout(self, *args, **kwargs):
            self._plain_text()
            return super().tight_layout(*args, **kwargs)

        def savefig(self, fname, *args, **kwargs):
            # A trade-off figure's legend and stamp sit below the axes, outside the canvas: saved as the
            # canvas they were cut off. Unless told otherwise, save what was drawn (the report's PNGs already
            # pass bbox_inches="tight", so they do not change).
            kwargs.setdefault("bbox_inches", "tight")
            return super().savefig(fname, *args, **kwargs)

    PlainTextFigure = _PlainTextFigure
    return PlainTextFigure


#: The figure class of :func:`new_figure` (set on first use).
PlainTextFigure = None


def _number_labels(fig: Figure) -> set:
    """The tick labels and offset texts matplotlib's number formatters write (``$10^{-3}$`` on a log axis).

    They are mathtext on purpose and never hold a user's string, so they keep their parsing;
    labels set by hand (categories: a fixed or function formatter) are user text.
    """
    from matplotlib.ticker import EngFormatter, LogFormatter, PercentFormatter, ScalarFormatter

    number_formatters = (ScalarFormatter, LogFormatter, EngFormatter, PercentFormatter)

    out = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            out.add(axis.offsetText)
            for ticks, formatter in ((axis.majorTicks, axis.get_major_formatter()),
                                     (axis.minorTicks, axis.get_minor_formatter())):
                if isinstance(formatter, number_formatters):
                    out.update(t for tick in ticks for t in (tick.label1, tick.label2))
    return out


def new_figure(nrows: int = 1, ncols: int = 1, size: tuple[float, float] = FIGSIZE) -> tuple[Figure, np.ndarray]:
    """``(figure, axes)`` with axes always a 2-d array (``squeeze=False``), on the Agg backend.

    The figure is a :class:`PlainTextFigure`: strings from configurations and results are drawn as
    written, never parsed as mathtext or LaTeX.

    Parameters
    ----------
    nrows, ncols : int
        Grid of axes.
    size : (float, float)
        Figure size in inches.

    Returns
    -------
    (matplotlib.figure.Figure, ndarray of Axes)
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt.subplots(nrows, ncols, figsize=size, squeeze=False, FigureClass=_plain_text_figure_class())


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
