"""Textbook floating-point Laplace and Gaussian mechanisms: UNSAFE, for demonstrations and audits only.

``fl(x + noise)`` with ``noise`` from numpy's ``laplace`` or ``standard_normal`` does not
have the law its density describes (Mironov 2012, "On significance of the least
significant bits for differential privacy"): numpy's Laplace returns ±b·log(w) for
w = 2U or 2 − 2U with U = k·2⁻⁵³, and ``x + noise`` is rounded onto a set of doubles that
depends on x, so many outputs of x′ are impossible under x (true ε = ∞). Its tails also
stop at 36.7 scales, so the support itself depends on x. privaudit's own
:class:`~privaudit.mechanisms.LaplaceMechanism` and
:class:`~privaudit.mechanisms.GaussianMechanism` release on a fixed lattice instead
(:mod:`privaudit.mechanisms.lattice`). These classes keep the textbook samplers, with
the same (false) claims and the continuous densities, so that the floating-point
attackers have something to catch.

:class:`UnsafeBoundedSum` and :class:`UnsafeBoundedMean` are dataset mechanisms with
the two classic clamping bugs (``bug="clamp-after-noise"``: the records are not
clamped, the noisy release is; ``bug="sensitivity-bound"``: the sensitivity is
computed from the upper bound alone), and their correct twin (``bug=None``). Each
declares the datasets it accepts (:class:`~privaudit.mechanisms.domains.DatasetDomain`,
records wider than the clamp: a clamp is only tested by records beyond it), so that
:func:`~privaudit.audit.engines.pair_search.search_pairs` must find the leaking pair
from the record bounds, the size range and the neighbourhood alone.
"""

from __future__ import annotations

import abc
import math

import dp_accounting as dpa
import numpy as np
from numpy.typing import ArrayLike

from .claim import PrivacyClaim
from .domains import Box, DatasetDomain, dataset_rows, short_repr
from .gaussian import GaussianMechanism
from .laplace import LaplaceMechanism, float_safe_laplace
from .neighbourhoods import AddRemove, ReplaceOne, parse_neighbourhood
from .validation import InvalidInputError, InvalidParameterError, check_array, check_epsilon, check_int, check_real, check_size
from .registry import register_mechanism, requires, sigma_or_epsilon_delta


@register_mechanism("unsafe-float-laplace", check=requires("epsilon"))
class UnsafeFloatLaplaceMechanism(LaplaceMechanism):
    """``x + rng.laplace(0, b)``: the textbook float Laplace. Its ε-DP claim is FALSE (Mironov 2012).

    Same parameters as :class:`~privaudit.mechanisms.LaplaceMechanism`; the
    ``log_density`` is the continuous Laplace density the sampler does not have.
    """

    #: The parameters of :class:`LaplaceMechanism`.
    _parameter_constraints = LaplaceMechanism._parameter_constraints

    def __repr__(self) -> str:
        return f"UnsafeFloatLaplaceMechanism(scale={self.scale:.6g}, claim={self.claim})"

    def sample(self, x: ArrayLike, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """``n`` releases ``fl(x + noise)``: shape ``(n, *x.shape)``.

        Parameters
        ----------
        x : array-like
            The input.
        n : int
            Number of independent releases.
        rng : Generator, int or None
            Source of randomness (passed to :func:`numpy.random.default_rng`).

        Returns
        -------
        ndarray of shape (n, *x.shape)
            Independent releases stacked along axis 0.
        """
        x = check_array("x", x)
        n = check_size("n", n)
        return x + np.random.default_rng(rng).laplace(0.0, self.scale, (n, *x.shape))

    def log_density(self, outputs: ArrayLike, x: ArrayLike) -> np.ndarray:
        """Continuous Laplace log-density (what the claim pretends the release has).

        Parameters
        ----------
        outputs : array-like of shape (n, ...)
            Releases, one per row of the leading axis.
        x : array-like
            The input.

        Returns
        -------
        ndarray of shape (n,)
            Σ_j −|y_j − x_j|/b − d·log(2b).
        """
        x = check_array("x", x)
        z = np.abs(np.asarray(outputs, dtype=float) - x).reshape(len(outputs), -1)
        return -z.sum(axis=1) / self.scale - z.shape[1] * math.log(2 * self.scale)

    def float_error(self, d: int = 1) -> tuple[float, float]:
        """Unbounded: outputs reachable under one input only exist (ε = ∞).

        Parameters
        ----------
        d : int
            Number of released coordinates (validated, otherwise unused).

        Returns
        -------
        (float, float)
            (inf, 1.0).
        """
        check_int("d", d)
        return math.inf, 1.0


@register_mechanism("unsafe-float-gaussian", check=sigma_or_epsilon_delta)
class UnsafeFloatGaussianMechanism(GaussianMechanism):
    """``x + σ·rng.standard_normal()``: the textbook float Gaussian. Its claim is not covered by any analysis.

    Same parameters as :class:`~privaudit.mechanisms.GaussianMechanism`; the
    ``log_density`` and Fisher information are the continuous ones.
    """

    #: The parameters of :class:`GaussianMechanism`.
    _parameter_constraints = GaussianMechanism._parameter_constraints

    def __repr__(self) -> str:
        return f"UnsafeFloatGaussianMechanism(sigma={self.sigma:.6g}, claim={self.claim})"

    def sample(self, x: ArrayLike, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """``n`` releases ``fl(x + fl(σ·z))``: shape ``(n, *x.shape)``.

        Parameters
        ----------
        x : array-like
            The input.
        n : int
            Number of independent releases.
        rng : Generator, int or None
            Source of randomness (passed to :func:`numpy.random.default_rng`).

        Returns
        -------
        ndarray of shape (n, *x.shape)
            Independent releases stacked along axis 0.
        """
        x = check_array("x", x)
        n = check_size("n", n)
        out = np.random.default_rng(rng).standard_normal((n, *x.shape))
        out *= self.sigma
        out += x
        return out

    def log_density(self, outputs: ArrayLike, x: ArrayLike) -> np.ndarray:
        """Continuous Gaussian log-density (what the claim pretends the release has).

        Parameters
        ----------
        outputs : array-like of shape (n, ...)
            Releases, one per row of the leading axis.
        x : array-like
            The input.

        Returns
        -------
        ndarray of shape (n,)
            −‖y − x‖²/(2σ²) − d·log(σ√(2π)).
        """
        x = check_array("x", x)
        z = (np.asarray(outputs, dtype=float) - x) / self.sigma
        z = z.reshape(z.shape[0], -1)
        return -0.5 * np.einsum("ij,ij->i", z, z) - z.shape[1] * (math.log(self.sigma) + 0.5 * math.log(2 * math.pi))

    def fisher_information(self, x: ArrayLike) -> np.ndarray:
        """I/σ² (the continuous Gaussian's).

        Parameters
        ----------
        x : array-like of shape (d,)
            The input (only its size matters).

        Returns
        -------
        ndarray of shape (d, d)
            I/σ².
        """
        x = check_array("x", x)
        return np.eye(x.size) / self.sigma**2

    def float_error(self, d: int = 1) -> tuple[float, float]:
        """Unbounded: outputs reachable under one input only exist.

        Parameters
        ----------
        d : int
            Number of released coordinates (validated, otherwise unused).

        Returns
        -------
        (float, float)
            (inf, 1.0).
        """
        check_int("d", d)
        return math.inf, 1.0


#: The clamping bugs of :class:`UnsafeBoundedSum` and :class:`UnsafeBoundedMean` (None: the correct twin).
CLAMPING_BUGS = (None, "clamp-after-noise", "sensitivity-bound")


class _BoundedAggregate(abc.ABC):
    """Sum or mean of records clamped to [lower, upper], plus float-safe Laplace noise; optionally with a clamping bug.

    Subclasses give the aggregate, its sensitivity from given bounds, the range the
    clamp-after-noise variant clamps its release to, and the fewest records it accepts.
    """

    #: Fewest present records a release needs.
    min_records: int = 0

    def __init__(self, *, epsilon: float, lower: float, upper: float, bug: str | None = None,
                 neighbourhood: str = "add-remove", records_low: float | None = None,
                 records_high: float | None = None, min_size: int = 1, max_size: int = 10,
                 padded: bool = False) -> None:
        if bug not in CLAMPING_BUGS:
            raise InvalidParameterError(f"bug must be one of {CLAMPING_BUGS}, got bug={bug!r}")
        self.epsilon = check_epsilon(epsilon)
        self.lower, self.upper = check_real("lower", lower), check_real("upper", upper)
        if not self.lower < self.upper:
            raise InvalidParameterError(f"lower must be < upper, got lower={lower!r}, upper={upper!r}")
        if bug == "sensitivity-bound" and self.upper == 0:
            raise InvalidParameterError("bug='sensitivity-bound' computes the sensitivity from the upper bound "
                                        f"alone: it needs upper != 0, got upper={upper!r}")
        self.bug = bug
        nb = parse_neighbourhood(neighbourhood)
        if type(nb) not in (AddRemove, ReplaceOne):  # Label is a ReplaceOne on the last value only
            raise InvalidParameterError(f"neighbourhood must be 'add-remove' or 'replace-one', "
                                        f"got neighbourhood={neighbourhood!r}")
        width = self.upper - self.lower
        # By default records may lie one clamp width beyond each bound: the clamp is what must stop them.
        lo = self.lower - width if records_low is None else check_real("records_low", records_low)
        hi = self.upper + width if records_high is None else check_real("records_high", records_high)
        if not lo <= hi:
            raise InvalidParameterError(f"records_low must be <= records_high, got records_low={lo!r}, "
                                        f"records_high={hi!r}")
        self.domain = DatasetDomain(records=Box(np.full(1, lo), np.full(1, hi)), min_size=min_size,
                                    max_size=max_size, padded=padded)
        self.claim = PrivacyClaim(self.epsilon, 0.0, nb)
        self.sensitivity = self._sensitivity(self.lower, self.upper)
        # The noise the code draws: from the correct bound, or (the bug) from the upper bound alone. Not named
        # `scale`: the reachability attacker reads a `scale` as that of noise added to the input itself.
        drawn = self._sensitivity(0.0, abs(self.upper)) if bug == "sensitivity-bound" else self.sensitivity
        self.noise_scale = drawn / self.epsilon

    @property
    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return (f"{self.name}(lower={self.lower:g}, upper={self.upper:g}, bug={self.bug!r}, "
                f"noise_scale={self.noise_scale:.6g}, domain={self.domain}, claim={self.claim})")

    def dp_event(self, distance: float | None = None) -> dpa.DpEvent:
        """The ``dp_accounting`` event of one release between neighbouring datasets.

        The correct twin (``bug=None``) is ``LaplaceDpEvent(b/Δ)``: Laplace noise of scale
        ``b = noise_scale`` on an aggregate of sensitivity Δ (the lattice release being its
        post-processing). A bugged variant returns ``UnsupportedDpEvent``: what it releases is not
        the Laplace event its code claims, and no exact event is known for it (an event must never
        over-state privacy).

        Parameters
        ----------
        distance : float, optional
            Change of the aggregate between the two datasets (default: the sensitivity Δ, the
            worst case).

        Returns
        -------
        dp_accounting.DpEvent
            The event, or ``UnsupportedDpEvent`` for a bugged variant.
        """
        if self.bug is not None:
            return dpa.UnsupportedDpEvent()
        d = self.sensitivity if distance is None else check_real("distance", distance)
        if d == 0:
            return dpa.NoOpDpEvent()
        return dpa.LaplaceDpEvent(self.noise_scale / abs(d))

    @abc.abstractmethod
    def _aggregate(self, records: np.ndarray) -> float:
        """The aggregate of the records (unclamped here: :meth:`sample` clamps them, or not, first)."""

    @abc.abstractmethod
    def _sensitivity(self, lower: float, upper: float) -> float:
        """The aggregate's sensitivity under the claim's neighbourhood for records in [lower, upper]."""

    @abc.abstractmethod
    def _release_range(self) -> tuple[float, float]:
        """The range the clamp-after-noise variant clamps its release to."""

    def sample(self, x: ArrayLike, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """``n`` releases on the dataset ``x``: the aggregate of the clamped records + Lap(scale), shape ``(n, 1)``.

        With ``bug="clamp-after-noise"`` the records are aggregated unclamped and the noisy
        release is clamped to the range a correct aggregate can take instead.

        Parameters
        ----------
        x : array-like
            A dataset of one-value records (axis 0 indexes records; NaN rows are absent), of any
            size: the declared :attr:`domain` is what a search explores, not a limit of the code.
        n : int
            Number of releases.
        rng : Generator, int or None
            Source of the noise.

        Returns
        -------
        ndarray of shape (n, 1)

        Raises
        ------
        InvalidInputError
            A malformed dataset (:func:`~privaudit.mechanisms.domains.dataset_rows`), or no record for a mean.
        """
        rows = dataset_rows("x", x, record_size=1)
        records = rows[~np.isnan(rows[:, 0]), 0]
        if records.size < self.min_records:
            raise InvalidInputError(f"{self.name} needs at least {self.min_records} record (the mean of an empty "
                                    f"dataset is undefined), got x={short_repr(x)}")
        n = check_size("n", n)
        if self.bug == "clamp-after-noise":
            out = float_safe_laplace(np.full((n, 1), self._aggregate(records)), self.noise_scale, rng)
            return np.clip(out, *self._release_range())
        return float_safe_laplace(np.full((n, 1), self._aggregate(np.clip(records, self.lower, self.upper))),
                                  self.noise_scale, rng)


class UnsafeBoundedSum(_BoundedAggregate):
    """Σ clip(xᵢ, lower, upper) + Lap(Δ/ε) on a dataset; ``bug`` selects a clamping bug (None: correct).

    Δ = max(|lower|, |upper|) under add/remove, upper − lower under replace-one.

    * ``bug="sensitivity-bound"``: Δ computed from the upper bound alone (|upper|, and
      |upper| − 0 under replace-one), so scale |upper|/ε. On the pair that adds (or
      replaces) a record at the bound the claim forgot, the release is a Laplace shift
      of Δ at scale |upper|/ε: exact ε = ε·Δ/|upper| (> ε when |lower| > |upper|, or under
      replace-one whenever lower < 0 < upper).
    * ``bug="clamp-after-noise"``: Σ xᵢ + Lap(Δ/ε), clamped to
      [max_size·min(lower, 0), max_size·max(upper, 0)]. A record r of the domain moves the
      unclamped sum by up to s = max(|records_low|, |records_high|) (add/remove) or
      records_high − records_low (replace-one): exact ε ≤ ε·s/Δ (post-processing of a
      Laplace shift of s), with equality when both sums lie inside the release range.

    Parameters
    ----------
    epsilon : float
        The claimed ε (pure, δ = 0) under ``neighbourhood``.
    lower, upper : float
        Clamping bounds, lower < upper.
    bug : {None, "clamp-after-noise", "sensitivity-bound"}
        The clamping bug (None: the correct mechanism).
    neighbourhood : {"add-remove", "replace-one"}
        The claim's neighbourhood.
    records_low, records_high : float, optional
        Bounds of a record of the declared domain (default: the clamp widened by its width on each side).
    min_size, max_size : int
        Size range of the declared domain.
    padded : bool
        Datasets of the declared domain are ``max_size`` rows, NaN for absent records.
    """

    def _aggregate(self, records: np.ndarray) -> float:
        return float(records.sum())

    def _sensitivity(self, lower: float, upper: float) -> float:
        if isinstance(self.claim.neighbourhood, AddRemove):
            return max(abs(lower), abs(upper))
        return upper - lower

    def _release_range(self) -> tuple[float, float]:
        m = self.domain.max_size
        return m * min(self.lower, 0.0), m * max(self.upper, 0.0)


class UnsafeBoundedMean(_BoundedAggregate):
    """mean(clip(xᵢ, lower, upper)) + Lap(Δ/ε) on datasets of at least ``min_size`` ≥ 1 records; ``bug`` as for the sum.

    Δ = (upper − lower)/(min_size + 1) under add/remove (adding r to n ≥ min_size records
    moves the mean by |r − mean|/(n + 1)), (upper − lower)/min_size under replace-one.

    * ``bug="sensitivity-bound"``: Δ computed from the upper bound alone, |upper|/(min_size + 1)
      or |upper|/min_size: exact ε on the worst pair = ε·(upper − lower)/|upper| (a Laplace
      shift of the correct Δ at the buggy scale; the worst pair has min_size records).
    * ``bug="clamp-after-noise"``: the mean of the unclamped records + Lap(Δ/ε), clamped to
      [lower, upper]: exact ε ≤ ε·(records_high − records_low)/(upper − lower)
      (post-processing of the unclamped mean's Laplace shift).

    Parameters
    ----------
    epsilon : float
        The claimed ε (pure, δ = 0) under ``neighbourhood``.
    lower, upper : float
        Clamping bounds, lower < upper.
    bug : {None, "clamp-after-noise", "sensitivity-bound"}
        The clamping bug (None: the correct mechanism).
    neighbourhood : {"add-remove", "replace-one"}
        The claim's neighbourhood.
    records_low, records_high : float, optional
        Bounds of a record of the declared domain (default: the clamp widened by its width on each side).
    min_size, max_size : int
        Size range of the declared domain, min_size ≥ 1 (a mean needs a record).
    padded : bool
        Datasets of the declared domain are ``max_size`` rows, NaN for absent records.
    """

    min_records = 1

    def __init__(self, *, epsilon: float, lower: float, upper: float, bug: str | None = None,
                 neighbourhood: str = "add-remove", records_low: float | None = None,
                 records_high: float | None = None, min_size: int = 1, max_size: int = 10,
                 padded: bool = False) -> None:
        check_int("min_size", min_size, minimum=1)  # before the sensitivity divides by it
        super().__init__(epsilon=epsilon, lower=lower, upper=upper, bug=bug, neighbourhood=neighbourhood,
                         records_low=records_low, records_high=records_high, min_size=min_size,
                         max_size=max_size, padded=padded)

    def _aggregate(self, records: np.ndarray) -> float:
        return float(records.mean())

    def _sensitivity(self, lower: float, upper: float) -> float:
        extra = 1 if isinstance(self.claim.neighbourhood, AddRemove) else 0
        return (upper - lower) / (self.domain.min_size + extra)

    def _release_range(self) -> tuple[float, float]:
        return self.lower, self.upper
