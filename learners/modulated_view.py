"""The release view of seed 000's modulated learners: one client's transcript over the T rounds.

:class:`TranscriptRelease` stands for one client's releases over the T rounds of
:class:`~privaudit.learners.ModulatedRegressor` (one
:class:`~privaudit.mechanisms.ModulatedMechanism` per round, each with its own basis and
σ_t). With the phase known (fixed at the steepest value of each round for the audited
pair) every round is a Gaussian shift of D_t = ‖g_t(x′) − g_t(x)‖, and the transcript is
exactly μ_T-GDP with μ_T² = Σ_t D_t²/σ_t² ≤ Σ_t L²/σ_t². With the phase unknown, the
exact likelihood ratio marginalises each round's phase and no closed-form curve is known.

The view declares its worst-case pair (:meth:`TranscriptRelease.tradeoff_setup`) and
its reconstruction (:meth:`TranscriptRelease.reconstruction_setup`) as data
(:mod:`privaudit.learners.release_view`); the audits read them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privaudit.attacks.pairs import steepest_phase
from privaudit.learners.release_view import ReconstructionSetup, TradeoffSetup, check_phase
from privaudit.mechanisms.accounting import gdp_epsilon
from privaudit.mechanisms.claim import PrivacyClaim
from privaudit.mechanisms.modulated import ModulatedMechanism
from privaudit.mechanisms.randomness import RandomLike
from privaudit.mechanisms.validation import InvalidInputError, InvalidParameterError, check_array, check_int, check_size

#: Recorded in a learner-tradeoff report.
TRADEOFF_NOTE = ("the learner is fitted on synthetic data; the audit tests one client's releases over all "
                 "rounds (its transcript) on the worst-case pair, with the learner's own per-round σ and bases")
#: Recorded in a learner-reconstruction report.
RECONSTRUCTION_NOTE = "x is reconstructed from one client's releases over all rounds of the fitted learner"


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

    def __init__(self, mechanisms: Iterable[ModulatedMechanism], *, claim: PrivacyClaim | None = None,
                 phases: ArrayLike | None = None) -> None:
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

    @classmethod
    def of(cls, source: Any, *, rounds: int | None = None) -> TranscriptRelease:
        """The transcript of a fitted modulated learner, a transcript, a list of rounds or one round.

        Parameters
        ----------
        source : fitted ModulatedRegressor / OneShotModulatedRegressor, TranscriptRelease,
                 list of ModulatedMechanism, or one ModulatedMechanism
            A learner or a transcript lends its rounds and its claim; one mechanism is a
            single round under its own claim; a list of rounds gets the exact GDP
            composition as its claim.
        rounds : int, optional
            Keep the first ``rounds`` rounds only; a strict prefix is tested against its
            own exact composition, not the whole transcript's claim.

        Returns
        -------
        TranscriptRelease
            With the phases unknown (fresh).
        """
        claim = None
        if isinstance(source, ModulatedMechanism):
            mechs, claim = [source], source.claim
        elif hasattr(source, "round_mechanisms_"):
            mechs, claim = list(source.round_mechanisms_), source.claim
        elif isinstance(source, TranscriptRelease):
            mechs, claim = list(source.mechanisms), source.claim
        else:
            mechs = list(source)
        if rounds is not None:
            rounds = check_int("rounds", rounds)
            if rounds < len(mechs):
                claim = None  # a prefix of the transcript: test its own exact composition
            mechs = mechs[:rounds]
        return cls(mechs, claim=claim)

    @property
    def rounds(self) -> int:
        """T, the number of rounds."""
        return len(self.mechanisms)

    def __repr__(self) -> str:
        known = "known" if self.phases is not None else "unknown"
        return f"TranscriptRelease(T={self.rounds}, phase {known}, claim={self.claim})"

    def sample(self, x: ArrayLike, n: int, rng: RandomLike = None) -> np.ndarray:
        """n transcripts of input x; the rounds are drawn in order from ``rng``.

        Parameters
        ----------
        x : array (d,)
            The client's input.
        n : int
            Number of releases.
        rng : int, Generator, SeedSequence or None
            Source of the noise.

        Returns
        -------
        numpy.ndarray
            Shape ``(n, T, d)``.
        """
        rng = np.random.default_rng(rng)
        n = check_size("n", n)
        out = np.empty((n, self.rounds, self.mechanisms[0].dim))
        for t, m in enumerate(self.mechanisms):  # loop over rounds; each round is vectorised over n
            out[:, t] = m.sample(x, n, rng, phase=None if self.phases is None else self.phases[t])
        return out

    def log_density(self, outputs: ArrayLike, x: ArrayLike) -> np.ndarray:
        """Sum over rounds of each round's log-density (the rounds are independent given x).

        Parameters
        ----------
        outputs : array
            Releases, one per row (``(n, T, d)`` or flattened ``(n, T·d)``).
        x : array (d,)
            The client's input.

        Returns
        -------
        numpy.ndarray
            Shape ``(n,)``.
        """
        # Callers may pass the releases flattened to rows: restore (n, T, d).
        o = np.asarray(outputs, dtype=float).reshape(-1, self.rounds, self.mechanisms[0].dim)
        return sum(m.log_density(o[:, t], x, phase=None if self.phases is None else self.phases[t])
                   for t, m in enumerate(self.mechanisms))

    def displacement_mu(self, x: ArrayLike, x_prime: ArrayLike) -> float:
        """μ_T = sqrt(Σ_t ‖g_t(x′) − g_t(x)‖²/σ_t²) with the known phases (exact GDP of this pair).

        Parameters
        ----------
        x, x_prime : array (d,)
            The pair.

        Returns
        -------
        float
        """
        if self.phases is None:
            raise InvalidParameterError("displacement_mu needs known phases")
        return math.sqrt(sum(
            float(np.sum((m.map(x_prime, self.phases[t]) - m.map(x, self.phases[t])) ** 2)) / m.sigma**2
            for t, m in enumerate(self.mechanisms)
        ))

    def tradeoff_setup(self, *, phase: str = "known", direction: ArrayLike | None = None) -> TradeoffSetup:
        """The transcript on its worst-case pair (:func:`transcript_pair`), under this transcript's claim.

        Parameters
        ----------
        phase : {"known", "hidden"}
            Phases revealed at their steepest (the pair is exactly G_μ: GDP estimator, exact
            curve) or fresh and hidden (Clopper–Pearson; the exact curve has no closed form
            and lies above the phase-known one, so none is reported).
        direction : array (d,), optional
            Direction of x′ − x; default the first basis vector of round 0.

        Returns
        -------
        TradeoffSetup
        """
        known = check_phase(phase) == "known"
        release, x, xp = transcript_pair(self.mechanisms, direction, claim=self.claim, phase_known=known)
        return TradeoffSetup(
            release, x, xp, target=f"modulated transcript T={self.rounds}, phase {'known' if known else 'unknown'}",
            estimator="gdp" if known else "clopper-pearson", assume_gaussian=known,
            exact_mu=release.displacement_mu(x, xp) if known else None, note=TRADEOFF_NOTE,
        )

    def reconstruction_setup(self, *, prior: Any = None, phase: str = "known") -> ReconstructionSetup:
        """x from the rounds' releases (their Fisher information adds), under the caller's prior and phase.

        Parameters
        ----------
        prior : object, optional
            Prior of x; None: a fixed x.
        phase : str or array
            As :func:`privaudit.audit.engines.reconstruction.audit_reconstruction` takes it.

        Returns
        -------
        ReconstructionSetup
        """
        return ReconstructionSetup(list(self.mechanisms), prior=prior, phase=phase, note=RECONSTRUCTION_NOTE)


def transcript_pair(mechanisms: Iterable[ModulatedMechanism], direction: ArrayLike | None = None, *,
                    claim: PrivacyClaim | None = None,
                    phase_known: bool = True) -> tuple[TranscriptRelease, np.ndarray, np.ndarray]:
    """Worst-case pair for a transcript: x = 0, x′ = u (unit; default v₁ of round 0).

    With ``phase_known`` each round's phases are set to their steepest values for
    this pair (:func:`~privaudit.attacks.pairs.steepest_phase`).

    Parameters
    ----------
    mechanisms : list of ModulatedMechanism
        The rounds.
    direction : array (d,), optional
        Direction of x′ (normalised); default the first basis vector of round 0.
    claim : PrivacyClaim, optional
        Claim of the transcript (default: :class:`TranscriptRelease`'s).
    phase_known : bool
        Fix each round's phases at their steepest for this pair.

    Returns
    -------
    release : TranscriptRelease
    x, x_prime : ndarray (d,)
    """
    mechs = list(mechanisms)
    d = mechs[0].dim
    u = mechs[0].basis[:, 0] if direction is None else check_array("direction", direction, ndim=1, dim=d)
    u = u / np.linalg.norm(u)
    x, xp = np.zeros(d), u.copy()
    phases = np.vstack([steepest_phase(m, x, xp) for m in mechs]) if phase_known else None
    return TranscriptRelease(mechs, claim=claim, phases=phases), x, xp


__all__ = ["TranscriptRelease", "transcript_pair"]
