"""Reconstruction attackers: estimate a client's private input x from its release(s).

Every attacker is registered under a name (``kind = "reconstruction"``) and is built as
``cls(mechanism, *, prior=None, beta=None, sigma_y=None, random_state=None, ...)``;
``__init__`` only stores parameters. Attackers with a ``fit(outputs)`` method learn from a
separate population split (the audit supplies one). Then

    reconstruct(outputs, *, phase=None, y=None) -> (n, d)

is vectorised over the n releases. ``mechanism`` is one release mechanism or a sequence of
T rounds (a transcript); ``outputs`` is then (n, d) or (n, T, d), ``phase`` (n, m) or
(n, T, m) — the modulation phases, for attackers that are told them — and ``y`` (n,) the
public responses y = xᵀβ + N(0, σ_y²) (seed 000, §6).

Class attributes state what each attacker is:

* ``unbiased`` — unbiased (exactly or as σ → 0) under the conditions in its docstring, so
  that the unbiased Cramér–Rao and Hammersley–Chapman–Robbins bounds apply to it;
* ``needs_phase`` — needs the phases when the release is modulated (λ > 0);
* ``strength`` — rank used when an audit picks "the strongest applicable attacker";
* :meth:`ReconstructionAttacker.applicable` — whether it supports a configuration.

Built-in attackers (this module: the release model, the base class and the frequentist
attackers; :mod:`~privaudit.attacks.bayesian_reconstruction`: the attackers that use a
prior; :mod:`~privaudit.attacks.autodiff_reconstruction`: the generic torch attacker)
------------------------------------------------------------------------------------------
``naive``               g̃/(1 − α) (x̃ for a Gaussian release), inverse-variance averaged over rounds.
``identity``            IWP-SGD releases (seed 001): x̃ itself.
``split-mle``           the efficient attacker with the phase known: exact least squares
                        orthogonal to the modulation vectors plus a 1-D MLE along each v_j
                        (grid search + Newton); transcripts: Fisher-weighted combination of the
                        per-round estimates, then Gauss–Newton on the joint likelihood.
``split-mle-marginal``  the same with the phase marginalised (1-D marginal MLE).
``posterior-mean``      E[x | release] under a Gaussian prior (closed form, or 1-D quadrature
                        along each v_j for a modulated release).
``map``                 argmax of the posterior under a Gaussian prior (Gauss–Newton).
``autodiff-mle``        multi-start Levenberg–Marquardt on the Gaussian likelihood of any torch
                        map (``torch.func`` Jacobians), phase known.
``y-aided``             MLE that also uses the public response y = xᵀβ + noise.
``iwp-denoiser``        empirical-Bayes posterior-mean denoiser for Gaussian (IWP) releases,
                        with the prior fitted on a population split.
``discrete-map``        MAP over the support of a discrete prior (for ReRo audits).
"""

from __future__ import annotations

import abc
import math
from collections.abc import Callable
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from privaudit.mechanisms.protocol import closed_form_release, release_law
from privaudit.mechanisms.arcsine_gaussian import ArcsineGaussian
from privaudit.mechanisms.validation import InvalidInputError, InvalidParameterError, check_array, check_positive

from .registry import register_attack

#: Rows processed at once by the grid/quadrature attackers (bounds memory to ~50 MB).
_CHUNK = 8192


# --- shared pieces -----------------------------------------------------------------------------
class _Round:
    """One release g̃ = c·x + A Σ_j cos(ω⟨x, v_j⟩ + φ_j) v_j + N(0, σ² I) (Gaussian: A = 0, m = 0).

    Read from the round's :class:`~privaudit.mechanisms.protocol.ReleaseLaw`; a round without
    one is taken as x + N(0, σ² I).
    """

    __slots__ = ("c", "amp", "omega", "basis", "sigma", "mech")

    def __init__(self, mech, dim: int) -> None:
        self.mech = mech
        self.sigma = float(mech.sigma)
        law = release_law(mech)
        if law is None:
            self.c, self.amp, self.omega, self.basis = 1.0, 0.0, 0.0, np.zeros((dim, 0))
        else:
            self.c, self.amp, self.omega = law.scale, law.amplitude, law.omega
            self.basis = np.zeros((dim, 0)) if law.basis is None else law.basis

    @property
    def linear(self) -> bool:
        """No modulation term at all (λ = 0 or a Gaussian release)."""
        return self.amp == 0.0 or self.basis.shape[1] == 0

    def mean(self, X: np.ndarray, phase: np.ndarray | None) -> np.ndarray:
        if self.amp == 0.0 or self.basis.shape[1] == 0:
            return self.c * X
        if phase is None:
            raise InvalidInputError("this attacker needs the modulation phases: pass phase=")
        return self.c * X + (self.amp * np.cos(self.omega * (X @ self.basis) + phase)) @ self.basis.T

    def gn_terms(self, X, g, phase):
        """Residual norm², Jᵀr/σ² and JᵀJ/σ² of this round at each row of X (Gauss–Newton)."""
        r = g - self.mean(X, phase)
        s2 = self.sigma**2
        n, d = X.shape
        jtr = self.c * r
        jtj = np.broadcast_to(self.c**2 * np.eye(d), (n, d, d)).copy()
        if not self.linear:
            s = self.amp * self.omega * np.sin(self.omega * (X @ self.basis) + phase)  # (n, m)
            jtr -= (s * (r @ self.basis)) @ self.basis.T
            jtj += (self.basis[None] * (s**2 - 2 * self.c * s)[:, None, :]) @ self.basis.T
        return np.einsum("nd,nd->n", r, r) / s2, jtr / s2, jtj / s2


def _supported(mech) -> bool:
    """The round's release has a closed form (:func:`~privaudit.mechanisms.protocol.closed_form_release`)."""
    return closed_form_release(mech) is not None


def _isotropic(mech) -> bool:
    """The round is x + N(0, σ² I) (a Gaussian, IWP-SGD release)."""
    law = release_law(mech)
    return law is not None and law.isotropic


def as_rounds(mechanism: object) -> list:
    """A release or a T-round transcript (sequence of mechanisms) as a non-empty list of rounds.

    Parameters
    ----------
    mechanism : mechanism, list or tuple of mechanisms
        One release, or the rounds of a transcript.

    Returns
    -------
    list
        ``[mechanism]`` for a single release, else the rounds in order.

    Raises
    ------
    InvalidParameterError
        For an empty sequence.
    """
    if isinstance(mechanism, list | tuple):
        if not mechanism:
            raise InvalidParameterError("mechanism must not be an empty sequence of rounds")
        return list(mechanism)
    return [mechanism]


def _modulated(mech) -> bool:
    """The round has a modulation term (A > 0)."""
    law = release_law(mech)
    return law is not None and law.modulated


def torch_map(mechanism: object) -> Callable:
    """The noise-free map of a mechanism as a torch function ``f(x (n, d), phase (n, m) | None)``.

    Built in for every closed-form release (:meth:`ReleaseLaw.torch_map
    <privaudit.mechanisms.protocol.ReleaseLaw.torch_map>`: the identity for a Gaussian,
    x ↦ (1 − α)x + (λ/m) Σ_j cos(ω⟨x, v_j⟩ + φ_j) v_j for a modulated one); any other object that has
    a ``torch_map`` attribute (e.g. :class:`privaudit.audit.stats.fisher.GaussianNoiseMap`) is
    used as is.

    Parameters
    ----------
    mechanism : object
        A :class:`~privaudit.mechanisms.protocol.ClosedFormRelease` (or a release the adapter
        :func:`~privaudit.mechanisms.protocol.closed_form_release` reads) or an object with ``torch_map``.

    Returns
    -------
    callable
        ``f(x, phase=None)`` on float64 torch tensors, returning (n, d).

    Raises
    ------
    InvalidParameterError
        When the mechanism has no known torch map.
    """
    law = release_law(mechanism)
    if law is not None:
        return law.torch_map()
    if hasattr(mechanism, "torch_map"):
        return mechanism.torch_map
    raise InvalidParameterError(f"mechanism={mechanism!r} has no torch map (give it a torch_map(x, phase) method)")


# --- base class --------------------------------------------------------------------------------
class ReconstructionAttacker(abc.ABC):
    """Base class: stores the mechanism and side knowledge; subclasses implement ``_reconstruct``.

    Parameters
    ----------
    mechanism : mechanism or sequence of mechanisms
        The release (or the T rounds of a transcript) being attacked.
    prior : GaussianPrior or DiscretePrior, optional
        The attacker's prior on x (Bayesian attackers only).
    beta, sigma_y : optional
        Model of the public response y = xᵀβ + N(0, σ_y²) (y-aided attackers).
    random_state : int, Generator or None
        Randomness of multi-start and tie-breaking.
    """

    kind: ClassVar[str] = "reconstruction"
    unbiased: ClassVar[bool] = False
    needs_phase: ClassVar[bool] = False
    strength: ClassVar[int] = 0

    def __init__(self, mechanism: object, *, prior: object = None, beta: ArrayLike | None = None,
                 sigma_y: float | None = None, random_state: np.random.Generator | int | None = None) -> None:
        self.mechanism = mechanism
        self.prior = prior
        self.beta = beta
        self.sigma_y = sigma_y
        self.random_state = random_state

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    @classmethod
    def applicable(cls, mechanism: object, *, prior: object = None, phase_known: bool = True,
                   side_info: bool = False) -> bool:
        """Whether the attacker supports this mechanism, prior and knowledge.

        By default: every round is a closed-form release (a Gaussian or a modulated one), and an
        attacker that ``needs_phase`` is shown it whenever a round is modulated (λ > 0).

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
        if not all(_supported(m) for m in rounds):
            return False
        return phase_known or not cls.needs_phase or not any(_modulated(m) for m in rounds)

    @classmethod
    def is_unbiased(cls, mechanism: object, *, information: str = "known") -> bool:
        """Whether the attacker is *exactly* unbiased here, so that the unbiased CRB/HCR bind it.

        ``information`` is ``"known"`` / ``"hidden"`` (fresh phases, shown or not) or
        ``"fixed"`` (one known phase). MLE-type attackers are only asymptotically
        unbiased on a nonlinear release and may legitimately dip below the CRB there
        (their bias derivative is not zero), so they return True only for linear rounds.

        Parameters
        ----------
        mechanism : mechanism or sequence of mechanisms
            One release or the T rounds of a transcript.
        information : {"known", "hidden", "fixed"}
            What the attacker sees of the modulation phases.

        Returns
        -------
        bool
            The class attribute ``unbiased`` here; subclasses refine it.
        """
        return cls.unbiased

    # -- input normalisation
    def _prepare(self, outputs, phase, y):
        rounds = as_rounds(self.mechanism)
        t = len(rounds)
        out = check_array("outputs", outputs, ndim=(2, 3))
        if out.ndim == 2:
            if t != 1:
                raise InvalidInputError(f"outputs of a {t}-round transcript must have shape (n, {t}, d), got {out.shape}")
            out = out[:, None, :]
        if out.shape[1] != t:
            raise InvalidInputError(f"outputs must hold {t} round(s) on axis 1, got shape {out.shape}")
        n, _, d = out.shape
        rs = [_Round(m, d) for m in rounds]
        phases = None
        if phase is not None:
            p = check_array("phase", phase, ndim=(1, 2, 3))
            if p.ndim == 1:
                p = np.broadcast_to(p, (n, t, p.size))
            elif p.ndim == 2:
                p = p[:, None, :] if t == 1 and p.shape[0] == n else np.broadcast_to(p, (n, t, p.shape[-1]))
            if p.shape[:2] != (n, t):
                raise InvalidInputError(f"phase must have shape (n, m) or (n, T, m) with n={n}, T={t}, got {np.shape(phase)}")
            phases = p
        elif self.needs_phase and any(not r.linear for r in rs):
            raise InvalidInputError(f"{type(self).__name__} needs the modulation phases of the releases: pass phase=")
        if y is not None:
            y = check_array("y", y, ndim=1)
            if y.size != n:
                raise InvalidInputError(f"y must have {n} entries, got {y.size}")
        return out, rs, phases, y

    def reconstruct(self, outputs: ArrayLike, *, phase: ArrayLike | None = None,
                    y: ArrayLike | None = None) -> np.ndarray:
        """Estimates x̂, shape (n, d), one per release (or per transcript).

        Parameters
        ----------
        outputs : array-like of shape (n, d) or (n, T, d)
            Releases; (n, d) only for a single-round mechanism.
        phase : array-like of shape (m,), (n, m) or (n, T, m), optional
            Modulation phases of the releases (required by ``needs_phase`` attackers on
            modulated rounds).
        y : array-like of shape (n,), optional
            Public responses y = xᵀβ + N(0, σ_y²).

        Returns
        -------
        ndarray of shape (n, d)

        Raises
        ------
        InvalidInputError
            When a shape disagrees with the number of rounds or releases, or the phases are needed but missing.
        """
        out, rs, phases, y = self._prepare(outputs, phase, y)
        return self._reconstruct(out, rs, phases, y)

    @abc.abstractmethod
    def _reconstruct(self, out, rs, phases, y) -> np.ndarray:
        """Estimates from validated releases (see :meth:`reconstruct`)."""


def _ph(phases, t):
    return None if phases is None else phases[:, t]


# --- naive inversion ---------------------------------------------------------------------------
class _UnbiasedOnLinearReleases:
    """Maximum-likelihood attackers: exactly unbiased when every round is linear-Gaussian (λ = 0)."""

    @classmethod
    def is_unbiased(cls, mechanism, *, information: str = "known") -> bool:
        rounds = as_rounds(mechanism)
        return all(_supported(m) for m in rounds) and not any(_modulated(m) for m in rounds)


class _UnbiasedOverFreshPhases:
    """Attackers that are unbiased on average over fresh uniform phases (or with λ = 0)."""

    @classmethod
    def is_unbiased(cls, mechanism, *, information: str = "known") -> bool:
        # E cos(ω⟨x, v⟩ + φ) = 0 only over a fresh uniform phase.
        return information != "fixed" or not any(_modulated(m) for m in as_rounds(mechanism))


@register_attack("naive")
class NaiveInverse(_UnbiasedOverFreshPhases, ReconstructionAttacker):
    """x̂ = g̃/(1 − α) per round; rounds averaged with weights (1 − α_t)²/σ_t².

    Unbiased whenever the phases are fresh and uniform (E cos(θ) = 0) or λ = 0; it
    ignores the phases even when they are known.
    """

    unbiased = True
    strength = 10

    def _reconstruct(self, out, rs, phases, y):
        w = np.array([r.c**2 / r.sigma**2 for r in rs])
        est = out / np.array([r.c for r in rs])[None, :, None]
        return np.tensordot(est, w / w.sum(), axes=([1], [0]))


@register_attack("identity")
class IdentityAttack(ReconstructionAttacker):
    """IWP-SGD releases (seed 001): the released x̃ = x + N(0, σ² I) taken as the estimate."""

    unbiased = True
    strength = 5

    @classmethod
    def applicable(cls, mechanism: object, *, prior: object = None, phase_known: bool = True,
                   side_info: bool = False) -> bool:
        """Only a single isotropic Gaussian (IWP) release.

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
        return len(rounds) == 1 and _isotropic(rounds[0])

    def _reconstruct(self, out, rs, phases, y):
        if len(rs) != 1 or not _isotropic(rs[0].mech):
            raise InvalidParameterError("identity attacks a single Gaussian (IWP) release")
        return out[:, 0].copy()


# --- the efficient split attacker ----------------------------------------------------------------
def _mle_1d_known(r: np.ndarray, c: float, amp: float, omega: float, phi: np.ndarray) -> np.ndarray:
    """argmin_a (r − c a − A cos(ω a + φ))², elementwise, by grid search + Newton.

    Every zero of the residual lies in [(r − A)/c, (r + A)/c] and the residual has one,
    so the MLE is a root there: a grid fine enough to see each period of the cosine
    picks the best bracket, then safeguarded Gauss–Newton steps polish it.
    """
    if amp == 0 or omega == 0:
        return (r - amp * np.cos(phi)) / c
    periods = amp * omega / (math.pi * c)
    g = int(min(2048, 64 + 16 * math.ceil(periods)))
    t = np.linspace(0.0, 1.0, g)
    out = np.empty_like(r)
    for s in range(0, r.size, _CHUNK):
        rr, pp = r[s : s + _CHUNK], phi[s : s + _CHUNK]
        lo, hi = (rr - amp) / c, (rr + amp) / c
        grid = lo[:, None] + (hi - lo)[:, None] * t
        res = rr[:, None] - c * grid - amp * np.cos(omega * grid + pp[:, None])
        a = grid[np.arange(rr.size), np.argmin(res**2, axis=1)]
        e = rr - c * a - amp * np.cos(omega * a + pp)
        for _ in range(40):
            hp = c - amp * omega * np.sin(omega * a + pp)
            cand = np.clip(a + hp * e / (hp**2 + 1e-12 * c**2), lo, hi)
            e_new = rr - c * cand - amp * np.cos(omega * cand + pp)
            better = np.abs(e_new) < np.abs(e)
            a = np.where(better, cand, a)
            e = np.where(better, e_new, e)
            if not np.any(better):
                break
        out[s : s + _CHUNK] = a
    return out


def _split_round(g: np.ndarray, r: _Round, phase: np.ndarray | None) -> np.ndarray:
    """Phase-known split estimate of one round: exact LS on V⊥ plus 1-D MLE on each v_j."""
    est = g / r.c
    if r.linear:
        return est
    v = r.basis
    along = g @ v  # (n, m)
    a = _mle_1d_known(along.ravel(), r.c, r.amp, r.omega, phase.ravel()).reshape(along.shape)
    return est + (a - along / r.c) @ v.T


def _gauss_newton(x0, rs, out, phases, *, y=None, beta=None, sigma_y=None, prior=None, n_iter: int = 50):
    """Damped Gauss–Newton on −2·log-posterior: Σ_t ‖g̃_t − g_t(x)‖²/σ_t² [+ (y − xᵀβ)²/σ_y²] [+ prior].

    Vectorised over rows; each row keeps its own Levenberg–Marquardt damping, accepts
    only steps that lower its objective, and leaves the active set once a step gains
    less than 1e−12 (relative) or no step helps even at heavy damping.
    """
    x = x0.copy()
    n, d = x.shape
    eye = np.eye(d)

    def terms(X, idx):
        f = np.zeros(idx.size)
        g = np.zeros((idx.size, d))
        h = np.zeros((idx.size, d, d))
        for t, r in enumerate(rs):
            ft, gt, ht = r.gn_terms(X, out[idx, t], None if phases is None else phases[idx, t])
            f += ft
            g += gt
            h += ht
        if y is not None:
            e = y[idx] - X @ beta
            f += e**2 / sigma_y**2
            g += np.outer(e, beta) / sigma_y**2
            h += np.outer(beta, beta) / sigma_y**2
        if prior is not None:
            e = prior.mean - X
            pe = e @ prior.precision
            f += np.einsum("nd,nd->n", e, pe)
            g += pe
            h += prior.precision
        return f, g, h

    active = np.arange(n)
    f, g, h = terms(x, active)
    damp = np.full(n, 1e-6)
    for _ in range(n_iter):
        if active.size == 0:
            break
        da = damp[active]
        diag = np.einsum("nii->ni", h)
        step = np.linalg.solve(h + da[:, None, None] * (diag[:, :, None] * eye + 1e-12 * eye), g[..., None])[..., 0]
        xn = x[active] + step
        fn, gn, hn = terms(xn, active)
        ok = fn < f
        gain = np.where(ok, f - fn, 0.0)
        x[active[ok]] = xn[ok]
        f = np.where(ok, fn, f)
        g = np.where(ok[:, None], gn, g)
        h = np.where(ok[:, None, None], hn, h)
        damp[active] = np.where(ok, da / 3, da * 8)
        done = (ok & (gain <= 1e-12 * (1 + f))) | (~ok & (damp[active] > 1e8))
        keep = ~done
        active, f, g, h = active[keep], f[keep], g[keep], h[keep]
    return x


def _fisher_combine(ests: np.ndarray, rs: list[_Round], phases) -> np.ndarray:
    """(Σ_t I_t)⁻¹ Σ_t I_t x̂_t with I_t = J_tᵀJ_t/σ_t² at each per-round estimate."""
    n, t, d = ests.shape
    num = np.zeros((n, d))
    den = np.zeros((n, d, d))
    for k, r in enumerate(rs):
        # gn_terms at x̂_t with g̃ = mean(x̂_t) gives zero residual and the information.
        _, _, info = r.gn_terms(ests[:, k], r.mean(ests[:, k], _ph(phases, k)), _ph(phases, k))
        den += info
        num += np.einsum("nij,nj->ni", info, ests[:, k])
    den += 1e-12 * np.eye(d) * np.trace(den, axis1=1, axis2=2)[:, None, None]
    return np.linalg.solve(den, num[..., None])[..., 0]


@register_attack("split-mle")
class SplitMLE(_UnbiasedOnLinearReleases, ReconstructionAttacker):
    """The efficient attacker with the phases known (seed 000, §6 setting).

    One round: x̂ = P_⊥ g̃/(1 − α) (exact least squares — efficient, since the map is
    linear there) plus, along each v_j, the 1-D MLE of a_j = ⟨x, v_j⟩ from
    ⟨g̃, v_j⟩ = (1 − α) a_j + (λ/m) cos(ω a_j + φ_j) + N(0, σ²) by grid search and
    Newton. Several rounds: per-round estimates combined with their Fisher information,
    then Gauss–Newton on the joint likelihood. Asymptotically unbiased and efficient as
    σ → 0 (variance → E_φ tr(I(x | φ)⁻¹)); exactly so for λ = 0.
    """

    unbiased = True
    needs_phase = True
    strength = 70

    def _reconstruct(self, out, rs, phases, y):
        ests = np.stack([_split_round(out[:, t], r, _ph(phases, t)) for t, r in enumerate(rs)], axis=1)
        if len(rs) == 1:
            return ests[:, 0]
        x = _fisher_combine(ests, rs, phases)
        if all(r.linear for r in rs):
            return x
        return _gauss_newton(x, rs, out, phases)


@register_attack("split-mle-marginal")
class SplitMLEMarginal(_UnbiasedOverFreshPhases, ReconstructionAttacker):
    """Split attacker with the phase marginalised (the attacker does not see φ).

    Orthogonal to V as in ``split-mle``. Along v_j the marginal law is the location
    family p(r − (1 − α) a) with p the arcsine-plus-Gaussian density, so the 1-D MLE is
    â = (r − u*)/(1 − α) with u* a mode of p (grid search + Newton). When p is bimodal
    (λ/m ≳ σ) the modes ±u* tie; the sign is drawn at random, which keeps the estimator
    unbiased (at a variance cost of u*²/(1 − α)²). Rounds are combined by their inverse
    per-round covariance.
    """

    unbiased = True
    strength = 50

    def _reconstruct(self, out, rs, phases, y):
        rng = np.random.default_rng(self.random_state)
        n, t, d = out.shape
        num = np.zeros((n, d))
        den = np.zeros((d, d))
        for k, r in enumerate(rs):
            est = out[:, k] / r.c
            prec = np.eye(d) * r.c**2 / r.sigma**2
            if not r.linear:
                v = r.basis
                u = ArcsineGaussian(r.amp, r.sigma).mode()
                if u > 0:
                    sign = rng.choice((-1.0, 1.0), size=(n, v.shape[1]))
                    est = est - (sign * u / r.c) @ v.T
                along_var = (r.sigma**2 + r.amp**2 / 2 + u**2) / r.c**2
                prec += (1 / along_var - r.c**2 / r.sigma**2) * (v @ v.T)
            num += est @ prec
            den += prec
        return np.linalg.solve(den, num.T).T



@register_attack("y-aided")
class YAidedMLE(_UnbiasedOnLinearReleases, ReconstructionAttacker):
    """MLE from the release(s) and the public response y = xᵀβ + N(0, σ_y²) (seed 000, §6).

    Maximises Σ_t log p(g̃_t | x, φ_t) + log p(y | x) by Gauss–Newton from the split
    estimate; for linear rounds the generalised least squares solution
    (Σ_t c_t²/σ_t² I + ββᵀ/σ_y²)⁻¹(Σ_t c_t g̃_t/σ_t² + βy/σ_y²), exactly unbiased with
    covariance equal to the inverse of the total information (the CRB).
    """

    unbiased = True
    needs_phase = True
    strength = 80

    @classmethod
    def applicable(cls, mechanism: object, *, prior: object = None, phase_known: bool = True,
                   side_info: bool = False) -> bool:
        """Only with the public response (``side_info``), on releases the base class supports.

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
        return side_info and super().applicable(mechanism, phase_known=phase_known)

    def _reconstruct(self, out, rs, phases, y):
        if y is None or self.beta is None or self.sigma_y is None:
            raise InvalidParameterError("y-aided needs beta and sigma_y at construction and y= at reconstruct")
        beta = check_array("beta", self.beta, ndim=1, dim=out.shape[2])
        sigma_y = check_positive("sigma_y", self.sigma_y)
        x0 = SplitMLE(self.mechanism)._reconstruct(out, rs, phases, None)
        return _gauss_newton(x0, rs, out, phases, y=y, beta=beta, sigma_y=sigma_y)




__all__ = [
    "IdentityAttack", "NaiveInverse", "ReconstructionAttacker", "SplitMLE", "SplitMLEMarginal", "YAidedMLE", "as_rounds",
    "torch_map",
]
