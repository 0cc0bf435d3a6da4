"""OpenDP measurements as privaudit mechanisms (``opendp`` 0.16, optional extra ``external``).

Each adapter builds an OpenDP measurement from the library's own parameters and
takes its claim from the library's privacy map, ``meas.map(d_in)`` with d_in the
declared sensitivity: nothing about the claim is computed by privaudit. What
privaudit computes, independently, is the *exact* privacy of the noise actually
drawn (``exact_epsilon``, ``tradeoff``), from closed forms or dp_accounting, so
that a calibration audit checks OpenDP's map against it.

Vectorisation. One OpenDP call costs ~0.1 ms of overhead, so ``sample(x, n)``
never calls the scalar measurement n times: it calls the *same constructor with
the same parameters* over a vector domain on ``x`` tiled n times, once. OpenDP's
vector noise mechanisms add independent noise of the given scale to each
coordinate, so the rows are i.i.d. releases of the audited measurement (the tests
check this against per-call releases). The claim is always read from the
measurement on the input's own shape, never from the tiled one.

Seeding. OpenDP samples from its own CSPRNG and cannot be seeded: ``rng`` is
accepted for the protocol and ignored; audits of these adapters are not
reproducible bit for bit (see :data:`~privaudit.mechanisms.external.errors.UNSEEDED_NOTE`).

Misconfiguration hooks. ``noise_scale`` (``noise_scales``, ``noise_threshold``)
draws releases with other parameters than the claim was computed from. They exist
to build deliberately broken targets (negative controls), never for real use.

OpenDP's contrib features are enabled (``dp.enable_features("contrib")``): every
measurement wrapped here is in contrib, and the flag is process-global in OpenDP.
"""

from __future__ import annotations

import abc
import math

import numpy as np
from numpy.typing import ArrayLike
from dp_accounting import dp_event as dpe

from ..claim import PrivacyClaim
from ..gaussian import GaussianMechanism
from ..tradeoff import gaussian_tradeoff, laplace_tradeoff
from ..validation import InvalidParameterError, check_delta, check_int, check_size, check_positive, check_real
from .errors import adjacency_name as _adjacency
from .errors import UNSEEDED_NOTE, check_finite_input, check_records, import_library, library_errors

LIBRARY = "OpenDP"


def _prelude(adapter: str):
    dp = import_library("opendp.prelude", adapter)
    dp.enable_features("contrib")
    return dp


class _OpenDPVector(abc.ABC):
    """Common code: a claim from the scalar-shaped measurement, releases from a vector one.

    Subclasses implement :meth:`_build` (the measurement for given noise
    parameters), set ``claim`` and ``_noise`` (the parameters releases are drawn
    with), and may override :meth:`_decode`.
    """

    integer_input = False
    notes = (UNSEEDED_NOTE.format(library=LIBRARY),)

    @property
    def name(self) -> str:
        return type(self).__name__

    @abc.abstractmethod
    def _build(self, dp, noise: dict):
        """The OpenDP measurement with noise parameters ``noise`` (vector/map domain)."""

    def _measurement(self, noise: dict):
        dp = _prelude(self.name)
        with library_errors(self.name, LIBRARY):
            return self._build(dp, noise)

    def _pure_l1_claim(self) -> PrivacyClaim:
        """Pure-DP claim of a scale-b mechanism on an ℓ₁ metric: ε = OpenDP's ``map(sensitivity)``."""
        self._noise = {"scale": self.noise_scale}
        meas = self._measurement({"scale": self.scale})
        with library_errors(self.name, LIBRARY):
            eps = float(meas.map(self.sensitivity))
        return PrivacyClaim(eps, 0.0, _adjacency("l1", self.sensitivity))

    def _sampler(self):
        if getattr(self, "_sampler_meas", None) is None:
            self._sampler_meas = self._measurement(self._noise)
        return self._sampler_meas

    def _decode(self, raw, n: int, shape: tuple) -> np.ndarray:
        return np.asarray(raw, dtype=float).reshape(n, *shape)

    def sample(self, x, n: int, rng=None) -> np.ndarray:
        """``n`` releases of ``x`` in one OpenDP call, shape ``(n, *x.shape)``.

        ``rng`` is accepted for the mechanism protocol and ignored: OpenDP cannot be seeded.
        """
        x = check_finite_input(self.name, x, integer=self.integer_input)
        n = check_size("n", n)
        tiled = np.tile(x.ravel(), n).tolist()
        with library_errors(self.name, LIBRARY):
            raw = self._sampler()(tiled)
        return self._decode(raw, n, x.shape)

    def sample_per_call(self, x, n: int) -> np.ndarray:
        """``n`` releases by n calls of the measurement on ``x`` itself (slow; to check :meth:`sample`)."""
        x = check_finite_input(self.name, x, integer=self.integer_input)
        meas = self._measurement(self._noise)
        row = x.ravel().tolist()
        with library_errors(self.name, LIBRARY):
            raws = [meas(row) for _ in range(check_size("n", n))]  # deliberately unvectorised: the reference path
        return np.stack([self._decode(r, 1, x.shape)[0] for r in raws])

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v}" for k, v in self._params().items())
        return f"{self.name}({params}, claim={self.claim})"

    def _params(self) -> dict:
        return {}


class OpenDPLaplace(_OpenDPVector):
    """OpenDP's Laplace mechanism on float vectors (``make_laplace``, ℓ₁ metric), pure DP.

    Claim: ε = ``meas.map(sensitivity)`` (OpenDP: Δ₁/scale), δ = 0, adjacency ``l1<=Δ``.
    Exact: ε(δ) = Δ₁/b + 2 ln(1 − δ) for the scale b actually drawn.

    Parameters
    ----------
    scale : float
        OpenDP's Laplace scale b.
    sensitivity : float
        ℓ₁ sensitivity Δ₁ passed to the privacy map.
    noise_scale : float, optional
        Draw with this scale instead (a deliberately misconfigured target).
    """

    def __init__(self, *, scale: float, sensitivity: float = 1.0, noise_scale: float | None = None) -> None:
        self.scale = check_positive("scale", scale)
        self.sensitivity = check_positive("sensitivity", sensitivity)
        self.noise_scale = self.scale if noise_scale is None else check_positive("noise_scale", noise_scale)
        self.claim = self._pure_l1_claim()

    def _build(self, dp, noise):
        domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))
        return dp.m.make_laplace(domain, dp.l1_distance(T=float), scale=noise["scale"])

    def _params(self) -> dict:
        return {"scale": self.scale, "sensitivity": self.sensitivity, "noise_scale": self.noise_scale}

    @property
    def true_epsilon(self) -> float:
        return self.sensitivity / self.noise_scale

    def exact_epsilon(self, delta: float) -> float:
        """Exact ε(δ) of the drawn scale (privaudit's closed form, not OpenDP's map).

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
        """Exact trade-off curve of the Laplace scale actually drawn (ε = Δ₁/b).

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
        """``LaplaceDpEvent(b/r)`` of the scale b actually drawn, for inputs at ℓ₁ distance r (default Δ₁).

        Parameters
        ----------
        distance : float, optional
            ℓ₁ distance r ≥ 0 of the two inputs.

        Returns
        -------
        dp_accounting.DpEvent
        """
        r = self.sensitivity if distance is None else check_positive("distance", distance, allow_zero=True)
        return dpe.NoOpDpEvent() if r == 0 else dpe.LaplaceDpEvent(self.noise_scale / r)


class OpenDPGaussian(_OpenDPVector):
    """OpenDP's Gaussian mechanism on float vectors (``make_gaussian``, ℓ₂ metric), zCDP.

    Claim: ρ = ``meas.map(sensitivity)`` (OpenDP: Δ²/(2σ²)) and ε =
    ``make_zCDP_to_approxDP(meas).map(sensitivity).epsilon(delta)``, OpenDP's own
    conversion; adjacency ``l2<=Δ``. Exact: the analytic Gaussian profile
    (Balle & Wang 2018) of the σ drawn, via :class:`~privaudit.mechanisms.GaussianMechanism`.
    """

    def __init__(self, *, scale: float, sensitivity: float = 1.0, delta: float = 1e-5,
                 noise_scale: float | None = None) -> None:
        self.scale = check_positive("scale", scale)
        self.sensitivity = check_positive("sensitivity", sensitivity)
        self.delta = check_delta(delta)
        self.noise_scale = self.scale if noise_scale is None else check_positive("noise_scale", noise_scale)
        self._noise = {"scale": self.noise_scale}
        dp = _prelude(self.name)
        meas = self._measurement({"scale": self.scale})
        with library_errors(self.name, LIBRARY):
            rho = float(meas.map(self.sensitivity))
            eps = float(dp.c.make_zCDP_to_approxDP(meas).map(self.sensitivity).epsilon(self.delta))
        self.claim = PrivacyClaim(eps, self.delta, _adjacency("l2", self.sensitivity), rho=rho)
        self._exact = GaussianMechanism(sigma=self.noise_scale, sensitivity=self.sensitivity)

    def _build(self, dp, noise):
        domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))
        return dp.m.make_gaussian(domain, dp.l2_distance(T=float), scale=noise["scale"])

    def _params(self) -> dict:
        return {"scale": self.scale, "sensitivity": self.sensitivity, "delta": self.delta,
                "noise_scale": self.noise_scale}

    def exact_epsilon(self, delta: float) -> float:
        """Exact ε(δ) of the σ actually drawn (analytic Gaussian).

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
        """Exact δ(ε) of the σ actually drawn.

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
        """Exact trade-off curve of the σ actually drawn.

        Parameters
        ----------
        alpha : array-like
            Type-I error rates α in [0, 1].

        Returns
        -------
        ndarray
            G_μ(α) with μ = Δ/σ of the σ drawn.
        """
        return gaussian_tradeoff(self.sensitivity / self.noise_scale, alpha)

    def dp_event(self, distance: float | None = None) -> dpe.DpEvent:
        """``GaussianDpEvent(σ/r)`` of the σ actually drawn, for inputs at ℓ₂ distance r (default Δ).

        Parameters
        ----------
        distance : float, optional
            ℓ₂ distance r ≥ 0 of the two inputs.

        Returns
        -------
        dp_accounting.DpEvent
        """
        return self._exact.dp_event(distance)


class OpenDPDiscreteLaplace(_OpenDPVector):
    """OpenDP's discrete Laplace on integer vectors (``make_laplace`` or ``make_geometric``), pure DP.

    P(k) ∝ exp(−|k − x|/b) on the integers. Claim: ε = ``meas.map(sensitivity)``
    (Δ₁/b), δ = 0, adjacency ``l1<=Δ``. Exact: Δ₁/b at δ = 0, and dp_accounting's
    discrete-Laplace PLD for δ > 0.

    Parameters
    ----------
    scale : float
        b.
    sensitivity : int
        Integer ℓ₁ sensitivity.
    constructor : {"laplace", "geometric"}
        ``make_laplace`` on an integer domain, or ``make_geometric`` (same law, other sampler).
    """

    integer_input = True

    def __init__(self, *, scale: float, sensitivity: int = 1, constructor: str = "laplace",
                 noise_scale: float | None = None) -> None:
        if constructor not in ("laplace", "geometric"):
            raise InvalidParameterError(f"constructor must be 'laplace' or 'geometric', got constructor={constructor!r}")
        self.constructor = constructor
        self.scale = check_positive("scale", scale)
        self.sensitivity = check_int("sensitivity", sensitivity)
        self.noise_scale = self.scale if noise_scale is None else check_positive("noise_scale", noise_scale)
        self.claim = self._pure_l1_claim()

    def _build(self, dp, noise):
        domain = dp.vector_domain(dp.atom_domain(T=int))
        make = dp.m.make_laplace if self.constructor == "laplace" else dp.m.make_geometric
        return make(domain, dp.l1_distance(T=int), scale=noise["scale"])

    def _params(self) -> dict:
        return {"scale": self.scale, "sensitivity": self.sensitivity, "constructor": self.constructor,
                "noise_scale": self.noise_scale}

    def exact_epsilon(self, delta: float) -> float:
        """Exact ε(δ) of the discrete Laplace scale actually drawn.

        Parameters
        ----------
        delta : float
            δ in [0, 1).

        Returns
        -------
        float
            Δ/b at δ = 0, else from dp_accounting's discrete-Laplace PLD (grid 1e-4).
        """
        d = check_delta(delta, allow_zero=True)
        if d == 0:
            return self.sensitivity / self.noise_scale
        from dp_accounting.pld import privacy_loss_distribution as pld_lib

        pld = pld_lib.from_discrete_laplace_mechanism(1.0 / self.noise_scale, sensitivity=self.sensitivity,
                                                      value_discretization_interval=1e-4)
        return float(pld.get_epsilon_for_delta(d))

    def dp_event(self, distance: int | None = None) -> dpe.DpEvent:
        """``DiscreteLaplaceDpEvent(1/b, r)`` of the scale b actually drawn, for integer inputs at ℓ₁ distance r.

        Parameters
        ----------
        distance : int, optional
            ℓ₁ distance r ≥ 0 of the two integer inputs (default: the sensitivity).

        Returns
        -------
        dp_accounting.DpEvent
        """
        r = self.sensitivity if distance is None else check_int("distance", distance, minimum=0)
        return dpe.NoOpDpEvent() if r == 0 else dpe.DiscreteLaplaceDpEvent(noise_parameter=1.0 / self.noise_scale,
                                                                          sensitivity=r)


class OpenDPGaussianComposition(_OpenDPVector):
    """A composed measurement: k OpenDP Gaussians on one float vector, zCDP composition, then (ε, δ).

    ``make_composition([make_gaussian(σ₁), …, make_gaussian(σ_k)])`` releases k
    noisy copies of x; the claim is OpenDP's: ρ = map of the composition, ε from
    ``make_zCDP_to_approxDP(composition).map(Δ).epsilon(delta)``. Releases have
    shape ``(n, k, *x.shape)``. Exact: k Gaussian releases of the same x are one
    Gaussian with μ² = Σ Δ²/σ_i², whose analytic profile privaudit computes.
    """

    def __init__(self, *, scales, sensitivity: float = 1.0, delta: float = 1e-5, noise_scales=None) -> None:
        self.scales = tuple(check_positive("scales", s) for s in np.atleast_1d(np.asarray(scales, dtype=float)))
        if not self.scales:
            raise InvalidParameterError("scales must hold at least one Gaussian scale, got scales=[]")
        noise = self.scales if noise_scales is None else tuple(
            check_positive("noise_scales", s) for s in np.atleast_1d(np.asarray(noise_scales, dtype=float)))
        if len(noise) != len(self.scales):
            raise InvalidParameterError(f"noise_scales must have {len(self.scales)} entries, got {list(noise)}")
        self.noise_scales = noise
        self.sensitivity = check_positive("sensitivity", sensitivity)
        self.delta = check_delta(delta)
        self._noise = {"scales": self.noise_scales}
        dp = _prelude(self.name)
        meas = self._measurement({"scales": self.scales})
        with library_errors(self.name, LIBRARY):
            rho = float(meas.map(self.sensitivity))
            eps = float(dp.c.make_zCDP_to_approxDP(meas).map(self.sensitivity).epsilon(self.delta))
        self.claim = PrivacyClaim(eps, self.delta, _adjacency("l2", self.sensitivity), rho=rho)
        mu = self.sensitivity * math.sqrt(sum(1.0 / s**2 for s in self.noise_scales))
        self._exact = GaussianMechanism(sigma=1.0 / mu, sensitivity=1.0)

    def _build(self, dp, noise):
        domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))
        parts = [dp.m.make_gaussian(domain, dp.l2_distance(T=float), scale=s) for s in noise["scales"]]
        return dp.c.make_composition(parts)

    def _decode(self, raw, n: int, shape: tuple) -> np.ndarray:
        k = len(self.scales)
        return np.stack([np.asarray(r, dtype=float).reshape(n, *shape) for r in raw], axis=1).reshape(n, k, *shape)

    def _params(self) -> dict:
        return {"scales": list(self.scales), "sensitivity": self.sensitivity, "delta": self.delta,
                "noise_scales": list(self.noise_scales)}

    def exact_epsilon(self, delta: float) -> float:
        """Exact ε(δ) of the composition: one Gaussian with μ² = Σ Δ²/σ_i² over the scales drawn.

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

    def tradeoff(self, alpha: ArrayLike) -> np.ndarray:
        """Exact trade-off curve of the composition of the scales drawn.

        Parameters
        ----------
        alpha : array-like
            Type-I error rates α in [0, 1].

        Returns
        -------
        ndarray
            G_μ(α), μ² = Σ Δ²/σ_i².
        """
        return gaussian_tradeoff(1.0 / self._exact.sigma, alpha)

    def dp_event(self, distance: float | None = None) -> dpe.DpEvent:
        """The composition of ``GaussianDpEvent(σ_i/r)`` over the k scales drawn, inputs at ℓ₂ distance r (default Δ).

        Parameters
        ----------
        distance : float, optional
            ℓ₂ distance r ≥ 0 of the two inputs.

        Returns
        -------
        dp_accounting.DpEvent
        """
        r = self.sensitivity if distance is None else check_positive("distance", distance, allow_zero=True)
        if r == 0:
            return dpe.NoOpDpEvent()
        return dpe.ComposedDpEvent([dpe.GaussianDpEvent(s / r) for s in self.noise_scales])


class OpenDPLaplaceThreshold(_OpenDPVector):
    """OpenDP's thresholded Laplace (``make_laplace_threshold``): release the keys whose noisy value ≥ T.

    Input x: one value per key, NaN (or the value ``absent``) = the key is absent
    from the map (add/remove neighbours keep one shape: x′ is x with one absent
    entry replaced by a value ≤ linf; configuration files cannot hold NaN).
    Release, shape ``(n, 2·d)``: per key a 0/1 "released" flag, then the released
    noisy value (0 where suppressed).

    Claim: (ε, δ) = ``meas.map((1, linf, linf))`` (one user touches one key by at
    most linf), adjacency ``add-remove``. Exact, for the noise drawn: the
    released value is post-processing of x + Lap(b), so present/present pairs are
    at most Laplace(linf/b); an absent key versus a present one at value linf is
    released with p = P(linf + Lap(b) ≥ T) and never otherwise, so δ(ε) ≥ p for
    every ε. Hence ε(δ) = max(0, linf/b + 2 ln(1 − δ)) for δ ≥ p, and ∞ below p.
    """

    def __init__(self, *, scale: float, threshold: float, linf: float = 1.0, absent: float | None = None,
                 noise_scale: float | None = None, noise_threshold: float | None = None) -> None:
        self.scale = check_positive("scale", scale)
        self.threshold = check_positive("threshold", threshold)
        self.linf = check_positive("linf", linf)
        self.absent = None if absent is None else check_real("absent", absent)
        self.noise_scale = self.scale if noise_scale is None else check_positive("noise_scale", noise_scale)
        self.noise_threshold = (self.threshold if noise_threshold is None
                                else check_positive("noise_threshold", noise_threshold))
        self._noise = {"scale": self.noise_scale, "threshold": self.noise_threshold}
        meas = self._measurement({"scale": self.scale, "threshold": self.threshold})
        with library_errors(self.name, LIBRARY):
            eps, delta = meas.map((1, self.linf, self.linf))
        self.claim = PrivacyClaim(float(eps), float(delta), "add-remove")

    def _build(self, dp, noise):
        domain = dp.map_domain(dp.atom_domain(T=int), dp.atom_domain(T=float, nan=False))
        metric = dp.l01inf_distance(dp.absolute_distance(T=float))
        return dp.m.make_laplace_threshold(domain, metric, scale=noise["scale"], threshold=noise["threshold"])

    def _params(self) -> dict:
        return {"scale": self.scale, "threshold": self.threshold, "linf": self.linf,
                "noise_scale": self.noise_scale, "noise_threshold": self.noise_threshold}

    def _records(self, x) -> np.ndarray:
        return check_records(self.name, x, self.absent)

    def sample(self, x: ArrayLike, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """``n`` releases of the key map ``x`` (NaN = absent) in one OpenDP call; shape ``(n, 2·d)``.

        Key ``i·d + j`` of the tiled map is key j of release i. ``rng`` is ignored (OpenDP cannot be seeded).

        Parameters
        ----------
        x : array-like of shape (d,)
            The key map: one value per key, NaN (or ``absent``) for an absent key.
        n : int
            Number of releases.
        rng : Generator, int or None
            Ignored: OpenDP cannot be seeded.

        Returns
        -------
        ndarray of shape (n, 2·d)
            Per key a 0/1 released flag, then the released value (0 where suppressed).
        """
        x = self._records(x)
        n = check_size("n", n)
        d = x.size
        present = np.flatnonzero(~np.isnan(x))
        keys = (np.arange(n)[:, None] * d + present[None, :]).ravel()
        values = np.tile(x[present], n)
        with library_errors(self.name, LIBRARY):
            out = self._sampler()(dict(zip(keys.tolist(), values.tolist(), strict=True)))
        flags = np.zeros(n * d)
        vals = np.zeros(n * d)
        if out:
            k = np.fromiter(out.keys(), dtype=np.int64, count=len(out))
            flags[k] = 1.0
            vals[k] = np.fromiter(out.values(), dtype=float, count=len(out))
        return np.hstack([flags.reshape(n, d), vals.reshape(n, d)])

    def sample_per_call(self, x: ArrayLike, n: int) -> np.ndarray:
        """``n`` releases by n calls of the measurement on the key map itself (slow; to check :meth:`sample`).

        Parameters
        ----------
        x : array-like of shape (d,)
            The key map: one value per key, NaN (or ``absent``) for an absent key.
        n : int
            Number of releases.

        Returns
        -------
        ndarray of shape (n, 2·d)
            As :meth:`sample`.
        """
        x = self._records(x)
        meas = self._measurement(self._noise)
        d = x.size
        row = {int(j): float(x[j]) for j in np.flatnonzero(~np.isnan(x))}
        out = np.zeros((check_size("n", n), 2 * d))
        with library_errors(self.name, LIBRARY):
            for i in range(n):  # deliberately unvectorised: the reference path
                for j, v in meas(row).items():
                    out[i, j], out[i, d + j] = 1.0, v
        return out

    @property
    def release_probability(self) -> float:
        """p = P(linf + Lap(b) ≥ T) for the drawn scale and threshold."""
        gap = self.noise_threshold - self.linf
        tail = 0.5 * math.exp(-abs(gap) / self.noise_scale)
        return tail if gap >= 0 else 1.0 - tail

    def exact_epsilon(self, delta: float) -> float:
        """Exact ε(δ) of the scale and threshold actually drawn (class docstring).

        Parameters
        ----------
        delta : float
            δ in [0, 1).

        Returns
        -------
        float
            ∞ below the release probability p, else max(0, linf/b + 2 ln(1 − δ)).
        """
        d = check_delta(delta, allow_zero=True)
        if d < self.release_probability:
            return math.inf
        return max(0.0, self.linf / self.noise_scale + 2 * math.log1p(-d))

    def dp_event(self, distance: float | None = None) -> dpe.DpEvent:
        """``UnsupportedDpEvent()``: no dp_accounting event describes a thresholded release.

        A key absent from x and present in x′ is released with probability p
        (:attr:`release_probability`) under x′ and never under x: the privacy loss is +∞
        with probability p, mixed with a Laplace loss otherwise. None of dp_accounting's
        events has that law (``LaplaceDpEvent`` would miss the infinite part and over-state
        the privacy), so the adapter says so in dp_accounting's own terms; ``exact_epsilon``
        gives its profile.

        Parameters
        ----------
        distance : float, optional
            Ignored (the release has no event at any distance).

        Returns
        -------
        dp_accounting.UnsupportedDpEvent
        """
        return dpe.UnsupportedDpEvent()


__all__ = ["OpenDPDiscreteLaplace", "OpenDPGaussian", "OpenDPGaussianComposition", "OpenDPLaplace",
           "OpenDPLaplaceThreshold"]
