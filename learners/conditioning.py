"""The conditioning matrix of seed 002: Ĉ = V Σ⁻¹ Vᵀ from the SVD of the public features.

Seed 002 (§4.2, eq. 6) conditions the public embedding as v = Θ Ĉ x_pub with
Ĉ = VΣ⁻¹Vᵀ, where X_pub = UΣVᵀ is the thin SVD of the (n × d_pub) public training
matrix. On the training data X_pub Ĉ = UVᵀ: every retained direction gets unit
singular value, so DP-SGD's isotropic noise no longer swamps the low-spectrum
directions. Ĉ uses public data only and costs no privacy.

Deliberate choices (the seed is silent on them):

* **Scale.** Multiplying Ĉ by a scalar s is a re-parametrisation of the learning rate
  (by s²) and clip norm (by s); it does not change what DP-SGD can reach but it does
  move the optimum inside a fixed hyper-parameter grid. We use s = sqrt(n) by default
  (``scale="isotropic"``), so that the conditioned features have (1/n)·X̃ᵀX̃ = I on
  the retained space, i.e. unit variance per direction, comparable to standardised
  raw features. ``scale="none"`` gives the seed's literal VΣ⁻¹Vᵀ.
* **Rank deficiency.** Singular values below ``rcond · σ₁`` are numerically zero: the
  training rows carry no signal there. Those directions (and the null space of
  X_pub when d_pub > n) get the *least* amplification, 1/σ₁ (times the scale), i.e.
  they are left as plain DP-SGD would see them instead of being blown up by 1/σ ≈ ∞
  for test points that do have components there.
* **Tiny singular values.** Above the rank cutoff, the amplification 1/σᵢ is capped at
  ``max_condition/σ₁`` (σᵢ is floored at σ₁/max_condition), bounding the condition
  number of Ĉ and hence ‖Ĉx‖ for unseen x. The default cap 1e4 is far above the
  spectra of the seed's experiments (κ ≤ 1e3) and only guards pathological inputs.

Ĉ is symmetric, so Θ Ĉ x = (x Ĉ) Θᵀ row-wise and conditioned features are X Ĉ.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from privaudit.mechanisms.validation import InvalidParameterError, check_array, check_positive

SCALES = ("isotropic", "none", "max")


@dataclass(frozen=True)
class Conditioning:
    """Result of :func:`conditioning_matrix`.

    Attributes
    ----------
    matrix : (d, d) Ĉ, symmetric positive definite.
    singular_values : (min(n, d),) singular values of X_pub, descending.
    rank : numerical rank (singular values above ``rcond·σ₁``).
    n_capped : how many retained singular values were floored by ``max_condition``.
    """

    matrix: np.ndarray
    singular_values: np.ndarray
    rank: int
    n_capped: int


def conditioning_matrix(
    X_pub: ArrayLike, *, rcond: float = 1e-8, max_condition: float = 1e4, scale: str = "isotropic"
) -> Conditioning:
    """Ĉ = s·V diag(1/σ̃ᵢ) Vᵀ from the SVD of ``X_pub`` (seed 002, eq. 6).

    Parameters
    ----------
    X_pub : array-like of shape (n, d)
        Public feature matrix; NaN/inf raise :class:`InvalidInputError`.
    rcond : float
        Relative cutoff of the numerical rank: σᵢ ≤ rcond·σ₁ counts as zero.
    max_condition : float
        Cap on σ₁/σ̃ᵢ for retained directions (σ̃ᵢ = max(σᵢ, σ₁/max_condition)).
    scale : {"isotropic", "none", "max"}
        s = sqrt(n) (unit-variance conditioned features), 1 (the seed's literal Ĉ), or
        σ₁ (the top direction unchanged, all others amplified by σ₁/σᵢ ≥ 1).

    Returns
    -------
    Conditioning
        Ĉ (d, d, symmetric), the singular values of ``X_pub``, the numerical rank and the
        number of floored singular values.

    Raises
    ------
    InvalidParameterError
        When ``rcond`` ≤ 0, ``max_condition`` < 1 or ``scale`` is unknown.
    """
    X = check_array("X_pub", X_pub, ndim=2)
    rcond = check_positive("rcond", rcond)
    max_condition = check_positive("max_condition", max_condition)
    if max_condition < 1:
        raise InvalidParameterError(f"max_condition must be >= 1, got max_condition={max_condition!r}")
    if scale not in SCALES:
        raise InvalidParameterError(f"scale must be one of {SCALES}, got scale={scale!r}")
    n, d = X.shape
    # Full V (d × d) so that the null space of X_pub is covered explicitly when d > n.
    _, s, Vt = np.linalg.svd(X, full_matrices=True)
    s1 = s[0] if s.size and s[0] > 0 else 1.0
    sig = np.full(d, s1)  # null-space directions: amplification 1/σ₁ (least amplified)
    kept = s > rcond * s1
    rank = int(kept.sum())
    floor = s1 / max_condition
    sig[: s.size][kept] = np.maximum(s[kept], floor)
    n_capped = int(np.sum(s[kept] < floor))
    factor = {"isotropic": np.sqrt(n), "none": 1.0, "max": s1}[scale]
    C = (Vt.T * (factor / sig)) @ Vt
    C = 0.5 * (C + C.T)  # exact symmetry against round-off
    return Conditioning(C, s, rank, n_capped)
