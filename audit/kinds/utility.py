"""Kind ``utility``: a paper experiment (utility curves, an ExperimentResult) run at the configured size.

The experiment is a registered one (:data:`privaudit.audit.components.EXPERIMENTS`:
the paper figures shipped with privaudit, or installed through the entry-point
group ``privaudit.experiments``); its keyword arguments (``params``) are checked
against the experiment's declared parameter specification when the configuration
is loaded. Its randomness comes from the task's generator, never from ``params``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..components import EXPERIMENTS, SEED_PARAMS, check_parameters, keyword_names
from ..fields import ConfigKeyError, ConfigValueError, Field, check_keys, did_you_mean
from ..plotting import arr, new_figure
from ..results import ExperimentResult
from ..seeding import int_seed
from .base import AuditKind
from ..formatting import num


def _validate_experiment(path: str, name: str) -> str:
    if name not in EXPERIMENTS:
        raise ConfigValueError(
            f"unknown {path} = {name!r}{did_you_mean(name, EXPERIMENTS.names())} "
            f"(known: {', '.join(EXPERIMENTS.names())})"
        )
    return name


def check_params(path: str, params: dict) -> None:
    """``params`` against the experiment's parameter specification (the experiment is not imported)."""
    spec = EXPERIMENTS.get(params["experiment"]).constraints or {}
    table, loc = params["params"], f"{path}.params"
    for key in table:
        if key in SEED_PARAMS:
            raise ConfigKeyError(f"{loc}.{key} = {table[key]!r}: randomness comes from the run's seed, not from "
                                 f"the experiment's parameters")
    check_keys(loc, table, spec)
    check_parameters(loc, table, spec)


FIELDS = {
    "experiment": Field("str", validate=_validate_experiment, doc="a registered experiment (privaudit list)"),
    "params": Field("table", {}, doc="keyword arguments of the experiment function (e.g. small = true)"),
}


def run(params: dict, rng: np.random.Generator) -> ExperimentResult:
    """A paper experiment (utility curves, ExperimentResult) run at the configured size."""
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


def headline(entry: dict) -> str:
    n_series = len(entry.get("series") or {}) + sum(len(p) for p in (entry.get("panels") or {}).values())
    return f"{entry.get('name', '')}: {n_series} curves"


def _references(audit: dict, panel: str, panels) -> dict:
    """Reference lines of one panel: labels ``"<panel>: ..."`` go to that panel only, others to all."""
    refs = audit.get("reference") or {}
    named = {p for p in panels if p}
    own = {k: v for k, v in refs.items() if panel and str(k).startswith(f"{panel}:")}
    shared = {k: v for k, v in refs.items() if not any(str(k).startswith(f"{p}:") for p in named)}
    return {**shared, **own}


def _plot_series(ax, series: dict, audit: dict, references: dict | None = None) -> None:
    for name, s in series.items():
        if not isinstance(s, dict):
            continue
        x, y, yerr = arr(s.get("x")), arr(s.get("y")), arr(s.get("yerr"))
        if x is None or y is None or x.size != y.size:
            continue
        if yerr is not None and yerr.size == y.size:
            ax.errorbar(x, y, yerr=yerr, marker="o", ms=3, capsize=2, label=str(name))
        else:
            ax.plot(x, y, marker="o", ms=3, label=str(name))
    for label, value in (audit.get("reference") or {} if references is None else references).items():
        v = num(value)
        if v is not None and math.isfinite(v):
            ax.axhline(v, ls="--", color="grey", lw=1)
            ax.annotate(str(label), (0.01, v), xycoords=("axes fraction", "data"), fontsize=7, color="grey",
                        va="bottom")
    ax.set(xlabel=audit.get("xlabel", ""), ylabel=audit.get("ylabel", ""))
    from matplotlib.ticker import NullFormatter

    for set_scale, axis, scale in ((ax.set_xscale, ax.xaxis, audit.get("xscale")),
                                   (ax.set_yscale, ax.yaxis, audit.get("yscale"))):
        if scale in ("log", "symlog"):
            set_scale(scale)
            # Minor tick labels (2×10⁰, 3×10⁰, …) overlap on short log ranges.
            axis.set_minor_formatter(NullFormatter())
    ax.legend(fontsize=7)


def utility_figures(audit: dict) -> list[tuple[str, Any, str]]:
    """Utility curves of an ExperimentResult: one axis per panel (or one for ``series``)."""
    panels = {k: v for k, v in (audit.get("panels") or {}).items() if isinstance(v, dict)}
    if audit.get("series"):
        panels = {"": audit["series"], **panels}
    if not panels:
        return []
    k = len(panels)
    ncols = min(k, 3)
    nrows = math.ceil(k / ncols)
    fig, axes = new_figure(nrows, ncols, size=(4.6 * ncols, 3.6 * nrows))
    for ax, (title, series) in zip(axes.ravel(), panels.items()):
        _plot_series(ax, series, audit, _references(audit, str(title), panels))
        if title:
            ax.set_title(str(title), fontsize=9)
    for ax in axes.ravel()[k:]:
        ax.set_visible(False)
    fig.suptitle(str(audit.get("name") or audit.get("target", "")), fontsize=10)
    fig.tight_layout()
    return [("utility", fig, f"Utility curves: {audit.get('name', '')}")]


KIND = AuditKind("utility", run, FIELDS, result=ExperimentResult, doc=run.__doc__.split("\n")[0],
                 target=lambda p: p["experiment"], check=check_params, headline=headline, figures=utility_figures)
