"""White-box DP-SGD audits with Dirac gradient canaries: every update visible, one run (or a few).

Canaries (Nasr et al. 2023, "Tight auditing of differentially private machine learning":
gradient canaries in the white-box threat model). A linear model with ``dim`` data
coordinates and one private coordinate per canary is trained; canary i is the input
e_{dim+i}, used by no other row, with a label so large that its squared-loss gradient is
clipped to exactly ±c·e_{dim+i} at every step (a Dirac gradient). Coordinate dim+i of each
released noisy gradient sum, divided by c, is then the per-step observation

    o_{t,i} = κ_i·B_{t,i} + z·ξ_{t,i},    B ~ Bernoulli(q),  ξ ~ N(0, 1),

whose shift κ_i between neighbouring inputs is the claim's sensitivity in units of c:

* our engine (:func:`engine_canary_steps`), label DP: the canary's label is ±Y (S_i = ±1),
  so κ = ±1 and the two neighbours differ by 2c, exactly the replace-one sensitivity the
  claim is accounted with;
* Opacus (:func:`opacus_canary_steps`), add/remove: the canary is in (S_i = +1, κ = 1) or
  out (κ = 0), Opacus' relation.

Two estimates, side by side (:func:`whitebox_audit`):

``per-step, composed (assumption-labelled)``
    Assumption (full batch): each step's observation is o_{t,i} = x_i·d + σξ_{t,i}, ξ iid
    N(0, 1), with x_i = S_i (label) or [S_i = +1] (add/remove): centred noise, one σ for every
    step and canary. Least squares through the origin gives d̂ and σ̂, and t = d̂√(Σx²)/σ̂ is
    exactly noncentral t, so inverting it gives an exact lower confidence bound on d/σ
    (:func:`shift_to_noise_lower`); z̄ = σ/d at that bound, in units of the claim's clip norm,
    and ε̲ is the claim's own accounting of T steps with z̄ (dp_accounting's PLD,
    :func:`~privaudit.mechanisms.accounting.dpsgd_epsilon`; for full batch exactly μ-GDP with
    μ = κ√T/z). All m·T observations of a run inform one number; the bound's error in μ is
    ≈ κ/√(Σ_i x_i²) (2/√(canaries·runs) for label canaries), so two runs of 20 000 label
    canaries put ε̲ within 10 % of ε at ε = 2. Poisson steps (q < 1): a bootstrap of the
    canaries instead (asymptotic).
``composed test, Clopper–Pearson (assumption-free)``
    :func:`engine_canary_runs`: R independent runs of the engine (vectorised), one canary each,
    scored by Σ_t o_t (the likelihood ratio of full-batch steps), and
    :func:`~privaudit.audit.stats.epsilon_bounds.clopper_pearson_bound` on half the runs with
    the threshold chosen on the other half. Valid for any mechanism; bounded by the runs
    (ε̲ ≲ ln(R/ln(1/(1 − c)))).

The one-run bounds of :mod:`privaudit.audit.engines.one_run` read the same observations.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
import torch

from privaudit.learners.dpsgd import DPSGDEngine, claim_for, train_linear_dpsgd_runs
from privaudit.mechanisms.accounting import dpsgd_epsilon
from privaudit.mechanisms.randomness import RandomLike, draw_seed, torch_generator, torch_seed
from privaudit.mechanisms.validation import (
    InvalidInputError,
    InvalidParameterError,
    check_array,
    check_delta,
    check_int,
    check_positive,
)

from privaudit.audit.stats.epsilon_bounds import clopper_pearson_bound

#: Canary label magnitude: the canary's gradient 2(θ_i ∓ Y) keeps its sign and is clipped for |θ_i| ≪ Y.
CANARY_LABEL = 1e3
#: Sensitivity of one changed example in units of the clip norm, per adjacency (dp_accounting's convention).
KAPPA = {"label": 2.0, "replace-one": 2.0, "add-remove": 1.0}


@dataclass(frozen=True)
class CanarySteps:
    """Per-step canary observations of one training run.

    Attributes
    ----------
    steps : ndarray (T, m)
        o_{t,i}: canary i's coordinate of the t-th noisy gradient sum, in units of c, signed so
        that an included / positive canary adds +1 when sampled.
    signs : ndarray (m,) of ±1
        The canaries' secret bits.
    noise_multiplier : float
        z the run was trained with.
    claim_noise_multiplier : float
        z of the claim (differs from ``noise_multiplier`` only for a deliberately broken run).
    sampling_rate : float
    epsilon_exact : float
        ε of the claim (z of the claim, q, T) by dp_accounting's PLD.
    delta : float
    adjacency : str
    runs : int
        Training runs the observations came from.
    seconds : float
        Wall time of the training.
    """

    steps: np.ndarray
    signs: np.ndarray
    noise_multiplier: float
    claim_noise_multiplier: float
    sampling_rate: float
    epsilon_exact: float
    delta: float
    adjacency: str
    runs: int
    seconds: float


def _canary_problem(n_data: int, dim: int, signs: np.ndarray, gen: torch.Generator):
    """Features (n_data + m, dim + m) and labels of the data rows and the canaries (label −s·Y: gradient +s·c)."""
    m = signs.shape[-1]
    X = np.zeros((n_data + m, dim + m))
    X[:n_data, :dim] = torch.randn(n_data, dim, generator=gen, dtype=torch.float64).numpy()
    X[n_data + np.arange(m), dim + np.arange(m)] = 1.0
    beta = np.linspace(1.0, -1.0, dim)
    noise = torch.randn(n_data, generator=gen, dtype=torch.float64).numpy()
    y_data = X[:n_data, :dim] @ beta + 0.1 * noise
    y = np.concatenate([np.broadcast_to(y_data, signs.shape[:-1] + (n_data,)), -signs * CANARY_LABEL], axis=-1)
    return X, y


#: Canaries per block of the engine's clipped sum (see :func:`engine_canary_steps`): a block's
#: identity features are block² floats, so memory stays O(m·block) instead of O(m²).
CANARY_BLOCK = 512


def engine_canary_steps(signs: ArrayLike, *, epsilon: float, delta: float = 1e-5, epochs: int = 10,
                        batch_size: int | None = None, n_data: int = 20, dim: int = 3, clip: float = 1.0,
                        lr: float = 0.05, noise_scale: float = 1.0,
                        rng: int | np.random.Generator | torch.Generator | None = None) -> CanarySteps:
    """One run of our DP-SGD engine (label DP, SGD) with m Dirac canaries of signs ``signs``.

    The engine's own loop trains the model (:meth:`~privaudit.learners.dpsgd.DPSGDEngine.train_flat`:
    its calibration, Poisson masks, float-safe noise and SGD step), and the clipped sum is the
    engine's linear one (:func:`~privaudit.mechanisms.clipping.linear_clipped_grad_sum`) applied
    block by block: the data rows on their ``dim`` coordinates, the canaries in blocks of
    :data:`CANARY_BLOCK` on theirs (identity features). The blocks touch disjoint coordinates, so
    the sum is the one over the whole feature matrix (the dense (n + m) × (dim + m) matrix only
    adds exact zeros), without its m² memory: tens of thousands of canaries fit in one run.

    Parameters
    ----------
    signs : array (m,) of ±1
        Canary i's label is −S_i·Y, so its clipped gradient is +S_i·c·e_{dim+i}.
    epsilon, delta : float
        Target of the engine's calibration (the claim).
    epochs, batch_size : int
        T = epochs full-batch steps (``batch_size=None``) or Poisson steps of rate batch_size/n.
    n_data, dim, clip, lr : ordinary rows, their dimension, clip norm c, learning rate.
    noise_scale : float
        Train with z·noise_scale instead of the calibrated z (< 1: a broken mechanism whose
        claim still states z).
    rng : int, Generator, torch.Generator or None

    Returns
    -------
    CanarySteps
    """
    from privaudit.mechanisms.clipping import linear_clipped_grad_sum

    signs = _signs(signs)
    gen = torch_generator(rng, "rng")
    n_data, dim, m = check_int("n_data", n_data), check_int("dim", dim), signs.size
    Xd, y = _canary_rows(n_data, dim, signs, torch_generator(torch_seed(gen)))
    n = n_data + m
    engine = DPSGDEngine(epsilon=epsilon, delta=check_delta(delta), clip=check_positive("clip", clip), epochs=epochs,
                         batch_size=batch_size, adjacency="label", optimizer="sgd")
    z = engine.calibrate(n)
    q, _, T = engine.schedule(n)
    z_run = z * check_positive("noise_scale", noise_scale)
    seen = []

    def observe(info):
        seen.append(info.noisy_sum[dim:].numpy() / clip)

    trainer = DPSGDEngine(epsilon=epsilon, delta=delta, clip=clip, epochs=epochs, lr=lr, batch_size=batch_size,
                          optimizer="sgd", adjacency="label", noise_multiplier=z_run, callback=observe,
                          random_state=gen)
    c = torch.tensor([float(clip)], dtype=torch.float64)
    Y = torch.as_tensor(y)[None]
    xn_data = Xd.norm(dim=1)
    blocks = [slice(a, min(a + CANARY_BLOCK, m)) for a in range(0, m, CANARY_BLOCK)]
    eyes = {b.stop - b.start: torch.eye(b.stop - b.start, dtype=torch.float64) for b in blocks}

    def clipped_sum(theta, mask):
        th = theta[None]
        parts = [linear_clipped_grad_sum(th[:, :dim], Xd, Y[:, :n_data], c,
                                         None if mask is None else mask[:, :n_data], xn_data)[0][0]]
        for b in blocks:  # a few dozen blocks of identity features, not a loop over canaries
            rows = slice(n_data + b.start, n_data + b.stop)
            eye = eyes[b.stop - b.start]
            parts.append(linear_clipped_grad_sum(th[:, dim + b.start: dim + b.stop], eye, Y[:, rows], c,
                                                 None if mask is None else mask[:, rows], eye.diagonal())[0][0])
        return torch.cat(parts)

    t0 = time.perf_counter()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # small blocks: torch's thread pool only oversubscribes shared cores (100x slower, measured)
    try:
        trainer.train_flat(torch.zeros(dim + m, dtype=torch.float64), [("plain", epochs, clipped_sum, None)], n)
    finally:
        torch.set_num_threads(threads)
    seconds = time.perf_counter() - t0
    exact = claim_for(z, T, delta, sampling_rate=q, adjacency="label").epsilon
    return CanarySteps(np.asarray(seen), signs, z_run, z, q, exact, delta, "label", 1, seconds)


def _canary_rows(n_data: int, dim: int, signs: np.ndarray, gen: torch.Generator) -> tuple[torch.Tensor, np.ndarray]:
    """The data rows' features (n_data, dim) and every label (data rows, then canaries): as :func:`_canary_problem`."""
    Xd = torch.randn(n_data, dim, generator=gen, dtype=torch.float64)
    beta = np.linspace(1.0, -1.0, dim)
    noise = torch.randn(n_data, generator=gen, dtype=torch.float64).numpy()
    return Xd, np.concatenate([Xd.numpy() @ beta + 0.1 * noise, -signs * CANARY_LABEL])


def opacus_canary_steps(signs: ArrayLike, *, epsilon: float, delta: float = 1e-5, epochs: int = 10,
                        sample_rate: float = 1.0, grad_sample_mode: str = "hooks", n_data: int = 20,
                        clip: float = 1.0, lr: float = 0.05, noise_scale: float = 1.0,
                        rng: int | np.random.Generator | torch.Generator | None = None) -> CanarySteps:
    """One Opacus run (``PrivacyEngine``, add/remove) with m Dirac canaries, canary i in iff S_i = +1.

    Opacus calibrates z for the target (its RDP accountant); ``epsilon_exact`` is dp_accounting's
    PLD ε of that z (Opacus' own ε is looser). ``noise_scale`` trains with z·noise_scale.
    Other parameters as :func:`engine_canary_steps` and
    :func:`~privaudit.mechanisms.external.opacus_canary.train_opacus_canaries`.

    Parameters
    ----------
    signs : array-like of ±1, shape (m,)
        Canary bits S_i (m ≥ 4), drawn before training.
    epsilon : float
        Target ε of the calibration (the claim).
    delta : float
        Target δ.
    epochs : int
        Passes over the data (full batch: T = epochs steps).
    sample_rate : float
        Poisson rate q in (0, 1] (1: full batch).
    grad_sample_mode : {"hooks", "functorch", "ghost"}
        Opacus' per-sample gradient mode.
    n_data : int
        Ordinary training rows besides the canaries.
    clip : float
        Clip norm c > 0.
    lr : float
        Learning rate > 0.
    noise_scale : float
        Train with z·noise_scale instead of the calibrated z (< 1: a broken mechanism whose claim still states z).
    rng : int, Generator, torch.Generator or None
        Seeds the data, the batches and the noise.

    Returns
    -------
    CanarySteps
    """
    from privaudit.mechanisms.external.opacus_canary import OpacusCanaryRuns, train_opacus_canaries

    signs = _signs(signs)
    spec = OpacusCanaryRuns(epsilon=epsilon, delta=delta, epochs=epochs, sample_rate=sample_rate,
                            grad_sample_mode=grad_sample_mode, n_data=n_data, clip=clip, lr=lr)
    z = spec.noise_multiplier
    z_run = z * check_positive("noise_scale", noise_scale)
    t0 = time.perf_counter()
    run = train_opacus_canaries(signs > 0, noise_multiplier=z_run, n_data=n_data, clip=clip, lr=lr, epochs=epochs,
                                sample_rate=sample_rate, grad_sample_mode=grad_sample_mode, delta=delta, rng=rng)
    seconds = time.perf_counter() - t0
    return CanarySteps(run.steps, signs, z_run, z, spec.sample_rate, spec.exact_epsilon(delta), delta, "add-remove",
                       1, seconds)


def _signs(signs) -> np.ndarray:
    s = check_array("signs", signs, ndim=1)
    if s.size < 4 or not np.all(np.isin(s, (-1.0, 1.0))):
        raise InvalidInputError(f"signs must be at least 4 values of ±1, got shape {s.shape}")
    return s


def random_signs(m: int, rng: RandomLike = None) -> np.ndarray:
    """m independent uniform ±1 canary bits (drawn before training, as the one-run audits require).

    Parameters
    ----------
    m : int
        Number of canaries.
    rng : int, Generator, SeedSequence or None
        One seed is drawn from it.

    Returns
    -------
    ndarray of shape (m,)
    """
    return np.random.default_rng(draw_seed(rng)).choice(np.array([-1.0, 1.0]), size=check_int("m", m))


def concatenate(runs: list[CanarySteps]) -> CanarySteps:
    """The canaries of several runs of one configuration, side by side (runs add up).

    Parameters
    ----------
    runs : list of CanarySteps
        Runs of one configuration (at least one).

    Returns
    -------
    CanarySteps
        Steps side by side; ``runs`` and ``seconds`` summed.

    Raises
    ------
    InvalidParameterError
        For an empty list.
    """
    if not runs:
        raise InvalidParameterError("concatenate needs at least one run")
    first = runs[0]
    return CanarySteps(np.concatenate([r.steps for r in runs], axis=1), np.concatenate([r.signs for r in runs]),
                       first.noise_multiplier, first.claim_noise_multiplier, first.sampling_rate, first.epsilon_exact,
                       first.delta, first.adjacency, sum(r.runs for r in runs), sum(r.seconds for r in runs))


@dataclass(frozen=True)
class WhiteboxEstimate:
    """The per-step, composed estimate (assumption-labelled) of :func:`whitebox_audit`.

    Attributes
    ----------
    epsilon : float
        ε̲: the claim's accounting of T steps with the upper confidence bound of ẑ.
    epsilon_hat : float
        ε̂ from the point estimate ẑ.
    noise_multiplier_hat, noise_multiplier_upper : float
        ẑ = σ̂/Δ̂ and its bootstrap upper bound.
    epsilon_exact : float
        ε of the claim.
    steps, canaries, runs : int
    confidence : float
    assumption : str
    """

    epsilon: float
    epsilon_hat: float
    noise_multiplier_hat: float
    noise_multiplier_upper: float
    epsilon_exact: float
    steps: int
    canaries: int
    runs: int
    confidence: float
    assumption: str


ASSUMPTION = ("each step's canary-coordinate observation is N(x·d, σ²), independent over steps and canaries "
              "(x = ±1 by label, 1/0 in/out; centred noise, one σ; full batch)")
#: The assumption of the Poisson-sampled (q < 1) variant, whose bound is a bootstrap (asymptotic).
ASSUMPTION_SAMPLED = ("each step's canary-direction observation is Gaussian with one σ for all steps and canaries, "
                      "shifted with the claim's sampling probability q (bootstrap bound, asymptotic)")


def _design(signs: np.ndarray, adjacency: str) -> np.ndarray:
    """x_i of the linear model o = x_i·d + σξ: S_i under replace-one/label, [S_i = +1] under add/remove."""
    return (signs > 0).astype(float) if adjacency == "add-remove" else signs


def shift_to_noise_lower(steps: ArrayLike, x: ArrayLike, confidence: float) -> tuple[float, float, int]:
    """Exact lower confidence bound on d/σ in the model o_{t,i} = x_i·d + σ·ξ_{t,i}, ξ iid N(0, 1).

    Least squares through the origin over the N = T·m observations: d̂ = Σ x·o / Σx²,
    σ̂² = Σ(o − x·d̂)²/(N − 1), independent of d̂, so t = d̂·√(Σx²)/σ̂ is noncentral t with
    N − 1 degrees of freedom and noncentrality λ = (d/σ)·√(Σx²) (exactly, for any N). The bound
    is λ̲/√(Σx²), with λ̲ the λ whose distribution puts t at its ``confidence`` quantile
    (P(λ̲ ≤ λ) = confidence: the cdf of t at the observed value falls in λ).

    Parameters
    ----------
    steps : array (T, m)
        Observations.
    x : array (m,)
        Each canary's regressor (not all zero).
    confidence : float
        In (0.5, 1).

    Returns
    -------
    (float, float, int)
        The lower bound on d/σ, the point estimate d̂/σ̂, and N − 1.
    """
    from scipy.optimize import brentq
    from scipy.stats import nct

    o = np.asarray(steps, dtype=float)
    x = np.asarray(x, dtype=float)
    T = o.shape[0]
    sxx = T * float(x @ x)
    if sxx == 0:
        raise InvalidInputError("the design has no non-zero regressor: no canary shows the shift")
    d_hat = float(o.sum(0) @ x) / sxx
    df = o.size - 1
    sigma_hat = math.sqrt(float(((o - x * d_hat) ** 2).sum()) / df)
    t = d_hat * math.sqrt(sxx) / sigma_hat
    # cdf(t; λ) falls from 1 to 0 as λ grows; t's standard error is √(1 + λ²/2df), so the bracket
    # t ± (8 s.e. + 1) holds the root. Far in a tail scipy's cdf can return NaN: there it is 1 (λ < t) or 0.

    def excess(lam_: float) -> float:
        p = float(nct.cdf(t, df, lam_))
        return (p if math.isfinite(p) else float(lam_ < t)) - confidence

    width = 8.0 * math.sqrt(1.0 + t * t / (2.0 * df)) + 1.0
    lam = brentq(excess, t - width, t + width, xtol=1e-10)
    return lam / math.sqrt(sxx), d_hat / sigma_hat, df


def _z_hat(steps: np.ndarray, signs: np.ndarray, q: float, adjacency: str) -> float:
    """ẑ = σ̂/Δ̂ (units of the claim's clip norm) from (T, m) observations; ∞ if no positive shift is seen."""
    pos, neg = steps[:, signs > 0], steps[:, signs < 0]
    if adjacency == "add-remove":
        shift = (pos.mean() - neg.mean()) / q
        var = neg.var(ddof=1)  # the excluded canaries show the noise alone
    else:  # replace-one (label): ±shift, both signs carry the Bernoulli part
        shift = (pos.mean() - neg.mean()) / (2 * q)
        within = ((pos.size - 1) * pos.var(ddof=1) + (neg.size - 1) * neg.var(ddof=1)) / (pos.size + neg.size - 2)
        var = within - shift**2 * q * (1 - q)
    if shift <= 0 or var <= 0:
        return math.inf
    return math.sqrt(var) / shift


def _accounted(z: float, steps: int, delta: float, q: float, adjacency: str) -> float:
    if math.isinf(z):
        return 0.0
    if q == 1.0:  # T full-batch Gaussian steps = one step with z/√T (exact)
        return dpsgd_epsilon(z / math.sqrt(steps), 1, delta, sampling_rate=1.0, adjacency=adjacency)
    return dpsgd_epsilon(z, steps, delta, sampling_rate=q, adjacency=adjacency)


def whitebox_estimate(obs: CanarySteps, *, confidence: float = 0.95, n_boot: int = 400,
                      rng: RandomLike = None) -> WhiteboxEstimate:
    """Per-step observations composed under the claim's accounting (the assumption-labelled estimate).

    Full batch (q = 1), the model of :data:`ASSUMPTION`: o_{t,i} = x_i·d + σξ, with x_i = S_i
    (label: the neighbours' gradients differ by 2c) or [S_i = +1] (add/remove). Then ẑ = σ̂/d̂
    in units of the clip norm, the T steps are μ-GDP with μ = κ√T·d/σ (κ = 2 or 1, the
    claim's sensitivity in units of c), and ε̂ and ε̲ are the claim's accounting at ẑ and at
    z̄ = 1/(d/σ)̲ from :func:`shift_to_noise_lower`, an exact (1 − c) lower bound on d/σ: ε is
    decreasing in z, so P(ε̲ ≤ ε) ≥ c under the assumption. The bound's standard error in μ is
    ≈ κ/√(Σ_i x_i²): 2/√(canaries) for label canaries, 1/√(included canaries) for add/remove,
    whatever T (each step adds as much noise as signal).

    Poisson steps (q < 1): the shift and σ from the mean difference of the two signs divided by
    q and the within-sign variance less its Bernoulli part (:data:`ASSUMPTION_SAMPLED`), with a
    percentile bootstrap of the canaries (asymptotic, not exact).

    Parameters
    ----------
    obs : CanarySteps
    confidence : float
        Level c of the lower bound, in (0.5, 1).
    n_boot : int
        Bootstrap replicates (q < 1 only).
    rng : int, Generator or None
        The bootstrap's randomness (q < 1 only).

    Returns
    -------
    WhiteboxEstimate
    """
    if obs.adjacency not in KAPPA:
        raise InvalidParameterError(f"adjacency must be one of {sorted(KAPPA)}, got {obs.adjacency!r}")
    if not 0.5 < confidence < 1.0:
        raise InvalidParameterError(f"confidence must lie in (0.5, 1), got confidence={confidence!r}")
    T, m = obs.steps.shape
    q = obs.sampling_rate
    if q == 1.0:
        lower, point, _ = shift_to_noise_lower(obs.steps, _design(obs.signs, obs.adjacency), confidence)
        z_hat = 1.0 / point if point > 0 else math.inf
        z_up = 1.0 / lower if lower > 0 else math.inf
        assumption = ASSUMPTION
    else:
        z_hat = _z_hat(obs.steps, obs.signs, q, obs.adjacency)
        gen = np.random.default_rng(draw_seed(rng))
        pos, neg = np.flatnonzero(obs.signs > 0), np.flatnonzero(obs.signs < 0)
        # Per-canary sufficient statistics make each replicate O(m), not O(Tm).
        s1, s2 = obs.steps.sum(0), (obs.steps**2).sum(0)
        boots = np.empty(check_int("n_boot", n_boot))
        for b in range(n_boot):
            ip, ineg = gen.choice(pos, pos.size), gen.choice(neg, neg.size)
            boots[b] = _z_from_moments(s1, s2, ip, ineg, T, q, obs.adjacency)
        z_up = float(np.quantile(boots, confidence))
        assumption = ASSUMPTION_SAMPLED
    eps_hat = _accounted(z_hat, T, obs.delta, q, obs.adjacency)
    eps_lb = _accounted(z_up, T, obs.delta, q, obs.adjacency)
    return WhiteboxEstimate(eps_lb, eps_hat, z_hat, z_up, obs.epsilon_exact, T, m, obs.runs, confidence, assumption)


def _z_from_moments(s1, s2, ip, ineg, T, q, adjacency) -> float:
    """:func:`_z_hat` of the canaries ``ip`` (positive) and ``ineg`` (negative) from per-canary sums."""
    n1, n0 = ip.size * T, ineg.size * T
    m1, m0 = s1[ip].sum() / n1, s1[ineg].sum() / n0
    v1 = (s2[ip].sum() - n1 * m1**2) / (n1 - 1)
    v0 = (s2[ineg].sum() - n0 * m0**2) / (n0 - 1)
    if adjacency == "add-remove":
        shift, var = (m1 - m0) / q, v0
    else:
        shift = (m1 - m0) / (2 * q)
        var = ((n1 - 1) * v1 + (n0 - 1) * v0) / (n1 + n0 - 2) - shift**2 * q * (1 - q)
    if shift <= 0 or var <= 0:
        return math.inf
    return math.sqrt(var) / shift


@dataclass(frozen=True)
class RunsBound:
    """Clopper–Pearson ε̲ over independent runs (assumption-free) and what it cost.

    Attributes
    ----------
    epsilon : float
    epsilon_exact : float
    runs : int
        Training runs (half select the threshold, half evaluate it).
    seconds : float
    confidence : float
    fpr, fnr : float
        Empirical rates of the chosen test on the evaluation half.
    """

    epsilon: float
    epsilon_exact: float
    runs: int
    seconds: float
    confidence: float
    fpr: float
    fnr: float


def engine_canary_runs(runs: int, *, epsilon: float, delta: float = 1e-5, epochs: int = 10,
                       batch_size: int | None = None, n_data: int = 20, dim: int = 3, clip: float = 1.0,
                       lr: float = 0.05, noise_scale: float = 1.0, confidence: float = 0.95,
                       view: str = "white-box",
                       rng: int | np.random.Generator | torch.Generator | None = None) -> RunsBound:
    """ε̲ by Clopper–Pearson from ``runs`` independent engine runs with one Dirac canary each.

    Run r has canary sign +1 for the first half of the runs and −1 for the second. The runs are
    trained at once (the engine is vectorised over runs); each has its own batches and noise.
    ``view="white-box"`` scores a run by Σ_t o_t (every update seen); ``"black-box"`` by the final
    model alone: minus the canary's final weight. The canary is an input-space example (the unit
    input e_dim, label ∓Y) and every run starts from the same worst-case initialisation θ = 0, so
    the final weight −lr/(qn)·c·Σ_t o_t carries the whole white-box statistic (SGD on a coordinate
    that only the canary touches). Parameters as :func:`engine_canary_steps`.

    Parameters
    ----------
    runs : int
        Independent runs (≥ 8), half with the canary in, half out.
    epsilon : float
        Target ε of the calibration (the claim).
    delta : float
        Target δ.
    epochs : int
        Passes over the data (full batch: T = epochs steps).
    batch_size : int, optional
        Expected Poisson batch (None: full batch).
    n_data : int
        Ordinary training rows besides the canaries.
    dim : int
        Their dimension.
    clip : float
        Clip norm c > 0.
    lr : float
        Learning rate > 0.
    noise_scale : float
        Train with z·noise_scale instead of the calibrated z (< 1: a broken mechanism whose claim still states z).
    confidence : float
        Confidence of the Clopper–Pearson bound.
    view : {"white-box", "black-box"}
        Score every update or the final model only.
    rng : int, Generator, torch.Generator or None
        Seeds the data, the batches and the noise.

    Returns
    -------
    RunsBound
    """
    runs = check_int("runs", runs, minimum=8)
    if view not in ("white-box", "black-box"):
        raise InvalidParameterError(f"view must be 'white-box' or 'black-box', got view={view!r}")
    half = runs // 2
    signs = np.concatenate([np.ones(half), -np.ones(runs - half)])
    gen = torch_generator(rng, "rng")
    X, y = _canary_problem(check_int("n_data", n_data), check_int("dim", dim), signs[:, None],
                           torch_generator(torch_seed(gen)))
    engine = DPSGDEngine(epsilon=epsilon, delta=check_delta(delta), clip=check_positive("clip", clip), epochs=epochs,
                         batch_size=batch_size, adjacency="label", optimizer="sgd")
    n = X.shape[0]
    z = engine.calibrate(n)
    q, _, T = engine.schedule(n)
    total = np.zeros(runs)

    def observe(info):
        total[:] += info.noisy_sum[:, dim].numpy() / clip

    t0 = time.perf_counter()
    final = train_linear_dpsgd_runs(X, y, epsilon=epsilon, delta=delta, clip=clip, epochs=epochs, lr=lr,
                                    optimizer="sgd", batch_size=batch_size, adjacency="label",
                                    noise_multiplier=z * check_positive("noise_scale", noise_scale),
                                    init=np.zeros(X.shape[1]), callback=observe if view == "white-box" else None,
                                    rng=gen)
    seconds = time.perf_counter() - t0
    if view == "black-box":
        total = -final[:, dim]
    pos, neg = total[:half], total[half:]
    # Threshold chosen on the first half of each sign's runs, evaluated on the second half.
    b = clopper_pearson_bound(neg[: neg.size // 2], pos[: pos.size // 2], neg[neg.size // 2:], pos[pos.size // 2:],
                              delta=delta, confidence=confidence)
    exact = claim_for(z, T, delta, sampling_rate=q, adjacency="label").epsilon
    return RunsBound(float(b.epsilon), exact, runs, seconds, confidence, float(b.fpr), float(b.fnr))


def opacus_canary_runs(runs: int, *, epsilon: float, delta: float = 1e-5, epochs: int = 10,
                       sample_rate: float = 1.0, grad_sample_mode: str = "hooks", clip: float = 1.0,
                       lr: float = 0.05, noise_scale: float = 1.0, confidence: float = 0.95,
                       view: str = "black-box", rng: RandomLike = None) -> RunsBound:
    """ε̲ by Clopper–Pearson from ``runs`` independent Opacus runs with one Dirac canary each.

    Half the runs have the canary in, half out (add/remove); each run is one Opacus model
    (:class:`~privaudit.mechanisms.external.opacus_canary.OpacusCanaryRuns`, zero initialisation,
    the canary an input-space example with its own coordinate). ``view="black-box"`` scores the
    canary's final weight, ``"white-box"`` the sum of its per-step gradient coordinates. The
    threshold is chosen on half the runs of each side and evaluated on the other half.

    Parameters
    ----------
    runs : int
        Training runs (≥ 8), half per hypothesis.
    epsilon, delta : float
        Target handed to Opacus' calibration.
    epochs, sample_rate, grad_sample_mode, clip, lr :
        As :class:`~privaudit.mechanisms.external.opacus_canary.OpacusCanaryRuns`.
    noise_scale : float
        Train with Opacus' calibrated z times this (< 1: a broken configuration).
    confidence : float
    view : {"black-box", "white-box"}
    rng : int, Generator or None

    Returns
    -------
    RunsBound
        ``epsilon_exact`` is dp_accounting's PLD ε of the calibrated z (the claim's noise).
    """
    from privaudit.mechanisms.external.opacus_canary import OpacusCanaryRuns

    runs = check_int("runs", runs, minimum=8)
    if view not in ("white-box", "black-box"):
        raise InvalidParameterError(f"view must be 'white-box' or 'black-box', got view={view!r}")
    spec = OpacusCanaryRuns(epsilon=epsilon, delta=delta, epochs=epochs, sample_rate=sample_rate,
                            grad_sample_mode=grad_sample_mode, clip=clip, lr=lr, mode=view)
    exact = spec.exact_epsilon(delta)
    spec.noise_multiplier *= check_positive("noise_scale", noise_scale)
    ss = np.random.SeedSequence(draw_seed(rng))
    seed_in, seed_out = ss.spawn(2)
    half = runs // 2
    t0 = time.perf_counter()
    pos = spec.sample(1.0, half, np.random.default_rng(seed_in)).sum(1)
    neg = spec.sample(-1.0, runs - half, np.random.default_rng(seed_out)).sum(1)
    seconds = time.perf_counter() - t0
    # Both views grow with an included canary: its clipped gradient is −c, so descent raises its weight.
    b = clopper_pearson_bound(neg[: neg.size // 2], pos[: pos.size // 2], neg[neg.size // 2:], pos[pos.size // 2:],
                              delta=delta, confidence=confidence)
    return RunsBound(float(b.epsilon), exact, runs, seconds, confidence, float(b.fpr), float(b.fnr))


__all__ = ["ASSUMPTION", "ASSUMPTION_SAMPLED", "CANARY_BLOCK", "CANARY_LABEL", "CanarySteps", "RunsBound",
           "WhiteboxEstimate", "concatenate", "engine_canary_runs", "engine_canary_steps", "opacus_canary_runs", "opacus_canary_steps", "random_signs",
           "shift_to_noise_lower", "whitebox_estimate"]
