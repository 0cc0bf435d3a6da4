"""Figures and summary tables of a report, rendered from its audit entries (plain dicts).

Every function here reads the JSON form of an audit
(:meth:`~privaudit.audit.results.AuditResult.to_dict`), so a report can be
re-rendered from ``report.json`` alone, and fields that a renderer does not know
are simply ignored (the report tabulates them). Figures use matplotlib's Agg
backend and are returned as PNG bytes (no timestamp or software metadata, so the
same data give the same file).

Known kinds and their figures
-----------------------------
``tradeoff``
    Empirical trade-off curve (FPR α, FNR β) with its confidence band, over
    f_{ε,δ}(α) = max{0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)} of the claim and the exact
    curve of the mechanism (``exact_curve`` on ``alpha``, else f at the exact ε); and the ROC
    (TPR = 1 − β against α) on log-log axes, where the low-FPR corner that
    certifies large ε is visible.
``reconstruction``
    The attacker's MSE (with its confidence interval) against each bound the
    entry carries (unbiased CRB tr I⁻¹, the seed's trace form d/tr I, van Trees).
``bias``
    Bias with its simultaneous confidence interval, per coordinate.
``utility`` (:class:`~privaudit.audit.results.ExperimentResult`)
    Utility curves: one axis per panel, one line per method (with error bars),
    horizontal reference lines.

Summary tables (:func:`summary_tables`): claimed / exact / certified ε of every
trade-off audit with the largest ε its sample size could certify
(:func:`max_certifiable_epsilon`), and every bias audit.
"""

from __future__ import annotations

import io
import math
import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

_FIGSIZE = (6.4, 4.2)
_DPI = 100


# --------------------------------------------------------------------------- numbers
def _num(value: Any) -> float | None:
    """A float from a JSON scalar (``"inf"``/``"nan"`` strings included), else None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and value in ("inf", "-inf", "nan"):
        return float(value)
    return None


def _claim(audit: dict) -> dict:
    c = audit.get("claim")
    return c if isinstance(c, dict) else {}


def max_certifiable_epsilon(n: int, confidence: float, delta: float = 0.0) -> float:
    """The largest ε a Clopper–Pearson audit with ``n`` evaluation samples per hypothesis can certify.

    The best possible outcome is zero errors on both sides. The joint bound (each
    rate at level 1 − (1 − c)/2, union bound, as in
    :func:`privaudit.audit.epsilon_bounds.clopper_pearson_bound`) then gives
    ᾱ = β̄ = u = 1 − ((1 − c)/2)^{1/n}, and eq. (1) of that module gives

        ε_max = ln((1 − δ − u)/u) ≈ ln(n / ln(2/(1 − c))),

    so certifying ε needs n ≳ e^ε ln(2/(1 − c)) samples per hypothesis.
    """
    from .epsilon_bounds import clopper_pearson_upper, epsilon_from_rates

    level = 1 - (1 - confidence) / 2
    u = clopper_pearson_upper(0, n, level)
    return float(epsilon_from_rates(u, u, delta))


# --------------------------------------------------------------------------- headlines
def headline(audit: dict) -> str:
    """One-line summary of an audit entry for the overview table."""
    kind = audit.get("kind")
    if audit.get("verdict") == "error":
        return str(audit.get("error", "error"))[:160]
    prefix = ""
    if audit.get("expect") == "violation":
        caught = audit.get("audit_verdict") == "violation"
        prefix = "negative control " + ("caught: " if caught else "MISSED: ")
    return prefix + _headline(kind, audit)


def _headline(kind: str, audit: dict) -> str:
    if kind == "tradeoff":
        c = _claim(audit)
        parts = [f"ε_lb = {_f(audit.get('epsilon_lb'))} vs claimed ε = {_f(c.get('epsilon'))}"]
        if audit.get("epsilon_exact") is not None:
            parts.append(f"exact {_f(audit.get('epsilon_exact'))}")
        if c.get("delta") is not None:
            parts.append(f"δ = {_f(c.get('delta'))}")
        return ", ".join(parts)
    if kind == "one-run":
        c = _claim(audit)
        return (f"ε_lb = {_f(audit.get('epsilon_lb'))} vs claimed ε = {_f(c.get('epsilon'))} "
                f"({audit.get('correct')}/{audit.get('guesses')} canary guesses correct, m = {audit.get('m')})")
    if kind == "calibration":
        c = _claim(audit)
        return (f"exact ε = {_f(audit.get('epsilon_exact'))} vs claimed ε = {_f(c.get('epsilon'))} at "
                f"δ = {_f(c.get('delta'))} (slack {_f(audit.get('slack'))}, analytic)")
    if kind == "reconstruction":
        bounds = ", ".join(f"{k} {_f(audit[k])}" for k in _BOUND_KEYS if _num(audit.get(k)) is not None)
        rero = audit.get("rero")
        if isinstance(rero, dict) and _num(rero.get("success")) is not None:
            bounds = (f"exact reconstruction {_f(rero.get('success'))} {_f(rero.get('success_ci'))} "
                      f"≤ ReRo bound {_f(rero.get('bound'))}" + (f"; {bounds}" if bounds else ""))
        return f"MSE {_f(audit.get('mse'))} {_f(audit.get('mse_ci'))}; {bounds}"
    if kind == "bias":
        return (f"‖bias‖ = {_f(audit.get('bias_norm'))}, p = {_f(audit.get('p_value'))}, "
                f"expect {audit.get('expect', 'unbiased')}, n = {audit.get('n')}")
    if kind == "utility":
        n_series = len(audit.get("series") or {}) + sum(len(p) for p in (audit.get("panels") or {}).values())
        return f"{audit.get('name', '')}: {n_series} curves"
    scalars = [(k, v) for k, v in audit.items() if k not in ("kind", "target", "verdict", "task")
               and _num(v) is not None]
    return ", ".join(f"{k} = {_f(v)}" for k, v in scalars[:3])


def _f(value: Any) -> str:
    from .report import fmt

    if isinstance(value, str) and _num(value) is not None:
        value = _num(value)
    return fmt(value)


# --------------------------------------------------------------------------- figure helpers
def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=_DPI, bbox_inches="tight", metadata={"Software": None})
    import matplotlib.pyplot as plt

    plt.close(fig)
    return buf.getvalue()


def _new(nrows: int = 1, ncols: int = 1, size=_FIGSIZE):
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt.subplots(nrows, ncols, figsize=size, squeeze=False)


def _arr(value) -> np.ndarray | None:
    if not isinstance(value, list) or not value:
        return None
    try:
        a = np.asarray([_num(v) if isinstance(v, str) else v for v in value], dtype=float)
    except (TypeError, ValueError):
        return None
    return a


def _band(audit: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(alpha, lower, upper) from the entry's ``band`` in any of its usual layouts."""
    band = audit.get("band")
    if isinstance(band, dict):
        alpha = _arr(band.get("alpha") or band.get("grid") or audit.get("alpha"))
        lo = _arr(band.get("lower") or band.get("fnr_lower") or band.get("lo"))
        hi = _arr(band.get("upper") or band.get("fnr_upper") or band.get("hi"))
        if alpha is not None and lo is not None and hi is not None and alpha.size == lo.size == hi.size:
            return alpha, lo, hi
    if isinstance(band, list) and len(band) == 3:
        parts = [_arr(b) for b in band]
        if all(p is not None for p in parts) and len({p.size for p in parts}) == 1:
            return parts[0], parts[1], parts[2]
    alpha = _arr(audit.get("band_alpha") or audit.get("alpha"))
    lo, hi = _arr(audit.get("band_lower")), _arr(audit.get("band_upper"))
    if alpha is not None and lo is not None and hi is not None and alpha.size == lo.size == hi.size:
        return alpha, lo, hi
    return None


# --------------------------------------------------------------------------- per-kind figures
def tradeoff_figures(audit: dict) -> list[tuple[str, Any, str]]:
    """Trade-off curve with band over f_{ε,δ} of the claim and the exact curve; log-scale ROC."""
    from privaudit.mechanisms.tradeoff import tradeoff_curve

    fpr, fnr = _arr(audit.get("fpr")), _arr(audit.get("fnr"))
    c = _claim(audit)
    eps, delta = _num(c.get("epsilon")), _num(c.get("delta")) or 0.0
    grid = np.linspace(0.0, 1.0, 401)
    out = []
    fig, ax = _new()
    ax = ax[0, 0]
    band = _band(audit)
    if band is not None:
        ax.fill_between(band[0], band[1], band[2], color="tab:blue", alpha=0.2, lw=0,
                        label=f"{_f(audit.get('confidence'))} confidence band")
    if eps is not None and math.isfinite(eps):
        ax.plot(grid, tradeoff_curve(eps, delta, grid), color="tab:red", lw=1.6,
                label=f"claim f(ε={_f(eps)}, δ={_f(delta)})")
    alpha = _arr(audit.get("alpha"))
    exact = _arr(audit.get("exact_curve"))
    has_exact = alpha is not None and exact is not None and exact.size == alpha.size
    eps_exact = _num(audit.get("epsilon_exact"))
    if has_exact:
        ax.plot(alpha, exact, color="black", ls="--", lw=1.2, label="exact curve of the mechanism")
    elif eps_exact is not None and math.isfinite(eps_exact):
        ax.plot(grid, tradeoff_curve(eps_exact, delta, grid), color="black", ls="--", lw=1.2,
                label=f"f(exact ε={_f(eps_exact)}, δ)")
    eps_lb = _num(audit.get("epsilon_lb"))
    if eps_lb is not None and math.isfinite(eps_lb) and eps_lb > 0:
        ax.plot(grid, tradeoff_curve(eps_lb, delta, grid), color="tab:orange", ls=":", lw=1.2,
                label=f"certified f(ε_lb={_f(eps_lb)}, δ)")
    if fpr is not None and fnr is not None and fpr.size == fnr.size:
        order = np.argsort(fpr, kind="stable")
        ax.plot(fpr[order], fnr[order], color="tab:blue", lw=1.2, drawstyle="steps-post",
                label="empirical (attack)")
    ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="type I error α (FPR)", ylabel="type II error β (FNR)",
           title=f"Trade-off: {audit.get('target', '')}"[:80])
    ax.set_aspect("equal")
    ax.legend(fontsize=7, loc="upper right")
    out.append(("tradeoff", fig, "Empirical trade-off curve with its confidence band, over the claim's f_{ε,δ} "
                                 "and the exact curve"))
    if fpr is not None and fnr is not None and fpr.size == fnr.size:
        n = max(int(_num(audit.get("n")) or 10), 10)
        floor = 0.5 / n
        fig, ax = _new(size=(5.2, 4.2))
        ax = ax[0, 0]
        order = np.argsort(fpr, kind="stable")
        a = np.clip(fpr[order], floor, 1)
        ax.plot(a, np.clip(1 - fnr[order], floor, 1), color="tab:blue", drawstyle="steps-post",
                label="empirical ROC")
        g = np.geomspace(floor, 1, 300)
        if eps is not None and math.isfinite(eps):
            ax.plot(g, np.clip(1 - tradeoff_curve(eps, delta, g), floor, 1), color="tab:red",
                    label="claim bound on TPR")
        if has_exact:
            keep = alpha >= floor
            ax.plot(alpha[keep], np.clip(1 - exact[keep], floor, 1), color="black", ls="--", label="exact")
        ax.plot(g, g, color="grey", lw=0.8, ls=":", label="chance")
        ax.set(xscale="log", yscale="log", xlim=(floor, 1), ylim=(floor, 1.05), xlabel="FPR (log)",
               ylabel="TPR (log)", title="ROC, log scale")
        ax.legend(fontsize=7, loc="lower right")
        out.append(("roc", fig, "ROC of the attack on log-log axes (the low-FPR corner certifies large ε)"))
    return out


#: Bound fields of a reconstruction audit, in display order, with labels.
_BOUND_KEYS = ("crb", "crb_phase_conditional", "seed_bound", "hcr", "van_trees")
_BOUND_LABELS = {"crb": "CRB tr(I⁻¹)", "crb_phase_conditional": "CRB, phase known", "seed_bound": "seed (18) d/tr(I)",
                 "hcr": "HCR", "van_trees": "van Trees"}


def reconstruction_figures(audit: dict) -> list[tuple[str, Any, str]]:
    """Bar chart: the attacker's MSE (with CI) against each bound carried by the entry."""
    mse = _num(audit.get("mse"))
    if mse is None:
        return []
    labels, values, colors = ["attacker MSE"], [mse], ["tab:blue"]
    applies = audit.get("applies") if isinstance(audit.get("applies"), dict) else {}
    for k in _BOUND_KEYS:
        v = _num(audit.get(k))
        if v is not None and math.isfinite(v):
            ok = applies.get(k, True)
            labels.append(_BOUND_LABELS[k] + ("" if ok else "\n(not applicable)"))
            values.append(v)
            colors.append("tab:gray" if ok else "lightgray")
    fig, ax = _new(size=(6.4, 3.8))
    ax = ax[0, 0]
    ax.bar(range(len(values)), values, color=colors)
    ci = _arr(audit.get("mse_ci"))
    if ci is not None and ci.size == 2:
        ax.errorbar([0], [mse], yerr=[[mse - ci[0]], [ci[1] - mse]], color="black", capsize=5)
    ax.set_xticks(range(len(values)), labels, rotation=15, fontsize=8)
    if all(v > 0 for v in values) and max(values) / min(values) > 50:
        ax.set_yscale("log")
    ax.set(ylabel="mean squared error", title=f"Reconstruction: {audit.get('target', '')}"[:80])
    out = []
    rero = audit.get("rero")
    if isinstance(rero, dict) and _num(rero.get("success")) is not None and _num(rero.get("bound")) is not None:
        fig2, ax2 = _new(size=(4.6, 3.6))
        ax2 = ax2[0, 0]
        succ, bound = _num(rero["success"]), _num(rero["bound"])
        ax2.bar([0, 1], [succ, bound], color=["tab:blue", "tab:gray"])
        ci = _arr(rero.get("success_ci"))
        if ci is not None and ci.size == 2:
            ax2.errorbar([0], [succ], yerr=[[succ - ci[0]], [ci[1] - succ]], color="black", capsize=5)
        if _num(rero.get("kappa")) is not None:
            ax2.axhline(_num(rero["kappa"]), color="grey", ls=":", lw=1, label="baseline κ (prior guess)")
            ax2.legend(fontsize=7)
        ax2.set_xticks([0, 1], ["attack success", "ReRo bound"])
        ax2.set(ylim=(0, 1.05), ylabel="P(exact reconstruction)", title="Exact reconstruction (discrete prior)")
        out.append(("rero", fig2, "Exact-reconstruction success of the attacker against the ReRo bound"))
    return out + [("mse", fig, "Reconstruction MSE of the attacker (with its CI) against each bound; a bound applies only "
                         "to the attackers it covers (e.g. the CRB to unbiased ones)")]


def bias_figures(audit: dict) -> list[tuple[str, Any, str]]:
    """Bias per coordinate with its simultaneous confidence interval (first 40 coordinates)."""
    bias = _arr(audit.get("bias"))
    ci = audit.get("bias_ci")
    if bias is None:
        return []
    bias = bias.ravel()[:40]
    fig, ax = _new(size=(6.0, 3.4))
    ax = ax[0, 0]
    idx = np.arange(bias.size)
    lo = hi = None
    try:  # BiasAudit layout: one [low, high] pair per coordinate
        pairs = np.asarray(ci, dtype=float).reshape(-1, 2)[:40]
        if pairs.shape[0] == bias.size:
            lo, hi = pairs[:, 0], pairs[:, 1]
    except (TypeError, ValueError):
        pass
    if lo is not None:
        ax.errorbar(idx, bias, yerr=[np.maximum(bias - lo, 0), np.maximum(hi - bias, 0)], fmt="o", ms=3, capsize=3, color="tab:blue",
                    label=f"bias, {_f(audit.get('confidence'))} simultaneous CI")
    else:
        ax.plot(idx, bias, "o", ms=3, label="bias")
    ax.axhline(0, color="black", lw=0.8)
    ax.set(xlabel="coordinate", ylabel="E[θ̂] − θ", title=f"Bias: {audit.get('target', '')}"[:80])
    ax.legend(fontsize=7)
    return [("bias", fig, "Bias per coordinate with its simultaneous confidence interval")]


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
        x, y, yerr = _arr(s.get("x")), _arr(s.get("y")), _arr(s.get("yerr"))
        if x is None or y is None or x.size != y.size:
            continue
        if yerr is not None and yerr.size == y.size:
            ax.errorbar(x, y, yerr=yerr, marker="o", ms=3, capsize=2, label=str(name))
        else:
            ax.plot(x, y, marker="o", ms=3, label=str(name))
    for label, value in (audit.get("reference") or {} if references is None else references).items():
        v = _num(value)
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
    fig, axes = _new(nrows, ncols, size=(4.6 * ncols, 3.6 * nrows))
    for ax, (title, series) in zip(axes.ravel(), panels.items()):
        _plot_series(ax, series, audit, _references(audit, str(title), panels))
        if title:
            ax.set_title(str(title), fontsize=9)
    for ax in axes.ravel()[k:]:
        ax.set_visible(False)
    fig.suptitle(str(audit.get("name") or audit.get("target", "")), fontsize=10)
    fig.tight_layout()
    return [("utility", fig, f"Utility curves: {audit.get('name', '')}")]


#: kind -> figure function. Register more with ``FIGURES[kind] = func``.
FIGURES: dict[str, Callable[[dict], list]] = {
    "tradeoff": tradeoff_figures,
    "reconstruction": reconstruction_figures,
    "bias": bias_figures,
    "utility": utility_figures,
}


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", str(text)).strip("-").lower()[:40] or "audit"


def render_figures(report: dict) -> dict[int, list[tuple[str, bytes, str]]]:
    """PNG figures of every audit, keyed by the audit's position: ``{i: [(filename, png, caption), ...]}``.

    File names are ``<i>-<kind>-<target slug>-<figure>.png``. A figure that fails to
    render is skipped with a RuntimeWarning (the report still has the numbers); known
    kinds only.
    """
    out: dict[int, list[tuple[str, bytes, str]]] = {}
    for i, audit in enumerate(report.get("audits", [])):
        func = FIGURES.get(audit.get("kind"))
        if func is None or audit.get("verdict") == "error":
            continue
        items = []
        try:
            figs = func(audit)
        except Exception as exc:  # noqa: BLE001 - a malformed entry must not lose the whole report
            warnings.warn(f"no figure for audit {i} ({audit.get('kind')}: {audit.get('target')}): {exc!r}",
                          RuntimeWarning, stacklevel=2)
            figs = []
        for suffix, fig, caption in figs:
            name = f"{i:02d}-{audit['kind']}-{_slug(audit.get('target', ''))}-{suffix}.png"
            items.append((name, _png(fig), caption))
        if items:
            out[i] = items
    return out


def table_figure(title: str, header: list[str], rows: list[list[str]], note: str = ""):
    """A summary table drawn as a figure (for ``figures/``; the Markdown and HTML carry it as text)."""
    import textwrap

    cells = [[c if len(c) <= 48 else c[:45] + "..." for c in r] for r in rows]
    note_lines = textwrap.wrap(note, 150) if note else []
    row_h = 0.22
    height = row_h * (len(rows) + 1) + 0.45 + 0.16 * len(note_lines)
    fig, ax = _new(size=(11.0, height))
    ax = ax[0, 0]
    ax.axis("off")
    # Axes coordinates: the table fills the top, the note sits below it.
    table_h = row_h * (len(rows) + 1) / height
    top = 1 - 0.35 / height
    table = ax.table(cellText=cells, colLabels=header, cellLoc="left",
                     bbox=[0.0, top - table_h, 1.0, table_h])
    table.auto_set_font_size(False)
    table.set_fontsize(7)
    table.auto_set_column_width(list(range(len(header))))
    ax.text(0.5, 1.0, title, fontsize=10, ha="center", va="top", transform=ax.transAxes)
    if note_lines:
        ax.text(0.0, top - table_h - 0.05 / height, "\n".join(note_lines), fontsize=6.5, va="top",
                transform=ax.transAxes)
    return fig


def render_table_figures(report: dict) -> list[tuple[str, bytes, str]]:
    """``figures/epsilon-table.png`` and ``figures/bias-table.png`` when the report has such audits."""
    names = {"Privacy: claimed, exact and certified ε": "epsilon-table.png", "Bias checks": "bias-table.png"}
    out = []
    for title, header, rows, note in summary_tables(report):
        if title in names:
            out.append((names[title], _png(table_figure(title, header, rows, note)), title))
    return out


# --------------------------------------------------------------------------- summary tables
def summary_tables(report: dict) -> list[tuple[str, list[str], list[list[str]], str]]:
    """Cross-audit tables: ε (claimed / exact / certified / max certifiable) and bias.

    Each is ``(title, header, rows, note)``.
    """
    tables = []
    audits = report.get("audits", [])
    rows = []
    for i, a in enumerate(audits):
        if a.get("kind") == "calibration" and a.get("verdict") != "error":
            c = _claim(a)  # analytic: the exact ε of the noise in use, no sampling, nothing to certify
            rows.append([str(i), str(a.get("target", "")), _f(c.get("epsilon")), _f(c.get("delta")),
                         _f(a.get("epsilon_exact")), "— (analytic)", "—", "—", str(a.get("verdict"))])
            continue
        if a.get("kind") == "one-run" and a.get("verdict") != "error":
            c = _claim(a)
            rows.append([str(i), str(a.get("target", "")), _f(c.get("epsilon")), _f(c.get("delta")), "—",
                         _f(a.get("epsilon_lb")), "—", f"{a.get('m')} canaries, 1 run", str(a.get("verdict"))])
            continue
        if a.get("kind") != "tradeoff" or a.get("verdict") == "error":
            continue
        c = _claim(a)
        n, conf = _num(a.get("n")), _num(a.get("confidence"))
        n_eval = _num(a.get("n_eval")) or n
        delta = _num(c.get("delta")) or 0.0
        # The ceiling is that of Clopper–Pearson bounds; the GDP estimator has none of this form.
        cp = a.get("estimator", "clopper-pearson") == "clopper-pearson"
        eps_max = max_certifiable_epsilon(int(n_eval), conf, delta) if cp and n_eval and conf else None
        rows.append([str(i), str(a.get("target", "")), _f(c.get("epsilon")), _f(delta), _f(a.get("epsilon_exact")),
                     _f(a.get("epsilon_lb")), _f(eps_max), _f(a.get("n_eval") or a.get("n")), str(a.get("verdict"))])
    if rows:
        tables.append((
            "Privacy: claimed, exact and certified ε",
            ["#", "target", "claimed ε", "δ", "exact ε", "certified ε (lower bound)", "max certifiable ε",
             "n (eval, per hypothesis)", "verdict"],
            rows,
            "Max certifiable ε: the largest lower bound a Clopper–Pearson audit with this many evaluation samples "
            "per hypothesis can reach (zero errors on both sides): ln((1−δ−u)/u), u = 1−((1−c)/2)^{1/n}, "
            "≈ ln(n/ln(2/(1−c))). A claim above it cannot be refuted at this sample size. (—: the GDP estimator, "
            "which assumes a Gaussian trade-off curve, has no such ceiling.)",
        ))
    rows = []
    for i, a in enumerate(audits):
        if a.get("kind") != "bias" or a.get("verdict") == "error":
            continue
        rows.append([str(i), str(a.get("target", "")), str(a.get("expect", "unbiased")), _f(a.get("bias_norm")),
                     _f(a.get("relative_bias")), _f(a.get("min_detectable_relative_bias")), _f(a.get("p_value")),
                     _f(a.get("n")), str(a.get("verdict"))])
    if rows:
        tables.append((
            "Bias checks",
            ["#", "estimator", "expect", "‖bias‖", "relative bias", "min detectable rel. bias", "p-value", "n",
             "verdict"],
            rows,
            "A claimed-unbiased estimator fails when the test rejects E[θ̂] = θ; a known-biased control passes "
            "when its bias is detected.",
        ))
    return tables
