"""The DP-SGD audit methods applied to privaudit's private learners and to Opacus' variants.

For one learner and target ε, the methods that apply, side by side with their runs, time and
assumption (a :class:`~privaudit.audit.dpsgd.methods.DPSGDMethodsAudit`, rendered like the
``dpsgd-methods`` kind). Canary observations come from :mod:`privaudit.audit.dpsgd.learner_canaries`.

===========================  =========  ========  ============  ===========================
learner                      per-step*  one run   CP over       claim; exact ε by
===========================  =========  ========  ============  ===========================
``conddp`` (label DP)        yes        yes       —             PLD of T label-DP steps
``opacus`` full / Poisson    yes        yes       —             Opacus' RDP; PLD
``opacus`` shuffle           —          yes       —             Opacus' Poisson RDP; MC
``fedavg`` (replace-one)     yes        yes       fits (final)  μ-GDP, μ = 2√T/z
``modulated`` (local)        —          yes       clients       GDP composition; the pair's
``iwp`` (local)              —          yes       clients       basic composition; PLD
===========================  =========  ========  ============  ===========================

(* assumption-labelled.) Every one-run score is the canary's exact log-likelihood ratio: Σ_t o_t at
full batch, the Poisson mixture's at q < 1, the one-batch-per-epoch mixture's under shuffling, the
release view's log-density ratio for the local releases.

Why a method is absent: Cond-DP and Opacus train one model per fit at seconds a run, so
Clopper–Pearson over thousands of runs is left to the engine's entry (Cond-DP's noise is the
engine's: conditioning is post-processing of public features). Under shuffling the per-step
estimate's premise (the canary present at each step with probability q) is false: the canary is
in exactly one batch per epoch, which the one-run score reads exactly instead. The local releases
(modulated transcript, IWP record) have no training steps to compose: the m clients of one run
are m independent releases, scored by the exact likelihood ratio (all rounds of the transcript in
one score), so Clopper–Pearson over clients is the multi-run audit at no training cost, and a
final model is post-processing of the releases (never more revealing).

The f-DP GDP row certifies "not μ̲-GDP"; its ε is an ε lower bound only for a Gaussian trade-off
curve (full-batch training, the transcript with known phases), so for IWP and for Opacus under
Poisson or shuffled batches it is reported as assumption-labelled and does not enter the verdict.

Every certified method runs at confidence 1 − (1 − c)/K (K certified methods in the entry), so
the best, ``epsilon_lb``, holds at c; the verdict is "violation" iff it exceeds the claim.
"""

from __future__ import annotations

import time

import numpy as np

from privaudit.mechanisms.accounting import gdp_epsilon
from privaudit.mechanisms.claim import PrivacyClaim
from privaudit.mechanisms.randomness import RandomLike, resolve_seed, uint32_seed
from privaudit.mechanisms.validation import InvalidParameterError, check_int, check_positive

from privaudit.audit.dpsgd.learner_canaries import (
    conddp_canary_steps,
    fedavg_canary_steps,
    fedavg_final_weight_runs,
    opacus_shuffled_canary_steps,
    opacus_spec_canary_steps,
    poisson_scores,
    release_view_scores,
    shuffled_pair_epsilon,
    shuffled_scores,
)
from privaudit.audit.dpsgd.methods import (
    ONE_RUN_NAMES,
    DPSGDMethodsAudit,
    methods_result,
    one_run_count,
    one_run_rows,
    per_step_row,
)
from privaudit.audit.dpsgd.whitebox import random_signs
from privaudit.audit.stats.epsilon_bounds import clopper_pearson_bound

LEARNERS = ("conddp", "opacus", "fedavg", "modulated", "iwp")
SAMPLINGS = ("full", "poisson", "shuffle")
#: Score of the one-run methods per learner (the last column of the module table).
LR_NOTE = "one-run scores: the exact log-likelihood ratio of each canary's observations"


def check_learner_options(learner: str, sampling: str = "full", grad_sample_mode: str = "hooks", cp_runs: int = 0,
                          noise_scale: float = 1.0) -> None:
    """Raise if the options do not suit the learner (the module table says which apply where).

    Parameters
    ----------
    learner : str
        One of :data:`LEARNERS`.
    sampling : str
        One of :data:`SAMPLINGS` ("poisson" and "shuffle": Opacus only).
    grad_sample_mode : str
        Opacus' per-sample gradient engine ("hooks" for the others).
    cp_runs : int
        Must be 0 for Cond-DP and Opacus.
    noise_scale : float
        Must be 1 for the local releases (nothing is trained).

    Raises
    ------
    InvalidParameterError
        Naming the offending option.
    """
    from privaudit.mechanisms.external.opacus_canary import GRAD_SAMPLE_MODES

    if learner not in LEARNERS:
        raise InvalidParameterError(f"learner must be one of {LEARNERS}, got learner={learner!r}")
    if sampling not in SAMPLINGS:
        raise InvalidParameterError(f"sampling must be one of {SAMPLINGS}, got sampling={sampling!r}")
    if sampling != "full" and learner != "opacus":
        raise InvalidParameterError(f"sampling={sampling!r} applies to learner='opacus' only (the others are "
                                    f"audited full batch / full participation), got learner={learner!r}")
    if grad_sample_mode != "hooks" and learner != "opacus":
        raise InvalidParameterError(f"grad_sample_mode applies to learner='opacus' only, got {grad_sample_mode!r}")
    if grad_sample_mode not in GRAD_SAMPLE_MODES:
        raise InvalidParameterError(f"grad_sample_mode must be one of {GRAD_SAMPLE_MODES}, got {grad_sample_mode!r}")
    if cp_runs and learner in ("conddp", "opacus"):
        raise InvalidParameterError(f"cp_runs must be 0 for learner={learner!r} (one model per fit: too slow)")
    if noise_scale != 1.0 and learner in ("modulated", "iwp"):
        raise InvalidParameterError(f"noise_scale applies to the training learners, not learner={learner!r}")


def _cp_row(method: str, pos: np.ndarray, neg: np.ndarray, delta: float, confidence: float, seconds: float) -> dict:
    """Clopper–Pearson ε̲ with the threshold chosen on the first half of each side, evaluated on the rest."""
    b = clopper_pearson_bound(neg[: neg.size // 2], pos[: pos.size // 2], neg[neg.size // 2:], pos[pos.size // 2:],
                              delta=delta, confidence=confidence)
    return dict(method=method, epsilon_lb=float(b.epsilon), certified=True, assumption="none",
                runs=pos.size + neg.size, canaries=pos.size + neg.size, seconds=seconds, confidence=confidence)


def audit_dpsgd_learner(*, learner: str = "conddp", epsilon: float = 2.0, delta: float = 1e-5, epochs: int = 10,
                        canaries: int = 500, whitebox_runs: int = 10, cp_runs: int = 0,
                        one_run_canaries: int | None = None, grad_sample_mode: str = "hooks",
                        sampling: str = "full", sample_rate: float = 0.1, noise_scale: float = 1.0,
                        confidence: float = 0.95, rng: RandomLike = None) -> DPSGDMethodsAudit:
    """Every applicable DP-SGD audit method on one learner (see the module docstring).

    Parameters
    ----------
    learner : {"conddp", "opacus", "fedavg", "modulated", "iwp"}
        Cond-DP (label DP), Opacus (add/remove), FedAvg DP-SGD (replace-one), seed 000's modulated
        transcript (one client, T rounds), IWP's record release.
    epsilon, delta : float
        The learner's target (its claim; Opacus' accountant's ε for the z it calibrates).
    epochs : int
        Full-batch steps / rounds T (Cond-DP, FedAvg, modulated), epochs (Opacus: T = epochs/q
        under sampling). Not used by IWP (one release per record).
    canaries : int
        Canaries per run (training learners), clients of the one-run game (local releases).
    whitebox_runs : int
        Runs pooled by the per-step estimate (training learners; Opacus shuffle and the local
        releases use one run).
    cp_runs : int
        FedAvg: independent fits for the black-box Clopper–Pearson row; local releases: clients
        for Clopper–Pearson (0 skips it). Must be 0 for Cond-DP and Opacus.
    one_run_canaries : int, optional
        The one-run methods read the first this many canaries of the first run (default all).
    grad_sample_mode : {"hooks", "functorch", "ghost"}
        Opacus' per-sample gradient engine.
    sampling : {"full", "poisson", "shuffle"}
        Opacus' batches: full batch, Poisson at ``sample_rate`` (accounted), or shuffled batches of
        round(q·N) rows (not covered by Poisson accounting; the claim is still Opacus').
    sample_rate : float
        q of Poisson / shuffled batches.
    noise_scale : float
        Train with the claim's noise times this (< 1: a broken learner; Cond-DP, FedAvg, Opacus).
    confidence : float
    rng : int, Generator, SeedSequence or None

    Returns
    -------
    DPSGDMethodsAudit
        ``library`` names the learner (and Opacus' mode and sampling).
    """
    check_learner_options(learner, sampling, grad_sample_mode, check_int("cp_runs", cp_runs, minimum=0),
                          check_positive("noise_scale", noise_scale))
    if not 0.5 < confidence < 1.0:
        raise InvalidParameterError(f"confidence must lie in (0.5, 1), got confidence={confidence!r}")
    canaries = check_int("canaries", canaries, minimum=20)
    whitebox_runs = check_int("whitebox_runs", whitebox_runs)
    m1 = one_run_count(canaries, one_run_canaries)
    ss, seed = resolve_seed(rng)
    kids = ss.spawn(whitebox_runs + 3)
    local = learner in ("modulated", "iwp")
    # The f-DP GDP row certifies an ε only for Gaussian trade-off curves: full-batch training, known-phase transcript.
    gaussian_curve = learner in ("conddp", "fedavg", "modulated") or sampling == "full" and learner == "opacus"
    n_certified = 2 + gaussian_curve + (cp_runs > 0)
    c_each = 1 - (1 - confidence) / n_certified
    if local:
        return _local_release(learner, epsilon, delta, epochs, canaries, m1, cp_runs, confidence, c_each, seed, kids)
    if learner == "opacus" and sampling == "shuffle":
        return _opacus_shuffle(epsilon, delta, epochs, canaries, m1, grad_sample_mode, sample_rate, noise_scale,
                               confidence, c_each, seed, kids)
    if learner == "opacus":
        from privaudit.mechanisms.external.opacus_canary import OpacusCanaryRuns

        q = 1.0 if sampling == "full" else sample_rate
        spec = OpacusCanaryRuns(epsilon=epsilon, delta=delta, epochs=epochs, sample_rate=q,
                                grad_sample_mode=grad_sample_mode)
    runs = []
    for child in kids[:whitebox_runs]:
        sign_seed, train_seed = child.spawn(2)
        signs = random_signs(canaries, sign_seed)
        if learner == "conddp":
            runs.append(conddp_canary_steps(signs, epsilon=epsilon, delta=delta, epochs=epochs,
                                            noise_scale=noise_scale, rng=train_seed))
        elif learner == "fedavg":
            runs.append(fedavg_canary_steps(signs, epsilon=epsilon, delta=delta, rounds=epochs,
                                            noise_scale=noise_scale, rng=train_seed))
        else:
            runs.append(opacus_spec_canary_steps(spec, signs, noise_scale=noise_scale, rng=uint32_seed(train_seed)))
    first = runs[0]
    if learner == "opacus":
        claim = spec.claim
        library = f"opacus {grad_sample_mode}, {sampling}" + (f" q = {q:g}" if q < 1 else "")
    else:
        claim = PrivacyClaim(float(epsilon), float(delta), first.adjacency)
        library = learner
    methods = [per_step_row(runs, confidence, np.random.default_rng(kids[-3]))]
    notes = []
    if learner == "fedavg" and cp_runs:
        pos, neg, sec = fedavg_final_weight_runs(cp_runs, epsilon=epsilon, delta=delta, rounds=epochs,
                                                 noise_scale=noise_scale, rng=kids[-2])
        methods.append(_cp_row("black box: final model, Clopper–Pearson", pos, neg, delta, c_each, sec))
    # q < 1: the Poisson likelihood ratio (the plain sum Σ_t o_t, the ratio at q = 1, wastes the rare sampled steps).
    scores = poisson_scores(first.steps[:, :m1], first.claim_noise_multiplier, first.sampling_rate)
    rows, plan = one_run_rows(scores, first.signs[:m1], claim, c_each=c_each, confidence=confidence,
                               seconds=first.seconds, gaussian_curve=gaussian_curve)
    methods += rows
    notes += [f"one-run k (guesses per side) planned from the claim: {plan}",
              f"certified methods at confidence {c_each:.5g} each (Bonferroni over {n_certified})",
              f"exact ε: dp_accounting's PLD of the claim's noise multiplier z = {first.claim_noise_multiplier:.5g}, "
              f"q = {first.sampling_rate:g}, T = {first.steps.shape[0]} ({first.adjacency})"]
    if learner == "conddp":
        notes.append("Cond-DP fitted with m Dirac label canaries in the conditioned public block (Ĉ maps each to a "
                     "Dirac direction), DP-Adam, no intercept; observations from the learner's callback")
    return methods_result(library, claim, first.epsilon_exact, methods, first.steps.shape[0], noise_scale, confidence,
                          seed, notes)


def _opacus_shuffle(epsilon, delta, epochs, canaries, m1, grad_sample_mode, q, noise_scale, confidence, c_each, seed,
                    kids) -> DPSGDMethodsAudit:
    """Opacus over shuffled batches: one run, the exact shuffled likelihood-ratio score, against Poisson accounting."""
    from privaudit.mechanisms.external.opacus_canary import OpacusCanaryRuns

    if not 0.0 < q < 1.0:
        raise InvalidParameterError(f"sample_rate must lie in (0, 1) for shuffled batches, got {q!r}")
    spec = OpacusCanaryRuns(epsilon=epsilon, delta=delta, epochs=epochs, sample_rate=q,
                            grad_sample_mode=grad_sample_mode)
    z = spec.noise_multiplier
    sign_seed, train_seed = kids[0].spawn(2)
    signs = random_signs(canaries, sign_seed)
    steps, opacus_eps, seconds = opacus_shuffled_canary_steps(signs, noise_multiplier=z * noise_scale, sample_rate=q,
                                                              epochs=epochs, grad_sample_mode=grad_sample_mode,
                                                              delta=delta, rng=train_seed)
    scores = shuffled_scores(steps, z, epochs)
    rows, plan = one_run_rows(scores[:m1], signs[:m1], spec.claim, c_each=c_each, confidence=confidence,
                               seconds=seconds, gaussian_curve=False)
    k = steps.shape[0] // epochs
    exact, tail = shuffled_pair_epsilon(z * noise_scale, k, epochs, delta, rng=kids[1])
    poisson_exact = spec.exact_epsilon(delta)
    notes = [f"one-run k (guesses per side) planned from the claim: {plan}",
             f"certified methods at confidence {c_each:.5g} each (Bonferroni over 2)",
             f"shuffled batches: {k} per epoch, each canary in exactly one; {LR_NOTE} "
             "(Σ over epochs of log Σ_t exp(o_t/z²))",
             "claim: Opacus' RDP accountant for Poisson sampling at q (what Opacus reports for this run, "
             f"{opacus_eps:.4g}); shuffling is not covered by that analysis",
             f"exact ε: the shuffled Dirac pair's, by Monte Carlo of its privacy loss (10⁶ draws per direction, "
             f"{tail} beyond ε: δ within ~{100 / max(tail, 1) ** 0.5:.0f} %), a lower bound on the shuffled "
             f"mechanism's ε; the same z under Poisson sampling has ε = {poisson_exact:.4g} (PLD): for this pair "
             f"shuffling is {'less' if exact > poisson_exact else 'more'} private than the Poisson release. Pairs "
             "whose other records also move the canary's coordinate (Chua et al. 2024) are not built here",
             "no per-step estimate: its premise (canary present at each step with probability q) is false here"]
    return methods_result(f"opacus {grad_sample_mode}, shuffle q = {q:g}", spec.claim, exact, rows, steps.shape[0],
                          noise_scale, confidence, seed, notes)


def _local_release(learner, epsilon, delta, epochs, canaries, m1, cp_runs, confidence, c_each, seed, kids):
    """Modulated transcript / IWP record: clients on the view's worst-case pair, LR scores, one run + CP over clients."""
    if learner == "modulated":
        from privaudit.learners import ModulatedRegressor

        view = ModulatedRegressor(epsilon=epsilon, delta=delta, rounds=epochs).release_view(rng=kids[0])
        setup = view.tradeoff_setup(phase="known")
        exact = gdp_epsilon(setup.exact_mu, delta)
        steps = view.rounds
        notes = [f"seed 000's ModulatedRegressor, T = {steps} rounds: one client's transcript, phases known at their "
                 f"steepest for the worst-case pair (x = 0, x′ = v₁ of round 0)",
                 f"exact ε: the pair's, μ = {setup.exact_mu:.4g}-GDP (dp_accounting); the claim ε = "
                 f"{view.claim.epsilon:g} is the exact GDP composition of the Lipschitz bound, μ = "
                 f"{view.claim.mu:.4g}, which this pair does not reach (the mechanism's ε lies between)"]
    else:
        from privaudit.learners import IWPSGDClassifier

        dim = 3
        bounds = (-np.ones(dim), np.ones(dim))  # declared, data-independent box (the learner's sensitivity)
        view = IWPSGDClassifier(epsilon=epsilon, delta=delta, bounds=bounds).release_view(dim=dim, rng=kids[0])
        setup = view.tradeoff_setup()
        exact = view.exact_epsilon(delta)
        steps = 1
        notes = [f"IWP's local release of one record: Gaussian features (box [-1, 1]^{dim}) and randomized-response "
                 "label; worst-case pair: opposite corners, label flipped",
                 "exact ε: dp_accounting's PLD of the pair (features ⊗ label); the claim composes the two parts' "
                 "(ε, δ) basically"]
    claim = view.claim
    t0 = time.perf_counter()
    signs = random_signs(canaries, kids[1])
    scores = release_view_scores(setup, signs, kids[2])
    seconds = time.perf_counter() - t0
    methods = []
    if cp_runs:
        t0 = time.perf_counter()
        half = check_int("cp_runs", cp_runs, minimum=8) // 2
        cp_signs = np.concatenate([np.ones(half), -np.ones(cp_runs - half)])
        cp_scores = release_view_scores(setup, cp_signs, kids[3])
        methods.append(_cp_row("Clopper–Pearson over clients", cp_scores[:half], cp_scores[half:], claim.delta,
                               c_each, time.perf_counter() - t0))
    rows, plan = one_run_rows(scores[:m1], signs[:m1], claim, c_each=c_each, confidence=confidence, seconds=seconds,
                               gaussian_curve=learner == "modulated")
    if learner == "iwp":
        # The label's randomized response makes the likelihood ratio a two-component mixture: the Gaussian
        # estimate's premise fails (it overshoots the exact ε), so it is not reported.
        rows = [r for r in rows if r["method"] != ONE_RUN_NAMES["gaussian"]]
        notes.append("no Gaussian one-run estimate: the randomized-response label makes the scores a two-component "
                     "mixture, not Gaussian")
    methods += rows
    notes += [f"one-run k (guesses per side) planned from the claim: {plan}",
              f"certified methods at confidence {c_each:.5g} each (Bonferroni over "
              f"{2 + (learner == 'modulated') + (cp_runs > 0)})",
              f"{LR_NOTE}; clients release independently, so one protocol run of m clients is m independent trials",
              "no per-step estimate (nothing trained: the release is the output) and no final-model audit (a model "
              "fitted on the releases is post-processing of them)"]
    return methods_result(learner, claim, exact, methods, steps, 1.0, confidence, seed, notes)


__all__ = ["LEARNERS", "ONE_RUN_NAMES", "SAMPLINGS", "audit_dpsgd_learner", "check_learner_options"]
