"""Google's differential-privacy library (``python-dp`` 1.1.5, module ``pydp``) as privaudit mechanisms.

Each adapter constructs the library object from its own parameters and takes its
claim from that object (``mech.epsilon``, ``mech.delta``, ``mech.sensitivity``):
privaudit computes nothing of the claim. Independently, ``exact_epsilon`` gives
the exact privacy of the noise the object reports it draws (Laplace diversity,
Gaussian standard deviation), so a calibration audit checks the library's
calibration. The bounded aggregates keep their noise scale internal, so they have
no exact profile here and are audited empirically only.

Vectorisation. pydp has no vector API: ``add_noise`` and ``quick_result`` take
one value or one dataset per call (~3 µs and ~25 µs). ``sample`` therefore maps the
bound C++ method over the n·d inputs with ``map``/``np.fromiter`` (no Python-level
arithmetic per sample); this is the library's cost, not privaudit's.

Seeding. The library draws from its own secure generator and cannot be seeded:
``rng`` is accepted for the protocol and ignored, and audits are not reproducible
bit for bit (:data:`~privaudit.mechanisms.external.errors.UNSEEDED_NOTE`).

Misconfiguration hooks. ``noise_epsilon`` draws releases from a library object
built for another ε than the one claimed: a deliberately broken target (negative
control), never for real use.
"""

from __future__ import annotations

import abc
import math
from itertools import repeat

import numpy as np
from numpy.typing import ArrayLike
from dp_accounting import dp_event as dpe

from ..claim import PrivacyClaim
from ..domains import Box, DatasetDomain
from ..gaussian import GaussianMechanism
from ..tradeoff import gaussian_tradeoff, laplace_tradeoff
from ..validation import InvalidParameterError, check_delta, check_epsilon, check_size, check_positive, check_real
from .errors import adjacency_name as _adjacency
from .errors import UNSEEDED_NOTE, ExternalLibraryError, check_finite_input, check_records, import_library, library_errors

LIBRARY = "Google differential-privacy (pydp)"


class _PyDPNumerical(abc.ABC):
    """Common code of pydp's numerical mechanisms: one ``add_noise`` per coordinate."""

    notes = (UNSEEDED_NOTE.format(library=LIBRARY),)

    @property
    def name(self) -> str:
        return type(self).__name__

    @abc.abstractmethod
    def _make(self, nm, epsilon: float):
        """The pydp mechanism for privacy parameter ``epsilon``."""

    def _build(self, epsilon: float):
        nm = import_library("pydp.algorithms.numerical_mechanisms", self.name)
        with library_errors(self.name, LIBRARY):
            return self._make(nm, epsilon)

    def sample(self, x, n: int, rng=None) -> np.ndarray:
        """``n`` releases of ``x``, shape ``(n, *x.shape)``; ``rng`` is ignored (pydp cannot be seeded)."""
        x = check_finite_input(self.name, x)
        n = check_size("n", n)
        count = n * x.size
        with library_errors(self.name, LIBRARY):
            # pydp dispatches add_noise on the Python type: pass floats, never numpy scalars.
            values = map(self._noise_mech.add_noise, np.tile(x.ravel(), n).tolist())
            out = np.fromiter(values, dtype=float, count=count)
        return out.reshape(n, *x.shape)

    def __repr__(self) -> str:
        return f"{self.name}(noise_epsilon={self.noise_epsilon}, claim={self.claim})"


class PyDPLaplace(_PyDPNumerical):
    """pydp's ``LaplaceMechanism(epsilon, sensitivity)``, applied to each coordinate of x.

    Claim: ε = ``mech.epsilon``, δ = 0, adjacency ``l1<=Δ`` with Δ = ``mech.sensitivity``.
    Exact: ε(δ) = Δ/b + 2 ln(1 − δ) with b = ``mech.diversity`` of the object drawing
    the noise. (The library rounds x and the noise to a power-of-two granularity
    ≪ b; its effect on ε is below what any audit here resolves.)
    """

    def __init__(self, *, epsilon: float, sensitivity: float = 1.0, noise_epsilon: float | None = None) -> None:
        self.noise_epsilon = None if noise_epsilon is None else check_epsilon(noise_epsilon, "noise_epsilon")
        self.sensitivity_param = check_positive("sensitivity", sensitivity)
        mech = self._build(check_epsilon(epsilon))
        self.claim = PrivacyClaim(float(mech.epsilon), 0.0, _adjacency("l1", float(mech.sensitivity)))
        self._noise_mech = mech if noise_epsilon is None else self._build(self.noise_epsilon)

    def _make(self, nm, epsilon):
        return nm.LaplaceMechanism(epsilon=epsilon, sensitivity=self.sensitivity_param)

    @property
    def true_epsilon(self) -> float:
        return float(self._noise_mech.sensitivity) / float(self._noise_mech.diversity)

    def exact_epsilon(self, delta: float) -> float:
        """Exact ε(δ) of the diversity b the library reports drawing: max(0, Δ₁/b + 2 ln(1 − δ)).

        Parameters
        ----------
        delta : float
            δ in [0, 1).

        Returns
        -------
        float
            max(0, Δ₁/b + 2 ln(1 − δ)).
        """
        return max(0.0, self.true_epsilon + 2 * math.log1p(-check_delta(delta, allow_zero=True)))

    def tradeoff(self, alpha: ArrayLike) -> np.ndarray:
        """Exact Laplace trade-off curve of the diversity the library reports drawing.

        Parameters
        ----------
        alpha : array-like
            Type-I error rates α in [0, 1].

        Returns
        -------
        ndarray
            β = f(α), shaped like ``alpha``.
        """
        return laplace_tradeoff(self.true_epsilon, alpha)

    def dp_event(self, distance: float | None = None) -> dpe.DpEvent:
        """``LaplaceDpEvent(b/r)`` of the diversity b the library reports drawing, inputs at ℓ₁ distance r.

        Parameters
        ----------
        distance : float, optional
            ℓ₁ distance r ≥ 0 of the two inputs (default: the library's sensitivity).

        Returns
        -------
        dp_accounting.DpEvent
        """
        r = float(self._noise_mech.sensitivity) if distance is None else check_positive(
            "distance", distance, allow_zero=True)
        return dpe.NoOpDpEvent() if r == 0 else dpe.LaplaceDpEvent(float(self._noise_mech.diversity) / r)


class PyDPGaussian(_PyDPNumerical):
    """pydp's ``GaussianMechanism(epsilon, delta, sensitivity)``, applied to each coordinate of x.

    Claim: (``mech.epsilon``, ``mech.delta``), adjacency ``l2<=Δ`` with Δ =
    ``mech.l2_sensitivity``. Exact: the analytic Gaussian profile (Balle & Wang
    2018) of σ = ``mech.std`` of the object drawing the noise.
    """

    def __init__(self, *, epsilon: float, delta: float = 1e-5, sensitivity: float = 1.0,
                 noise_epsilon: float | None = None) -> None:
        self.noise_epsilon = None if noise_epsilon is None else check_epsilon(noise_epsilon, "noise_epsilon")
        self.delta_param = check_delta(delta)
        self.sensitivity_param = check_positive("sensitivity", sensitivity)
        mech = self._build(check_epsilon(epsilon))
        self.claim = PrivacyClaim(float(mech.epsilon), float(mech.delta), _adjacency("l2", float(mech.l2_sensitivity)))
        self._noise_mech = mech if noise_epsilon is None else self._build(self.noise_epsilon)
        self._exact = GaussianMechanism(sigma=float(self._noise_mech.std),
                                        sensitivity=float(self._noise_mech.l2_sensitivity))

    def _make(self, nm, epsilon):
        return nm.GaussianMechanism(epsilon=epsilon, delta=self.delta_param, sensitivity=self.sensitivity_param)

    @property
    def sigma(self) -> float:
        return self._exact.sigma

    def exact_epsilon(self, delta: float) -> float:
        """Exact ε(δ) of the σ the library reports drawing (analytic Gaussian).

        Parameters
        ----------
        delta : float
            δ in (0, 1).

        Returns
        -------
        float
            ε(δ) ≥ 0.
        """
        return self._exact.exact_epsilon(delta)

    def exact_delta(self, epsilon: float) -> float:
        """Exact δ(ε) of the σ the library reports drawing.

        Parameters
        ----------
        epsilon : float
            ε ≥ 0.

        Returns
        -------
        float
            δ(ε) in [0, 1].
        """
        return self._exact.exact_delta(epsilon)

    def tradeoff(self, alpha: ArrayLike) -> np.ndarray:
        """Exact trade-off curve G_μ of the σ the library reports drawing.

        Parameters
        ----------
        alpha : array-like
            Type-I error rates α in [0, 1].

        Returns
        -------
        ndarray
            G_μ(α), μ = Δ/σ of the σ drawn.
        """
        return gaussian_tradeoff(self._exact.mu, alpha)

    def dp_event(self, distance: float | None = None) -> dpe.DpEvent:
        """``GaussianDpEvent(σ/r)`` of the σ the library reports drawing, inputs at ℓ₂ distance r (default Δ).

        Parameters
        ----------
        distance : float, optional
            ℓ₂ distance r ≥ 0 of the two inputs.

        Returns
        -------
        dp_accounting.DpEvent
        """
        return self._exact.dp_event(distance)


class PyDPBoundedAggregate:
    """pydp's ``BoundedSum`` or ``BoundedMean`` (Laplace, float records) on a dataset.

    Input x: a 1-d array of records, NaN (or the value ``absent``) marking an
    absent record, so that add/remove neighbours have one shape (x′ = x with one
    absent entry replaced by a record). Release: shape ``(n, 1)``, one ``quick_result`` per release (the
    library has no batched call). Records outside [lower, upper] are clamped by the
    library. Claim: (``alg.epsilon``, ``alg.delta``), adjacency ``add-remove``
    (one record, ``l0_sensitivity = linf_sensitivity = 1``), the library's default.

    Domain (``domain``, what :func:`~privaudit.audit.engines.pair_search.search_pairs`
    searches when given none): padded datasets (NaN rows absent) of ``min_size`` to
    ``max_size`` records in [``records_low``, ``records_high``]. The library claims
    its bound for any finite records, so by default the records reach one clamp width
    beyond each bound: the clamp is what must stop them.

    Parameters
    ----------
    aggregate : {"sum", "mean"}
    epsilon : float
    lower, upper : float
        Clamping bounds (the library's ``lower_bound``, ``upper_bound``).
    absent : float, optional
        A finite value marking absent records besides NaN (configuration files cannot hold NaN).
    noise_epsilon : float, optional
        Draw with an object built for this ε instead (a deliberately misconfigured target).
    records_low, records_high : float, optional
        Record bounds of the declared domain (default: [lower, upper] widened by its width on each side).
    min_size, max_size : int
        Size range of the declared domain (default 0 to 10 records: pydp accepts the empty dataset).
    """

    notes = (UNSEEDED_NOTE.format(library=LIBRARY),)

    def __init__(self, *, aggregate: str = "sum", epsilon: float, lower: float, upper: float,
                 absent: float | None = None, noise_epsilon: float | None = None, records_low: float | None = None,
                 records_high: float | None = None, min_size: int = 0, max_size: int = 10) -> None:
        if aggregate not in ("sum", "mean"):
            raise ExternalLibraryError(f"{type(self).__name__}: aggregate must be 'sum' or 'mean', got {aggregate!r}")
        self.aggregate = aggregate
        self.lower = check_real("lower", lower)
        self.upper = check_real("upper", upper)
        self.absent = None if absent is None else check_real("absent", absent)
        self.noise_epsilon = None if noise_epsilon is None else check_epsilon(noise_epsilon, "noise_epsilon")
        alg = self._build(check_epsilon(epsilon))
        self.claim = PrivacyClaim(float(alg.epsilon), float(alg.delta), "add-remove")
        self._noise_alg = alg if noise_epsilon is None else self._build(self.noise_epsilon)
        width = self.upper - self.lower
        lo = self.lower - width if records_low is None else check_real("records_low", records_low)
        hi = self.upper + width if records_high is None else check_real("records_high", records_high)
        if not lo <= hi:
            raise InvalidParameterError(f"{self.name}: records_low must be <= records_high, got records_low={lo!r}, "
                                        f"records_high={hi!r}")
        self.domain = DatasetDomain(records=Box(np.full(1, lo), np.full(1, hi)), min_size=min_size,
                                    max_size=max_size, padded=True)

    @property
    def name(self) -> str:
        return f"PyDPBounded{self.aggregate.capitalize()}"

    def _build(self, epsilon: float):
        lap = import_library("pydp.algorithms.laplacian", self.name)
        cls = lap.BoundedSum if self.aggregate == "sum" else lap.BoundedMean
        with library_errors(self.name, LIBRARY):
            return cls(epsilon=epsilon, lower_bound=self.lower, upper_bound=self.upper, dtype="float")

    def __repr__(self) -> str:
        return (f"{self.name}(lower={self.lower:g}, upper={self.upper:g}, noise_epsilon={self.noise_epsilon}, "
                f"claim={self.claim})")

    def dp_event(self, distance: float | None = None) -> dpe.DpEvent:
        """``UnsupportedDpEvent()``: the library keeps the noise of its bounded aggregates internal.

        ``BoundedSum``/``BoundedMean`` do not expose the scale they draw (and the mean
        splits its budget between a noisy sum and a noisy count internally), so no event
        can be stated for the noise actually drawn; these adapters are audited empirically
        only.

        Parameters
        ----------
        distance : float, optional
            Ignored.

        Returns
        -------
        dp_accounting.UnsupportedDpEvent
        """
        return dpe.UnsupportedDpEvent()

    def sample(self, x: ArrayLike, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """``n`` releases on the dataset ``x`` (NaN = absent), shape ``(n, 1)``; ``rng`` is ignored.

        Parameters
        ----------
        x : array-like of shape (m,)
            The dataset: records, NaN (or ``absent``) for absent ones.
        n : int
            Number of releases.
        rng : Generator, int or None
            Ignored: pydp cannot be seeded.

        Returns
        -------
        ndarray of shape (n, 1)
        """
        records = check_records(self.name, x, self.absent)
        data = records[~np.isnan(records)].tolist()
        n = check_size("n", n)
        with library_errors(self.name, LIBRARY):
            out = np.fromiter(map(self._noise_alg.quick_result, repeat(data, n)), dtype=float, count=n)
        return out.reshape(n, 1)


class PyDPBoundedSum(PyDPBoundedAggregate):
    """pydp's ``BoundedSum`` (see :class:`PyDPBoundedAggregate`)."""

    def __init__(self, *, epsilon: float, lower: float, upper: float, absent: float | None = None,
                 noise_epsilon: float | None = None, records_low: float | None = None,
                 records_high: float | None = None, min_size: int = 0, max_size: int = 10) -> None:
        super().__init__(aggregate="sum", epsilon=epsilon, lower=lower, upper=upper, absent=absent,
                         noise_epsilon=noise_epsilon, records_low=records_low, records_high=records_high,
                         min_size=min_size, max_size=max_size)


class PyDPBoundedMean(PyDPBoundedAggregate):
    """pydp's ``BoundedMean`` (see :class:`PyDPBoundedAggregate`)."""

    def __init__(self, *, epsilon: float, lower: float, upper: float, absent: float | None = None,
                 noise_epsilon: float | None = None, records_low: float | None = None,
                 records_high: float | None = None, min_size: int = 0, max_size: int = 10) -> None:
        super().__init__(aggregate="mean", epsilon=epsilon, lower=lower, upper=upper, absent=absent,
                         noise_epsilon=noise_epsilon, records_low=records_low, records_high=records_high,
                         min_size=min_size, max_size=max_size)


__all__ = ["PyDPBoundedAggregate", "PyDPBoundedMean", "PyDPBoundedSum", "PyDPGaussian", "PyDPLaplace"]
