"""Kind ``dpsgd-methods``: every DP-SGD audit method side by side on one configuration.

Runs :func:`privaudit.audit.engines.dpsgd_methods.audit_dpsgd_methods` (our engine or Opacus,
full batch, Dirac gradient canaries): the per-step composed estimate (assumption-labelled),
Clopper–Pearson over runs, and the one-run analyses (Steinke et al., f-DP with the (ε, δ) and GDP
curves, Gaussian), each with its runs, wall time and assumption.
"""

from __future__ import annotations

from privaudit.audit.display.formatting import fnum
from privaudit.audit.engines.dpsgd_methods import LIBRARIES, DPSGDMethodsAudit, audit_dpsgd_methods
from privaudit.audit.kinds.base import CONFIDENCE, EXPECT_PRIVATE, AuditKind
from privaudit.audit.results import AuditEntry, apply_expectation
from privaudit.audit.schema.fields import ConfigValueError, Field
from privaudit.audit.verdicts import outcome_label

FIELDS = {
    "library": Field("str", "engine", choices=LIBRARIES,
                     doc="our DP-SGD engine (label DP) or Opacus (hooks, add/remove)"),
    "epsilon": Field("float", 2.0, low=0.0, closed="neither", doc="target ε of the calibration"),
    "delta": Field("float", 1e-5, low=0.0, high=1.0, closed="neither", doc="target δ of the calibration"),
    "epochs": Field("int", 10, low=1, high=10_000, doc="full-batch steps T"),
    "canaries": Field("int", 1000, low=20, high=100_000, doc="Dirac canaries per run"),
    "whitebox_runs": Field("int", 2, low=1, high=1000, doc="runs pooled by the per-step composed estimate"),
    "cp_runs": Field("int", 2000, low=0, high=10**6,
                     doc="independent runs of the Clopper–Pearson method (engine only; 0 skips it)"),
    "one_run_canaries": Field("int", None, low=20, high=100_000,
                              doc="canaries of the first run read by the one-run methods (default: all)"),
    "noise_scale": Field("float", 1.0, low=0.0, closed="neither",
                         doc="train with the claim's noise multiplier times this (< 1: a broken target)"),
    "expect": EXPECT_PRIVATE,
    "confidence": CONFIDENCE,
}


def check(path: str, params: dict) -> None:
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
    if params["library"] == "opacus" and params["cp_runs"]:
        raise ConfigValueError(f"{path}: cp_runs must be 0 for library = \"opacus\", got {params['cp_runs']}")
    m1 = params.get("one_run_canaries")
    if m1 is not None and m1 > params["canaries"]:
        raise ConfigValueError(f"{path}: one_run_canaries ({m1}) must be <= canaries ({params['canaries']})")


def run(params: dict, rng: np.random.Generator) -> AuditEntry:
    """Every method on one DP-SGD configuration.

    Parameters
    ----------
    params : dict
        The entry's validated parameters, sample sizes scaled by ``samples``.
    rng : Generator
        The task's randomness (derived from the run's seed and the entry).

    Returns
    -------
    AuditEntry
        Every method's ε̲ side by side.
    """
    kw = {k: v for k, v in params.items() if k != "expect"}
    return apply_expectation(audit_dpsgd_methods(**kw, rng=rng), params["expect"], caught="violation")


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


KIND = AuditKind("dpsgd-methods", run, FIELDS, result=DPSGDMethodsAudit,
                 doc="DP-SGD (engine or Opacus): every audit method side by side, with runs, time and assumption",
                 target=lambda p: f"DP-SGD {p['library']}, target ε = {p['epsilon']:g}", check=check,
                 headline=headline, figures=figures, table_rows={"epsilon": epsilon_row})
