"""DP-SGD FedAvg with one example per client: seed 000's baseline (Experiments appendix).

Every client takes part in every round t = 0, …, T − 1. Client i computes its
squared-loss gradient g_i = x_i (x_iᵀβ − y_i), clips it to ℓ₂ norm C,

    ḡ_i = g_i · min(1, C/‖g_i‖),   ‖g_i‖ = |x_iᵀβ − y_i|·‖x_i‖   (closed form: no per-client loop),

and the server releases the noisy mean (Σ_i ḡ_i + N(0, σ_t² I))/K, then steps
β ← Π_{‖β‖ ≤ radius}(β − lr · noisy mean).

Privacy (central DP, adjacency "replace-one": one client's (x, y) replaced). Replacing
one client moves the clipped sum by at most 2C, so each round is ρ_t = (2C)²/(2σ_t²)-zCDP
and ρ adds over rounds (no subsampling amplification: full participation). The
total (ε, δ) is converted to ρ by ``conversion`` (see
:mod:`privaudit.learners.modulated`) and split evenly, σ_t = 2C/sqrt(2ρ/T).
Unlike the modulated learners this protects y as well, but assumes a trusted
aggregator that adds the noise.

Floating point: the noisy sum is released on the dithered lattice of
:func:`~privaudit.mechanisms.gaussian.float_safe_gaussian` (Σ_i ḡ_i + N(0, σ_t² I) rounded
onto γ(ℤ + u)^D, u independent of the data: post-processing, same claim), not as
``fl(Σ ḡ + σz)``, whose low-order bits depend on the data (Mironov 2012). The round's
normals are the same draws as before, then the offsets: at a given seed the release
moves by at most γ/K, γ ≤ σ_t·2⁻¹⁰.

Streaming as in the modulated learners: per-block sums in block order, noise from
a generator keyed by the round, so results do not depend on ``chunk_size``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context

from privaudit.learners import parameter_constraints as _constraints
from privaudit.learners.fitted_claim import FittedClaimMixin
from privaudit.learners.parameter_constraints import ValidatedParamsMixin
from privaudit.mechanisms.accounting import sigma_for_rho, zcdp_rho
from privaudit.mechanisms.claim import PrivacyClaim
from privaudit.mechanisms.gaussian import float_safe_gaussian
from privaudit.mechanisms.randomness import keyed_rng, resolve_seed
from .input_validation import check_data, check_predict_data
from .modulated_server import iter_blocks, project_ball


def clipped_gradient_sum(X: np.ndarray, y: np.ndarray, beta: np.ndarray, clip: float) -> np.ndarray:
    """Σ_i g_i min(1, C/‖g_i‖) for g_i = x_i(x_iᵀβ − y_i), vectorised over clients; shape (d,).

    g_i is the gradient of ½(x_iᵀβ − y_i)²; a zero gradient is kept as is.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Client features (one example per client).
    y : ndarray of shape (n,)
        Client responses.
    beta : ndarray of shape (d,)
        Current parameters β.
    clip : float
        Clip norm C > 0.

    Returns
    -------
    ndarray of shape (d,)
        The clipped sum, of ℓ₂ norm at most nC.
    """
    r = X @ beta - y
    norms = np.abs(r) * np.linalg.norm(X, axis=1)
    with np.errstate(divide="ignore"):
        scale = np.minimum(1.0, clip / norms)  # norm 0 → inf → 1
    return X.T @ (r * scale)


class FedAvgDPSGDRegressor(ValidatedParamsMixin, FittedClaimMixin, RegressorMixin, BaseEstimator):
    """Full-participation DP-SGD FedAvg for linear regression, one example per client.

    Parameters
    ----------
    epsilon, delta : float
        Total (ε, δ) under replace-one adjacency.
    clip : float
        Per-client clip norm C > 0.
    learning_rate : float
        Step size on the noisy mean gradient.
    rounds : int
        T ≥ 1 rounds, each a full pass over clients.
    radius : float
        Projection radius.
    conversion : {"gaussian", "rdp", "seed"}
        zCDP → (ε, δ) conversion used to split the budget.
    chunk_size, fit_intercept, random_state
        As in :class:`~privaudit.learners.ModulatedRegressor`.

    Attributes
    ----------
    coef_, intercept_ : fitted parameters.
    claim : PrivacyClaim (adjacency "replace-one", μ = sqrt(2ρ), ρ).
    round_sigma_ : ndarray (T,) noise std of the clipped sum per round.
    seed_ : int, the seed of the fit (``random_state=seed_`` reproduces it).
    coef_path_ : ndarray (T + 1, p) iterates.
    transcript_ : ndarray (T, p), the released noisy mean gradients (everything the server publishes).
    """

    #: Declarative constraints (scikit-learn format), checked when ``fit`` is entered and by configurations at load.
    _parameter_constraints = _constraints.FEDAVG

    def __init__(self, *, epsilon: float = 1.0, delta: float = 1e-5, clip: float = 1.0, learning_rate: float = 0.1,
                 rounds: int = 10, radius: float = 10.0, conversion: str = "gaussian", chunk_size: int | None = None,
                 fit_intercept: bool = False,
                 random_state: np.random.Generator | np.random.SeedSequence | int | None = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.clip = clip
        self.learning_rate = learning_rate
        self.rounds = rounds
        self.radius = radius
        self.conversion = conversion
        self.chunk_size = chunk_size
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: ArrayLike) -> "FedAvgDPSGDRegressor":
        """Run T rounds of clipped, noised full-batch gradient steps; returns self.

        Round t releases (Σ_i clip_C(g_i(β_t)) + N(0, σ² I))/K with σ calibrated so the T rounds
        spend zCDP ρ (sensitivity 2C under replace-one), then β_{t+1} = Π_R(β_t − η·release).

        Parameters
        ----------
        X : array-like of shape (K, p)
            One example per client.
        y : array-like of shape (K,)
            Responses.

        Returns
        -------
        FedAvgDPSGDRegressor
            self, with the attributes listed in the class docstring.
        """
        eps, delta, C, lr = float(self.epsilon), float(self.delta), float(self.clip), float(self.learning_rate)
        T, radius = int(self.rounds), float(self.radius)
        X, y = check_data(X, y, self.chunk_size, self)
        K = X.shape[0]
        D = X.shape[1] + (1 if self.fit_intercept else 0)
        rho = zcdp_rho(eps, delta, self.conversion)
        sigma = sigma_for_rho(rho / T, 2 * C)  # replace-one sensitivity of the clipped sum: 2C
        self.claim_ = PrivacyClaim(eps, delta, "replace-one", mu=math.sqrt(2 * rho), rho=rho)
        root, self.seed_ = resolve_seed(self.random_state, "random_state")
        beta = np.zeros(D)
        path, released = [beta.copy()], []
        for t in range(T):
            total = np.zeros(D)
            for _, Xb, yb in iter_blocks(X, y, self.chunk_size, self.fit_intercept):
                total += clipped_gradient_sum(Xb, yb, beta, C)
            noisy = float_safe_gaussian(total, sigma, keyed_rng(root, t, 0)) / K
            released.append(noisy)
            beta = project_ball(beta - lr * noisy, radius)
            path.append(beta.copy())
        self.round_sigma_ = np.full(T, sigma)
        self.coef_path_ = np.array(path)
        self.transcript_ = np.array(released)
        if self.fit_intercept:
            self.coef_, self.intercept_ = beta[:-1].copy(), float(beta[-1])
        else:
            self.coef_, self.intercept_ = beta.copy(), 0.0
        return self


    def predict(self, X: ArrayLike) -> np.ndarray:
        """ŷ = X coef_ + intercept_.

        Parameters
        ----------
        X : array-like of shape (n, p)
            Features.

        Returns
        -------
        ndarray of shape (n,)
        """
        return check_predict_data(self, X) @ self.coef_ + self.intercept_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True
        return tags
