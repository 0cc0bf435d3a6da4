"""The release view of DP-SGD under label DP (seed 002's Cond-DP and its DP-SGD baseline).

* :class:`LabelCanarySteps` — the exact law of the per-step noisy gradients seen by a
  white-box attacker, along a label canary whose clipped gradient is ±c·u (a label flip
  moves it by 2c): o_t = B_t·s + z·ξ_t in units of c, B_t ~ Bern(q).
* :class:`DPSGDLabelCanary` — the same experiment run through the DP-SGD engine
  (:mod:`privaudit.learners.dpsgd`), vectorised across runs: ``"white-box"`` returns the
  per-step likelihood-ratio increments computed from the engine's noisy sums,
  ``"black-box"`` returns the final linear model. It is what
  :meth:`privaudit.learners.CondDPRegressor.release_view` returns.
* :func:`canary_dataset` — the small regression dataset with one label canary they train on;
  :class:`ScalarInputRelease` — a mechanism on the canary's sign seen as a 1-vector
  (reconstruction audits draw inputs as vectors).

Both views declare their pair (the canary's label flip, s = −1 against s = +1) and, for
the engine, the attacker and the reconstruction of the label sign, as data
(:mod:`privaudit.learners.release_view`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import logsumexp

from privaudit.attacks.distinguishers import ProjectionAttack
from privaudit.attacks.pairs import label_canaries
from privaudit.attacks.priors import DiscretePrior
from privaudit.learners.release_view import ReconstructionSetup, TradeoffSetup
from privaudit.mechanisms.accounting import composed_tradeoff, dpsgd_epsilon, gdp_epsilon
from privaudit.mechanisms.claim import PrivacyClaim
from privaudit.mechanisms.randomness import RandomLike
from privaudit.mechanisms.tradeoff import gaussian_tradeoff
from privaudit.mechanisms.validation import (
    InvalidParameterError,
    check_delta,
    check_int,
    check_size,
    check_interval,
    check_positive,
)

#: Recorded in a learner-tradeoff report.
TRADEOFF_NOTE = ("the DP-SGD engine with the learner's (ε, δ, clip, epochs, lr, adjacency) on a small canary "
                 "dataset, one label flipped; conditioning by public features is post-processing of public data "
                 "and does not enter the label-DP analysis")
#: Recorded in a learner-reconstruction report.
RECONSTRUCTION_NOTE = ("a canary's label sign (uniform prior on ±1) is reconstructed from the white-box DP-SGD "
                       "steps; the exact-reconstruction (ReRo) bound follows from the steps' trade-off curve")


class LabelCanarySteps:
    """Exact law of a white-box DP-SGD transcript along one label canary (units of the clip norm c).

    Per step t the attacker subtracts the (known) clipped gradients of the other
    examples from the noisy sum and projects on the canary's gradient direction u:

        o_t = B_t·s + z·ξ_t,   B_t ~ Bernoulli(q),   ξ_t ~ N(0, 1),

    where s = ±1 is the canary label's effect (its clipped gradient is s·c·u; a
    label flip moves it by 2c) and z the noise multiplier. The input of
    :meth:`sample` is s. With q = 1 the pair is exactly (2√T/z)-GDP; in general its
    exact curve is the replace-one subsampled-Gaussian PLD of dp_accounting.

    Parameters
    ----------
    noise_multiplier, steps, sampling_rate : as in :func:`privaudit.mechanisms.dpsgd_epsilon`.
    delta : float
        δ of the claim.
    adjacency : str
        The relation the *claim* is accounted under: ``"label"`` is right;
        ``"add-remove"`` (sensitivity c instead of 2c) is the classic mistake.
    """

    def __init__(self, *, noise_multiplier: float, steps: int, sampling_rate: float = 1.0, delta: float = 1e-5,
                 adjacency: str = "label") -> None:
        self.noise_multiplier = check_positive("noise_multiplier", noise_multiplier)
        self.steps = check_int("steps", steps)
        self.sampling_rate = check_interval("sampling_rate", sampling_rate, 0.0, 1.0, closed="right")
        self.delta = check_delta(delta)
        self.adjacency = adjacency
        eps = dpsgd_epsilon(self.noise_multiplier, self.steps, self.delta, sampling_rate=self.sampling_rate,
                            adjacency=adjacency)
        self.claim = PrivacyClaim(eps, self.delta, adjacency)

    def __repr__(self) -> str:
        return (f"LabelCanarySteps(z={self.noise_multiplier:g}, T={self.steps}, q={self.sampling_rate:g}, "
                f"claim={self.claim})")

    def sample(self, s: float, n: int, rng: RandomLike = None) -> np.ndarray:
        """n transcripts of T steps for the canary sign ``s``.

        Parameters
        ----------
        s : float
            The canary's sign, −1 or +1.
        n : int
            Number of releases.
        rng : int, Generator, SeedSequence or None
            Source of the noise.

        Returns
        -------
        numpy.ndarray
            Shape ``(n, T)``.
        """
        rng = np.random.default_rng(rng)
        n = check_size("n", n)
        out = rng.standard_normal((n, self.steps))
        out *= self.noise_multiplier
        if self.sampling_rate < 1:
            out += float(s) * (rng.random((n, self.steps)) < self.sampling_rate)
        else:
            out += float(s)
        return out

    def log_density(self, outputs: ArrayLike, s: float) -> np.ndarray:
        """Log-density of each transcript given the sign ``s`` (a two-component mixture per step when q < 1).

        Parameters
        ----------
        outputs : array
            Releases, one per row ``(n, T)``.
        s : float
            The canary's sign, −1 or +1.

        Returns
        -------
        numpy.ndarray
            Shape ``(n,)``.
        """
        o = np.asarray(outputs, dtype=float) / self.noise_multiplier
        z = self.noise_multiplier
        m = float(s) / z
        q = self.sampling_rate
        if q == 1:
            comp = -0.5 * (o - m) ** 2
        else:
            comp = logsumexp(np.stack([-0.5 * o**2, -0.5 * (o - m) ** 2]), axis=0, b=np.array([1 - q, q])[:, None, None])
        return comp.sum(axis=1) - self.steps * (0.5 * math.log(2 * math.pi) + math.log(z))

    def tradeoff(self, alpha: ArrayLike) -> np.ndarray:
        """Exact curve: T replace-one (subsampled) Gaussian steps, via dp_accounting's PLD.

        Parameters
        ----------
        alpha : array-like
            Type-I errors in [0, 1].

        Returns
        -------
        numpy.ndarray
            Type-II errors, the shape of ``alpha``.
        """
        if self.sampling_rate == 1:
            return gaussian_tradeoff(2 * math.sqrt(self.steps) / self.noise_multiplier, alpha)
        return composed_tradeoff(alpha, noise_multiplier=self.noise_multiplier, steps=self.steps,
                                 sampling_rate=self.sampling_rate, adjacency="replace-one")

    def exact_epsilon(self, delta: float) -> float:
        """Exact ε at ``delta`` of the canary's label flip (label DP).

        Parameters
        ----------
        delta : float
            δ in [0, 1).

        Returns
        -------
        float
        """
        return dpsgd_epsilon(self.noise_multiplier, self.steps, delta, sampling_rate=self.sampling_rate,
                             adjacency="label")

    def tradeoff_setup(self, *, phase: str = "known") -> TradeoffSetup:
        """The label flip s = −1 against s = +1, scored by the exact likelihood ratio among the default suite.

        The flip is a shift of Gaussian steps (a G_μ curve) only with full participation
        (q = 1): the GDP estimator is allowed, and the default, only then.

        Parameters
        ----------
        phase : str
            Not used (no phases).

        Returns
        -------
        TradeoffSetup
        """
        gaussian = self.sampling_rate == 1
        return TradeoffSetup(self, -1.0, 1.0, target=repr(self), estimator="gdp" if gaussian else "clopper-pearson",
                             assume_gaussian=gaussian)


@dataclass
class CanaryData:
    """A regression dataset whose last row is a label canary.

    Attributes
    ----------
    X : ndarray (n, P)
        Features, the canary last.
    y : ndarray (n - 1,)
        Labels of the other rows; the canary's label is set per hypothesis.
    canary_label : float
        Y: the canary's label is ±Y.
    """

    X: np.ndarray
    y: np.ndarray
    canary_label: float


def canary_dataset(n_data: int = 20, dim: int = 3, *, canary_label: float = 1e3, rng: RandomLike = None) -> CanaryData:
    """A small regression dataset plus one label canary in an extra coordinate.

    The canary (:func:`~privaudit.attacks.pairs.label_canaries` with m = 1) has
    feature e_{d+1}, zero for every other example, and label ±Y with Y large, so
    its clipped gradient is ∓c·e_{d+1} whatever the model: a label flip moves the
    clipped sum by exactly 2c.

    Parameters
    ----------
    n_data, dim : int
        Rows (besides the canary) and features (besides the canary's coordinate).
    canary_label : float
        Y.
    rng : int, Generator, SeedSequence or None
        Source of the data, then of the canary.

    Returns
    -------
    CanaryData
    """
    rng = np.random.default_rng(rng)
    X = rng.standard_normal((check_int("n_data", n_data), check_int("dim", dim)))
    y = X @ rng.standard_normal(dim) + 0.1 * rng.standard_normal(n_data)
    feat, _, _ = label_canaries(1, dim + 1, label_scale=canary_label, rng=rng)
    Xa = np.vstack([np.hstack([X, np.zeros((n_data, 1))]), feat])
    return CanaryData(Xa, y, float(canary_label))


class ScalarInputRelease:
    """A mechanism on a scalar input s seen as a 1-vector (e.g. :class:`LabelCanarySteps` on the sign s ∈ {−1, +1}).

    Reconstruction audits draw inputs as vectors (a discrete prior's support has shape
    (k, d)); the wrapped mechanism takes the scalar.

    Parameters
    ----------
    view : mechanism on a scalar input
        With ``claim``, ``sample``, ``log_density`` and ``tradeoff``.
    """

    def __init__(self, view: Any) -> None:
        self.view = view
        self.claim = view.claim

    def __repr__(self) -> str:
        return repr(self.view)

    def sample(self, x: ArrayLike, n: int, rng: RandomLike = None) -> np.ndarray:
        """The wrapped mechanism's releases of the scalar ``x[0]``.

        Parameters
        ----------
        x : array (1,)
            The input as a 1-vector.
        n : int
            Number of releases.
        rng : int, Generator, SeedSequence or None
            Source of the noise.

        Returns
        -------
        numpy.ndarray
            The wrapped mechanism's releases.
        """
        return self.view.sample(float(np.ravel(x)[0]), n, rng)

    def log_density(self, outputs: ArrayLike, x: ArrayLike) -> np.ndarray:
        """The wrapped mechanism's log-density at the scalar ``x[0]``.

        Parameters
        ----------
        outputs : array
            Releases, one per row.
        x : array (1,)
            The input as a 1-vector.

        Returns
        -------
        numpy.ndarray
            Shape ``(n,)``.
        """
        return self.view.log_density(outputs, float(np.ravel(x)[0]))

    def tradeoff(self, alpha: ArrayLike) -> np.ndarray:
        """The wrapped mechanism's exact trade-off curve.

        Parameters
        ----------
        alpha : array-like
            Type-I errors in [0, 1].

        Returns
        -------
        numpy.ndarray
            Type-II errors, the shape of ``alpha``.
        """
        return self.view.tradeoff(alpha)


class DPSGDLabelCanary:
    """DP-SGD training runs with a label canary, through the engine, as a mechanism on the canary's sign.

    ``sample(s, n)`` trains n independent linear DP-SGD runs (vectorised across
    runs by :func:`privaudit.learners.dpsgd.train_linear_dpsgd_runs`) on the
    dataset with canary label s·Y and returns:

    * ``mode="white-box"``: per step, the LR increment along the canary,
      ⟨r_t − (a_t + b_t)/2, b_t − a_t⟩/(zc)², where r_t is the noisy sum minus the
      attacker-known clipped gradients of the other examples, and a_t, b_t the
      canary's clipped gradients at θ_t under labels −Y and +Y. The sum over steps
      is the exact log-likelihood ratio of the transcript (full batch);
    * ``mode="black-box"``: the final parameters θ_T (shape (n, P)).

    The claim is the engine's, under the configured ``adjacency``.

    With ``conditioning=True`` the runs are Cond-DP (seed 002, Alg. 1, linear head):
    the model is Θ·Ĉx with Ĉ = V diag(1/σ̃) Vᵀ from the SVD of the (public) feature
    matrix (:func:`privaudit.learners.conditioning.conditioning_matrix`), i.e. DP-SGD
    on the conditioned features Ĉx. Conditioning uses public features only, so the
    label-DP guarantee, and the exact μ of the canary pair, are unchanged: the audit
    checks that it is.

    Parameters
    ----------
    data : CanaryData
        From :func:`canary_dataset`.
    epsilon, delta, clip, epochs, lr, adjacency, noise_multiplier :
        As :class:`privaudit.learners.DPSGDEngine` takes them (optimizer SGD, full batch).
    mode : {"white-box", "black-box"}
        What the attacker sees.
    conditioning : bool
        Train on the conditioned features (Cond-DP).
    """

    def __init__(self, data: CanaryData, *, epsilon: float, delta: float = 1e-5, clip: float = 1.0,
                 epochs: int = 10, lr: float = 0.05, adjacency: str = "label", mode: str = "white-box",
                 noise_multiplier: float | None = None, conditioning: bool = False) -> None:
        if mode not in ("white-box", "black-box"):
            raise InvalidParameterError(f"mode must be 'white-box' or 'black-box', got mode={mode!r}")
        # torch is imported only when a DP-SGD view is built (LabelCanarySteps needs none).
        from privaudit.learners.dpsgd import DPSGDEngine

        self.data, self.mode, self.conditioning = data, mode, conditioning
        if conditioning:
            from privaudit.learners.conditioning import conditioning_matrix

            self.X_ = data.X @ conditioning_matrix(data.X).matrix
        else:
            self.X_ = data.X
        self.kw = dict(epsilon=epsilon, delta=delta, clip=clip, epochs=epochs, lr=lr, optimizer="sgd",
                       adjacency=adjacency, noise_multiplier=noise_multiplier)
        engine = DPSGDEngine(**self.kw)
        n = data.X.shape[0]
        self.noise_multiplier_ = engine.calibrate(n)
        self.claim = engine.claim(n)
        self.steps_ = engine.schedule(n)[2]

    def __repr__(self) -> str:
        kind = "Cond-DP" if self.conditioning else "DP-SGD"
        return f"DPSGDLabelCanary({kind}, mode={self.mode!r}, z={self.noise_multiplier_:.4g}, T={self.steps_}, claim={self.claim})"

    def sample(self, s: float, n: int, rng: RandomLike = None) -> np.ndarray:
        """n training runs with canary label s·Y (vectorised across runs).

        Parameters
        ----------
        s : float
            The canary's sign, −1 or +1.
        n : int
            Number of releases.
        rng : int, Generator, SeedSequence or None
            Source of the noise.

        Returns
        -------
        numpy.ndarray
            White-box: the per-step LR increments, ``(n, T)``; black-box: the final models, ``(n, P)``.
        """
        import torch

        from privaudit.learners.dpsgd import train_linear_dpsgd_runs
        from privaudit.mechanisms.clipping import linear_clipped_grad_sum

        d = self.data
        y = np.r_[d.y, float(s) * d.canary_label]
        X_t = torch.as_tensor(self.X_)
        others, canary = X_t[:-1], X_t[-1:]
        clip = torch.as_tensor([self.kw["clip"]], dtype=torch.float64)
        steps = []

        def callback(info):
            th = info.params
            R = th.shape[0]
            own = linear_clipped_grad_sum(th, others, torch.as_tensor(d.y).expand(R, -1), clip)[0]
            r = info.noisy_sum - own
            a = linear_clipped_grad_sum(th, canary, torch.full((R, 1), -d.canary_label, dtype=th.dtype), clip)[0]
            b = linear_clipped_grad_sum(th, canary, torch.full((R, 1), d.canary_label, dtype=th.dtype), clip)[0]
            s2 = float(info.noise_std.reshape(-1)[0]) ** 2
            steps.append((((r - (a + b) / 2) * (b - a)).sum(dim=1) / s2).numpy())

        cb = callback if self.mode == "white-box" else None
        theta = train_linear_dpsgd_runs(self.X_, y, n_runs=check_size("n", n), rng=rng, callback=cb,
                                        **{k: v for k, v in self.kw.items() if k != "optimizer"}, optimizer="sgd")
        if self.mode == "white-box":
            return np.stack(steps, axis=1)
        return theta

    def exact_mu(self) -> float:
        """μ of the canary pair: 2√T/z (full batch, antipodal clipped canary gradients).

        Returns
        -------
        float
        """
        return 2 * math.sqrt(self.steps_) / self.noise_multiplier_

    def exact_epsilon(self, delta: float) -> float:
        """Exact ε at ``delta`` of the canary pair (G_μ with :meth:`exact_mu`).

        Parameters
        ----------
        delta : float
            δ in [0, 1).

        Returns
        -------
        float
        """
        return gdp_epsilon(self.exact_mu(), delta)

    def tradeoff(self, alpha: ArrayLike) -> np.ndarray:
        """Exact trade-off curve of the canary pair, G_μ with :meth:`exact_mu`.

        Parameters
        ----------
        alpha : array-like
            Type-I errors in [0, 1].

        Returns
        -------
        numpy.ndarray
            Type-II errors, the shape of ``alpha``.
        """
        return gaussian_tradeoff(self.exact_mu(), alpha)

    def tradeoff_setup(self, *, phase: str = "known") -> TradeoffSetup:
        """The canary's label flip, scored by the sum of the per-step statistics or a learned projection.

        White-box releases are the per-step LR increments: their sum is the exact log-likelihood
        ratio (a fixed projection on ones). Black-box releases (the final model) are scored by a
        projection learned on the training split. Full-batch Gaussian steps: the GDP estimator.

        Parameters
        ----------
        phase : str
            Not used (no phases).

        Returns
        -------
        TradeoffSetup
        """
        attacker = (ProjectionAttack(np.ones(self.steps_)) if self.mode == "white-box"
                    else ProjectionAttack(use_pair=False))
        return TradeoffSetup(self, -1.0, 1.0, target=repr(self), estimator="gdp", assume_gaussian=True,
                             attacker=attacker, note=TRADEOFF_NOTE)

    def reconstruction_setup(self, *, prior: Any = None, phase: str = "known") -> ReconstructionSetup:
        """The canary's label sign (uniform prior on ±1) from the exact law of the white-box steps.

        Parameters
        ----------
        prior : object, optional
            Ignored: the reconstructed quantity is the label sign s ∈ {−1, +1}, uniform.
        phase : str
            Not used (no phases).

        Returns
        -------
        ReconstructionSetup
        """
        steps = LabelCanarySteps(noise_multiplier=self.noise_multiplier_, steps=self.steps_, delta=self.claim.delta,
                                 adjacency=self.claim.adjacency)
        return ReconstructionSetup(ScalarInputRelease(steps), prior=DiscretePrior(np.array([[-1.0], [1.0]])),
                                   note=RECONSTRUCTION_NOTE)


__all__ = ["CanaryData", "DPSGDLabelCanary", "LabelCanarySteps", "ScalarInputRelease", "canary_dataset"]
