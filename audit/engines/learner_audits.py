"""Trade-off audits of the three learners, through mechanism-like views of what they release.

Every class below satisfies the mechanism protocol (``claim``, vectorised
``sample(x, n, rng)``, and ``log_density`` where the law is known), so that
:func:`~privaudit.audit.engines.tradeoff.audit_tradeoff` audits a learner exactly as it
audits a mechanism. The ``audit_*`` functions pick the worst-case pair, the
exact theory curve and the strongest attacker.

(a) Seed 000, modulated regression
    :class:`TranscriptRelease` — one client's releases over the T rounds of
    :class:`~privaudit.learners.ModulatedRegressor` (one
    :class:`~privaudit.mechanisms.ModulatedMechanism` per round, each with its own
    basis and σ_t). With the phase known (fixed at the steepest value of each
    round) every round is a Gaussian shift of D_t = ‖g_t(x′) − g_t(x)‖, and the
    transcript is exactly μ_T-GDP with μ_T² = Σ_t D_t²/σ_t² ≤ Σ_t L²/σ_t². With the
    phase unknown, the exact LR marginalises each round's phase.
(b) Seed 001, IWP release
    :class:`RecordRelease` — one record's (x̃, ỹ): Gaussian features and RR (or
    Gaussian) labels, independent. Its exact curve comes from composing the two
    privacy loss distributions in dp_accounting.
(c) Seed 002, Cond-DP / DP-SGD under label DP
    :class:`LabelCanarySteps` — the exact law of the per-step noisy gradients seen
    by a white-box attacker, along a label canary whose clipped gradient is ±c·u
    (a label flip moves it by 2c): o_t = B_t·s + z·ξ_t in units of c, B_t ~ Bern(q).
    :class:`DPSGDLabelCanary` — the same experiment run through the DP-SGD engine
    (:mod:`privaudit.learners.dpsgd`), vectorised across runs: ``"white-box"``
    returns the per-step LR increments computed from the engine's noisy sums,
    ``"black-box"`` returns the final linear model. :func:`one_run_label_audit`
    trains *once* with m label canaries and applies the one-run estimator.

Each view also carries what the learner kinds need to audit it without knowing its
type (:mod:`privaudit.audit.engines.release_views`): ``tradeoff_audit``,
``reconstruction_audit`` and the notes recorded in a report. The learners return
these views from their ``release_view``.

(About 600 lines: the three views are kept in one module on purpose, since together
they are the one description of what each learner family releases and how it is
attacked; every section is self-contained.)
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from privaudit.attacks.pairs import label_canaries, steepest_phase
from privaudit.mechanisms import GaussianMechanism, ModulatedMechanism, PrivacyClaim, RandomizedResponse
from privaudit.mechanisms.accounting import dpsgd_epsilon, privacy_loss_distribution
from privaudit.mechanisms.tradeoff import gaussian_tradeoff
from privaudit.mechanisms.validation import (
    InvalidInputError,
    InvalidParameterError,
    check_array,
    check_delta,
    check_int,
    check_interval,
    check_positive,
)

from privaudit.audit.stats.epsilon_bounds import OneRunBound, gdp_epsilon, one_run_bound
from privaudit.audit.engines.tradeoff import TradeoffAudit, audit_tradeoff, composed_tradeoff, pld_tradeoff


# ================================================================== (a) modulated transcripts
class TranscriptRelease:
    """One client's releases over T rounds, shape ``(n, T, d)`` per ``sample``.

    Parameters
    ----------
    mechanisms : list of ModulatedMechanism
        One per round (e.g. ``ModulatedRegressor.round_mechanisms_``).
    claim : PrivacyClaim, optional
        Claim of the whole transcript (e.g. the regressor's ``claim``). Default: the
        exact GDP composition μ_T = sqrt(Σ_t L²/σ_t²) at the first round's δ.
    phases : array (T, m), optional
        Phases known to the attacker (fixed); None draws fresh phases and the
        density marginalises them (phase unknown).
    """

    def __init__(self, mechanisms, *, claim: PrivacyClaim | None = None, phases=None) -> None:
        mechs = list(mechanisms)
        if not mechs or not all(isinstance(m, ModulatedMechanism) for m in mechs):
            raise InvalidParameterError("mechanisms must be a non-empty list of ModulatedMechanism")
        self.mechanisms = mechs
        self.phases = None if phases is None else check_array("phases", phases, ndim=2)
        if self.phases is not None and self.phases.shape[0] != len(mechs):
            raise InvalidInputError(f"phases must have one row per round ({len(mechs)}), got {self.phases.shape}")
        if claim is None:
            mu = math.sqrt(sum(m.mu**2 for m in mechs))
            delta = mechs[0].claim.delta
            claim = PrivacyClaim(gdp_epsilon(mu, delta), delta, "l2<=1", mu=mu, rho=mu**2 / 2)
        self.claim = claim

    @property
    def rounds(self) -> int:
        return len(self.mechanisms)

    def __repr__(self) -> str:
        known = "known" if self.phases is not None else "unknown"
        return f"TranscriptRelease(T={self.rounds}, phase {known}, claim={self.claim})"

    def sample(self, x, n: int, rng=None) -> np.ndarray:
        rng = np.random.default_rng(rng)
        n = check_int("n", n)
        out = np.empty((n, self.rounds, self.mechanisms[0].dim))
        for t, m in enumerate(self.mechanisms):  # loop over rounds; each round is vectorised over n
            out[:, t] = m.sample(x, n, rng, phase=None if self.phases is None else self.phases[t])
        return out

    def log_density(self, outputs, x) -> np.ndarray:
        # Callers may pass the releases flattened to rows: restore (n, T, d).
        o = np.asarray(outputs, dtype=float).reshape(-1, self.rounds, self.mechanisms[0].dim)
        return sum(m.log_density(o[:, t], x, phase=None if self.phases is None else self.phases[t])
                   for t, m in enumerate(self.mechanisms))

    #: Recorded in a learner-tradeoff report (:mod:`privaudit.audit.engines.release_views`).
    tradeoff_note = ("the learner is fitted on synthetic data; the audit tests one client's releases over all "
                     "rounds (its transcript) on the worst-case pair, with the learner's own per-round σ and bases")
    reconstruction_note = "x is reconstructed from one client's releases over all rounds of the fitted learner"

    def tradeoff_audit(self, *, n: int, confidence: float, rng, estimator: str | None = None,
                       phase: str = "known") -> TradeoffAudit:
        """:func:`audit_modulated` of this transcript under its claim (phase ``"known"`` or ``"hidden"``)."""
        return audit_modulated(self, phase_known=phase == "known", n=n, estimator=estimator,
                               confidence=confidence, rng=rng)

    def reconstruction_audit(self, *, attacker, prior, n: int, confidence: float, rng, phase: str = "known"):
        """Reconstruction of x from the rounds' releases (their Fisher information adds)."""
        from privaudit.audit.engines.reconstruction import audit_reconstruction

        return audit_reconstruction(list(self.mechanisms), attacker, None, prior, phase=phase, n=n, rng=rng,
                                    confidence=confidence)

    def displacement_mu(self, x, x_prime) -> float:
        """μ_T = sqrt(Σ_t ‖g_t(x′) − g_t(x)‖²/σ_t²) with the known phases (exact GDP of this pair)."""
        if self.phases is None:
            raise InvalidParameterError("displacement_mu needs known phases")
        return math.sqrt(sum(
            float(np.sum((m.map(x_prime, self.phases[t]) - m.map(x, self.phases[t])) ** 2)) / m.sigma**2
            for t, m in enumerate(self.mechanisms)
        ))


def transcript_pair(mechanisms, direction=None, *, claim=None, phase_known: bool = True):
    """Worst-case pair for a transcript: x = 0, x′ = u (unit; default v₁ of round 0).

    With ``phase_known`` each round's phases are set to their steepest values for
    this pair (:func:`~privaudit.attacks.pairs.steepest_phase`). Returns
    ``(release, x, x_prime)``.
    """
    mechs = list(mechanisms)
    d = mechs[0].dim
    u = mechs[0].basis[:, 0] if direction is None else check_array("direction", direction, ndim=1, dim=d)
    u = u / np.linalg.norm(u)
    x, xp = np.zeros(d), u.copy()
    phases = np.vstack([steepest_phase(m, x, xp) for m in mechs]) if phase_known else None
    return TranscriptRelease(mechs, claim=claim, phases=phases), x, xp


def audit_modulated(
    learner_or_mechanisms, *, phase_known: bool = True, rounds: int | None = None, n: int = 100_000,
    estimator: str | None = None, confidence: float = 0.95, rng=None, direction=None,
) -> TradeoffAudit:
    """Audit seed 000's client transcript (or one round, ``rounds=1``).

    ``learner_or_mechanisms`` is a fitted ModulatedRegressor / OneShotModulatedRegressor
    (its ``round_mechanisms_`` and ``claim`` are used), a :class:`TranscriptRelease`
    (its mechanisms and claim), a list of
    ModulatedMechanism, or one ModulatedMechanism (a single round). With the phase
    known the release is exactly Gaussian, so the default estimator is ``"gdp"``
    and the exact curve is G_{μ_T}; with it unknown the default is Clopper–Pearson
    and the exact curve is not known in closed form (it lies above the phase-known
    curve, which is therefore not reported: ``exact_curve=None``).
    """
    obj = learner_or_mechanisms
    claim = None
    if isinstance(obj, ModulatedMechanism):
        mechs = [obj]
        claim = obj.claim
    elif hasattr(obj, "round_mechanisms_"):
        mechs = list(obj.round_mechanisms_)
        claim = obj.claim
    elif isinstance(obj, TranscriptRelease):
        mechs = list(obj.mechanisms)
        claim = obj.claim
    else:
        mechs = list(obj)
    if rounds is not None:
        mechs = mechs[: check_int("rounds", rounds)]
        if rounds < len(getattr(obj, "round_mechanisms_", getattr(obj, "mechanisms", mechs))):
            claim = None  # a prefix of the transcript: test its own exact composition
    release, x, xp = transcript_pair(mechs, direction, claim=claim, phase_known=phase_known)
    if phase_known:
        mu = release.displacement_mu(x, xp)
        kw = dict(exact_curve=lambda a: gaussian_tradeoff(mu, a), epsilon_exact=gdp_epsilon(mu, release.claim.delta))
        estimator = estimator or "gdp"
    else:
        kw = {}
        estimator = estimator or "clopper-pearson"
    res = audit_tradeoff(release, x, xp, n=n, estimator=estimator, confidence=confidence, rng=rng,
                         target=f"modulated transcript T={len(mechs)}, phase {'known' if phase_known else 'unknown'}",
                         assume_gaussian=phase_known, **kw)
    if not phase_known:
        # No closed form for the marginal: the phase-known (worst-case) curve and ε are not exact here.
        res = dataclasses.replace(res, exact_curve=None, epsilon_exact=None)
    return res


# ================================================================== (b) IWP record release
class RecordRelease:
    """One record's local release (x̃, ỹ) = (x + N(0, σ²I), RR(y)), as a mechanism on z = (x, y).

    ``sample(z, n)`` returns ``(n, d + 1)``: the released features then the released
    label; ``log_density`` adds the two independent log-densities.
    """

    tradeoff_note = ("the learner is fitted on synthetic data; the audit tests one record's local release (x~, y~) "
                     "on opposite corners of the declared feature box with the label flipped")
    reconstruction_note = ("x is reconstructed from one record's released features x~ (Gaussian, σ on the "
                           "declared box's diameter)")

    def __init__(self, feature_mechanism: GaussianMechanism, label_mechanism, claim: PrivacyClaim, *,
                 bounds=None, label_bounds=None) -> None:
        self.feature_mechanism = feature_mechanism
        self.label_mechanism = label_mechanism
        self.claim = claim
        self.bounds = bounds
        self.label_bounds = label_bounds

    @classmethod
    def from_release(cls, release) -> "RecordRelease":
        """From a :class:`privaudit.learners.release.LocalRelease` (or a fitted IWP learner holding one)."""
        rel = getattr(release, "release_", release)
        if getattr(rel, "feature_mechanism", None) is None or getattr(rel, "label_mechanism", None) is None:
            raise InvalidParameterError("the release does not expose feature_mechanism and label_mechanism")
        return cls(rel.feature_mechanism, rel.label_mechanism, rel.claim, bounds=getattr(rel, "bounds", None),
                   label_bounds=getattr(rel, "label_bounds", None))

    def tradeoff_audit(self, *, n: int, confidence: float, rng, estimator: str | None = None,
                       phase: str = "known") -> TradeoffAudit:
        """:func:`audit_iwp_release` on the worst-case pair of the declared box."""
        kw = {"estimator": estimator} if estimator is not None else {}
        return audit_iwp_release(self, n=n, confidence=confidence, rng=rng, **kw)

    def reconstruction_audit(self, *, attacker, prior, n: int, confidence: float, rng, phase: str = "known"):
        """Reconstruction of x from the released features x̃ alone."""
        from privaudit.audit.engines.reconstruction import audit_reconstruction

        return audit_reconstruction(self.feature_mechanism, attacker, None, prior, n=n, rng=rng,
                                    confidence=confidence)

    def __repr__(self) -> str:
        return f"RecordRelease({self.feature_mechanism!r}, {self.label_mechanism!r}, claim={self.claim})"

    @staticmethod
    def _split(z):
        z = np.asarray(z, dtype=float)
        return z[:-1], z[-1]

    def sample(self, z, n: int, rng=None) -> np.ndarray:
        rng = np.random.default_rng(rng)
        x, y = self._split(z)
        feats = self.feature_mechanism.sample(x, n, rng)
        labels = self.label_mechanism.sample(y if isinstance(self.label_mechanism, RandomizedResponse)
                                             else np.atleast_1d(y), n, rng).reshape(n, 1)
        return np.hstack([feats.reshape(n, -1), labels])

    def log_density(self, outputs, z) -> np.ndarray:
        o = np.asarray(outputs, dtype=float)
        x, y = self._split(z)
        lm = self.label_mechanism
        ly = lm.log_density(o[:, -1], y) if isinstance(lm, RandomizedResponse) else lm.log_density(o[:, -1:], np.atleast_1d(y))
        return self.feature_mechanism.log_density(o[:, :-1], x) + ly

    def pld(self, feature_distance: float | None = None):
        """PLD of the worst-case pair (features at distance Δ, label flipped) via dp_accounting."""
        # Each mechanism describes itself to dp_accounting (its dp_event); no switch on its type here.
        return privacy_loss_distribution(self.feature_mechanism, feature_distance).compose(
            privacy_loss_distribution(self.label_mechanism))

    def tradeoff(self, alpha) -> np.ndarray:
        """Exact trade-off curve of the worst-case pair, from the composed PLD's whole profile."""
        return pld_tradeoff(self.pld(), alpha)

    def exact_epsilon(self, delta: float) -> float:
        return float(self.pld().get_epsilon_for_delta(check_delta(delta)))


def audit_iwp_release(
    release, *, bounds=None, n: int = 100_000, confidence: float = 0.95, estimator: str = "clopper-pearson",
    rng=None,
) -> TradeoffAudit:
    """Audit seed 001's record release on its worst-case pair.

    x and x′ are opposite corners of the declared feature box (so ‖x − x′‖₂ is the
    diameter, the sensitivity σ was calibrated on) and the label is flipped.
    ``release`` is a LocalRelease, a fitted IWP learner, or a :class:`RecordRelease`
    (then ``bounds=(lo, hi)`` is required).
    """
    rec = release if isinstance(release, RecordRelease) else RecordRelease.from_release(release)
    if bounds is None:
        rel = getattr(release, "release_", release)
        bounds = getattr(rel, "bounds", None)
    if not bounds:
        raise InvalidParameterError("bounds=(lo, hi) of the feature box are required")
    lo, hi = (np.asarray(b, dtype=float) for b in bounds)
    lm = rec.label_mechanism
    if isinstance(lm, RandomizedResponse):
        y0, y1 = lm.categories[0], lm.categories[1]
    else:
        lb = getattr(getattr(release, "release_", release), "label_bounds", None) or (-lm.sensitivity / 2, lm.sensitivity / 2)
        y0, y1 = lb
    z, zp = np.r_[lo, y0], np.r_[hi, y1]
    return audit_tradeoff(rec, z, zp, n=n, confidence=confidence, estimator=estimator, rng=rng,
                          target="IWP record release (x~, y~), worst-case pair")


# ================================================================== (c) DP-SGD under label DP
class LabelCanarySteps:
    """Exact law of a white-box DP-SGD transcript along one label canary (units of the clip norm c).

    Per step t the attacker subtracts the (known) clipped gradients of the other
    examples from the noisy sum and projects on the canary's gradient direction u:

        o_t = B_t·s + z·ξ_t,   B_t ~ Bernoulli(q),   ξ_t ~ N(0, 1),

    where s = ±1 is the canary label's effect (its clipped gradient is s·c·u; a
    label flip moves it by 2c) and z the noise multiplier. The input of
    :meth:`sample` is s. With q = 1 the pair is exactly (2√T/z)-GDP; in general its
    exact curve is the replace-one subsampled-Gaussian PLD of dp_accounting.

    Parameters
    ----------
    noise_multiplier, steps, sampling_rate : as in :func:`privaudit.mechanisms.dpsgd_epsilon`.
    delta : float
        δ of the claim.
    adjacency : str
        The relation the *claim* is accounted under: ``"label"`` is right;
        ``"add-remove"`` (sensitivity c instead of 2c) is the classic mistake.
    """

    def __init__(self, *, noise_multiplier: float, steps: int, sampling_rate: float = 1.0, delta: float = 1e-5,
                 adjacency: str = "label") -> None:
        self.noise_multiplier = check_positive("noise_multiplier", noise_multiplier)
        self.steps = check_int("steps", steps)
        self.sampling_rate = check_interval("sampling_rate", sampling_rate, 0.0, 1.0, closed="right")
        self.delta = check_delta(delta)
        self.adjacency = adjacency
        eps = dpsgd_epsilon(self.noise_multiplier, self.steps, self.delta, sampling_rate=self.sampling_rate,
                            adjacency=adjacency)
        self.claim = PrivacyClaim(eps, self.delta, adjacency)

    def __repr__(self) -> str:
        return (f"LabelCanarySteps(z={self.noise_multiplier:g}, T={self.steps}, q={self.sampling_rate:g}, "
                f"claim={self.claim})")

    def sample(self, s, n: int, rng=None) -> np.ndarray:
        rng = np.random.default_rng(rng)
        n = check_int("n", n)
        out = rng.standard_normal((n, self.steps))
        out *= self.noise_multiplier
        if self.sampling_rate < 1:
            out += float(s) * (rng.random((n, self.steps)) < self.sampling_rate)
        else:
            out += float(s)
        return out

    def log_density(self, outputs, s) -> np.ndarray:
        o = np.asarray(outputs, dtype=float) / self.noise_multiplier
        z = self.noise_multiplier
        m = float(s) / z
        q = self.sampling_rate
        if q == 1:
            comp = -0.5 * (o - m) ** 2
        else:
            comp = logsumexp(np.stack([-0.5 * o**2, -0.5 * (o - m) ** 2]), axis=0, b=np.array([1 - q, q])[:, None, None])
        return comp.sum(axis=1) - self.steps * (0.5 * math.log(2 * math.pi) + math.log(z))

    def tradeoff(self, alpha) -> np.ndarray:
        """Exact curve: T replace-one (subsampled) Gaussian steps, via dp_accounting's PLD."""
        if self.sampling_rate == 1:
            return gaussian_tradeoff(2 * math.sqrt(self.steps) / self.noise_multiplier, alpha)
        return composed_tradeoff(alpha, noise_multiplier=self.noise_multiplier, steps=self.steps,
                                 sampling_rate=self.sampling_rate, adjacency="replace-one")

    def exact_epsilon(self, delta: float) -> float:
        return dpsgd_epsilon(self.noise_multiplier, self.steps, delta, sampling_rate=self.sampling_rate,
                             adjacency="label")


@dataclass
class _CanaryData:
    X: np.ndarray  # (n, P) with the canary last
    y: np.ndarray  # (n,) labels of the others; canary label is set per hypothesis
    canary_label: float


def canary_dataset(n_data: int = 20, dim: int = 3, *, canary_label: float = 1e3, rng=None) -> _CanaryData:
    """A small regression dataset plus one label canary in an extra coordinate.

    The canary (:func:`~privaudit.attacks.pairs.label_canaries` with m = 1) has
    feature e_{d+1}, zero for every other example, and label ±Y with Y large, so
    its clipped gradient is ∓c·e_{d+1} whatever the model: a label flip moves the
    clipped sum by exactly 2c.
    """
    rng = np.random.default_rng(rng)
    X = rng.standard_normal((check_int("n_data", n_data), check_int("dim", dim)))
    y = X @ rng.standard_normal(dim) + 0.1 * rng.standard_normal(n_data)
    feat, _, _ = label_canaries(1, dim + 1, label_scale=canary_label, rng=rng)
    Xa = np.vstack([np.hstack([X, np.zeros((n_data, 1))]), feat])
    return _CanaryData(Xa, y, float(canary_label))


class ScalarInputRelease:
    """A mechanism on a scalar input s seen as a 1-vector (e.g. :class:`LabelCanarySteps` on the sign s ∈ {−1, +1}).

    Reconstruction audits draw inputs as vectors (a discrete prior's support has shape
    (k, d)); the wrapped mechanism takes the scalar.
    """

    def __init__(self, view) -> None:
        self.view = view
        self.claim = view.claim

    def __repr__(self) -> str:
        return repr(self.view)

    def sample(self, x, n: int, rng=None) -> np.ndarray:
        return self.view.sample(float(np.ravel(x)[0]), n, rng)

    def log_density(self, outputs, x) -> np.ndarray:
        return self.view.log_density(outputs, float(np.ravel(x)[0]))

    def tradeoff(self, alpha) -> np.ndarray:
        return self.view.tradeoff(alpha)


class DPSGDLabelCanary:
    """DP-SGD training runs with a label canary, through the engine, as a mechanism on the canary's sign.

    ``sample(s, n)`` trains n independent linear DP-SGD runs (vectorised across
    runs by :func:`privaudit.learners.dpsgd.train_linear_dpsgd_runs`) on the
    dataset with canary label s·Y and returns:

    * ``mode="white-box"``: per step, the LR increment along the canary,
      ⟨r_t − (a_t + b_t)/2, b_t − a_t⟩/(zc)², where r_t is the noisy sum minus the
      attacker-known clipped gradients of the other examples, and a_t, b_t the
      canary's clipped gradients at θ_t under labels −Y and +Y. The sum over steps
      is the exact log-likelihood ratio of the transcript (full batch);
    * ``mode="black-box"``: the final parameters θ_T (shape (n, P)).

    The claim is the engine's, under the configured ``adjacency``.

    With ``conditioning=True`` the runs are Cond-DP (seed 002, Alg. 1, linear head):
    the model is Θ·Ĉx with Ĉ = V diag(1/σ̃) Vᵀ from the SVD of the (public) feature
    matrix (:func:`privaudit.learners.conditioning.conditioning_matrix`), i.e. DP-SGD
    on the conditioned features Ĉx. Conditioning uses public features only, so the
    label-DP guarantee, and the exact μ of the canary pair, are unchanged: the audit
    checks that it is.
    """

    def __init__(self, data: _CanaryData, *, epsilon: float, delta: float = 1e-5, clip: float = 1.0,
                 epochs: int = 10, lr: float = 0.05, adjacency: str = "label", mode: str = "white-box",
                 noise_multiplier: float | None = None, conditioning: bool = False) -> None:
        if mode not in ("white-box", "black-box"):
            raise InvalidParameterError(f"mode must be 'white-box' or 'black-box', got mode={mode!r}")
        from privaudit.learners.dpsgd import DPSGDEngine

        self.data, self.mode, self.conditioning = data, mode, conditioning
        if conditioning:
            from privaudit.learners.conditioning import conditioning_matrix

            self.X_ = data.X @ conditioning_matrix(data.X).matrix
        else:
            self.X_ = data.X
        self.kw = dict(epsilon=epsilon, delta=delta, clip=clip, epochs=epochs, lr=lr, optimizer="sgd",
                       adjacency=adjacency, noise_multiplier=noise_multiplier)
        engine = DPSGDEngine(**{k: v for k, v in self.kw.items()})
        n = data.X.shape[0]
        self.noise_multiplier_ = engine.calibrate(n)
        self.claim = engine.claim(n)
        self.steps_ = engine.schedule(n)[2]

    def __repr__(self) -> str:
        kind = "Cond-DP" if self.conditioning else "DP-SGD"
        return f"DPSGDLabelCanary({kind}, mode={self.mode!r}, z={self.noise_multiplier_:.4g}, T={self.steps_}, claim={self.claim})"

    def sample(self, s, n: int, rng=None) -> np.ndarray:
        import torch

        from privaudit.learners.dpsgd import linear_clipped_grad_sum, train_linear_dpsgd_runs

        d = self.data
        y = np.r_[d.y, float(s) * d.canary_label]
        X_t = torch.as_tensor(self.X_)
        others, canary = X_t[:-1], X_t[-1:]
        clip = torch.as_tensor([self.kw["clip"]], dtype=torch.float64)
        steps = []

        def callback(info):
            th = info.params
            R = th.shape[0]
            own = linear_clipped_grad_sum(th, others, torch.as_tensor(d.y).expand(R, -1), clip)[0]
            r = info.noisy_sum - own
            a = linear_clipped_grad_sum(th, canary, torch.full((R, 1), -d.canary_label, dtype=th.dtype), clip)[0]
            b = linear_clipped_grad_sum(th, canary, torch.full((R, 1), d.canary_label, dtype=th.dtype), clip)[0]
            s2 = float(info.noise_std.reshape(-1)[0]) ** 2
            steps.append((((r - (a + b) / 2) * (b - a)).sum(dim=1) / s2).numpy())

        cb = callback if self.mode == "white-box" else None
        theta = train_linear_dpsgd_runs(self.X_, y, n_runs=check_int("n", n), rng=rng, callback=cb,
                                        **{k: v for k, v in self.kw.items() if k != "optimizer"}, optimizer="sgd")
        if self.mode == "white-box":
            return np.stack(steps, axis=1)
        return theta

    tradeoff_note = ("the DP-SGD engine with the learner's (ε, δ, clip, epochs, lr, adjacency) on a small canary "
                     "dataset, one label flipped; conditioning by public features is post-processing of public data "
                     "and does not enter the label-DP analysis")
    reconstruction_note = ("a canary's label sign (uniform prior on ±1) is reconstructed from the white-box DP-SGD "
                           "steps; the exact-reconstruction (ReRo) bound follows from the steps' trade-off curve")

    def tradeoff_audit(self, *, n: int, confidence: float, rng, estimator: str | None = None,
                       phase: str = "known") -> TradeoffAudit:
        """:func:`audit_dpsgd_label` on the canary's label flip."""
        kw = {"estimator": estimator} if estimator is not None else {}
        return audit_dpsgd_label(self, n=n, confidence=confidence, rng=rng, **kw)

    def reconstruction_audit(self, *, attacker, prior, n: int, confidence: float, rng, phase: str = "known"):
        """The canary's label sign (uniform prior on ±1) from the exact law of the white-box steps.

        ``prior`` is ignored: the reconstructed quantity is the label sign s ∈ {−1, +1}.
        """
        from privaudit.attacks.priors import DiscretePrior

        from privaudit.audit.engines.reconstruction import audit_reconstruction

        steps = LabelCanarySteps(noise_multiplier=self.noise_multiplier_, steps=self.steps_, delta=self.claim.delta,
                                 adjacency=self.claim.adjacency)
        labels = DiscretePrior(np.array([[-1.0], [1.0]]))
        return audit_reconstruction(ScalarInputRelease(steps), attacker, None, labels, n=n, rng=rng,
                                    confidence=confidence)

    def exact_mu(self) -> float:
        """μ of the canary pair: 2√T/z (full batch, antipodal clipped canary gradients)."""
        return 2 * math.sqrt(self.steps_) / self.noise_multiplier_

    def exact_epsilon(self, delta: float) -> float:
        return gdp_epsilon(self.exact_mu(), delta)

    def tradeoff(self, alpha) -> np.ndarray:
        return gaussian_tradeoff(self.exact_mu(), alpha)


def audit_dpsgd_label(
    mechanism, *, n: int = 20_000, estimator: str = "gdp", confidence: float = 0.95, rng=None,
) -> TradeoffAudit:
    """Audit a label-DP DP-SGD view (:class:`LabelCanarySteps` or :class:`DPSGDLabelCanary`) on the canary flip.

    White-box views are scored by the sum of the per-step statistics (the exact LR
    for the engine's white-box mode; the exact-LR attacker is used for
    :class:`LabelCanarySteps`); black-box by a projection learned on the training split.
    """
    from privaudit.attacks.distinguishers import ProjectionAttack

    if isinstance(mechanism, DPSGDLabelCanary):
        attacker = (ProjectionAttack(np.ones(mechanism.steps_)) if mechanism.mode == "white-box"
                    else ProjectionAttack(use_pair=False))
    else:
        attacker = None
    if isinstance(mechanism, LabelCanarySteps) and mechanism.sampling_rate < 1 and estimator == "gdp":
        raise InvalidParameterError("the GDP estimator assumes a Gaussian trade-off; use clopper-pearson for q < 1")
    # q = 1 (checked above for the exact view): the flip is a shift of Gaussian steps, a G_mu curve.
    return audit_tradeoff(mechanism, -1.0, 1.0, n=n, attacker=attacker, estimator=estimator,
                          confidence=confidence, rng=rng, target=repr(mechanism), assume_gaussian=True)


def one_run_label_audit(
    *, m: int = 1000, epsilon: float, delta: float = 1e-5, clip: float = 1.0, epochs: int = 10, lr: float = 0.05,
    adjacency: str = "label", confidence: float = 0.95, k=None, rng=None,
) -> OneRunBound:
    """One training run with m label canaries; ε̲ by Steinke, Nasr & Jagielski (2023).

    Canary i has feature e_{d+i} (its own coordinate) and label S_i·Y with S_i = ±1
    uniform; the score of canary i is its coordinate of the final model (SGD moves
    it by +lr·c/denominator per step when S_i = +1). The claim covers each canary's
    label flip (label DP), so each canary is one "example" of the theorem.
    """
    from privaudit.learners.dpsgd import train_linear_dpsgd_runs

    rng = np.random.default_rng(rng)
    X, y, signs = label_canaries(check_int("m", m), rng=rng)
    theta = train_linear_dpsgd_runs(X, y[None], epsilon=epsilon, delta=delta, clip=clip, epochs=epochs, lr=lr,
                                    optimizer="sgd", adjacency=adjacency, rng=rng)
    return one_run_bound(theta[0], signs, delta=delta, confidence=confidence, k=k)


__all__ = [
    "DPSGDLabelCanary", "LabelCanarySteps", "RecordRelease", "ScalarInputRelease", "TranscriptRelease", "audit_dpsgd_label",
    "audit_iwp_release", "audit_modulated", "canary_dataset", "one_run_label_audit", "transcript_pair",
]
