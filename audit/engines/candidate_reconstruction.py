"""Candidate-set reconstruction of a training record from any trained model, against the ReRo bound.

The informed adversary of Balle, Cherubin & Hayes (2022) knows every training record but the target,
the training algorithm and its randomness' law, and that the target is one of k candidates
z_1, …, z_k, drawn uniformly (the prior of the ReRo game of Hayes, Mahloujifar & Balle 2023, with
κ = 1/k). For black-box models with no closed form (DP-SGD, MLPs) it plays the game with shadow
models (:func:`audit_candidate_reconstruction`):

1. for each candidate c, ``n_shadow`` models trained on D₋ᵢ ∪ {z_c}, each with its own seed; the
   signal s_c(θ) (:mod:`~privaudit.audit.engines.model_training`: the log-odds of z_c's label) of a
   model trained with z_c and of one trained with another candidate give a Gaussian each (LiRA's
   fit, one pooled variance);
2. ``trials`` times: the true candidate drawn uniformly, a target model trained with it and a fresh
   seed; the adversary guesses the candidate whose likelihood ratio log N(s_c; μ_in,c, σ²) −
   log N(s_c; μ_out,c, σ²) is largest.

Its success rate is held against the ReRo bound 1 − f(κ) of the model's claim: Φ(Φ⁻¹(κ) + μ) for a
claim that states μ (GDP), else e^ε κ + δ (the (ε, δ) curve), capped at 1. A success rate whose
Clopper–Pearson lower bound (99.9 %) exceeds the bound refutes the claim.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from privaudit.mechanisms.claim import PrivacyClaim
from privaudit.mechanisms.randomness import RandomLike, int_seeds, keyed_rng, resolve_seed
from privaudit.mechanisms.tradeoff import tradeoff_curve
from privaudit.mechanisms.validation import InvalidInputError, check_array, check_int

from privaudit.audit.engines.model_training import check_model, infer_task, run_fits, train_and_score
from privaudit.audit.results import AuditResult
from privaudit.audit.stats.epsilon_bounds import clopper_pearson_lower, clopper_pearson_upper
from privaudit.audit.stats.estimation_bounds import rero_bound
from privaudit.audit.verdicts import Verdict


@dataclasses.dataclass(frozen=True)
class CandidateReconstruction(AuditResult):
    """The candidate-set reconstruction game against a model: success rate, its bounds and the ReRo bound."""

    kind: ClassVar[str] = "candidate-reconstruction"

    index: int
    n_candidates: int
    trials: int
    n_shadow: int
    successes: int
    success_lower: float
    success_upper: float
    baseline: float
    rero_bound: float
    claim: PrivacyClaim | None
    verdict: str
    seed: int
    seconds: float

    @property
    def success(self) -> float:
        """The adversary's rate of exact reconstruction."""
        return self.successes / self.trials

    def summary(self) -> str:
        """The success rate against guessing and against the ReRo bound of the claim."""
        bound = "no claim" if self.claim is None else f"ReRo bound {self.rero_bound:.3f} of the claim"
        return (f"candidate-set reconstruction of record {self.index} among {self.n_candidates} candidates: "
                f"{self.successes}/{self.trials} = {self.success:.3f} (99.9 % interval "
                f"[{self.success_lower:.3f}, {self.success_upper:.3f}]) against guessing {self.baseline:.3f} and "
                f"{bound}; verdict {self.verdict}")


def claim_rero_bound(claim: PrivacyClaim, kappa: float) -> float:
    """1 − f(κ) of a claim: Φ(Φ⁻¹(κ) + μ) when it states μ, else the (ε, δ) curve's e^ε κ + δ (≤ 1).

    Parameters
    ----------
    claim : PrivacyClaim
    kappa : float
        The prior's largest mass (1/k for k uniform candidates).

    Returns
    -------
    float
    """
    if claim.mu is not None:
        return rero_bound(kappa, mu=claim.mu)
    return rero_bound(kappa, lambda a: tradeoff_curve(claim.epsilon, claim.delta, a))


def _fit_jobs(model, X_rest, y_rest, cand_X, cand_y, which, seeds, task):
    """One job per (candidate, seed): train on D₋ᵢ ∪ {z_c}, score every candidate."""
    jobs = []
    for j, (c, s) in enumerate(zip(which, seeds)):
        Xt, yt = np.vstack([X_rest, cand_X[c]]), np.r_[y_rest, cand_y[c]]
        # Score the candidates: rows appended after the training rows, trained on the first len(y_rest) + 1.
        Xall, yall = np.vstack([Xt, cand_X]), np.r_[yt, cand_y]
        jobs.append(functools.partial(train_and_score, model, Xall, yall, np.arange(yt.size), int(s), task,
                                      j))
    return jobs


def audit_candidate_reconstruction(model: Any, X: ArrayLike, y: ArrayLike, *, index: int, n_candidates: int = 8,
                                   n_shadow: int = 4, trials: int = 50, claim: PrivacyClaim | None = None,
                                   n_jobs: int | None = None, rng: RandomLike = None) -> CandidateReconstruction:
    """Play the ReRo game against ``model``: reconstruct record ``index`` among k candidates with shadow models.

    Parameters
    ----------
    model : estimator or trainer
        Cloned and refitted (:mod:`~privaudit.audit.engines.model_training`).
    X, y : array-like
        The training set; the adversary knows every record but ``index``.
    index : int
        The target record; the other k − 1 candidates are records of X drawn at random (removed from
        the known records, so that each candidate is new to the model).
    n_candidates : int
        k ≥ 2 (κ = 1/k).
    n_shadow : int
        Shadow models per candidate (≥ 2).
    trials : int
        Target models (games) played.
    claim : PrivacyClaim, optional
        Default: the claim the fitted models carry.
    n_jobs : int, optional
        joblib workers for the fits.
    rng : int, Generator or None

    Returns
    -------
    CandidateReconstruction
        ``verdict`` is ``violation`` when the success rate's 99.9 % lower bound exceeds the claim's ReRo
        bound, ``pass`` under a claim otherwise, ``info`` without one.
    """
    Xa = check_array("X", X, ndim=2)
    ya = np.asarray(y)
    if ya.shape != (Xa.shape[0],):
        raise InvalidInputError(f"y must have shape ({Xa.shape[0]},), got {ya.shape}")
    check_model(model)
    i = check_int("index", index, minimum=0, maximum=Xa.shape[0] - 1)
    k = check_int("n_candidates", n_candidates, minimum=2, maximum=Xa.shape[0])
    S = check_int("n_shadow", n_shadow, minimum=2)
    T = check_int("trials", trials, minimum=1)
    task = infer_task(model, ya)
    root, seed = resolve_seed(rng)
    t0 = time.perf_counter()
    others = keyed_rng(root, 0).choice(np.delete(np.arange(Xa.shape[0]), i), size=k - 1, replace=False)
    cand = np.r_[i, others]
    rest = np.setdiff1d(np.arange(Xa.shape[0]), cand)
    X_rest, y_rest, cX, cy = Xa[rest], ya[rest], Xa[cand], ya[cand]
    shadow_which = np.repeat(np.arange(k), S)
    truth = keyed_rng(root, 1).integers(0, k, size=T)
    seeds = int_seeds(keyed_rng(root, 2), shadow_which.size + T)
    jobs = _fit_jobs(model, X_rest, y_rest, cX, cy, np.r_[shadow_which, truth], seeds, task)
    fits = run_fits(jobs, n_jobs=n_jobs)
    n_known = y_rest.size + 1
    sig = np.stack([f.signal[n_known:] for f in fits])  # (fits, k): every candidate's signal in each model
    shadow, target = sig[:shadow_which.size], sig[shadow_which.size:]
    own = shadow_which[:, None] == np.arange(k)[None, :]
    mu_in = np.where(own, shadow, 0).sum(0) / own.sum(0)
    mu_out = np.where(~own, shadow, 0).sum(0) / (~own).sum(0)
    resid = np.where(own, shadow - mu_in, shadow - mu_out)
    var = max(float((resid**2).sum() / (resid.size - 2 * k)), 1e-12)
    llr = ((target - mu_out) ** 2 - (target - mu_in) ** 2) / (2 * var)
    wins = int((llr.argmax(1) == truth).sum())
    if claim is None:
        claim = fits[0].claim
    bound = claim_rero_bound(claim, 1.0 / k) if claim is not None else float("nan")
    lo, hi = float(clopper_pearson_lower(wins, T, 0.999)), float(clopper_pearson_upper(wins, T, 0.999))
    verdict = Verdict.INFO if claim is None else (Verdict.VIOLATION if lo > bound else Verdict.PASS)
    return CandidateReconstruction(i, k, T, S, wins, lo, hi, 1.0 / k, bound, claim, verdict, seed,
                                   time.perf_counter() - t0)


__all__ = ["CandidateReconstruction", "audit_candidate_reconstruction", "claim_rero_bound"]
