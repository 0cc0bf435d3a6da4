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
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from .gaussian import GaussianMechanism
from .laplace import LaplaceMechanism
from .validation import check_array, check_int, check_size


class UnsafeFloatLaplaceMechanism(LaplaceMechanism):
    """``x + rng.laplace(0, b)``: the textbook float Laplace. Its ε-DP claim is FALSE (Mironov 2012).

    Same parameters as :class:`~privaudit.mechanisms.LaplaceMechanism`; the
    ``log_density`` is the continuous Laplace density the sampler does not have.
    """

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


class UnsafeFloatGaussianMechanism(GaussianMechanism):
    """``x + σ·rng.standard_normal()``: the textbook float Gaussian. Its claim is not covered by any analysis.

    Same parameters as :class:`~privaudit.mechanisms.GaussianMechanism`; the
    ``log_density`` and Fisher information are the continuous ones.
    """

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
