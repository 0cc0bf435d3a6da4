"""One DP-SGD configuration, every audit method side by side: ε̲, runs, time and assumption.

For a library (our engine under label DP, or Opacus under add/remove) and a target ε, with
Dirac gradient canaries (:mod:`privaudit.audit.dpsgd.whitebox`):

``per-step composed``
    ``whitebox_runs`` runs of ``canaries`` canaries; per-step observations composed under the
    claim's accounting (assumption: Gaussian steps). Not certified.
``Clopper–Pearson over runs``
    ``cp_runs`` independent engine runs with one canary each (our engine only: it trains them
    at once). Certified.
``one run: Steinke / f-DP (ε, δ) / f-DP GDP / Gaussian``
    The first run's canaries (:func:`~privaudit.audit.engines.one_run.one_run_table`), one k
    planned from the claim for every method (:func:`~privaudit.audit.engines.one_run.planned_k`),
    so all read the same guesses. The first three certified (f-DP GDP certifies "not μ̲-GDP",
    reported as that curve's ε); the Gaussian estimate is not. The f-DP rows reject whatever
    Steinke et al.'s rejects: Steinke ≤ f-DP (ε, δ) ≤ f-DP GDP on every run.

The certified bounds are computed at confidence 1 − (1 − c)/K, K the certified tests that can fail
independently: f-DP (ε, δ), f-DP GDP and Clopper–Pearson when run (Steinke et al.'s row is
implied by f-DP (ε, δ): whenever it is wrong, so is the larger f-DP ε̲). The best of them,
``epsilon_lb``, holds at c; the verdict is "violation" iff it exceeds the claim.

:func:`audit_dpsgd_multirun` gives the multi-run audits (black-box final model, batch-size
normalisation) as the same result. What every DP-SGD audit shares is here, once: the result
(:class:`DPSGDMethodsAudit`, :func:`methods_result`), the rows that recur (:func:`per_step_row`,
:func:`one_run_rows`) and the rules of their options (:func:`one_run_count`: the one-run methods
read at most a run's canaries; :func:`check_methods_options`, :func:`check_multirun_options`), which
the kinds of :mod:`privaudit.audit.kinds.dpsgd` call to validate a configuration.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from privaudit.mechanisms.accounting import dpsgd_epsilon
from privaudit.mechanisms.claim import PrivacyClaim
from privaudit.mechanisms.randomness import RandomLike, resolve_seed, uint32_seed
from privaudit.mechanisms.validation import InvalidParameterError, check_int, check_positive

from privaudit.audit.dpsgd.whitebox import (
    CanarySteps,
    concatenate,
    engine_canary_runs,
    engine_canary_steps,
    opacus_canary_runs,
    opacus_canary_steps,
    random_signs,
    whitebox_estimate,
)
from privaudit.audit.engines.one_run import one_run_table, planned_k
from privaudit.audit.results import AuditResult
from privaudit.audit.verdicts import Verdict

LIBRARIES = ("engine", "opacus")
#: The multi-run audits and the libraries each takes.
MULTIRUN_LIBRARIES = {"black-box": ("engine", "opacus"), "normalisation": ("opacus", "numpy")}
MULTIRUN_AUDITS = tuple(MULTIRUN_LIBRARIES)
#: Row names of the one-run methods (as the dpsgd-methods kind shows them).
ONE_RUN_NAMES = {"steinke": "one run: Steinke et al.", "fdp-approx-dp": "one run: f-DP, (ε, δ) curve",
                 "fdp-gdp": "one run: f-DP, GDP curve", "gaussian": "one run: Gaussian"}
#: Assumption of the f-DP GDP row where the target's trade-off curve is not Gaussian (IWP, Poisson, shuffling).
NOT_GAUSSIAN = ("certifies 'not μ̲-GDP' only; its ε is an ε lower bound if the trade-off curve is Gaussian, which "
                "this target's is not (sampling or randomized response): reported, not counted as certified")


@dataclasses.dataclass(frozen=True)
class DPSGDMethodsAudit(AuditResult):
    """Every audit method on one DP-SGD configuration (``kind = "dpsgd-methods"``).

    Attributes
    ----------
    library : {"engine", "opacus"}
    claim : PrivacyClaim
        Our engine's (exact, PLD) or Opacus' accountant's (ε, δ).
    epsilon_exact : float
        dp_accounting's PLD ε of the noise multiplier of the claim.
    epsilon_lb : float
        Best certified ε̲ over the methods (holds at ``confidence``).
    methods : tuple of dict
        Per method: ``method``, ``epsilon_lb``, ``certified``, ``assumption``, ``runs``,
        ``canaries``, ``seconds``, ``confidence``; the per-step composed row also ``epsilon_hat``,
        its point estimate.
    steps : int
    noise_scale : float
        Noise actually used / noise of the claim (1 for an honest target).
    confidence : float
    seed : int
    verdict : Verdict
    notes : tuple of str
    """

    kind: ClassVar[str] = "dpsgd-methods"
    library: str
    claim: PrivacyClaim
    epsilon_exact: float
    epsilon_lb: float
    methods: tuple
    steps: int
    noise_scale: float
    confidence: float
    seed: int
    verdict: Verdict
    notes: tuple = ()


# --------------------------------------------------------------------------- shared by every DP-SGD audit
def one_run_count(canaries: int, one_run_canaries: int | None) -> int:
    """How many canaries of a run the one-run methods read: the first ``one_run_canaries`` (default all).

    Parameters
    ----------
    canaries : int
        Canaries per run.
    one_run_canaries : int or None
        The canaries asked for (None: all of them).

    Returns
    -------
    int

    Raises
    ------
    InvalidParameterError
        When ``one_run_canaries`` is below 20 or above ``canaries``.
    """
    m1 = canaries if one_run_canaries is None else check_int("one_run_canaries", one_run_canaries, minimum=20)
    if m1 > canaries:
        raise InvalidParameterError(f"one_run_canaries ({m1}) must be <= canaries ({canaries})")
    return m1


def check_methods_options(library: str, cp_runs: int = 0) -> None:
    """Raise unless ``library`` is known and, for Opacus, no Clopper–Pearson runs are asked for.

    Parameters
    ----------
    library : str
        One of :data:`LIBRARIES`.
    cp_runs : int
        Independent runs of the Clopper–Pearson method (must be 0 for Opacus: one model per run, too slow).

    Raises
    ------
    InvalidParameterError
        Naming the offending option.
    """
    if library not in LIBRARIES:
        raise InvalidParameterError(f"library must be one of {LIBRARIES}, got library={library!r}")
    if library == "opacus" and cp_runs:
        raise InvalidParameterError(f"cp_runs must be 0 for library='opacus' (one Opacus model per run: too slow), "
                                    f"got cp_runs={cp_runs}")


def check_multirun_options(audit: str, library: str) -> None:
    """Raise unless ``audit`` is known and ``library`` suits it (:data:`MULTIRUN_LIBRARIES`).

    Parameters
    ----------
    audit : str
        One of :data:`MULTIRUN_AUDITS`.
    library : str
        engine or opacus (black-box), opacus or numpy (normalisation).

    Raises
    ------
    InvalidParameterError
        Naming the offending option.
    """
    if audit not in MULTIRUN_LIBRARIES:
        raise InvalidParameterError(f"audit must be one of {MULTIRUN_AUDITS}, got audit={audit!r}")
    allowed = MULTIRUN_LIBRARIES[audit]
    if library not in allowed:
        raise InvalidParameterError(f"library must be one of {allowed} for audit={audit!r}, got library={library!r}")


def per_step_row(runs: list[CanarySteps], confidence: float, rng: np.random.Generator) -> dict:
    """The per-step composed row (assumption-labelled) of the pooled runs' canary observations.

    Parameters
    ----------
    runs : list of CanarySteps
        The runs pooled by the estimate; their training time is counted in the row's.
    confidence : float
    rng : Generator
        The estimate's randomness (its bootstrap under Poisson steps).

    Returns
    -------
    dict
        The row of :attr:`DPSGDMethodsAudit.methods`, with ``epsilon_hat``, the point estimate.
    """
    t0 = time.perf_counter()
    est = whitebox_estimate(concatenate(runs), confidence=confidence, rng=rng)
    return dict(method="per-step composed (claim's PLD/GDP)", epsilon_lb=est.epsilon, certified=False,
                assumption=est.assumption, runs=len(runs), canaries=sum(r.signs.size for r in runs),
                seconds=sum(r.seconds for r in runs) + time.perf_counter() - t0, confidence=confidence,
                epsilon_hat=est.epsilon_hat)


def one_run_rows(scores: np.ndarray, signs: np.ndarray, claim: PrivacyClaim, *, c_each: float, confidence: float,
                 seconds: float, gaussian_curve: bool = True) -> tuple[list[dict], int]:
    """The one-run rows of one run's canary scores, one k (guesses per side) planned from the claim for every method.

    Parameters
    ----------
    scores, signs : ndarray
        One score and one sign (±1, drawn before training) per canary read.
    claim : PrivacyClaim
        Plans k and gives the δ of the bounds.
    c_each : float
        Confidence of each certified row (Bonferroni inside the entry).
    confidence : float
        Confidence of the rows that are not certified.
    seconds : float
        Time of the run, counted in each row's.
    gaussian_curve : bool
        Whether the target's trade-off curve is Gaussian; if not, the f-DP GDP row is reported
        assumption-labelled (:data:`NOT_GAUSSIAN`), not certified.

    Returns
    -------
    rows : list of dict
        Rows of :attr:`DPSGDMethodsAudit.methods`.
    k : int
        The planned guesses per side.
    """
    t0 = time.perf_counter()
    plan = planned_k(scores.size, claim.epsilon, claim.delta, confidence=c_each)
    table = one_run_table(scores, signs, delta=claim.delta, confidence=c_each, k=plan)
    shared = seconds + time.perf_counter() - t0
    rows = [dict(method=ONE_RUN_NAMES[r["method"]], epsilon_lb=r["epsilon_lb"], certified=r["certified"],
                 assumption=r["assumption"], runs=1, canaries=scores.size, seconds=shared,
                 confidence=c_each if r["certified"] else confidence,
                 **({"epsilon_recursion": r["epsilon_recursion"]} if "epsilon_recursion" in r else {}))
            for r in table]
    if not gaussian_curve:
        # "Not μ̲-GDP" bounds ε only for a Gaussian trade-off curve: here it is a label, not a certificate.
        for r in rows:
            if r["method"] == ONE_RUN_NAMES["fdp-gdp"]:
                r.update(certified=False, assumption=NOT_GAUSSIAN)
    return rows, plan


def methods_result(library: str, claim: PrivacyClaim, exact: float, methods: list[dict], steps: int,
                   noise_scale: float, confidence: float, seed: int, notes: Sequence[str]) -> DPSGDMethodsAudit:
    """The audit of the rows: ``epsilon_lb`` the best certified row's, "violation" iff it exceeds the claim.

    Parameters
    ----------
    library : str
    claim : PrivacyClaim
    exact : float
    methods : list of dict
        The rows, at least one certified.
    steps : int
    noise_scale : float
    confidence : float
    seed : int
    notes : sequence of str

    Returns
    -------
    DPSGDMethodsAudit
    """
    best = max(m["epsilon_lb"] for m in methods if m["certified"])
    verdict = Verdict.VIOLATION if best > claim.epsilon else Verdict.PASS
    return DPSGDMethodsAudit(library, claim, float(exact), best, tuple(methods), int(steps), noise_scale, confidence,
                             seed, verdict, tuple(notes))


def audit_dpsgd_methods(*, library: str = "engine", epsilon: float = 2.0, delta: float = 1e-5, epochs: int = 10,
                        canaries: int = 1000, whitebox_runs: int = 2, cp_runs: int = 2000,
                        one_run_canaries: int | None = None, confidence: float = 0.95, noise_scale: float = 1.0,
                        rng: RandomLike = None) -> DPSGDMethodsAudit:
    """Run every method on one configuration (full-batch steps; see the module docstring).

    Parameters
    ----------
    library : {"engine", "opacus"}
        Our DP-SGD engine (label DP) or Opacus (hooks, add/remove).
    epsilon, delta : float
        Target of the calibration.
    epochs : int
        T full-batch steps.
    canaries : int
        Canaries per run.
    one_run_canaries : int, optional
        The one-run methods read the first this many canaries of the first run (default: all of
        them; the others, with independent bits, are then ordinary training data).
    whitebox_runs : int
        Runs pooled by the per-step composed estimate.
    cp_runs : int
        Independent runs of the Clopper–Pearson method (engine only; 0 skips it).
    confidence : float
    noise_scale : float
        Train with the claim's noise multiplier times this (< 1: a broken target).
    rng : int, Generator or None

    Returns
    -------
    DPSGDMethodsAudit
    """
    cp_runs = check_int("cp_runs", cp_runs, minimum=0)
    check_methods_options(library, cp_runs)
    if not 0.5 < confidence < 1.0:
        raise InvalidParameterError(f"confidence must lie in (0.5, 1), got confidence={confidence!r}")
    canaries, whitebox_runs = check_int("canaries", canaries, minimum=20), check_int("whitebox_runs", whitebox_runs)
    noise_scale = check_positive("noise_scale", noise_scale)
    m1 = one_run_count(canaries, one_run_canaries)
    ss, seed = resolve_seed(rng)
    kids = ss.spawn(whitebox_runs + 2)
    n_certified = 2 + (cp_runs > 0)
    c_each = 1 - (1 - confidence) / n_certified
    train = engine_canary_steps if library == "engine" else opacus_canary_steps
    runs = []
    for child in kids[:whitebox_runs]:
        sign_seed, train_seed = child.spawn(2)
        runs.append(train(random_signs(canaries, sign_seed), epsilon=epsilon, delta=delta, epochs=epochs,
                          noise_scale=noise_scale, rng=uint32_seed(train_seed)))
    first = runs[0]
    if library == "engine":
        from privaudit.learners.dpsgd import claim_for

        claim = claim_for(first.claim_noise_multiplier, first.steps.shape[0], delta, sampling_rate=1.0,
                          adjacency="label")
    else:
        from privaudit.mechanisms.external.opacus_canary import OpacusCanaryRuns

        claim = OpacusCanaryRuns(epsilon=epsilon, delta=delta, epochs=epochs).claim
    methods = [per_step_row(runs, confidence, np.random.default_rng(kids[-2]))]
    if cp_runs:
        cp = engine_canary_runs(cp_runs, epsilon=epsilon, delta=delta, epochs=epochs, noise_scale=noise_scale,
                                confidence=c_each, rng=uint32_seed(kids[-1]))
        methods.append(dict(method="Clopper–Pearson over runs", epsilon_lb=cp.epsilon, certified=True,
                            assumption="none", runs=cp_runs, canaries=cp_runs, seconds=cp.seconds,
                            confidence=c_each))
    rows, plan = one_run_rows(first.steps[:, :m1].sum(0), first.signs[:m1], claim, c_each=c_each,
                              confidence=confidence, seconds=first.seconds)
    methods += rows
    notes = (f"one-run guesses planned from the claim: k = {plan} per side ({2 * plan} of {m1} canaries), "
             f"the same for every one-run method",
             f"certified methods at confidence {c_each:.5g} each (Bonferroni over {n_certified}: "
             f"Steinke et al.'s row is implied by f-DP (ε, δ))")
    return methods_result(library, claim, first.epsilon_exact, methods, first.steps.shape[0], noise_scale,
                          confidence, seed, notes)


def audit_dpsgd_multirun(*, audit: str = "black-box", library: str = "engine", epsilon: float = 2.0,
                         delta: float = 1e-5, epochs: int = 10, runs: int = 20000, noise_scale: float = 1.0,
                         confidence: float = 0.95, rng: RandomLike = None) -> DPSGDMethodsAudit:
    """Multi-run audits with Clopper–Pearson, as a :class:`DPSGDMethodsAudit` (one row per method).

    ``audit="black-box"``: the final model of ``runs`` independent runs with one input-space canary
    and the worst-case zero initialisation (:func:`~privaudit.audit.dpsgd.whitebox.engine_canary_runs`
    for ``library="engine"``, :func:`~privaudit.audit.dpsgd.whitebox.opacus_canary_runs` for
    ``"opacus"``), full batch, T = ``epochs``, target ``epsilon``.

    ``audit="normalisation"`` (:mod:`privaudit.audit.dpsgd.normalisation`): ``library="opacus"``
    audits ``make_private``'s averaging when one record is added (its own set-up: n = 100, batch
    10, z = 5, first 10 steps; ``epsilon`` and ``epochs`` unused); ``library="numpy"`` the three
    averaging conventions of ``averaged_release_runs`` (n = 20, q = 0.5, z = 20, T = 100), each row
    at confidence 1 − (1 − c)/3. The claim is Opacus' RDP accountant's ε for the accounted sum.

    Parameters
    ----------
    audit : {"black-box", "normalisation"}
    library : {"engine", "opacus", "numpy"}
        "numpy" only for the normalisation audit, "engine" only for the black-box one.
    epsilon, delta : float
    epochs : int
    runs : int
        Independent runs over both hypotheses.
    noise_scale : float
        Black box: train with the claim's noise multiplier times this.
    confidence : float
    rng : int, Generator or None

    Returns
    -------
    DPSGDMethodsAudit
    """
    from privaudit.audit.dpsgd.normalisation import NORMALISERS, averaged_release_runs, opacus_normaliser_runs

    check_multirun_options(audit, library)
    runs = check_int("runs", runs, minimum=8)
    ss, seed = resolve_seed(rng)
    child = uint32_seed(ss)
    rows, steps, exact, notes = [], 0, float("nan"), ()
    if audit == "black-box":
        if library == "engine":
            from privaudit.learners.dpsgd import claim_for, resolve_noise_multiplier

            res = engine_canary_runs(runs, epsilon=epsilon, delta=delta, epochs=epochs, noise_scale=noise_scale,
                                     confidence=confidence, view="black-box", rng=child)
            z = resolve_noise_multiplier(epsilon, delta, epochs, sampling_rate=1.0, adjacency="label")
            claim = claim_for(z, epochs, delta, sampling_rate=1.0, adjacency="label")
        else:
            from privaudit.mechanisms.external.opacus_canary import OpacusCanaryRuns

            res = opacus_canary_runs(runs, epsilon=epsilon, delta=delta, epochs=epochs, noise_scale=noise_scale,
                                     confidence=confidence, view="black-box", rng=child)
            claim = OpacusCanaryRuns(epsilon=epsilon, delta=delta, epochs=epochs).claim
        rows.append(dict(method="black box: final model, Clopper–Pearson", epsilon_lb=res.epsilon, certified=True,
                         assumption="none", runs=runs, canaries=runs, seconds=res.seconds, confidence=confidence))
        steps, exact = epochs, res.epsilon_exact
    elif library == "opacus":
        res = opacus_normaliser_runs(runs, confidence=confidence, rng=child)
        claim = PrivacyClaim(res.epsilon_claimed, delta, "add-remove")
        rows.append(dict(method="Opacus make_private: divisor int(len(dataset)·q)", epsilon_lb=res.epsilon_lb,
                         certified=True, assumption="none", runs=runs, canaries=runs, seconds=res.seconds,
                         confidence=confidence))
        steps = res.details["steps"]
        q = max(v["sample_rate"] for v in res.details["settings"].values())
        exact = dpsgd_epsilon(res.details["noise_multiplier"], steps, delta, sampling_rate=q)
        notes = (f"Opacus settings per dataset size: {res.details['settings']}",
                 "exact ε: dp_accounting's PLD ε of the accounted noisy sum (not of the averaged release)")
    else:
        c_each = 1 - (1 - confidence) / len(NORMALISERS)
        for k, name in enumerate(NORMALISERS):
            res = averaged_release_runs(runs, normaliser=name, confidence=c_each, rng=child + k)
            rows.append(dict(method=f"averaged release: divided by {name}", epsilon_lb=res.epsilon_lb,
                             certified=True, assumption="none", runs=runs, canaries=runs, seconds=res.seconds,
                             confidence=c_each))
        claim = PrivacyClaim(res.epsilon_claimed, delta, "add-remove")
        steps = res.details["steps"]
        exact = dpsgd_epsilon(res.details["noise_multiplier"], steps, delta,
                              sampling_rate=res.details["sampling_rate"])
        notes = ("exact ε: dp_accounting's PLD ε of the accounted noisy sum (not of the averaged releases)",)
    return methods_result(library, claim, exact, rows, steps, noise_scale, confidence, seed, notes)


__all__ = ["DPSGDMethodsAudit", "LIBRARIES", "MULTIRUN_AUDITS", "MULTIRUN_LIBRARIES", "NOT_GAUSSIAN", "ONE_RUN_NAMES",
           "audit_dpsgd_methods", "audit_dpsgd_multirun", "check_methods_options", "check_multirun_options",
           "methods_result", "one_run_count", "one_run_rows", "per_step_row"]
