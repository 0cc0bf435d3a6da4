"""How a result is drawn and shown: the renderers that a result's ``plot()`` and ``_repr_html_`` call.

Results (:mod:`privaudit.audit.results`) sit below the audit kinds, which import them and
know how each kind is drawn, so a result cannot import its renderers. This module inverts
that dependency: it holds two callables, registered by the layer above. The package
:mod:`privaudit.audit`, whose ``__init__`` runs before any of its submodules, registers
:func:`privaudit.audit.reporting.figures.plot_result` and
:func:`privaudit.audit.reporting.render.result_html` (imported on first use, so that
importing the package stays light).

This module imports nothing from privaudit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: The registered renderers: ``"plot"`` (result, which) -> Figure and ``"html"`` (result) -> str.
_RENDERERS: dict[str, Callable[..., Any]] = {}


def register_renderers(*, plot: Callable[..., Any], html: Callable[..., Any]) -> None:
    """Register how results are drawn (``result.plot(which)``) and shown in a notebook (``_repr_html_``).

    Parameters
    ----------
    plot : callable
        ``plot(result, which)``: the result's figure ``which`` (its position or name), a
        matplotlib Figure.
    html : callable
        ``html(result)``: the result as a self-contained HTML fragment.
    """
    _RENDERERS.update(plot=plot, html=html)


def renderer(name: str) -> Callable[..., Any]:
    """The registered renderer ``name`` (``"plot"`` or ``"html"``).

    Parameters
    ----------
    name : {"plot", "html"}
        Which renderer.

    Returns
    -------
    callable

    Raises
    ------
    LookupError
        When none is registered (the package :mod:`privaudit.audit` registers both on import).
    """
    try:
        return _RENDERERS[name]
    except KeyError:
        raise LookupError(f"no {name!r} renderer registered for audit results: privaudit.audit registers "
                          "them when it is imported") from None


__all__ = ["register_renderers", "renderer"]
