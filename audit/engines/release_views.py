"""Auditing a learner through the mechanism that stands for what it releases.

A learner exposes ``release_view(*, n_train, dim, mode, rng)``, returning a
mechanism (``claim``, vectorised ``sample(x, n, rng)``, ``log_density`` where known)
that stands for its release: one client's transcript for the modulated learners, one
record's (x̃, ỹ) for IWP, the DP-SGD steps along a label canary for Cond-DP. The
learner kinds (:mod:`privaudit.audit.kinds.learner_tradeoff`,
:mod:`~privaudit.audit.kinds.learner_reconstruction`) call it and then the two
functions below, which never look at the learner's or the view's type:

* a view may define ``tradeoff_audit(*, n, confidence, rng, estimator, phase)`` and
  ``reconstruction_audit(*, attacker, prior, n, confidence, rng, phase)`` when it
  knows its worst-case pair, exact curve or strongest attacker (the built-in views
  in :mod:`privaudit.audit.engines.learner_audits` do); and ``tradeoff_note`` /
  ``reconstruction_note``, recorded in the report;
* any other mechanism is audited on its worst-case pair
  (:func:`privaudit.attacks.pairs.worst_case_pair`) and reconstructed directly.

Adding a learner therefore needs no edit here: give it a ``release_view``.
"""

from __future__ import annotations

import numpy as np

from privaudit.attacks.pairs import worst_case_pair

from privaudit.mechanisms.randomness import int_seed
from privaudit.audit.engines.reconstruction import ReconstructionAudit, audit_reconstruction
from privaudit.audit.engines.tradeoff import TradeoffAudit, audit_tradeoff


def synthetic_data(n: int, dim: int, rng: np.random.Generator, *, classification: bool):
    """Features uniform in the unit ℓ₂ ball's inscribed cube [−1/√d, 1/√d]^d, linear labels.

    y = xᵀβ + 0.1·N(0, 1) with β = linspace(1, −1, d) (regression), or its sign
    (classification, labels ±1). Every row lies in the unit ball and in the box
    [−1, 1]^d, so declared bounds of either kind hold independently of the data.
    """
    X = rng.uniform(-1.0, 1.0, (n, dim)) / np.sqrt(dim)
    y = X @ np.linspace(1.0, -1.0, dim) + 0.1 * rng.standard_normal(n)
    return X, (np.where(y >= 0, 1.0, -1.0) if classification else y)


def fit_on_synthetic(learner, *, n_train: int, dim: int, rng: np.random.Generator):
    """A clone of ``learner`` fitted on :func:`synthetic_data`, seeded from ``rng`` unless it has a random_state.

    Draw order (kept so that presets reproduce): the learner's integer seed, then the data.
    """
    from sklearn.base import clone, is_classifier

    fitted = clone(learner)
    if "random_state" in fitted.get_params() and fitted.get_params()["random_state"] is None:
        fitted.set_params(random_state=int_seed(rng))
    X, y = synthetic_data(n_train, dim, rng, classification=is_classifier(fitted))
    return fitted.fit(X, y)


def audit_release_tradeoff(view, *, n: int, confidence: float, rng, estimator: str | None = None,
                           phase: str = "known") -> TradeoffAudit:
    """Trade-off audit of a release view: its own ``tradeoff_audit``, else its worst-case pair."""
    own = getattr(view, "tradeoff_audit", None)
    if own is not None:
        return own(n=n, confidence=confidence, rng=rng, estimator=estimator, phase=phase)
    pair = worst_case_pair(view)
    kw = {"estimator": estimator} if estimator is not None else {}
    return audit_tradeoff(pair.mechanism, pair.x, pair.x_prime, n=n, confidence=confidence, rng=rng, **kw)


def audit_release_reconstruction(view, *, attacker, prior, n: int, confidence: float, rng,
                                 phase: str = "known") -> ReconstructionAudit:
    """Reconstruction audit of a release view: its own ``reconstruction_audit``, else of the view itself."""
    own = getattr(view, "reconstruction_audit", None)
    if own is not None:
        return own(attacker=attacker, prior=prior, n=n, confidence=confidence, rng=rng, phase=phase)
    return audit_reconstruction(view, attacker, None, prior, n=n, rng=rng, confidence=confidence, phase=phase)


__all__ = ["audit_release_reconstruction", "audit_release_tradeoff", "fit_on_synthetic", "synthetic_data"]
