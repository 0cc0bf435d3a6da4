"""Does dividing the noisy gradient sum by a batch size leak? Certified answers for Opacus and a minimal reproduction.

DP-SGD's accounting (the subsampled Gaussian, Opacus' RDP accountant) covers the noisy *sum*
Σ_{i∈B} clip(g_i) + N(0, z²c²I) with a sampling rate q fixed in advance. Code usually releases an
average instead. Dividing by a constant is post-processing; dividing by anything that depends on
the private data is not. Under add/remove adjacency the dataset size n is private, so:

``opacus_normaliser_runs`` (Opacus 1.6 itself)
    ``PrivacyEngine.make_private`` with Poisson sampling sets q = 1/len(data_loader) and divides
    by ``expected_batch_size = int(len(dataset)·q)`` (``loss_reduction="mean"``): both depend on n.
    With n = 100 and batch size 10, q = 1/10 and the divisor is 10; adding one record gives
    q = 1/11 and divisor int(101/11) = 9. The canary is a record with zero gradient (all rows have
    label 0, the weights stay 0 with lr = 0), so ``p.grad`` is exactly N(0, z²c²I)/divisor: the
    canary changes only the divisor, which the gradient's norm reveals (d coordinates, relative
    precision ~1/√(2dK)). The score is the log mean square of ``p.grad`` over the first K steps
    (both datasets have at least K steps per epoch; the step count itself, 10 against 11 per epoch,
    also reveals n, and is not used).
``averaged_release_runs`` (numpy, a minimal reproduction of the three conventions)
    Releases r_t = (noisy sum)/D_t with a zero-gradient canary, for D_t = 1 ("sum", the accounted
    release), q·|D| with |D| including the canary ("expected"), or the realised |B_t| ("actual",
    |B_t| ~ Bin(n, q) + Bern(q)·[canary in]). The score is Σ_t log‖r_t‖.

Both are audited with Clopper–Pearson over independent runs (threshold chosen on half the runs
of each side), a certified lower bound with no assumption, against the ε Opacus' accountant
reports for (z, q, T).
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass

import numpy as np

from privaudit.mechanisms.randomness import RandomLike, draw_seed, torch_generator, uint32_seed
from privaudit.mechanisms.validation import InvalidParameterError, check_int, check_positive

from privaudit.audit.stats.epsilon_bounds import clopper_pearson_bound

NORMALISERS = ("sum", "expected", "actual")


@dataclass(frozen=True)
class NormalisationAudit:
    """Certified ε̲ of one normalisation convention against the accountant's ε.

    Attributes
    ----------
    normaliser : str
    epsilon_lb : float
        Clopper–Pearson lower bound at ``confidence``.
    epsilon_claimed : float
        ε of Opacus' RDP accountant for (z, q, T) (for the larger of the two datasets' q).
    runs : int
        Runs over both hypotheses.
    seconds : float
    confidence : float
    fpr, fnr : float
        Empirical rates of the chosen test on the evaluation half.
    details : dict
    """

    normaliser: str
    epsilon_lb: float
    epsilon_claimed: float
    runs: int
    seconds: float
    confidence: float
    fpr: float
    fnr: float
    details: dict

    @property
    def violation(self) -> bool:
        """True when the certified ε̲ exceeds the claimed ε."""
        return self.epsilon_lb > self.epsilon_claimed


def _cp(out_scores: np.ndarray, in_scores: np.ndarray, delta: float, confidence: float):
    h0, h1 = out_scores.size // 2, in_scores.size // 2
    return clopper_pearson_bound(out_scores[:h0], in_scores[:h1], out_scores[h0:], in_scores[h1:], delta=delta,
                                 confidence=confidence)


def averaged_release_runs(runs: int, *, normaliser: str, n: int = 20, sampling_rate: float = 0.5,
                          noise_multiplier: float = 20.0, steps: int = 100, dim: int = 1000, delta: float = 1e-5,
                          confidence: float = 0.95, rng: RandomLike = None) -> NormalisationAudit:
    """Clopper–Pearson ε̲ of the averaged release r_t = (Σ_{i∈B_t} clip(g_i) + N(0, z²I))/D_t.

    Every record's clipped gradient is zero (the canary's too: it changes only the batch), so
    r_t = N(0, z²I_d)/D_t (module docstring). Half the runs use n records, half n + 1.

    Parameters
    ----------
    runs : int
        Runs (≥ 8), half per hypothesis.
    normaliser : {"sum", "expected", "actual"}
        D_t = 1, q·|D|, or max(|B_t|, 1).
    n : int
        Records without the canary.
    sampling_rate : float
        Poisson rate q (the same for both datasets: the accounted setting).
    noise_multiplier : float
        z (clip norm 1).
    steps : int
        T released steps.
    dim : int
        Parameters d.
    delta, confidence : float
    rng : int, Generator or None

    Returns
    -------
    NormalisationAudit
    """
    from privaudit.mechanisms.external.opacus_canary import opacus_epsilon

    if normaliser not in NORMALISERS:
        raise InvalidParameterError(f"normaliser must be one of {NORMALISERS}, got normaliser={normaliser!r}")
    runs, n, steps, dim = (check_int("runs", runs, minimum=8), check_int("n", n), check_int("steps", steps),
                           check_int("dim", dim))
    q = float(sampling_rate)
    if not 0 < q <= 1:
        raise InvalidParameterError(f"sampling_rate must lie in (0, 1], got sampling_rate={sampling_rate!r}")
    z = check_positive("noise_multiplier", noise_multiplier)
    gen = np.random.default_rng(draw_seed(rng))
    half = runs // 2
    t0 = time.perf_counter()
    scores = []
    for include, count in ((0, runs - half), (1, half)):
        size = n + include
        batch = gen.binomial(n, q, size=(count, steps)) + include * gen.binomial(1, q, size=(count, steps))
        # ‖N(0, z²I_d)‖² = z²·χ²_d: draw the norms directly (the release's direction carries nothing).
        norm = z * np.sqrt(gen.chisquare(dim, size=(count, steps)))
        if normaliser == "sum":
            divisor = np.ones_like(norm)
        elif normaliser == "expected":
            divisor = np.full_like(norm, q * size)
        else:
            divisor = np.maximum(batch, 1).astype(float)
        scores.append(-np.log(norm / divisor).sum(1))  # larger divisor (the canary in): smaller release
    seconds = time.perf_counter() - t0
    b = _cp(scores[0], scores[1], delta, confidence)
    claimed = opacus_epsilon(noise_multiplier=z, sample_rate=q, steps=steps, delta=delta)
    return NormalisationAudit(normaliser, float(b.epsilon), claimed, runs, seconds, confidence, float(b.fpr),
                              float(b.fnr), dict(n=n, sampling_rate=q, noise_multiplier=z, steps=steps, dim=dim))


def opacus_normaliser_runs(runs: int, *, n: int = 100, batch_size: int = 10, dim: int = 200,
                           noise_multiplier: float = 5.0, steps: int = 10, delta: float = 1e-5,
                           confidence: float = 0.95, rng: RandomLike = None) -> NormalisationAudit:
    """Clopper–Pearson ε̲ of Opacus' ``make_private`` averaging when one record is added (module docstring).

    Parameters
    ----------
    runs : int
        Opacus runs (≥ 8), half with n records, half with n + 1.
    n, batch_size : int
        Records without the canary and the DataLoader batch size handed to Opacus.
    dim : int
        Parameters of the linear model.
    noise_multiplier : float
        z handed to ``make_private``.
    steps : int
        K: the first K steps of each run are scored (at most len(data_loader) for n records).
    delta, confidence : float
    rng : int, Generator or None

    Returns
    -------
    NormalisationAudit
        ``details`` holds both datasets' q and ``expected_batch_size`` as Opacus set them.
    """
    import torch

    from privaudit.mechanisms.external.errors import import_library
    from privaudit.mechanisms.external.opacus_canary import opacus_epsilon

    opacus = import_library("opacus", "opacus_normaliser_runs")
    from opacus.data_loader import DPDataLoader
    runs, n, batch_size, dim, steps = (check_int("runs", runs, minimum=8), check_int("n", n),
                                       check_int("batch_size", batch_size), check_int("dim", dim),
                                       check_int("steps", steps))
    z = check_positive("noise_multiplier", noise_multiplier)
    if steps > math.ceil(n / batch_size):
        raise InvalidParameterError(f"steps must be <= len(data_loader) = {math.ceil(n / batch_size)}, got {steps}")
    ss = np.random.SeedSequence(draw_seed(rng))
    half = runs // 2
    scores, settings = [], {}
    before = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny models: one intra-op thread (as the Opacus canary adapter does)
    t0 = time.perf_counter()
    try:
        for include, count, seeds in ((0, runs - half, ss.spawn(runs - half)), (1, half, ss.spawn(half))):
            size = n + include
            out = np.empty(count)
            for r, child in enumerate(seeds):  # one Opacus model per run
                gen = torch_generator(uint32_seed(child))
                X = torch.randn(size, dim, generator=gen, dtype=torch.float64)
                y = torch.zeros(size, dtype=torch.float64)  # weights stay 0 (lr = 0): every gradient is exactly 0
                model = torch.nn.Linear(dim, 1, bias=False, dtype=torch.float64)
                with torch.no_grad():
                    model.weight.zero_()
                opt = torch.optim.SGD(model.parameters(), lr=0.0)
                plain = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, y), batch_size=batch_size)
                # The Poisson loader make_private(poisson_sampling=True) would build, but seeded: outside
                # secure mode Opacus draws it from the global torch generator. make_private derives q and
                # the divisor from len(loader) and len(dataset) exactly as it does for its own loader.
                loader = DPDataLoader.from_data_loader(plain, generator=gen)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # secure_mode and global-RNG warnings
                    engine = opacus.PrivacyEngine(accountant="rdp")
                    model, opt, loader = engine.make_private(module=model, optimizer=opt, data_loader=loader,
                                                             noise_multiplier=z, max_grad_norm=1.0,
                                                             poisson_sampling=False, noise_generator=gen)
                    settings[size] = dict(sample_rate=float(opt.sample_rate) if hasattr(opt, "sample_rate")
                                          else 1 / len(loader), expected_batch_size=int(opt.expected_batch_size))
                    weight = model._module.weight
                    loss_fn = torch.nn.MSELoss()  # mean over the batch: Opacus then divides by expected_batch_size
                    sq = []
                    for t, (xb, yb) in enumerate(loader):
                        if t == steps:
                            break
                        opt.zero_grad()
                        if xb.shape[0] == 0:
                            # An empty Poisson batch still releases noise/divisor; one zero-gradient row
                            # (every row's gradient is 0) gives Opacus its per-sample gradients, same release.
                            xb, yb = X[:1], y[:1]
                        loss_fn(model(xb).squeeze(-1), yb).backward()
                        opt.step()
                        sq.append(float((weight.grad**2).mean()))
                # With the record added Opacus divides by int((n+1)/len(loader')) — 9 instead of 10 at the
                # defaults — so the gradient is larger: the score grows with the mean square.
                out[r] = math.log(np.mean(sq))
            scores.append(out)
    finally:
        torch.set_num_threads(before)
    seconds = time.perf_counter() - t0
    b = _cp(scores[0], scores[1], delta, confidence)
    q = max(s["sample_rate"] for s in settings.values())
    claimed = opacus_epsilon(noise_multiplier=z, sample_rate=q, steps=steps, delta=delta)
    return NormalisationAudit("opacus make_private (expected batch size from len(dataset))", float(b.epsilon),
                              claimed, runs, seconds, confidence, float(b.fpr), float(b.fnr),
                              dict(n=n, batch_size=batch_size, dim=dim, noise_multiplier=z, steps=steps,
                                   settings={str(k): v for k, v in settings.items()}))


__all__ = ["NORMALISERS", "NormalisationAudit", "averaged_release_runs", "opacus_normaliser_runs"]
