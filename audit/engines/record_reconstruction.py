"""Training-record reconstruction by an informed adversary (Balle, Cherubin & Hayes 2022).

The adversary knows every training record but one, z_i = (x_i, y_i), the training algorithm and
the released model; :func:`audit_record_reconstruction` plays it and returns the reconstructed
record, its error and the bounds that apply.

**Closed forms** (the fitted model is a stationary point of its objective; every term but z_i's
is known; :data:`INVERTERS`, keyed by estimator class):

* ridge and least squares (``Ridge``, ``LinearRegression``), objective ‖y − Xw − b‖² + α‖w‖²:
  Σ_j r_j = 0 and Σ_j r_j x_j = α w with r_j = y_j − x_jᵀw − b, so r_i = −Σ_{j≠i} r_j,
  x_i = (α w − Σ_{j≠i} r_j x_j)/r_i and y_i = r_i + x_iᵀw + b (exact when r_i ≠ 0);
* logistic regression (``LogisticRegression``, L2 penalty, binary), objective
  ½‖w‖² + C Σ_j ℓ_j: Σ_j g_j = 0 and C Σ_j g_j x_j + w = 0 with g_j = p_j − y_j, so
  g_i = −Σ_{j≠i} g_j, x_i = (−w/C − Σ_{j≠i} g_j x_j)/g_i and y_i = 1[g_i < 0] (as exact as the
  solver's stationarity);
* Gaussian naive Bayes (``GaussianNB``): the class whose count grew by one, and
  x_i = n_c θ_c − Σ_{j≠i, y_j=c} x_j.

**Under a Gaussian release of the parameters** (``noise_std`` = σ: θ̃ = θ(D) + N(0, σ²I), output
perturbation), the adversary applies the same inversion to θ̃. Its error is held against

* the Cramér–Rao bound tr(I(z)⁻¹) of Guo et al. (2022), I(z) = J(z)ᵀJ(z)/σ² with J = ∂θ/∂z
  (central differences of refits), on the continuous coordinates of z: an unbiased
  reconstruction's mean squared error cannot be smaller;
* the ReRo bound of Hayes, Mahloujifar & Balle (2023) on exact reconstruction: with the record
  drawn uniformly from ``n_candidates`` candidates (κ = 1/k), any adversary succeeds with
  probability at most Φ(Φ⁻¹(κ) + μ), μ = max_{a,b} ‖θ(z_a) − θ(z_b)‖/σ
  (:func:`~privaudit.audit.stats.estimation_bounds.rero_bound`); the adversary here picks the
  candidate whose θ is nearest θ̃ (maximum likelihood).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.naive_bayes import GaussianNB

from privaudit.mechanisms.randomness import RandomLike, int_seed, keyed_rng, resolve_seed
from privaudit.mechanisms.validation import (
    InvalidInputError,
    InvalidParameterError,
    ParameterTypeError,
    check_array,
    check_int,
    check_positive,
)

from privaudit.audit.engines.model_training import fit_model
from privaudit.audit.results import AuditResult
from privaudit.audit.stats.epsilon_bounds import clopper_pearson_lower, clopper_pearson_upper
from privaudit.audit.stats.estimation_bounds import crb, rero_bound
from privaudit.audit.verdicts import Verdict

#: Relative step of the central differences of J = ∂θ/∂z.
FD_STEP = 1e-4
#: |mean error|/s.e. above which a coordinate's bias is significant (the Cramér–Rao bound then does not bind).
BIAS_Z = 3.5
#: Largest share of the summed squared error one draw may carry for the sample MSE to be trusted (light tails).
MAX_SHARE = 0.05


@dataclass(frozen=True)
class Inverter:
    """How to read a fitted estimator's parameters and invert its stationarity for the missing record.

    ``params(fitted) -> θ`` (a flat vector); ``invert(θ, fitted, X_rest, y_rest) -> (x, y)``
    reconstructs the record from (possibly noisy) parameters θ; ``continuous_label``: whether y
    is a continuous coordinate of z (regression) or a class (excluded from the Fisher bound).
    """

    params: Callable[[Any], np.ndarray]
    invert: Callable[[np.ndarray, Any, np.ndarray, np.ndarray], tuple[np.ndarray, Any]]
    continuous_label: bool


def _linear_params(fitted) -> np.ndarray:
    return np.r_[np.ravel(fitted.coef_), np.ravel(fitted.intercept_)]


def _ridge_invert(theta, fitted, X, y):
    w, b = theta[:-1], theta[-1]
    alpha = float(getattr(fitted, "alpha", 0.0))
    r = y - X @ w - b
    r_i = -r.sum()
    if r_i == 0:
        raise InvalidInputError("the record is fitted exactly (zero residual): its features are not identifiable")
    x = (alpha * w - r @ X) / r_i
    return x, float(r_i + x @ w + b)


def _logistic_invert(theta, fitted, X, y):
    if np.ravel(fitted.classes_).size != 2:
        raise InvalidParameterError("the closed form covers binary logistic regression; got "
                                    f"{np.ravel(fitted.classes_).size} classes")
    if getattr(fitted, "penalty", "l2") not in ("l2", "deprecated") or getattr(fitted, "l1_ratio", None) not in (None, 0, 0.0):
        raise InvalidParameterError("the closed form needs the L2 penalty")
    w, b = theta[:-1], theta[-1]
    C = float(fitted.C)
    yy = (y == fitted.classes_[1]).astype(float)
    g = 1.0 / (1.0 + np.exp(-(X @ w + b))) - yy
    g_i = -g.sum()
    if g_i == 0:
        raise InvalidInputError("the record's gradient is zero: its features are not identifiable")
    x = (-w / C - g @ X) / g_i
    return x, fitted.classes_[1] if g_i < 0 else fitted.classes_[0]


def _nb_params(fitted) -> np.ndarray:
    return np.r_[np.ravel(fitted.theta_), fitted.class_count_]


def _nb_invert(theta, fitted, X, y):
    k, d = fitted.theta_.shape
    means, counts = theta[:k * d].reshape(k, d), theta[k * d:]
    others = np.array([(y == c).sum() for c in fitted.classes_], dtype=float)
    c = int(np.argmax(counts - others))
    x = counts[c] * means[c] - X[y == fitted.classes_[c]].sum(0)
    return x, fitted.classes_[c]


#: Estimator class -> its inverter; subclasses are found through the MRO. Register more with :func:`register_inverter`.
INVERTERS: dict[type, Inverter] = {
    Ridge: Inverter(_linear_params, _ridge_invert, True),
    LinearRegression: Inverter(_linear_params, _ridge_invert, True),
    LogisticRegression: Inverter(_linear_params, _logistic_invert, False),
    GaussianNB: Inverter(_nb_params, _nb_invert, False),
}


def register_inverter(cls: type, inverter: Inverter, *, force: bool = False) -> None:
    """Register the closed form of an estimator class; a taken class raises unless ``force``.

    Parameters
    ----------
    cls : type
        the estimator class
    inverter : Inverter
    force : bool
        replace a registered one
    """
    if cls in INVERTERS and not force:
        raise InvalidParameterError(f"an inverter for {cls.__name__} is registered already; pass force=True")
    INVERTERS[cls] = inverter


def inverter_of(estimator: Any) -> Inverter:
    """The registered inverter of ``estimator``'s class (or of its nearest registered base).

    Parameters
    ----------
    estimator : Any
        a scikit-learn estimator
    """
    for cls in type(estimator).__mro__:
        if cls in INVERTERS:
            return INVERTERS[cls]
    raise ParameterTypeError(f"no closed-form reconstruction is known for {type(estimator).__name__}; "
                             f"known: {sorted(c.__name__ for c in INVERTERS)} (register_inverter adds one)")


@dataclass(frozen=True)
class NoisyRelease:
    """The reconstruction under a Gaussian release of the parameters (σ = ``noise_std``), over ``trials`` draws.

    ``mse`` is the mean squared error of the continuous coordinates of z, ``mse_ci`` its 95 %
    interval, ``crb`` the Cramér–Rao bound tr(I⁻¹) on them (Guo et al. 2022), which binds unbiased
    reconstructions with a finite variance only: ``bias_z`` is the largest |mean error|/s.e. over the
    coordinates, and ``crb_applies`` says that no coordinate's bias is significant (|z| < 3.5) and that
    no single draw carries more than :data:`MAX_SHARE` of the summed squared error (an inversion that
    divides by a noisy quantity, as the closed forms do, is a ratio estimator whose moments need not
    exist far from the record: its sample MSE then says nothing, and a biased or heavy-tailed
    reconstruction may beat the bound legitimately). ``crb_z`` = (MSE − CRB)/s.e. tests "MSE ≥ CRB"
    with the s.e. the null gives an efficient reconstruction, whose error is the quadratic form of a
    Gaussian of covariance Σ = (JᵀJ)⁻¹σ²: Var = 2 tr(Σ²)/trials (the sample's own s.e. shrinks with
    its mean and would over-reject). ``rero_success`` the
    rate of exact reconstruction among ``n_candidates`` candidates and ``rero_upper`` its upper
    Clopper–Pearson bound, ``rero_bound`` the ReRo bound at κ = 1/k and ``rero_mu``.
    """

    noise_std: float
    trials: int
    mse: float
    mse_ci: tuple[float, float]
    crb: float
    bias_z: float
    crb_applies: bool
    crb_z: float
    n_candidates: int
    rero_success: float
    rero_upper: float
    rero_bound: float
    rero_mu: float


@dataclass(frozen=True)
class RecordReconstruction(AuditResult):
    """An informed adversary's reconstruction of training record ``index`` from the released model."""

    kind: ClassVar[str] = "record-reconstruction"

    index: int
    estimator: str
    record: np.ndarray
    label: Any
    reconstructed: np.ndarray
    reconstructed_label: Any
    reconstruction_error: float
    exact: bool
    noisy: NoisyRelease | None
    verdict: str
    seed: int
    seconds: float

    def summary(self) -> str:
        """The reconstruction's error and, under noise, its error against the Cramér–Rao and ReRo bounds."""
        lines = [f"informed-adversary reconstruction of record {self.index} from {self.estimator}: "
                 f"error {self.reconstruction_error:.3g} ({'exact' if self.exact else 'not exact'}), verdict {self.verdict}"]
        if self.noisy is not None:
            n = self.noisy
            lines.append(f"  with parameters released under N(0, {n.noise_std:g}²): MSE {n.mse:.4g} "
                         f"[{n.mse_ci[0]:.4g}, {n.mse_ci[1]:.4g}] against the Cramér–Rao bound {n.crb:.4g}"
                         + ("" if n.crb_applies else f" (which does not bind: the reconstruction is biased "
                                                     f"or heavy-tailed, bias |z| = {n.bias_z:.1f})"))
            lines.append(f"  exact reconstruction among {n.n_candidates} candidates: {n.rero_success:.3f} "
                         f"(upper {n.rero_upper:.3f}) against the ReRo bound {n.rero_bound:.3f} (μ = {n.rero_mu:.3g})")
        return "\n".join(lines)


def _theta_at(estimator, inv: Inverter, X_rest, y_rest, x, label, seed) -> np.ndarray:
    return inv.params(fit_model(estimator, np.vstack([X_rest, x]), np.r_[y_rest, label], seed))


def _jacobian(estimator, inv, X_rest, y_rest, x, label, seed) -> np.ndarray:
    """J = ∂θ/∂z by central differences (z = x, and y when it is continuous)."""
    z = np.r_[x, label] if inv.continuous_label else np.asarray(x, dtype=float)
    cols = []
    for j in range(z.size):  # one pair of refits per coordinate of z
        h = FD_STEP * max(1.0, abs(z[j]))
        zp, zm = z.copy(), z.copy()
        zp[j] += h
        zm[j] -= h
        tp = _theta_at(estimator, inv, X_rest, y_rest, zp[:x.size], zp[-1] if inv.continuous_label else label, seed)
        tm = _theta_at(estimator, inv, X_rest, y_rest, zm[:x.size], zm[-1] if inv.continuous_label else label, seed)
        cols.append((tp - tm) / (2 * h))
    return np.stack(cols, axis=1)


def _noisy_release(estimator, fitted, inv, X_rest, y_rest, x, label, theta, seed, sigma, trials, n_candidates,
                   candidates_X, rng) -> NoisyRelease:
    J = _jacobian(estimator, inv, X_rest, y_rest, x, label, seed)
    bound = float(crb(J.T @ J / sigma**2))
    cov = np.linalg.pinv(J.T @ J) * sigma**2
    null_se = float(np.sqrt(2 * np.trace(cov @ cov) / trials))
    truth = np.r_[x, label] if inv.continuous_label else np.asarray(x, dtype=float)
    noisy = theta + sigma * rng.standard_normal((trials, theta.size))
    recs = []
    for t in noisy:  # trials reconstructions, each a closed form over the known records
        xr, yr = inv.invert(t, fitted, X_rest, y_rest)
        recs.append(np.r_[xr, yr] if inv.continuous_label else xr)
    diff = np.asarray(recs) - truth
    err = (diff**2).sum(1)
    se = err.std(ddof=1) / np.sqrt(trials)
    with np.errstate(invalid="ignore", divide="ignore"):
        bias_z = float(np.nanmax(np.abs(diff.mean(0)) / (diff.std(0, ddof=1) / np.sqrt(trials))))
    # ReRo game: the record is one of k candidates (the true one and k − 1 others), uniformly.
    cands_theta = np.stack([theta] + [_theta_at(estimator, inv, X_rest, y_rest, cx, label, seed)
                                      for cx in candidates_X[:n_candidates - 1]])
    picks = rng.integers(0, n_candidates, size=trials)
    obs = cands_theta[picks] + sigma * rng.standard_normal((trials, theta.size))
    guess = ((obs[:, None, :] - cands_theta[None]) ** 2).sum(-1).argmin(1)
    wins = int((guess == picks).sum())
    diffs = np.sqrt(((cands_theta[:, None] - cands_theta[None]) ** 2).sum(-1)).max()
    mu = float(diffs / sigma)
    return NoisyRelease(sigma, trials, float(err.mean()), (float(err.mean() - 1.96 * se), float(err.mean() + 1.96 * se)),
                        bound, bias_z, bool(bias_z < BIAS_Z and err.max() <= MAX_SHARE * err.sum()),
                        float((err.mean() - bound) / null_se), n_candidates, wins / trials, float(clopper_pearson_upper(wins, trials, 0.95)),
                        rero_bound(1.0 / n_candidates, mu=mu), mu)


def audit_record_reconstruction(estimator: Any, X: ArrayLike, y: ArrayLike, *, index: int,
                                noise_std: float | None = None, trials: int = 200, n_candidates: int = 10,
                                tolerance: float = 1e-6, rng: RandomLike = None) -> RecordReconstruction:
    """Reconstruct training record ``index`` as an informed adversary, with the bounds that apply.

    Parameters
    ----------
    estimator : scikit-learn estimator
        One with a registered closed form (:data:`INVERTERS`); cloned and fitted on (X, y).
    X, y : arrays
        The training set; the adversary knows every row but ``index``.
    index : int
        The target record.
    noise_std : float, optional
        σ of a Gaussian release of the fitted parameters; adds the Cramér–Rao and ReRo comparison.
    trials : int
        Noise draws for the error and for the ReRo game.
    n_candidates : int
        Size k of the ReRo prior (the target and k − 1 other records of X).
    tolerance : float
        Error (Euclidean, features and label) under which a noiseless reconstruction is exact.
    rng : int, Generator or None

    Returns
    -------
    RecordReconstruction
        ``verdict`` is ``fail`` when an unbiased, light-tailed noisy reconstruction beats the Cramér–Rao
        bound, or exact reconstruction beats the ReRo bound, each at 99.9 % confidence; else ``info``.
    """
    Xa = check_array("X", X, ndim=2)
    ya = np.asarray(y)
    if ya.shape != (Xa.shape[0],):
        raise InvalidInputError(f"y must have shape ({Xa.shape[0]},), got {ya.shape}")
    i = check_int("index", index, minimum=0, maximum=Xa.shape[0] - 1)
    inv = inverter_of(estimator)
    root, seed = resolve_seed(rng)
    fit_seed = int_seed(keyed_rng(root, 0))
    t0 = time.perf_counter()
    rest = np.ones(Xa.shape[0], dtype=bool)
    rest[i] = False
    X_rest, y_rest = Xa[rest], ya[rest]
    fitted = fit_model(estimator, np.vstack([X_rest, Xa[i]]), np.r_[y_rest, ya[i]], fit_seed)
    theta = inv.params(fitted)
    x_hat, y_hat = inv.invert(theta, fitted, X_rest, y_rest)
    truth = np.r_[Xa[i], float(ya[i])] if inv.continuous_label else Xa[i]
    guess = np.r_[x_hat, float(y_hat)] if inv.continuous_label else x_hat
    error = float(np.linalg.norm(guess - truth))
    label_ok = inv.continuous_label or y_hat == ya[i]
    noisy = None
    verdict = Verdict.INFO
    if noise_std is not None:
        sigma = check_positive("noise_std", noise_std)
        k = check_int("n_candidates", n_candidates, minimum=2, maximum=Xa.shape[0])
        gen = keyed_rng(root, 1)
        others = gen.choice(np.flatnonzero(rest), size=k - 1, replace=False)
        noisy = _noisy_release(estimator, fitted, inv, X_rest, y_rest, Xa[i], ya[i], theta, fit_seed, sigma,
                               check_int("trials", trials, minimum=2), k, Xa[others], gen)
        wins = int(round(noisy.rero_success * noisy.trials))
        # A false alarm is costly: beating either bound must hold at 99.9 % (one-sided z = −3.09).
        beats = (noisy.crb_applies and noisy.crb_z < -3.09) or clopper_pearson_lower(wins, noisy.trials, 0.999) > noisy.rero_bound
        verdict = Verdict.FAIL if beats else Verdict.INFO
    return RecordReconstruction(i, type(estimator).__name__, Xa[i].copy(), ya[i], x_hat, y_hat, error,
                                bool(error <= tolerance and label_ok), noisy, verdict, seed,
                                time.perf_counter() - t0)


__all__ = ["BIAS_Z", "FD_STEP", "MAX_SHARE", "INVERTERS", "Inverter", "NoisyRelease", "RecordReconstruction", "audit_record_reconstruction",
           "inverter_of", "register_inverter"]
