"""Kind ``reconstruction``: a reconstruction attacker's MSE against Cramér–Rao, HCR, van Trees and ReRo bounds.

Runs :func:`~privaudit.audit.engines.reconstruction.audit_reconstruction` on a mechanism
(or ``rounds`` independent releases of it), with an optional prior table
(registered priors: ``gaussian``, ``discrete``). Report: the MSE with its interval
against each bound the entry carries, and the exact-reconstruction success against
the ReRo bound for a discrete prior.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from privaudit.audit.schema.components import MECHANISMS, PRIORS, registered_attackers
from privaudit.audit.schema.fields import Field
from privaudit.audit.display.formatting import fnum, num, title_lines
from privaudit.audit.display.plotting import arr, new_figure
from privaudit.audit.engines.reconstruction import ReconstructionAudit, audit_reconstruction
from privaudit.audit.results import AuditEntry
from privaudit.audit.verdicts import Verdict
from privaudit.audit.kinds.base import CONFIDENCE, LEGEND_PT, MECHANISM, AuditKind, mechanism_target

FIELDS = {
    "mechanism": MECHANISM,
    "rounds": Field("int", 1, low=1, high=100_000, doc="releases per client (T rounds of the iterative protocol)"),
    "attacker": Field("str", None, validate=registered_attackers("reconstruction"),
                      doc="registered reconstruction attacker (default: strongest applicable)"),
    "x": Field("array", None, doc="the client's input (default: (1,...,1)/sqrt(d) without a prior)"),
    "prior": Field("table", None, validate=PRIORS.field_validator(), doc="prior table {name = 'gaussian', mean, cov}"),
    "n": Field("int", 10_000, low=10, samples=True, doc="audited releases"),
    "phase": Field("str", "known", choices=("known", "hidden"), doc="modulation phases revealed or not"),
    "beta": Field("array", None, doc="public response weights (y = x'beta + noise)"),
    "sigma_y": Field("float", None, low=0.0, closed="neither", doc="noise std of the public response"),
    "confidence": CONFIDENCE,
}


def run(params: dict, rng: np.random.Generator) -> ReconstructionAudit:
    """Reconstruction attacker's MSE against Cramér–Rao / van Trees bounds (audit_reconstruction).

    Parameters
    ----------
    params : dict
        The entry's validated parameters, sample sizes scaled by ``samples``.
    rng : Generator
        The task's randomness (derived from the run's seed and the entry).

    Returns
    -------
    ReconstructionAudit
    """
    mech = MECHANISMS.build(params["mechanism"], "mechanism")
    target = [mech] * params["rounds"] if params["rounds"] > 1 else mech
    prior = PRIORS.build(params["prior"], "prior") if params["prior"] is not None else None
    arrays = {k: (None if params[k] is None else np.asarray(params[k])) for k in ("x", "beta")}
    return judge(audit_reconstruction(
        target, params["attacker"], arrays["x"], prior, n=params["n"], rng=rng, phase=params["phase"],
        beta=arrays["beta"], sigma_y=params["sigma_y"], confidence=params["confidence"],
    ))


def applied_bounds(result: ReconstructionAudit) -> list[str]:
    """Bounds the attacker's error was actually held against: applicable, finite (``"rero"`` included).

    Parameters
    ----------
    result : ReconstructionAudit

    Returns
    -------
    list of str
        Names among :data:`BOUND_KEYS`, then ``"rero"`` when an exact-reconstruction bound was computed.
    """
    applies = result.comparison.applies
    out = []
    for k in BOUND_KEYS:
        v = num(getattr(result.bounds, k))
        if v is not None and math.isfinite(v) and applies.get(k, False):
            out.append(k)
    if result.rero is not None and num(result.rero.bound) is not None:
        out.append("rero")
    return out


def judge(result: ReconstructionAudit) -> ReconstructionAudit:
    """``"inconclusive"`` instead of ``"pass"`` when no bound applied to the attacker (nothing was tested).

    A reconstruction audit passes only when the attacker's error was compared with a bound
    that holds for it (van Trees for every attacker, the CRB/HCR for unbiased ones, ReRo for
    exact reconstruction); a biased attacker without a prior has none, so its MSE says
    nothing about the claim.

    Parameters
    ----------
    result : ReconstructionAudit

    Returns
    -------
    ReconstructionAudit
        ``result`` itself, or a copy with verdict ``inconclusive`` and a note saying why.
    """
    if not isinstance(result, ReconstructionAudit):
        return result
    if result.verdict != Verdict.PASS or applied_bounds(result):
        return result
    why = ("it is not unbiased, so the Cramér–Rao-type bounds do not hold for it, and without a prior there is no "
           "van Trees bound" if not result.attacker_unbiased else "no bound could be computed for this release")
    note = (f"inconclusive: no bound applies to attacker {result.attacker!r} ({why}); its MSE is reported for "
            "information, nothing was tested")
    return dataclasses.replace(result, verdict=Verdict.INCONCLUSIVE, notes=[*result.notes, note])


def _target(params: dict) -> str:
    return mechanism_target(params) + (f" x{params['rounds']} rounds" if params["rounds"] > 1 else "")


#: Bound fields of a reconstruction audit, in display order, with labels.
BOUND_KEYS = ("crb", "crb_phase_conditional", "seed_bound", "hcr", "van_trees")
BOUND_LABELS = {"crb": "CRB tr(I⁻¹)", "crb_phase_conditional": "CRB, phase known", "seed_bound": "seed (18) d/tr(I)",
                "hcr": "HCR", "van_trees": "van Trees"}


def headline(entry: AuditEntry) -> str:
    """``MSE … [ci] ≥ van Trees …`` against the bounds that applied, or why none did.

    Parameters
    ----------
    entry : AuditEntry
        An entry whose result is a :class:`ReconstructionAudit`.

    Returns
    -------
    str
    """
    res: ReconstructionAudit = entry.result
    applied = [k for k in applied_bounds(res) if k != "rero"]
    parts = [f"MSE {fnum(res.error.mse)} {fnum(res.error.mse_ci)}"]
    rero = res.rero
    if rero is not None and num(rero.success) is not None:
        parts = [f"exact reconstruction {fnum(rero.success)} {fnum(rero.success_ci)} vs ReRo bound "
                 f"{fnum(rero.bound)}"]
    if applied:
        parts.append("vs " + ", ".join(f"{BOUND_LABELS[k]} {fnum(getattr(res.bounds, k))}" for k in applied))
    elif not (rero is not None and num(rero.bound) is not None):
        parts.append(f"no bound applies to attacker {res.attacker!r}")
    return "; ".join(parts)


def reconstruction_figures(entry: AuditEntry) -> list[tuple[str, Any, str]]:
    """Bar chart: the attacker's MSE (with CI) against each bound carried by the result.

    Parameters
    ----------
    entry : AuditEntry
        An entry whose result is a :class:`ReconstructionAudit`.

    Returns
    -------
    list of (suffix, matplotlib figure, caption)
    """
    res: ReconstructionAudit = entry.result
    mse = num(res.error.mse)
    if mse is None:
        return []
    labels, values, applicable = ["attacker MSE"], [mse], [True]
    applies = res.comparison.applies
    for k in BOUND_KEYS:
        v = num(getattr(res.bounds, k))
        if v is not None and math.isfinite(v):
            ok = applies.get(k, True)
            labels.append(BOUND_LABELS[k] + ("" if ok else "\n(not applicable)"))
            values.append(v)
            applicable.append(ok)
    fig, ax = new_figure(size=(6.4, 3.8))
    ax = ax[0, 0]
    ci = arr(res.error.mse_ci)
    has_ci = ci is not None and ci.size == 2
    # Over a decade apart the bars are compared on a log axis; on a linear one the axis is scaled to the
    # attacker and the bounds that apply, and a bound that does not apply (hatched, unfilled) is cut at
    # the top with its value written, instead of towering over the bar it says nothing about.
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
                ax.text(j, top, f"{fnum(v)} ↑", ha="center", va="top", fontsize=LEGEND_PT - 1, color="grey")
    if has_ci:
        ax.errorbar([0], [mse], yerr=[[mse - ci[0]], [ci[1] - mse]], color="black", capsize=5)
    ax.set_xticks(range(len(values)), labels, rotation=20, ha="right", rotation_mode="anchor", fontsize=LEGEND_PT)
    if log:
        ax.set_yscale("log")
    elif top is not None and top > 0:
        ax.set_ylim(0, top)
    ax.set(ylabel="mean squared error", title=title_lines("Reconstruction", entry.label, width=60))
    ax.title.set_fontsize(10)
    if not applied_bounds(res):
        ax.text(0.98, 0.98, "no bound applies to this attacker:\ninconclusive", transform=ax.transAxes,
                ha="right", va="top", fontsize=LEGEND_PT, color="#8a5a00")
    out = []
    rero = res.rero
    if rero is not None and num(rero.success) is not None and num(rero.bound) is not None:
        fig2, ax2 = new_figure(size=(4.6, 3.6))
        ax2 = ax2[0, 0]
        succ, bound = num(rero.success), num(rero.bound)
        ax2.bar([0, 1], [succ, bound], color=["tab:blue", "tab:gray"])
        ci = arr(rero.success_ci)
        if ci is not None and ci.size == 2:
            ax2.errorbar([0], [succ], yerr=[[succ - ci[0]], [ci[1] - succ]], color="black", capsize=5)
        if num(rero.kappa) is not None:
            ax2.axhline(num(rero.kappa), color="grey", ls=":", lw=1, label="baseline κ (prior guess)")
            ax2.legend(fontsize=LEGEND_PT)
        ax2.set_xticks([0, 1], ["attack success", "ReRo bound"])
        ax2.set(ylim=(0, 1.05), ylabel="P(exact reconstruction)", title="Exact reconstruction (discrete prior)")
        out.append(("rero", fig2, "Exact-reconstruction success of the attacker against the ReRo bound"))
    return out + [("mse", fig, "Reconstruction MSE of the attacker (with its CI) against each bound; a bound applies only "
                         "to the attackers it covers (e.g. the CRB to unbiased ones)")]


KIND = AuditKind("reconstruction", run, FIELDS, result=ReconstructionAudit, doc=run.__doc__.split("\n")[0],
                 target=_target, headline=headline, figures=reconstruction_figures)
