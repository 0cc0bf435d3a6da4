"""Audit of an Opacus DP-SGD configuration: Opacus' reported ε beside privaudit's certified lower bound.

One configuration (target ε and δ, epochs, sampling rate, per-sample-gradient
engine) is calibrated by Opacus (``get_noise_multiplier``) and accounted by
Opacus' accountant; that ε is the claim. privaudit attacks it through the canary
machinery of :mod:`privaudit.mechanisms.external.opacus_canary` (add/remove
canaries, Opacus' own relation) in up to three views:

``one-run, white box (gradient canaries)``
    One Opacus training run with m canaries, each included with probability ½
    (S_i = ±1 drawn before training); canary i's score is the sum over steps of its
    coordinate of the noisy gradient (read from ``p.grad``). ε̲ by Steinke, Nasr &
    Jagielski (2023), :func:`~privaudit.audit.stats.epsilon_bounds.one_run_bound`.
``one-run, black box (final model)``
    The same run; the score is canary i's final weight.
``trade-off, white box``
    ``n_runs`` independent Opacus runs per hypothesis with one canary in or out,
    scored by the sum of its per-step gradient coordinates (the exact likelihood
    ratio for full-batch steps), and
    :func:`~privaudit.audit.engines.tradeoff.audit_tradeoff` with Clopper–Pearson bounds,
    valid whatever the law of the release.

Each view's bound holds at confidence 1 − (1 − c)/k (Bonferroni over the k views
run), so the reported best ε̲ holds at c. The verdict is "violation" iff that ε̲
exceeds Opacus' ε. Beside them: ``epsilon_exact``, the ε of the same (z, q, T)
by dp_accounting's PLD accountant (privaudit's own accounting), which measures how
loose Opacus' accountant is. Opacus runs are seeded (torch generators from the
task's ``rng``): the audit is reproducible.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np

from privaudit.mechanisms.claim import PrivacyClaim
from privaudit.mechanisms.external.opacus_canary import (
    GRAD_SAMPLE_MODES,
    OpacusCanaryRuns,
    train_opacus_canaries,
)
from privaudit.mechanisms.randomness import RandomLike, resolve_seed
from privaudit.mechanisms.validation import InvalidParameterError, check_int, check_interval

from privaudit.audit.stats.epsilon_bounds import one_run_bound
from privaudit.audit.results import AuditResult
from privaudit.audit.verdicts import Verdict


@dataclasses.dataclass(frozen=True)
class OpacusAudit(AuditResult):
    """Opacus' ε and privaudit's certified lower bound for the same configuration (``kind = "opacus"``).

    Attributes
    ----------
    target : str
    claim : PrivacyClaim
        Opacus' accountant's (ε, δ), add/remove.
    opacus_epsilon : float
        ``claim.epsilon``, repeated for the side-by-side table.
    epsilon_lb : float
        Best certified lower bound over the views, at ``confidence``.
    epsilon_exact : float
        ε of the same noise multiplier, sampling rate and steps by dp_accounting's PLD accountant.
    accountant, grad_sample_mode : str
    noise_multiplier, sampling_rate : float
    steps : int
    views : tuple of dict
        Per view: ``view``, ``method`` ("one-run" or "tradeoff"), ``epsilon_lb``,
        ``confidence`` (Bonferroni share), sizes and the view's own details.
    confidence : float
    seed : int
    verdict : {"pass", "violation"}
    notes : tuple of str
    """

    kind: ClassVar[str] = "opacus"
    target: str
    claim: PrivacyClaim
    opacus_epsilon: float
    epsilon_lb: float
    epsilon_exact: float
    accountant: str
    grad_sample_mode: str
    noise_multiplier: float
    sampling_rate: float
    steps: int
    views: tuple
    confidence: float
    seed: int
    verdict: Verdict
    notes: tuple = ()


def audit_opacus(*, epsilon: float = 2.0, delta: float = 1e-5, epochs: int = 10, sample_rate: float = 1.0,
                 grad_sample_mode: str = "hooks", accountant: str = "rdp", m: int = 1000, n_runs: int = 500,
                 n_data: int = 20, clip: float = 1.0, lr: float = 0.05, confidence: float = 0.95,
                 noise_multiplier: float | None = None, rng: RandomLike = None) -> OpacusAudit:
    """Audit one Opacus DP-SGD configuration (see the module docstring for the views).

    Parameters
    ----------
    epsilon, delta : float
        Target handed to Opacus' calibration; the claim is Opacus' accountant's ε for the z it returns.
    epochs, sample_rate : int, float
        T = epochs/q steps; ``sample_rate = 1`` is full batch, below 1 Opacus' Poisson loader.
    grad_sample_mode : {"hooks", "functorch", "ghost"}
        Opacus' per-sample gradient engine ("ghost": ghost clipping).
    accountant : str
        Opacus accountant ("rdp", "prv", "gdp").
    m : int
        Canaries of the one-run views (0 skips them).
    n_runs : int
        Training runs per hypothesis of the trade-off view (0 skips it).
    n_data : int
        Ordinary training examples besides the canaries.
    clip : float
        Per-sample clip norm c > 0.
    lr : float
        SGD learning rate > 0.
    confidence : float
        Confidence of every ε̲.
    noise_multiplier : float, optional
        Train with this z instead of Opacus' calibrated one: a deliberately misconfigured target.
    rng : int, Generator, SeedSequence or None

    Returns
    -------
    OpacusAudit
    """
    if grad_sample_mode not in GRAD_SAMPLE_MODES:
        raise InvalidParameterError(f"grad_sample_mode must be one of {GRAD_SAMPLE_MODES}, got {grad_sample_mode!r}")
    m, n_runs = check_int("m", m, minimum=0), check_int("n_runs", n_runs, minimum=0)
    if m == 0 and n_runs == 0:
        raise InvalidParameterError("m and n_runs are both 0: no view to audit")
    c = check_interval("confidence", confidence, 0.0, 1.0)
    root, seed = resolve_seed(rng)
    ss_one, ss_runs = root.spawn(2)
    view = OpacusCanaryRuns(epsilon=epsilon, delta=delta, epochs=epochs, n_data=n_data, clip=clip, lr=lr,
                            sample_rate=sample_rate, grad_sample_mode=grad_sample_mode, accountant=accountant,
                            noise_multiplier=noise_multiplier)
    k = (2 if m else 0) + (1 if n_runs else 0)
    c_each = 1 - (1 - c) / k
    views = []
    if m:
        views += _one_run_views(view, m, c_each, ss_one)
    if n_runs:
        views.append(_tradeoff_view(view, n_runs, c_each, ss_runs))
    best = max(v["epsilon_lb"] for v in views)
    notes = [
        f"claim: Opacus' {accountant} accountant for z={view.noise_multiplier:.4g}, q={view.sample_rate:g}, "
        f"T={view.steps} steps (add/remove); epsilon_exact: dp_accounting's PLD of the same steps",
        f"each view holds at confidence {c_each:.4g} (Bonferroni over {k} views): the best holds at {c:g}",
        "canaries use a dedicated coordinate of a linear model, so the final model carries the same statistic as "
        "the gradients (black box = white box here); deeper models would separate the two views",
    ]
    if noise_multiplier is not None:
        notes.append(f"deliberately misconfigured: trained with z={noise_multiplier:g} instead of Opacus' "
                     f"calibrated z={view.calibrated_noise_multiplier:.4g}")
    return OpacusAudit(
        target=f"Opacus DP-SGD ({grad_sample_mode}, q={view.sample_rate:g}, T={view.steps})", claim=view.claim,
        opacus_epsilon=view.claim.epsilon, epsilon_lb=best, epsilon_exact=view.exact_epsilon(view.claim.delta),
        accountant=accountant, grad_sample_mode=grad_sample_mode, noise_multiplier=view.noise_multiplier,
        sampling_rate=view.sample_rate, steps=view.steps, views=tuple(views), confidence=c, seed=seed,
        verdict="violation" if best > view.claim.epsilon else "pass", notes=tuple(notes),
    )


def _one_run_views(view: OpacusCanaryRuns, m: int, confidence: float, ss) -> list[dict]:
    """One run with m canaries: white-box (summed gradient coordinates) and black-box (final weights) bounds."""
    rng_signs, rng_train = (np.random.default_rng(s) for s in ss.spawn(2))
    signs = rng_signs.choice((-1.0, 1.0), m)  # drawn before training, as the one-run theorem requires
    run = train_opacus_canaries(signs > 0, noise_multiplier=view.noise_multiplier, n_data=view.n_data, dim=view.dim,
                                clip=view.clip, lr=view.lr, epochs=view.epochs, sample_rate=view.sample_rate,
                                grad_sample_mode=view.grad_sample_mode, delta=view.claim.delta,
                                accountant=view.accountant, rng=rng_train)
    out = []
    for name, scores in (("one-run, white box (gradient canaries)", run.steps.sum(axis=0)),
                         ("one-run, black box (final model)", run.final)):
        b = one_run_bound(scores, signs, delta=view.claim.delta, confidence=confidence)
        out.append({"view": name, "method": "one-run", "epsilon_lb": b.epsilon, "confidence": confidence, "m": m,
                    "guesses": b.guesses, "correct": b.correct, "opacus_reported_epsilon": run.epsilon})
    return out


def _tradeoff_view(view: OpacusCanaryRuns, n_runs: int, confidence: float, ss) -> dict:
    """n_runs runs per hypothesis, scored by the summed gradient coordinate; Clopper–Pearson ε̲."""
    from privaudit.attacks.distinguishers import ProjectionAttack

    from privaudit.audit.engines.tradeoff import audit_tradeoff

    res = audit_tradeoff(view, -1.0, 1.0, n=n_runs, attacker=ProjectionAttack(np.ones(view.steps)),
                         confidence=confidence, estimator="clopper-pearson", rng=np.random.default_rng(ss))
    return {"view": "trade-off, white box (summed gradient canary)", "method": "tradeoff",
            "epsilon_lb": res.epsilon_lb, "confidence": confidence, "n_runs": n_runs, "n_eval": res.n_eval,
            "epsilon_exact": res.epsilon_exact}


__all__ = ["OpacusAudit", "audit_opacus"]
