"""Trade-off audits of the three learners' releases, and the one-run label audit of DP-SGD.

The releases are the learners' own views (:mod:`privaudit.learners.release_view`), each
beside its learner; every view declares its worst-case pair and what is known about it
(a :class:`~privaudit.learners.release_view.TradeoffSetup`), which
:func:`~privaudit.audit.engines.release_views.audit_tradeoff_setup` runs. The functions
below take what a paper's experiment starts from (a fitted learner, a list of rounds, a
local release, a DP-SGD view) and never switch on a mechanism's class.

(a) Seed 000, modulated regression — :func:`audit_modulated` on one client's
    :class:`~privaudit.learners.modulated_view.TranscriptRelease` (or one round).
(b) Seed 001, IWP release — :func:`audit_iwp_release` on one record's
    :class:`~privaudit.learners.iwp_view.RecordRelease`.
(c) Seed 002, Cond-DP / DP-SGD under label DP — :func:`audit_dpsgd_label` on
    :class:`~privaudit.learners.dpsgd_view.LabelCanarySteps` or
    :class:`~privaudit.learners.dpsgd_view.DPSGDLabelCanary`; :func:`one_run_label_audit`
    trains *once* with m label canaries and applies the one-run estimator.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privaudit.attacks.pairs import label_canaries
from privaudit.learners.iwp_view import RecordRelease
from privaudit.learners.modulated_view import TranscriptRelease
from privaudit.learners.release_view import DeclaresTradeoffSetup, TradeoffSetup
from privaudit.mechanisms.randomness import RandomLike
from privaudit.mechanisms.validation import InvalidParameterError, check_int

from privaudit.audit.engines.release_views import audit_tradeoff_setup
from privaudit.audit.engines.tradeoff import TradeoffAudit
from privaudit.audit.stats.epsilon_bounds import OneRunBound, one_run_bound
from privaudit.audit.results import stable_repr


# ================================================================== (a) modulated transcripts
def audit_modulated(learner_or_mechanisms: Any, *, phase_known: bool = True, rounds: int | None = None,
                    n: int = 100_000, estimator: str | None = None, confidence: float = 0.95, rng: RandomLike = None,
                    direction: ArrayLike | None = None) -> TradeoffAudit:
    """Audit seed 000's client transcript (or one round, ``rounds=1``).

    With the phase known the release is exactly Gaussian, so the default estimator is
    ``"gdp"`` and the exact curve is G_{μ_T}; with it unknown the default is
    Clopper–Pearson and the exact curve is not known in closed form (it lies above the
    phase-known curve, which is therefore not reported: ``exact_curve=None``).

    Parameters
    ----------
    learner_or_mechanisms : fitted ModulatedRegressor / OneShotModulatedRegressor, TranscriptRelease,
                            list of ModulatedMechanism, or one ModulatedMechanism
        Its rounds and claim (:meth:`TranscriptRelease.of <privaudit.learners.modulated_view.TranscriptRelease.of>`).
    phase_known : bool
        Phases revealed at their steepest, or fresh and hidden.
    rounds : int, optional
        Audit the first ``rounds`` rounds only (a strict prefix against its own exact composition).
    n : int
        Releases per hypothesis.
    estimator : {"clopper-pearson", "gdp"}, optional
        Default: ``"gdp"`` with the phase known, else ``"clopper-pearson"``.
    confidence : float
        Confidence of ε̲.
    rng : int, Generator, SeedSequence or None
        Root randomness.
    direction : array (d,), optional
        Direction of x′ − x (default: round 0's first basis vector).

    Returns
    -------
    TradeoffAudit
    """
    release = TranscriptRelease.of(learner_or_mechanisms, rounds=rounds)
    setup = release.tradeoff_setup(phase="known" if phase_known else "hidden", direction=direction)
    return audit_tradeoff_setup(setup, n=n, estimator=estimator, confidence=confidence, rng=rng)


# ================================================================== (b) IWP record release
def audit_iwp_release(release: Any, *, bounds: tuple[ArrayLike, ArrayLike] | None = None, n: int = 100_000,
                      confidence: float = 0.95, estimator: str = "clopper-pearson",
                      rng: RandomLike = None) -> TradeoffAudit:
    """Audit seed 001's record release on its worst-case pair.

    x and x′ are opposite corners of the declared feature box (so ‖x − x′‖₂ is the
    diameter, the sensitivity σ was calibrated on) and the label is flipped.

    Parameters
    ----------
    release : LocalRelease, fitted IWP learner, or RecordRelease
        The record's release (:meth:`RecordRelease.from_release
        <privaudit.learners.iwp_view.RecordRelease.from_release>`).
    bounds : (lo, hi), optional
        The feature box; default the release's declared ``bounds`` (required if it has none).
    n : int
        Releases per hypothesis.
    confidence : float
        Confidence of ε̲.
    estimator : {"clopper-pearson", "gdp"}
        The estimator.
    rng : int, Generator, SeedSequence or None
        Root randomness.

    Returns
    -------
    TradeoffAudit
    """
    setup = RecordRelease.from_release(release).tradeoff_setup(bounds=bounds)
    return audit_tradeoff_setup(setup, n=n, confidence=confidence, estimator=estimator, rng=rng)


# ================================================================== (c) DP-SGD under label DP
def audit_dpsgd_label(mechanism: Any, *, n: int = 20_000, estimator: str = "gdp", confidence: float = 0.95,
                      rng: RandomLike = None) -> TradeoffAudit:
    """Audit a label-DP DP-SGD view (:class:`LabelCanarySteps` or :class:`DPSGDLabelCanary`) on the canary flip.

    The view declares its attacker: white-box engine runs are scored by the sum of the
    per-step statistics (the exact LR), black-box ones by a projection learned on the
    training split; :class:`LabelCanarySteps` runs the default suite, whose exact
    likelihood ratio uses its density. Another mechanism on the sign s ∈ {−1, +1} is
    tested on s = −1 against s = +1 with the default suite, taken as Gaussian.

    Parameters
    ----------
    mechanism : LabelCanarySteps, DPSGDLabelCanary, or a mechanism on the canary's sign
        The view.
    n : int
        Releases (training runs for the engine) per hypothesis.
    estimator : {"clopper-pearson", "gdp"}
        ``"gdp"`` only for views whose flip is a Gaussian shift (full participation).
    confidence : float
        Confidence of ε̲.
    rng : int, Generator, SeedSequence or None
        Root randomness.

    Returns
    -------
    TradeoffAudit
    """
    if isinstance(mechanism, DeclaresTradeoffSetup):
        setup = mechanism.tradeoff_setup()
    else:
        setup = TradeoffSetup(mechanism, -1.0, 1.0, target=stable_repr(mechanism), assume_gaussian=True)
    if estimator == "gdp" and not setup.assume_gaussian:
        raise InvalidParameterError(f"the GDP estimator assumes a Gaussian trade-off, which {setup.target} does not "
                                    "have (subsampled steps, q < 1): use estimator='clopper-pearson'")
    return audit_tradeoff_setup(setup, n=n, estimator=estimator, confidence=confidence, rng=rng)


def one_run_label_audit(*, m: int = 1000, epsilon: float, delta: float = 1e-5, clip: float = 1.0, epochs: int = 10,
                        lr: float = 0.05, adjacency: str = "label", confidence: float = 0.95,
                        k: int | Sequence[int] | None = None, rng: RandomLike = None) -> OneRunBound:
    """One training run with m label canaries; ε̲ by Steinke, Nasr & Jagielski (2023).

    Canary i has feature e_{d+i} (its own coordinate) and label S_i·Y with S_i = ±1
    uniform; the score of canary i is its coordinate of the final model (SGD moves
    it by +lr·c/denominator per step when S_i = +1). The claim covers each canary's
    label flip (label DP), so each canary is one "example" of the theorem.

    Parameters
    ----------
    m : int
        Label canaries.
    epsilon, delta, clip, epochs, lr, adjacency :
        The DP-SGD run (optimizer SGD, full batch) and the relation it is calibrated for.
    confidence : float
        Confidence of ε̲.
    k : int, optional
        Guesses on each side (default: the estimator's).
    rng : int, Generator, SeedSequence or None
        Source of the canary signs and of the run.

    Returns
    -------
    OneRunBound
    """
    # torch is imported only when a one-run audit runs.
    from privaudit.learners.dpsgd import train_linear_dpsgd_runs

    rng = np.random.default_rng(rng)
    X, y, signs = label_canaries(check_int("m", m), rng=rng)
    theta = train_linear_dpsgd_runs(X, y[None], epsilon=epsilon, delta=delta, clip=clip, epochs=epochs, lr=lr,
                                    optimizer="sgd", adjacency=adjacency, rng=rng)
    if not np.all(np.isfinite(theta)):
        # An overflowed model ranks the canaries by ±inf/NaN: its "bound" would be noise, never a pass.
        raise InvalidParameterError(f"the model overflowed float64 during training (lr={lr!r}, clip={clip!r}, "
                                    f"epochs={epochs!r}): no bound can be read from it; lower lr")
    return one_run_bound(theta[0], signs, delta=delta, confidence=confidence, k=k)


__all__ = ["audit_dpsgd_label", "audit_iwp_release", "audit_modulated", "one_run_label_audit"]
