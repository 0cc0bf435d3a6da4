"""The Gaussian mechanism with exact (analytic) privacy accounting, released on a dithered lattice.

Release M(x) = γ·(round((x + N(0, σ² I))/γ − u) + u) with u ~ U[0, 1)^d drawn independently
of x and γ = 2^(⌊log₂ σ⌋ − 10): the continuous Gaussian mechanism followed by rounding to
a lattice γ(ℤ + u)^d fixed before x is seen (see
:mod:`privaudit.mechanisms.lattice`; the textbook ``x + σ·N`` in floating point leaks
through its low-order bits and survives only as
:class:`~privaudit.mechanisms.unsafe.UnsafeFloatGaussianMechanism`). Rounding is
post-processing, so every claim below holds for the lattice release exactly as for the
continuous one, with no sensitivity inflation; the exact profile and trade-off curve of
the continuous mechanism are then a valid upper bound on δ (lower bound on the curve)
of what is sampled, tight to a relative O((γ/σ)²) with γ/σ ≤ 2⁻¹⁰ (checked by numerical
integration in tests/test_mechanisms_float_safe.py). For inputs with ‖x − x′‖₂ ≤ Δ the mechanism is
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
from numpy.typing import ArrayLike
from dp_accounting import DpEvent, GaussianDpEvent, NoOpDpEvent, get_epsilon_gaussian, get_sigma_gaussian

from .claim import PrivacyClaim
from .lattice import (
    GAUSSIAN_ETA,
    GAUSSIAN_TAIL,
    gaussian_dither_logprob,
    gaussian_dither_fisher,
    check_lattice_range,
    grid_step,
    lattice_release,
    round_onto_lattice,
)
from .lattice_kernel import compiled_release
from .protocol import LEGACY_RENOISING, NeighbouringPair, ReleaseLaw
from .tradeoff import gaussian_delta, gaussian_tradeoff
from .validation import (
    InvalidParameterError,
    check_array,
    check_delta,
    check_epsilon,
    check_int,
    check_size,
    check_positive,
)
from .parameter_constraints import CALIBRATION, DELTA, POSITIVE
from .registry import register_mechanism, sigma_or_epsilon_delta

CALIBRATIONS = ("analytic", "classical")
#: Elements per chunk of :func:`float_safe_gaussian` (three float64 work rows of 128 KiB).
_CHUNK = 1 << 14


def classical_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """σ = Δ·sqrt(2 ln(1.25/δ))/ε, the textbook calibration (valid for ε < 1).

    Parameters
    ----------
    epsilon : float
        Target ε > 0.
    delta : float
        Target δ in (0, 1).
    sensitivity : float
        ℓ₂ sensitivity Δ > 0.

    Returns
    -------
    float
        σ.
    """
    return sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon


def analytic_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The exact smallest σ for (ε, δ)-DP (Balle & Wang 2018), via dp_accounting.

    Parameters
    ----------
    epsilon : float
        Target ε > 0.
    delta : float
        Target δ in (0, 1).
    sensitivity : float
        ℓ₂ sensitivity Δ > 0.

    Returns
    -------
    float
        σ.
    """
    return sensitivity * get_sigma_gaussian(epsilon, delta)


def calibrate_gaussian(epsilon: float, delta: float, sensitivity: float = 1.0, calibration: str = "analytic") -> float:
    """Noise std σ for one Gaussian release with ℓ₂ sensitivity Δ at (ε, δ).

    Parameters
    ----------
    epsilon : float
        Target ε > 0.
    delta : float
        Target δ in (0, 1).
    sensitivity : float
        ℓ₂ sensitivity Δ > 0.
    calibration : {"analytic", "classical"}
        Exact (Balle & Wang) or textbook calibration.

    Returns
    -------
    float
        σ.

    Raises
    ------
    InvalidParameterError
        For an out-of-range ε, δ or Δ, or an unknown calibration.
    """
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

    Parameters
    ----------
    sigma : float
        Noise std σ > 0.
    sensitivity : float
        ℓ₂ sensitivity Δ.
    epsilon : float or None
        Stated ε (completed from the profile when None and ``exact``).
    delta : float or None
        Stated δ (completed likewise).
    adjacency : str
        The claim's neighbouring relation.
    exact : bool
        Whether σ is exactly calibrated (then μ and ρ are claimed too).

    Returns
    -------
    PrivacyClaim
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


def _accounted(what: str, fn, **params) -> float:
    """Run a dp_accounting/scipy computation; turn its failures on extreme parameters into clear errors."""
    shown = ", ".join(f"{k}={v!r}" for k, v in params.items())
    try:
        with np.errstate(all="ignore"):
            value = float(fn())
    except InvalidParameterError:
        raise
    except (ValueError, RuntimeError, OverflowError, ZeroDivisionError, FloatingPointError) as exc:
        raise InvalidParameterError(f"cannot {what} for {shown}: parameters out of the computable range ({exc})") from exc
    if not (math.isfinite(value) and value > 0):
        raise InvalidParameterError(f"cannot {what} for {shown}: got {value!r}; parameters out of the computable range")
    return value


def resolve_gaussian(
    *, epsilon: float | None, delta: float | None, sigma: float | None, sensitivity: float,
    calibration: str, adjacency: str, owner: str,
) -> tuple[float, PrivacyClaim]:
    """σ and claim of a Gaussian release from the constructor arguments of ``owner``.

    Without ``sigma``, σ is calibrated to (ε, δ), both required. With ``sigma``
    alone the claim is its exact profile; with ``sigma`` and both ε and δ the
    (ε, δ) claim is kept as stated (how mis-calibrated mechanisms are built).

    Parameters
    ----------
    epsilon : float or None
        Target or stated ε.
    delta : float or None
        Target or stated δ.
    sigma : float or None
        Given noise std, or None to calibrate.
    sensitivity : float
        ℓ₂ sensitivity Δ > 0.
    calibration : {"analytic", "classical"}
        Exact (Balle & Wang) or textbook calibration.
    adjacency : str
        The claim's neighbouring relation.
    owner : str
        Class name used in error messages.

    Returns
    -------
    (float, PrivacyClaim)
        σ and the claim.

    Raises
    ------
    InvalidParameterError
        For an unknown calibration, out-of-range values, a missing ε or δ without σ, or
        parameters dp_accounting cannot compute.
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
        sigma = _accounted("calibrate sigma", lambda: calibrate_gaussian(epsilon, delta, sensitivity, calibration),
                           epsilon=epsilon, delta=delta, sensitivity=sensitivity)
        exact = calibration == "analytic"
    else:
        sigma = check_positive("sigma", sigma)
        exact = epsilon is None or delta is None
    if exact and epsilon is None:
        _accounted("compute the exact epsilon", lambda: get_epsilon_gaussian(sigma / sensitivity, delta or 1e-5),
                   sigma=sigma, sensitivity=sensitivity, delta=delta)
    claim = gaussian_claim(sigma=sigma, sensitivity=sensitivity, epsilon=epsilon, delta=delta,
                           adjacency=adjacency, exact=exact)
    return sigma, claim


def float_safe_gaussian(values: np.ndarray, sigma: float, rng: np.random.Generator | int | None = None, *,
                        compiled: bool = False) -> np.ndarray:
    """``values + N(0, σ²)`` elementwise, released on the dithered lattice of step 2^(⌊log₂ σ⌋ − 10).

    The float-safe replacement for ``values + sigma * rng.standard_normal(values.shape)``
    (:mod:`privaudit.mechanisms.lattice`): same privacy as the continuous Gaussian,
    law values + σN + γ·U[−½, ½) with γ ≤ σ·2⁻¹⁰. Returns a new array.

    Parameters
    ----------
    values : array-like
        Values to noise (any shape).
    sigma : float
        Noise std σ > 0.
    rng : Generator, int or None
        Source of the noise and of the lattice offset.
    compiled : bool
        Use the compiled kernel of :mod:`privaudit.mechanisms.lattice_kernel` where it
        applies (the same bits and generator state, ≈ 2× faster, but compiled once per
        process in a few seconds): for releases repeated many times, such as DP-SGD's
        per-step noise.

    Returns
    -------
    ndarray
        Same shape as ``values``.

    Raises
    ------
    InvalidParameterError
        When σ ≤ 0.
    InvalidInputError
        When some |value| exceeds the lattice's range (:func:`~privaudit.mechanisms.lattice.check_lattice_range`).
    """
    sigma = check_positive("sigma", sigma)
    values = np.asarray(values)
    if values.dtype != np.float32:  # float32 is widened exactly chunk by chunk below
        values = np.asarray(values, dtype=float)
    rng = np.random.default_rng(rng)
    step = grid_step(sigma)
    check_lattice_range(values, step)
    fast = compiled_release(values, sigma, step, rng) if compiled else None
    if fast is not None:
        return fast
    noise = rng.standard_normal(values.shape)
    # The draws and the arithmetic of lattice_release(values, noise, σ, γ, rng), bit for bit (all
    # normals, then all offsets u, in order), done chunk by chunk so that the remainders, offsets
    # and noise being rounded stay in cache: for a DP-SGD gradient (10⁵ doubles) the unchunked
    # passes over parameter-sized arrays cost ~6 % of an MLP training step (measured, CPU time).
    out = np.empty(values.shape)
    x, z, y = values.reshape(-1), noise.reshape(-1), out.reshape(-1)
    work = np.empty((3, min(_CHUNK, x.size)))
    for start in range(0, x.size, _CHUNK):
        part = slice(start, start + _CHUNK)
        v, k0, u = work[:, : len(x[part])]
        np.divide(x[part], step, out=v, dtype=np.float64)  # x/γ, exact (γ a power of two)
        np.rint(v, out=k0)
        v -= k0  # f, exact
        rng.random(out=u)
        round_onto_lattice(z[part], k0, v, u, sigma, step, out=y[part])
    return out


def float_safe_gaussian_logpdf(residuals: ArrayLike, sigma: float) -> np.ndarray:
    """Row-wise log-density of ``float_safe_gaussian`` releases, given residuals y − mean of shape (n, ...).

    The law is mean + σN + γW, W ~ U[−½, ½): Σ log((Φ(v + h) − Φ(v − h))/γ) with v = residual/σ,
    h = γ/(2σ), γ = 2^(⌊log₂ σ⌋ − 10); the Gaussian log-density up to a relative O((γ/σ)²).

    Parameters
    ----------
    residuals : array-like of shape (n, ...)
        y − mean of each release, one release per row.
    sigma : float
        Noise std σ > 0.

    Returns
    -------
    ndarray of shape (n,)
    """
    sigma = check_positive("sigma", sigma)
    r = np.asarray(residuals, dtype=float)
    v = (r / sigma).reshape(r.shape[0], -1)
    step = grid_step(sigma)
    return gaussian_dither_logprob(v, 0.5 * step / sigma).sum(axis=1) - v.shape[1] * math.log(step)


@register_mechanism("gaussian", check=sigma_or_epsilon_delta)
class GaussianMechanism:
    """Release x + N(0, σ² I) on a dithered lattice γ(ℤ + u)^d, for inputs with ℓ₂ sensitivity Δ.

    The lattice step γ = 2^(⌊log₂ σ⌋ − 10) (:attr:`lattice_step`) is fixed by σ and the
    offset u is drawn independently of the input, so every output is reachable from
    every input. The claim (μ, ρ, ε, δ) is
    that of the continuous Gaussian, which covers the rounding (post-processing); the
    floating-point deviation of the implementation from the ideal lattice release is
    bounded by :meth:`float_error`.

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

    #: Constructor parameters in scikit-learn's vocabulary (validated when a configuration is loaded).
    _parameter_constraints = {
        "epsilon": [POSITIVE, None], "delta": [DELTA, None], "sensitivity": [POSITIVE], "sigma": [POSITIVE, None],
        "calibration": [CALIBRATION]}

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
        self.lattice_step = grid_step(self.sigma)

    @property
    def mu(self) -> float:
        """GDP parameter μ = Δ/σ of the σ in use (not of the claim)."""
        return self.sensitivity / self.sigma

    def __repr__(self) -> str:
        return f"GaussianMechanism(sigma={self.sigma:.6g}, sensitivity={self.sensitivity:g}, claim={self.claim})"

    def exact_delta(self, epsilon: float) -> float:
        """δ(ε) of the continuous Gaussian of the σ in use: exact for it, an upper bound for the lattice release.

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
        """ε(δ) of the continuous Gaussian (dp_accounting's analytic Gaussian); an upper bound for the lattice release.

        Parameters
        ----------
        delta : float
            δ in (0, 1).

        Returns
        -------
        float
            ε(δ) ≥ 0.
        """
        return float(get_epsilon_gaussian(self.sigma / self.sensitivity, check_delta(delta)))

    def tradeoff(self, alpha: ArrayLike) -> np.ndarray:
        """G_μ(α) between inputs at distance Δ: exact for the continuous Gaussian, a lower bound for the lattice release.

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

    def float_error(self, d: int = 1) -> tuple[float, float]:
        """(ε slack, δ slack) of the float implementation over the ideal lattice release, for d coordinates.

        The implemented law is within exp(±d·η) of the ideal one except for a
        total-variation error ≤ d·τ (η = 2⁻³⁰, τ = 1e−14 per coordinate; derivation in
        :mod:`privaudit.mechanisms.lattice`), so the release is
        (ε + 2dη, e^{dη}δ + (1 + e^ε)dτ)-DP whenever the ideal one is (ε, δ)-DP.

        Parameters
        ----------
        d : int
            Number of released coordinates.

        Returns
        -------
        (float, float)
            (2dη, e^{dη}δ + (1 + e^ε)dτ).
        """
        d = check_int("d", d)
        eps = self.claim.epsilon if math.isfinite(self.claim.epsilon) else 0.0
        return 2 * d * GAUSSIAN_ETA, math.expm1(d * GAUSSIAN_ETA) * self.claim.delta + (1 + math.exp(eps)) * d * GAUSSIAN_TAIL

    def sample(self, x: ArrayLike, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """``n`` dithered lattice releases of ``x``: shape ``(n, *x.shape)``.

        Parameters
        ----------
        x : array-like
            The input.
        n : int
            Number of independent releases.
        rng : Generator, int or None
            Source of the noise and of the lattice offset.

        Returns
        -------
        ndarray of shape (n, *x.shape)
            Independent releases stacked along axis 0.
        """
        x = check_array("x", x)
        n = check_size("n", n)
        rng = np.random.default_rng(rng)
        noise = rng.standard_normal((n, *x.shape))
        return lattice_release(x, noise, self.sigma, self.lattice_step, rng)

    def log_density(self, outputs: ArrayLike, x: ArrayLike) -> np.ndarray:
        """Exact log-density of each release given ``x``; shape ``(n,)``.

        The release is x + σN + γW with W ~ U[−½, ½)^d: its density is
        Π (Φ(v + h) − Φ(v − h))/γ with v = (y − x)/σ, h = γ/(2σ), the Gaussian density up
        to a relative O((γ/σ)²).

        Parameters
        ----------
        outputs : array-like of shape (n, ...)
            Releases, one per row of the leading axis.
        x : array-like
            The input.

        Returns
        -------
        ndarray of shape (n,)
            Log-density (or log-pmf) of each release given ``x``.
        """
        x = check_array("x", x)
        y = np.asarray(outputs, dtype=float)
        return float_safe_gaussian_logpdf(y - x, self.sigma)

    def fisher_information(self, x: ArrayLike, phase: ArrayLike | None = None) -> np.ndarray:
        """Exact Fisher information about x of the dithered release: I·c/σ² with c = 1 − O((γ/σ)²) ≤ 1.

        Parameters
        ----------
        x : array-like of shape (d,)
            The input (only its size matters).
        phase : ignored
            The release has no phases (:class:`~privaudit.mechanisms.protocol.ClosedFormRelease`).

        Returns
        -------
        ndarray of shape (d, d)
            c·I/σ².
        """
        x = check_array("x", x)
        return np.eye(x.size) * gaussian_dither_fisher(self.sigma / self.lattice_step) / self.sigma**2

    # --- the closed-form release (mechanisms/protocol.py: ClosedFormRelease) ---------------------
    def release_law(self) -> ReleaseLaw:
        """The law r = x + N(0, σ² I): c = 1, A = 0, no modulation vectors, L = 1.

        Returns
        -------
        ReleaseLaw
        """
        return ReleaseLaw(sigma=self.sigma)

    def marginal_fisher_information(self, x: ArrayLike | None = None) -> np.ndarray:
        """The release has no hidden randomness: :meth:`fisher_information` (at a scalar input when ``x`` is None).

        Parameters
        ----------
        x : array-like of shape (d,), optional
            The input (only its size matters).

        Returns
        -------
        ndarray of shape (d, d)
        """
        return self.fisher_information(np.zeros(1) if x is None else x)

    def release_batch(self, X: ArrayLike, rng: np.random.Generator | int | None = None, *,
                      phase: ArrayLike | None = None) -> np.ndarray:
        """One release per row of ``X``: x + N(0, σ² I) is translation-equivariant, so X plus releases of 0.

        Parameters
        ----------
        X : array-like of shape (n, d)
            One input per row.
        rng : Generator, int or None
            Source of the noise and of the lattice offsets.
        phase : ignored
            The release has no phases.

        Returns
        -------
        ndarray of shape (n, d)
        """
        X = np.asarray(X)
        return X + self.sample(np.zeros(X.shape[1]), X.shape[0], rng)

    def with_sigma(self, sigma: float) -> "GaussianMechanism":
        """A Gaussian mechanism of the same sensitivity with noise std ``sigma`` (its claim the μ = Δ/σ it gives).

        Parameters
        ----------
        sigma : float
            The new noise std σ > 0.

        Returns
        -------
        GaussianMechanism
        """
        return renoised_gaussian(self, sigma)

    def dp_event(self, distance: float | None = None) -> DpEvent:
        """dp_accounting event of one release between inputs at ℓ₂ distance Δ (default: the sensitivity).

        ``GaussianDpEvent(σ/Δ)``: a unit shift against noise multiplier σ/Δ. Exact for the
        continuous Gaussian and, the dithered lattice release being its post-processing,
        a valid (pessimistic by O((γ/σ)²)) description of what is sampled. Use it through
        :func:`privaudit.mechanisms.accounting.privacy_loss_distribution`.

        Parameters
        ----------
        distance : float, optional
            Distance between the two inputs in the mechanism's sensitivity norm
            (default: the sensitivity, the worst case).

        Returns
        -------
        dp_accounting.DpEvent
            ``GaussianDpEvent(σ/Δ)``, or ``NoOpDpEvent`` at distance 0.
        """
        d = self.sensitivity if distance is None else check_positive("distance", distance, allow_zero=True)
        return NoOpDpEvent() if d == 0 else GaussianDpEvent(self.sigma / d)

    def worst_case_pair(self, *, dim: int = 1) -> NeighbouringPair:
        """x = 0, x′ = Δ e₁: every pair at ℓ₂ distance Δ is equivalent by rotation invariance; exact μ = Δ/σ.

        Parameters
        ----------
        dim : int
            The input dimension d.

        Returns
        -------
        NeighbouringPair
        """
        x = np.zeros(check_int("dim", dim))
        xp = x.copy()
        xp[0] = self.sensitivity
        return NeighbouringPair(x, xp, self, f"Gaussian, distance {self.sensitivity:g} along e1", exact_mu=self.mu)


def renoised_gaussian(mechanism: object, sigma: float) -> GaussianMechanism:
    """A Gaussian mechanism of ``mechanism``'s sensitivity with noise std ``sigma``.

    Also the re-noised copy of a release that only matches
    :class:`~privaudit.mechanisms.protocol.IsotropicGaussianRelease` (``LEGACY_RENOISING``).

    Parameters
    ----------
    mechanism : object
        A release with ``sensitivity``.
    sigma : float
        The new noise std σ > 0.

    Returns
    -------
    GaussianMechanism
    """
    return GaussianMechanism(sigma=sigma, sensitivity=mechanism.sensitivity)


LEGACY_RENOISING["isotropic"] = renoised_gaussian
