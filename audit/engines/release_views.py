"""Auditing what a learner releases, from what its release view declares.

A learner exposes ``release_view(*, n_train, dim, mode, rng)``, returning a mechanism
that stands for its release (:mod:`privaudit.learners.release_view`; the built-in views
live beside their learners: a client's transcript, a record's (x̃, ỹ), the DP-SGD steps
along a label canary). The learner kinds (:mod:`privaudit.audit.kinds.learner_tradeoff`,
:mod:`~privaudit.audit.kinds.learner_reconstruction`) call it, then the functions below,
which never look at the learner's or the view's type:

* :func:`tradeoff_setup` reads the view's own :class:`~privaudit.learners.release_view.TradeoffSetup`
  when it declares one (``tradeoff_setup``: worst-case pair, exact μ, default estimator,
  attacker, note), and otherwise takes the mechanism's worst-case pair
  (:func:`privaudit.attacks.pairs.worst_case_pair`); :func:`audit_tradeoff_setup` runs it;
* :func:`reconstruction_setup` and :func:`audit_reconstruction_setup` do the same for
  reconstruction (the mechanism(s) to reconstruct from, the prior, the phase).

Adding a learner therefore needs no edit here: give it a ``release_view``.
"""

from __future__ import annotations

from typing import Any

from privaudit.attacks.pairs import worst_case_pair
from privaudit.learners.release_view import (
    DeclaresReconstructionSetup,
    DeclaresTradeoffSetup,
    ReconstructionSetup,
    TradeoffSetup,
)
from privaudit.mechanisms.accounting import gdp_epsilon
from privaudit.mechanisms.tradeoff import gaussian_tradeoff

from privaudit.audit.engines.reconstruction import ReconstructionAudit, audit_reconstruction
from privaudit.audit.engines.tradeoff import TradeoffAudit, audit_tradeoff


def tradeoff_setup(view: Any, *, phase: str = "known") -> TradeoffSetup:
    """What ``view`` declares about its worst-case pair, else the mechanism's worst-case pair with nothing known.

    Parameters
    ----------
    view : Mechanism
        A release view (or any mechanism with a known worst-case pair).
    phase : {"known", "hidden"}
        Passed to a view that declares its setup (modulated views reveal or hide the phases).

    Returns
    -------
    TradeoffSetup
    """
    if isinstance(view, DeclaresTradeoffSetup):
        return view.tradeoff_setup(phase=phase)
    pair = worst_case_pair(view)
    return TradeoffSetup(pair.mechanism, pair.x, pair.x_prime)


def audit_tradeoff_setup(setup: TradeoffSetup, *, n: int, confidence: float, rng: Any,
                         estimator: str | None = None) -> TradeoffAudit:
    """:func:`~privaudit.audit.engines.tradeoff.audit_tradeoff` of a declared pair.

    Parameters
    ----------
    setup : TradeoffSetup
        The mechanism, the pair and what is known about it.
    n : int
        Releases per hypothesis.
    confidence : float
        Confidence of ε̲ and of the band.
    rng : int, Generator, SeedSequence or None
        Root randomness of the audit.
    estimator : {"clopper-pearson", "gdp"}, optional
        Default: the setup's, else the audit's own default.

    Returns
    -------
    TradeoffAudit
    """
    kw: dict[str, Any] = {}
    estimator = estimator or setup.estimator
    if estimator is not None:
        kw["estimator"] = estimator
    if setup.exact_mu is not None:
        mu = setup.exact_mu
        kw["exact_curve"] = lambda alpha: gaussian_tradeoff(mu, alpha)
        kw["epsilon_exact"] = gdp_epsilon(mu, setup.mechanism.claim.delta)
    return audit_tradeoff(setup.mechanism, setup.x, setup.x_prime, n=n, attacker=setup.attacker,
                          confidence=confidence, rng=rng, target=setup.target,
                          assume_gaussian=setup.assume_gaussian, **kw)


def reconstruction_setup(view: Any, *, prior: Any = None, phase: Any = "known") -> ReconstructionSetup:
    """What ``view`` declares about reconstructing its input, else the view itself under ``prior`` and ``phase``.

    Parameters
    ----------
    view : Mechanism
        A release view.
    prior : object, optional
        The caller's prior of the input (None: a fixed input); a view may replace it.
    phase : str or array
        The caller's phases, as ``audit_reconstruction`` takes them.

    Returns
    -------
    ReconstructionSetup
    """
    if isinstance(view, DeclaresReconstructionSetup):
        return view.reconstruction_setup(prior=prior, phase=phase)
    return ReconstructionSetup(view, prior=prior, phase=phase)


def audit_reconstruction_setup(setup: ReconstructionSetup, *, attacker: Any, n: int, confidence: float, rng: Any,
                               x: Any = None) -> ReconstructionAudit:
    """:func:`~privaudit.audit.engines.reconstruction.audit_reconstruction` of a declared setup.

    Parameters
    ----------
    setup : ReconstructionSetup
        The mechanism(s), prior and phase.
    attacker : None, str, class or instance
        As ``audit_reconstruction`` takes it.
    n : int
        Audited releases.
    confidence : float
        Two-sided level of every interval.
    rng : int, Generator, SeedSequence or None
        Root randomness of the audit.
    x : array-like, optional
        The fixed input when the setup has no prior (default: as ``audit_reconstruction`` chooses).

    Returns
    -------
    ReconstructionAudit
    """
    return audit_reconstruction(setup.mechanism, attacker, x, setup.prior, n=n, rng=rng, confidence=confidence,
                                phase=setup.phase)


__all__ = ["audit_reconstruction_setup", "audit_tradeoff_setup", "reconstruction_setup", "tradeoff_setup"]
