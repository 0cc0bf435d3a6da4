"""The Laplace mechanism: x + Lap(0, b)^d with b = Δ₁/ε, pure ε-DP.

Its exact profile between inputs at ℓ₁ distance Δ₁ along one coordinate (the
worst case) is δ(ε′) = max(0, 1 − e^{(ε′ − ε)/2}), and its trade-off curve is
:func:`~privaudit.mechanisms.tradeoff.laplace_tradeoff`.
"""

from __future__ import annotations

import math

import numpy as np
from dp_accounting import LaplaceDpEvent, NoOpDpEvent

from .claim import PrivacyClaim
from .tradeoff import laplace_tradeoff
from .validation import check_array, check_delta, check_epsilon, check_int, check_positive


class LaplaceMechanism:
    """Release x + Lap(0, b) per coordinate, calibrated to ε for ℓ₁ sensitivity Δ₁.

    Parameters
    ----------
    epsilon : float
        Claimed pure-DP ε (> 0).
    sensitivity : float
        ℓ₁ sensitivity Δ₁.
    scale : float, optional
        Laplace scale b. Defaults to Δ₁/ε; set it explicitly to build a
        mechanism whose claim is wrong, for audits.
    """

    def __init__(self, *, epsilon: float, sensitivity: float = 1.0, scale: float | None = None) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.sensitivity = check_positive("sensitivity", sensitivity)
        self.scale = self.sensitivity / self.epsilon if scale is None else check_positive("scale", scale)
        self.claim = PrivacyClaim(self.epsilon, 0.0, f"l1<={self.sensitivity:g}")

    def __repr__(self) -> str:
        return f"LaplaceMechanism(scale={self.scale:.6g}, sensitivity={self.sensitivity:g}, claim={self.claim})"

    @property
    def true_epsilon(self) -> float:
        """ε actually achieved by the scale in use: Δ₁/b."""
        return self.sensitivity / self.scale

    def exact_delta(self, epsilon: float) -> float:
        """Exact δ(ε) of the scale in use."""
        eps = check_positive("epsilon", epsilon, allow_zero=True)
        return max(0.0, -math.expm1((eps - self.true_epsilon) / 2))

    def exact_epsilon(self, delta: float) -> float:
        """Exact ε(δ) of the scale in use: ε_true + 2 ln(1 − δ) (0 when that is negative)."""
        d = check_delta(delta, allow_zero=True)
        return max(0.0, self.true_epsilon + 2 * math.log1p(-d))

    def tradeoff(self, alpha) -> np.ndarray:
        """Exact trade-off curve of the worst-case pair."""
        return laplace_tradeoff(self.true_epsilon, alpha)

    def sample(self, x, n: int, rng=None) -> np.ndarray:
        """``n`` releases of ``x``: shape ``(n, *x.shape)``."""
        x = check_array("x", x)
        n = check_int("n", n)
        return x + np.random.default_rng(rng).laplace(0.0, self.scale, (n, *x.shape))

    def log_density(self, outputs, x) -> np.ndarray:
        """Laplace log-density of each release given ``x``; shape ``(n,)``."""
        x = check_array("x", x)
        z = np.abs(np.asarray(outputs, dtype=float) - x).reshape(len(outputs), -1)
        return -z.sum(axis=1) / self.scale - z.shape[1] * math.log(2 * self.scale)

    def dp_event(self, distance: float | None = None):
        """dp_accounting event of one release between inputs at ℓ₁ distance Δ (default: the sensitivity).

        ``LaplaceDpEvent(b/Δ)`` (the textbook continuous Laplace; its floating-point
        realisation is not covered). Use it through
        :func:`privaudit.mechanisms.accounting.privacy_loss_distribution`.
        """
        d = self.sensitivity if distance is None else check_positive("distance", distance, allow_zero=True)
        return NoOpDpEvent() if d == 0 else LaplaceDpEvent(self.scale / d)
