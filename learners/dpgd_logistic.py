"""Logistic regression by full-batch DP gradient descent: a small, exactly accounted DP model to audit.

Each of the T steps releases the sum of the per-record gradients, each clipped to ℓ2 norm c, plus
float-safe Gaussian noise of std σ·c (:func:`~privaudit.mechanisms.gaussian.float_safe_gaussian`).
Under add/remove adjacency one step is a Gaussian mechanism of sensitivity c, so T steps compose
to μ-GDP with μ = √T/σ exactly (Dong, Roth & Su 2022, Cor. 3.3); σ is the smallest with
(ε, δ)-DP: σ = √T · :func:`~privaudit.mechanisms.accounting.gdp_sigma` (ε, δ), and the claim states
μ = √T/σ beside (ε, δ). The update is
θ ← θ − lr · (noisy sum): dividing by the number of records would publish it (it is private
under add/remove), so ``lr`` multiplies the sum itself.

The per-record gradient of the softmax cross-entropy is (p − e_y) ⊗ (x, 1), an outer product whose
ℓ2 norm is ‖p − e_y‖·‖(x, 1)‖, so clipping is a scaling of rows and the clipped sum one matrix product.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from privaudit.mechanisms.accounting import gdp_sigma
from privaudit.mechanisms.claim import PrivacyClaim
from privaudit.mechanisms.gaussian import float_safe_gaussian
from privaudit.mechanisms.randomness import resolve_seed

from .fitted_claim import FittedClaimMixin
from .input_validation import check_numeric_target
from .parameter_constraints import DPGD_LOGISTIC, ValidatedParamsMixin


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(1, keepdims=True)


class DPGDLogisticClassifier(ValidatedParamsMixin, FittedClaimMixin, ClassifierMixin, BaseEstimator):
    """Multinomial logistic regression trained by full-batch DP gradient descent (add/remove DP).

    Parameters
    ----------
    epsilon, delta : float
        The (ε, δ)-DP claim under add/remove adjacency; σ is calibrated from them.
    clip : float
        ℓ2 bound c on each record's gradient.
    steps : int
        Gradient steps T (each sees every record).
    lr : float
        Step size applied to the noisy gradient *sum*.
    random_state : int, Generator or None

    Attributes
    ----------
    coef_ : ndarray (n_classes, n_features)
    intercept_ : ndarray (n_classes,)
    classes_ : ndarray
    noise_multiplier_ : float
        σ of every step (noise std σ·c).
    seed_ : int
        The seed of the fit (``random_state=seed_`` reproduces it).
    claim_ : PrivacyClaim
    """

    _parameter_constraints = DPGD_LOGISTIC
    #: Noise actually added, as a fraction of the calibrated σ (1: correct; negative controls lower it).
    _noise_fraction = 1.0

    def __init__(self, *, epsilon: float = 1.0, delta: float = 1e-5, clip: float = 1.0, steps: int = 50,
                 lr: float = 0.01, random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.clip = clip
        self.steps = steps
        self.lr = lr
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: ArrayLike) -> DPGDLogisticClassifier:
        """Train on (X, y); sets ``coef_``, ``intercept_``, ``classes_``, ``noise_multiplier_``, ``claim_``.

        Parameters
        ----------
        X : array-like (n, d)
            features
        y : array-like (n,)
            class labels
        """
        X, y = validate_data(self, X, check_numeric_target(y, self))
        check_classification_targets(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        root, self.seed_ = resolve_seed(self.random_state, "random_state")
        gen = np.random.default_rng(root)
        n, d = X.shape
        k = max(self.classes_.size, 2)
        Xa = np.hstack([X, np.ones((n, 1))])
        Y = np.eye(k)[codes]
        sigma = math.sqrt(self.steps) * gdp_sigma(self.epsilon, self.delta)
        theta = np.zeros((k, d + 1))
        x_norm = np.linalg.norm(Xa, axis=1)
        for _ in range(self.steps):  # T sequential steps; each is vectorised over records
            R = _softmax(Xa @ theta.T) - Y
            scale = np.minimum(1.0, self.clip / np.maximum(np.linalg.norm(R, axis=1) * x_norm, 1e-300))
            total = (R * scale[:, None]).T @ Xa
            theta -= self.lr * float_safe_gaussian(total, self._noise_fraction * sigma * self.clip, gen)
        self.coef_, self.intercept_ = theta[:, :d], theta[:, d]
        self.noise_multiplier_ = sigma
        # The steps compose to μ-GDP exactly; the claim states μ beside its (ε, δ).
        self.claim_ = PrivacyClaim(epsilon=float(self.epsilon), delta=float(self.delta), adjacency="add-remove",
                                   mu=math.sqrt(self.steps) / sigma)
        return self

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """The class scores Xθᵀ + b, shape (n, n_classes).

        Parameters
        ----------
        X : array-like (n, d)
            features
        """
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, reset=False)
        return X @ self.coef_.T + self.intercept_

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Softmax of :meth:`decision_function` over the classes seen in ``fit``.

        Parameters
        ----------
        X : array-like (n, d)
            features
        """
        proba = _softmax(self.decision_function(X))
        return proba[:, :self.classes_.size] / proba[:, :self.classes_.size].sum(1, keepdims=True)

    def predict(self, X: ArrayLike) -> np.ndarray:
        """The most probable class.

        Parameters
        ----------
        X : array-like (n, d)
            features
        """
        best = self.predict_proba(X).argmax(1)  # checks that the model is fitted before classes_ is read
        return self.classes_[best]


class QuarterNoiseDPGDClassifier(DPGDLogisticClassifier):
    """Negative control: claims the (ε, δ) and μ of :class:`DPGDLogisticClassifier` but adds a quarter of its noise.

    Its true μ is four times the claimed one (ε at δ = 1e-5 about 4.6 for a claimed 1). It is not
    exported by :mod:`privaudit.learners`; model audits name it to show they catch an under-noised
    model (the ``models`` preset, the tests).
    """

    _noise_fraction = 0.25


__all__ = ["DPGDLogisticClassifier", "QuarterNoiseDPGDClassifier"]
