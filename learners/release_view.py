"""What a learner's release view declares, so that audits need no knowledge of its type.

A learner is audited through ``release_view(*, n_train, dim, mode, rng)``, which returns
a mechanism (``claim``, vectorised ``sample(x, n, rng)``, ``log_density`` where known)
standing for what the learner releases. Each learner family defines its own view next
to itself: :mod:`privaudit.learners.modulated_view` (one client's transcript),
:mod:`privaudit.learners.iwp_view` (one record's (x̃, ỹ)) and
:mod:`privaudit.learners.dpsgd_view` (the DP-SGD steps along a label canary).

A view that knows more than the mechanism protocol says declares it as data:

* ``tradeoff_setup(*, phase)`` returns a :class:`TradeoffSetup`: the worst-case pair,
  the mechanism to sample on it, the exact μ when the pair's trade-off is Gaussian,
  the default estimator, the strongest attacker and the note a report records;
* ``reconstruction_setup(*, prior, phase)`` returns a :class:`ReconstructionSetup`:
  the mechanism(s) to reconstruct from and the prior to draw the input from.

The audit side (:mod:`privaudit.audit.engines.release_views`) reads these records and
runs the audits; a view without them is audited on its worst-case pair
(:func:`privaudit.attacks.pairs.worst_case_pair`) and reconstructed as it is. Nothing
here imports :mod:`privaudit.audit`: the dependency points from the audits to the
learners, never back.

Views of learners fitted on data use :func:`fit_on_synthetic` (a clone fitted on
:func:`synthetic_data`), so that the audited mechanisms are the ones the learner builds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
from sklearn.base import BaseEstimator, clone, is_classifier

from privaudit.mechanisms.protocol import Mechanism
from privaudit.mechanisms.randomness import int_seed
from privaudit.mechanisms.validation import InvalidParameterError, check_int


@dataclass(frozen=True, eq=False)
class TradeoffSetup:
    """How a release is tested: its worst-case pair and what is known about that pair.

    Equality is identity (the record holds arrays and a mechanism).

    Attributes
    ----------
    mechanism : Mechanism
        What is sampled under x and x′ (e.g. the transcript with its phases fixed).
    x, x_prime : array-like or float
        The neighbouring inputs (null and alternative).
    target : str or None
        Name in reports; None: ``repr(mechanism)``.
    estimator : {"clopper-pearson", "gdp"} or None
        Estimator used when the caller names none; None: the trade-off audit's default.
    assume_gaussian : bool
        The pair's trade-off curve is Gaussian (G_μ), which allows the GDP estimator.
    exact_mu : float or None
        μ of this very pair when its trade-off is exactly G_μ; the exact curve and ε are
        then reported from it. None: the mechanism's own ``tradeoff`` and
        ``exact_epsilon``, when it has them.
    attacker : object or None
        The attacker to run (anything ``audit_tradeoff`` accepts); None: the default suite.
    note : str or None
        Recorded in a report of the audit (how the learner was turned into this pair).
    """

    mechanism: Mechanism
    x: Any
    x_prime: Any
    target: str | None = None
    estimator: str | None = None
    assume_gaussian: bool = False
    exact_mu: float | None = None
    attacker: Any = None
    note: str | None = None


@dataclass(frozen=True, eq=False)
class ReconstructionSetup:
    """How the input of a release is reconstructed: from which mechanism(s), under which prior.

    Attributes
    ----------
    mechanism : Mechanism or list of Mechanism
        One release, or the rounds of a transcript (independent releases of the same x).
    prior : object or None
        Prior the input is drawn from (e.g. a :class:`privaudit.attacks.priors.DiscretePrior`);
        None: a fixed input.
    phase : str or array
        Modulation phases, as ``audit_reconstruction`` takes them (``"known"`` for releases
        without phases).
    note : str or None
        Recorded in a report of the audit.
    """

    mechanism: Any
    prior: Any = None
    phase: Any = "known"
    note: str | None = None


@runtime_checkable
class DeclaresTradeoffSetup(Protocol):
    """A release view that declares how it is tested (:class:`TradeoffSetup`)."""

    def tradeoff_setup(self, *, phase: str = "known") -> TradeoffSetup:
        """The worst-case pair and what is known about it.

        Parameters
        ----------
        phase : {"known", "hidden"}
            Whether the modulation phases are revealed to the attacker.

        Returns
        -------
        TradeoffSetup
        """
        ...


@runtime_checkable
class DeclaresReconstructionSetup(Protocol):
    """A release view that declares how its input is reconstructed (:class:`ReconstructionSetup`)."""

    def reconstruction_setup(self, *, prior: Any = None, phase: str = "known") -> ReconstructionSetup:
        """The mechanism(s) and prior of the reconstruction.

        Parameters
        ----------
        prior : object, optional
            The caller's prior, which the view may replace.
        phase : {"known", "hidden"}
            Whether the modulation phases are revealed to the attacker.

        Returns
        -------
        ReconstructionSetup
        """
        ...


def check_phase(phase: str) -> str:
    """``phase`` when it is ``"known"`` or ``"hidden"``, else an error naming it.

    Parameters
    ----------
    phase : str
        Whether the modulation phases are revealed to the attacker.

    Returns
    -------
    str
    """
    if phase not in ("known", "hidden"):
        raise InvalidParameterError(f"phase must be 'known' or 'hidden', got phase={phase!r}")
    return phase


def synthetic_data(n: int, dim: int, rng: np.random.Generator, *,
                   classification: bool) -> tuple[np.ndarray, np.ndarray]:
    """Features uniform in the unit ℓ₂ ball's inscribed cube [−1/√d, 1/√d]^d, linear labels.

    y = xᵀβ + 0.1·N(0, 1) with β = linspace(1, −1, d) (regression), or its sign
    (classification, labels ±1). Every row lies in the unit ball and in the box
    [−1, 1]^d, so declared bounds of either kind hold independently of the data.

    Parameters
    ----------
    n, dim : int
        Rows and features.
    rng : numpy.random.Generator
        Source of the features and the label noise.
    classification : bool
        Labels ±1 instead of real responses.

    Returns
    -------
    X : ndarray (n, dim)
    y : ndarray (n,)
    """
    X = rng.uniform(-1.0, 1.0, (n, dim)) / np.sqrt(dim)
    y = X @ np.linspace(1.0, -1.0, dim) + 0.1 * rng.standard_normal(n)
    return X, (np.where(y >= 0, 1.0, -1.0) if classification else y)


def fit_on_synthetic(learner: BaseEstimator, *, n_train: int, dim: int, rng: np.random.Generator) -> BaseEstimator:
    """A clone of ``learner`` fitted on :func:`synthetic_data`, seeded from ``rng`` unless it has a random_state.

    Draw order (kept so that presets reproduce): the learner's integer seed
    (:func:`~privaudit.mechanisms.randomness.int_seed`), then the data.

    Parameters
    ----------
    learner : scikit-learn estimator
        Left unfitted; a clone is fitted.
    n_train, dim : int
        Size of the synthetic training set.
    rng : numpy.random.Generator
        Source of the clone's seed and of the data.

    Returns
    -------
    estimator
        The fitted clone.
    """
    fitted = clone(learner)
    if "random_state" in fitted.get_params() and fitted.get_params()["random_state"] is None:
        fitted.set_params(random_state=int_seed(rng))
    X, y = synthetic_data(check_int("n_train", n_train), check_int("dim", dim), rng,
                          classification=is_classifier(fitted))
    return fitted.fit(X, y)


__all__ = ["DeclaresReconstructionSetup", "DeclaresTradeoffSetup", "ReconstructionSetup", "TradeoffSetup",
           "check_phase", "fit_on_synthetic", "synthetic_data"]
