"""IWP-SGD: unbiased SGD on locally private examples (seed 001, §5, Algorithm 1).

The unbiased losses and gradients it descends are in :mod:`privaudit.learners.iwp_losses`.

**Algorithm 1.** Single-pass projected mini-batch SGD on the regularised loss
ℓ̃ + λ‖θ‖²/2: θ ← Π_{‖θ‖≤R}(θ − γ(mean_batch ∇ℓ̃ + λθ)). The same pass without
correction (S̃ = 1, σ = 0) on the release is "SGD – noisy data"; on clean data it is
"SGD – real data".
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.utils.validation import check_is_fitted

from privaudit.learners.fitted_claim import FittedClaimMixin
from privaudit.learners.parameter_constraints import ValidatedParamsMixin
from privaudit.mechanisms import PrivacyClaim
from privaudit.mechanisms.randomness import resolve_seed
from privaudit.mechanisms.validation import (
    InvalidInputError,
    InvalidParameterError,
    check_array,
)

from .input_validation import check_numeric_target
from .iwp_losses import glm_risk, glm_terms, mse_terms
from .release import LocalRelease, encode_binary_labels, release_dataset
from .weierstrass_transforms import (
    GLMLoss,
    check_series_variance,
    get_loss,
    inverse_weight,
    series_variance_limit,
    truncation_bias,
)
from privaudit.learners import parameter_constraints as _constraints


# --------------------------------------------------------------------------------------
# The single-pass projected mini-batch SGD (Algorithm 1)
# --------------------------------------------------------------------------------------
def _sgd_pass(U, offset, theta, terms, *, sigma2, step, lam, radius, batch_size, trace_every, batch_count):
    """One pass of Algorithm 1 over rows of U (= x̃ỹ for classification, x̃ for regression).

    ``terms(z, v)`` returns per-sample (ℓ̃, a, c) at margins z = Uθ − offset and v = σ²‖θ‖².
    Updates ``theta`` in place; returns (risk per batch, coef snapshots, their batch counts,
    max v). The loop does O(10) numpy calls per batch on preallocated data.
    """
    n = U.shape[0]
    n_batches = -(-n // batch_size)
    risks = np.empty(n_batches)
    snaps, snap_at = [], []
    vmax = 0.0
    half_lam = 0.5 * lam
    for b in range(n_batches):
        lo = b * batch_size
        Ub = U[lo : lo + batch_size]
        z = Ub @ theta
        if offset is not None:
            z -= offset[lo : lo + batch_size]
        sq = float(theta @ theta)
        v = sigma2 * sq
        if v > vmax:
            vmax = v
        ell, a, c = terms(z, v)
        inv_b = 1.0 / z.shape[0]
        risks[b] = ell.sum() * inv_b + half_lam * sq
        grad = a @ Ub
        grad *= inv_b
        shrink = lam if sigma2 == 0.0 else lam - sigma2 * (c if c.__class__ is float else c.sum() * inv_b)
        theta *= 1.0 - step * shrink
        theta -= step * grad
        if radius is not None:
            nrm = math.sqrt(theta @ theta)
            if nrm > radius:
                theta *= radius / nrm
        if trace_every and (batch_count + b + 1) % trace_every == 0:
            snaps.append(theta.copy())
            snap_at.append(batch_count + b + 1)
    if not np.all(np.isfinite(theta)):
        raise FloatingPointError(
            "SGD diverged (non-finite coefficients): reduce step, increase lam or set a projection radius"
        )
    return risks, snaps, snap_at, vmax


class _IWPBase(ValidatedParamsMixin, FittedClaimMixin, BaseEstimator):
    """Shared machinery of the IWP / noisy / real-data SGD estimators (not public).

    Parameters are validated by scikit-learn against ``_parameter_constraints`` when
    ``fit`` (or a first ``partial_fit``) is entered; the release's own parameters
    (ε, δ, split, bounds) are checked again by :func:`release_dataset`, which other callers use.
    """

    #: "classification" or "regression"
    _task = "classification"
    #: apply the inverse transforms (IWP) or not (noisy / real)
    _correct = True
    #: train on a local-DP release (True) or on clean data (False)
    _private = True

    def _loss_obj(self) -> GLMLoss | None:
        return get_loss(self.loss) if self._task == "classification" else None

    def _release(self, X, y, classes, rng) -> LocalRelease:
        """Privatise raw (X, y) on the simulated clients with this estimator's budget."""
        kw = {}
        if self._task == "regression":
            kw["label_bounds"] = self.label_bounds
        else:
            kw["classes"] = classes
        return release_dataset(
            X, y, epsilon=self.epsilon, delta=self.delta, split=self.split, bounds=self.bounds, task=self._task,
            calibration=self.calibration, random_state=rng, **kw,
        )

    def _as_training_data(self, X, y, classes, rng):
        """(U, offset, sigma², S̃, label variance, release-or-None) for one pass."""
        if isinstance(X, LocalRelease):
            if not self._private:
                raise InvalidInputError(f"{type(self).__name__} trains on clean data; got a LocalRelease")
            if y is not None:
                raise InvalidInputError("pass either a LocalRelease alone or raw (X, y), not both")
            rel = X
            if rel.task != self._task:
                raise InvalidInputError(f"{type(self).__name__} needs a {self._task} release, got task={rel.task!r}")
            Xd, yd = rel.X_tilde, rel.y_tilde
        else:
            if y is None:
                raise InvalidInputError("y is required when X is not a LocalRelease")
            Xd = check_array("X", X, ndim=2)
            yd = check_array("y", check_numeric_target(y, self), ndim=1)
            if Xd.shape[0] != yd.shape[0]:
                raise InvalidInputError(f"X and y must have the same number of rows, got {Xd.shape[0]} and {yd.shape[0]}")
            if self._private:
                rel = self._release(Xd, yd, classes, rng)
                Xd, yd = rel.X_tilde, rel.y_tilde
            else:
                rel = None
                if self._task == "classification":
                    yd, classes = encode_binary_labels(yd, classes)
                    self._classes_seen = classes
        if hasattr(self, "coef_") and Xd.shape[1] != self.coef_.shape[0]:
            raise InvalidInputError(f"X has {Xd.shape[1]} features, but the model was fitted with {self.coef_.shape[0]}")
        if rel is not None and hasattr(self, "sigma_") and (rel.sigma != self.sigma_ or rel.epsilon_y != self.epsilon_y_):
            raise InvalidInputError("partial_fit got a release with a different (sigma, epsilon_y) than earlier batches")
        correct = self._correct and rel is not None
        if self._task == "classification":
            U = Xd * yd[:, None]
            offset = None
            st = inverse_weight(rel.epsilon_y) if correct else 1.0
            label_var = 0.0
        else:
            U, offset, st = Xd, yd, 1.0
            label_var = rel.sigma_y**2 if correct else 0.0
        sigma2 = rel.sigma**2 if correct else 0.0
        return U, offset, sigma2, st, label_var, rel

    # ----- fitting --------------------------------------------------------------------
    def release_view(self, *, n_train: int = 2000, dim: int = 3, mode: str = "white-box", rng=None):
        """The mechanism standing for what this learner releases: one record's local release (x̃, ỹ).

        A clone is fitted on synthetic data
        (:func:`privaudit.learners.release_view.fit_on_synthetic`); the view is the
        :class:`~privaudit.learners.iwp_view.RecordRelease` of its ``release_``
        (features and label mechanisms, claim, declared bounds), which declares its
        worst-case pair and reconstruction. ``mode`` is not used.
        """
        # Imported here as in the other learners, whose views need privaudit.attacks.
        from privaudit.learners.iwp_view import RecordRelease
        from privaudit.learners.release_view import fit_on_synthetic

        if not self._private:
            raise InvalidParameterError(f"{type(self).__name__} trains on clean data: it releases nothing private to audit")
        fitted = fit_on_synthetic(self, n_train=n_train, dim=dim, rng=np.random.default_rng(rng))
        return RecordRelease.from_release(fitted)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, classes=None):
        """Fit by one pass of Algorithm 1 over (X, y) or over a :class:`LocalRelease` ``X``.

        Raw (X, y) are first released under this estimator's (``epsilon``, ``delta``,
        ``split``, ``bounds``) on the simulated clients (private estimators only).
        """
        for attr in ("coef_", "_rng", "_classes_seen"):
            if hasattr(self, attr):
                delattr(self, attr)
        return self._partial_fit(X, y, classes)

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None, classes=None):
        """Continue Algorithm 1 with one pass over a new chunk (raw data or a release chunk)."""
        return self._partial_fit(X, y, classes)

    def _partial_fit(self, X, y, classes):
        if not hasattr(self, "_rng"):
            root, self.seed_ = resolve_seed(self.random_state, "random_state")
            self._rng = np.random.default_rng(root)
        if classes is None and self._task == "classification" and hasattr(self, "classes_"):
            classes = self.classes_
        U, offset, sigma2, st, label_var, rel = self._as_training_data(X, y, classes, self._rng)
        if self.shuffle:
            order = self._rng.permutation(U.shape[0])
            U = U[order]
            offset = None if offset is None else offset[order]
        first = not hasattr(self, "coef_")
        if first:
            self.coef_ = np.zeros(U.shape[1])
            self.n_features_in_ = U.shape[1]
            self.n_batches_ = 0
            self.risk_trace_ = np.empty(0)
            self.coef_trace_ = np.empty((0, U.shape[1]))
            self.trace_batches_ = np.empty(0, dtype=int)
            self.max_variance_ = 0.0
            self._set_privacy_attrs(rel)
        loss = self._loss_obj()
        n_terms = self.n_terms if self._task == "classification" else None
        if loss is not None and not loss.closed_form and sigma2 > 0 and self.radius is not None:
            # ‖θ‖ <= R bounds the series variance σ²‖θ‖² in advance: refuse a divergent truncation.
            check_series_variance(loss, sigma2 * self.radius**2, n_terms)
        if loss is not None:
            def terms(z, v):
                return glm_terms(loss, z, v, st, n_terms)
        else:
            def terms(z, v):
                return mse_terms(z, v, label_var)
        with np.errstate(over="ignore"):
            risks, snaps, at, vmax = _sgd_pass(
                U, offset, self.coef_, terms, sigma2=sigma2, step=self.step, lam=self.lam, radius=self.radius,
                batch_size=self.batch_size, trace_every=self.trace_every, batch_count=self.n_batches_,
            )
        self.n_batches_ += risks.size
        self.risk_trace_ = np.concatenate([self.risk_trace_, risks])
        if snaps:
            self.coef_trace_ = np.vstack([self.coef_trace_, snaps])
            self.trace_batches_ = np.concatenate([self.trace_batches_, at])
        self.max_variance_ = max(self.max_variance_, vmax)
        if loss is not None and not loss.closed_form and sigma2 > 0:
            self._check_logistic_domain(loss, n_terms)
        return self

    def _set_privacy_attrs(self, rel: LocalRelease | None) -> None:
        if rel is None:
            self.claim_ = PrivacyClaim(math.inf, 0.0, "any")
            self.sigma_, self.epsilon_y_ = 0.0, math.inf
            self.release_ = None
            if self._task == "classification":
                self.classes_ = np.asarray(self._classes_seen)
            return
        self.claim_ = rel.claim
        self.sigma_, self.epsilon_y_ = rel.sigma, rel.epsilon_y
        self.release_ = rel
        if self._task == "classification":
            self.classes_ = np.asarray(rel.classes if rel.classes is not None else (-1.0, 1.0))
        else:
            self.sigma_y_ = rel.sigma_y

    def _check_logistic_domain(self, loss: GLMLoss, n_terms: int) -> None:
        """After a pass without a radius: report the truncation bias at the largest variance met."""
        limit = series_variance_limit(loss, n_terms)
        zgrid = np.linspace(-30, 30, 601)
        vm = min(self.max_variance_, limit * (1 - 1e-9))
        self.truncation_bias_ = float(np.abs(truncation_bias(loss, zgrid, vm, n_terms)).max())
        if self.max_variance_ >= limit:
            warnings.warn(
                f"the logistic W⁻¹ series truncated at n_terms={n_terms} was used at variance σ²‖θ‖² = "
                f"{self.max_variance_:.4g} >= {limit:.4g}, beyond the domain where its terms decrease; the "
                "gradient estimates are biased. Set a projection radius R with σ²R² below that limit.",
                UserWarning,
                stacklevel=3,
            )

    # ----- prediction / evaluation --------------------------------------------------------
    def decision_function(self, X) -> np.ndarray:
        """θᵀx for clean features ``X``."""
        check_is_fitted(self, "coef_")
        return check_array("X", X, ndim=2, dim=self.coef_.shape[0]) @ self.coef_

    def risk_path(self, X, y) -> np.ndarray:
        """Clean regularised risk (:func:`glm_risk`) of every coefficient snapshot in ``coef_trace_``."""
        check_is_fitted(self, "coef_")
        return glm_risk(self.coef_trace_, X, self._encode_eval(y), loss=self._risk_loss(), lam=self.lam)

    def risk(self, X, y) -> float:
        """Clean regularised risk of ``coef_`` on (X, y)."""
        check_is_fitted(self, "coef_")
        return glm_risk(self.coef_, X, self._encode_eval(y), loss=self._risk_loss(), lam=self.lam)

    def _risk_loss(self) -> str:
        return self.loss if self._task == "classification" else "mse"

    def _encode_eval(self, y):
        if self._task == "classification":
            return encode_binary_labels(y, self.classes_)[0]
        return check_array("y", y, ndim=1)


_LOSS_DOC = """
    Parameters
    ----------
    loss : {"exponential", "logistic", "quadratic"}
        Margin loss f of ℓ(θ, x, y) = f(θᵀxy).
    n_terms : int
        K ≥ 1, truncation of the logistic W⁻¹ series (ignored by the closed forms). With a
        ``radius`` R, σ²R² must lie in the series' domain (:func:`series_variance_limit`)
        or ``fit`` raises; otherwise a warning is emitted after fitting if it was left, and
        ``truncation_bias_`` holds sup_z of the truncation bias at the largest σ²‖θ‖² met.
"""

_COMMON_DOC = """    batch_size : int
        Mini-batch size (paper: 128).
    step : float
        Step size γ (paper: 1e−4).
    lam : float
        ℓ₂ regularisation λ of ℓ + λ‖θ‖²/2 (paper: 5).
    radius : float, optional
        Projection radius R of Θ = {‖θ‖ ≤ R}; ``None``: no projection.
    epsilon, delta, split, bounds, calibration
        Local budget used when ``fit`` receives raw data (see :func:`release_dataset`).
        Ignored when ``fit`` receives a :class:`LocalRelease`, whose σ, ε_y and claim are used.
    shuffle : bool
        Visit the records in a random order.
    trace_every : int, optional
        Store a copy of θ every that many batches in ``coef_trace_`` (for risk curves).
    random_state : int, Generator, SeedSequence or None
        Resolved by :func:`~privaudit.mechanisms.randomness.resolve_seed` at the first
        (partial) fit; the integer behind it is recorded as ``seed_``.
        Seeds the release noise and the shuffling.

    Attributes
    ----------
    coef_ : ndarray (p,)
    claim : PrivacyClaim
        Claim of the release trained on (ε = ∞ for clean data).
    release_ : LocalRelease or None
    sigma_, epsilon_y_ : float
    risk_trace_ : ndarray (n_batches_,)
        Per batch, the batch-mean loss estimate (+λ‖θ‖²/2) *before* the update: on fresh
        data an online estimate of the risk of the current θ (unbiased for IWP-SGD; the
        noisy risk for noisy SGD).
    coef_trace_, trace_batches_
        θ snapshots and the number of batches seen at each.
    max_variance_ : float
        Largest σ²‖θ‖² met during training.
"""


class _ClassifierBase(ClassifierMixin, _IWPBase):
    #: Declarative constraints (scikit-learn format), also used to validate configurations at load.
    _parameter_constraints = _constraints.IWP_CLASSIFIER

    def __init__(
        self, *, loss: str = "exponential", n_terms: int = 1, batch_size: int = 128, step: float = 1e-4,
        lam: float = 5.0, radius: float | None = None, epsilon: float = 5.0, delta: float = 1e-5,
        split: float = 0.5, bounds=None, calibration: str = "analytic", shuffle: bool = True,
        trace_every: int | None = None, random_state=None,
    ) -> None:
        self.loss = loss
        self.n_terms = n_terms
        self.batch_size = batch_size
        self.step = step
        self.lam = lam
        self.radius = radius
        self.epsilon = epsilon
        self.delta = delta
        self.split = split
        self.bounds = bounds
        self.calibration = calibration
        self.shuffle = shuffle
        self.trace_every = trace_every
        self.random_state = random_state

    def predict(self, X) -> np.ndarray:
        """Class of sign(θᵀx) (classes_[1] for θᵀx >= 0)."""
        scores = self.decision_function(X)  # first: NotFittedError before fit, not a missing classes_
        return self.classes_[(scores >= 0).astype(int)]


class IWPSGDClassifier(_ClassifierBase):
    """IWP-SGD (seed 001, Algorithm 1) for a linear classifier on an (ε, δ)-LDP release.

    Minimises E[f(θᵀxy)] + λ‖θ‖²/2 with f in {exponential e^{−z}, logistic log(1+e^{−z}),
    quadratic ½(z−1)²}, using the unbiased gradient a·x̃ỹ − σ²c·θ of §5.2 / App. D.6.
    Labels: any binary labels, mapped to {−1, 1} (see :func:`encode_binary_labels`).
    """


class NoisySGDClassifier(_ClassifierBase):
    """"SGD – noisy data": Algorithm 1 on the release with the plain loss f(θᵀx̃ỹ), no correction.

    Converges to the minimiser of the *noisy* risk T[ℓ] (Thm 4.2), which is biased.
    Same parameters as :class:`IWPSGDClassifier` (``n_terms`` unused).
    """

    _correct = False


class SGDRealClassifier(_ClassifierBase):
    """"SGD – real data": Algorithm 1 on clean (X, y) (non-private reference, claim ε = ∞).

    Same parameters as :class:`IWPSGDClassifier`; the privacy parameters are unused.
    """

    _correct = False
    _private = False


class _RegressorBase(RegressorMixin, _IWPBase):
    #: Declarative constraints (scikit-learn format), also used to validate configurations at load.
    _parameter_constraints = _constraints.IWP_REGRESSOR

    _task = "regression"

    def __init__(
        self, *, batch_size: int = 128, step: float = 5e-6, lam: float = 10.0, radius: float | None = None,
        epsilon: float = 5.0, delta: float = 1e-5, split: float = 0.5, bounds=None, label_bounds=None,
        calibration: str = "analytic", shuffle: bool = True, trace_every: int | None = None, random_state=None,
    ) -> None:
        self.batch_size = batch_size
        self.step = step
        self.lam = lam
        self.radius = radius
        self.epsilon = epsilon
        self.delta = delta
        self.split = split
        self.bounds = bounds
        self.label_bounds = label_bounds
        self.calibration = calibration
        self.shuffle = shuffle
        self.trace_every = trace_every
        self.random_state = random_state

    def predict(self, X) -> np.ndarray:
        """θᵀx."""
        return self.decision_function(X)

    def fit(self, X, y=None):
        """Fit by one pass of Algorithm 1 over (X, y) or over a regression :class:`LocalRelease`."""
        return super().fit(X, y)

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None):
        """Continue Algorithm 1 with one pass over a new chunk (raw data or a release chunk)."""
        return self._partial_fit(X, y, None)


class IWPSGDRegressor(_RegressorBase):
    """IWP-SGD for least squares on a release with Gaussian features and labels (seed 001, App. E.2).

    Unbiased gradient (θᵀx̃ − ỹ)x̃ − σ²θ of the double-Weierstrass-inverted loss
    ½(θᵀx̃ − ỹ)² − ½(σ²‖θ‖² + σ_y²). Labels are released on the declared ``label_bounds``.
    Defaults follow App. E.2 (λ = 10, γ = 5e−6, batch 128).
    """


class NoisySGDRegressor(_RegressorBase):
    """Least-squares SGD on the regression release without correction (biased: attenuation bias)."""

    _correct = False


class SGDRealRegressor(_RegressorBase):
    """Least-squares SGD on clean (X, y): the "SGD – real data" reference for regression (claim ε = ∞)."""

    _correct = False
    _private = False


for _cls in (IWPSGDClassifier, NoisySGDClassifier, SGDRealClassifier):
    _cls.__doc__ += _LOSS_DOC + _COMMON_DOC
for _cls in (IWPSGDRegressor, NoisySGDRegressor, SGDRealRegressor):
    _cls.__doc__ += """
    Parameters
    ----------
    label_bounds : (low, high), optional
        Declared label interval of the regression release (sensitivity high − low).
""" + _COMMON_DOC
del _cls
