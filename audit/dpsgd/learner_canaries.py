"""Canary observations of privaudit's private learners, in the form the DP-SGD audits read.

The white-box and one-run audits of :mod:`privaudit.audit.dpsgd.whitebox` and
:mod:`privaudit.audit.engines.one_run` read per-step canary observations
(:class:`~privaudit.audit.dpsgd.whitebox.CanarySteps`) or one score per canary. This
module produces them from the learners themselves, through their public interfaces only (no
learner imports an audit):

:func:`conddp_canary_steps`
    :class:`~privaudit.learners.CondDPRegressor` (label DP, DP-Adam by default) fitted on data
    plus m Dirac label canaries; its ``callback`` exposes every noisy gradient sum. Canary i is
    the public input e_{dim+i} (its own coordinate) with the private label −S_i·Y, Y = 10³, so its
    gradient is clipped to +S_i·c along that coordinate at every step. Conditioning is computed
    from the public features: the canaries' block of the public matrix is the identity, so Ĉ maps
    e_{dim+i} to √N·e_{dim+i} (N rows), still a Dirac direction, and the observation is the
    canary's coordinate of the noisy sum in units of c, shift ±1 (replace-one on the label,
    sensitivity 2c: κ = 2 as the claim is accounted).
:func:`fedavg_canary_steps`
    :class:`~privaudit.learners.FedAvgDPSGDRegressor` (replace-one, full participation): canary
    clients hold x = e_{dim+i}, y = −S_i·Y; the learner's ``transcript_`` (every noisy mean it
    publishes) times K/C is the per-round observation, shift ±1.
:func:`fedavg_final_weight_runs`
    Independent FedAvg fits with one canary client each: the canary's final weight (the black-box
    view; zero initialisation, a coordinate only the canary touches).
:func:`opacus_shuffled_canary_steps`
    Opacus with fixed-size shuffled batches (``poisson_sampling=False`` over a shuffling loader),
    the convention Poisson accounting does not cover, and :func:`shuffled_scores`, the exact
    likelihood-ratio score of a Dirac canary that sits in exactly one batch per epoch.
:func:`release_view_scores`
    Local releases (seed 000's modulated transcript, IWP's record release): m clients, each
    releasing the worst-case pair's x (S = −1) or x′ (S = +1) of the learner's release view
    (:meth:`tradeoff_setup`), scored by the exact log-likelihood ratio log p(o | x′) − log p(o | x).
    Clients' releases are independent, so the m clients of one protocol run are m independent
    trials.
"""

from __future__ import annotations

import functools
import math
import time
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike
from threadpoolctl import threadpool_limits

from privaudit.mechanisms.accounting import dpsgd_epsilon, gdp_epsilon, zcdp_rho
from privaudit.mechanisms.randomness import RandomLike, draw_seed, resolve_seed, uint32_seed
from privaudit.mechanisms.validation import InvalidInputError, InvalidParameterError, check_int, check_positive

from privaudit.audit.dpsgd.whitebox import CANARY_LABEL, CanarySteps

if TYPE_CHECKING:
    from privaudit.learners.release_view import TradeoffSetup
    from privaudit.mechanisms.external.opacus_canary import OpacusCanaryRuns


def _signs(signs: ArrayLike) -> np.ndarray:
    s = np.asarray(signs, dtype=float).ravel()
    if s.size < 4 or not np.all(np.isin(s, (-1.0, 1.0))):
        raise InvalidInputError(f"signs must be at least 4 values of ±1, got shape {s.shape}")
    return s


def _dirac_problem(n_data: int, dim: int, signs: np.ndarray, rng: np.random.Generator):
    """Features (n_data + m, dim + m) and labels: ordinary rows, then canary i = (e_{dim+i}, −S_i·Y)."""
    m = signs.size
    X = np.zeros((n_data + m, dim + m))
    X[:n_data, :dim] = rng.standard_normal((n_data, dim))
    X[n_data + np.arange(m), dim + np.arange(m)] = 1.0
    y_data = X[:n_data, :dim] @ np.linspace(1.0, -1.0, dim) + 0.1 * rng.standard_normal(n_data)
    return X, np.concatenate([y_data, -signs * CANARY_LABEL])


def conddp_canary_steps(signs: ArrayLike, *, epsilon: float, delta: float = 1e-5, epochs: int = 10,
                        n_data: int = 20, dim: int = 3, clip: float = 1.0, lr: float = 0.01,
                        optimizer: str = "adam", switch_epoch: int | None = None, noise_scale: float = 1.0,
                        rng: RandomLike = None) -> CanarySteps:
    """One Cond-DP fit (full batch, label DP) with m Dirac label canaries; every noisy step observed.

    Parameters
    ----------
    signs : array-like of ±1, shape (m,)
        Canary i's label is −S_i·Y: its clipped gradient is +S_i·c along its own coordinate.
    epsilon, delta : float
        The learner's target (its claim).
    epochs : int
        T full-batch steps.
    n_data, dim : int
        Ordinary rows and their public features.
    clip, lr : float
        The learner's clip norm c and learning rate.
    optimizer : {"adam", "sgd"}
        The learner's optimiser (DP-Adam by default, as the learner).
    switch_epoch : int, optional
        Switch-Cond-DP's switch (None: Cond-DP throughout).
    noise_scale : float
        Train with the calibrated z times this (< 1: a broken learner whose claim still states z).
    rng : int, Generator, SeedSequence or None
        Seeds the data and the fit.

    Returns
    -------
    CanarySteps
        (T, m) observations, adjacency "label", the claim's z and exact ε.
    """
    from privaudit.learners import CondDPRegressor

    signs = _signs(signs)
    ss, _ = resolve_seed(rng)
    data_ss, fit_ss = ss.spawn(2)
    X, y = _dirac_problem(check_int("n_data", n_data), check_int("dim", dim), signs, np.random.default_rng(data_ss))
    T = check_int("epochs", epochs)
    z, exact = _label_dp_calibration(float(epsilon), float(delta), T)
    scale = check_positive("noise_scale", noise_scale)
    cols = slice(dim, dim + signs.size)
    seen = []

    def observe(info):
        seen.append(info.noisy_sum[0, cols].numpy() / clip)

    # The calibrated z is handed over (the learner would find the same by its own calibration, seconds per fit).
    learner = CondDPRegressor(epsilon=epsilon, delta=delta, clip=clip, epochs=T, lr=lr, optimizer=optimizer,
                              switch_epoch=switch_epoch, fit_intercept=False, noise_multiplier=z * scale,
                              callback=observe, random_state=uint32_seed(fit_ss))
    t0 = time.perf_counter()
    # One BLAS thread: Ĉ's SVD of the (N × N) public matrix is 9x slower when its threads fight other workers.
    with threadpool_limits(limits=1):
        learner.fit(X, y)
    seconds = time.perf_counter() - t0
    return CanarySteps(np.asarray(seen), signs, z * scale, z, 1.0, exact, delta, "label", 1, seconds)


@functools.lru_cache(maxsize=16)
def _label_dp_calibration(epsilon: float, delta: float, steps: int) -> tuple[float, float]:
    """(z, exact ε) of T full-batch label-DP steps at the target: the learner's own calibration, once per target."""
    from privaudit.learners.dpsgd import claim_for, resolve_noise_multiplier

    z = resolve_noise_multiplier(epsilon, delta, steps, sampling_rate=1.0, adjacency="label")
    return z, claim_for(z, steps, delta, sampling_rate=1.0, adjacency="label").epsilon


def _fedavg_train_epsilon(epsilon: float, delta: float, noise_scale: float) -> float:
    """The ε whose (exact, Gaussian-conversion) calibration gives σ·noise_scale: μ/noise_scale-GDP."""
    if noise_scale == 1.0:
        return epsilon
    mu = math.sqrt(2 * zcdp_rho(epsilon, delta, "gaussian"))
    return gdp_epsilon(mu / noise_scale, delta)


def fedavg_canary_steps(signs: ArrayLike, *, epsilon: float, delta: float = 1e-5, rounds: int = 10,
                        n_data: int = 20, dim: int = 3, clip: float = 1.0, learning_rate: float = 0.1,
                        noise_scale: float = 1.0, rng: RandomLike = None) -> CanarySteps:
    """One FedAvg DP-SGD fit with m Dirac canary clients; its published transcript is the observation.

    Parameters
    ----------
    signs : array-like of ±1, shape (m,)
        Canary client i holds (e_{dim+i}, −S_i·Y): its clipped gradient is +S_i·C on its coordinate.
    epsilon, delta : float
        The learner's target (its claim, replace-one, exact Gaussian conversion).
    rounds : int
        T rounds (full participation).
    n_data, dim : int
        Ordinary clients and their features.
    clip, learning_rate : float
        The learner's clip norm C and step size.
    noise_scale : float
        Train with σ·noise_scale (< 1: a broken learner whose claim still states σ).
    rng : int, Generator, SeedSequence or None

    Returns
    -------
    CanarySteps
        (T, m) observations K·release_t/C, adjacency "replace-one", q = 1.
    """
    from privaudit.learners import FedAvgDPSGDRegressor

    signs = _signs(signs)
    ss, _ = resolve_seed(rng)
    data_ss, fit_ss = ss.spawn(2)
    X, y = _dirac_problem(check_int("n_data", n_data), check_int("dim", dim), signs, np.random.default_rng(data_ss))
    T = check_int("rounds", rounds)
    scale = check_positive("noise_scale", noise_scale)
    learner = FedAvgDPSGDRegressor(epsilon=_fedavg_train_epsilon(epsilon, delta, scale), delta=delta, clip=clip,
                                   learning_rate=learning_rate, rounds=T, random_state=uint32_seed(fit_ss))
    t0 = time.perf_counter()
    learner.fit(X, y)
    seconds = time.perf_counter() - t0
    K = X.shape[0]
    steps = learner.transcript_[:, dim:dim + signs.size] * K / clip
    z_run = float(learner.round_sigma_[0]) / clip
    z_claim = z_run / scale
    # The claim: exactly μ-GDP with μ = 2√T/z (replace-one moves the clipped sum by 2C).
    exact = dpsgd_epsilon(z_claim / math.sqrt(T), 1, delta, sampling_rate=1.0, adjacency="replace-one")
    return CanarySteps(steps, signs, z_run, z_claim, 1.0, exact, delta, "replace-one", 1, seconds)


def fedavg_final_weight_runs(runs: int, *, epsilon: float, delta: float = 1e-5, rounds: int = 10,
                             n_data: int = 20, dim: int = 3, clip: float = 1.0, learning_rate: float = 0.1,
                             noise_scale: float = 1.0, rng: RandomLike = None) -> tuple[np.ndarray, np.ndarray, float]:
    """``runs`` independent FedAvg fits with one canary client each: its final weight (black box).

    The first half of the runs have the canary's label −Y (S = +1), the second half +Y. Every fit
    starts from β = 0 and the canary's coordinate is touched by no other client, so the final
    weight −η·Σ_t release_t carries the whole white-box statistic (while inside the projection ball).

    Parameters
    ----------
    runs : int
        Independent fits (≥ 8).
    epsilon, delta, rounds, n_data, dim, clip, learning_rate, noise_scale :
        As :func:`fedavg_canary_steps`.
    rng : int, Generator, SeedSequence or None

    Returns
    -------
    scores_pos, scores_neg : ndarray
        Minus the canary's final weight (higher: S = +1), per run of each side.
    seconds : float
        Wall time of the fits.
    """
    from privaudit.learners import FedAvgDPSGDRegressor

    runs = check_int("runs", runs, minimum=8)
    half = runs // 2
    signs = np.concatenate([np.ones(half), -np.ones(runs - half)])
    ss, _ = resolve_seed(rng)
    data_ss, fit_ss = ss.spawn(2)
    X, y = _dirac_problem(check_int("n_data", n_data), check_int("dim", dim), signs[:1],
                          np.random.default_rng(data_ss))
    scale = check_positive("noise_scale", noise_scale)
    eps_train = _fedavg_train_epsilon(epsilon, delta, scale)
    seeds = fit_ss.spawn(runs)
    scores = np.empty(runs)
    t0 = time.perf_counter()
    for r in range(runs):  # one learner fit per run: the learner is audited as it is, not a re-implementation
        y[-1] = -signs[r] * CANARY_LABEL
        fit = FedAvgDPSGDRegressor(epsilon=eps_train, delta=delta, clip=clip, learning_rate=learning_rate,
                                   rounds=check_int("rounds", rounds), random_state=uint32_seed(seeds[r])).fit(X, y)
        scores[r] = -fit.coef_[dim]
    return scores[:half], scores[half:], time.perf_counter() - t0


def opacus_spec_canary_steps(spec: OpacusCanaryRuns, signs: ArrayLike, *, noise_scale: float = 1.0,
                             rng: RandomLike = None) -> CanarySteps:
    """One Opacus run of an already calibrated configuration with m Dirac canaries (add/remove).

    The same run as :func:`~privaudit.audit.dpsgd.whitebox.opacus_canary_steps` with the
    same arguments, without recalibrating z: Opacus' RDP calibration under Poisson sampling costs
    more than the run itself, and every run of an audit shares it.

    Parameters
    ----------
    spec : OpacusCanaryRuns
        The configuration (its calibrated z, q, epochs, per-sample gradient engine, set-up and claim).
    signs : array-like of ±1, shape (m,)
        Canary i is in the data iff S_i = +1.
    noise_scale : float
        Train with z·noise_scale.
    rng : int, Generator, SeedSequence or None

    Returns
    -------
    CanarySteps
        Adjacency "add-remove"; ``epsilon_exact`` is dp_accounting's PLD ε of the calibrated z.
    """
    from privaudit.mechanisms.external.opacus_canary import train_opacus_canaries

    s = _signs(signs)
    z = spec.calibrated_noise_multiplier
    z_run = z * check_positive("noise_scale", noise_scale)
    t0 = time.perf_counter()
    run = train_opacus_canaries(s > 0, noise_multiplier=z_run, n_data=spec.n_data, dim=spec.dim, clip=spec.clip,
                                lr=spec.lr, epochs=spec.epochs, sample_rate=spec.sample_rate,
                                grad_sample_mode=spec.grad_sample_mode, delta=spec.claim.delta,
                                accountant=spec.accountant, rng=rng)
    seconds = time.perf_counter() - t0
    return CanarySteps(run.steps, s, z_run, z, spec.sample_rate, _opacus_exact(spec), spec.claim.delta,
                       "add-remove", 1, seconds)


def _opacus_exact(spec: OpacusCanaryRuns) -> float:
    """dp_accounting's PLD ε of the calibrated z (the claim's noise), whatever z a run trains with."""
    return _add_remove_epsilon(spec.calibrated_noise_multiplier, spec.steps, spec.claim.delta, spec.sample_rate)


@functools.lru_cache(maxsize=16)
def _add_remove_epsilon(z: float, steps: int, delta: float, q: float) -> float:
    """Cached: every run of an audit shares its configuration, and the subsampled PLD takes seconds."""
    return dpsgd_epsilon(z, steps, delta, sampling_rate=q, adjacency="add-remove")


def opacus_shuffled_canary_steps(signs: ArrayLike, *, noise_multiplier: float, sample_rate: float, epochs: int = 10,
                                 grad_sample_mode: str = "hooks", n_data: int = 20, clip: float = 1.0,
                                 lr: float = 0.05, delta: float = 1e-5, rng: RandomLike = None) -> tuple[np.ndarray,
                                                                                                         float, float]:
    """One Opacus run over fixed-size shuffled batches (batch round(q·N)), m Dirac canaries (add/remove).

    Parameters
    ----------
    signs : array-like of ±1, shape (m,)
        Canary i is in the data iff S_i = +1.
    noise_multiplier : float
        z the run is trained with.
    sample_rate : float
        q < 1: the batch size is round(q·N) (N rows in the run).
    epochs : int
        Passes over the data; each is a fresh permutation.
    grad_sample_mode : {"hooks", "functorch", "ghost"}
    n_data : int
    clip, lr : float
    delta : float
        δ of Opacus' reported ε.
    rng : int, Generator, SeedSequence or None

    Returns
    -------
    steps : ndarray (T, m)
        Canary coordinates of the noisy gradient sum, units of −c (an included canary adds +1 in its batch).
    epsilon : float
        The ε Opacus' accountant reports after the run.
    seconds : float
    """
    from privaudit.mechanisms.external.opacus_canary import train_opacus_canaries

    s = _signs(signs)
    if not 0.0 < sample_rate < 1.0:
        raise InvalidParameterError(f"sample_rate must lie in (0, 1) for shuffled batches, got {sample_rate!r}")
    t0 = time.perf_counter()
    run = train_opacus_canaries(s > 0, noise_multiplier=noise_multiplier, n_data=n_data, clip=clip, lr=lr,
                                epochs=epochs, sample_rate=sample_rate, grad_sample_mode=grad_sample_mode,
                                delta=delta, sampling="shuffle", rng=draw_seed(rng))
    return run.steps, run.epsilon, time.perf_counter() - t0


def shuffled_scores(steps: ArrayLike, noise_multiplier: float, epochs: int) -> np.ndarray:
    """Exact log-likelihood ratio of each canary under shuffling: Σ_epochs log Σ_{t ∈ epoch} exp(o_t/z²).

    Under shuffled batches an included Dirac canary shifts exactly one step of each epoch by 1
    (its batch, uniformly placed), an excluded one none; the likelihood ratio of one epoch's k
    observations is (1/k)·Σ_t exp((o_t − ½)/z²). Constants are dropped (the score ranks canaries).

    Parameters
    ----------
    steps : array (T, m)
        Observations, T = epochs·k.
    noise_multiplier : float
        z (the claimed one: the auditor knows it).
    epochs : int
        Number of epochs (T must be a multiple).

    Returns
    -------
    ndarray (m,)
    """
    o = np.asarray(steps, dtype=float)
    epochs = check_int("epochs", epochs)
    if o.ndim != 2 or o.shape[0] % epochs:
        raise InvalidInputError(f"steps must be (epochs·k, m) with epochs={epochs}, got shape {o.shape}")
    z2 = check_positive("noise_multiplier", noise_multiplier) ** 2
    per_epoch = o.reshape(epochs, o.shape[0] // epochs, o.shape[1]) / z2
    top = per_epoch.max(axis=1, keepdims=True)  # log-sum-exp, stable
    return (top[:, 0] + np.log(np.exp(per_epoch - top).sum(axis=1))).sum(axis=0)


def shuffled_pair_epsilon(noise_multiplier: float, batches: int, epochs: int, delta: float, *, n: int = 1_000_000,
                          rng: RandomLike = None) -> tuple[float, int]:
    """ε(δ) of the Dirac canary pair under shuffled batches, by Monte Carlo of its privacy loss (both directions).

    Per epoch the canary coordinate shows k = ``batches`` observations N(0, z²); with the canary
    (add/remove) exactly one of them, uniformly placed, is shifted by 1. The privacy loss is
    L = Σ_epochs log((1/k)·Σ_t exp((o_t − ½)/z²)), and ε(δ) is the least ε with
    max(E_in[(1 − e^{ε−L})₊], E_out[(1 − e^{ε+L})₊]) ≤ δ, both expectations estimated from ``n``
    draws. This is the ε of this pair (a lower bound on the shuffled mechanism's ε), up to Monte
    Carlo error; for k = 1 it is the Gaussian mechanism's exactly.

    Parameters
    ----------
    noise_multiplier : float
        z.
    batches : int
        k batches per epoch.
    epochs : int
        Epochs (independent permutations).
    delta : float
        δ in (0, 1).
    n : int
        Monte Carlo draws per direction.
    rng : int, Generator, SeedSequence or None

    Returns
    -------
    epsilon : float
    tail : int
        Draws of the "in" side with L above ε (the estimate's effective sample: its relative error
        in δ is about 1/√tail).
    """
    z = check_positive("noise_multiplier", noise_multiplier)
    k, epochs, n = check_int("batches", batches), check_int("epochs", epochs), check_int("n", n, minimum=1000)
    gen = np.random.default_rng(draw_seed(rng))
    chunk = max(1, 4_000_000 // (k * epochs))
    loss_in, loss_out = [], []
    for start in range(0, n, chunk):  # chunks bound the memory at ~32 MB of normals
        size = min(chunk, n - start)
        noise = z * gen.standard_normal((2, size, epochs, k))
        where = gen.integers(0, k, (size, epochs))
        shifted = noise[0].copy()
        np.put_along_axis(shifted, where[..., None], np.take_along_axis(shifted, where[..., None], -1) + 1.0, -1)
        for out, o in ((loss_in, shifted), (loss_out, noise[1])):
            a = (o - 0.5) / z**2
            top = a.max(-1)
            out.append((top + np.log(np.exp(a - top[..., None]).sum(-1)) - math.log(k)).sum(-1))
    # Each direction's privacy losses sorted once, with suffix sums of e^{−ℓ}: then
    # δ(ε) = (#{ℓ > ε} − e^ε·Σ_{ℓ > ε} e^{−ℓ})/n costs one binary search per ε.
    sides = []
    for losses in (np.concatenate(loss_in), -np.concatenate(loss_out)):
        ell = np.sort(losses)
        top = ell[-1]
        tail_sums = np.cumsum(np.exp(top - ell)[::-1])[::-1]  # Σ_{j ≥ i} e^{top − ℓ_j}, no overflow
        sides.append((ell, top, np.append(tail_sums, 0.0)))

    def delta_of(eps: float) -> float:
        worst = 0.0
        for ell, top, tail_sums in sides:
            i = np.searchsorted(ell, eps, side="right")
            worst = max(worst, ((ell.size - i) - math.exp(eps - top) * tail_sums[i]) / ell.size)
        return worst

    lo, hi = 0.0, float(max(sides[0][1], sides[1][1], 1.0))
    for _ in range(60):  # δ(ε) is decreasing: bisection
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if delta_of(mid) > delta else (lo, mid)
    return hi, int(sides[0][0].size - np.searchsorted(sides[0][0], hi, side="right"))


def poisson_scores(steps: ArrayLike, noise_multiplier: float, sampling_rate: float) -> np.ndarray:
    """Exact log-likelihood ratio of each canary under Poisson sampling: Σ_t log(1 − q + q·exp((o_t − ½)/z²)).

    An included Dirac canary shifts each step by 1 with probability q, independently (add/remove);
    the sum Σ_t o_t is the likelihood ratio only for q = 1.

    Parameters
    ----------
    steps : array (T, m)
        Observations in units of c.
    noise_multiplier : float
        z (the claimed one).
    sampling_rate : float
        q in (0, 1].

    Returns
    -------
    ndarray (m,)
    """
    o = np.asarray(steps, dtype=float)
    z2 = check_positive("noise_multiplier", noise_multiplier) ** 2
    q = float(sampling_rate)
    if not 0.0 < q <= 1.0:
        raise InvalidParameterError(f"sampling_rate must lie in (0, 1], got {sampling_rate!r}")
    # log(1 − q + q·e^a) = logaddexp(log(1 − q), log q + a), stable for large a
    a = (o - 0.5) / z2
    return (np.logaddexp(np.log1p(-q), np.log(q) + a) if q < 1 else a).sum(axis=0)


def release_view_scores(setup: TradeoffSetup, signs: ArrayLike, rng: RandomLike = None) -> np.ndarray:
    """Log-likelihood-ratio scores of m clients releasing x′ (S = +1) or x (S = −1) of a view's pair.

    Parameters
    ----------
    setup : TradeoffSetup
        A release view's worst-case pair (``mechanism``, ``x``, ``x_prime``); the mechanism must have
        ``sample(x, n, rng)`` and ``log_density(outputs, x)``.
    signs : array-like of ±1, shape (m,)
        The clients' bits.
    rng : int, Generator, SeedSequence or None
        Source of the releases' noise.

    Returns
    -------
    ndarray (m,)
        log p(o_i | x′) − log p(o_i | x), in the order of ``signs``.
    """
    s = _signs(signs)
    mech = setup.mechanism
    if not callable(getattr(mech, "log_density", None)):
        raise InvalidParameterError(f"the view's mechanism {mech!r:.80} has no log_density: no likelihood-ratio score")
    gen = np.random.default_rng(draw_seed(rng))
    scores = np.empty(s.size)
    for side, x in ((1.0, setup.x_prime), (-1.0, setup.x)):
        idx = np.flatnonzero(s == side)
        if idx.size:
            out = mech.sample(x, idx.size, gen)
            scores[idx] = mech.log_density(out, setup.x_prime) - mech.log_density(out, setup.x)
    return scores


__all__ = ["conddp_canary_steps", "fedavg_canary_steps", "fedavg_final_weight_runs", "opacus_shuffled_canary_steps",
           "opacus_spec_canary_steps",
           "poisson_scores", "release_view_scores", "shuffled_pair_epsilon", "shuffled_scores"]
