"""Membership inference against a trained model, held against its claim (:func:`audit_membership`).

Stages: ``plan_design → build_canaries → fit_models → score_attacks → measure → certify → judge``.

**Design** (leave-many-out; Carlini et al. 2022, §IV-C). K = ``n_reference`` + 1 models are
trained; record i is in model k's training set when ``inside[k, i]`` (independent fair coins).
Each model in turn is the target, the other K − 1 its reference models, and results average over
the K targets. Under a label-DP claim (the claim's neighbourhood is ``label``) membership is not
protected, so the audit tests the claim's own unit instead: every record is trained on, with its
label replaced by another one (a different class, or y_min + y_max − y) where ``inside`` is False,
and the signal is the log-odds of the true label against the replacement.

**Certification.** The inclusion bits of the records (and of the canaries) in the designated
target, fit 0, are independent fair coins drawn before training, and each attack's score of a
record is a function of that target's output and of independent randomness (the reference
models). That is Steinke, Nasr & Jagielski (2023)'s one-run game, so the one-run ε̲ of
:func:`~privaudit.audit.engines.one_run.one_run_table` is certified at ``confidence`` for the
population (average case) and for the canaries (worst case), each its own row. With
``n_reference`` ≥ :data:`MULTI_RUN_MIN` fits a canary is also audited over fits: its signal in
independent fits is a sequence of independent trials, the canary and the test are chosen on the
first half of the fits and the Clopper–Pearson ε̲ read on the second
(:func:`~privaudit.audit.stats.epsilon_bounds.epsilon_bound`).

The claim's neighbourhood must cover the bits flipped: add/remove for membership (a replace-one
claim bounds swaps, which the coin design does not make), label for labels. A claim that does
not cover them is reported and compared with nothing.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.metrics import roc_auc_score, roc_curve

from privaudit.attacks.membership import ATTACKS
from privaudit.mechanisms.accounting import gdp_epsilon
from privaudit.mechanisms.claim import PrivacyClaim, claim_of
from privaudit.mechanisms.neighbourhoods import parse_neighbourhood
from privaudit.mechanisms.randomness import RandomLike, int_seeds, keyed_rng, resolve_seed
from privaudit.mechanisms.tradeoff import tradeoff_curve
from privaudit.mechanisms.validation import (
    InvalidInputError,
    InvalidParameterError,
    check_array,
    check_int,
    check_interval,
)

from privaudit.audit.engines.membership_results import (
    FPR_GRID,
    AttackResult,
    CanaryResult,
    ClaimCheck,
    MembershipAudit,
    VulnerabilityTable,
)
from privaudit.audit.engines.model_training import (
    Signals,
    check_model,
    fit_model,
    infer_task,
    run_fits,
    train_and_score,
)
from privaudit.audit.engines.one_run import k_grid, one_run_table, planned_k
from privaudit.audit.stats.epsilon_bounds import epsilon_bound
from privaudit.audit.verdicts import Verdict

#: What an audit infers: a record's presence, its label, or its features (within the claim's ball).
UNITS = ("membership", "label", "feature")
#: Fits (models) from which a canary is also audited over fits (Clopper–Pearson).
MULTI_RUN_MIN = 40
#: Attacks run by default.
DEFAULT_ATTACKS = ("loss", "lira-offline", "lira-online", "rmia", "rmia-offline")


def _check_data(X: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    Xa = check_array("X", X, ndim=2)
    ya = np.asarray(y)
    if ya.ndim != 1 or ya.shape[0] != Xa.shape[0]:
        raise InvalidInputError(f"y must be 1-d with one label per row of X ({Xa.shape[0]}), got shape {ya.shape}")
    if ya.dtype.kind == "f" and not np.all(np.isfinite(ya)):
        raise InvalidInputError(f"y must be finite; row {int(np.flatnonzero(~np.isfinite(ya))[0])} is not")
    if Xa.shape[0] < 4:
        raise InvalidInputError(f"a membership audit needs at least 4 records, got {Xa.shape[0]}")
    return Xa, ya


def _check_attacks(attacks: Any) -> tuple[str, ...]:
    names = DEFAULT_ATTACKS if attacks is None else (attacks,) if isinstance(attacks, str) else tuple(attacks)
    unknown = [a for a in names if a not in ATTACKS]
    if unknown or not names:
        raise InvalidParameterError(f"unknown attack(s) {unknown!r}; expected some of {sorted(ATTACKS)}")
    return names


def resolve_unit(claim: PrivacyClaim | None, unit: str) -> str:
    """``"membership"`` or ``"label"``: the one asked for, else the claim's neighbourhood's unit.

    Parameters
    ----------
    claim : PrivacyClaim or None
        the claim held against (None: nothing to compare with)
    unit : {'auto', 'membership', 'label'}
        what to infer; auto reads the claim's neighbourhood
    """
    if unit in UNITS:
        return unit
    if unit != "auto":
        raise InvalidParameterError(f"unit must be 'auto' or one of {UNITS}, got unit={unit!r}")
    kind = parse_neighbourhood(claim.adjacency).kind if claim is not None else None
    return {"label": "label", "norm-ball": "feature"}.get(kind, "membership")


def plan_design(n_records: int, n_fits: int, rng: np.random.Generator, design: str = "coins",
                n_population: int | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """The inclusion of every record in every fit, drawn before training.

    ``"coins"``: independent fair coins, each fit's training set a random subset (add/remove
    neighbours: flipping one coin adds or removes one record). ``"swap"``: the records are paired
    at random (population with population, canaries with canaries; an odd one out is never
    trained on), and each fit trains on exactly one record of each pair, by a fair coin: every
    training set has the same size and flipping one coin swaps one record for another
    (replace-one neighbours).

    Parameters
    ----------
    n_records : int
        Records in the pool (canaries included).
    n_fits : int
        Fits K.
    rng : Generator
        Draws the pairing and the coins.
    design : {'coins', 'swap'}
    n_population : int, optional
        The first ``n_population`` records are the population (paired among themselves); default all.

    Returns
    -------
    inside : bool ndarray (K, n_records)
    pairs : int ndarray (P, 2) or None
        The swap design's pairs (first, second); ``inside[k, first]`` is fit k's coin.
    """
    if design == "coins":
        return rng.random((n_fits, n_records)) < 0.5, None
    if design != "swap":
        raise InvalidParameterError(f"design must be 'auto', 'coins' or 'swap', got design={design!r}")
    n_pop = n_records if n_population is None else n_population
    groups = [np.arange(n_pop), np.arange(n_pop, n_records)]
    pairs = np.concatenate([(g := rng.permutation(grp))[: g.size // 2 * 2].reshape(-1, 2) for grp in groups])
    coins = rng.random((n_fits, pairs.shape[0])) < 0.5
    inside = np.zeros((n_fits, n_records), dtype=bool)
    inside[:, pairs[:, 0]] = coins
    inside[:, pairs[:, 1]] = ~coins
    return inside, pairs


def resolve_design(design: str, claim: PrivacyClaim | None, unit: str) -> str:
    """``"swap"`` for a membership audit of a replace-one (or any-pair) claim, else ``"coins"``; or as asked.

    Parameters
    ----------
    design : {'auto', 'coins', 'swap'}
    claim : PrivacyClaim or None
    unit : {'membership', 'label', 'feature'}

    Returns
    -------
    str
    """
    if design != "auto":
        return design
    swap = unit == "membership" and claim is not None and parse_neighbourhood(claim.adjacency).kind in SWAP_KINDS
    return "swap" if swap else "coins"


#: Neighbourhoods whose claims the swap design tests (a record replaced by another).
SWAP_KINDS = ("replace-one", "any")


def game(scores: np.ndarray, inside: np.ndarray, pairs: np.ndarray | None,
         cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The one-run game of the records ``cols``: a score and a bit per coin.

    With coins, each record is a coin: its score, its inclusion. With swaps, each pair of ``cols``
    is a coin: the score of its first record minus its second's, and whether the first was trained on.

    Parameters
    ----------
    scores : ndarray (n,)
        One target's scores of every record.
    inside : bool ndarray (n,)
        That target's inclusion.
    pairs : int ndarray (P, 2) or None
    cols : int ndarray
        The records of the game (population or canaries).

    Returns
    -------
    scores, bits : ndarray
    """
    if pairs is None:
        return scores[cols], inside[cols]
    mine = pairs[np.isin(pairs[:, 0], cols)]
    return scores[mine[:, 0]] - scores[mine[:, 1]], inside[mine[:, 0]]


def replacement_labels(y: np.ndarray, task: str, rng: np.random.Generator) -> np.ndarray:
    """Another label per record: a uniformly drawn different class, or y_min + y_max − y for a regression.

    Parameters
    ----------
    y : ndarray (n,)
        true labels
    task : {'classification', 'regression'}
    rng : Generator
        draws the replacement classes
    """
    if task == "regression":
        yf = y.astype(float)
        return yf.min() + yf.max() - yf
    classes = np.unique(y)
    if classes.size < 2:
        raise InvalidInputError("label inference needs at least two classes in y")
    pos = np.searchsorted(classes, y)
    shift = rng.integers(1, classes.size, size=y.size)
    return classes[(pos + shift) % classes.size]


def replacement_features(X: np.ndarray, claim: PrivacyClaim, rng: np.random.Generator) -> np.ndarray:
    """Each record's features moved by the claim's radius r in a random direction of its norm, kept in X's box.

    ℓ2: r·u with u uniform on the sphere; ℓ1: ±r·e_j; ℓ∞: r·(±1, …, ±1). Clipping to the box of X
    (per feature, min to max) is a projection onto a convex set, so the move stays within the ball.

    Parameters
    ----------
    X : ndarray (n, d)
    claim : PrivacyClaim
        Its neighbourhood is a norm ball (``l2<=r``, ``l1<=r``, ``linf<=r``).
    rng : Generator

    Returns
    -------
    ndarray (n, d)
    """
    nb = parse_neighbourhood(claim.adjacency)
    n, d = X.shape
    if nb.norm == 2:
        u = rng.standard_normal((n, d))
        u /= np.linalg.norm(u, axis=1, keepdims=True)
    elif nb.norm == 1:
        u = np.zeros((n, d))
        u[np.arange(n), rng.integers(0, d, size=n)] = rng.choice([-1.0, 1.0], size=n)
    else:
        u = rng.choice([-1.0, 1.0], size=(n, d))
    return np.clip(X + nb.radius * u, X.min(0), X.max(0))


def build_canaries(X: np.ndarray, y: np.ndarray, canaries: Any, task: str, rng: np.random.Generator,
                   kind: str = "mislabel") -> tuple[np.ndarray, np.ndarray]:
    """Canary records: the user's ``(X_c, y_c)``, or ``m`` generated ones.

    ``"mislabel"``: copies of random records with a different class (or, for a regression, the
    label y_min + y_max − y), records a model can fit only by memorising them. ``"ood"``: out of
    distribution, the mean record plus r·e_j on a feature j that is constant (zero-variance) in X,
    one feature per canary, r the largest record norm, with random labels: each canary then moves only the
    weights of its own feature, the worst case for a linear model (rare features of sparse data).

    Parameters
    ----------
    X, y : ndarray
        The population records.
    canaries : int, (X_c, y_c) or None
        How many, or the user's own.
    task : {'classification', 'regression'}
    rng : Generator
        Draws the copied records and the labels.
    kind : {'mislabel', 'ood'}
        How generated canaries are made.

    Returns
    -------
    X_c, y_c : ndarray
    """
    if canaries is None or (isinstance(canaries, int | np.integer) and not isinstance(canaries, bool)
                            and canaries == 0):
        return X[:0], y[:0]
    if isinstance(canaries, tuple) and len(canaries) == 2:
        Xc = check_array("canaries X", canaries[0], ndim=2, dim=X.shape[1])
        yc = np.asarray(canaries[1])
        if yc.shape != (Xc.shape[0],):
            raise InvalidInputError(f"canary labels must have shape ({Xc.shape[0]},), got {yc.shape}")
        return Xc, yc.astype(y.dtype, copy=False)
    m = check_int("canaries", canaries)
    if kind == "mislabel":
        rows = rng.choice(X.shape[0], size=m, replace=m > X.shape[0])
        return X[rows].copy(), replacement_labels(y[rows], task, rng)
    if kind != "ood":
        raise InvalidParameterError(f"canary_kind must be 'mislabel' or 'ood', got canary_kind={kind!r}")
    free = np.flatnonzero(np.ptp(X, axis=0) == 0)
    if free.size < m:
        raise InvalidParameterError(f"canaries={m} out-of-distribution canaries need {m} constant features; "
                                    f"X has {free.size}: ask for at most {free.size}, or use canary_kind='mislabel'")
    Xc = np.repeat(X.mean(0, keepdims=True), m, axis=0)
    Xc[np.arange(m), free[:m]] += np.linalg.norm(X, axis=1).max()
    labels = np.unique(y) if task == "classification" else np.array([y.min(), y.max()])
    return Xc, labels[rng.integers(0, labels.size, size=m)]


def fit_models(model: Any, X: np.ndarray, y: np.ndarray, inside: np.ndarray, seeds: np.ndarray, task: str,
               unit: str, y_alt: np.ndarray | None, *, n_jobs: int | None, timeout: float | None,
               X_alt: np.ndarray | None = None) -> list[Signals]:
    """Train every fit of the design and score every record (workers: ``n_jobs``; Dask via joblib).

    Parameters
    ----------
    model : estimator or trainer
    X, y : ndarray
        the pool, canaries included
    inside : bool ndarray (K, n)
        the design
    seeds : ndarray (K,)
        each fit's seed
    task : {'classification', 'regression'}
    unit : {'membership', 'label', 'feature'}
    y_alt : ndarray or None
        replacement labels (label inference)
    X_alt : ndarray or None
        replacement features (feature inference)
    n_jobs : int or None
        joblib workers
    timeout : float or None
        seconds a fit may take
    """
    jobs = []
    for k in range(inside.shape[0]):
        if unit == "membership":
            jobs.append(functools.partial(train_and_score, model, X, y, np.flatnonzero(inside[k]), int(seeds[k]),
                                          task, k))
            continue
        # Label or feature inference: every record is trained on, with its replacement where the coin says so.
        keep = inside[k]
        y_train = None if y_alt is None else np.where(keep, y, y_alt)
        X_train = None if X_alt is None else np.where(keep[:, None], X, X_alt)
        jobs.append(functools.partial(train_and_score, model, X, y, np.arange(y.size), int(seeds[k]), task, k,
                                      y_alt, y_train, X_train, X_alt))
    return run_fits(jobs, n_jobs=n_jobs, timeout=timeout)


def _roc_on_grid(members: np.ndarray, scores: np.ndarray) -> tuple[float, np.ndarray]:
    """AUC and the largest TPR with FPR ≤ each point of :data:`FPR_GRID`, for one target."""
    fpr, tpr, _ = roc_curve(members, scores)
    idx = np.searchsorted(fpr, FPR_GRID * (1 + 1e-12), side="right") - 1
    return float(roc_auc_score(members, scores)), tpr[np.maximum(idx, 0)]


def measure_attack(name: str, scores: np.ndarray, inside: np.ndarray) -> AttackResult:
    """ROC of one attack over every target that has members and non-members among the columns.

    Parameters
    ----------
    name : str
        the attack
    scores : ndarray (K, n)
        scores[t, i] of record i against target t
    inside : bool ndarray (K, n)
        the design (the labels of each target's ROC)
    """
    aucs, tprs = [], []
    for t in range(scores.shape[0]):  # K targets, each a vectorised ROC over the records
        if 0 < inside[t].sum() < inside.shape[1]:
            auc, tpr = _roc_on_grid(inside[t], scores[t])
            aucs.append(auc)
            tprs.append(tpr)
    if not aucs:
        raise InvalidInputError("no target has both members and non-members: too few records")
    return AttackResult(name, float(np.mean(aucs)), float(np.std(aucs)), FPR_GRID.copy(),
                        np.mean(tprs, axis=0), len(aucs))


def vulnerability(attack: str, scores: np.ndarray, inside: np.ndarray) -> VulnerabilityTable:
    """Per record, the Mann–Whitney AUC of its scores over the targets (IN against OUT), ranked.

    Parameters
    ----------
    attack : str
        the attack the scores come from
    scores : ndarray (K, n)
    inside : bool ndarray (K, n)
    """
    ranks = scores.argsort(0).argsort(0).astype(float) + 1.0
    n_in = inside.sum(0)
    n_out = inside.shape[0] - n_in
    with np.errstate(invalid="ignore", divide="ignore"):
        auc = ((ranks * inside).sum(0) - n_in * (n_in + 1) / 2) / (n_in * n_out)
        gap = (np.where(inside, scores, 0).sum(0) / n_in) - (np.where(~inside, scores, 0).sum(0) / n_out)
    auc = np.where((n_in > 0) & (n_out > 0), auc, 0.5)
    gap = np.nan_to_num(gap)
    return VulnerabilityTable(attack, auc, gap, n_in, np.argsort(-auc, kind="stable"))


def check_claim(claim: PrivacyClaim | None, unit: str, results: dict[str, AttackResult],
                min_fpr: float = 0.0, design: str = "coins") -> ClaimCheck:
    """Each attack's population ROC against 1 − f_{ε,δ} (average case, never the verdict).

    Parameters
    ----------
    claim : PrivacyClaim or None
        The claim held against (None: nothing to compare with).
    unit : {'membership', 'label', 'feature'}
    results : dict of AttackResult
        The attacks' population ROCs.
    design : {'coins', 'swap'}
        The design's neighbours: coins add or remove a record, swaps replace one.
    min_fpr : float
        Grid points below it are not compared: an FPR under about 10 non-members of a target is
        resolved by too few records for its TPR to mean anything (a threshold above every non-member
        has FPR 0 and a TPR that no ε bounds at that sample size).

    Returns
    -------
    ClaimCheck
    """
    if claim is None:
        return ClaimCheck("none", False, float("nan"), 0, "no claim to compare with")
    kind = parse_neighbourhood(claim.adjacency).kind
    covered = {"label": ("label",), "feature": ("norm-ball",)}.get(
        unit, SWAP_KINDS if design == "swap" else ("add-remove",))
    if kind not in covered:
        note = (f"the claim's neighbourhood ({claim.adjacency}) does not cover {unit} "
                + ("(a replace-one claim bounds swaps; the coin design adds and removes records: use design='swap')"
                   if kind in SWAP_KINDS else ""))
        return ClaimCheck(kind, False, float("nan"), 0, note.strip())
    keep = FPR_GRID >= min_fpr
    bound = 1 - tradeoff_curve(claim.epsilon, claim.delta, FPR_GRID[keep])
    excess = np.array([r.tpr[keep] - bound for r in results.values()])
    above = int((excess > 0).sum())
    where = f"at FPR >= {min_fpr:.2g} (10 non-members per target)"
    note = (f"population ROC within 1 − f(ε, δ) {where}" if above == 0 else
            f"population ROC above 1 − f(ε, δ) at {above} points {where} (not certified: records of one model "
            f"are not independent trials; the certified bounds decide)")
    return ClaimCheck(kind, True, float(excess.max()), above, note, min_fpr=float(min_fpr))


def one_run_rows(scores: np.ndarray, bits: np.ndarray, claim: PrivacyClaim | None,
                 confidence: float) -> list[dict[str, Any]]:
    """The one-run table of one target's scores; k planned from the claim when there is one.

    Parameters
    ----------
    scores : ndarray (m,)
        the designated target's scores
    bits : bool ndarray (m,)
        its coins (True: included)
    claim : PrivacyClaim or None
        the claim held against (None: nothing to compare with)
    confidence : float
        level of the certified bounds
    """
    m = scores.size
    if m < 2:
        return []
    delta = claim.delta if claim is not None else 1e-5
    k = planned_k(m, claim.epsilon, delta, confidence=confidence) if claim is not None and claim.epsilon < 50 \
        else k_grid(m)
    rows = one_run_table(scores, 2.0 * bits - 1.0, delta=delta, confidence=confidence, k=k)
    # The analysis time is not a function of the seed: reports keep only what is.
    return [{key: v for key, v in r.items() if key != "seconds"} for r in rows]


def certify(scores: dict[str, np.ndarray], bits: np.ndarray, claim: PrivacyClaim | None,
            confidence: float) -> tuple[str, list[dict[str, Any]]]:
    """The one-run table of the attack certifying most, every attack at level 1 − (1 − c)/A (Bonferroni).

    The designated target's bits must not choose the attack: every attack's scores for other
    targets use the designated target as a reference, so a choice by AUC would see its bits.
    Testing all A attacks at 1 − (1 − c)/A each keeps the joint level c whichever is reported.

    Parameters
    ----------
    scores : dict of str to ndarray (m,)
        each attack's scores of the designated target
    bits : bool ndarray (m,)
        its coins
    claim : PrivacyClaim or None
        the claim held against (None: nothing to compare with)
    confidence : float
        level of the certified bounds
    """
    level = 1 - (1 - confidence) / len(scores)
    best, best_rows, best_eps = "", [], -1.0
    for name, s in scores.items():
        rows = [dict(r, attack=name, confidence=level) for r in one_run_rows(s, bits, claim, level)]
        eps = max((r["epsilon_lb"] for r in rows if _sets_verdict(r, claim)), default=0.0)
        if eps > best_eps:
            best, best_rows, best_eps = name, rows, eps
    return best, best_rows


def multi_run_bound(signals: np.ndarray, bits: np.ndarray, delta: float, confidence: float) -> dict[str, Any] | None:
    """Clopper–Pearson ε̲ of one canary over fits: canary and test from the first half, counts on the second.

    Parameters
    ----------
    signals : ndarray (K, m)
        the canaries' signals in every fit
    bits : bool ndarray (K, m)
        their coins
    delta : float
        δ of the bound
    confidence : float
        level of the certified bounds
    """
    K = signals.shape[0]
    if K < MULTI_RUN_MIN:
        return None
    sel, ev = slice(0, K // 2), slice(K // 2, K)
    s_sel, b_sel = signals[sel], bits[sel]
    with np.errstate(invalid="ignore", divide="ignore"):
        gap = (np.where(b_sel, s_sel, 0).sum(0) / b_sel.sum(0)) - (np.where(~b_sel, s_sel, 0).sum(0) / (~b_sel).sum(0))
        spread = s_sel.std(0)
        sep = np.nan_to_num(np.abs(gap) / np.where(spread > 0, spread, np.inf))
    j = int(np.argmax(sep))
    col_s, col_b = signals[:, j], bits[:, j]
    sb, eb_ = col_b[sel], col_b[ev]
    if min(sb.sum(), (~sb).sum(), eb_.sum(), (~eb_).sum()) == 0:
        return None
    rb = epsilon_bound(col_s[sel][~sb], col_s[sel][sb], col_s[ev][~eb_], col_s[ev][eb_], delta=delta,
                       confidence=confidence)
    return dict(canary=j, epsilon_lb=float(rb.epsilon), fpr=float(rb.fpr), fnr=float(rb.fnr),
                selection_fits=K // 2, evaluation_fits=K - K // 2, certified=True)


def _sets_verdict(row: dict[str, Any], claim: PrivacyClaim | None = None) -> bool:
    """Whether a one-run row may decide the verdict.

    Rows certified with no assumption always may. The f-DP row with μ-GDP hypotheses certifies
    "not μ̲-GDP", and its ε̲ is ε_{μ̲}(δ): a lower bound on ε only when the mechanism's curve is
    Gaussian, so it decides only a claim that states μ (GDP), where μ̲ > μ refutes the claim itself.
    """
    if not row.get("certified"):
        return False
    return row.get("assumption") == "none" or (row.get("method") == "fdp-gdp" and claim is not None
                                               and claim.mu is not None)


def judge(claim: PrivacyClaim | None, check: ClaimCheck, epsilon_lb: float, certified_any: bool) -> Verdict:
    """violation when a certified ε̲ exceeds a covering claim; pass when one was computed; else info/inconclusive.

    A GDP claim's ε at δ is ε_μ(δ) (:func:`~privaudit.mechanisms.accounting.gdp_epsilon`); the claim's
    own ε is compared when it states no μ.

    Parameters
    ----------
    claim : PrivacyClaim or None
        the claim held against (None: nothing to compare with)
    check : ClaimCheck
        whether the claim covers the unit
    epsilon_lb : float
        the largest deciding ε̲
    certified_any : bool
        whether any deciding bound was computed
    """
    if claim is None:
        return Verdict.INFO
    if not check.applies or not certified_any:
        return Verdict.INCONCLUSIVE
    return Verdict.VIOLATION if epsilon_lb > claimed_epsilon(claim) else Verdict.PASS


def claimed_epsilon(claim: PrivacyClaim) -> float:
    """The ε a certified ε̲ is held against: the claim's, or the smaller ε_μ(δ) of a GDP claim.

    Parameters
    ----------
    claim : PrivacyClaim
    """
    if claim.mu is None or claim.delta <= 0:
        return claim.epsilon
    return min(claim.epsilon, gdp_epsilon(claim.mu, claim.delta))


def _peek_claim(model: Any, X: np.ndarray, y: np.ndarray, seed: int) -> PrivacyClaim | None:
    """The claim a fitted privaudit learner carries (one small fit), or None for a model without one."""
    if not hasattr(type(model), "claim"):
        return None
    return claim_of(fit_model(model, X, y, seed))


def audit_membership(model: Any, X: ArrayLike, y: ArrayLike, *, n_reference: int = 16,
                     attacks: str | list[str] | None = None, canaries: Any = None, canary_kind: str = "mislabel",
                     claim: PrivacyClaim | None = None, unit: str = "auto", design: str = "auto", task: str = "auto",
                     confidence: float = 0.95, n_jobs: int | None = None, timeout: float | None = None,
                     rng: RandomLike = None) -> MembershipAudit:
    """Membership (or label) inference against a model, every fit a target, held against its claim.

    Parameters
    ----------
    model : estimator or trainer
        A scikit-learn estimator or privaudit learner (cloned and refitted), or a trainer
        ``train(X, y, seed)`` (see :mod:`~privaudit.audit.engines.model_training`).
    X, y : arrays (n, d) and (n,)
        The pool of records the fits draw from.
    n_reference : int
        Reference models per target (K = n_reference + 1 fits).
    attacks : str or list of str, optional
        Names of :data:`~privaudit.attacks.membership.ATTACKS` (default :data:`DEFAULT_ATTACKS`).
    canaries : int or (X_c, y_c), optional
        m generated canaries, or the user's own records; each is in a fit with probability ½.
    canary_kind : {"mislabel", "ood"}
        How generated canaries are made (:func:`build_canaries`).
    claim : PrivacyClaim, optional
        Default: the claim the fitted model carries (privaudit learners), else none.
    unit : {"auto", "membership", "label", "feature"}
        What is inferred; ``auto`` reads the claim's neighbourhood (``label``: label DP; a norm ball
        such as ``l2<=1``: feature inference, each record's features moved by the radius).
    design : {"auto", "coins", "swap"}
        Fair coins per record (add/remove neighbours) or swaps within random pairs (replace-one
        neighbours, fixed training-set size, :func:`plan_design`); ``auto`` follows the claim.
    task : {"auto", "classification", "regression"}
    confidence : float
        Level of every certified bound.
    n_jobs : int, optional
        joblib workers for the fits; inside ``joblib.parallel_config(backend="dask")`` they go to Dask.
    timeout : float, optional
        Seconds a fit may take (fits then run in worker processes).
    rng : int, Generator or None
        Fixes the design, every fit's seed and hence the result, whatever ``n_jobs``.

    Returns
    -------
    MembershipAudit

    Raises
    ------
    TrainingError
        When a fit raises, returns a non-finite signal or exceeds ``timeout``; names the fit and its seed.
    """
    Xa, ya = _check_data(X, y)
    check_model(model)
    K = check_int("n_reference", n_reference, maximum=10_000) + 1
    names = _check_attacks(attacks)
    confidence = check_interval("confidence", confidence, 0.0, 1.0)
    task = infer_task(model, ya, task)
    root, seed = resolve_seed(rng)
    seeds = int_seeds(keyed_rng(root, 1), K)
    t0 = time.perf_counter()
    if claim is None and unit == "auto":
        claim = _peek_claim(model, Xa, ya, int(seeds[0]))
    unit = resolve_unit(claim, unit)
    Xc, yc = build_canaries(Xa, ya, canaries, task, keyed_rng(root, 2), canary_kind)
    Xp, yp = np.vstack([Xa, Xc]), np.concatenate([ya, yc])
    n = Xa.shape[0]
    design = resolve_design(design, claim, unit)
    inside, pairs = plan_design(Xp.shape[0], K, keyed_rng(root, 0), design, n)
    y_alt = replacement_labels(yp, task, keyed_rng(root, 3)) if unit == "label" else None
    X_alt = replacement_features(Xp, claim, keyed_rng(root, 4)) if unit == "feature" else None
    fits = fit_models(model, Xp, yp, inside, seeds, task, unit, y_alt, n_jobs=n_jobs, timeout=timeout, X_alt=X_alt)
    fit_seconds = time.perf_counter() - t0
    t1 = time.perf_counter()
    signal = np.stack([f.signal for f in fits])
    log_prob = np.stack([f.log_prob for f in fits])
    if claim is None:
        claim = fits[0].claim
    scores = {}
    for name in names:
        fn, reads = ATTACKS[name]
        scores[name] = fn(signal if reads == "signal" else log_prob, inside)
    results = {name: measure_attack(name, s[:, :n], inside[:, :n]) for name, s in scores.items()}
    best = max(results, key=lambda a: results[a].auc)
    n_out = int((~inside[:, :n]).sum(1).min())
    check = check_claim(claim, unit, results, min_fpr=10.0 / max(n_out, 1), design=design)
    pop = np.arange(n)
    _, population_rows = certify({a: game(s[0], inside[0], pairs, pop)[0] for a, s in scores.items()},
                                 game(scores[best][0], inside[0], pairs, pop)[1], claim, confidence)
    canary = None
    if Xc.shape[0]:
        canary = _canary_result(scores, signal, inside, pairs, n, claim, confidence)
    certified = [r["epsilon_lb"] for r in population_rows if _sets_verdict(r, claim)]
    certified += [canary.epsilon_lb] if canary is not None else []
    eps_lb = float(max(certified, default=0.0))
    check = dataclasses.replace(check, one_run=population_rows)
    verdict = judge(claim, check, eps_lb, bool(certified))
    notes = []
    if unit == "label":
        notes.append("the claim protects labels, not membership: label inference was tested "
                     "(each record's label replaced with probability 1/2)")
    if unit == "feature":
        notes.append(f"the claim protects a move of one record's features within {claim.adjacency}, not "
                     "membership: feature inference was tested (each record's features moved by the radius "
                     "with probability 1/2)")
    return MembershipAudit(attacks=results, best=best, vulnerability=vulnerability(best, scores[best][:, :n],
                                                                                 inside[:, :n]),
                           claim=claim, claim_check=check, canaries=canary, epsilon_lb=eps_lb, verdict=verdict,
                           unit=unit, design=design, n_records=n, n_fits=K, seed=seed, fit_seconds=fit_seconds,
                           attack_seconds=time.perf_counter() - t1, notes=notes)


def _canary_result(scores: dict[str, np.ndarray], signal: np.ndarray, inside: np.ndarray, pairs: np.ndarray | None,
                   n: int, claim: PrivacyClaim | None, confidence: float) -> CanaryResult:
    ci = inside[:, n:]
    cols = np.arange(n, inside.shape[1])
    bits = game(signal[0], inside[0], pairs, cols)[1]
    attack, rows = certify({a: game(s[0], inside[0], pairs, cols)[0] for a, s in scores.items()}, bits, claim,
                           confidence)
    multi = multi_run_bound(signal[:, n:], ci, claim.delta if claim is not None else 1e-5, confidence)
    if ci.shape[1] >= 2 and 0 < ci.sum() < ci.size:
        res = measure_attack(attack, scores[attack][:, n:], ci)
        auc, tpr = res.auc, res.tpr_at_fpr(0.01)
    else:
        auc, tpr = float("nan"), float("nan")
    values = [r["epsilon_lb"] for r in rows if _sets_verdict(r, claim)] + ([multi["epsilon_lb"]] if multi else [])
    return CanaryResult(ci.shape[1], attack, auc, tpr, rows, multi, float(max(values, default=0.0)))


__all__ = ["UNITS", "replacement_features", "SWAP_KINDS", "game", "resolve_design", "DEFAULT_ATTACKS", "MULTI_RUN_MIN", "audit_membership", "build_canaries", "certify", "check_claim",
           "fit_models",
           "judge", "measure_attack", "multi_run_bound", "plan_design", "replacement_labels", "resolve_unit",
           "vulnerability"]
