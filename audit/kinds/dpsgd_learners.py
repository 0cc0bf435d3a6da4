"""Kind ``dpsgd-learners``: the DP-SGD audit methods applied to privaudit's learners and Opacus' variants.

Runs :func:`privaudit.audit.engines.learner_methods.audit_dpsgd_learner`: Cond-DP (label DP),
Opacus (hooks, ghost clipping, functorch; full batch, Poisson or shuffled batches), FedAvg DP-SGD,
seed 000's modulated transcript and IWP's record release, each with the methods that apply to it
(per-step composed estimate, one-run Steinke / f-DP / Gaussian, Clopper–Pearson over runs or clients).
The result is a :class:`~privaudit.audit.engines.dpsgd_methods.DPSGDMethodsAudit`, rendered by the
``dpsgd-methods`` kind (headline, figure, ε-table row).
"""

from __future__ import annotations

import numpy as np

from privaudit.mechanisms.validation import InvalidParameterError

from privaudit.audit.engines.dpsgd_methods import DPSGDMethodsAudit
from privaudit.audit.engines.learner_methods import (
    LEARNERS,
    SAMPLINGS,
    audit_dpsgd_learner,
    check_learner_options,
)
from privaudit.audit.kinds.base import CONFIDENCE, EXPECT_PRIVATE, AuditKind
from privaudit.audit.results import AuditEntry, apply_expectation
from privaudit.audit.schema.fields import ConfigValueError, Field

FIELDS = {
    "learner": Field("str", "conddp", choices=LEARNERS,
                     doc="conddp, opacus, fedavg, modulated (one client's transcript) or iwp (a record's release)"),
    "epsilon": Field("float", 2.0, low=0.0, closed="neither", doc="the learner's target ε (its claim)"),
    "delta": Field("float", 1e-5, low=0.0, high=1.0, closed="neither", doc="the learner's target δ"),
    "epochs": Field("int", 10, low=1, high=10_000,
                    doc="full-batch steps / rounds T (Opacus under sampling: epochs; IWP: unused)"),
    "canaries": Field("int", 500, low=20, high=100_000,
                      doc="canaries per run (local releases: clients of the one-run game)"),
    "whitebox_runs": Field("int", 10, low=1, high=1000, doc="runs pooled by the per-step composed estimate"),
    "cp_runs": Field("int", 0, low=0, high=10**7,
                     doc="FedAvg: fits of the black-box Clopper–Pearson row; local releases: clients (0 skips it)"),
    "one_run_canaries": Field("int", None, low=20, high=100_000,
                              doc="canaries of the first run read by the one-run methods (default: all)"),
    "grad_sample_mode": Field("str", "hooks", choices=("hooks", "functorch", "ghost"),
                              doc="Opacus' per-sample gradient engine (ghost: ghost clipping)"),
    "sampling": Field("str", "full", choices=SAMPLINGS,
                      doc="Opacus' batches: full, poisson (accounted) or shuffle (fixed-size, not accounted)"),
    "sample_rate": Field("float", 0.1, low=0.0, high=1.0, closed="neither", doc="q of Poisson / shuffled batches"),
    "noise_scale": Field("float", 1.0, low=0.0, closed="neither",
                         doc="train with the claim's noise times this (< 1: a broken learner)"),
    "expect": EXPECT_PRIVATE,
    "confidence": CONFIDENCE,
}


def check(path: str, params: dict) -> None:
    """The options must suit the learner; the one-run canaries must fit in a run.

    Parameters
    ----------
    path : str
        Key path of the entry (``audits[0]``), named in errors.
    params : dict
        The entry's parameters, each field already valid.

    Raises
    ------
    ConfigValueError
        Naming ``path``, for an option the learner does not take or too many one-run canaries.
    """
    try:
        check_learner_options(params["learner"], params["sampling"], params["grad_sample_mode"], params["cp_runs"],
                              params["noise_scale"])
    except InvalidParameterError as e:
        raise ConfigValueError(f"{path}: {e}") from None
    m1 = params.get("one_run_canaries")
    if m1 is not None and m1 > params["canaries"]:
        raise ConfigValueError(f"{path}: one_run_canaries ({m1}) must be <= canaries ({params['canaries']})")


def run(params: dict, rng: np.random.Generator) -> AuditEntry:
    """Every applicable method on one learner.

    Parameters
    ----------
    params : dict
        The entry's validated parameters.
    rng : Generator
        The task's randomness (derived from the run's seed and the entry).

    Returns
    -------
    AuditEntry
        The audit (a DPSGDMethodsAudit), its verdict set by ``expect``.
    """
    kw = {k: v for k, v in params.items() if k != "expect"}
    return apply_expectation(audit_dpsgd_learner(**kw, rng=rng), params["expect"], caught="violation")


KIND = AuditKind("dpsgd-learners", run, FIELDS, result=DPSGDMethodsAudit,
                 doc="DP-SGD audit methods on Cond-DP, Opacus variants, FedAvg, the modulated transcript and IWP",
                 target=lambda p: f"DP-SGD methods on {p['learner']}, target ε = {p['epsilon']:g}", check=check)
