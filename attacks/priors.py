"""Priors over a client's private input, for Bayesian attackers and Bayesian bounds.

A prior π over x ∈ R^d is what an attacker believes before seeing a release.
Bayesian attackers (posterior mean, MAP) use it; the van Trees bound needs its
Fisher information J_π = E_π[∇ log π ∇ log πᵀ]; the ReRo bound needs the
largest prior mass κ = max_z π(z) of a discrete prior.

Protocol used by the bounds (``privaudit.audit.stats.estimation_bounds``):

* ``sample(n, rng) -> (n, d)`` draws from π;
* ``grad_log_density(X) -> (n, d)`` is ∇_x log π(x) (continuous priors);
* ``fisher_information()`` returns J_π in closed form where known.

Attackers ask a prior what it is rather than testing its class
(:mod:`privaudit.attacks.protocol`): ``gaussian_moments()`` returns the mean, covariance and
precision of a Gaussian prior and None otherwise (the conjugate attackers), and a finite prior
states ``support``, ``kappa`` and ``probs`` (``WeightedFinitePrior``: the discrete MAP).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from privaudit.mechanisms.validation import InvalidInputError, InvalidParameterError, check_array, check_size

from .protocol import GaussianMoments


class GaussianPrior:
    """x ~ N(mean, cov).

    Parameters
    ----------
    mean : array (d,)
        Prior mean μ₀.
    cov : float, array (d,) or array (d, d)
        Prior covariance Σ₀: a scalar τ² (isotropic), a diagonal, or a full SPD matrix.

    Notes
    -----
    Its Fisher information is J_π = Σ₀⁻¹, so the van Trees bound has the closed
    form tr((E_π I + Σ₀⁻¹)⁻¹), tight for linear-Gaussian releases.
    """

    def __init__(self, mean: ArrayLike, cov: ArrayLike) -> None:
        self.mean = check_array("mean", mean, ndim=1)
        d = self.mean.size
        c = check_array("cov", cov, ndim=(0, 1, 2))
        if c.ndim == 0:
            c = np.full(d, float(c))
        if c.ndim == 1:
            if c.size != d:
                raise InvalidInputError(f"cov must have {d} diagonal entries, got shape {c.shape}")
            c = np.diag(c)
        if c.shape != (d, d) or not np.allclose(c, c.T):
            raise InvalidInputError(f"cov must be a symmetric ({d}, {d}) matrix, got shape {c.shape}")
        w = np.linalg.eigvalsh(c)
        if w[0] <= 0:
            raise InvalidParameterError(f"cov must be positive definite, got smallest eigenvalue {w[0]:.3g}")
        self.cov = c
        self.precision = np.linalg.inv(c)
        self._chol = np.linalg.cholesky(c)

    @property
    def dim(self) -> int:
        return self.mean.size

    def __repr__(self) -> str:
        iso = np.allclose(self.cov, self.cov[0, 0] * np.eye(self.dim))
        cov = f"{self.cov[0, 0]:g}·I" if iso else "Σ₀"
        return f"GaussianPrior(d={self.dim}, cov={cov})"

    def sample(self, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """``n`` draws μ₀ + L z with z ~ N(0, I) and L the Cholesky factor of Σ₀.

        Parameters
        ----------
        n : int
            Number of draws.
        rng : Generator, int or None
            Source of randomness (passed to :func:`numpy.random.default_rng`).

        Returns
        -------
        ndarray of shape (n, d)
        """
        z = np.random.default_rng(rng).standard_normal((check_size("n", n), self.dim))
        return self.mean + z @ self._chol.T

    def grad_log_density(self, X: ArrayLike) -> np.ndarray:
        """∇ log π(x) = −Σ₀⁻¹(x − μ₀), the score of the prior used by the van Trees bound.

        Parameters
        ----------
        X : array-like of shape (n, d) or (d,)
            Points at which to evaluate the gradient.

        Returns
        -------
        ndarray of shape (n, d)
        """
        X = np.atleast_2d(check_array("X", X, dim=self.dim))
        return -(X - self.mean) @ self.precision

    def fisher_information(self) -> np.ndarray:
        """J_π = Σ₀⁻¹."""
        return self.precision

    def gaussian_moments(self) -> GaussianMoments:
        """(μ₀, Σ₀, Σ₀⁻¹): the prior is Gaussian.

        Returns
        -------
        GaussianMoments
        """
        return GaussianMoments(self.mean, self.cov, self.precision)


class DiscretePrior:
    """x uniform or weighted over a finite support {z_1, …, z_K} ⊂ R^d.

    Used for reconstruction-robustness (ReRo) audits: an attacker "succeeds" when
    it outputs the true support point; with no release its best success is
    κ = max_k π(z_k).

    Parameters
    ----------
    support : array-like of shape (K,) or (K, d)
        The K ≥ 2 support points (a 1-D support is K points in R¹).
    probs : array-like of shape (K,), optional
        Their probabilities, non-negative and summing to 1 (default uniform, κ = 1/K).
    """

    def __init__(self, support: ArrayLike, probs: ArrayLike | None = None) -> None:
        s = check_array("support", support, ndim=(1, 2))
        self.support = s[:, None] if s.ndim == 1 else s
        k = self.support.shape[0]
        if k < 2:
            raise InvalidParameterError(f"support needs at least 2 points, got {k}")
        p = np.full(k, 1.0 / k) if probs is None else check_array("probs", probs, ndim=1)
        if p.size != k or np.any(p < 0) or not np.isclose(p.sum(), 1.0):
            raise InvalidParameterError(f"probs must be {k} non-negative numbers summing to 1, got {probs!r}")
        self.probs = p

    @property
    def dim(self) -> int:
        return self.support.shape[1]

    @property
    def kappa(self) -> float:
        """Baseline success κ = max_k π(z_k) of guessing without a release."""
        return float(self.probs.max())

    def __repr__(self) -> str:
        return f"DiscretePrior(K={self.support.shape[0]}, d={self.dim}, kappa={self.kappa:.3g})"

    def gaussian_moments(self) -> None:
        """None: a discrete prior is not Gaussian.

        Returns
        -------
        None
        """
        return None

    def sample_index(self, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """Indices into ``support`` of ``n`` independent draws from ``probs``.

        Parameters
        ----------
        n : int
            Number of draws.
        rng : Generator, int or None
            Source of randomness (passed to :func:`numpy.random.default_rng`).

        Returns
        -------
        ndarray of int, shape (n,)
        """
        return np.random.default_rng(rng).choice(self.probs.size, size=check_size("n", n), p=self.probs)

    def sample(self, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """``n`` support points drawn from ``probs`` (the rows picked by :meth:`sample_index`).

        Parameters
        ----------
        n : int
            Number of draws.
        rng : Generator, int or None
            Source of randomness (passed to :func:`numpy.random.default_rng`).

        Returns
        -------
        ndarray of shape (n, d)
        """
        return self.support[self.sample_index(n, rng)]
