"""Kinds ``dpsgd-methods``, ``dpsgd-multirun`` and ``dpsgd-learners``: the DP-SGD audits of :mod:`privaudit.audit.dpsgd`.

``dpsgd-methods``
    :func:`~privaudit.audit.dpsgd.methods.audit_dpsgd_methods` (our engine or Opacus, full batch,
    Dirac gradient canaries): the per-step composed estimate (assumption-labelled), Clopper–Pearson
    over runs, and the one-run analyses (Steinke et al., f-DP with the (ε, δ) and GDP curves,
    Gaussian), each with its runs, wall time and assumption.
``dpsgd-multirun``
    :func:`~privaudit.audit.dpsgd.methods.audit_dpsgd_multirun`: black-box final-model audits (our
    engine, runs vectorised; Opacus, one model per run) and the normalisation audits (Opacus
    ``make_private``'s divisor; the numpy reproduction of the sum / expected / actual batch-size
    conventions).
``dpsgd-learners``
    :func:`~privaudit.audit.dpsgd.learner_methods.audit_dpsgd_learner`: Cond-DP (label DP), Opacus
    (hooks, ghost clipping, functorch; full batch, Poisson or shuffled batches), FedAvg DP-SGD,
    seed 000's modulated transcript and IWP's record release, each with the methods that apply to it.

Three kinds, not one with a mode: each takes its own keys (a library and Clopper–Pearson runs; an
audit and a number of runs; a learner, its sampling and gradient engine), so a configuration is
validated key by key and ``privaudit list kinds`` documents each. What they share is written once:
one result (:class:`~privaudit.audit.dpsgd.methods.DPSGDMethodsAudit`, rendered by the
``dpsgd-methods`` kind: headline, figure, ε-table row), one way to run (:func:`run_audit`), the
one-run key and its rule (``one_run_canaries`` ≤ ``canaries``, checked by the engines' own
:func:`~privaudit.audit.dpsgd.methods.one_run_count`), and each kind's ``check`` is its engine's
option rules, raised as configuration errors naming the entry (:func:`config_check`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from privaudit.mechanisms.validation import InvalidParameterError

from privaudit.audit.display.formatting import fnum
from privaudit.audit.dpsgd.learner_methods import (
    LEARNERS,
    SAMPLINGS,
    audit_dpsgd_learner,
    check_learner_options,
)
from privaudit.audit.dpsgd.methods import (
    LIBRARIES,
    MULTIRUN_AUDITS,
    MULTIRUN_LIBRARIES,
    DPSGDMethodsAudit,
    audit_dpsgd_methods,
    audit_dpsgd_multirun,
    check_methods_options,
    check_multirun_options,
    one_run_count,
)
from privaudit.audit.kinds.base import CONFIDENCE, EXPECT_PRIVATE, AuditKind
from privaudit.audit.results import AuditEntry, apply_expectation
from privaudit.audit.schema.fields import ConfigValueError, Field
from privaudit.audit.verdicts import outcome_label

#: The key of the one-run methods, the same in every kind that runs them.
ONE_RUN_CANARIES = Field("int", None, low=20, high=100_000,
                         doc="canaries of the first run read by the one-run methods (default: all)")

METHODS_FIELDS = {
    "library": Field("str", "engine", choices=LIBRARIES,
                     doc="our DP-SGD engine (label DP) or Opacus (hooks, add/remove)"),
    "epsilon": Field("float", 2.0, low=0.0, closed="neither", doc="target ε of the calibration"),
    "delta": Field("float", 1e-5, low=0.0, high=1.0, closed="neither", doc="target δ of the calibration"),
    "epochs": Field("int", 10, low=1, high=10_000, doc="full-batch steps T"),
    "canaries": Field("int", 1000, low=20, high=100_000, doc="Dirac canaries per run"),
    "whitebox_runs": Field("int", 2, low=1, high=1000, doc="runs pooled by the per-step composed estimate"),
    "cp_runs": Field("int", 2000, low=0, high=10**6,
                     doc="independent runs of the Clopper–Pearson method (engine only; 0 skips it)"),
    "one_run_canaries": ONE_RUN_CANARIES,
    "noise_scale": Field("float", 1.0, low=0.0, closed="neither",
                         doc="train with the claim's noise multiplier times this (< 1: a broken target)"),
    "expect": EXPECT_PRIVATE,
    "confidence": CONFIDENCE,
}

MULTIRUN_FIELDS = {
    "audit": Field("str", "black-box", choices=MULTIRUN_AUDITS,
                   doc="black-box (final model of each run) or normalisation (averaged releases)"),
    "library": Field("str", "engine", choices=tuple(dict.fromkeys(sum(MULTIRUN_LIBRARIES.values(), ()))),
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

LEARNERS_FIELDS = {
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
    "one_run_canaries": ONE_RUN_CANARIES,
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


# --------------------------------------------------------------------------- checks and runs
def config_check(path: str, *rules: Callable[[], object]) -> None:
    """Apply an engine's option rules to an entry, raising their errors as configuration errors naming ``path``.

    Parameters
    ----------
    path : str
        Key path of the entry (``audits[0]``), named in errors.
    *rules : callable
        Each calls one of the engine's rules on the entry's values (raising InvalidParameterError).

    Raises
    ------
    ConfigValueError
        ``path: <the rule's message>``.
    """
    try:
        for rule in rules:
            rule()
    except InvalidParameterError as e:
        raise ConfigValueError(f"{path}: {e}") from None


def check_methods(path: str, params: dict) -> None:
    """Opacus trains one model per run: no Clopper–Pearson runs; the one-run canaries fit in a run.

    Parameters
    ----------
    path : str
        Key path of the entry (``audits[0]``), named in errors.
    params : dict
        The entry's parameters, each field already valid (checked at load, before any scaling).

    Raises
    ------
    ConfigValueError
        Naming ``path``, for Clopper–Pearson runs with Opacus or more one-run canaries than a run has.
    """
    config_check(path, lambda: check_methods_options(params["library"], params["cp_runs"]),
                 lambda: one_run_count(params["canaries"], params.get("one_run_canaries")))


def check_multirun(path: str, params: dict) -> None:
    """The library must suit the audit: engine/opacus for black-box, opacus/numpy for normalisation.

    Parameters
    ----------
    path : str
        Key path of the entry (``audits[0]``), named in errors.
    params : dict
        The entry's parameters, each field already valid.

    Raises
    ------
    ConfigValueError
        Naming ``path``, when ``library`` does not suit ``audit``.
    """
    config_check(path, lambda: check_multirun_options(params["audit"], params["library"]))


def check_learners(path: str, params: dict) -> None:
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
    config_check(path, lambda: check_learner_options(params["learner"], params["sampling"],
                                                     params["grad_sample_mode"], params["cp_runs"],
                                                     params["noise_scale"]),
                 lambda: one_run_count(params["canaries"], params.get("one_run_canaries")))


def run_audit(audit: Callable[..., DPSGDMethodsAudit], params: dict, rng: np.random.Generator) -> AuditEntry:
    """Run one DP-SGD entry: ``audit`` on the entry's keys, its verdict set by ``expect``.

    Parameters
    ----------
    audit : callable
        The engine (:func:`audit_dpsgd_methods`, :func:`audit_dpsgd_multirun`, :func:`audit_dpsgd_learner`).
    params : dict
        The entry's validated parameters, sample sizes scaled by ``samples``.
    rng : Generator
        The task's randomness (derived from the run's seed and the entry).

    Returns
    -------
    AuditEntry
    """
    kw = {k: v for k, v in params.items() if k != "expect"}
    return apply_expectation(audit(**kw, rng=rng), params["expect"], caught="violation")


def run_methods(params: dict, rng: np.random.Generator) -> AuditEntry:
    """Every method on one DP-SGD configuration (kind ``dpsgd-methods``).

    Parameters
    ----------
    params : dict
        The entry's validated parameters, sample sizes scaled by ``samples``.
    rng : Generator
        The task's randomness.

    Returns
    -------
    AuditEntry
        Every method's ε̲ side by side.
    """
    return run_audit(audit_dpsgd_methods, params, rng)


def run_multirun(params: dict, rng: np.random.Generator) -> AuditEntry:
    """One multi-run DP-SGD audit (kind ``dpsgd-multirun``).

    Parameters
    ----------
    params : dict
        The entry's validated parameters.
    rng : Generator
        The task's randomness.

    Returns
    -------
    AuditEntry
    """
    return run_audit(audit_dpsgd_multirun, params, rng)


def run_learners(params: dict, rng: np.random.Generator) -> AuditEntry:
    """Every applicable method on one learner (kind ``dpsgd-learners``).

    Parameters
    ----------
    params : dict
        The entry's validated parameters.
    rng : Generator
        The task's randomness.

    Returns
    -------
    AuditEntry
    """
    return run_audit(audit_dpsgd_learner, params, rng)


# --------------------------------------------------------------------------- rendering (every DPSGDMethodsAudit)
_SHORT = {"per-step composed (claim's PLD/GDP)": "per-step composed", "Clopper–Pearson over runs": "CP",
          "one run: Steinke et al.": "Steinke", "one run: f-DP, (ε, δ) curve": "f-DP (ε,δ)",
          "one run: f-DP, GDP curve": "f-DP GDP", "one run: Gaussian": "Gaussian"}


def headline(entry: AuditEntry) -> str:
    """``exact ε … | per-step composed* … (10 runs) | CP … (2000 runs) | Steinke … | …`` (* = assumption).

    Parameters
    ----------
    entry : AuditEntry
        An entry whose result is a :class:`DPSGDMethodsAudit`.

    Returns
    -------
    str
    """
    res: DPSGDMethodsAudit = entry.result
    parts = [f"claim ε = {fnum(res.claim.epsilon)}, exact {fnum(res.epsilon_exact)}"]
    for m in res.methods:
        runs = f"{m['runs']} run{'s' if m['runs'] != 1 else ''}"
        point = f", point estimate {fnum(m['epsilon_hat'])}" if m.get("epsilon_hat") is not None else ""
        # The star is read from the method's own flag: a bound that is certified for one learner (f-DP GDP on a
        # Gaussian curve) is only an estimate for another, and must be marked there.
        star = "" if m["certified"] else "*"
        parts.append(f"{_SHORT.get(m['method'], m['method'])}{star} {fnum(m['epsilon_lb'])} ({runs}{point}, "
                     f"{m['seconds']:.1f} s)")
    labelled = any(not m["certified"] for m in res.methods)
    return " | ".join(parts) + (" (* assumption-labelled)" if labelled else "")


def epsilon_row(entry: AuditEntry) -> list[str]:
    """Row of the ε table: the claim, the exact ε and the best certified ε̲.

    Parameters
    ----------
    entry : AuditEntry

    Returns
    -------
    list of str
    """
    res: DPSGDMethodsAudit = entry.result
    best = max((m for m in res.methods if m["certified"]), key=lambda m: m["epsilon_lb"])
    return [entry.label, fnum(res.claim.epsilon), fnum(res.claim.delta), fnum(res.epsilon_exact),
            fnum(res.epsilon_lb), f"best certified: {best['method']}", str(best["runs"]), "—", outcome_label(entry)]


def figures(entry: AuditEntry) -> list:
    """One bar chart: each method's ε̲ beside the exact ε and the claim (hatched: assumption-labelled).

    Parameters
    ----------
    entry : AuditEntry

    Returns
    -------
    list of (suffix, figure, caption)
    """
    import matplotlib.pyplot as plt

    res: DPSGDMethodsAudit = entry.result
    names = [_SHORT.get(m["method"], m["method"]) + ("" if m["certified"] else "*") for m in res.methods]
    fig, ax = plt.subplots(figsize=(6.4, 3.2))
    bars = ax.bar(range(len(names)), [m["epsilon_lb"] for m in res.methods], color="#4c78a8")
    for bar, m in zip(bars, res.methods, strict=True):
        if not m["certified"]:
            bar.set_hatch("//")
            bar.set_facecolor("#a0c0e0")
    ax.axhline(res.epsilon_exact, color="k", lw=1, label=f"exact ε = {res.epsilon_exact:.3g}")
    ax.axhline(res.claim.epsilon, color="#c03030", lw=1, ls="--", label=f"claimed ε = {res.claim.epsilon:.3g}")
    ax.set_xticks(range(len(names)), names, rotation=25, ha="right", fontsize=8)
    ax.set_ylabel("ε lower bound")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return [("methods", fig, f"{entry.label}: ε̲ of each method (hatched: under its stated assumption)")]


METHODS = AuditKind("dpsgd-methods", run_methods, METHODS_FIELDS, result=DPSGDMethodsAudit,
                    doc="DP-SGD (engine or Opacus): every audit method side by side, with runs, time and assumption",
                    target=lambda p: f"DP-SGD {p['library']}, target ε = {p['epsilon']:g}", check=check_methods,
                    headline=headline, figures=figures, table_rows={"epsilon": epsilon_row})
MULTIRUN = AuditKind("dpsgd-multirun", run_multirun, MULTIRUN_FIELDS, result=DPSGDMethodsAudit,
                     doc="DP-SGD over many runs (Clopper–Pearson): black-box final model, batch-size normalisation",
                     target=lambda p: f"DP-SGD {p['audit']} ({p['library']})", check=check_multirun)
LEARNER_METHODS = AuditKind("dpsgd-learners", run_learners, LEARNERS_FIELDS, result=DPSGDMethodsAudit,
                            doc="DP-SGD audit methods on Cond-DP, Opacus variants, FedAvg, the modulated transcript "
                                "and IWP",
                            target=lambda p: f"DP-SGD methods on {p['learner']}, target ε = {p['epsilon']:g}",
                            check=check_learners)
#: The module's main kind: ``dpsgd-methods``, the kind DPSGDMethodsAudit names, renders all three kinds' entries.
KIND = METHODS
KINDS = (METHODS, MULTIRUN, LEARNER_METHODS)
