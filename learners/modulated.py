"""Seed 000's modulated local-DP linear regression: server statistics and two learners.

Protocol (seed 000, Algorithms 3.1–3.2, §5 and §7). Each client i holds one (x_i, y_i);
y_i is public, x_i is private under the adjacency ‖x − x′‖₂ ≤ 1. In round t the server
draws a fresh orthonormal basis V_t (d × m); every client draws fresh phases and sends

    g̃_i = (1 − α) x_i + (λ/m) Σ_j cos(ω⟨x_i, v_j⟩ + φ_ij) v_j + ξ_i,   ξ_i ~ N(0, σ_t² I)

(:class:`~privaudit.mechanisms.ModulatedMechanism`). The server forms

    Σ_g = (1/K) Σ_i g̃_i g̃_iᵀ,   Σ_x = (Σ_g − C)/(1 − α)²,   Z = (1/(K(1 − α))) Σ_i y_i g̃_i,

with the derived correction C = (λ²/(2m²)) P_V + σ² I, so that E[Σ_x] = XᵀX/K and
E[Z] = Xᵀy/K; G = Σ_x β − Z is unbiased for ∇L(β) of L(β) = ‖Xβ − y‖²/(2K) (seed 000,
§3.1.4 for m = 1; the seed's printed λ²/(2m) P_V is biased for m > 1, see
:meth:`ModulatedMechanism.seed_correction`).

* :class:`ModulatedRegressor` — T rounds of projected gradient steps
  β ← Π_{‖β‖ ≤ radius}(β − η_t G_t), with η_t = c / λ_max(Σ_x,t) (``step`` = c; the
  normalisation by the largest eigenvalue of the round's own private Σ_x is
  post-processing, and makes c scale-free: c ≤ 1 never overshoots along the top
  direction of Σ_x,t).
* :class:`OneShotModulatedRegressor` — one release, β̂ = (Σ_x + γI)⁻¹ Z (seed 000, §5).

Privacy. Every round is a Gaussian release of an L-Lipschitz map, L = |1 − α| + λω/m,
so it is ρ_t = L²/(2σ_t²)-zCDP (conditionally on the public phases/basis) and ρ adds
over rounds. The total (ε, δ) is converted to ρ by the chosen ``conversion``
(:func:`~privaudit.mechanisms.zcdp_rho`) and split evenly: σ_t = L/sqrt(2ρ/T). As all
rounds are Gaussian, the composition is exactly sqrt(2ρ)-GDP, so
``conversion="gaussian"`` (the default) is exact; ``"rdp"`` and the seed's
``"seed"`` (ε = ρ + 2 sqrt(ρ ln 1/δ)) are valid but looser, hence noisier.
``calibration="classical"`` instead uses the textbook σ = L sqrt(2 ln(1.25/δ_t))/ε_t per
round with basic composition (ε_t, δ_t) = (ε/T, δ/T); that claim is only proven for
ε_t < 1 and is stated, not exact.

Floating point. On the client path (``simulation="clients"``, and always with
``store_transcript``) every simulated client release is
:meth:`ModulatedMechanism.release <privaudit.mechanisms.ModulatedMechanism.release>`, which
is float-safe: g_i + ξ_i rounded onto a dithered lattice γ(ℤ + u)^d fixed before x_i is
seen (post-processing, same claim; law g_i + ξ_i + γW, W ~ U[−½, ½)^d, γ ≤ σ_t·2⁻¹⁰). The
sufficient path below simulates the *server's aggregates* of the continuous releases, not
any client's release: it is a simulation device for utility and inference, not a
mechanism one would deploy, and is left as it is. The two paths' laws differ by the dither
only: E[g̃g̃ᵀ] gains γ²/12·I on the client path (a relative 8e−8 of σ_t², which the
correction C omits), far below any Monte Carlo resolution.

Exact simulation from sufficient statistics (``simulation="sufficient"``). The server
only uses Σ_i g̃_i g̃_iᵀ and Σ_i y_i g̃_i. Write one round as g̃_i = g_i + ξ_i with g_i
the noise-free modulated row (it needs only the K × m phases) and stack
A = [G, y] (K × (d + 1)) and the noise Ξ (K × d, iid N(0, σ²)). Then

    Σ_i g̃_i g̃_iᵀ = GᵀG + GᵀΞ + ΞᵀG + ΞᵀΞ,    Σ_i y_i g̃_i = Gᵀy + Ξᵀy,

so the round is a function of AᵀA (known given the phases) and of (AᵀΞ, ΞᵀΞ). Given
the phases, A is fixed and Ξ is independent of it. Let Q (K × r) be an orthonormal
basis of col(A), r = rank A, completed by Q⊥ (K × (K − r)) to an orthogonal matrix,
and P_A = QQᵀ. The law of Ξ is invariant under left rotations, so [Q, Q⊥]ᵀΞ is again
iid N(0, σ²): W = QᵀΞ (r × d) and Z⊥ = Q⊥ᵀΞ ((K − r) × d) are independent iid
Gaussian matrices, Ξ⊥ = (I − P_A)Ξ = Q⊥Z⊥ and

    AᵀΞ = AᵀQ W,    ΞᵀΞ = WᵀW + Z⊥ᵀZ⊥,    Z⊥ᵀZ⊥ ~ Wishart_d(K − r, σ² I).

We never form Q: with the column scaling S = diag(‖a_j‖) and the eigen-decomposition
S⁻¹AᵀAS⁻¹ = U Λ Uᵀ restricted to the r eigenvalues above the rounding floor,
Q = A P with P = S⁻¹ U_r Λ_r^{−1/2}, and AᵀQ = S U_r Λ_r^{1/2}. The Wishart factor is
drawn by the Bartlett decomposition, Ξ⊥ᵀΞ⊥ = FᵀF with F = σR upper triangular
(:func:`sample_noise_projection`). The joint law of the round's two sums is therefore
reproduced exactly, conditionally on the phases and hence also marginally (this is
not an approximation); the only differences from materialising every release are
floating-point rounding and the numerical rank decision, which only affects
directions in which A is null to rounding precision (there AᵀQW vanishes anyway; each
such direction moves one degree of freedom between W and the Wishart part).

Cost per round: with G = (1 − α)X + (λ/m) C Vᵀ (C the K × m cosines), AᵀA follows
from XᵀX, Xᵀy, yᵀy (accumulated once per fit) and XᵀC, CᵀC, Cᵀy, so a round costs
K·m uniform draws and O(K·d·m) flops, accumulated over blocks, plus O(d³), instead of
K·d Gaussian draws and O(K·d²). ``simulation="clients"`` draws every release (needed
for ``store_transcript``); ``"auto"`` (default) picks it exactly when a transcript is
stored. The two paths use different random numbers, so for one ``random_state`` they
give different (identically distributed) fits, with the same bases.

Streaming and randomness. Clients are processed in blocks of :data:`BLOCK` rows. The
random numbers of block b in round t come from ``SeedSequence(entropy, spawn_key=(t, 1 + b))``
and the basis of round t from spawn key (t, 0), and block sums are added in block
order, so results are bit-identical for every ``chunk_size`` (which only sets how
many rows are read at a time; it is rounded up to a multiple of BLOCK). The
sufficient path draws the phases of block b from key (t, 1 + b, 1), the round's
(W, Wishart) from key (t, 0, 1) and, for inference only, the auxiliary Gaussians of
block b from key (t, 1 + b, 2). Memory is
O(d² + chunk·d). X and y may be any arrays with ``shape`` and slicing (numpy,
memmap, dask).

Inference (asymptotic normality, seed 000 §8). Each round's statistics are means of
per-client estimating functions ψ_i,t(β) = (g̃g̃ᵀ − C_t)β/(1 − α)² − y g̃/(1 − α), so
G_t = (1/K) Σ_i ψ_i,t. Linearising the recursion around the fixed point, with
A_t = I − η_t Σ̄ and B_t = (A_{T−1} ⋯ A_{t+1}) η_t,

    Cov(β̂) ≈ [ (Σ_t B_t) S (Σ_t B_t)ᵀ + Σ_t B_t (Ω − S) B_tᵀ ] / K,

where Ω = Cov(ψ_i,t) (sampling + privacy noise, fresh each round) and S = Cov(ψ_i,t, ψ_i,s)
for t ≠ s (the sampling part, shared by all rounds because the data are the same).
Both are estimated at β̂ from the releases of the last two rounds, regenerated from
their seeds (post-processing: a real server would keep them). For the one-shot
estimator this is the M-estimation sandwich H⁻¹ Ω H⁻¹ / K with H = Σ_x + γI. The
intervals are for the population coefficient of a linear model with i.i.d. clients
(for γ > 0, for the ridge-shrunk target), and assume the iteration has converged:
``contraction_`` = ‖A_{T−1} ⋯ A_0‖₂ should be small.

Inference on the sufficient path. The releases were never drawn, so the inference
pass draws them from their exact conditional law given what the fit drew, (W, F)
with A = [G, y] of that round: Ξ = QW + Q⊥Z⊥. When K − r ≥ d, Z⊥ = O R₀ (thin QR)
with O (K − r) × d Haar-distributed and independent of R₀ = F/σ, so Ξ⊥ = E F with
E = Q⊥O a Haar orthonormal d-frame of col(A)^⊥, independent of F. E is built from an
auxiliary K × d Gaussian N: N⊥ = (I − P_A)N = E R′, R′ the Cholesky factor of
NᵀN − (QᵀN)ᵀ(QᵀN), so Ξ = A P (W − QᵀN R′⁻¹F) + N R′⁻¹F, in two streaming passes.
When K − r < d, F = σZ⊥ itself was drawn and Q⊥ is formed in memory (K < 2d + 1).
The regenerated releases reproduce the round's sums up to rounding and have jointly
the law of the client path's releases, so ``cov_params_`` has the same distribution
on both paths; the inference pass then costs 4 (rather than 2) rounds of K·d
Gaussian draws.

(About 760 lines: the iterative and one-shot learners share one base class that carries
validation, the two exact client-simulation paths, streaming and the sandwich inference, and the
derivations above document all of it; the server-side statistics are in
:mod:`privaudit.learners.modulated_server`.)
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats as _st
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from privaudit.learners.fitted_claim import FittedClaimMixin
from privaudit.learners.input_validation import check_data, check_predict_data
from privaudit.mechanisms.accounting import (
    check_calibration,
    gdp_epsilon,
    sigma_for_rho,
    zcdp_rho,
)
from privaudit.mechanisms.claim import PrivacyClaim
from privaudit.mechanisms.gaussian import classical_sigma
from privaudit.mechanisms.modulated import ModulatedMechanism, random_orthonormal_basis
from privaudit.mechanisms.randomness import keyed_rng, resolve_seed
from privaudit.mechanisms.validation import (
    InvalidInputError,
    InvalidParameterError,
    NonContractiveWarning,
    check_array,
    check_interval,
)
from privaudit.learners import parameter_constraints as _constraints
from privaudit.learners.parameter_constraints import ValidatedParamsMixin

from .modulated_server import (
    BLOCK,
    NoiseProjection,
    debias_moments,
    estimating_functions,
    iter_blocks,
    project_ball,
    sample_noise_projection,
    server_gradient,
    single_blas_thread,
)

#: Largest start bias |Π (β₀ − β*)| per coefficient (``start_bias_``), in standard errors, that
#: ``conf_int`` accepts without a warning. A shift of b standard errors lowers the coverage
#: of a 95 % Wald interval to Φ(1.96 − b) − Φ(−1.96 − b): 0.943 at b = 0.25.
MAX_START_BIAS = 0.25


class UnreliableInferenceWarning(ConvergenceWarning):
    """The linearisation behind a modulated learner's ``cov_params_`` does not hold.

    Raised by ``conf_int`` and ``wald_test`` of :class:`ModulatedRegressor` when the
    iteration has not converged (``contraction_`` ≥ 1, or a start bias above
    :data:`MAX_START_BIAS` standard errors), when the step factor c exceeds 1 or when β̂
    lies on the projection sphere. Measured (300–400 fits each, d = 3, nominal 0.95):
    K = 8000, ε = 8, 3 rounds at step 0.5 (contraction ≈ 0.23) all warn and cover
    0.12 / 0.49 / 0.74; at 10 rounds none warn and they cover 0.94–0.97 at c ∈ {0.8, 1},
    while c = 1.2 covers 0.92–0.94 and c = 1.5 0.90–0.92 with a contraction ≈ 0 (the
    linearisation holds the random η_t = c/λ_max(Σ_x,t) fixed), hence the c > 1 warning.
    Not caught: at ε = 2 the 8 % of fits that do not warn cover 0.70–0.96.
    """


# --------------------------------------------------------------------------------------
# learners
# --------------------------------------------------------------------------------------
class _ModulatedBase(ValidatedParamsMixin, FittedClaimMixin, RegressorMixin, BaseEstimator):
    """Shared validation, client simulation and inference of the modulated learners.

    Parameters are validated by scikit-learn against ``_parameter_constraints``
    (:mod:`privaudit.learners.parameter_constraints`) when ``fit`` is entered; what spans
    several parameters is checked here (simulation and transcript) and by the mechanism
    (``n_vectors`` ≤ dim).
    """

    # ----- parameters -----
    def _n_rounds(self) -> int:
        return 1

    def _simulation(self) -> str:
        """The resolved simulation path ("auto": clients iff a transcript is stored)."""
        if self.simulation == "sufficient" and self.store_transcript:
            raise InvalidParameterError(
                "store_transcript=True needs every client's release, which simulation='sufficient' never draws; "
                "use simulation='clients' (or 'auto')")
        if self.simulation == "auto":
            return "clients" if self.store_transcript else "sufficient"
        return self.simulation

    def _template(self, dim: int) -> ModulatedMechanism:
        """Round mechanism (basis set per round) with σ_t from the split budget; also sets ``claim``."""
        T = self._n_rounds()
        # Validates α, λ, ω and m ≤ d, and warns once if L ≥ 1.
        probe = ModulatedMechanism(alpha=self.alpha, lam=self.lam, omega=self.omega, n_vectors=self.n_vectors,
                                   dim=dim, sigma=1.0)
        L = probe.lipschitz
        if self.calibration == "zcdp":
            rho = zcdp_rho(self.epsilon, self.delta, self.conversion)
            sigma = sigma_for_rho(rho / T, L)
            # The T rounds compose to exactly sqrt(2ρ)-GDP; (ε, δ) holds by the chosen conversion.
            self.claim_ = PrivacyClaim(float(self.epsilon), float(self.delta), "l2<=1", mu=math.sqrt(2 * rho), rho=rho)
        else:
            sigma = classical_sigma(self.epsilon / T, self.delta / T, L)
            self.claim_ = PrivacyClaim(float(self.epsilon), float(self.delta), "l2<=1")
            # The T Gaussian rounds compose to exactly (sqrt(T) L/σ)-GDP: hold the stated claim
            # against that (warns CalibrationWarning when it is false, ε_t ≥ 1, or loose).
            self.calibration_check_ = check_calibration(
                self.epsilon, self.delta, gdp_epsilon(math.sqrt(T) * L / sigma, self.delta), method="classical",
                owner=type(self).__name__)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonContractiveWarning)  # already warned by the probe
            return ModulatedMechanism(alpha=self.alpha, lam=self.lam, omega=self.omega, n_vectors=self.n_vectors,
                                      dim=dim, sigma=sigma)

    # ----- client simulation -----
    def _round_sums(self, X, y, mech, root, t, transcript=None):
        """Σ g̃g̃ᵀ and Σ y g̃ of round t, block by block (and the releases into ``transcript``)."""
        D = mech.dim
        gram, cross = np.zeros((D, D)), np.zeros(D)
        with single_blas_thread(X.shape[0]):
            for b, Xb, yb in iter_blocks(X, y, self.chunk_size, self.fit_intercept):
                g = mech.release(Xb, keyed_rng(root, t, 1 + b))
                gram += g.T @ g
                cross += g.T @ yb
                if transcript is not None:
                    transcript[t, b * BLOCK : b * BLOCK + len(yb)] = g
        return gram, cross

    def _client_releaser(self, mech, root, t):
        """Block releases of round t on the client path, regenerated from their keys."""
        return lambda b, Xb, yb: mech.release(Xb, keyed_rng(root, t, 1 + b))

    def _cosines(self, mech, root, t, b, Xb) -> np.ndarray:
        """cos(ω⟨x_i, v_j⟩ + φ_ij) of block b in round t, sufficient path (phases: key (t, 1 + b, 1))."""
        phase = keyed_rng(root, t, 1 + b, 1).random((Xb.shape[0], mech.n_vectors)) * (2 * np.pi)
        return np.cos(mech.angles(Xb, phase))

    def _design_block(self, mech, root, t, b, Xb, yb) -> np.ndarray:
        """A_b = [G_b, y_b] of round t on the sufficient path."""
        A = np.empty((len(yb), mech.dim + 1))
        C = self._cosines(mech, root, t, b, Xb)
        A[:, :-1] = (1 - mech.alpha) * Xb + (mech.lam / mech.n_vectors) * C @ mech.basis.T
        A[:, -1] = yb
        return A

    def _sufficient_sums(self, X, y, mech, root, t, data: dict):
        """Σ g̃g̃ᵀ and Σ y g̃ of round t drawn exactly from AᵀA (see the module docstring).

        With G = aX + l C Vᵀ (a = 1 − α, l = λ/m, C the K × m cosines), AᵀA follows from
        XᵀX, Xᵀy, yᵀy (the same every round: accumulated into ``data`` on the first call)
        and XᵀC, CᵀC, Cᵀy: O(K·d·m) per round instead of O(K·d²).
        """
        D, m = mech.dim, mech.n_vectors
        first = not data
        if first:
            data.update(XtX=np.zeros((D, D)), Xty=np.zeros(D), yty=0.0, K=0)
        XtC, CtC, Cty = np.zeros((D, m)), np.zeros((m, m)), np.zeros(m)
        with single_blas_thread(X.shape[0]):
            for b, Xb, yb in iter_blocks(X, y, self.chunk_size, self.fit_intercept):
                C = self._cosines(mech, root, t, b, Xb)
                XtC += Xb.T @ C
                CtC += C.T @ C
                Cty += C.T @ yb
                if first:
                    data["XtX"] += Xb.T @ Xb
                    data["Xty"] += Xb.T @ yb
                    data["yty"] += float(yb @ yb)
                    data["K"] += len(yb)
        a, l, V = 1 - mech.alpha, mech.lam / m, mech.basis
        mixed = a * l * (XtC @ V.T)
        gram_A = np.empty((D + 1, D + 1))
        gram_A[:D, :D] = a**2 * data["XtX"] + mixed + mixed.T + l**2 * (V @ CtC @ V.T)
        gram_A[:D, D] = gram_A[D, :D] = a * data["Xty"] + l * (V @ Cty)
        gram_A[D, D] = data["yty"]
        proj = sample_noise_projection(gram_A, data["K"], D, mech.sigma, keyed_rng(root, t, 0, 1))
        GtXi = proj.cross[:D]
        gram = gram_A[:D, :D] + GtXi + GtXi.T + proj.gram
        cross = gram_A[:D, D] + proj.cross[D]
        return gram, cross, proj

    def _sufficient_releaser(self, X, y, mech, root, t, proj: NoiseProjection):
        """Block releases of round t with their exact law given the round's sums (module docstring).

        Ξ = Q W + E F, E a Haar frame of col(A)^⊥ built from auxiliary Gaussians N
        (key (t, 1 + b, 2)): Ξ_b = A_b H + N_b T with T = R′⁻¹F, H = P(W − QᵀN T), so
        g̃_b = aX_b(I + H_G) + l C_b Vᵀ(I + H_G) + y_b h_yᵀ + N_b T (H = [H_G; h_yᵀ]).
        """
        D, a, l, V = mech.dim, 1 - mech.alpha, mech.lam / mech.n_vectors, mech.basis
        if proj.n_perp < D:
            # K < r + d ≤ 2d + 1 rows: form an orthonormal basis of the complement in memory.
            A = np.vstack([self._design_block(mech, root, t, b, Xb, yb)
                           for b, Xb, yb in iter_blocks(X, y, self.chunk_size, self.fit_intercept)])
            Q = A @ proj.P
            E = np.linalg.qr(Q, mode="complete")[0][:, Q.shape[1]:] if Q.shape[1] else np.eye(len(A))
            G = A[:, :-1] + Q @ proj.W + E @ proj.F
            return lambda b, Xb, yb: G[b * BLOCK : b * BLOCK + len(yb)]
        XtN, CtN, ytN, NtN = np.zeros((D, D)), np.zeros((mech.n_vectors, D)), np.zeros(D), np.zeros((D, D))
        with single_blas_thread(X.shape[0]):
            for b, Xb, yb in iter_blocks(X, y, self.chunk_size, self.fit_intercept):
                C = self._cosines(mech, root, t, b, Xb)
                N = keyed_rng(root, t, 1 + b, 2).standard_normal((len(yb), D))
                XtN += Xb.T @ N
                CtN += C.T @ N
                ytN += yb @ N
                NtN += N.T @ N
        AtN = np.vstack([a * XtN + l * (V @ CtN), ytN])
        QtN = proj.P.T @ AtN
        R = np.linalg.cholesky(NtN - QtN.T @ QtN).T  # N⊥ᵀN⊥ = RᵀR
        T = np.linalg.solve(R, proj.F)  # d × d; scipy's solve_triangular has ms-scale call overhead here
        H = proj.P @ (proj.W - QtN @ T)
        IH = np.eye(D) + H[:D]
        MX, MC, hy = a * IH, l * (V.T @ IH), H[D]

        def release(b, Xb, yb):
            out = Xb @ MX
            out += self._cosines(mech, root, t, b, Xb) @ MC
            out += np.outer(yb, hy)
            out += keyed_rng(root, t, 1 + b, 2).standard_normal((len(yb), D)) @ T
            return out

        return release

    def _psi_moments(self, X, y, mechs, releasers, beta):
        """Ω (own-round covariance) and S (cross-round covariance) of ψ at β.

        ``releasers`` holds one or two functions (b, X_b, y_b) -> releases of a round.
        """
        D = len(beta)
        K = X.shape[0]
        sums = [np.zeros(D) for _ in releasers]
        own = np.zeros((D, D))
        cross = np.zeros((D, D))
        with single_blas_thread(X.shape[0]):
            for b, Xb, yb in iter_blocks(X, y, self.chunk_size, self.fit_intercept):
                psis = []
                for mech, release in zip(mechs, releasers):
                    psis.append(estimating_functions(release(b, Xb, yb), yb, beta, mech))
                for j, p in enumerate(psis):
                    sums[j] += p.sum(axis=0)
                    own += p.T @ p
                if len(psis) == 2:
                    c = psis[0].T @ psis[1]
                    cross += c + c.T
        means = [s / K for s in sums]
        omega = own / (K * len(releasers)) - sum(np.outer(m, m) for m in means) / len(releasers)
        if len(releasers) == 2:
            S = cross / (2 * K) - (np.outer(means[0], means[1]) + np.outer(means[1], means[0])) / 2
        else:
            S = None
        return omega, S

    def _simulate_round(self, X, y, mech, root, t, transcript, data: dict):
        """Raw sums of round t and a factory of its block releases (for the inference pass).

        ``data`` caches XᵀX, Xᵀy, yᵀy and K across the rounds of one fit (sufficient path).
        """
        if self.simulation_ == "clients":
            gram, cross = self._round_sums(X, y, mech, root, t, transcript)
            return gram, cross, lambda: self._client_releaser(mech, root, t)
        gram, cross, proj = self._sufficient_sums(X, y, mech, root, t, data)
        return gram, cross, lambda: self._sufficient_releaser(X, y, mech, root, t, proj)

    def _setup_fit(self, X, y):
        self.simulation_ = self._simulation()
        X, y = check_data(X, y, self.chunk_size, self)
        D = X.shape[1] + (1 if self.fit_intercept else 0)
        template = self._template(D)
        # The root is SeedSequence(seed_): refitting with random_state=seed_ reproduces the fit.
        root, self.seed_ = resolve_seed(self.random_state, "random_state")
        return X, y, D, template, root

    def _finish(self, beta: np.ndarray, cov: np.ndarray | None) -> None:
        if self.fit_intercept:
            self.coef_, self.intercept_ = beta[:-1].copy(), float(beta[-1])
        else:
            self.coef_, self.intercept_ = beta.copy(), 0.0
        self.params_ = beta
        if cov is not None:
            cov = (cov + cov.T) / 2
            w, U = np.linalg.eigh(cov)
            self.cov_params_ = (U * np.clip(w, 0, None)) @ U.T  # PSD by construction
            self.bse_ = np.sqrt(np.diag(self.cov_params_))
            with np.errstate(divide="ignore", invalid="ignore"):
                self.tvalues_ = beta / self.bse_
            self.pvalues_ = 2 * _st.norm.sf(np.abs(self.tvalues_))

    # ----- public API -----

    def release_view(self, *, n_train: int = 2000, dim: int = 3, mode: str = "white-box", rng=None):
        """The mechanism standing for what this learner releases: one client's transcript.

        A clone of the learner is fitted on synthetic data
        (:func:`privaudit.learners.release_view.fit_on_synthetic`, seeded from ``rng``
        unless ``random_state`` is set); the view is the
        :class:`~privaudit.learners.modulated_view.TranscriptRelease` of its
        ``round_mechanisms_`` under the learner's claim, which declares its worst-case
        pair and reconstruction. ``mode`` is not used (every release is seen). Audits
        take it from here (issue 13: no audit switches on the learner's type).
        """
        # The view and its pair use privaudit.attacks, which fitting alone does not need.
        from privaudit.learners.modulated_view import TranscriptRelease
        from privaudit.learners.release_view import fit_on_synthetic

        fitted = fit_on_synthetic(self, n_train=n_train, dim=dim, rng=np.random.default_rng(rng))
        return TranscriptRelease(fitted.round_mechanisms_, claim=fitted.claim)

    def predict(self, X) -> np.ndarray:
        """ŷ = X coef_ + intercept_."""
        X = check_predict_data(self, X)
        return X @ self.coef_ + self.intercept_

    def _inference_caveats(self) -> list[str]:
        """Reasons why the Wald intervals may not have their nominal coverage (none here)."""
        return []

    def _check_inference(self) -> None:
        """Refuse degenerate intervals, warn when the asymptotics do not apply.

        Ω is a sample covariance of K clients' estimating functions: its rank is at most
        K − 1 per round, so with K ≤ p clients some linear combinations of β̂ get zero
        width (K = 1 gives Ω = 0). That is refused; the caveats of the subclass warn.
        """
        check_is_fitted(self, "cov_params_")
        K, p = self.round_stats_[0].n_clients, len(self.params_)
        name = type(self).__name__
        if K <= p:
            raise InvalidInputError(
                f"{name} inference needs more clients than parameters: the covariance of the clients' estimating "
                f"functions is estimated from K={K} clients (rank <= K - 1) for p={p} parameters, so some intervals "
                f"would have zero width; fit with at least {p + 1} clients")
        if np.any(self.bse_ <= 0):
            raise InvalidInputError(f"{name} inference is degenerate: zero standard error for parameters "
                                    f"{np.flatnonzero(self.bse_ <= 0).tolist()} (bse_={self.bse_!r})")
        for reason in self._inference_caveats():
            warnings.warn(f"{name}: the Wald intervals may not reach their nominal coverage: {reason}",
                          UnreliableInferenceWarning, stacklevel=3)

    def conf_int(self, alpha: float = 0.05) -> np.ndarray:
        """Wald (1 − α) intervals for the parameters (coef_, then intercept_ if fitted), shape (p, 2).

        Raises
        ------
        InvalidInputError
            With K ≤ p clients (zero-width intervals in some direction).

        Warns
        -----
        UnreliableInferenceWarning
            When the iteration has not converged or β̂ lies on the projection sphere
            (:class:`ModulatedRegressor`).
        """
        a = check_interval("alpha", alpha, 0.0, 1.0)
        self._check_inference()
        z = _st.norm.ppf(1 - a / 2)
        return np.column_stack([self.params_ - z * self.bse_, self.params_ + z * self.bse_])

    def wald_test(self, R, q=None) -> tuple[float, float, int]:
        """Wald test of H0: Rβ = q; returns (statistic, p-value, df) with a χ²_df reference.

        Refuses and warns as :meth:`conf_int`.
        """
        self._check_inference()
        R = np.atleast_2d(check_array("R", R, ndim=(1, 2), dim=len(self.params_)))
        q = np.zeros(R.shape[0]) if q is None else check_array("q", q, ndim=1, dim=R.shape[0])
        diff = R @ self.params_ - q
        V = R @ self.cov_params_ @ R.T
        stat = float(diff @ np.linalg.pinv(V) @ diff)
        df = int(np.linalg.matrix_rank(V))
        return stat, float(_st.chi2.sf(stat, df)), df

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True  # private: utility at ε = 1 is not OLS-grade
        return tags


class ModulatedRegressor(_ModulatedBase):
    """Iterative modulated local-DP linear regression (seed 000, Algorithms 3.1–3.2; §7 for m > 1).

    Parameters
    ----------
    epsilon, delta : float
        Total (ε, δ) over all rounds, for the adjacency ‖x − x′‖₂ ≤ 1 on one client's features.
    alpha : float
        Contraction α ∈ (0, 1).
    lam, omega : float
        Modulation amplitude λ ≥ 0 and frequency ω ≥ 0; L = |1 − α| + λω/m.
    n_vectors : int
        m orthonormal modulation vectors per round (1 ≤ m ≤ d).
    rounds : int
        T ≥ 1.
    step : float
        Step factor c; η_t = c / λ_max(Σ_x,t).
    radius : float
        Projection radius: β stays in {‖β‖₂ ≤ radius}.
    conversion : {"gaussian", "rdp", "seed"}
        zCDP → (ε, δ) conversion used to split the budget (see module docstring).
    calibration : {"zcdp", "classical"}
        Per-round σ from the zCDP split, or the seed's textbook formula per round.
    chunk_size : int, optional
        Clients read per chunk (streaming); None reads X at once. Results do not depend on it.
    fit_intercept : bool
        Append a public constant feature 1 to every client (its change is 0, so the claim is unchanged).
    random_state : int, Generator, SeedSequence or None
        Resolved by :func:`~privaudit.mechanisms.randomness.resolve_seed` (a Generator is
        consumed by one draw); the integer behind the fit is recorded as ``seed_``.
    store_transcript : bool
        Keep all releases as ``transcript_`` (T, K, d); memory O(TKd).
    inference : bool
        Estimate ``cov_params_`` (one extra pass regenerating the last two rounds).
    simulation : {"auto", "sufficient", "clients"}
        How rounds are simulated. "sufficient" draws each round's two server sums
        exactly from AᵀA, A = [G, y], without the K × d noise matrix (O(K·d²) per
        round; see the module docstring); "clients" draws every client's release.
        Both give the same distribution of every fitted quantity, from different
        random numbers. "auto" (default) is "clients" when ``store_transcript`` is
        set (which needs the releases; "sufficient" with it raises) and "sufficient"
        otherwise.

    Attributes
    ----------
    coef_, intercept_, params_ : fitted parameters (params_ includes the intercept last).
    simulation_ : str, the resolved simulation path.
    seed_ : int, the seed of the fit (``random_state=seed_`` reproduces it).
    calibration_check_ : CalibrationCheck, only with ``calibration="classical"``: the stated ε
        against the exact ε of the T Gaussian rounds (sqrt(T)·L/σ-GDP).
    claim : PrivacyClaim of the whole transcript (adjacency "l2<=1").
    round_sigma_ : ndarray (T,) noise std per round.
    round_mechanisms_ : list of ModulatedMechanism, one per round, with its basis.
    round_stats_ : list of ServerStatistics per round.
    coef_path_ : ndarray (T + 1, p) iterates.
    transcript_ : ndarray (T, K, d), only with ``store_transcript``.
    cov_params_, bse_, tvalues_, pvalues_ : inference (Wald, normal reference).
    contraction_ : float, ‖Π_t (I − η_t Σ̄)‖₂ (≈ 0 when the iteration has converged).
    start_bias_ : ndarray (p,), −Π (I − Π)⁻¹ β̂ with Π = Π_t (I − η_t Σ̄): the estimated
        remaining effect of the start β₀ = 0 on β̂ (not in ``cov_params_``; NaN when
        ``contraction_`` ≥ 1).
    radius_active_ : bool, whether β̂ lies on the projection sphere (intervals then invalid).
    step_sizes_ : ndarray (T,), the η_t used.
    """

    #: Declarative constraints (scikit-learn format), also used to validate configurations at load.
    _parameter_constraints = _constraints.MODULATED_ITERATIVE

    def __init__(self, *, epsilon=1.0, delta=1e-5, alpha=0.5, lam=0.5, omega=0.5, n_vectors=1, rounds=10,
                 step=0.8, radius=10.0, conversion="gaussian", calibration="zcdp", chunk_size=None,
                 fit_intercept=False, random_state=None, store_transcript=False, inference=True, simulation="auto"):
        self.epsilon = epsilon
        self.delta = delta
        self.alpha = alpha
        self.lam = lam
        self.omega = omega
        self.n_vectors = n_vectors
        self.rounds = rounds
        self.step = step
        self.radius = radius
        self.conversion = conversion
        self.calibration = calibration
        self.chunk_size = chunk_size
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.store_transcript = store_transcript
        self.inference = inference
        self.simulation = simulation

    def _n_rounds(self) -> int:
        return int(self.rounds)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: ArrayLike) -> "ModulatedRegressor":
        """Simulate T rounds of clients and server; returns self.

        Round t draws a fresh orthonormal basis, lets every client release its modulated
        gradient statistics, debiases them (:func:`debias_moments`) and takes the step
        β ← Π_R(β − (c/λ_max(Σ_x)) G); with ``inference`` the sandwich covariance of the
        final iterate is estimated from the last rounds' estimating functions.

        Parameters
        ----------
        X : array-like of shape (K, d)
            One row per client (any 2-d array with slicing when streaming with ``chunk_size``).
        y : array-like of shape (K,)
            Public responses.

        Returns
        -------
        ModulatedRegressor
            self, with ``coef_``, ``intercept_``, ``coef_path_``, the per-round mechanisms,
            statistics and step sizes, and (with ``inference``) ``cov_params_``.
        """
        T = self._n_rounds()
        c, radius = float(self.step), float(self.radius)
        X, y, D, template, root = self._setup_fit(X, y)
        K = X.shape[0]
        transcript = np.empty((T, K, D)) if self.store_transcript else None
        beta = np.zeros(D)
        path, mechs, stats, etas, releasers, data = [beta.copy()], [], [], [], [], {}
        for t in range(T):
            mech = template.with_basis(random_orthonormal_basis(D, self.n_vectors, keyed_rng(root, t, 0)))
            gram, cross, releaser = self._simulate_round(X, y, mech, root, t, transcript, data)
            releasers = (releasers + [releaser])[-2:]  # the inference pass uses the last two rounds
            st = debias_moments(gram, cross, K, mech)
            top = float(np.linalg.eigvalsh(st.Sigma_x)[-1])
            eta = c / top if top > 0 else c
            beta = project_ball(beta - eta * server_gradient(st, beta), radius)
            mechs.append(mech)
            stats.append(st)
            etas.append(eta)
            path.append(beta.copy())
        self.round_mechanisms_ = mechs
        self.round_sigma_ = np.array([m.sigma for m in mechs])
        self.round_stats_ = stats
        self.step_sizes_ = np.array(etas)
        self.coef_path_ = np.array(path)
        if transcript is not None:
            self.transcript_ = transcript
        cov = None
        sigma_bar = np.mean([s.Sigma_x for s in stats], axis=0)
        A = [np.eye(D) - e * sigma_bar for e in etas]
        prod = np.eye(D)
        for a_t in A:
            prod = a_t @ prod
        self.contraction_ = float(np.linalg.norm(prod, 2))
        # On the boundary the linearisation behind cov_params_ does not hold.
        self.radius_active_ = bool(np.linalg.norm(beta) >= radius * (1 - 1e-12))
        if self.inference:
            omega, S = self._psi_moments(X, y, mechs[-len(releasers):], [r() for r in releasers], beta)
            Bs = []
            tail = np.eye(D)
            for t in range(T - 1, -1, -1):  # B_t = (A_{T-1} ... A_{t+1}) η_t
                Bs.append(tail * etas[t])
                tail = tail @ A[t]
            if S is None:
                cov = sum(B @ omega @ B.T for B in Bs) / K
            else:
                Bsum = sum(Bs)
                cov = (Bsum @ S @ Bsum.T + sum(B @ (omega - S) @ B.T for B in Bs)) / K
        # Linearised, β̂ ≈ Π β₀ + (I − Π) β* + noise with Π = Π_t A_t, so the part of the start
        # not yet forgotten is Π(β₀ − β*) = −Π (I − Π)⁻¹ β̂ (β₀ = 0); cov_params_ ignores it.
        # Without contraction (‖Π‖ ≥ 1) the linearisation says nothing: NaN.
        if self.contraction_ < 1:
            self.start_bias_ = -(prod @ np.linalg.solve(np.eye(D) - prod, beta))
        else:
            self.start_bias_ = np.full(D, np.nan)
        self._finish(beta, cov)
        return self

    def _inference_caveats(self) -> list[str]:
        reasons = []
        if self.contraction_ >= 1:
            reasons.append(f"the iteration has not converged (contraction_={self.contraction_:.3g} >= 1: the "
                           "linearised recursion expands); use a smaller step, or more clients or a larger epsilon")
        else:
            ratio = float(np.max(np.abs(self.start_bias_) / self.bse_))
            if ratio > MAX_START_BIAS:
                reasons.append(f"the iteration has not converged (start bias {ratio:.3g} standard errors > "
                               f"{MAX_START_BIAS}, contraction_={self.contraction_:.3g}); use more rounds or a step "
                               "closer to 1")
        if self.step > 1:
            reasons.append(f"step={self.step} > 1 overshoots along the top direction, where the random step "
                           "sizes eta_t = step / lambda_max(Sigma_x,t), held fixed by the linearisation, matter "
                           "(measured coverage of nominal 0.95 intervals: 0.92-0.94 at step 1.2, 0.90-0.92 at 1.5); "
                           "use step <= 1")
        if self.radius_active_:
            reasons.append(f"coef_ lies on the projection sphere (radius={self.radius}); increase radius")
        return reasons


class OneShotModulatedRegressor(_ModulatedBase):
    """One-shot modulated regression: one release, β̂ = (Σ_x + γI)⁻¹ Z (seed 000, §5).

    Parameters are those of :class:`ModulatedRegressor` without the iteration
    (``rounds``, ``step``, ``radius``), plus ``ridge`` γ ≥ 0 and ``psd``
    (``simulation`` as there: the one release is drawn exactly from its sufficient
    statistics unless ``store_transcript`` or ``simulation="clients"``). With one
    Gaussian release, ``conversion="gaussian"`` equals the analytic calibration.

    ``psd=False`` is the seed's formula. At small ε the debiased Σ_x is often
    indefinite, so Σ_x + γI can be nearly singular and β̂ explode; ``psd=True``
    (not in the seed) first projects Σ_x onto the PSD cone (post-processing, so the
    claim is unchanged), which bounds ‖β̂‖ ≤ ‖Z‖/γ. The sandwich covariance then
    uses the projected H (the projection is inactive when Σ_x ≻ 0, as for large K·ε).

    Attributes
    ----------
    coef_, intercept_, params_, claim, simulation_, round_sigma_ (1,), round_mechanisms_ (1 mechanism),
    round_stats_, transcript_ (1, K, d) with ``store_transcript``, cov_params_, bse_,
    tvalues_, pvalues_ (sandwich H⁻¹ Ω H⁻¹/K, H = Σ_x + γI).
    """

    #: Declarative constraints (scikit-learn format), also used to validate configurations at load.
    _parameter_constraints = _constraints.MODULATED_ONE_SHOT

    def __init__(self, *, epsilon=1.0, delta=1e-5, alpha=0.5, lam=0.5, omega=0.5, n_vectors=1, ridge=1.0,
                 psd=False, conversion="gaussian", calibration="zcdp", chunk_size=None, fit_intercept=False,
                 random_state=None, store_transcript=False, inference=True, simulation="auto"):
        self.epsilon = epsilon
        self.delta = delta
        self.alpha = alpha
        self.lam = lam
        self.omega = omega
        self.n_vectors = n_vectors
        self.ridge = ridge
        self.psd = psd
        self.conversion = conversion
        self.calibration = calibration
        self.chunk_size = chunk_size
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.store_transcript = store_transcript
        self.inference = inference
        self.simulation = simulation

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: ArrayLike) -> "OneShotModulatedRegressor":
        """Simulate one release per client and solve the ridge system; returns self.

        β̂ = (Σ_x + γI)⁻¹ Z from the one round's debiased statistics (Σ_x first projected onto
        the PSD cone when ``psd``).

        Parameters
        ----------
        X : array-like of shape (K, d)
            One row per client.
        y : array-like of shape (K,)
            Public responses.

        Returns
        -------
        OneShotModulatedRegressor
            self, with ``coef_``, ``intercept_`` and the round's mechanism and statistics.
        """
        gamma = float(self.ridge)
        X, y, D, template, root = self._setup_fit(X, y)
        K = X.shape[0]
        transcript = np.empty((1, K, D)) if self.store_transcript else None
        mech = template.with_basis(random_orthonormal_basis(D, self.n_vectors, keyed_rng(root, 0, 0)))
        gram, cross, releaser = self._simulate_round(X, y, mech, root, 0, transcript, {})
        st = debias_moments(gram, cross, K, mech)
        sigma_x = st.Sigma_x
        if self.psd:
            # Post-processing: nearest PSD matrix (eigenvalues clipped at 0), so that
            # H ⪰ γI and ‖β̂‖ ≤ ‖Z‖/γ however noisy the release.
            w, U = np.linalg.eigh(sigma_x)
            sigma_x = (U * np.clip(w, 0, None)) @ U.T
        H = sigma_x + gamma * np.eye(D)
        beta = np.linalg.lstsq(H, st.Z, rcond=None)[0]
        self.round_mechanisms_ = [mech]
        self.round_sigma_ = np.array([mech.sigma])
        self.round_stats_ = [st]
        if transcript is not None:
            self.transcript_ = transcript
        cov = None
        if self.inference:
            omega, _ = self._psi_moments(X, y, [mech], [releaser()], beta)
            Hinv = np.linalg.pinv(H)
            cov = Hinv @ omega @ Hinv.T / K
        self._finish(beta, cov)
        return self
