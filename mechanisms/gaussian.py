"""The Gaussian mechanism with exact (analytic) privacy accounting.

Release M(x) = x + N(0, σ² I). For inputs with ‖x − x′‖₂ ≤ Δ the mechanism is
μ-GDP with μ = Δ/σ, and its exact privacy profile is (Balle & Wang 2018)

    δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2).

Two calibrations are offered:

* ``"analytic"`` (default): the smallest σ with δ(ε) ≤ δ, via dp_accounting;
* ``"classical"``: σ = Δ·sqrt(2 ln(1.25/δ))/ε (Dwork & Roth 2014, Thm A.1), proven
  only for ε < 1. At ε = 1, δ = 1e−5 (σ = 4.845 vs. the analytic 3.731) its exact
  ε is 0.751: the claim is loose. At ε = 10 (σ = 0.4845 vs. 0.4999) its exact
  δ(10) = 2.27e−5 exceeds δ = 1e−5, and its exact ε at δ = 1e−5 is 10.39: the
  claim is false. Seed 000 uses it, with the square root lost in the extracted text.
"""

from __future__ import annotations

import math

import numpy as np
from dp_accounting import GaussianDpEvent, NoOpDpEvent, get_epsilon_gaussian, get_sigma_gaussian

from .claim import PrivacyClaim
from .tradeoff import gaussian_delta, gaussian_tradeoff
from .validation import (
    InvalidParameterError,
    check_array,
    check_delta,
    check_epsilon,
    check_int,
    check_positive,
)

CALIBRATIONS = ("analytic", "classical")


def classical_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """σ = Δ·sqrt(2 ln(1.25/δ))/ε, the textbook calibration (valid for ε < 1)."""
    return sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon


def analytic_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The exact smallest σ for (ε, δ)-DP (Balle & Wang 2018), via dp_accounting."""
    return sensitivity * get_sigma_gaussian(epsilon, delta)


def calibrate_gaussian(epsilon: float, delta: float, sensitivity: float = 1.0, calibration: str = "analytic") -> float:
    """Noise std σ for one Gaussian release with ℓ₂ sensitivity Δ at (ε, δ)."""
    check_epsilon(epsilon)
    check_delta(delta)
    check_positive("sensitivity", sensitivity)
    if calibration == "analytic":
        return analytic_sigma(epsilon, delta, sensitivity)
    if calibration == "classical":
        return classical_sigma(epsilon, delta, sensitivity)
    raise InvalidParameterError(f"calibration must be one of {CALIBRATIONS}, got calibration={calibration!r}")


def gaussian_claim(
    *, sigma: float, sensitivity: float, epsilon: float | None, delta: float | None,
    adjacency: str, exact: bool,
) -> PrivacyClaim:
    """The claim of a Gaussian release of std σ and sensitivity Δ.

    With ``exact`` the claim carries μ = Δ/σ and ρ = Δ²/(2σ²), and any missing
    member of (ε, δ) is completed from the exact profile (δ defaults to 1e−5).
    Otherwise (a user-stated or classical claim) only (ε, δ) are claimed.
    """
    mu = sensitivity / sigma
    if not exact:
        return PrivacyClaim(epsilon, delta, adjacency)
    if epsilon is None:
        delta = 1e-5 if delta is None else delta
        epsilon = get_epsilon_gaussian(1 / mu, delta)
    elif delta is None:
        delta = float(gaussian_delta(mu, epsilon))
    return PrivacyClaim(epsilon, delta, adjacency, mu=mu, rho=mu**2 / 2)


def resolve_gaussian(
    *, epsilon: float | None, delta: float | None, sigma: float | None, sensitivity: float,
    calibration: str, adjacency: str, owner: str,
) -> tuple[float, PrivacyClaim]:
    """σ and claim of a Gaussian release from the constructor arguments of ``owner``.

    Without ``sigma``, σ is calibrated to (ε, δ), both required. With ``sigma``
    alone the claim is its exact profile; with ``sigma`` and both ε and δ the
    (ε, δ) claim is kept as stated (how mis-calibrated mechanisms are built).
    """
    if calibration not in CALIBRATIONS:
        raise InvalidParameterError(f"calibration must be one of {CALIBRATIONS}, got calibration={calibration!r}")
    epsilon = None if epsilon is None else check_epsilon(epsilon)
    delta = None if delta is None else check_delta(delta)
    if sigma is None:
        if epsilon is None or delta is None:
            raise InvalidParameterError(
                f"{owner} needs sigma, or both epsilon and delta; got epsilon={epsilon!r}, delta={delta!r}"
            )
        sigma = calibrate_gaussian(epsilon, delta, sensitivity, calibration)
        exact = calibration == "analytic"
    else:
        sigma = check_positive("sigma", sigma)
        exact = epsilon is None or delta is None
    claim = gaussian_claim(sigma=sigma, sensitivity=sensitivity, epsilon=epsilon, delta=delta,
                           adjacency=adjacency, exact=exact)
    return sigma, claim


class GaussianMechanism:
    """Release x + N(0, σ² I) for inputs with ℓ₂ sensitivity Δ.

    Parameters
    ----------
    epsilon, delta : float, optional
        Target (ε, δ). With ``sigma`` unset, σ is calibrated to them.
    sensitivity : float
        ℓ₂ sensitivity Δ: the claim covers inputs with ‖x − x′‖₂ ≤ Δ.
    sigma : float, optional
        Noise std. Given alone, the mechanism claims μ = Δ/σ GDP and (ε, δ) from
        its exact profile (δ = 1e−5 by default). Given *with* both ε and δ, the
        (ε, δ) claim is taken as stated, whether or not σ supports it; this is
        how a mis-calibrated mechanism is built for audits.
    calibration : {"analytic", "classical"}
        How σ is derived from (ε, δ) when ``sigma`` is unset.
    """

    def __init__(
        self, *, epsilon: float | None = None, delta: float | None = None, sensitivity: float = 1.0,
        sigma: float | None = None, calibration: str = "analytic",
    ) -> None:
        self.sensitivity = check_positive("sensitivity", sensitivity)
        self.calibration = calibration
        self.sigma, self.claim = resolve_gaussian(
            epsilon=epsilon, delta=delta, sigma=sigma, sensitivity=self.sensitivity, calibration=calibration,
            adjacency=f"l2<={self.sensitivity:g}", owner="GaussianMechanism",
        )

    @property
    def mu(self) -> float:
        """GDP parameter μ = Δ/σ of the σ in use (not of the claim)."""
        return self.sensitivity / self.sigma

    def __repr__(self) -> str:
        return f"GaussianMechanism(sigma={self.sigma:.6g}, sensitivity={self.sensitivity:g}, claim={self.claim})"

    def exact_delta(self, epsilon: float) -> float:
        """Exact δ(ε) of the σ in use."""
        return float(gaussian_delta(self.mu, check_positive("epsilon", epsilon, allow_zero=True)))

    def exact_epsilon(self, delta: float) -> float:
        """Exact ε(δ) of the σ in use (dp_accounting's analytic Gaussian)."""
        return float(get_epsilon_gaussian(self.sigma / self.sensitivity, check_delta(delta)))

    def tradeoff(self, alpha) -> np.ndarray:
        """Exact trade-off curve G_μ(α) between inputs at distance Δ."""
        return gaussian_tradeoff(self.mu, alpha)

    def sample(self, x, n: int, rng=None) -> np.ndarray:
        """``n`` releases of ``x``: shape ``(n, *x.shape)``."""
        x = check_array("x", x)
        n = check_int("n", n)
        out = np.random.default_rng(rng).standard_normal((n, *x.shape))
        out *= self.sigma
        out += x
        return out

    def log_density(self, outputs, x) -> np.ndarray:
        """Gaussian log-density of each release given ``x``; shape ``(n,)``."""
        x = check_array("x", x)
        z = (np.asarray(outputs, dtype=float) - x) / self.sigma
        z = z.reshape(z.shape[0], -1)
        k = z.shape[1]
        return -0.5 * np.einsum("ij,ij->i", z, z) - k * (math.log(self.sigma) + 0.5 * math.log(2 * math.pi))

    def fisher_information(self, x) -> np.ndarray:
        """Fisher information about x: I/σ² (constant in x)."""
        x = check_array("x", x)
        return np.eye(x.size) / self.sigma**2

    def dp_event(self, distance: float | None = None):
        """dp_accounting event of one release between inputs at ℓ₂ distance Δ (default: the sensitivity).

        ``GaussianDpEvent(σ/Δ)``: a unit shift against noise multiplier σ/Δ. Use it through
        :func:`privaudit.mechanisms.accounting.privacy_loss_distribution`.
        """
        d = self.sensitivity if distance is None else check_positive("distance", distance, allow_zero=True)
        return NoOpDpEvent() if d == 0 else GaussianDpEvent(self.sigma / d)
