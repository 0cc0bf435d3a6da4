"""The release view of seed 001's IWP learners: one record's local release (x̃, ỹ).

:class:`RecordRelease` is the mechanism on z = (x, y) that every record goes through
once, before any learning (:mod:`privaudit.learners.release`): Gaussian features and
randomized-response (or Gaussian) labels, independent. Its exact trade-off curve comes
from composing the two privacy loss distributions in dp_accounting. The view declares
its worst-case pair (opposite corners of the declared feature box, label flipped) and
its reconstruction (x from the released features) as data
(:mod:`privaudit.learners.release_view`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from privaudit.learners.release_view import ReconstructionSetup, TradeoffSetup
from privaudit.mechanisms import GaussianMechanism, PrivacyClaim, RandomizedResponse
from privaudit.mechanisms.accounting import privacy_loss_distribution
from privaudit.mechanisms.randomness import RandomLike
from privaudit.mechanisms.tradeoff import pld_tradeoff
from privaudit.mechanisms.validation import InvalidParameterError, check_delta

if TYPE_CHECKING:
    from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution

#: Recorded in a learner-tradeoff report.
TRADEOFF_NOTE = ("the learner is fitted on synthetic data; the audit tests one record's local release (x~, y~) "
                 "on opposite corners of the declared feature box with the label flipped")
#: Recorded in a learner-reconstruction report.
RECONSTRUCTION_NOTE = ("x is reconstructed from one record's released features x~ (Gaussian, σ on the "
                       "declared box's diameter)")


class RecordRelease:
    """One record's local release (x̃, ỹ) = (x + N(0, σ²I), RR(y)), as a mechanism on z = (x, y).

    ``sample(z, n)`` returns ``(n, d + 1)``: the released features then the released
    label; ``log_density`` adds the two independent log-densities.

    Parameters
    ----------
    feature_mechanism : GaussianMechanism
        The features' release.
    label_mechanism : RandomizedResponse or GaussianMechanism
        The label's release (classification or regression).
    claim : PrivacyClaim
        Claim of the record's release.
    bounds : (lo, hi), optional
        The declared feature box (its corners are the worst-case pair).
    label_bounds : (low, high), optional
        The declared label interval of a Gaussian label release.
    """

    def __init__(self, feature_mechanism: GaussianMechanism, label_mechanism: RandomizedResponse | GaussianMechanism,
                 claim: PrivacyClaim, *, bounds: tuple[ArrayLike, ArrayLike] | None = None,
                 label_bounds: tuple[float, float] | None = None) -> None:
        self.feature_mechanism = feature_mechanism
        self.label_mechanism = label_mechanism
        self.claim = claim
        self.bounds = bounds
        self.label_bounds = label_bounds

    @classmethod
    def from_release(cls, release: Any) -> RecordRelease:
        """From a :class:`privaudit.learners.release.LocalRelease`, a fitted IWP learner holding one, or a record view.

        Parameters
        ----------
        release : object
            Anything with ``feature_mechanism``, ``label_mechanism`` and ``claim`` (and
            optionally ``bounds``, ``label_bounds``), or with such a ``release_``.

        Returns
        -------
        RecordRelease
        """
        rel = getattr(release, "release_", release)
        if getattr(rel, "feature_mechanism", None) is None or getattr(rel, "label_mechanism", None) is None:
            raise InvalidParameterError("the release does not expose feature_mechanism and label_mechanism")
        return cls(rel.feature_mechanism, rel.label_mechanism, rel.claim, bounds=getattr(rel, "bounds", None),
                   label_bounds=getattr(rel, "label_bounds", None))

    def __repr__(self) -> str:
        return f"RecordRelease({self.feature_mechanism!r}, {self.label_mechanism!r}, claim={self.claim})"

    @staticmethod
    def _split(z):
        z = np.asarray(z, dtype=float)
        return z[:-1], z[-1]

    def _categorical_labels(self) -> bool:
        # Randomized response takes and returns a scalar label; a Gaussian label release a 1-vector.
        return isinstance(self.label_mechanism, RandomizedResponse)

    def sample(self, z: ArrayLike, n: int, rng: RandomLike = None) -> np.ndarray:
        """n releases (x̃, ỹ) of the record z = (x, y); the features are drawn first.

        Parameters
        ----------
        z : array (d + 1,)
            The record: features, then label.
        n : int
            Number of releases.
        rng : int, Generator, SeedSequence or None
            Source of the noise.

        Returns
        -------
        numpy.ndarray
            Shape ``(n, d + 1)``: released features, then released label.
        """
        rng = np.random.default_rng(rng)
        x, y = self._split(z)
        feats = self.feature_mechanism.sample(x, n, rng)
        labels = self.label_mechanism.sample(y if self._categorical_labels() else np.atleast_1d(y), n,
                                             rng).reshape(n, 1)
        return np.hstack([feats.reshape(n, -1), labels])

    def log_density(self, outputs: ArrayLike, z: ArrayLike) -> np.ndarray:
        """Log-density of each release: the features' plus the label's (independent).

        Parameters
        ----------
        outputs : array
            Releases, one per row ``(n, d + 1)``.
        z : array (d + 1,)
            The record: features, then label.

        Returns
        -------
        numpy.ndarray
            Shape ``(n,)``.
        """
        o = np.asarray(outputs, dtype=float)
        x, y = self._split(z)
        lm = self.label_mechanism
        ly = lm.log_density(o[:, -1], y) if self._categorical_labels() else lm.log_density(o[:, -1:], np.atleast_1d(y))
        return self.feature_mechanism.log_density(o[:, :-1], x) + ly

    def pld(self, feature_distance: float | None = None) -> PrivacyLossDistribution:
        """PLD of the worst-case pair (features at distance Δ, label flipped) via dp_accounting.

        Parameters
        ----------
        feature_distance : float, optional
            Distance between the features (default: the feature mechanism's worst case).

        Returns
        -------
        dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
        """
        # Each mechanism describes itself to dp_accounting (its dp_event); no switch on its type here.
        return privacy_loss_distribution(self.feature_mechanism, feature_distance).compose(
            privacy_loss_distribution(self.label_mechanism))

    def tradeoff(self, alpha: ArrayLike) -> np.ndarray:
        """Exact trade-off curve of the worst-case pair, from the composed PLD's whole profile.

        Parameters
        ----------
        alpha : array-like
            Type-I errors in [0, 1].

        Returns
        -------
        numpy.ndarray
            Type-II errors, the shape of ``alpha``.
        """
        return pld_tradeoff(self.pld(), alpha)

    def exact_epsilon(self, delta: float) -> float:
        """Exact ε at ``delta`` of the worst-case pair (the composed PLD).

        Parameters
        ----------
        delta : float
            δ in [0, 1).

        Returns
        -------
        float
        """
        return float(self.pld().get_epsilon_for_delta(check_delta(delta)))

    def tradeoff_setup(self, *, phase: str = "known",
                       bounds: tuple[ArrayLike, ArrayLike] | None = None) -> TradeoffSetup:
        """The worst-case pair: opposite corners of the declared feature box, the label flipped.

        ‖x − x′‖₂ is then the box's diameter, the sensitivity σ was calibrated on. The
        labels are two categories of randomized response, or the ends of the declared
        label interval (default ±sensitivity/2) of a Gaussian label release.

        Parameters
        ----------
        phase : str
            Not used (a record's release has no phases).
        bounds : (lo, hi), optional
            The feature box; default the declared ``bounds``.

        Returns
        -------
        TradeoffSetup
        """
        bounds = self.bounds if bounds is None else bounds
        if bounds is None or len(bounds) != 2:
            raise InvalidParameterError(f"bounds=(lo, hi) of the feature box are required, got bounds={bounds!r}")
        lo, hi = (np.asarray(b, dtype=float) for b in bounds)
        lm = self.label_mechanism
        if self._categorical_labels():
            y0, y1 = lm.categories[0], lm.categories[1]
        else:
            y0, y1 = self.label_bounds or (-lm.sensitivity / 2, lm.sensitivity / 2)
        return TradeoffSetup(self, np.r_[lo, y0], np.r_[hi, y1], target="IWP record release (x~, y~), worst-case pair",
                             estimator="clopper-pearson", note=TRADEOFF_NOTE)

    def reconstruction_setup(self, *, prior: Any = None, phase: str = "known") -> ReconstructionSetup:
        """x from the released features x̃ alone (the label carries nothing about x).

        Parameters
        ----------
        prior : object, optional
            Prior of x; None: a fixed x.
        phase : str
            Not used (no phases).

        Returns
        -------
        ReconstructionSetup
        """
        return ReconstructionSetup(self.feature_mechanism, prior=prior, note=RECONSTRUCTION_NOTE)


__all__ = ["RecordRelease"]
