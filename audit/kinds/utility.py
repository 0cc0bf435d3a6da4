"""Kind ``utility``: a paper experiment (utility curves, an ExperimentResult) run at the configured size.

The experiment is a registered one (:data:`privaudit.audit.schema.components.EXPERIMENTS`:
the paper figures shipped with privaudit, or installed through the entry-point
group ``privaudit.experiments``); its keyword arguments (``params``) are checked
against the experiment's declared parameter specification when the configuration
is loaded. Its randomness comes from the task's generator, never from ``params``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privaudit.audit.schema.components import EXPERIMENTS, SEED_PARAMS, check_parameters, keyword_names
from privaudit.audit.schema.fields import ConfigKeyError, ConfigValueError, Field, check_keys, did_you_mean
from privaudit.audit.display.plotting import arr, new_figure
from privaudit.audit.results import AuditEntry, ExperimentResult
from privaudit.mechanisms.randomness import int_seed
from privaudit.audit.kinds.base import LEGEND_PT, AuditKind
from privaudit.audit.display.formatting import num


def _validate_experiment(path: str, name: str) -> str:
    if name not in EXPERIMENTS:
        raise ConfigValueError(
            f"unknown {path} = {name!r}{did_you_mean(name, EXPERIMENTS.names())} "
            f"(known: {', '.join(EXPERIMENTS.names())})"
        )
    return name


def check_params(path: str, params: dict) -> None:
    """``params`` against the experiment's parameter specification (the experiment is not imported).

    Parameters
    ----------
    path : str
        Key path of the entry (``audits[0]``), named in errors.
    params : dict
        The entry's parameters, each field already valid (checked at load, before any scaling).

    Raises
    ------
    ConfigKeyError
        Naming ``path``, for a seed parameter (randomness comes from the run's seed).
    ConfigError
        Naming ``path``, for a parameter the experiment's specification refuses.
    """
    comp = EXPERIMENTS.get(params["experiment"])
    spec = comp.constraints or {}
    table, loc = params["params"], f"{path}.params"
    for key in table:
        if key in SEED_PARAMS:
            raise ConfigKeyError(f"{loc}.{key} = {table[key]!r}: randomness comes from the run's seed, not from "
                                 f"the experiment's parameters")
    check_keys(loc, table, spec)
    check_parameters(loc, table, spec)
    if comp.check is not None:
        comp.check(loc, table)


FIELDS = {
    "experiment": Field("str", validate=_validate_experiment, doc="a registered experiment (privaudit list)"),
    "params": Field("table", {}, doc="keyword arguments of the experiment function (e.g. small = true)"),
}


def run(params: dict, rng: np.random.Generator) -> ExperimentResult:
    """A paper experiment (utility curves, ExperimentResult) run at the configured size.

    Parameters
    ----------
    params : dict
        The entry's validated parameters, sample sizes scaled by ``samples``.
    rng : Generator
        The task's randomness (derived from the run's seed and the entry).

    Returns
    -------
    ExperimentResult
    """
    func = EXPERIMENTS.get(params["experiment"]).load("experiment")
    kwargs = dict(params["params"])
    names = keyword_names(func)
    # An integer drawn from the task's generator, as before the experiments took ``rng``:
    # the presets keep their numbers at the same seed.
    if "rng" in names:
        kwargs["rng"] = int_seed(rng)
    elif "random_state" in names:
        kwargs["random_state"] = int_seed(rng)
    elif "seed" in names:
        kwargs["seed"] = int_seed(rng)
    return func(**kwargs)


def headline(entry: AuditEntry) -> str:
    """``N curves in K panels (informational)``.

    Parameters
    ----------
    entry : AuditEntry
        An entry whose result is an :class:`ExperimentResult`.

    Returns
    -------
    str
    """
    res: ExperimentResult = entry.result
    panels = [p for p in (res.panels or {}).values() if isinstance(p, dict)]
    n_series = len(list(_curves(res.series or {}))) + sum(len(list(_curves(p))) for p in panels)
    return f"{n_series} curves" + (f" in {len(panels)} panels" if len(panels) > 1 else "") + " (informational)"


def _references(result: ExperimentResult, panel: str, panels) -> dict:
    """Reference lines of one panel: labels ``"<panel>: ..."`` go to that panel only, others to all."""
    refs = result.reference or {}
    named = {p for p in panels if p}
    own = {k: v for k, v in refs.items() if panel and str(k).startswith(f"{panel}:")}
    shared = {k: v for k, v in refs.items() if not any(str(k).startswith(f"{p}:") for p in named)}
    return {**shared, **own}


def _curves(series: dict):
    """``(name, x, y, yerr or None)`` of every well-formed series of a panel."""
    for name, s in series.items():
        if not isinstance(s, dict):
            continue
        x, y, yerr = arr(s.get("x")), arr(s.get("y")), arr(s.get("yerr"))
        if x is None or y is None or x.size != y.size:
            continue
        yield str(name), x, y, (yerr if yerr is not None and yerr.size == y.size else None)


def _range_of(label: str, ys: np.ndarray) -> tuple[float, float]:
    """The range a plotted quantity lives in: R² ≤ 1; MSE, risks, errors, spectra ≥ 0 when all values are."""
    low = 0.0 if ys.size and np.nanmin(ys) >= 0 else -math.inf
    high = 1.0 if "R²" in label or "R^2" in label else math.inf
    return low, high


def _auto_scale(values: np.ndarray) -> str:
    """``"log"`` when positive values span more than 1.5 decades (one curve would flatten the others)."""
    v = values[np.isfinite(values)]
    if v.size >= 2 and np.all(v > 0) and v.max() / v.min() > 30:
        return "log"
    return "linear"


def _plot_series(ax, series: dict, result: ExperimentResult, references: dict | None = None, panel: str = "") -> bool:
    """Draw one panel; returns True when error bars were cut at the quantity's range or the axes.

    Error bars are mean ± s.e. cut to the range of the quantity (an MSE is never drawn
    below 0, an R² never above 1); the y-axis follows the means, so one huge standard
    error does not squash every curve (the bar then runs off the axes, and the caption
    says so).
    """
    meta = (result.panel_axes or {}).get(panel) or {}
    xlabel = str(meta.get("xlabel", result.xlabel))
    ylabel = str(meta.get("ylabel", result.ylabel))
    curves = list(_curves(series))
    ys = np.concatenate([c[2] for c in curves]) if curves else np.zeros(0)
    low, high = _range_of(ylabel, ys)
    yscale = meta.get("yscale") or (result.yscale if result.yscale not in (None, "linear")
                                    else _auto_scale(ys))
    cut = False
    for name, x, y, yerr in curves:
        if yerr is None:
            ax.plot(x, y, marker="o", ms=3, label=name)
            continue
        lo, hi = np.maximum(y - yerr, low), np.minimum(y + yerr, high)
        if yscale == "log":
            lo = np.where(lo > 0, lo, y / 10)  # a log axis cannot show 0: cut the bar one decade down
        cut |= bool(np.any(lo > y - yerr) or np.any(hi < y + yerr))
        ax.errorbar(x, y, yerr=[y - lo, hi - y], marker="o", ms=3, capsize=2, label=name)
    ref_values = []
    for label, value in (result.reference or {} if references is None else references).items():
        v = num(value)
        if v is not None and math.isfinite(v):
            ref_values.append(v)
            ax.axhline(v, ls="--", color="grey", lw=1)
            ax.annotate(str(label), (0.01, v), xycoords=("axes fraction", "data"), fontsize=LEGEND_PT - 1,
                        color="grey", va="bottom")
    ax.set(xlabel=xlabel, ylabel=ylabel)
    from matplotlib.ticker import NullFormatter

    xscale = meta.get("xscale", result.xscale)
    for set_scale, axis, scale in ((ax.set_xscale, ax.xaxis, xscale), (ax.set_yscale, ax.yaxis, yscale)):
        if scale in ("log", "symlog"):
            set_scale(scale)
            # Minor tick labels (2×10⁰, 3×10⁰, …) overlap on short log ranges.
            axis.set_minor_formatter(NullFormatter())
    if yscale != "log":
        ax.ticklabel_format(axis="y", useOffset=False)  # no "+1" offset: tick labels are the values
        shown = np.concatenate([ys[np.isfinite(ys)], ref_values]) if ys.size or ref_values else ys
        if shown.size:
            span = max(float(shown.max() - shown.min()), 1e-12 * max(1.0, abs(float(shown.max()))))
            top, bottom = ax.get_ylim()[1], ax.get_ylim()[0]
            # Keep error bars in view unless they would squash the means into a thin band.
            bottom = max(bottom, float(shown.min()) - 1.5 * span)
            top = min(top, float(shown.max()) + 1.5 * span)
            if bottom > ax.get_ylim()[0] or top < ax.get_ylim()[1]:
                cut = True
            ax.set_ylim(bottom, top)
    if xscale not in ("log", "symlog"):
        ax.ticklabel_format(axis="x", useOffset=False)
    if curves:
        ax.legend(fontsize=LEGEND_PT)
    return cut


def _grid(k: int) -> tuple[int, int]:
    """Rows and columns of k panels without empty slots where possible (4 → 2×2, 6 → 2×3)."""
    if k <= 3:
        return 1, k
    if k == 4:
        return 2, 2
    return math.ceil(k / 3), 3


def _shared_legend(panels, slot) -> None:
    """One legend of every curve in the first empty grid slot instead of one per panel (no empty slot left)."""
    seen: dict[str, Any] = {}
    for ax in panels:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(label, handle)
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    if seen:
        slot.set_visible(True)
        slot.axis("off")
        slot.legend(list(seen.values()), list(seen), loc="center", fontsize=LEGEND_PT + 1, frameon=False)


def figure_title(entry: AuditEntry) -> str:
    """A human title: the configuration's label, else the experiment's description, never a bare internal id.

    Parameters
    ----------
    entry : AuditEntry
        An entry whose result is an :class:`ExperimentResult`.

    Returns
    -------
    str
    """
    return str(entry.label or entry.result.target or entry.result.name or "")


def utility_figures(entry: AuditEntry) -> list[tuple[str, Any, str]]:
    """Utility curves of an ExperimentResult: one axis per panel (or one for ``series``).

    Parameters
    ----------
    entry : AuditEntry
        An entry whose result is an :class:`ExperimentResult`.

    Returns
    -------
    list of (suffix, matplotlib figure, caption)
    """
    res: ExperimentResult = entry.result
    panels = {k: v for k, v in (res.panels or {}).items() if isinstance(v, dict)}
    if res.series:
        panels = {"": res.series, **panels}
    if not panels:
        return []
    k = len(panels)
    nrows, ncols = _grid(k)
    fig, axes = new_figure(nrows, ncols, size=(4.6 * ncols, 3.6 * nrows))
    cut = False
    for ax, (title, series) in zip(axes.ravel(), panels.items()):
        cut |= _plot_series(ax, series, res, _references(res, str(title), panels), panel=str(title))
        if title:
            ax.set_title(str(title), fontsize=10)
    spare = axes.ravel()[k:]
    for ax in spare:
        ax.set_visible(False)
    if len(spare):
        _shared_legend(axes.ravel()[:k], spare[0])
    fig.suptitle(figure_title(entry)[:110], fontsize=11)
    fig.tight_layout()
    caption = f"Utility curves: {figure_title(entry)}; error bars: ± one standard error"
    if cut:
        caption += ", cut at the range of the quantity or at the axes where they would hide the means"
    return [("utility", fig, caption)]


KIND = AuditKind("utility", run, FIELDS, result=ExperimentResult, doc=run.__doc__.split("\n")[0],
                 target=lambda p: p["experiment"], check=check_params, headline=headline, figures=utility_figures)
