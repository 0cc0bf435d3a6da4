"""One DP-SGD configuration, every audit method side by side: ε̲, runs, time and assumption.

For a library (our engine under label DP, or Opacus under add/remove) and a target ε, with
Dirac gradient canaries (:mod:`privaudit.audit.engines.dpsgd_whitebox`):

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
"""

from __future__ import annotations

import dataclasses
import time
from typing import ClassVar

import numpy as np

from privaudit.mechanisms.accounting import dpsgd_epsilon
from privaudit.mechanisms.claim import PrivacyClaim
from privaudit.mechanisms.randomness import RandomLike, resolve_seed, uint32_seed
from privaudit.mechanisms.validation import InvalidParameterError, check_int, check_positive

from privaudit.audit.engines.dpsgd_whitebox import (
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
    if library not in LIBRARIES:
        raise InvalidParameterError(f"library must be one of {LIBRARIES}, got library={library!r}")
    if not 0.5 < confidence < 1.0:
        raise InvalidParameterError(f"confidence must lie in (0.5, 1), got confidence={confidence!r}")
    canaries, whitebox_runs = check_int("canaries", canaries, minimum=20), check_int("whitebox_runs", whitebox_runs)
    cp_runs = check_int("cp_runs", cp_runs, minimum=0)
    if library == "opacus" and cp_runs:
        raise InvalidParameterError("cp_runs must be 0 for library='opacus' (one Opacus model per run: too slow)")
    noise_scale = check_positive("noise_scale", noise_scale)
    m1 = canaries if one_run_canaries is None else check_int("one_run_canaries", one_run_canaries, minimum=20)
    if m1 > canaries:
        raise InvalidParameterError(f"one_run_canaries must be <= canaries={canaries}, got {m1}")
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
    methods = []
    t0 = time.perf_counter()
    est = whitebox_estimate(concatenate(runs), confidence=confidence, rng=np.random.default_rng(kids[-2]))
    methods.append(dict(method="per-step composed (claim's PLD/GDP)", epsilon_lb=est.epsilon, certified=False,
                        assumption=est.assumption, runs=whitebox_runs, canaries=canaries * whitebox_runs,
                        seconds=sum(r.seconds for r in runs) + time.perf_counter() - t0, confidence=confidence,
                        epsilon_hat=est.epsilon_hat))
    if cp_runs:
        cp = engine_canary_runs(cp_runs, epsilon=epsilon, delta=delta, epochs=epochs, noise_scale=noise_scale,
                                confidence=c_each, rng=uint32_seed(kids[-1]))
        methods.append(dict(method="Clopper–Pearson over runs", epsilon_lb=cp.epsilon, certified=True,
                            assumption="none", runs=cp_runs, canaries=cp_runs, seconds=cp.seconds,
                            confidence=c_each))
    t0 = time.perf_counter()
    plan = planned_k(m1, claim.epsilon, delta, confidence=c_each)
    table = one_run_table(first.steps[:, :m1].sum(0), first.signs[:m1], delta=delta, confidence=c_each, k=plan)
    shared = first.seconds + time.perf_counter() - t0
    names = {"steinke": "one run: Steinke et al.", "fdp-approx-dp": "one run: f-DP, (ε, δ) curve",
             "fdp-gdp": "one run: f-DP, GDP curve", "gaussian": "one run: Gaussian"}
    for row in table:
        methods.append(dict(method=names[row["method"]], epsilon_lb=row["epsilon_lb"], certified=row["certified"],
                            assumption=row["assumption"], runs=1, canaries=m1, seconds=shared,
                            confidence=c_each if row["certified"] else confidence,
                            **({"epsilon_recursion": row["epsilon_recursion"]} if "epsilon_recursion" in row else {})))
    best = max(m["epsilon_lb"] for m in methods if m["certified"])
    verdict = Verdict.VIOLATION if best > claim.epsilon else Verdict.PASS
    notes = (f"one-run guesses planned from the claim: k = {plan} per side ({2 * plan} of {m1} canaries), "
             f"the same for every one-run method",
             f"certified methods at confidence {c_each:.5g} each (Bonferroni over {n_certified}: "
             f"Steinke et al.'s row is implied by f-DP (ε, δ))")
    return DPSGDMethodsAudit(library, claim, first.epsilon_exact, best, tuple(methods), first.steps.shape[0],
                             noise_scale, confidence, seed, verdict, notes)


MULTIRUN_AUDITS = ("black-box", "normalisation")


def audit_dpsgd_multirun(*, audit: str = "black-box", library: str = "engine", epsilon: float = 2.0,
                         delta: float = 1e-5, epochs: int = 10, runs: int = 20000, noise_scale: float = 1.0,
                         confidence: float = 0.95, rng: RandomLike = None) -> DPSGDMethodsAudit:
    """Multi-run audits with Clopper–Pearson, as a :class:`DPSGDMethodsAudit` (one row per method).

    ``audit="black-box"``: the final model of ``runs`` independent runs with one input-space canary
    and the worst-case zero initialisation (:func:`~privaudit.audit.engines.dpsgd_whitebox.engine_canary_runs`
    for ``library="engine"``, :func:`~privaudit.audit.engines.dpsgd_whitebox.opacus_canary_runs` for
    ``"opacus"``), full batch, T = ``epochs``, target ``epsilon``.

    ``audit="normalisation"`` (:mod:`privaudit.audit.engines.normalisation`): ``library="opacus"``
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
    from privaudit.audit.engines.normalisation import NORMALISERS, averaged_release_runs, opacus_normaliser_runs

    if audit not in MULTIRUN_AUDITS:
        raise InvalidParameterError(f"audit must be one of {MULTIRUN_AUDITS}, got audit={audit!r}")
    allowed = {"black-box": ("engine", "opacus"), "normalisation": ("opacus", "numpy")}[audit]
    if library not in allowed:
        raise InvalidParameterError(f"library must be one of {allowed} for audit={audit!r}, got library={library!r}")
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
    best = max(r["epsilon_lb"] for r in rows)
    verdict = Verdict.VIOLATION if best > claim.epsilon else Verdict.PASS
    return DPSGDMethodsAudit(library, claim, exact, best, tuple(rows), steps, noise_scale, confidence, seed, verdict,
                             notes)


__all__ = ["DPSGDMethodsAudit", "LIBRARIES", "MULTIRUN_AUDITS", "audit_dpsgd_methods", "audit_dpsgd_multirun"]
