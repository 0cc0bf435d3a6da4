"""Kind ``opacus``: Opacus' own ε beside privaudit's certified ε̲ for the same DP-SGD configuration.

Runs :func:`privaudit.audit.dpsgd.opacus.audit_opacus`; Opacus itself is imported only
when a task runs.
"""

from __future__ import annotations

from privaudit.audit.schema.fields import Field
from privaudit.audit.display.formatting import fnum
from privaudit.audit.dpsgd.opacus import GRAD_SAMPLE_MODES, OpacusAudit, audit_opacus
from privaudit.audit.results import AuditEntry, apply_expectation
from privaudit.audit.verdicts import outcome_label
from privaudit.audit.kinds.base import CONFIDENCE, EXPECT_PRIVATE, AuditKind

FIELDS = {
    "epsilon": Field("float", 2.0, low=0.0, closed="neither", doc="target ε handed to Opacus' calibration"),
    "delta": Field("float", 1e-5, low=0.0, high=1.0, closed="neither", doc="target δ handed to Opacus' calibration"),
    "epochs": Field("int", 10, low=1, high=10_000, doc="training epochs of each run"),
    "sample_rate": Field("float", 1.0, low=0.0, high=1.0, closed="right", doc="1 = full batch; else Poisson"),
    "grad_sample_mode": Field("str", "hooks", choices=GRAD_SAMPLE_MODES, doc="how Opacus computes per-sample gradients"),
    "accountant": Field("str", "rdp", choices=("rdp", "prv", "gdp"), doc="Opacus accountant used to calibrate the noise"),
    "m": Field("int", 1000, low=10, high=10**6, samples=True, doc="canaries of the one-run views"),
    "n_runs": Field("int", 500, low=200, high=10**6, samples=True,
                    doc="runs per hypothesis of the trade-off view (the trade-off audit needs >= 200)"),
    "views": Field("str", "both", choices=("both", "one-run", "tradeoff"),
                   doc="which views to run: one-run (m canaries, one run), tradeoff (n_runs runs), or both"),
    "noise_multiplier": Field("float", None, low=0.0, closed="neither",
                              doc="train with this z instead (a deliberately misconfigured target)"),
    "expect": EXPECT_PRIVATE,
    "confidence": CONFIDENCE,
}


def run(params: dict, rng: np.random.Generator) -> AuditEntry:
    """Opacus DP-SGD: Opacus' ε beside privaudit's ε̲ (one-run and/or trade-off views).

    Parameters
    ----------
    params : dict
        The entry's validated parameters, sample sizes scaled by ``samples``.
    rng : Generator
        The task's randomness (derived from the run's seed and the entry).

    Returns
    -------
    AuditEntry
    """
    kw = {k: v for k, v in params.items() if k not in ("expect", "views")}
    if params["views"] == "one-run":
        kw["n_runs"] = 0
    elif params["views"] == "tradeoff":
        kw["m"] = 0
    return apply_expectation(audit_opacus(**kw, rng=rng), params["expect"], caught="violation")


def headline(entry: AuditEntry) -> str:
    """``Opacus ε = … vs certified ε_lb = … (exact …)``.

    Parameters
    ----------
    entry : AuditEntry
        An entry whose result is an :class:`OpacusAudit`.

    Returns
    -------
    str
    """
    res: OpacusAudit = entry.result
    return (f"Opacus ε = {fnum(res.opacus_epsilon)} vs certified ε_lb = {fnum(res.epsilon_lb)} "
            f"(exact {fnum(res.epsilon_exact)})")


def epsilon_row(entry: AuditEntry) -> list[str]:
    """Row of the ε table: Opacus' claimed ε, the exact ε, and the best ε̲ over the audited views.

    Parameters
    ----------
    entry : AuditEntry
        An entry whose result is an :class:`OpacusAudit`.

    Returns
    -------
    list of str
    """
    res: OpacusAudit = entry.result
    views = [v for v in res.views or () if isinstance(v, dict)]
    methods = ", ".join(dict.fromkeys(str(v.get("method", "?")) for v in views)) or "?"
    return [entry.label, fnum(res.claim.epsilon), fnum(res.claim.delta), fnum(res.epsilon_exact),
            fnum(res.epsilon_lb), f"best of {len(views)} view{'s' if len(views) != 1 else ''} ({methods}); "
            f"accountant {res.accountant}", "—", "—", outcome_label(entry)]


KIND = AuditKind("opacus", run, FIELDS, result=OpacusAudit, doc="Opacus DP-SGD: Opacus' ε beside privaudit's ε̲",
                 target=lambda p: f"Opacus DP-SGD ({p['grad_sample_mode']}, q={p['sample_rate']:g})",
                 headline=headline, table_rows={"epsilon": epsilon_row})
