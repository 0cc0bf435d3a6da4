"""Label-inference attackers (``kind = "label"``): recover private labels from label-DP releases.

* ``rr-label-posterior`` — Bayes posterior of a label released by randomised response
  (seed 001's RR labels), combined with a *feature prior* π(y | x) — e.g. a public
  classifier's probabilities on the released features:
  P(y | ỹ, x) ∝ π(y | x) · P(ỹ | y), with P(ỹ | y) = p if ỹ = y else q.
* ``rr-on-bins-label`` — label recovery from RR-on-Bins outputs (seed 002's baseline,
  :class:`privaudit.learners.rr_on_bins.RROnBinsRegressor`): posterior over the label
  support given the released bin representative, the learner's published prior and an
  optional feature prior. With the learner's own prior the posterior mean *is* the
  released representative (the optimal representative (aM_S + M)/(aP_S + 1) is
  E[y | output], a = e^{ε'} − 1), so only side information about x helps the attacker.
* ``dpsgd-label`` — white-box label inference from DP-SGD noisy gradients (Cond-DP and
  the DP-SGD baseline, :mod:`privaudit.learners.dpsgd`, full batch, linear head). The
  informed adversary knows every parameter iterate θ_t, every input and every other
  label; subtracting the others' clipped gradients from the released noisy sum leaves
  clip(g_i(y)) + N(0, z²c² I), so the log-likelihood of candidate label y_k is
  −Σ_t ‖R_t − clip(g_i(θ_t; y_k))‖²/(2z²c²). This is the Bayes-optimal (likelihood
  ratio) attacker; under label DP its success is bounded by ReRo with μ = 2√T/z.

All are vectorised over samples (or over parallel training runs).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import logsumexp

from privaudit.mechanisms import RandomizedResponse
from privaudit.mechanisms.validation import InvalidInputError, InvalidParameterError, check_array

from .registry import register_attack


def _normalise_prior(prior, n: int, k: int, name: str = "prior") -> np.ndarray:
    """Log prior as (n, k): None → uniform, (k,) → shared, (n, k) → per sample."""
    if prior is None:
        return np.full((n, k), -np.log(k))
    p = check_array(name, prior, ndim=(1, 2))
    if p.shape[-1] != k or (p.ndim == 2 and p.shape[0] != n) or np.any(p < 0):
        raise InvalidInputError(f"{name} must be non-negative with shape ({k},) or ({n}, {k}), got {p.shape}")
    p = np.broadcast_to(p, (n, k))
    s = p.sum(axis=1, keepdims=True)
    if np.any(s <= 0):
        raise InvalidInputError(f"every row of {name} needs positive mass")
    with np.errstate(divide="ignore"):
        return np.log(p / s)


def _posterior(log_prior: np.ndarray, log_lik: np.ndarray) -> np.ndarray:
    z = log_prior + log_lik
    return np.exp(z - logsumexp(z, axis=1, keepdims=True))


@register_attack("rr-label-posterior")
class RRLabelPosterior:
    """Bayes posterior of randomised-response labels with a feature prior.

    Parameters
    ----------
    mechanism : RandomizedResponse
        The label release (k-ary RR; its keep probability p is used, not the claim).
    """

    kind: ClassVar[str] = "label"

    def __init__(self, mechanism: RandomizedResponse) -> None:
        self.mechanism = mechanism

    def predict_proba(self, released: ArrayLike, prior: ArrayLike | None = None) -> np.ndarray:
        """P(y = category_j | ỹ, x) ∝ π(y | x)·P(ỹ | y), P(ỹ | y) = p if ỹ = y else q.

        Parameters
        ----------
        released : array-like of shape (n,)
            Released labels ỹ, each one of the mechanism's categories.
        prior : array-like of shape (k,) or (n, k), optional
            Feature prior π(y | x), non-negative (rows renormalised); uniform by default.

        Returns
        -------
        ndarray of shape (n, k)
            Posterior rows summing to 1, columns in the order of ``mechanism.categories``.

        Raises
        ------
        InvalidParameterError
            When the mechanism is not a :class:`RandomizedResponse`.
        InvalidInputError
            When ``prior`` has the wrong shape, negative entries or a row of zero mass.
        """
        mech = self.mechanism
        if not isinstance(mech, RandomizedResponse):
            raise InvalidParameterError(f"rr-label-posterior needs a RandomizedResponse, got {mech!r}")
        idx = mech.index(np.asarray(released, dtype=float).ravel())
        n, k = idx.size, mech.k
        lik = np.full((n, k), np.log(mech.flip_probability))
        lik[np.arange(n), idx] = np.log(mech.keep_probability)
        return _posterior(_normalise_prior(prior, n, k), lik)

    def predict(self, released: ArrayLike, prior: ArrayLike | None = None) -> np.ndarray:
        """MAP label per release (the category value).

        Parameters
        ----------
        released : array-like of shape (n,)
            Released labels ỹ.
        prior : array-like of shape (k,) or (n, k), optional
            Feature prior π(y | x), as in :meth:`predict_proba`.

        Returns
        -------
        ndarray of shape (n,)
            The category of largest posterior probability (the first on ties).
        """
        return self.mechanism.categories[np.argmax(self.predict_proba(released, prior), axis=1)]


@register_attack("rr-on-bins-label")
class RROnBinsLabelAttack:
    """Label recovery from RR-on-Bins outputs (Ghazi et al. 2023; seed 002's baseline).

    Parameters
    ----------
    learner : fitted RROnBinsRegressor (or anything with ``support_``, ``prior_``,
        ``binning_``, ``epsilon`` and ``prior_fraction``)
        Supplies the label grid, the published private prior Φ, the bins and ε' = (1 − f)ε.
    """

    kind: ClassVar[str] = "label"

    def __init__(self, learner: object) -> None:
        self.learner = learner

    def _likelihood(self, released: np.ndarray) -> np.ndarray:
        """log P(output | y = support_s), shape (n, k)."""
        lr = self.learner
        if getattr(lr, "binning_", None) is None:
            raise InvalidParameterError("the RR-on-Bins learner must be fitted with a finite epsilon")
        b = lr.binning_
        eps_rr = (1 - lr.prior_fraction) * lr.epsilon
        m = b.m
        p = np.exp(eps_rr) / (np.exp(eps_rr) + m - 1) if m > 1 else 1.0
        q = (1 - p) / (m - 1) if m > 1 else 0.0
        reps = b.representatives
        # Output value -> every bin with that representative (ties are indistinguishable).
        match = np.isclose(released[:, None], reps[None, :], rtol=0, atol=1e-12 * (1 + np.abs(reps).max()))
        if not np.all(match.any(axis=1)):
            bad = released[~match.any(axis=1)][0]
            raise InvalidInputError(f"released value {bad!r} is not a bin representative of this learner")
        # P(out | bin j) = Σ_{j' matching out} (p if j' = j else q).
        per_bin = match.sum(axis=1, keepdims=True) * q + match * (p - q)  # (n, m)
        with np.errstate(divide="ignore"):
            return np.log(per_bin[:, b.bin_of])

    def predict_proba(self, released: ArrayLike, prior: ArrayLike | None = None) -> np.ndarray:
        """Posterior over ``learner.support_`` given the released bin representative.

        The likelihood of a support point in bin j is P(out | j) = Σ_{j′ with representative out}
        (p if j′ = j else q), the RR probabilities at ε′ = (1 − f)ε over the m bins.

        Parameters
        ----------
        released : array-like of shape (n,)
            Released values, each a bin representative of the learner.
        prior : array-like of shape (k,) or (n, k), optional
            None → the learner's published prior Φ; otherwise a feature prior π(y | x) on the
            support, used instead of Φ.

        Returns
        -------
        ndarray of shape (n, k)
            Posterior rows summing to 1.

        Raises
        ------
        InvalidParameterError
            When the learner was not fitted with a finite ε (it has no binning).
        InvalidInputError
            When a released value is no bin representative, or ``prior`` is malformed.
        """
        r = check_array("released", released, ndim=1)
        k = self.learner.support_.size
        lp = _normalise_prior(self.learner.prior_ if prior is None else prior, r.size, k)
        return _posterior(lp, self._likelihood(r))

    def predict(self, released: ArrayLike, prior: ArrayLike | None = None, *, statistic: str = "mean") -> np.ndarray:
        """Recovered labels: posterior mean (MMSE) or MAP support point.

        Parameters
        ----------
        released : array-like of shape (n,)
            Released bin representatives.
        prior : array-like of shape (k,) or (n, k), optional
            As in :meth:`predict_proba`.
        statistic : {"mean", "map"}
            Posterior mean Σ_s P(s | out)·s, or the support point of largest posterior.

        Returns
        -------
        ndarray of shape (n,)

        Raises
        ------
        InvalidParameterError
            For another ``statistic``.
        """
        post = self.predict_proba(released, prior)
        s = self.learner.support_
        if statistic == "mean":
            return post @ s
        if statistic == "map":
            return s[np.argmax(post, axis=1)]
        raise InvalidParameterError(f"statistic must be 'mean' or 'map', got statistic={statistic!r}")


@register_attack("dpsgd-label")
class DPSGDLabelInference:
    """White-box inference of one training label from DP-SGD's noisy gradient sums.

    Parameters
    ----------
    candidates : array (K,)
        Candidate values of the target label.
    clip : float
        The engine's clip norm c.
    prior : array (K,) or (R, K), optional
        Prior over the candidates (uniform by default), e.g. from public features.

    Notes
    -----
    Full batch only (q = 1): under Poisson subsampling the batch membership is itself
    private and unknown to the attacker. Linear models with squared loss (the Cond-DP
    linear head; inputs are the conditioned, augmented features the engine trained on).
    """

    kind: ClassVar[str] = "label"

    def __init__(self, *, candidates: ArrayLike, clip: float, prior: ArrayLike | None = None) -> None:
        self.candidates = candidates
        self.clip = clip
        self.prior = prior

    def log_likelihood(self, steps: Iterable[Any], X: ArrayLike, Y: ArrayLike, target: int) -> np.ndarray:
        """Σ_t log N(R_t; clip(g_target(θ_t; y_k)), z²c² I) up to a constant, shape (R, K).

        R_t is the released noisy sum minus the clipped gradients of every other example,
        and g_target(θ; y) = 2(⟨θ, x_target⟩ − y)·x_target the squared-loss gradient.

        Parameters
        ----------
        steps : iterable of step records
            The per-step records of one full-batch training (e.g.
            :class:`privaudit.learners.dpsgd.StepInfo`, or any objects with the fields
            ``params`` (R, P) torch tensor, ``noisy_sum`` (R, P), ``noise_std`` (R,) or scalar,
            and optionally ``batch_size``).
        X : array-like of shape (n, P)
            The inputs the engine trained on.
        Y : array-like of shape (R, n) or (n,)
            Labels of the R parallel runs; the ``target`` column is ignored.
        target : int
            Index in [0, n) of the example whose label is inferred.

        Returns
        -------
        ndarray of shape (R, K)
            Log-likelihood of each candidate in each run.

        Raises
        ------
        InvalidParameterError
            When ``target`` is out of range, a step is not full-batch, or a noise std is ≤ 0.
        """
        import torch

        from privaudit.mechanisms.clipping import linear_clipped_grad_sum  # lazy: torch

        cand = check_array("candidates", self.candidates, ndim=1)
        Xt = torch.as_tensor(np.asarray(X, dtype=float))
        Yt = torch.as_tensor(np.atleast_2d(np.asarray(Y, dtype=float)))
        n = Xt.shape[0]
        if not 0 <= target < n:
            raise InvalidParameterError(f"target must index a training example in [0, {n}), got target={target}")
        mask = torch.ones((Yt.shape[0], n), dtype=Xt.dtype)
        mask[:, target] = 0.0
        clip = torch.as_tensor([float(self.clip)], dtype=Xt.dtype)
        xi = Xt[target]
        ll = torch.zeros((Yt.shape[0], cand.size), dtype=Xt.dtype)
        ct = torch.as_tensor(cand, dtype=Xt.dtype)
        for st in steps:
            if getattr(st, "batch_size", None) is not None and float(torch.as_tensor(st.batch_size).min()) != n:
                raise InvalidParameterError("dpsgd-label needs full-batch steps (the batch is private under sampling)")
            theta = st.params if st.params.ndim == 2 else st.params[None]
            others = linear_clipped_grad_sum(theta, Xt, Yt, clip, mask)[0]
            resid = (st.noisy_sum if st.noisy_sum.ndim == 2 else st.noisy_sum[None]) - others  # (R, P)
            coef = 2.0 * ((theta @ xi)[:, None] - ct[None, :])  # (R, K)
            norm = coef.abs() * xi.norm()
            coef = coef * torch.clamp(clip / norm.clamp_min(1e-300), max=1.0)
            g = coef[..., None] * xi  # (R, K, P)
            std = torch.as_tensor(st.noise_std, dtype=Xt.dtype).reshape(-1, 1)
            if float(std.min()) <= 0:
                raise InvalidParameterError("noise_std must be > 0 (a non-private run leaks the label exactly)")
            ll -= ((resid[:, None, :] - g) ** 2).sum(-1) / (2 * std**2)
        return ll.numpy()

    def predict_proba(self, steps: Iterable[Any], X: ArrayLike, Y: ArrayLike, target: int) -> np.ndarray:
        """Posterior over the candidates: the ``prior`` times exp(:meth:`log_likelihood`), normalised.

        Parameters
        ----------
        steps, X, Y, target
            As in :meth:`log_likelihood`.

        Returns
        -------
        ndarray of shape (R, K)
            Rows summing to 1.
        """
        ll = self.log_likelihood(steps, X, Y, target)
        return _posterior(_normalise_prior(self.prior, *ll.shape), ll)

    def predict(self, steps: Iterable[Any], X: ArrayLike, Y: ArrayLike, target: int) -> np.ndarray:
        """MAP candidate per run.

        Parameters
        ----------
        steps, X, Y, target
            As in :meth:`log_likelihood`.

        Returns
        -------
        ndarray of shape (R,)
            The candidate label of largest posterior in each run.
        """
        cand = np.asarray(self.candidates, dtype=float)
        return cand[np.argmax(self.predict_proba(steps, X, Y, target), axis=1)]


__all__ = ["DPSGDLabelInference", "RRLabelPosterior", "RROnBinsLabelAttack"]
