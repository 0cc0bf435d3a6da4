"""Display objects in the scikit-learn manner: ``TradeoffDisplay.from_result(res).plot(ax=...)``.

Each display holds what a figure shows, read from a result (``from_result``), and draws it on
given axes or on a new figure (``plot``), setting ``ax_`` and ``figure_``. The kinds' report
figures draw with these displays (:func:`privaudit.audit.kinds.tradeoff.tradeoff_figures`,
:func:`privaudit.audit.kinds.bias.bias_figures`), so ``result.plot()``, the report's PNGs and a
display drawn by hand are the same drawing.

This module sits in ``display/``, below the results and the kinds: it reads results by their
attributes and imports nothing from them. What depends on a report entry's outcome (the
verdict stamp of a trade-off figure) is computed by the kind and passed in (``stamp``).
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from privaudit.mechanisms.tradeoff import tradeoff_curve

from privaudit.audit.display.formatting import fnum, num, title_lines
from privaudit.audit.display.plotting import arr, new_figure

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: Font size of legends and stamps (points).
LEGEND_PT = 9


def band_of(result: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(alpha, lower, upper) of a trade-off result's confidence band, None when it has none on ``alpha``.

    Parameters
    ----------
    result : TradeoffAudit

    Returns
    -------
    tuple of three ndarray, or None
    """
    band = result.band
    alpha, lo, hi = arr(band.alpha), arr(band.lower), arr(band.upper)
    if alpha is not None and lo is not None and hi is not None and alpha.size == lo.size == hi.size:
        return alpha, lo, hi
    return None


def certifying_point(result: Any) -> tuple[float, float, str] | None:
    """The test ε̲ was read from, as a point (α, β) of the trade-off plot, and how it was read.

    A forward test (score > threshold rejects x) is its (FPR, FNR). A reverse test
    (score < threshold rejects x′) is a test of x′ against x: as a test of x against x′
    its errors swap, so it is drawn at (FNR, FPR); f_{ε,δ} is symmetric, so the claim
    constrains both the same way. A pooled test adds both tests' errors (rates over
    2·n_eval); it is drawn at its rates. FPR = 0 is drawn on the axis.

    Parameters
    ----------
    result : TradeoffAudit

    Returns
    -------
    (alpha, beta, label) or None
        None when the operating point's rates are not numbers.
    """
    op = result.operating_point
    a, b = num(op.fpr), num(op.fnr)
    if a is None or b is None:
        return None
    direction = op.direction
    if direction == "reverse":
        return b, a, f"reverse test, FPR {fnum(a)}, FNR {fnum(b)}, drawn mirrored"
    return a, b, f"{direction} test, FPR {fnum(a)}, FNR {fnum(b)}"


def empirical_curve_points(fpr: np.ndarray, fnr: np.ndarray, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The empirical trade-off curve as the confidence band reads it: linear between its vertices.

    Between two threshold tests the randomised tests (one or the other by a coin) reach the
    segment joining them, and :func:`~privaudit.audit.stats.epsilon_bounds.dkw_band` interpolates
    the curve linearly; drawn as steps, a discrete mechanism's few-vertex curve left its own band.
    The vertices and ``grid`` (dense where a log axis needs it) are both kept.

    Parameters
    ----------
    fpr, fnr : ndarray
        The curve's vertices.
    grid : ndarray
        Extra FPR values in [0, 1] to evaluate the line at.

    Returns
    -------
    (ndarray, ndarray)
        Increasing FPRs and the curve's FNR there.
    """
    order = np.argsort(fpr, kind="stable")
    a, b = fpr[order], fnr[order]
    x = np.union1d(a, np.clip(grid, 0.0, 1.0))
    return x, np.interp(x, a, b, left=1.0, right=0.0)


def _axes(ax: Axes | None, size: tuple[float, float] | None) -> tuple[Figure, Axes]:
    if ax is not None:
        return ax.figure, ax
    fig, axes = new_figure() if size is None else new_figure(size=size)
    return fig, axes[0, 0]


@dataclasses.dataclass
class TradeoffDisplay:
    """The trade-off plot: empirical curve and band over the claim's f_{ε,δ}, the exact and certified curves.

    Attributes
    ----------
    fpr, fnr : ndarray or None
        The empirical curve's vertices.
    band : (alpha, lower, upper) or None
        The confidence band.
    confidence : float or None
        Its level.
    claim_epsilon, claim_delta : float or None
        The claim.
    exact_alpha, exact_curve : ndarray or None
        The exact curve on its grid, when known.
    epsilon_exact : float or None
        The exact ε (its f_{ε,δ} is drawn when there is no exact curve).
    epsilon_lb : float or None
        The certified ε̲.
    estimator : str
        How ε̲ was computed.
    point : (alpha, beta, label) or None
        The certifying test (:func:`certifying_point`).
    label : str
        The audit's name (the title).
    stamp, stamp_colour : str
        The verdict stamp written in the plot's lower left corner (computed by the kind from the entry's outcome).
    ax_, figure_ : matplotlib Axes and Figure
        Set by :meth:`plot`.
    """

    fpr: np.ndarray | None
    fnr: np.ndarray | None
    band: tuple | None
    confidence: float | None
    claim_epsilon: float | None
    claim_delta: float
    exact_alpha: np.ndarray | None
    exact_curve: np.ndarray | None
    epsilon_exact: float | None
    epsilon_lb: float | None
    estimator: str
    point: tuple | None
    label: str = ""
    stamp: str = ""
    stamp_colour: str = "black"
    ax_: Any = dataclasses.field(default=None, init=False, repr=False)
    figure_: Any = dataclasses.field(default=None, init=False, repr=False)

    @classmethod
    def from_result(cls, result: Any, *, label: str | None = None, stamp: str = "",
                    stamp_colour: str = "black") -> TradeoffDisplay:
        """The display of a :class:`~privaudit.audit.engines.tradeoff.TradeoffAudit`.

        Parameters
        ----------
        result : TradeoffAudit
            The audit (an entry's ``result``).
        label : str, optional
            The title's name; default the result's target.
        stamp, stamp_colour : str
            A verdict stamp (the report's: :func:`privaudit.audit.kinds.tradeoff.verdict_text`).

        Returns
        -------
        TradeoffDisplay
        """
        alpha, exact = arr(result.band.alpha), arr(result.exact_curve)
        return cls(arr(result.curve.fpr), arr(result.curve.fnr), band_of(result), num(result.confidence),
                   num(result.claim.epsilon), num(result.claim.delta) or 0.0, alpha, exact,
                   num(result.epsilon_exact), num(result.epsilon_lb), str(result.estimator), certifying_point(result),
                   str(result.target if label is None else label), stamp, stamp_colour)

    @property
    def has_curve(self) -> bool:
        """Whether the empirical curve can be drawn (and so a ROC)."""
        return self.fpr is not None and self.fnr is not None and self.fpr.size == self.fnr.size

    @property
    def has_exact(self) -> bool:
        """Whether the exact curve is known on its grid."""
        return self.exact_alpha is not None and self.exact_curve is not None and \
            self.exact_curve.size == self.exact_alpha.size

    def plot(self, ax: Axes | None = None, *, legend_pt: int = LEGEND_PT) -> TradeoffDisplay:
        """Draw on ``ax`` (default: a new figure); sets :attr:`ax_` and :attr:`figure_`.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        legend_pt : int
            Font size of the legend.

        Returns
        -------
        TradeoffDisplay
            ``self``.
        """
        fig, ax = _axes(ax, None)
        eps, delta = self.claim_epsilon, self.claim_delta
        grid = np.linspace(0.0, 1.0, 401)
        if self.band is not None:
            ax.fill_between(self.band[0], self.band[1], self.band[2], color="tab:blue", alpha=0.2, lw=0,
                            label=f"{fnum(self.confidence)} confidence band")
        if eps is not None and math.isfinite(eps):
            ax.plot(grid, tradeoff_curve(eps, delta, grid), color="tab:red", lw=1.6,
                    label=f"claim f(ε={fnum(eps)}, δ={fnum(delta)})")
        eps_exact = self.epsilon_exact
        if self.has_exact:
            ax.plot(self.exact_alpha, self.exact_curve, color="black", ls="--", lw=1.2,
                    label="exact curve of the mechanism")
        elif eps_exact is not None and math.isfinite(eps_exact):
            ax.plot(grid, tradeoff_curve(eps_exact, delta, grid), color="black", ls="--", lw=1.2,
                    label=f"f(exact ε={fnum(eps_exact)}, δ)")
        eps_lb = self.epsilon_lb
        if eps_lb is not None and math.isfinite(eps_lb) and eps_lb > 0:
            ax.plot(grid, tradeoff_curve(eps_lb, delta, grid), color="tab:orange", ls=":", lw=1.2,
                    label=f"certified f(ε̲={fnum(eps_lb)}, δ), "
                          + ("GDP fit" if self.estimator == "gdp" else "Clopper–Pearson"))
        if self.has_curve:
            ax.plot(*empirical_curve_points(self.fpr, self.fnr, grid), color="tab:blue", lw=1.2,
                    label="empirical (attack)")
        point = self.point
        if point is not None:
            ax.plot([point[0]], [point[1]], marker="o", ms=7, mfc="none", mec="tab:orange", mew=1.8, ls="none",
                    clip_on=False, label=f"certifying test ({point[2]})")
        ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="type I error α (FPR)", ylabel="type II error β (FNR)")
        ax.set_title(title_lines("Trade-off", self.label), fontsize=10)
        ax.set_aspect("equal")
        # Below the axes: the empirical curve and its band run along the upper left for weak mechanisms and any
        # corner for strong ones, so a legend inside the square always hides some of the evidence.
        ax.legend(fontsize=legend_pt, loc="upper center", bbox_to_anchor=(0.5, -0.13), frameon=False)
        ax.text(0.02, 0.02, self.stamp, transform=ax.transAxes, fontsize=legend_pt - 1, va="bottom",
                color=self.stamp_colour)
        self.ax_, self.figure_ = ax, fig
        return self


@dataclasses.dataclass
class RocDisplay:
    """The attack's ROC on log–log axes: the band, the region the claim forbids, the exact and empirical ROCs.

    TPR above the claim's bound 1 − f_{ε,δ}(FPR) refutes the claim where the band's lower edge goes
    there. The axes start at half a release (``0.5 / n_eval``), where the fewest releases resolve a rate.

    Attributes
    ----------
    fpr, fnr : ndarray
        The empirical trade-off curve's vertices.
    band : (alpha, lower, upper) or None
        The confidence band of the trade-off curve (drawn as TPR = 1 − FNR).
    confidence : float or None
        Its level.
    claim_epsilon, claim_delta : float or None
        The claim.
    exact_alpha, exact_curve : ndarray or None
        The exact trade-off curve on its grid, when known.
    n_eval : int
        Releases per hypothesis behind the curve (at least 10): the axes start at ``0.5 / n_eval``.
    point : (alpha, beta, label) or None
        The certifying test (:func:`certifying_point`).
    label : str
        The audit's name (the title).
    stamp, stamp_colour : str
        The verdict written below the axes (computed by the kind from the entry's outcome).
    ax_, figure_ : matplotlib Axes and Figure
        Set by :meth:`plot`.
    """

    fpr: np.ndarray
    fnr: np.ndarray
    band: tuple | None
    confidence: float | None
    claim_epsilon: float | None
    claim_delta: float
    exact_alpha: np.ndarray | None
    exact_curve: np.ndarray | None
    n_eval: int
    point: tuple | None
    label: str = ""
    stamp: str = ""
    stamp_colour: str = "black"
    ax_: Any = dataclasses.field(default=None, init=False, repr=False)
    figure_: Any = dataclasses.field(default=None, init=False, repr=False)

    @classmethod
    def from_result(cls, result: Any, *, label: str | None = None, stamp: str = "",
                    stamp_colour: str = "black") -> RocDisplay | None:
        """The ROC display of a :class:`~privaudit.audit.engines.tradeoff.TradeoffAudit` (None without a curve).

        Parameters
        ----------
        result : TradeoffAudit
            The audit (an entry's ``result``).
        label : str, optional
            The title's name; default the result's target.
        stamp, stamp_colour : str
            A verdict line below the axes.

        Returns
        -------
        RocDisplay or None
        """
        curve = TradeoffDisplay.from_result(result)
        if not curve.has_curve:
            return None
        exact = curve.has_exact
        return cls(curve.fpr, curve.fnr, curve.band, num(result.confidence), num(result.claim.epsilon),
                   num(result.claim.delta) or 0.0, curve.exact_alpha if exact else None,
                   curve.exact_curve if exact else None, max(int(num(result.n_eval) or num(result.n) or 10), 10),
                   certifying_point(result), str(result.target if label is None else label), stamp, stamp_colour)

    @property
    def floor(self) -> float:
        """The smallest rate drawn, ``0.5 / n_eval``."""
        return 0.5 / self.n_eval

    def plot(self, ax: Axes | None = None, *, legend_pt: int = LEGEND_PT) -> RocDisplay:
        """Draw on ``ax`` (default: a new figure); sets :attr:`ax_` and :attr:`figure_`.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        legend_pt : int
            Font size of the stamp (the legend's is one point less).

        Returns
        -------
        RocDisplay
            ``self``.
        """
        fig, ax = _axes(ax, (5.6, 4.6))
        eps, delta, floor = self.claim_epsilon, self.claim_delta, self.floor
        g = np.geomspace(floor, 1, 300)
        if self.band is not None:
            a, lo, hi = self.band
            keep = a >= floor
            ax.fill_between(a[keep], np.clip(1 - hi[keep], floor, 1), np.clip(1 - lo[keep], floor, 1),
                            color="tab:blue", alpha=0.2, lw=0, label=f"{fnum(self.confidence)} confidence band")
        if eps is not None and math.isfinite(eps):
            bound = np.clip(1 - tradeoff_curve(eps, delta, g), floor, 1)
            ax.fill_between(g, bound, 1.05, color="tab:red", alpha=0.08, lw=0, label="region the claim forbids")
            ax.plot(g, bound, color="tab:red", label=f"claim bound on TPR (ε={fnum(eps)})")
        if self.exact_curve is not None:
            keep = self.exact_alpha >= floor
            ax.plot(self.exact_alpha[keep], np.clip(1 - self.exact_curve[keep], floor, 1), color="black", ls="--",
                    label="exact")
        f_line, b_line = empirical_curve_points(self.fpr, self.fnr, g)
        keep = f_line >= floor
        ax.plot(f_line[keep], np.clip(1 - b_line[keep], floor, 1), color="tab:blue", label="empirical ROC")
        ax.plot(g, g, color="grey", lw=0.8, ls=":", label="chance")
        point = self.point
        if point is not None:
            at_zero = point[0] <= 0
            ax.plot([max(point[0], floor)], [np.clip(1 - point[1], floor, 1)], marker="<" if at_zero else "o", ms=8,
                    mfc="none", mec="tab:orange", mew=1.8, ls="none", clip_on=False,
                    label=f"certifying test ({point[2]})" + (", FPR = 0 drawn at the axis" if at_zero else ""))
        ax.set(xscale="log", yscale="log", xlim=(floor, 1), ylim=(floor, 1.05), xlabel="false-positive rate (log)",
               ylabel="true-positive rate (log)")
        ax.set_title(title_lines("ROC (log–log)", self.label), fontsize=10)
        ax.legend(fontsize=legend_pt - 1, loc="lower right")
        # Below the axes: inside, a strong attack's curve runs along the top-left corner.
        ax.text(0.0, -0.13, self.stamp, transform=ax.transAxes, fontsize=legend_pt, va="top", color=self.stamp_colour)
        self.ax_, self.figure_ = ax, fig
        return self


@dataclasses.dataclass
class BiasDisplay:
    """Bias per coordinate with its simultaneous confidence interval (the first 40 coordinates).

    Attributes
    ----------
    bias : ndarray
        The bias per coordinate.
    lower, upper : ndarray or None
        The interval's edges (None: no interval of one pair per coordinate).
    confidence : float or None
        Their level.
    label : str
        The estimator's name (the title).
    ax_, figure_ : matplotlib Axes and Figure
        Set by :meth:`plot`.
    """

    bias: np.ndarray
    lower: np.ndarray | None
    upper: np.ndarray | None
    confidence: float | None
    label: str = ""
    ax_: Any = dataclasses.field(default=None, init=False, repr=False)
    figure_: Any = dataclasses.field(default=None, init=False, repr=False)

    #: Coordinates drawn at most.
    MAX_COORDINATES = 40

    @classmethod
    def from_result(cls, result: Any, *, label: str | None = None) -> BiasDisplay | None:
        """The display of a :class:`~privaudit.audit.engines.bias.BiasAudit` (None when it has no bias to draw).

        Parameters
        ----------
        result : BiasAudit
        label : str, optional
            The title's name; default the result's target.

        Returns
        -------
        BiasDisplay or None
        """
        bias = arr(result.bias)
        if bias is None:
            return None
        bias = bias.ravel()[:cls.MAX_COORDINATES]
        lo = hi = None
        try:  # BiasAudit layout: one [low, high] pair per coordinate
            pairs = np.asarray(result.bias_ci, dtype=float).reshape(-1, 2)[:cls.MAX_COORDINATES]
            if pairs.shape[0] == bias.size:
                lo, hi = pairs[:, 0], pairs[:, 1]
        except (TypeError, ValueError):
            pass
        return cls(bias, lo, hi, result.confidence, str(result.target if label is None else label))

    def plot(self, ax: Axes | None = None, *, legend_pt: int = LEGEND_PT) -> BiasDisplay:
        """Draw on ``ax`` (default: a new figure); sets :attr:`ax_` and :attr:`figure_`.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        legend_pt : int
            Font size of the legend.

        Returns
        -------
        BiasDisplay
            ``self``.
        """
        fig, ax = _axes(ax, (6.0, 3.4))
        bias = self.bias
        idx = np.arange(bias.size)
        if self.lower is not None:
            ax.errorbar(idx, bias, yerr=[np.maximum(bias - self.lower, 0), np.maximum(self.upper - bias, 0)],
                        fmt="o", ms=3, capsize=3, color="tab:blue",
                        label=f"bias, {fnum(self.confidence)} simultaneous CI")
        else:
            ax.plot(idx, bias, "o", ms=3, label="bias")
        ax.axhline(0, color="black", lw=0.8)
        ax.set(xlabel="coordinate", ylabel="E[θ̂] − θ", title=f"Bias: {self.label}"[:80])
        ax.legend(fontsize=legend_pt)
        self.ax_, self.figure_ = ax, fig
        return self


#: Bounds of a reconstruction audit, in display order, with labels.
RECONSTRUCTION_BOUND_KEYS = ("crb", "crb_phase_conditional", "seed_bound", "hcr", "van_trees")
RECONSTRUCTION_BOUND_LABELS = {"crb": "CRB tr(I⁻¹)", "crb_phase_conditional": "CRB, phase known",
                               "seed_bound": "seed (18) d/tr(I)", "hcr": "HCR", "van_trees": "van Trees"}


@dataclasses.dataclass
class ReconstructionDisplay:
    """The attacker's MSE (with its interval) against each finite bound of a reconstruction audit, as bars.

    Over a decade apart the bars are compared on a log axis; on a linear one the axis is scaled to the
    attacker and the bounds that apply, and a bound that does not apply (hatched, unfilled) is cut at the
    top with its value written.

    Attributes
    ----------
    mse : float
        The attacker's MSE.
    mse_ci : ndarray or None
        Its interval (low, high).
    bounds : list of (name, value, applies)
        Each finite bound, in :data:`RECONSTRUCTION_BOUND_KEYS` order, and whether it binds the attacker.
    label : str
        The audit's name (the title).
    stamp : str
        Written in the upper right corner (computed by the kind: that no bound applies).
    ax_, figure_ : matplotlib Axes and Figure
        Set by :meth:`plot`.
    """

    mse: float
    mse_ci: np.ndarray | None
    bounds: list
    label: str = ""
    stamp: str = ""
    ax_: Any = dataclasses.field(default=None, init=False, repr=False)
    figure_: Any = dataclasses.field(default=None, init=False, repr=False)

    @classmethod
    def from_result(cls, result: Any, *, label: str | None = None, stamp: str = "") -> ReconstructionDisplay | None:
        """The display of a :class:`~privaudit.audit.engines.reconstruction.ReconstructionAudit` (None without an MSE).

        Parameters
        ----------
        result : ReconstructionAudit
            The audit (an entry's ``result``).
        label : str, optional
            The title's name; default the result's target.
        stamp : str
            A note for the upper right corner (the report's: no bound applies, inconclusive).

        Returns
        -------
        ReconstructionDisplay or None
        """
        mse = num(result.mse)
        if mse is None:
            return None
        bounds = []
        for key in RECONSTRUCTION_BOUND_KEYS:
            v = num(getattr(result, key))
            if v is not None and math.isfinite(v):
                bounds.append((key, v, result.applies.get(key, True)))
        return cls(mse, arr(result.mse_ci), bounds, str(result.target if label is None else label), stamp)

    def plot(self, ax: Axes | None = None, *, legend_pt: int = LEGEND_PT) -> ReconstructionDisplay:
        """Draw on ``ax`` (default: a new figure); sets :attr:`ax_` and :attr:`figure_`.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        legend_pt : int
            Font size of the tick labels and notes.

        Returns
        -------
        ReconstructionDisplay
            ``self``.
        """
        fig, ax = _axes(ax, (6.4, 3.8))
        mse = self.mse
        labels, values, applicable = ["attacker MSE"], [mse], [True]
        for key, v, ok in self.bounds:
            labels.append(RECONSTRUCTION_BOUND_LABELS[key] + ("" if ok else "\n(not applicable)"))
            values.append(v)
            applicable.append(ok)
        ci = self.mse_ci
        has_ci = ci is not None and ci.size == 2
        log = all(v > 0 for v in values) and max(values) / min(values) > 10
        top = None
        if not log:
            top = 1.25 * max([v for v, ok in zip(values, applicable) if ok] + ([float(ci[1])] if has_ci else []))
        for j, (v, ok) in enumerate(zip(values, applicable)):
            shown = v if top is None else min(v, top)
            if ok:
                ax.bar(j, shown, color="tab:blue" if j == 0 else "tab:gray")
            else:
                ax.bar(j, shown, facecolor="none", edgecolor="grey", hatch="//")
                if top is not None and v > top:
                    ax.text(j, top, f"{fnum(v)} ↑", ha="center", va="top", fontsize=legend_pt - 1, color="grey")
        if has_ci:
            ax.errorbar([0], [mse], yerr=[[mse - ci[0]], [ci[1] - mse]], color="black", capsize=5)
        ax.set_xticks(range(len(values)), labels, rotation=20, ha="right", rotation_mode="anchor", fontsize=legend_pt)
        if log:
            ax.set_yscale("log")
        elif top is not None and top > 0:
            ax.set_ylim(0, top)
        ax.set(ylabel="mean squared error", title=title_lines("Reconstruction", self.label, width=60))
        ax.title.set_fontsize(10)
        if self.stamp:
            ax.text(0.98, 0.98, self.stamp, transform=ax.transAxes, ha="right", va="top", fontsize=legend_pt,
                    color="#8a5a00")
        self.ax_, self.figure_ = ax, fig
        return self


@dataclasses.dataclass
class ExactReconstructionDisplay:
    """Exact-reconstruction success (with its interval) against the ReRo bound and the prior's baseline κ.

    Attributes
    ----------
    success : float
        The attacker's success rate.
    success_ci : ndarray or None
        Its interval (low, high).
    bound : float
        The ReRo bound.
    kappa : float or None
        The prior's baseline success (the best guess without the release).
    ax_, figure_ : matplotlib Axes and Figure
        Set by :meth:`plot`.
    """

    success: float
    success_ci: np.ndarray | None
    bound: float
    kappa: float | None
    ax_: Any = dataclasses.field(default=None, init=False, repr=False)
    figure_: Any = dataclasses.field(default=None, init=False, repr=False)

    @classmethod
    def from_result(cls, result: Any) -> ExactReconstructionDisplay | None:
        """The display of a reconstruction audit's exact-reconstruction part (None when it has none).

        Parameters
        ----------
        result : ReconstructionAudit
            The audit (its ``rero``, under a finite prior).

        Returns
        -------
        ExactReconstructionDisplay or None
        """
        rero = result.rero
        if rero is None or num(rero.success) is None or num(rero.bound) is None:
            return None
        return cls(num(rero.success), arr(rero.success_ci), num(rero.bound), num(rero.kappa))

    def plot(self, ax: Axes | None = None, *, legend_pt: int = LEGEND_PT) -> ExactReconstructionDisplay:
        """Draw on ``ax`` (default: a new figure); sets :attr:`ax_` and :attr:`figure_`.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        legend_pt : int
            Font size of the legend.

        Returns
        -------
        ExactReconstructionDisplay
            ``self``.
        """
        fig, ax = _axes(ax, (4.6, 3.6))
        succ, bound = self.success, self.bound
        ax.bar([0, 1], [succ, bound], color=["tab:blue", "tab:gray"])
        ci = self.success_ci
        if ci is not None and ci.size == 2:
            ax.errorbar([0], [succ], yerr=[[succ - ci[0]], [ci[1] - succ]], color="black", capsize=5)
        if self.kappa is not None:
            ax.axhline(self.kappa, color="grey", ls=":", lw=1, label="baseline κ (prior guess)")
            ax.legend(fontsize=legend_pt)
        ax.set_xticks([0, 1], ["attack success", "ReRo bound"])
        ax.set(ylim=(0, 1.05), ylabel="P(exact reconstruction)", title="Exact reconstruction (discrete prior)")
        self.ax_, self.figure_ = ax, fig
        return self


__all__ = ["BiasDisplay", "ExactReconstructionDisplay", "ReconstructionDisplay", "RocDisplay", "TradeoffDisplay",
           "band_of", "certifying_point", "empirical_curve_points"]
