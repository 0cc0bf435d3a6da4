"""Kind ``dpsgd-multirun``: DP-SGD audits over many independent runs, with Clopper–Pearson.

Runs :func:`privaudit.audit.engines.dpsgd_methods.audit_dpsgd_multirun`: black-box final-model
audits (our engine, runs vectorised; Opacus, one model per run) and the normalisation audits
(Opacus ``make_private``'s divisor; the numpy reproduction of the sum / expected / actual batch-size
conventions). The result is a :class:`~privaudit.audit.engines.dpsgd_methods.DPSGDMethodsAudit`,
rendered by the ``dpsgd-methods`` kind (headline, figure, ε-table row).
"""

from __future__ import annotations

import numpy as np

from privaudit.audit.engines.dpsgd_methods import MULTIRUN_AUDITS, DPSGDMethodsAudit, audit_dpsgd_multirun
from privaudit.audit.kinds.base import CONFIDENCE, EXPECT_PRIVATE, AuditKind
from privaudit.audit.results import AuditEntry, apply_expectation
from privaudit.audit.schema.fields import ConfigValueError, Field

FIELDS = {
    "audit": Field("str", "black-box", choices=MULTIRUN_AUDITS,
                   doc="black-box (final model of each run) or normalisation (averaged releases)"),
    "library": Field("str", "engine", choices=("engine", "opacus", "numpy"),
                     doc="engine or opacus (black-box); opacus or numpy (normalisation)"),
    "epsilon": Field("float", 2.0, low=0.0, closed="neither", doc="target ε of the calibration (black-box)"),
    "delta": Field("float", 1e-5, low=0.0, high=1.0, closed="neither", doc="δ of the claim and of the bounds"),
    "epochs": Field("int", 10, low=1, high=10_000, doc="full-batch steps T (black-box)"),
    "runs": Field("int", 20000, low=8, high=10**7, doc="independent runs over both hypotheses"),
    "noise_scale": Field("float", 1.0, low=0.0, closed="neither",
                         doc="black-box: train with the claim's noise multiplier times this (< 1: a broken target)"),
    "expect": EXPECT_PRIVATE,
    "confidence": CONFIDENCE,
}


def check(path: str, params: dict) -> None:
    """The library must suit the audit: engine/opacus for black-box, opacus/numpy for normalisation.

    Parameters
    ----------
    path : str
        Key path of the entry (``audits[0]``), named in errors.
    params : dict
        The entry's validated parameters (for ``run``, sample sizes scaled by ``samples``).

    Raises
    ------
    ConfigValueError
        Naming ``path``, when ``library`` does not suit ``audit``.
    """
    allowed = {"black-box": ("engine", "opacus"), "normalisation": ("opacus", "numpy")}[params["audit"]]
    if params["library"] not in allowed:
        raise ConfigValueError(f"{path}: library must be one of {allowed} for audit = {params['audit']!r}, "
                               f"got {params['library']!r}")


def run(params: dict, rng: np.random.Generator) -> AuditEntry:
    """One multi-run DP-SGD audit.

    Parameters
    ----------
    params : dict
        The entry's validated parameters (for ``run``, sample sizes scaled by ``samples``).
    rng : Generator
        The task's randomness (derived from the run's seed and the entry).

    Returns
    -------
    AuditEntry
        The audit (a DPSGDMethodsAudit), its verdict set by ``expect``.
    """
    kw = {k: v for k, v in params.items() if k != "expect"}
    return apply_expectation(audit_dpsgd_multirun(**kw, rng=rng), params["expect"], caught="violation")


KIND = AuditKind("dpsgd-multirun", run, FIELDS, result=DPSGDMethodsAudit,
                 doc="DP-SGD over many runs (Clopper–Pearson): black-box final model, batch-size normalisation",
                 target=lambda p: f"DP-SGD {p['audit']} ({p['library']})", check=check)
