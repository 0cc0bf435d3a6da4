"""Opacus DP-SGD training runs with gradient canaries, as a privaudit mechanism (``opacus`` 1.6).

The audited object is Opacus itself: its ``PrivacyEngine.make_private`` (per-sample
gradients by hooks, functorch or ghost clipping), its ``DPOptimizer`` (clipping
and noise) and its accountant, whose ε is the claim. privaudit supplies only the
data and reads what an attacker would see.

Canaries (add/remove, Opacus' own neighbouring relation). A linear model
w ∈ R^P (no bias, initialised at 0) is trained with squared loss, summed over the
batch. ``n_data`` ordinary rows use the first ``dim`` coordinates; canary i has
the unit feature e_{dim+i}, used by no other row, and the label Y = 10³. Its
per-sample gradient 2(w_{dim+i} − Y)e_{dim+i} has norm ≫ c while |w| ≪ Y, so
Opacus clips it to exactly −c·e_{dim+i} at every step, and no other row touches
coordinate dim+i. Including the canary (s = +1) or not (s = −1) therefore moves
coordinate dim+i of the noisy gradient sum by c when the canary is sampled, and
Opacus adds N(0, (zc)²) to it: in units of c, step t shows

    o_t = B_t·[s = +1] + z·ξ_t,    B_t ~ Bernoulli(q),

exactly the subsampled-Gaussian step the accountant analyses. The white-box view
is (o_1, …, o_T) read from ``p.grad`` after each ``optimizer.step()``; the
black-box view is the final weight w_{dim+i} = lr·c·Σ_t o_t, which here carries
the same statistic (a property of a dedicated-coordinate canary in a linear model).

Seeding. Opacus draws its noise and Poisson batches from torch generators, which
this module seeds from ``rng`` (never the global torch state): runs are
reproducible, unlike the OpenDP and pydp adapters.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from dataclasses import dataclass

import numpy as np
from dp_accounting import DpEvent, NoOpDpEvent
from numpy.typing import ArrayLike

from ..accounting import dpsgd_epsilon, gaussian_steps_event
from ..claim import PrivacyClaim
from ..randomness import draw_seed, torch_generator, torch_seed
from ..tradeoff import gaussian_tradeoff, tradeoff_from_profile
from ..validation import InvalidParameterError, check_delta, check_epsilon, check_int, check_interval, check_positive
from .errors import import_library, library_errors

LIBRARY = "Opacus"
GRAD_SAMPLE_MODES = ("hooks", "functorch", "ghost")
#: Label of every canary: large enough that its gradient is always clipped with a fixed sign.
CANARY_LABEL = 1e3


def opacus_noise_multiplier(*, epsilon: float, delta: float, sample_rate: float, steps: int,
                            accountant: str = "rdp") -> float:
    """Opacus' own calibration: ``opacus.accountants.utils.get_noise_multiplier``.

    Parameters
    ----------
    epsilon : float
        Target ε > 0.
    delta : float
        δ in (0, 1).
    sample_rate : float
        Poisson sampling rate q in (0, 1].
    steps : int
        Number T of noisy steps.
    accountant : str
        Opacus accountant name (e.g. ``"rdp"``, ``"prv"``).

    Returns
    -------
    float
        z.
    """
    utils = import_library("opacus.accountants.utils", "opacus_noise_multiplier")
    with library_errors("opacus_noise_multiplier", LIBRARY):
        return float(utils.get_noise_multiplier(target_epsilon=check_epsilon(epsilon), target_delta=check_delta(delta),
                                                sample_rate=sample_rate, steps=check_int("steps", steps),
                                                accountant=accountant))


def opacus_epsilon(*, noise_multiplier: float, sample_rate: float, steps: int, delta: float,
                   accountant: str = "rdp") -> float:
    """ε that Opacus' accountant reports after ``steps`` steps (its ``get_epsilon(delta)``).

    Parameters
    ----------
    noise_multiplier : float
        z = σ / clip norm, > 0.
    sample_rate : float
        Poisson sampling rate q in (0, 1].
    steps : int
        Number T of noisy steps.
    delta : float
        δ in (0, 1).
    accountant : str
        Opacus accountant name (e.g. ``"rdp"``, ``"prv"``).

    Returns
    -------
    float
        ε.
    """
    accountants = import_library("opacus.accountants", "opacus_epsilon")
    with library_errors("opacus_epsilon", LIBRARY):
        acc = accountants.create_accountant(accountant)
        acc.history = [(check_positive("noise_multiplier", noise_multiplier), sample_rate, check_int("steps", steps))]
        return float(acc.get_epsilon(delta=check_delta(delta)))


@dataclass(frozen=True)
class CanaryRun:
    """What one Opacus training run shows about its canaries.

    ``steps`` is (T, m): coordinate of each canary in ``p.grad`` after each step,
    in units of −c (so an included, sampled canary adds +1); ``final`` is (m,): the
    final weights of the canary coordinates; ``epsilon`` the ε Opacus' engine
    reports after the run.
    """

    steps: np.ndarray
    final: np.ndarray
    epsilon: float


def train_opacus_canaries(include: ArrayLike, *, noise_multiplier: float, n_data: int = 20, dim: int = 3,
                          clip: float = 1.0, lr: float = 0.05, epochs: int = 10, sample_rate: float = 1.0,
                          grad_sample_mode: str = "hooks", delta: float = 1e-5, accountant: str = "rdp",
                          rng: np.random.Generator | np.random.SeedSequence | int | None = None,
                          sampling: str = "poisson") -> CanaryRun:
    """One Opacus training run with ``len(include)`` canaries, canary i present iff ``include[i]``.

    ``sample_rate = 1`` trains full batch (``poisson_sampling=False``); below 1 the
    batches are Opacus' Poisson ``DPDataLoader`` with a seeded generator (Opacus
    itself would draw them from the global torch generator outside secure mode).

    Parameters
    ----------
    include : array-like of bool, shape (m,)
        Whether each canary is in the training set.
    noise_multiplier : float
        z = σ / clip norm.
    n_data : int
        Ordinary training examples besides the canaries.
    dim : int
        Their feature dimension.
    clip : float
        Per-sample clip norm c > 0.
    lr : float
        SGD learning rate > 0.
    epochs : int
        Passes over the data.
    sample_rate : float
        Poisson sampling rate q in (0, 1].
    grad_sample_mode : {"hooks", "functorch", "ghost"}
        Opacus' per-sample gradient mode.
    delta : float
        δ in (0, 1).
    accountant : str
        Opacus accountant name (e.g. ``"rdp"``, ``"prv"``).
    rng : Generator, SeedSequence, int or None
        Seeds the data, the batches and Opacus' noise generator.
    sampling : {"poisson", "shuffle"}
        Below q = 1: Opacus' Poisson loader, or fixed-size batches of round(q·N) rows from a fresh
        permutation each epoch (a seeded shuffling loader; Opacus' accountant still assumes Poisson).

    Returns
    -------
    CanaryRun

    Raises
    ------
    InvalidParameterError
        For an unknown grad_sample_mode or an out-of-range argument.
    """
    torch = import_library("torch", "train_opacus_canaries")
    opacus = import_library("opacus", "train_opacus_canaries")
    from opacus.data_loader import DPDataLoader

    include = np.asarray(include, dtype=bool).ravel()
    m = include.size
    if grad_sample_mode not in GRAD_SAMPLE_MODES:
        raise InvalidParameterError(f"grad_sample_mode must be one of {GRAD_SAMPLE_MODES}, got {grad_sample_mode!r}")
    q = check_interval("sample_rate", sample_rate, 0.0, 1.0, closed="right")
    gen = torch_generator(rng, "rng")
    data_gen = torch_generator(torch_seed(gen))
    X, y = _canary_data(torch, n_data, dim, include, data_gen)
    model = torch.nn.Linear(dim + m, 1, bias=False, dtype=torch.float64)
    with torch.no_grad():
        model.weight.zero_()
    opt = torch.optim.SGD(model.parameters(), lr=check_positive("lr", lr))
    ds = torch.utils.data.TensorDataset(X, y)
    if sampling not in ("poisson", "shuffle"):
        raise InvalidParameterError(f"sampling must be 'poisson' or 'shuffle', got sampling={sampling!r}")
    if q < 1 and sampling == "shuffle":
        loader = torch.utils.data.DataLoader(ds, batch_size=max(1, round(q * len(ds))), shuffle=True,
                                             generator=data_gen)
    elif q < 1:
        loader = DPDataLoader(ds, sample_rate=q, generator=data_gen)
    else:
        loader = torch.utils.data.DataLoader(ds, batch_size=len(ds))
    kw = dict(module=model, optimizer=opt, data_loader=loader, noise_multiplier=noise_multiplier,
              max_grad_norm=check_positive("clip", clip), poisson_sampling=False, loss_reduction="sum",
              noise_generator=gen, grad_sample_mode=grad_sample_mode)
    with warnings.catch_warnings(), library_errors("train_opacus_canaries", LIBRARY), _one_torch_thread(torch):
        warnings.simplefilter("ignore")  # Opacus warns about secure_mode and the unseeded global RNG
        engine = opacus.PrivacyEngine(accountant=accountant)
        if grad_sample_mode == "ghost":
            model, opt, criterion, loader = engine.make_private(**kw, criterion=torch.nn.MSELoss(reduction="sum"))
        else:
            model, opt, loader = engine.make_private(**kw)
            criterion = torch.nn.MSELoss(reduction="sum")
        cols = slice(dim, dim + m)
        weight = model._module.weight if hasattr(model, "_module") else model.weight
        seen = []
        for _ in range(check_int("epochs", epochs)):  # Opacus trains one model per run: loop over steps
            for xb, yb in loader:
                opt.zero_grad()
                criterion(model(xb).squeeze(-1), yb).backward()
                opt.step()
                seen.append(-weight.grad[0, cols].detach().numpy() / clip)
        eps = float(engine.get_epsilon(delta))
    final = weight.detach()[0, cols].numpy().copy()
    return CanaryRun(np.asarray(seen).reshape(len(seen), m), final, eps)


@contextlib.contextmanager
def _one_torch_thread(torch):
    """One intra-op thread while training: the models are tiny, and several audit workers share the
    cores, so torch's thread pool only oversubscribes them (measured: 3× slower on 2 loaded cores)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _canary_data(torch, n_data: int, dim: int, include: np.ndarray, gen):
    n_data, dim = check_int("n_data", n_data), check_int("dim", dim)
    m = include.size
    X = torch.zeros(n_data + int(include.sum()), dim + m, dtype=torch.float64)
    X[:n_data, :dim] = torch.randn(n_data, dim, generator=gen, dtype=torch.float64)
    beta = torch.linspace(1.0, -1.0, dim, dtype=torch.float64)
    y = torch.empty(X.shape[0], dtype=torch.float64)
    y[:n_data] = X[:n_data, :dim] @ beta + 0.1 * torch.randn(n_data, generator=gen, dtype=torch.float64)
    rows = torch.as_tensor(dim + np.flatnonzero(include))
    X[torch.arange(n_data, X.shape[0]), rows] = 1.0
    y[n_data:] = CANARY_LABEL
    return X, y


class OpacusCanaryRuns:
    """Independent Opacus training runs with one canary, as a mechanism on s ∈ {−1, +1}.

    ``sample(s, n, rng)`` trains n runs with the canary included (s = +1) or not
    (s = −1) and returns the white-box view (n, T) — per step, the canary's
    coordinate of the noisy gradient sum in units of −c — or the black-box view
    (n, 1), the canary's final weight.

    Claim: ε of Opacus' accountant (``get_noise_multiplier`` calibrates z for the
    target ε; the claim is the accountant's ``get_epsilon`` for that z), δ, adjacency
    ``add-remove``. Exact (privaudit, dp_accounting's PLD of the same T steps):
    ``exact_epsilon``; for full batch the view is exactly μ-GDP with μ = √T/z.

    Parameters
    ----------
    epsilon, delta : float
        Target handed to Opacus' calibration.
    epochs, n_data, dim, clip, lr : training set-up (small: the audit trains n runs per hypothesis).
    sample_rate : float
        1 for full-batch steps; below 1, Poisson batches (T = epochs/q steps).
    grad_sample_mode : {"hooks", "functorch", "ghost"}
        Opacus' per-sample gradient engine; "ghost" is ghost clipping.
    mode : {"white-box", "black-box"}
    accountant : str
        Opacus accountant ("rdp", "prv", "gdp").
    noise_multiplier : float, optional
        Train with this z instead of the calibrated one (a deliberately misconfigured target).
    """

    def __init__(self, *, epsilon: float = 2.0, delta: float = 1e-5, epochs: int = 10, n_data: int = 20, dim: int = 3,
                 clip: float = 1.0, lr: float = 0.05, sample_rate: float = 1.0, grad_sample_mode: str = "hooks",
                 mode: str = "white-box", accountant: str = "rdp", noise_multiplier: float | None = None) -> None:
        if mode not in ("white-box", "black-box"):
            raise InvalidParameterError(f"mode must be 'white-box' or 'black-box', got mode={mode!r}")
        if grad_sample_mode not in GRAD_SAMPLE_MODES:
            raise InvalidParameterError(f"grad_sample_mode must be one of {GRAD_SAMPLE_MODES}, got {grad_sample_mode!r}")
        self.mode, self.grad_sample_mode, self.accountant = mode, grad_sample_mode, accountant
        self.epochs, self.n_data, self.dim = check_int("epochs", epochs), check_int("n_data", n_data), check_int("dim", dim)
        self.clip, self.lr = check_positive("clip", clip), check_positive("lr", lr)
        self.sample_rate = check_interval("sample_rate", sample_rate, 0.0, 1.0, closed="right")
        self.steps = self.epochs * max(1, round(1 / self.sample_rate))
        delta = check_delta(delta)
        calibrated = opacus_noise_multiplier(epsilon=epsilon, delta=delta, sample_rate=self.sample_rate,
                                             steps=self.steps, accountant=accountant)
        eps = opacus_epsilon(noise_multiplier=calibrated, sample_rate=self.sample_rate, steps=self.steps,
                             delta=delta, accountant=accountant)
        self.claim = PrivacyClaim(eps, delta, "add-remove")
        self.calibrated_noise_multiplier = calibrated
        self.noise_multiplier = calibrated if noise_multiplier is None else check_positive("noise_multiplier",
                                                                                           noise_multiplier)

    def __repr__(self) -> str:
        return (f"OpacusCanaryRuns({self.grad_sample_mode}, {self.mode}, z={self.noise_multiplier:.4g}, "
                f"T={self.steps}, q={self.sample_rate:g}, claim={self.claim})")

    def sample(self, x: ArrayLike, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """Train ``n`` seeded Opacus runs with the canary in (x = +1) or out (x = −1).

        Parameters
        ----------
        x : float or array-like
            +1 (canary in) or −1 (canary out).
        n : int
            Number of independent training runs.
        rng : Generator, int or None
            Source of the run seeds.

        Returns
        -------
        ndarray of shape (n, T) or (n, 1)
            Per run: the canary's gradient coordinate after each step (white-box) or its final weight.

        Raises
        ------
        InvalidParameterError
            When x is not ±1.
        """
        s = float(np.ravel(np.asarray(x, dtype=float))[0])
        if s not in (-1.0, 1.0):
            raise InvalidParameterError(f"OpacusCanaryRuns: x must be +1 (canary in) or -1 (out), got x={x!r}")
        seeds = np.random.SeedSequence(draw_seed(rng)).spawn(check_int("n", n))
        width = self.steps if self.mode == "white-box" else 1
        out = np.empty((n, width))
        for i, ss in enumerate(seeds):  # one Opacus model per run: Opacus cannot batch independent runs
            run = train_opacus_canaries([s > 0], noise_multiplier=self.noise_multiplier, n_data=self.n_data,
                                        dim=self.dim, clip=self.clip, lr=self.lr, epochs=self.epochs,
                                        sample_rate=self.sample_rate, grad_sample_mode=self.grad_sample_mode,
                                        delta=self.claim.delta, accountant=self.accountant, rng=ss)
            out[i] = run.steps[:, 0] if self.mode == "white-box" else run.final
        return out

    @property
    def exact_mu(self) -> float | None:
        """μ = √T/z for full-batch steps (exactly Gaussian); None under Poisson sampling."""
        return math.sqrt(self.steps) / self.noise_multiplier if self.sample_rate == 1 else None

    def exact_epsilon(self, delta: float) -> float:
        """ε(δ) of the z actually trained with, by dp_accounting's PLD (add/remove).

        Parameters
        ----------
        delta : float
            δ in (0, 1).

        Returns
        -------
        float
            ε(δ) ≥ 0.
        """
        return dpsgd_epsilon(self.noise_multiplier, self.steps, delta, sampling_rate=self.sample_rate,
                             adjacency="add-remove")

    def tradeoff(self, alpha: ArrayLike) -> np.ndarray:
        """Exact curve: G_μ for full batch, else the whole profile of dp_accounting's composed PLD.

        Parameters
        ----------
        alpha : array-like
            Type-I error rates α in [0, 1].

        Returns
        -------
        ndarray
            β = f(α), shaped like ``alpha``.
        """
        mu = self.exact_mu
        if mu is not None:
            return gaussian_tradeoff(mu, alpha)
        from dp_accounting import NeighboringRelation
        from dp_accounting.pld import privacy_loss_distribution as pld_lib

        pld = pld_lib.from_gaussian_mechanism(
            standard_deviation=self.noise_multiplier, sensitivity=1.0, sampling_prob=self.sample_rate,
            neighboring_relation=NeighboringRelation.ADD_OR_REMOVE_ONE, value_discretization_interval=1e-3,
        ).self_compose(self.steps)
        eps = np.linspace(0.0, 30.0, 3001)
        return tradeoff_from_profile(eps, np.clip(pld.get_delta_for_epsilon(eps), 0.0, 1.0), alpha)

    def dp_event(self, distance: float | None = None) -> DpEvent:
        """dp_accounting event of the T noisy steps trained with the z actually used (one canary added or removed).

        ``SelfComposedDpEvent`` of T Gaussian steps of noise multiplier z, Poisson-subsampled
        at rate q when q < 1 (:func:`~privaudit.mechanisms.accounting.gaussian_steps_event`).

        Parameters
        ----------
        distance : float, optional
            Records added or removed: None or 1 (the claim's neighbours), 0 (``NoOpDpEvent``).

        Returns
        -------
        dp_accounting.DpEvent

        Raises
        ------
        InvalidParameterError
            For any other distance (group privacy of DP-SGD is not an event of this adapter).
        """
        if distance is not None and distance not in (0, 1):
            raise InvalidParameterError(f"OpacusCanaryRuns.dp_event: distance must be None, 0 or 1 record, "
                                        f"got distance={distance!r}")
        if distance == 0:
            return NoOpDpEvent()
        return gaussian_steps_event(self.noise_multiplier, self.steps, self.sample_rate)


__all__ = ["CANARY_LABEL", "CanaryRun", "GRAD_SAMPLE_MODES", "OpacusCanaryRuns", "opacus_epsilon",
           "opacus_noise_multiplier", "train_opacus_canaries"]
