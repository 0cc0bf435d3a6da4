"""Task-agnostic local-DP release of a labelled dataset (seed 001, §2, eq. 1; App. E.2).

Every record (x, y) is released once and for all, before any learning, as

* x̃ = clip(x) + N(0, σ² I_p): the Gaussian mechanism on a *declared* bounded box, released
  float-safely on its dithered lattice (:func:`~privaudit.mechanisms.gaussian.float_safe_gaussian`; the extra
  uniform dither of width γ ≤ σ·2⁻¹⁰ is post-processing and adds variance γ²/12)
  [lo, hi] ⊂ R^p. Local DP protects a record against *any* other record of the domain
  (replace-one of the client's whole record), so the ℓ₂ sensitivity is the box's
  diameter ‖hi − lo‖₂; σ is calibrated to (ε_x, δ_x) by the foundation's
  :class:`~privaudit.mechanisms.GaussianMechanism` (analytic calibration by default).
* ỹ = RR_{ε_y}(y) for binary classification (pure ε_y-LDP), or ỹ = clip(y) + N(0, σ_y²)
  on a declared label interval for regression (App. E.2), released the same way.

The total budget is split by basic composition: ε_x = split·ε, ε_y = (1 − split)·ε. For
classification δ goes to the features (RR is pure); for regression δ_x = split·δ and
δ_y = (1 − split)·δ. The release then satisfies (ε, δ)-LDP, claimed with adjacency
``"any"`` (local DP over the whole declared domain).

Bounds must be declared independently of the data. If they are not, they are derived
from the data (coordinate-wise min/max) and a :class:`PrivacyLeakWarning` is emitted:
such bounds depend on every record and are not covered by the claim.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from privaudit.mechanisms import GaussianMechanism, PrivacyClaim, RandomizedResponse
from privaudit.mechanisms.gaussian import float_safe_gaussian
from privaudit.mechanisms.validation import (
    InvalidInputError,
    InvalidParameterError,
    PrivacyLeakWarning,
    check_array,
    check_delta,
    check_epsilon,
    check_interval,
)

TASKS = ("classification", "regression")


@dataclass(frozen=True, eq=False)
class LocalRelease:
    """A released dataset: the only thing a learner on the server side ever sees.

    Equality is identity (a release is one published object, and holds arrays).

    Attributes
    ----------
    X_tilde : ndarray (n, p)
        Released features x̃ = clip(x) + N(0, σ² I).
    y_tilde : ndarray (n,)
        Released labels: values in {−1, 1} (classification) or clip(y) + N(0, σ_y²) (regression).
    sigma : float
        Feature noise std σ (the Weierstrass variance is σ² per coordinate).
    epsilon_y : float
        Label budget ε_y (RR parameter for classification; Gaussian ε for regression).
    claim : PrivacyClaim
        (ε, δ)-LDP of the whole release, adjacency ``"any"``.
    task : {"classification", "regression"}
    sigma_y : float
        Label noise std (regression; 0 for classification).
    epsilon_x, delta_x : float
        Feature budget.
    bounds : tuple of ndarray
        The feature box (lo, hi) the sensitivity was computed on.
    label_bounds : tuple of float or None
        The label interval (regression).
    classes : tuple or None
        Original label values mapped to (−1, +1) (classification).
    n_clipped : int
        Number of records with a feature (or label) outside the declared bounds, clipped.
    feature_mechanism, label_mechanism
        The mechanisms used (for audits: ``.claim``, ``.sample``, ``.log_density``).
    """

    X_tilde: np.ndarray = field(repr=False)
    y_tilde: np.ndarray = field(repr=False)
    sigma: float
    epsilon_y: float
    claim: PrivacyClaim
    task: str = "classification"
    sigma_y: float = 0.0
    epsilon_x: float = math.nan
    delta_x: float = math.nan
    bounds: tuple = field(default=(), repr=False)
    label_bounds: tuple | None = None
    classes: tuple | None = None
    n_clipped: int = 0
    feature_mechanism: GaussianMechanism | None = field(default=None, repr=False)
    label_mechanism: RandomizedResponse | GaussianMechanism | None = field(default=None, repr=False)

    @property
    def n_samples(self) -> int:
        return self.X_tilde.shape[0]

    @property
    def n_features(self) -> int:
        return self.X_tilde.shape[1]

    def __len__(self) -> int:
        return self.n_samples

    def subset(self, index: ArrayLike | slice) -> LocalRelease:
        """The release restricted to rows ``index`` (e.g. a batch for ``partial_fit``).

        Parameters
        ----------
        index : slice, int array or bool mask
            Rows to keep (numpy indexing of ``X_tilde`` and ``y_tilde``).

        Returns
        -------
        LocalRelease
            A copy with the selected rows; every other field (mechanisms, claim, …) is shared.
        """
        from dataclasses import replace

        return replace(self, X_tilde=self.X_tilde[index], y_tilde=self.y_tilde[index])


def encode_binary_labels(y: ArrayLike, classes: ArrayLike | None = None) -> tuple[np.ndarray, tuple]:
    """Map binary labels to {−1, +1}; returns (y_pm, classes) with classes[0] → −1, classes[1] → +1.

    Labels already in {−1, 1} are kept (classes = (−1, 1)); labels within {0, 1} map
    0 → −1; any other two distinct values map in sorted order. ``classes`` fixes the
    mapping explicitly (needed by ``partial_fit`` on batches that miss a class).

    Parameters
    ----------
    y : array-like of shape (n,)
        Labels.
    classes : pair, optional
        ``(negative, positive)`` label values.

    Returns
    -------
    y_pm : ndarray of shape (n,)
        Labels in {−1.0, +1.0}.
    classes : tuple of two floats
        The mapping used.

    Raises
    ------
    InvalidInputError
        When y has other than two distinct values (without ``classes``) or a value outside ``classes``.
    InvalidParameterError
        When ``classes`` is not two distinct values.
    """
    y = check_array("y", y, ndim=1)
    values = np.unique(y)
    if classes is None:
        if np.all(np.isin(values, (-1.0, 1.0))):
            classes = (-1.0, 1.0)
        elif np.all(np.isin(values, (0.0, 1.0))):
            classes = (0.0, 1.0)
        elif values.size == 2:
            classes = (float(values[0]), float(values[1]))
        else:
            raise InvalidInputError(
                f"labels must be binary: values in {{-1, 1}}, in {{0, 1}} or exactly two distinct values "
                f"(mapped in sorted order to -1, +1); got {values.size} distinct values {values[:10].tolist()}"
            )
    classes = tuple(float(c) for c in np.asarray(classes, dtype=float).ravel())
    if len(classes) != 2 or classes[0] == classes[1]:
        raise InvalidParameterError(f"classes must be two distinct label values, got classes={classes!r}")
    unknown = values[~np.isin(values, classes)]
    if unknown.size:
        raise InvalidInputError(f"label {unknown[0]!r} is not one of classes={classes!r}")
    return np.where(y == classes[1], 1.0, -1.0), classes


def _box(name: str, bounds, data: np.ndarray, width: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Validated (lo, hi) arrays of a declared box, or data-derived ones with a warning."""
    if bounds is None:
        warnings.warn(
            f"{name} were not declared and are derived from the data (min/max): they depend on every record "
            "and are NOT covered by the privacy claim. Declare bounds independent of the data.",
            PrivacyLeakWarning,
            stacklevel=3,
        )
        lo, hi = data.min(axis=0), data.max(axis=0)
    else:
        try:
            lo, hi = bounds
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError(f"{name} must be a pair (low, high), got {name}={bounds!r}") from exc
        lo = check_array(f"{name}[0]", lo)
        hi = check_array(f"{name}[1]", hi)
    shape = () if width is None else (width,)
    try:
        lo, hi = np.broadcast_to(lo, shape).astype(float), np.broadcast_to(hi, shape).astype(float)
    except ValueError as exc:
        raise InvalidParameterError(f"{name} must be scalars or length-{width} arrays, got {name}={bounds!r}") from exc
    if np.any(hi < lo) or not np.any(hi > lo):
        raise InvalidParameterError(f"{name} must satisfy low <= high with a positive diameter, got {name}={bounds!r}")
    return lo, hi


def _clip(data: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Clip to the box; returns the clipped data and a per-record 'was outside' mask."""
    outside = (data < lo) | (data > hi)
    if outside.ndim > 1:
        outside = outside.any(axis=1)
    return np.clip(data, lo, hi), outside


def release_dataset(
    X: ArrayLike, y: ArrayLike, *, epsilon: float, delta: float, split: float = 0.5,
    bounds: tuple[ArrayLike, ArrayLike] | None = None, task: str = "classification",
    label_bounds: tuple[float, float] | None = None, classes: ArrayLike | None = None,
    calibration: str = "analytic", random_state: np.random.Generator | int | None = None,
) -> LocalRelease:
    """Release (X, y) under (ε, δ)-LDP, once and for all (seed 001, eq. 1; App. E.2 for regression).

    Parameters
    ----------
    X : array_like (n, p)
        Clean features (finite).
    y : array_like (n,)
        Clean labels: binary for classification (mapped to {−1, 1}), real for regression.
    epsilon, delta : float
        Total local budget of each record; δ ∈ (0, 1) is needed by the Gaussian mechanism.
    split : float in (0, 1)
        Fraction of ε (and, for regression, of δ) spent on the features.
    bounds : (low, high), optional
        Declared feature box (scalars or length-p arrays). Records outside are clipped
        (with a warning giving their count). ``None`` derives it from the data and emits
        :class:`PrivacyLeakWarning`.
    task : {"classification", "regression"}
    label_bounds : (low, high), optional
        Declared label interval for regression (sensitivity high − low); same rules.
    classes : pair, optional
        Explicit label mapping for classification (see :func:`encode_binary_labels`).
    calibration : {"analytic", "classical"}
        Gaussian calibration (DESIGN.md math notes).
    random_state : int, Generator or None
        Source of the feature and label noise.

    Returns
    -------
    LocalRelease
        The released (X̃, ỹ) with the mechanisms and the claim.

    Raises
    ------
    InvalidParameterError
        For an unknown task, out-of-range budgets or split, or malformed bounds.
    InvalidInputError
        When X and y do not have the same positive number of rows, or labels are not binary.
    """
    if task not in TASKS:
        raise InvalidParameterError(f"task must be one of {TASKS}, got task={task!r}")
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    split = check_interval("split", split, 0.0, 1.0)
    X = check_array("X", X, ndim=2)
    y = check_array("y", y, ndim=1)
    if X.shape[0] != y.shape[0] or X.shape[0] == 0:
        raise InvalidInputError(f"X and y must have the same positive number of rows, got {X.shape[0]} and {y.shape[0]}")
    rng = np.random.default_rng(random_state)
    eps_x, eps_y = split * epsilon, (1.0 - split) * epsilon

    lo, hi = _box("bounds", bounds, X, X.shape[1])
    X_clipped, outside = _clip(X, lo, hi)
    diameter = float(np.linalg.norm(hi - lo))
    delta_x = delta if task == "classification" else split * delta
    feat = GaussianMechanism(epsilon=eps_x, delta=delta_x, sensitivity=diameter, calibration=calibration)
    # Float-safe: the Gaussian mechanism's dithered-lattice release (a textbook
    # ``X + σ·standard_normal`` leaks through the low-order bits, Mironov 2012).
    X_tilde = float_safe_gaussian(X_clipped, feat.sigma, rng)

    if task == "classification":
        y_pm, classes = encode_binary_labels(y, classes)
        lab = RandomizedResponse(epsilon=eps_y, categories=(-1, 1))
        y_tilde = lab.release(y_pm, rng)
        sigma_y, lab_box = 0.0, None
    else:
        ylo, yhi = _box("label_bounds", label_bounds, y, None)
        y_clipped, y_out = _clip(y, ylo, yhi)
        outside = outside | y_out
        lab = GaussianMechanism(
            epsilon=eps_y, delta=(1.0 - split) * delta, sensitivity=float(yhi - ylo), calibration=calibration
        )
        sigma_y = lab.sigma
        y_tilde = float_safe_gaussian(y_clipped, lab.sigma, rng)
        lab_box, classes = (float(ylo), float(yhi)), None

    n_clipped = int(outside.sum())
    if n_clipped:
        warnings.warn(
            f"{n_clipped} of {X.shape[0]} records lie outside the declared bounds and were clipped to them "
            "before release",
            UserWarning,
            stacklevel=2,
        )
    for arr in (X_tilde, y_tilde):
        arr.setflags(write=False)
    return LocalRelease(
        X_tilde=X_tilde, y_tilde=y_tilde, sigma=feat.sigma, epsilon_y=eps_y,
        claim=PrivacyClaim(epsilon, delta, "any"), task=task, sigma_y=sigma_y, epsilon_x=eps_x,
        delta_x=delta_x, bounds=(lo, hi), label_bounds=lab_box, classes=classes, n_clipped=n_clipped,
        feature_mechanism=feat, label_mechanism=lab,
    )
