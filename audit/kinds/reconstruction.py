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
from privaudit.audit.display.formatting import fnum, num
from privaudit.audit.display.displays import (RECONSTRUCTION_BOUND_KEYS, RECONSTRUCTION_BOUND_LABELS,
                                              ExactReconstructionDisplay, ReconstructionDisplay)
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


#: Bound fields of a reconstruction audit, in display order, with labels (the display's).
BOUND_KEYS = RECONSTRUCTION_BOUND_KEYS
BOUND_LABELS = RECONSTRUCTION_BOUND_LABELS


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
    """Bar chart: the attacker's MSE (with CI) against each bound carried by the result; ReRo under a finite prior.

    Drawn with :class:`~privaudit.audit.display.displays.ReconstructionDisplay` and
    :class:`~privaudit.audit.display.displays.ExactReconstructionDisplay`; the note that no bound
    applies (the entry is inconclusive) is decided here (:func:`applied_bounds`).

    Parameters
    ----------
    entry : AuditEntry
        An entry whose result is a :class:`ReconstructionAudit`.

    Returns
    -------
    list of (suffix, matplotlib figure, caption)
    """
    res: ReconstructionAudit = entry.result
    stamp = "" if applied_bounds(res) else "no bound applies to this attacker:\ninconclusive"
    display = ReconstructionDisplay.from_result(res, label=entry.label, stamp=stamp)
    if display is None:
        return []
    fig = display.plot(legend_pt=LEGEND_PT).figure_
    out = []
    exact = ExactReconstructionDisplay.from_result(res)
    if exact is not None:
        out.append(("rero", exact.plot(legend_pt=LEGEND_PT).figure_,
                    "Exact-reconstruction success of the attacker against the ReRo bound"))
    return out + [("mse", fig, "Reconstruction MSE of the attacker (with its CI) against each bound; a bound applies only "
                         "to the attackers it covers (e.g. the CRB to unbiased ones)")]


KIND = AuditKind("reconstruction", run, FIELDS, result=ReconstructionAudit, doc=run.__doc__.split("\n")[0],
                 target=_target, headline=headline, figures=reconstruction_figures)
