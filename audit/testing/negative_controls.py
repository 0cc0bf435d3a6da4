"""A bank of deliberately broken mechanisms (negative controls), each with its exact ε, and correct twins.

Every bug class privaudit's audits must catch is represented by one
:class:`Control`: a mechanism whose *claim* is false, the pair on which it fails
(or the domain on which :func:`~privaudit.audit.engines.pair_search.search_pairs` must find
that pair), and the mechanism's exact ε at the claim's δ on that pair, derived in
the class docstring. ``CORRECT`` lists correct mechanisms that must pass.

Bug classes
-----------
* an implementation bug the declared density does not describe (the input
  returned with small probability; an atom away from both inputs; a near-atom ball);
* floating-point leaks (textbook float Laplace and Gaussian, Mironov 2012; outputs
  on an input-dependent 2⁻²⁰ grid with a declared density);
* degenerate outputs under one input only (NaN, an empty release);
* mis-calibration (Laplace scale, Gaussian σ, a wrong randomized-response keep probability);
* pair-dependent bugs only a pair search finds (correct on (0, 1), broken on (0, −1);
  a d = 50 Gaussian under-noised on one coordinate).

For the leak classes the exact ε is ∞: an event of positive probability under one
input has probability 0 under the other (outputs off the other input's support),
so no finite ε satisfies P_x(E) ≤ e^ε P_x′(E) + δ once P_x(E) > δ.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike

from privaudit.mechanisms import GaussianMechanism, LaplaceMechanism, RandomizedResponse
from privaudit.mechanisms.discrete import DiscreteLaplaceMechanism
from privaudit.mechanisms.exponential import ExponentialMechanism
from privaudit.mechanisms.unsafe import UnsafeFloatGaussianMechanism, UnsafeFloatLaplaceMechanism


class _Wrapped:
    """Delegates claim, density and exact profile to a correct inner mechanism (what the bug hides behind)."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.claim = inner.claim

    def log_density(self, outputs, x):
        return self.inner.log_density(outputs, x)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.inner!r})"


class _RareBug(_Wrapped):
    """A wrapped mechanism whose bug fires with probability ``p`` per release (default inner: Gaussian (1, 1e-5))."""

    def __init__(self, inner=None, p: float = 1e-3) -> None:
        super().__init__(inner or self.default_inner())
        self.p = p

    @staticmethod
    def default_inner():
        return GaussianMechanism(epsilon=1.0, delta=1e-5)


class ReturnsInput(_RareBug):
    """A Gaussian (declaring its density) that returns the raw input with probability ``p``.

    Exact ε = ∞ at any δ < p: the atom {x} has probability ≥ p under x and 0 under x′.
    """

    def sample(self, x: ArrayLike, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """``n`` inner releases of x, each replaced by x itself with probability ``p``.

        Parameters
        ----------
        x : array-like
            The input.
        n : int
            Number of releases.
        rng : Generator, int or None
            Source of randomness (one Generator drives the inner release and the bug).

        Returns
        -------
        ndarray of shape (n, *x.shape)
        """
        rng = np.random.default_rng(rng)
        out = self.inner.sample(x, n, rng)
        out[rng.random(n) < self.p] = np.asarray(x, dtype=float)
        return out


class SentinelAtom(_RareBug):
    """Emits 0.5 with probability ``p`` for inputs other than 0 only: an atom at neither x nor x′.

    Exact ε = ∞ at δ < p (the float 0.5 is off the inner lattice release of x = 0... and has
    probability 0 under x = 0 in any case: the event {0.5 emitted by the bug} has mass p only under x′).
    """

    def sample(self, x: ArrayLike, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """``n`` inner releases of x; for x ≠ 0 each is replaced by 0.5 with probability ``p``.

        Parameters
        ----------
        x : array-like
            The input.
        n : int
            Number of releases.
        rng : Generator, int or None
            Source of randomness (one Generator drives the inner release and the bug).

        Returns
        -------
        ndarray of shape (n, *x.shape)
        """
        rng = np.random.default_rng(rng)
        out = self.inner.sample(x, n, rng)
        if np.any(np.asarray(x) != 0):
            out[rng.random(n) < self.p] = 0.5
        return out


class NearAtom(_RareBug):
    """With probability ``p`` releases x + U·2⁻³⁰ (a tiny ball around the input), declaring the inner density.

    Exact ε = ∞ at δ < p/2: the inner release lives on a fixed lattice of step ≫ 2⁻³⁰, so
    ball points off that lattice (all but a null set of U) are impossible under x′.
    """

    def sample(self, x: ArrayLike, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """``n`` inner releases of x, each replaced by x + U·2⁻³⁰ (U uniform per coordinate) with probability ``p``.

        Parameters
        ----------
        x : array-like
            The input.
        n : int
            Number of releases.
        rng : Generator, int or None
            Source of randomness (one Generator drives the inner release and the bug).

        Returns
        -------
        ndarray of shape (n, *x.shape)
        """
        rng = np.random.default_rng(rng)
        out = self.inner.sample(x, n, rng)
        hit = rng.random(n) < self.p
        out[hit] = np.asarray(x, dtype=float) + rng.random((int(hit.sum()), *out.shape[1:])) * 2.0**-30
        return out


class InputGrid:
    """x + round(N(0, σ²)·2²⁰)/2²⁰: outputs on the grid x + 2⁻²⁰ℤ, declaring the continuous Gaussian density.

    Exact ε = ∞ for x′ − x ∉ 2⁻²⁰ℤ: the two releases have disjoint supports.
    """

    def __init__(self, epsilon: float = 1.0, delta: float = 1e-5) -> None:
        self.gauss = UnsafeFloatGaussianMechanism(epsilon=epsilon, delta=delta)
        self.claim = self.gauss.claim

    def sample(self, x: ArrayLike, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """``n`` releases x + round(σN·2²⁰)/2²⁰, on the input-dependent grid x + 2⁻²⁰ℤ.

        Parameters
        ----------
        x : array-like
            The input.
        n : int
            Number of releases.
        rng : Generator, int or None
            Source of randomness (one Generator drives the inner release and the bug).

        Returns
        -------
        ndarray of shape (n, *x.shape)
        """
        noise = np.random.default_rng(rng).standard_normal((n, *np.shape(x))) * self.gauss.sigma
        return np.asarray(x, dtype=float) + np.round(noise * 2.0**20) / 2.0**20

    def log_density(self, outputs: ArrayLike, x: ArrayLike) -> np.ndarray:
        """The continuous Gaussian log-density, which the grid release does not have.

        Parameters
        ----------
        outputs : array-like of shape (n, ...)
            Releases.
        x : array-like
            The input.

        Returns
        -------
        ndarray of shape (n,)
            The continuous Gaussian log-density (the false declaration).
        """
        return self.gauss.log_density(outputs, x)


class NaNUnderOneInput(_RareBug):
    """Returns NaN with probability ``p`` when x ≠ 0. Exact ε = ∞ at δ < p."""

    @staticmethod
    def default_inner() -> LaplaceMechanism:
        """The inner mechanism by default: Laplace at ε = 1.
        """
        return LaplaceMechanism(epsilon=1.0)

    def sample(self, x: ArrayLike, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """``n`` inner releases of x; for x ≠ 0 each is NaN with probability ``p``.

        Parameters
        ----------
        x : array-like
            The input.
        n : int
            Number of releases.
        rng : Generator, int or None
            Source of randomness (one Generator drives the inner release and the bug).

        Returns
        -------
        ndarray of shape (n, *x.shape)
        """
        rng = np.random.default_rng(rng)
        out = self.inner.sample(x, n, rng)
        if np.any(np.asarray(x) != 0):
            out[rng.random(n) < self.p] = np.nan
        return out


class EmptyUnderOneInput(_Wrapped):
    """Releases nothing (shape (n, 0)) when x ≠ 0. Exact ε = ∞ (the shape reveals the input)."""

    def __init__(self, inner=None) -> None:
        super().__init__(inner or LaplaceMechanism(epsilon=1.0))

    def sample(self, x: ArrayLike, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """Nothing (shape (n, 0)) for x ≠ 0, else ``n`` inner releases.

        Parameters
        ----------
        x : array-like
            The input.
        n : int
            Number of releases.
        rng : Generator, int or None
            Source of randomness (one Generator drives the inner release and the bug).

        Returns
        -------
        ndarray
            Shape (n, 0) when x ≠ 0, else the inner releases.
        """
        if np.any(np.asarray(x) != 0):
            return np.empty((n, 0))
        return self.inner.sample(x, n, rng)


class AsymmetricLaplace(_Wrapped):
    """Correct Laplace for x ≥ 0, but releases ``gain``·x + Lap(b) for x < 0 (a sign-dependent bug).

    On (0, 1) exact ε = 1/b·1 (correct); on (0, −1) the means differ by ``gain``, so the
    exact ε (pure, δ = 0) is gain/b.
    """

    def __init__(self, epsilon: float = 1.0, gain: float = 2.5) -> None:
        super().__init__(LaplaceMechanism(epsilon=epsilon))
        self.gain = gain

    def sample(self, x: ArrayLike, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """``n`` Laplace releases of x for x ≥ 0, of ``gain``·x coordinate-wise where x < 0.

        Parameters
        ----------
        x : array-like
            The input.
        n : int
            Number of releases.
        rng : Generator, int or None
            Source of randomness (one Generator drives the inner release and the bug).

        Returns
        -------
        ndarray of shape (n, *x.shape)
        """
        x = np.asarray(x, dtype=float)
        return self.inner.sample(np.where(x < 0, self.gain * x, x), n, rng)


class OneWeakCoordinate(_Wrapped):
    """A d-dimensional Gaussian whose coordinate ``k`` gets only ``factor``·σ of noise.

    On the pair (0, e_k) the release is a Gaussian shift of 1/(factor·σ): exact ε is
    that of σ′ = factor·σ. On e₀ or a random direction u it is a shift of
    √(Σ_j u_j²/σ_j²), nearly the claim's for d = 50.
    """

    def __init__(self, dim: int = 50, k: int = 37, factor: float = 0.3, epsilon: float = 1.0,
                 delta: float = 1e-5) -> None:
        super().__init__(GaussianMechanism(epsilon=epsilon, delta=delta))
        self.dim, self.k, self.factor = dim, k, factor
        self.scales = np.full(dim, self.inner.sigma)
        self.scales[k] *= factor

    def sample(self, x: ArrayLike, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """``n`` releases x + N(0, diag(scales)²) on the inner mechanism's lattice (coordinate ``k`` is weak).

        Parameters
        ----------
        x : array-like
            The input.
        n : int
            Number of releases.
        rng : Generator, int or None
            Source of randomness (one Generator drives the inner release and the bug).

        Returns
        -------
        ndarray of shape (n, dim)
        """
        # Released on the inner mechanism's fixed lattice (float-safe), so the only bug is the weak axis.
        from privaudit.mechanisms.lattice import lattice_release

        rng = np.random.default_rng(rng)
        z = rng.standard_normal((n, self.dim))
        return lattice_release(np.asarray(x, dtype=float), z, self.scales, self.inner.lattice_step, rng)

    def log_density(self, outputs: ArrayLike, x: ArrayLike) -> np.ndarray:
        """Gaussian log-density with the per-coordinate scales (the lattice ignored).

        Parameters
        ----------
        outputs : array-like of shape (n, ...)
            Releases.
        x : array-like
            The input.

        Returns
        -------
        ndarray of shape (n,)
            The continuous Gaussian log-density with the per-coordinate scales.
        """
        z = (np.asarray(outputs, dtype=float) - np.asarray(x, dtype=float)) / self.scales
        return -0.5 * np.sum(z * z, axis=1) - np.sum(np.log(self.scales)) - 0.5 * self.dim * math.log(2 * math.pi)

    def exact_epsilon_on_weak_axis(self, delta: float) -> float:
        """Exact ε(δ) on the pair (0, e_k): a Gaussian of σ′ = factor·σ.

        Parameters
        ----------
        delta : float
            δ in (0, 1).

        Returns
        -------
        float
        """
        return GaussianMechanism(sigma=self.factor * self.inner.sigma).exact_epsilon(delta)


@dataclasses.dataclass(frozen=True)
class Control:
    """One negative control: how to build it, where it breaks, and its exact ε there."""

    name: str
    bug_class: str
    make: Callable[[], Any]
    x: Any = None
    x_prime: Any = None
    domain: Any = None
    exact_epsilon: float | None = math.inf


def _gauss_sigma(factor: float) -> tuple[Callable[[], Any], float]:
    good = GaussianMechanism(epsilon=1.0, delta=1e-5)
    bad_sigma = factor * good.sigma

    def make():
        m = GaussianMechanism(sigma=bad_sigma)
        m.claim = good.claim  # the false claim: (1, 1e-5) with μ of the calibrated σ
        return m
    return make, GaussianMechanism(sigma=bad_sigma).exact_epsilon(1e-5)


_G_MAKE, _G_EPS = _gauss_sigma(0.5)
X0, X1 = np.zeros(1), np.ones(1)

#: Broken mechanisms, each caught by ``assert_private`` at its defaults.
BANK: tuple[Control, ...] = (
    Control("returns-input", "bug outside the declared density", ReturnsInput, X0, X1),
    Control("sentinel-atom", "bug outside the declared density", SentinelAtom, X0, X1),
    Control("near-atom", "bug outside the declared density", NearAtom, X0, X1),
    Control("float-laplace", "floating point (Mironov 2012)", lambda: UnsafeFloatLaplaceMechanism(epsilon=1.0),
            X0, X1),
    Control("float-gaussian", "floating point", lambda: UnsafeFloatGaussianMechanism(epsilon=1.0, delta=1e-5),
            X0, X1),
    Control("input-grid", "floating point (input-dependent 2^-20 grid)", InputGrid, X0, np.full(1, 0.3)),
    Control("nan-under-one-input", "degenerate output", NaNUnderOneInput, X0, X1),
    Control("empty-under-one-input", "degenerate output", EmptyUnderOneInput, X0, X1),
    Control("laplace-scale-0.5", "mis-calibration", lambda: LaplaceMechanism(epsilon=1.0, scale=0.5), X0, X1, None,
            2.0),
    Control("gaussian-sigma-0.5", "mis-calibration", _G_MAKE, X0, X1, None, _G_EPS),
    Control("rr-keep-0.8", "mis-calibration", lambda: RandomizedResponse(epsilon=1.0, keep_probability=0.8),
            -1.0, 1.0, None, math.log(4.0)),
    Control("asymmetric-laplace", "pair-dependent (needs pair search)", AsymmetricLaplace,
            domain=(np.full(1, -1.0), np.full(1, 1.0)), exact_epsilon=2.5),
)

#: Correct mechanisms and a worst-case pair: ``assert_private`` must pass them.
CORRECT: tuple[Control, ...] = (
    Control("laplace", "correct", lambda: LaplaceMechanism(epsilon=1.0), X0, X1, None, 1.0),
    Control("k-rr", "correct", lambda: RandomizedResponse(epsilon=1.0, categories=(0, 1, 2)), 0, 2, None, 1.0),
    Control("discrete-laplace", "correct", lambda: DiscreteLaplaceMechanism(epsilon=1.0), 0, 1, None, 1.0),
    Control("gaussian", "correct", lambda: GaussianMechanism(epsilon=1.0, delta=1e-5), X0, X1, None, 1.0),
    Control("exponential", "correct", lambda: ExponentialMechanism(epsilon=1.0), np.zeros(3),
            np.array([1.0, 0.0, 0.0]), None, None),
)

__all__ = ["AsymmetricLaplace", "BANK", "CORRECT", "Control", "EmptyUnderOneInput", "InputGrid", "NaNUnderOneInput",
           "NearAtom", "OneWeakCoordinate", "ReturnsInput", "SentinelAtom"]
