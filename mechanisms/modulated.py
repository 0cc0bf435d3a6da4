"""Seed 000's modulated client map plus Gaussian noise.

For an orthonormal basis V = [v_1, …, v_m] (d × m) and phases φ_j ~ U[0, 2π),

    g_V(x; φ) = (1 − α) x + (λ/m) Σ_j cos(ω⟨x, v_j⟩ + φ_j) v_j,      g̃ = g_V(x; φ) + ξ,

with ξ ~ N(0, σ² I_d) (seed 000, §3.1 for m = 1 and §7 for m ≥ 1).

Derivations (the seed's multi-vector section is internally inconsistent):

* **Lipschitz constant.** In the coordinates of v_j the map acts as
  a ↦ (1 − α) a + (λ/m) cos(ωa + φ_j), whose slope is at most |1 − α| + λω/m;
  orthogonal to V it is (1 − α)·identity. Hence L = |1 − α| + λω/m, which is the
  ℓ₂ sensitivity for the adjacency ‖x − x′‖₂ ≤ 1 (for m = 1, L = |1 − α| + λω).
* **Second moment.** With independent uniform phases E[cos θ_j] = 0,
  E[cos θ_j cos θ_k] = ½·1{j = k}, so

      E[g̃ g̃ᵀ | x] = (1 − α)² x xᵀ + (λ²/(2m²)) P_V + σ² I,   P_V = V Vᵀ.

  The seed prints λ²/(2m) P_V, which is right only for m = 1
  (:meth:`ModulatedMechanism.seed_correction` keeps it, for the bias audit).
* **Fisher information** (seed 000, §6). J_g(x; φ) = (1 − α) I − (λω/m) Σ_j sin θ_j v_j v_jᵀ
  and I(x | φ) = JᵀJ/σ². Averaged over the phase:
  E_φ I = [(1 − α)² I + (λ²ω²/(2m²)) P_V]/σ².

Float-safe release (issue 14). ``fl(g + σ·N)`` in floating point leaks through its
low-order bits (Mironov 2012): the doubles it can output depend on x. The release is
instead g_V(x; φ) + σN on the dithered lattice γ(ℤ + u)^d of
:mod:`privaudit.mechanisms.lattice` (γ = 2^(⌊log₂ σ⌋ − 10), :attr:`ModulatedMechanism.lattice_step`,
u ~ U[0, 1)^d independent of x and φ): given φ, the Gaussian mechanism of mean g_V(x; φ)
followed by rounding onto a lattice fixed before x is seen, i.e. post-processing. Every
claim (μ = L/σ with the phase known, ρ, ε, δ) therefore holds unchanged. Its law is
g_V(x; φ) + σN + γW, W ~ U[−½, ½)^d: :meth:`ModulatedMechanism.log_density` is that law's
density; the Fisher-information methods keep the information of the continuous release,
an upper bound (the dither is independent added noise) within a relative γ²/(12σ²) ≤ 8e−8.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from dp_accounting import DpEvent, GaussianDpEvent, NoOpDpEvent, get_epsilon_gaussian
from numpy.typing import ArrayLike

from .accounting import check_claim
from .arcsine_gaussian import ArcsineGaussian
from .gaussian import float_safe_gaussian_logpdf, resolve_gaussian
from .lattice import GAUSSIAN_ETA, GAUSSIAN_TAIL, gaussian_dither_fisher, grid_step, lattice_release
from .protocol import LEGACY_RENOISING, NeighbouringPair, ReleaseLaw
from .tradeoff import gaussian_delta, gaussian_tradeoff
from .validation import (
    InvalidInputError,
    InvalidParameterError,
    NonContractiveWarning,
    check_array,
    check_delta,
    check_int,
    check_size,
    check_interval,
    check_positive,
)
from .parameter_constraints import CALIBRATION, COUNT, DELTA, NONNEGATIVE, POSITIVE, UNIT, Integral, Interval
from .registry import modulated_parameters, register_mechanism

def random_orthonormal_basis(dim: int, m: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
    """A Haar-random d × m matrix with orthonormal columns (QR with sign fix).

    Parameters
    ----------
    dim : int
        Dimension d.
    m : int
        Number of columns m ≤ d.
    rng : Generator, int or None
        Source of randomness.

    Returns
    -------
    ndarray of shape (dim, m)
    """
    g = np.random.default_rng(rng).standard_normal((dim, m))
    q, r = np.linalg.qr(g)
    return q * np.sign(np.diag(r))


def check_basis(basis: ArrayLike, dim: int, m: int) -> np.ndarray:
    """Validate a d × m basis with orthonormal columns.

    Parameters
    ----------
    basis : array-like of shape (d, m)
        Orthonormal columns v_j.
    dim : int
        Dimension d.
    m : int
        Number of columns m ≤ d.

    Returns
    -------
    ndarray of shape (dim, m)

    Raises
    ------
    InvalidInputError
        When the shape is not (dim, m) or the columns are not orthonormal.
    """
    v = check_array("basis", basis, ndim=2)
    if v.shape != (dim, m):
        raise InvalidInputError(f"basis must have shape (dim, n_vectors) = {(dim, m)}, got {v.shape}")
    if not np.allclose(v.T @ v, np.eye(m), atol=1e-8):
        raise InvalidInputError("basis columns must be orthonormal (VᵀV = I)")
    return v


@register_mechanism("modulated", check=modulated_parameters)
class ModulatedMechanism:
    """Seed 000's client release g_V(x; φ) + N(0, σ² I), for ‖x − x′‖₂ ≤ 1.

    Parameters
    ----------
    alpha : float
        Contraction α in (0, 1).
    lam : float
        Modulation amplitude λ ≥ 0.
    omega : float
        Modulation frequency ω ≥ 0.
    n_vectors : int
        Number m of orthonormal modulation vectors, 1 ≤ m ≤ dim.
    dim : int
        Feature dimension d.
    epsilon, delta : float, optional
        Target (ε, δ); σ is calibrated to sensitivity L when ``sigma`` is unset.
    sigma : float, optional
        Noise std (see :class:`~privaudit.mechanisms.GaussianMechanism` for how
        the claim is formed when it is given).
    basis : array (dim, n_vectors), optional
        Orthonormal modulation vectors; default the first m standard basis vectors.
    calibration : {"analytic", "classical"}
        How σ is derived from (ε, δ).
    """

    #: Constructor parameters in scikit-learn's vocabulary (validated when a configuration is loaded).
    _parameter_constraints = {
        "alpha": [UNIT], "lam": [NONNEGATIVE], "omega": [NONNEGATIVE], "n_vectors": [COUNT],
        "dim": [Interval(Integral, 1, 10_000, closed="both")], "epsilon": [POSITIVE, None], "delta": [DELTA, None],
        "sigma": [POSITIVE, None], "basis": ["array-like", None], "calibration": [CALIBRATION]}

    def __init__(
        self, *, alpha: float, lam: float, omega: float, n_vectors: int = 1, dim: int,
        epsilon: float | None = None, delta: float | None = None, sigma: float | None = None,
        basis=None, calibration: str = "analytic",
    ) -> None:
        self.alpha = check_interval("alpha", alpha, 0.0, 1.0)
        self.lam = check_positive("lam", lam, allow_zero=True)
        self.omega = check_positive("omega", omega, allow_zero=True)
        self.dim = check_int("dim", dim)
        self.n_vectors = check_int("n_vectors", n_vectors)
        if self.n_vectors > self.dim:
            raise InvalidParameterError(f"n_vectors must be <= dim={self.dim}, got n_vectors={n_vectors!r}")
        self.calibration = calibration
        self.basis = np.eye(self.dim)[:, : self.n_vectors] if basis is None else check_basis(basis, self.dim, self.n_vectors)
        if self.lipschitz >= 1:
            warnings.warn(
                f"modulated map is not contractive: L = |1-alpha| + lam*omega/m = {self.lipschitz:.4g} >= 1",
                NonContractiveWarning, stacklevel=2,
            )
        self.sigma, self.claim = resolve_gaussian(
            epsilon=epsilon, delta=delta, sigma=sigma, sensitivity=self.lipschitz, calibration=calibration,
            adjacency="l2<=1", owner="ModulatedMechanism",
        )
        self.lattice_step = grid_step(self.sigma)
        if calibration == "classical" and sigma is None:
            # The textbook σ is loose for ε < 1 and false for large ε: say so (CalibrationWarning).
            self.calibration_check = check_claim(self)

    def __repr__(self) -> str:
        return (
            f"ModulatedMechanism(alpha={self.alpha:g}, lam={self.lam:g}, omega={self.omega:g}, "
            f"n_vectors={self.n_vectors}, dim={self.dim}, sigma={self.sigma:.6g}, claim={self.claim})"
        )

    def with_basis(self, basis: ArrayLike) -> "ModulatedMechanism":
        """The same mechanism (same σ and claim) with other modulation vectors.

        Parameters
        ----------
        basis : array-like of shape (d, m)
            Orthonormal columns v_j.

        Returns
        -------
        ModulatedMechanism
            A shallow copy with the new basis.

        Raises
        ------
        InvalidInputError
            As :func:`check_basis`.
        """
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.basis = check_basis(basis, self.dim, self.n_vectors)
        return new

    # --- privacy ---------------------------------------------------------------------------
    @property
    def lipschitz(self) -> float:
        """L = |1 − α| + λω/m: the ℓ₂ sensitivity for ‖x − x′‖₂ ≤ 1."""
        return abs(1 - self.alpha) + self.lam * self.omega / self.n_vectors

    @property
    def mu(self) -> float:
        """GDP μ = L/σ of one release with the phase known (the worst case)."""
        return self.lipschitz / self.sigma

    def exact_delta(self, epsilon: float) -> float:
        """Exact δ(ε) of the Gaussian with sensitivity L (phase known to the attacker).

        Parameters
        ----------
        epsilon : float
            ε ≥ 0.

        Returns
        -------
        float
            δ(ε) in [0, 1].
        """
        return float(gaussian_delta(self.mu, check_positive("epsilon", epsilon, allow_zero=True)))

    def exact_epsilon(self, delta: float) -> float:
        """Exact ε(δ) of the Gaussian with sensitivity L (phase known to the attacker).

        Parameters
        ----------
        delta : float
            δ in (0, 1).

        Returns
        -------
        float
            ε(δ) ≥ 0.
        """
        return float(get_epsilon_gaussian(1 / self.mu, check_delta(delta)))

    def tradeoff(self, alpha: ArrayLike) -> np.ndarray:
        """G_μ with μ = L/σ: the exact curve of the worst-case pair with the phase known.

        Parameters
        ----------
        alpha : array-like
            Type-I error rates α in [0, 1].

        Returns
        -------
        ndarray
            β = f(α), shaped like ``alpha``.
        """
        return gaussian_tradeoff(self.mu, alpha)

    def dp_event(self, distance: float | None = None) -> DpEvent:
        """dp_accounting event of one release for inputs at ℓ₂ distance r (default 1).

        The phase-known worst case: a Gaussian shift of at most L·r against noise σ,
        ``GaussianDpEvent(σ/(L·r))``.

        Parameters
        ----------
        distance : float, optional
            ℓ₂ distance r ≥ 0 of the two inputs (default 1).

        Returns
        -------
        dp_accounting.DpEvent
            ``NoOpDpEvent`` when r = 0 or L = 0.
        """
        r = 1.0 if distance is None else check_positive("distance", distance, allow_zero=True)
        return NoOpDpEvent() if r == 0 or self.lipschitz == 0 else GaussianDpEvent(self.sigma / (self.lipschitz * r))

    # --- the map ---------------------------------------------------------------------------
    def _check_x(self, X) -> np.ndarray:
        return check_array("x", X, ndim=(1, 2), dim=self.dim)

    def _phases(self, phase, n: int, rng: np.random.Generator) -> np.ndarray:
        if phase is None:
            return rng.random((n, self.n_vectors)) * (2 * np.pi)
        p = check_array("phase", phase, ndim=(1, 2), dim=self.n_vectors)
        return np.broadcast_to(p, (n, self.n_vectors))

    def angles(self, X: ArrayLike, phase: ArrayLike) -> np.ndarray:
        """θ_j = ω⟨x, v_j⟩ + φ_j, shape (n, m).

        Parameters
        ----------
        X : array-like of shape (n, d) or (d,)
            Inputs, one per row.
        phase : array-like of shape (m,) or (n, m)
            Phases φ_j (required).

        Returns
        -------
        ndarray of shape (n, m)
        """
        return self.omega * (np.atleast_2d(X) @ self.basis) + phase

    def map(self, X: ArrayLike, phase: ArrayLike) -> np.ndarray:
        """Noise-free g_V(x; φ), broadcasting rows of X against rows of ``phase``; shape (n, d).

        Parameters
        ----------
        X : array-like of shape (n, d) or (d,)
            Inputs, one per row.
        phase : array-like of shape (m,) or (n, m)
            Phases φ_j (required).

        Returns
        -------
        ndarray of shape (n, d)

        Raises
        ------
        InvalidParameterError
            When ``phase`` is None.
        """
        X = np.atleast_2d(self._check_x(X))
        if phase is None:
            raise InvalidParameterError("map needs the phases: phase=None is only valid for release/sample")
        phase = np.atleast_2d(check_array("phase", phase, ndim=(1, 2), dim=self.n_vectors))
        return (1 - self.alpha) * X + (self.lam / self.n_vectors) * np.cos(self.angles(X, phase)) @ self.basis.T

    def release(self, X: ArrayLike, rng: np.random.Generator | int | None = None, *, phase: ArrayLike | None = None) -> np.ndarray:
        """One noisy release per row of X (one client each), shape (K, d), on the dithered lattice.

        Draw order from ``rng``: the standard normals (K, d), the phases (K, m) unless given,
        then the lattice offsets (K, d); the first two are those of the textbook release, so
        at a given seed the output is within γ of ``g_V(x; φ) + σN`` computed in floats.

        Parameters
        ----------
        X : array-like of shape (n, d) or (d,)
            Inputs, one per row.
        rng : Generator, int or None
            Source of the noise, the phases and the lattice offsets.
        phase : array-like of shape (m,) or (n, m), optional
            Phases φ_j (fresh uniform ones when None).

        Returns
        -------
        ndarray of shape (n, d)
        """
        X = np.atleast_2d(self._check_x(X))
        rng = np.random.default_rng(rng)
        noise = rng.standard_normal(X.shape)
        phi = self._phases(phase, X.shape[0], rng)
        mean = (1 - self.alpha) * X
        mean += (self.lam / self.n_vectors) * np.cos(self.angles(X, phi)) @ self.basis.T
        return lattice_release(mean, noise, self.sigma, self.lattice_step, rng)

    def sample(self, x: ArrayLike, n: int, rng: np.random.Generator | int | None = None, *,
               phase: ArrayLike | None = None) -> np.ndarray:
        """``n`` releases of one input x, fresh uniform phases unless ``phase`` is given (draw order as :meth:`release`).

        Parameters
        ----------
        x : array-like of shape (d,)
            The input.
        n : int
            Number of independent releases.
        rng : Generator, int or None
            Source of the noise, the phases and the lattice offsets.
        phase : array-like of shape (m,) or (n, m), optional
            Phases φ_j (fresh uniform ones when None).

        Returns
        -------
        ndarray of shape (n, d)
        """
        x = check_array("x", x, ndim=1, dim=self.dim)
        n = check_size("n", n)
        rng = np.random.default_rng(rng)
        noise = rng.standard_normal((n, self.dim))
        theta = self._phases(phase, n, rng) + self.omega * (x @ self.basis)
        mean = np.cos(theta) @ (self.basis.T * (self.lam / self.n_vectors))
        mean += (1 - self.alpha) * x
        return lattice_release(mean, noise, self.sigma, self.lattice_step, rng)

    def float_error(self, d: int | None = None) -> tuple[float, float]:
        """(ε slack, δ slack) of the float lattice release over the ideal one, for d coordinates (default: dim).

        Given the phase, a release is :class:`~privaudit.mechanisms.GaussianMechanism`'s lattice
        release of mean g_V(x; φ): the same bound (η = 2⁻³⁰, τ = 1e−14 per coordinate).

        Parameters
        ----------
        d : int, optional
            Number of released coordinates (default: dim).

        Returns
        -------
        (float, float)
            (ε slack, δ slack) of the float implementation.
        """
        d = self.dim if d is None else check_int("d", d)
        eps = self.claim.epsilon if math.isfinite(self.claim.epsilon) else 0.0
        return 2 * d * GAUSSIAN_ETA, math.expm1(d * GAUSSIAN_ETA) * self.claim.delta + (1 + math.exp(eps)) * d * GAUSSIAN_TAIL

    # --- moments ---------------------------------------------------------------------------
    def second_moment_correction(self) -> np.ndarray:
        """E[g̃g̃ᵀ|x] − (1 − α)² x xᵀ = (λ²/(2m²)) P_V + σ² I (derived above).

        For the continuous release; the dithered lattice release adds (γ²/12)·I (a relative
        ≤ 8e−8 of σ²), kept out so the client and sufficient-statistics simulations share one C.
        """
        return (self.lam**2 / (2 * self.n_vectors**2)) * (self.basis @ self.basis.T) + self.sigma**2 * np.eye(self.dim)

    def seed_correction(self) -> np.ndarray:
        """The seed's printed correction (λ²/(2m)) P_V + σ² I, biased for m > 1."""
        return (self.lam**2 / (2 * self.n_vectors)) * (self.basis @ self.basis.T) + self.sigma**2 * np.eye(self.dim)

    # --- densities and information ---------------------------------------------------------
    @property
    def hidden_phase_law(self) -> ArcsineGaussian:
        """Law of ⟨g̃ − (1 − α)x, v_j⟩ when the phase is hidden: (λ/m) cos φ + N(0, σ²)."""
        return ArcsineGaussian(self.lam / self.n_vectors, self.sigma)

    def log_density(self, outputs: ArrayLike, x: ArrayLike, phase: ArrayLike | None = None) -> np.ndarray:
        """Log-density of the (dithered lattice) releases given x; shape (n,).

        With ``phase`` given, the release is g_V(x; φ) + σN + γW: the exact dithered
        Gaussian density around g_V(x; φ) (:func:`~privaudit.mechanisms.gaussian.float_safe_gaussian_logpdf`).
        With ``phase=None`` the phase is marginalised: along each v_j the continuous release
        is (1 − α)⟨x, v_j⟩ + (λ/m) cos θ + N(0, σ²) with θ uniform
        (:class:`~privaudit.mechanisms.arcsine_gaussian.ArcsineGaussian`), orthogonal to V it
        is Gaussian, and the dither W (uniform on a cube of side γ, which is not aligned with
        V) averages that density p over the cube:

            log p_γ = log p + log1p((γ²/24)·Δp/p) + O((γ/σ)⁴),

        with Δp/p = Σ_j p_A″/p_A(⟨r, v_j⟩) + ‖r_⊥‖²/σ⁴ − (d − m)/σ² (the Laplacian is
        invariant under rotation). With h = γ/(2σ) ≤ 2⁻¹¹ the neglected term is about
        h⁴v⁴/120 per coordinate at v standard deviations: < 1e−12 within 6σ, < 2e−9 within 40σ.

        Parameters
        ----------
        outputs : array-like of shape (n, d)
            Releases.
        x : array-like of shape (d,)
            The input.
        phase : array-like of shape (m,) or (n, m), optional
            Known phases (default: marginalised).

        Returns
        -------
        ndarray of shape (n,)
        """
        x = check_array("x", x, ndim=1, dim=self.dim)
        out = np.atleast_2d(np.asarray(outputs, dtype=float))
        if phase is not None:
            return float_safe_gaussian_logpdf(out - self.map(x, phase), self.sigma)
        s2 = self.sigma**2
        const = -0.5 * math.log(2 * math.pi * s2)
        r = out - (1 - self.alpha) * x
        along = r @ self.basis  # (n, m)
        perp = r - along @ self.basis.T
        log_along, curv_along = self.hidden_phase_law.logpdf_and_curvature(along)
        perp2 = np.einsum("ij,ij->i", perp, perp) / s2
        laplacian = curv_along.sum(axis=1) + (perp2 - (self.dim - self.n_vectors)) / s2
        return (log_along.sum(axis=1) - 0.5 * perp2 + (self.dim - self.n_vectors) * const
                + np.log1p(self.lattice_step**2 / 24 * laplacian))

    def jacobian(self, x: ArrayLike, phase: ArrayLike) -> np.ndarray:
        """J_g(x; φ) = (1 − α) I − (λω/m) Σ_j sin θ_j v_j v_jᵀ, shape (d, d).

        Parameters
        ----------
        x : array-like of shape (d,)
            The input.
        phase : array-like of shape (m,)
            Phases φ_j.

        Returns
        -------
        ndarray of shape (d, d)
        """
        x = check_array("x", x, ndim=1, dim=self.dim)
        theta = self.angles(x, check_array("phase", phase, ndim=1, dim=self.n_vectors))[0]
        scale = (self.lam * self.omega / self.n_vectors) * np.sin(theta)
        return (1 - self.alpha) * np.eye(self.dim) - (self.basis * scale) @ self.basis.T

    def fisher_information(self, x: ArrayLike, phase: ArrayLike | None = None) -> np.ndarray:
        """Fisher information about x, shape (d, d).

        With ``phase`` given: I(x | φ) = JᵀJ/σ² (seed 000, §6). With
        ``phase=None``: its average over the uniform phase,
        [(1 − α)² I + (λ²ω²/(2m²)) P_V]/σ², the information of an attacker who
        learns the phase of every release.

        Both are the information of the continuous release, an upper bound on that of the
        dithered lattice release (which adds independent noise γW); with the phase given the
        latter is exactly :attr:`dither_fisher_factor` times JᵀJ/σ² (factor ≥ 1 − 8e−8), so
        Cramér–Rao bounds built from these values stay valid lower bounds.

        Parameters
        ----------
        x : array-like of shape (d,)
            The input.
        phase : array-like of shape (m,), optional
            Known phases (default: the phase average).

        Returns
        -------
        ndarray of shape (d, d)
        """
        if phase is not None:
            j = self.jacobian(x, phase)
            return j.T @ j / self.sigma**2
        check_array("x", x, ndim=1, dim=self.dim)
        c = (self.lam * self.omega / self.n_vectors) ** 2 / 2
        return ((1 - self.alpha) ** 2 * np.eye(self.dim) + c * self.basis @ self.basis.T) / self.sigma**2

    @property
    def dither_fisher_factor(self) -> float:
        """c = I_dithered/I_continuous of the Gaussian noise per coordinate: 1 − O((γ/σ)²) ≤ 1."""
        return gaussian_dither_fisher(self.sigma / self.lattice_step)

    def marginal_fisher_information(self, x: ArrayLike | None = None) -> np.ndarray:
        """Fisher information about x of the release alone (phase hidden), shape (d, d).

        The uniform phase makes cos(ω⟨x, v_j⟩ + φ_j) distributed as cos φ_j whatever x,
        so along v_j the release is the location family (1 − α)a_j + U_j with U_j of
        law :attr:`hidden_phase_law`; orthogonal to V it is Gaussian. Hence, for every
        x and ω,

            I_marg = (1 − α)² [(I − P_V)/σ² + I_loc(λ/m, σ) P_V]  ⪯  E_φ I(x | φ).

        As :meth:`fisher_information`, the continuous release's value: an upper bound on
        the dithered release's, within a relative γ²/(12σ²).

        Parameters
        ----------
        x : array-like of shape (d,), optional
            The input (validated only: the information does not depend on it).

        Returns
        -------
        ndarray of shape (d, d)
        """
        if x is not None:
            check_array("x", x, ndim=1, dim=self.dim)
        pv = self.basis @ self.basis.T
        iloc = self.hidden_phase_law.fisher_information()
        return (1 - self.alpha) ** 2 * ((np.eye(self.dim) - pv) / self.sigma**2 + iloc * pv)

    # --- the closed-form release (mechanisms/protocol.py: ClosedFormRelease) ---------------------
    def release_law(self) -> ReleaseLaw:
        """The law r = (1 − α)x + (λ/m) Σ_j cos(ω⟨x, v_j⟩ + φ_j) v_j + N(0, σ² I): c = 1 − α, A = λ/m, L = :attr:`lipschitz`.

        Returns
        -------
        ReleaseLaw
        """
        return ReleaseLaw(sigma=self.sigma, scale=1 - self.alpha, amplitude=self.lam / self.n_vectors,
                          omega=self.omega, basis=self.basis, lipschitz=self.lipschitz, dim=self.dim)

    def release_batch(self, X: ArrayLike, rng: np.random.Generator | int | None = None, *,
                      phase: ArrayLike | None = None) -> np.ndarray:
        """One release per row of ``X``: :meth:`release`.

        Parameters
        ----------
        X : array-like of shape (n, d)
            One input per row.
        rng : Generator, int or None
            Source of the noise, the phases and the lattice offsets.
        phase : array-like of shape (n, m), optional
            Phases φ_j (fresh uniform ones when None).

        Returns
        -------
        ndarray of shape (n, d)
        """
        return self.release(X, rng, phase=phase)

    def with_sigma(self, sigma: float) -> "ModulatedMechanism":
        """The same map (α, λ, ω, m, d and basis) with noise std ``sigma``, its claim the μ = L/σ it gives.

        Parameters
        ----------
        sigma : float
            The new noise std σ > 0.

        Returns
        -------
        ModulatedMechanism
        """
        return renoised_modulated(self, sigma)

    # --- audits ----------------------------------------------------------------------------
    def worst_case_pair(self, *, dim: int = 1) -> NeighbouringPair:
        """x = 0, x′ = v₁ with the phases known at their steepest (:func:`modulated_pair`); ``dim`` is ignored.

        Along v₁ the map is a ↦ (1 − α)a + (λ/m) cos(ωa + φ), so
        g(x′) − g(x) = [(1 − α) − (2λ/m) sin(θ + ω/2) sin(ω/2)] v₁ with θ = ωa + φ; its
        norm is maximal, D = (1 − α) + (2λ/m)|sin(ω/2)| ≤ L, at
        sin(θ + ω/2) = −sign(sin(ω/2)). The released pair is then two Gaussians at
        distance D, so the exact curve is G_{D/σ}.

        Parameters
        ----------
        dim : int
            Ignored: the mechanism fixes its dimension.

        Returns
        -------
        NeighbouringPair
            Audited on :class:`PhaseKnownRelease`, with ``exact_mu`` = D/σ and
            ``extra = {"phase", "displacement"}``.
        """
        return modulated_pair(self, phase_known=True)


class PhaseKnownRelease:
    """A modulated release whose phases are known to the attacker (fixed to ``phase``).

    Satisfies the mechanism protocol: ``sample`` draws fresh noise with the fixed
    phase, ``log_density`` is the Gaussian density around g_V(x; φ), and the claim
    is the mechanism's own.

    Parameters
    ----------
    mechanism : ModulatedMechanism
        The modulated mechanism whose phases are fixed.
    phase : array-like of shape (m,) or scalar
        The phases φ_j (radians) every release uses.
    """

    def __init__(self, mechanism: ModulatedMechanism, phase: ArrayLike) -> None:
        self.mechanism = mechanism
        self.phase = np.atleast_1d(np.asarray(phase, dtype=float))
        self.claim = mechanism.claim

    def __repr__(self) -> str:
        return f"PhaseKnown({self.mechanism!r}, phase={np.round(self.phase, 4).tolist()})"

    def sample(self, x: ArrayLike, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """``n`` releases g_V(x; φ) + N(0, σ² I) with the fixed phases.

        Parameters
        ----------
        x : array-like of shape (d,)
            The input.
        n : int
            Number of releases.
        rng : Generator, int or None
            Source of the Gaussian noise.

        Returns
        -------
        ndarray of shape (n, d)
        """
        return self.mechanism.sample(x, n, rng, phase=self.phase)

    def log_density(self, outputs: ArrayLike, x: ArrayLike) -> np.ndarray:
        """Gaussian log density of each release around g_V(x; φ) with the fixed phases.

        Parameters
        ----------
        outputs : array-like of shape (n, d)
            Releases.
        x : array-like of shape (d,)
            The input.

        Returns
        -------
        ndarray of shape (n,)
        """
        return self.mechanism.log_density(outputs, x, phase=self.phase)

    def exact_epsilon(self, delta: float) -> float:
        """The wrapped mechanism's ε(δ): that of a Gaussian of sensitivity L, the phase-known worst case.

        Parameters
        ----------
        delta : float
            δ in [0, 1).

        Returns
        -------
        float
        """
        return self.mechanism.exact_epsilon(delta)

    def tradeoff(self, alpha: ArrayLike) -> np.ndarray:
        """The wrapped mechanism's trade-off curve G_μ, μ = L/σ (the phase-known worst case).

        Parameters
        ----------
        alpha : array-like
            Type-I error rates in [0, 1].

        Returns
        -------
        ndarray
            Type-II error lower bounds, shaped like ``alpha``.
        """
        return self.mechanism.tradeoff(alpha)

    def dp_event(self, distance: float | None = None) -> DpEvent:
        """The wrapped mechanism's event, ``GaussianDpEvent(σ/(L·r))``: with the phases known, the
        noise-free map moves by at most L·r, so the release is at most a Gaussian shift of L·r.

        Parameters
        ----------
        distance : float, optional
            ℓ₂ distance r ≥ 0 of the two inputs (default 1).

        Returns
        -------
        dp_accounting.DpEvent
        """
        return self.mechanism.dp_event(distance)


def renoised_modulated(mechanism: object, sigma: float) -> ModulatedMechanism:
    """A :class:`ModulatedMechanism` of ``mechanism``'s map (α, λ, ω, m, d, basis) with noise std ``sigma``.

    Its claim is the μ = L/σ the new σ gives; a non-contractive map is not warned about again.
    Also the re-noised copy of a release that only matches
    :class:`~privaudit.mechanisms.protocol.ModulatedRelease` (``LEGACY_RENOISING``).

    Parameters
    ----------
    mechanism : object
        A release with ``alpha``, ``lam``, ``omega``, ``n_vectors``, ``dim`` and ``basis``.
    sigma : float
        The new noise std σ > 0.

    Returns
    -------
    ModulatedMechanism
    """
    m = mechanism
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonContractiveWarning)
        return ModulatedMechanism(alpha=m.alpha, lam=m.lam, omega=m.omega, n_vectors=m.n_vectors, dim=m.dim,
                                  sigma=sigma, basis=m.basis)


LEGACY_RENOISING["modulated"] = renoised_modulated


def steepest_phase(mechanism: ModulatedMechanism, x: ArrayLike, x_prime: ArrayLike | None = None) -> np.ndarray:
    """Phases φ_j maximising ‖g(x′; φ) − g(x; φ)‖ (default x′ = x + v₁).

    With c_j = ⟨x′ − x, v_j⟩ and A_j = ω⟨x, v_j⟩ + φ_j, the cosine term changes by
    −2 sin(A_j + ωc_j/2) sin(ωc_j/2) along v_j; it adds to the contraction part
    (1 − α)c_j with the largest magnitude, 2|sin(ωc_j/2)|, at
    A_j + ωc_j/2 = −(π/2)·sign(c_j)·sign(sin(ωc_j/2)). Each v_j is set independently.

    Parameters
    ----------
    mechanism : ModulatedMechanism
        Supplies the basis V (d, m) and the frequency ω.
    x : array-like of shape (d,)
        The first input.
    x_prime : array-like of shape (d,), optional
        The neighbour (default x + v₁).

    Returns
    -------
    ndarray of shape (m,)
        Phases in [0, 2π).
    """
    V = mechanism.basis
    x = np.asarray(x, float)
    xp = x + V[:, 0] if x_prime is None else np.asarray(x_prime, float)
    w = mechanism.omega
    c = (xp - x) @ V
    a0 = w * (x @ V)
    sign = np.sign(c) * np.sign(np.sin(w * c / 2))
    target = -(np.pi / 2) * np.where(sign == 0, 1.0, sign)
    return (target - w * c / 2 - a0) % (2 * np.pi)


def modulated_pair(mechanism: ModulatedMechanism, *, phase_known: bool = True, offset: float = 0.0) -> NeighbouringPair:
    """Pair at distance 1 along v₁ (x = offset·v₁), phase known at its steepest or unknown.

    Parameters
    ----------
    mechanism : ModulatedMechanism
        The mechanism to audit.
    phase_known : bool
        Fix the phases at :func:`steepest_phase` (the released pair is then two Gaussians at
        distance D = ‖g(x′; φ) − g(x; φ)‖ and ``exact_mu`` = D/σ); else audit the mechanism with
        its phases marginalised.
    offset : float
        Position a of x = a·v₁ along the first basis vector.

    Returns
    -------
    NeighbouringPair
        With ``extra = {"phase", "displacement"}`` when the phase is known.
    """
    v = mechanism.basis[:, 0]
    x = offset * v
    x_prime = x + v
    if not phase_known:
        return NeighbouringPair(x, x_prime, mechanism, "modulated, distance 1 along v1, phase unknown (marginalised)")
    phase = steepest_phase(mechanism, x, x_prime)
    released = PhaseKnownRelease(mechanism, phase)
    disp = np.linalg.norm(mechanism.map(x_prime, phase) - mechanism.map(x, phase))
    return NeighbouringPair(x, x_prime, released, "modulated, distance 1 along v1, steepest phase known",
                            exact_mu=float(disp / mechanism.sigma), extra={"phase": phase, "displacement": float(disp)})
