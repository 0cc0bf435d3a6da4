"""Bayesian reconstruction attackers: they use a prior over the client's input x.

``posterior-mean`` (E[x | release] under a Gaussian prior: closed form, or 1-D quadrature
along each modulation vector), ``map`` (posterior mode by Gauss–Newton), ``iwp-denoiser``
(empirical-Bayes posterior mean with the prior fitted on a population split) and
``discrete-map`` (MAP over the support of a discrete prior, for ReRo audits). They share
the release model and base class of :mod:`privaudit.attacks.reconstruction`.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from privaudit.mechanisms.protocol import release_law
from privaudit.mechanisms.arcsine_gaussian import ArcsineGaussian
from privaudit.mechanisms.validation import InvalidInputError, InvalidParameterError, check_array

from .protocol import FinitePrior, GaussianMoments, WeightedFinitePrior, gaussian_moments
from .reconstruction import (
    _CHUNK,
    ReconstructionAttacker,
    _gauss_newton,
    _isotropic,
    _modulated,
    _ph,
    _Round,
    _supported,
    as_rounds,
)
from .registry import register_attack


# --- Bayesian attackers ------------------------------------------------------------------------------
def _check_gaussian_prior(prior, d: int) -> GaussianMoments:
    """The prior's Gaussian moments (``gaussian_moments()``), of dimension d."""
    moments = gaussian_moments(prior)
    if moments is None:
        raise InvalidParameterError(f"this attacker needs a GaussianPrior, got prior={prior!r}")
    if moments.dim != d:
        raise InvalidInputError(f"prior dimension {moments.dim} does not match the release dimension {d}")
    return moments


def _separable(prior: GaussianMoments, basis: np.ndarray) -> bool:
    """Σ₀ keeps span(V) invariant and is diagonal on V (so the 1-D posteriors are independent)."""
    s_v = prior.cov @ basis
    inner = basis.T @ s_v
    return np.allclose(s_v, basis @ inner, atol=1e-10) and np.allclose(inner, np.diag(np.diag(inner)), atol=1e-10)


def _linear_posterior_mean(prior, rs, out, y, beta, sigma_y):
    """Conjugate posterior mean for linear rounds g̃_t = c_t x + N(0, σ_t² I) (and y)."""
    d = out.shape[2]
    prec = prior.precision.copy()
    num = np.broadcast_to(prior.precision @ prior.mean, (out.shape[0], d)).copy()
    for t, r in enumerate(rs):
        prec += (r.c**2 / r.sigma**2) * np.eye(d)
        num += (r.c / r.sigma**2) * out[:, t]
    if y is not None:
        prec += np.outer(beta, beta) / sigma_y**2
        num += np.outer(y, beta) / sigma_y**2
    return np.linalg.solve(prec, num.T).T


def _grid_posterior_1d(r, m0, v0, c, amp, omega, phi, sigma, *, statistic: str) -> np.ndarray:
    """Posterior mean (or mode) of a ~ N(m0, v0) from r = c a + A cos(ω a + φ) + N(0, σ²).

    ``phi=None`` marginalises the phase (likelihood p(r − c a), arcsine-plus-Gaussian).
    Quadrature on a grid covering the likelihood's support (every a with c a within
    A + 9σ of r) clipped to ±10 prior sd, fine enough for the narrower of the posterior
    scales and the cosine's period.
    """
    sd0 = math.sqrt(v0)
    width_scale = min(sigma / c, sd0)
    if not (amp == 0 or omega == 0):
        width_scale = min(width_scale, 2 * math.pi / omega / 8)
    out = np.empty_like(r)
    for s in range(0, r.size, _CHUNK):
        rr = r[s : s + _CHUNK]
        lo = np.maximum((rr - amp - 9 * sigma) / c, m0 - 10 * sd0)
        hi = np.minimum((rr + amp + 9 * sigma) / c, m0 + 10 * sd0)
        bad = lo >= hi
        lo = np.where(bad, (rr - amp - 9 * sigma) / c, lo)
        hi = np.where(bad, (rr + amp + 9 * sigma) / c, hi)
        g = int(min(4096, max(257, math.ceil(float(np.max(hi - lo)) / (width_scale / 6)))))
        a = lo[:, None] + (hi - lo)[:, None] * np.linspace(0.0, 1.0, g)
        logw = -0.5 * (a - m0) ** 2 / v0
        if phi is None:
            logw = logw + ArcsineGaussian(amp, sigma).logpdf_interpolated(rr[:, None] - c * a)
        else:
            mean = c * a + amp * np.cos(omega * a + phi[s : s + _CHUNK, None])
            logw = logw - 0.5 * (rr[:, None] - mean) ** 2 / sigma**2
        if statistic == "mean":
            w = np.exp(logw - logw.max(axis=1, keepdims=True))
            out[s : s + _CHUNK] = (w * a).sum(axis=1) / w.sum(axis=1)
        else:
            out[s : s + _CHUNK] = a[np.arange(rr.size), np.argmax(logw, axis=1)]
    return out


@register_attack("posterior-mean")
class PosteriorMean(ReconstructionAttacker):
    """E[x | release] under a Gaussian prior: the Bayes-optimal (MMSE) attacker.

    Linear rounds (Gaussian, or λ = 0), with or without y: the conjugate closed form
    (Σ₀⁻¹ + Σ_t c_t²/σ_t² I + ββᵀ/σ_y²)⁻¹(Σ₀⁻¹μ₀ + Σ_t c_t g̃_t/σ_t² + βy/σ_y²); its
    prior-averaged MSE equals the van Trees bound. One modulated round (phase known or
    marginalised): conjugate on V⊥ and 1-D quadrature along each v_j, which needs a
    prior under which the coordinates ⟨x, v_j⟩ are independent of each other and of
    the complement (Σ₀ V = V D, D diagonal).
    """

    strength = 100

    @classmethod
    def applicable(cls, mechanism: object, *, prior: object = None, phase_known: bool = True,
                   side_info: bool = False) -> bool:
        """With a Gaussian prior on supported rounds: all linear, or one modulated round without y whose
        prior covariance keeps span(V) invariant and is diagonal on V.

        Parameters
        ----------
        mechanism : mechanism or sequence of mechanisms
            One release or the T rounds of a transcript.
        prior : GaussianPrior or DiscretePrior, optional
            The prior the audit would hand the attacker.
        phase_known : bool
            Whether the attacker is shown the modulation phases.
        side_info : bool
            Whether the public response y is available.

        Returns
        -------
        bool
        """
        moments = gaussian_moments(prior)
        if moments is None or not super().applicable(mechanism, prior=prior):
            return False
        rounds = as_rounds(mechanism)
        if not any(_modulated(m) for m in rounds):
            return True
        return len(rounds) == 1 and not side_info and _separable(moments, rounds[0].basis)

    def _reconstruct(self, out, rs, phases, y):
        prior = _check_gaussian_prior(self.prior, out.shape[2])
        beta = None if y is None else check_array("beta", self.beta, ndim=1)
        if all(r.linear for r in rs):
            return _linear_posterior_mean(prior, rs, out, y, beta, self.sigma_y)
        if len(rs) != 1 or y is not None:
            raise InvalidParameterError("posterior-mean supports one modulated round without y; use map")
        return _modulated_posterior(prior, rs[0], out[:, 0], _ph(phases, 0), "mean")


def _modulated_posterior(prior, r: _Round, g, phase, statistic):
    v = r.basis
    if not _separable(prior, v):
        raise InvalidParameterError("the prior covariance must keep span(V) invariant and be diagonal on V")
    d = g.shape[1]
    # Complement: conjugate update of the prior restricted to V⊥ (Σ₀ is block diagonal there).
    p_perp = np.eye(d) - v @ v.T
    s_perp = p_perp @ prior.cov @ p_perp
    gain = r.c * s_perp @ np.linalg.pinv(r.c**2 * s_perp + r.sigma**2 * p_perp)
    resid = (g - r.c * prior.mean) @ p_perp
    x_perp = prior.mean @ p_perp + resid @ gain.T
    m0 = prior.mean @ v
    v0 = np.diag(v.T @ prior.cov @ v)
    along = g @ v
    a = np.empty_like(along)
    for j in range(v.shape[1]):
        a[:, j] = _grid_posterior_1d(
            along[:, j], m0[j], v0[j], r.c, r.amp, r.omega, None if phase is None else phase[:, j], r.sigma,
            statistic=statistic,
        )
    return x_perp + a @ v.T


@register_attack("map")
class MAPAttack(ReconstructionAttacker):
    """argmax_x [log π(x) + log p(release | x)] under a Gaussian prior, phases known.

    Gauss–Newton from the phase-known split estimate shrunk to the prior (exact in one
    step for linear rounds); also uses y when given.
    """

    needs_phase = True
    strength = 90

    @classmethod
    def applicable(cls, mechanism: object, *, prior: object = None, phase_known: bool = True,
                   side_info: bool = False) -> bool:
        """With a Gaussian prior, on rounds the base class supports (phases shown when modulated).

        Parameters
        ----------
        mechanism : mechanism or sequence of mechanisms
            One release or the T rounds of a transcript.
        prior : GaussianPrior or DiscretePrior, optional
            The prior the audit would hand the attacker.
        phase_known : bool
            Whether the attacker is shown the modulation phases.
        side_info : bool
            Whether the public response y is available.

        Returns
        -------
        bool
        """
        return gaussian_moments(prior) is not None and super().applicable(mechanism, phase_known=phase_known)

    def _reconstruct(self, out, rs, phases, y):
        prior = _check_gaussian_prior(self.prior, out.shape[2])
        beta = None if y is None else check_array("beta", self.beta, ndim=1)
        lin = _linear_posterior_mean(prior, [_Round(r.mech, out.shape[2]) for r in rs], out, y, beta, self.sigma_y)
        if all(r.linear for r in rs):
            return lin
        # Start from the linearised posterior mean (the cosine's mean is 0); GN polishes.
        return _gauss_newton(lin, rs, out, phases, y=y, beta=beta, sigma_y=self.sigma_y, prior=prior)


# --- IWP denoiser ------------------------------------------------------------------------------------------
@register_attack("iwp-denoiser")
class IWPDenoiser(ReconstructionAttacker):
    """Empirical-Bayes posterior-mean denoiser for Gaussian (IWP-SGD, seed 001) releases.

    ``fit(outputs)`` estimates a Gaussian population law of x from releases of *other*
    clients: μ̂ = mean(x̃), Ĉ = Cov(x̃) − σ²I (eigenvalues floored at 1e−9 σ²); then
    x̂ = μ̂ + Ĉ(Ĉ + σ²I)⁻¹(x̃ − μ̂). Needs no prior knowledge, only a population split;
    biased (it shrinks), so only van Trees applies to it.
    """

    strength = 40

    @classmethod
    def applicable(cls, mechanism: object, *, prior: object = None, phase_known: bool = True,
                   side_info: bool = False) -> bool:
        """One isotropic Gaussian release, with a prior given that is not a :class:`FinitePrior`.

        Parameters
        ----------
        mechanism : mechanism or sequence of mechanisms
            One release or the T rounds of a transcript.
        prior : GaussianPrior or DiscretePrior, optional
            The prior the audit would hand the attacker.
        phase_known : bool
            Whether the attacker is shown the modulation phases.
        side_info : bool
            Whether the public response y is available.

        Returns
        -------
        bool
        """
        rounds = as_rounds(mechanism)
        return len(rounds) == 1 and _isotropic(rounds[0]) and prior is not None \
            and not isinstance(prior, FinitePrior)

    def fit(self, outputs: ArrayLike) -> "IWPDenoiser":
        """Estimate the population mean and covariance from releases of other clients.

        μ̂ = mean(x̃), Ĉ = Cov(x̃) − σ²I with eigenvalues floored at 1e−9 σ², and the gain
        Ĉ(Ĉ + σ²I)⁻¹ used by :meth:`reconstruct`.

        Parameters
        ----------
        outputs : array-like of shape (N, d)
            Releases x̃ = x + N(0, σ² I) of a population split, N ≥ d + 2.

        Returns
        -------
        IWPDenoiser
            self, with ``mean_``, ``cov_`` and ``gain_`` set.

        Raises
        ------
        InvalidInputError
            With fewer than d + 2 releases.
        """
        x = check_array("outputs", outputs, ndim=2)
        if x.shape[0] < x.shape[1] + 2:
            raise InvalidInputError(f"fit needs at least d + 2 = {x.shape[1] + 2} releases, got {x.shape[0]}")
        s2 = self.mechanism.sigma**2
        self.mean_ = x.mean(axis=0)
        w, q = np.linalg.eigh(np.cov(x, rowvar=False) - s2 * np.eye(x.shape[1]))
        self.cov_ = (q * np.maximum(w, 1e-9 * s2)) @ q.T
        self.gain_ = self.cov_ @ np.linalg.inv(self.cov_ + s2 * np.eye(x.shape[1]))
        return self

    def _reconstruct(self, out, rs, phases, y):
        if not hasattr(self, "gain_"):
            raise InvalidParameterError("iwp-denoiser must be fitted on a population split first: call fit(outputs)")
        return self.mean_ + (out[:, 0] - self.mean_) @ self.gain_.T


# --- discrete prior ----------------------------------------------------------------------------------------
def _has_phases(mech) -> bool:
    """The round's closed-form law has modulation vectors, so its ``log_density`` takes the phases."""
    law = release_law(mech)
    return law is not None and law.n_vectors > 0


@register_attack("discrete-map")
class DiscreteMAP(ReconstructionAttacker):
    """MAP over the support of a discrete prior: argmax_k log π(z_k) + Σ_t log p_t(g̃_t | z_k).

    The Bayes-optimal exact-reconstruction attacker (it maximises the ReRo success
    probability). Uses each mechanism's ``log_density`` (phase given, or marginalised
    by the mechanism when the phase is hidden).
    """

    strength = 100

    @classmethod
    def applicable(cls, mechanism: object, *, prior: object = None, phase_known: bool = True,
                   side_info: bool = False) -> bool:
        """With a finite prior stating its masses (:class:`~privaudit.attacks.protocol.WeightedFinitePrior`, e.g. a
        :class:`DiscretePrior`), on rounds that all have ``log_density``.

        Parameters
        ----------
        mechanism : mechanism or sequence of mechanisms
            One release or the T rounds of a transcript.
        prior : GaussianPrior or DiscretePrior, optional
            The prior the audit would hand the attacker.
        phase_known : bool
            Whether the attacker is shown the modulation phases.
        side_info : bool
            Whether the public response y is available.

        Returns
        -------
        bool
        """
        return isinstance(prior, WeightedFinitePrior) and all(hasattr(m, "log_density") for m in as_rounds(mechanism))

    def _prepare(self, outputs, phase, y):
        out, rs, phases, y = super()._prepare(outputs, phase, y) if all(
            _supported(m) for m in as_rounds(self.mechanism)
        ) else (np.asarray(outputs, float), None, phase, y)
        return out, rs, phases, y

    def _reconstruct(self, out, rs, phases, y):
        if not isinstance(self.prior, WeightedFinitePrior):
            raise InvalidParameterError(f"discrete-map needs a DiscretePrior, got prior={self.prior!r}")
        rounds = as_rounds(self.mechanism)
        out = out if out.ndim == 3 else out[:, None]
        logs = np.empty((out.shape[0], self.prior.support.shape[0]))
        for k, z in enumerate(self.prior.support):
            tot = np.log(self.prior.probs[k]) if self.prior.probs[k] > 0 else -np.inf
            for t, m in enumerate(rounds):
                if phases is not None and _has_phases(m):
                    lp = m.log_density(out[:, t], z, phase=phases[:, t])
                else:
                    lp = m.log_density(out[:, t], z)
                tot = tot + np.asarray(lp, dtype=float).reshape(out.shape[0], -1).sum(axis=1)
            logs[:, k] = tot
        return self.prior.support[np.argmax(logs, axis=1)]


__all__ = ["DiscreteMAP", "IWPDenoiser", "MAPAttack", "PosteriorMean"]
