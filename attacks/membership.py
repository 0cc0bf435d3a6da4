"""Membership-inference attacks with reference models, on a leave-many-out design.

The design (Carlini et al. 2022, §IV): K models are trained on random subsets of one pool of
records; ``inside[k, i]`` says whether record i was in model k's training set and
``signals[k, i]`` is model k's membership signal on record i (higher: more member-like).
Every model in turn is the *target*; the other K − 1 are its reference models. Each attack
below maps (signals, inside) to ``scores[t, i]``, the score of record i against target t
(higher: "member"), for every target at once, in O(K·n) memory and time: the reference
statistics of target t are the pool's sums minus target t's own term.

Attacks
-------
``loss``
    Yeom et al. (2018): the target's own signal, no reference model.
``lira-offline``
    Carlini et al. (2022), eq. (4) one-sided: the z-score (s − μ_out)/σ_out of the target's
    signal under the Gaussian fitted to the reference models that did *not* train on the record.
``lira-online``
    Carlini et al. (2022), eq. (3): log N(s; μ_in, σ²_in) − log N(s; μ_out, σ²_out).
``rmia``
    Zarifzadeh, Liu & Shokri (ICML 2024), eq. (4)–(5), online: the likelihood ratio
    p(x|θ_t)/p̄(x), p̄(x) the mean of p(x|θ) over every reference model. RMIA's score is the
    fraction of population records z with LR(x, z) = [p(x|θ)/p̄(x)]/[p(z|θ)/p̄(z)] ≥ γ; for a
    fixed population sample that is a non-decreasing function of p(x|θ)/p̄(x), so the ROC of
    the ratio *is* RMIA's ROC (for every γ), and the ratio (its log) is what is returned.
``rmia-offline``
    The same with p̄(x) = ½[(1 + a)·p̄_out(x) + (1 − a)] from the OUT references only (the
    paper's linear approximation of p_in by p_out, §4.2; ``a`` = 0.3 by default).

Small reference sets: with fewer than :data:`PER_EXAMPLE_MIN` references a per-record variance
is unreliable, and Carlini et al. use one global variance (their "fixed variance"); ``variance``
chooses. A record with no IN (or no OUT) reference model for a target gets the pool-wide mean
IN − OUT gap added to (subtracted from) its other mean, and the global variance.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from privaudit.mechanisms.validation import InvalidInputError, InvalidParameterError, check_interval

#: Reference models from which LiRA's ``variance="auto"`` fits one variance per record.
PER_EXAMPLE_MIN = 64
#: Smallest variance used, relative to the pooled variance (keeps a constant-signal record finite).
VARIANCE_FLOOR = 1e-6


@dataclass(frozen=True)
class ReferenceMoments:
    """Leave-one-target-out moments of the signals, per target and record (each array (K, n)).

    ``n_in``/``n_out`` count the reference models that did / did not train on the record;
    ``mean_in``/``mean_out`` and ``var_in``/``var_out`` are their signals' means and variances
    (NaN where the count is too small); ``pooled_var`` is one variance per target, the mean
    within-group variance over all records.
    """

    n_in: np.ndarray
    n_out: np.ndarray
    mean_in: np.ndarray
    mean_out: np.ndarray
    var_in: np.ndarray
    var_out: np.ndarray
    pooled_var: np.ndarray


def check_design(signals: np.ndarray, inside: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Validate a design: finite float signals (K, n), boolean inclusion of the same shape, K ≥ 2.

    Parameters
    ----------
    signals : array (K, n)
        signals[k, i]: model k's membership signal on record i
    inside : bool array (K, n)
        whether record i trained model k
    """
    s = np.asarray(signals, dtype=float)
    m = np.asarray(inside)
    if s.ndim != 2 or s.shape != m.shape:
        raise InvalidInputError(f"signals and inside must be 2-d arrays of one shape (models, records), "
                                f"got {s.shape} and {m.shape}")
    if s.shape[0] < 2:
        raise InvalidInputError(f"a leave-many-out design needs at least 2 models, got {s.shape[0]}")
    if m.dtype != bool:
        if not np.all(np.isin(m, (0, 1))):
            raise InvalidInputError("inside must be boolean (or 0/1)")
        m = m.astype(bool)
    if not np.all(np.isfinite(s)):
        bad = np.argwhere(~np.isfinite(s))[0]
        raise InvalidInputError(f"signals must be finite; model {bad[0]}, record {bad[1]} has {s[tuple(bad)]!r}")
    return s, m


def _leave_one_out(values: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Count, sum and sum of squares of ``values`` over the models selected by ``mask``, target excluded."""
    v = np.where(mask, values, 0.0)
    count = mask.sum(0) - mask
    total = v.sum(0) - v
    squares = (v * v).sum(0) - v * v
    return count, total, squares


def reference_moments(signals: np.ndarray, inside: np.ndarray) -> ReferenceMoments:
    """The IN and OUT reference moments of every (target, record), leaving the target out.

    Parameters
    ----------
    signals : array (K, n)
    inside : bool array (K, n)

    Returns
    -------
    ReferenceMoments
    """
    s, m = check_design(signals, inside)
    # Centre per record first: the sums of squares then lose no precision to a large common mean.
    s = s - s.mean(0)
    out = {}
    for side, mask in (("in", m), ("out", ~m)):
        count, total, squares = _leave_one_out(s, mask)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(count > 0, total / np.maximum(count, 1), np.nan)
            var = np.where(count > 1, (squares - count * mean**2) / np.maximum(count - 1, 1), np.nan)
        out[side] = (count, mean, np.maximum(var, 0.0))
    within = np.concatenate([out["in"][2], out["out"][2]], axis=1)
    pooled = np.nanmean(within, axis=1) if np.any(np.isfinite(within)) else np.full(s.shape[0], np.nan)
    if not np.all(np.isfinite(pooled)):
        # Fewer than two references on each side for every record (K ≤ 3): the spread of the
        # reference signals around their record means, all groups together.
        centred = np.where(m, s - np.nan_to_num(out["in"][1]), s - np.nan_to_num(out["out"][1]))
        pooled = np.where(np.isfinite(pooled), pooled, np.maximum((centred**2).mean(1), 1e-12))
    return ReferenceMoments(out["in"][0], out["out"][0], out["in"][1], out["out"][1],
                            out["in"][2], out["out"][2], pooled)


def _centred_target(signals: np.ndarray) -> np.ndarray:
    s = np.asarray(signals, dtype=float)
    return s - s.mean(0)


def _filled_means(mo: ReferenceMoments) -> tuple[np.ndarray, np.ndarray]:
    """μ_in and μ_out with a missing side filled from the target's mean IN − OUT gap over records."""
    both = np.isfinite(mo.mean_in) & np.isfinite(mo.mean_out)
    # Targets with no record seen on both sides (one reference model) have no gap to read: 0.
    n_both = both.sum(1, keepdims=True)
    gap = np.where(both, mo.mean_in - mo.mean_out, 0.0).sum(1, keepdims=True) / np.maximum(n_both, 1)
    mean_in = np.where(np.isfinite(mo.mean_in), mo.mean_in, mo.mean_out + gap)
    mean_out = np.where(np.isfinite(mo.mean_out), mo.mean_out, mo.mean_in - gap)
    # Neither side seen (impossible with K ≥ 3 and both sides present): the record's pool mean (0 after centring).
    return np.nan_to_num(mean_in), np.nan_to_num(mean_out)


def _variances(mo: ReferenceMoments, variance: str) -> tuple[np.ndarray, np.ndarray]:
    k = mo.n_in + mo.n_out
    pooled = np.broadcast_to(mo.pooled_var[:, None], mo.var_in.shape)
    if variance not in ("auto", "global", "per-record"):
        raise InvalidParameterError(f"variance must be 'auto', 'global' or 'per-record', got variance={variance!r}")
    per_record = variance == "per-record" or (variance == "auto" and k.min() >= PER_EXAMPLE_MIN)
    floor = VARIANCE_FLOOR * pooled
    if not per_record:
        return np.maximum(pooled, floor), np.maximum(pooled, floor)
    var_in = np.where(np.isfinite(mo.var_in), mo.var_in, pooled)
    var_out = np.where(np.isfinite(mo.var_out), mo.var_out, pooled)
    return np.maximum(var_in, floor), np.maximum(var_out, floor)


def loss_attack(signals: np.ndarray, inside: np.ndarray) -> np.ndarray:
    """Yeom et al. (2018): the target's own signal (its negative loss), for every target.

    Parameters
    ----------
    signals : array (K, n)
        the models' signals
    inside : bool array (K, n)
        the design (unused: no reference model)
    """
    s, _ = check_design(signals, inside)
    return s.copy()


def lira_offline(signals: np.ndarray, inside: np.ndarray, *, variance: str = "auto") -> np.ndarray:
    """LiRA offline (Carlini et al. 2022): (s − μ_out)/σ_out from the OUT reference models.

    Parameters
    ----------
    signals : array (K, n)
        the models' signals
    inside : bool array (K, n)
        the design
    variance : {'auto', 'global', 'per-record'}
        one pooled variance per target, or one per record (auto: per record from PER_EXAMPLE_MIN references)
    """
    mo = reference_moments(signals, inside)
    _, mean_out = _filled_means(mo)
    _, var_out = _variances(mo, variance)
    return (_centred_target(signals) - mean_out) / np.sqrt(var_out)


def lira_online(signals: np.ndarray, inside: np.ndarray, *, variance: str = "auto") -> np.ndarray:
    """LiRA online (Carlini et al. 2022): log N(s; μ_in, σ²_in) − log N(s; μ_out, σ²_out).

    Parameters
    ----------
    signals : array (K, n)
        the models' signals
    inside : bool array (K, n)
        the design
    variance : {'auto', 'global', 'per-record'}
        one pooled variance per target, or one per record (auto: per record from PER_EXAMPLE_MIN references)
    """
    mo = reference_moments(signals, inside)
    mean_in, mean_out = _filled_means(mo)
    var_in, var_out = _variances(mo, variance)
    s = _centred_target(signals)
    return (-0.5 * (s - mean_in) ** 2 / var_in - 0.5 * np.log(var_in)
            + 0.5 * (s - mean_out) ** 2 / var_out + 0.5 * np.log(var_out))


def _log_mean_prob(log_p: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log of the leave-target-out mean of p over the models in ``mask`` (and their count)."""
    # Probabilities are formed relative to the record's largest one so that tiny p's do not underflow.
    top = log_p.max(0)
    p = np.where(mask, np.exp(log_p - top), 0.0)
    count, total, _ = _leave_one_out(p, mask)
    # Σ − own term cancels when the target's own p dominates (1 + 1e-300 − 1 = 0): sum those cells directly.
    lost = (count > 0) & (total <= 1e-9 * (total + p))
    if np.any(lost):
        t, i = np.nonzero(lost)
        cols = p[:, i].copy()
        cols[t, np.arange(t.size)] = 0.0
        total = total.copy()
        total[t, i] = cols.sum(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(count > 0, np.log(total / np.maximum(count, 1)) + top, np.nan), count


def rmia(log_prob: np.ndarray, inside: np.ndarray) -> np.ndarray:
    """RMIA online (Zarifzadeh et al. 2024): log p(x|θ_t) − log p̄(x), p̄ over every reference model.

    Parameters
    ----------
    log_prob : array (K, n)
        log p(x|θ_k): the log-probability model k gives record x's label (≤ 0).
    inside : bool array (K, n)
    """
    lp, m = check_design(log_prob, inside)
    log_mean, _ = _log_mean_prob(lp, np.ones_like(m))
    return lp - log_mean


def rmia_offline(log_prob: np.ndarray, inside: np.ndarray, *, a: float = 0.3) -> np.ndarray:
    """RMIA offline: p̄(x) = ½[(1 + a)·p̄_out(x) + (1 − a)] from the OUT reference models only.

    A record with no OUT reference for a target uses p̄_out = the mean over every reference.

    Parameters
    ----------
    log_prob : array (K, n)
        log p(x|θ_k), the log-probability model k gives record x's label
    inside : bool array (K, n)
        the design
    a : float
        slope of the linear approximation p_in ≈ a·p_out + (1 − a), in [0, 1]
    """
    a = check_interval("a", a, 0.0, 1.0, closed="both")
    lp, m = check_design(log_prob, inside)
    log_out, count = _log_mean_prob(lp, ~m)
    log_all, _ = _log_mean_prob(lp, np.ones_like(m))
    log_out = np.where(count > 0, log_out, log_all)
    p_bar = 0.5 * ((1 + a) * np.exp(log_out) + (1 - a))
    return lp - np.log(p_bar)


#: Attack name -> (function, which signal it reads: "signal" or "log_prob").
ATTACKS: dict[str, tuple[Callable[..., np.ndarray], str]] = {
    "loss": (loss_attack, "signal"),
    "lira-offline": (lira_offline, "signal"),
    "lira-online": (lira_online, "signal"),
    "rmia": (rmia, "log_prob"),
    "rmia-offline": (rmia_offline, "log_prob"),
}


__all__ = ["ATTACKS", "PER_EXAMPLE_MIN", "ReferenceMoments", "check_design", "lira_offline", "lira_online",
           "loss_attack", "reference_moments", "rmia", "rmia_offline"]
