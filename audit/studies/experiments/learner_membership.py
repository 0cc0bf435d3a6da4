"""The papers' learners audited as trained models: each at its claim's unit, population and canaries apart.

Every learner is audited by :func:`~privaudit.audit.engines.membership.audit_membership` on one
small synthetic task (features in the ℓ2 ball of radius 1, labels in [−1, 1], or a binary class),
at several ε, with mislabelled canaries. The audit reads the unit from each claim:

* seed 000's modulated regressor protects one client's features within ``l2<=1``: feature inference;
* seed 001's IWP-SGD is locally private on any pair of records, FedAvg-DP-SGD is replace-one:
  membership in the swap design;
* seed 002's Cond-DP and its DP-SGD baseline are label DP: label inference;
* full-batch DP-GD logistic regression is add/remove μ-GDP: membership in the coin design.

The table gives, per learner and ε, the best attack's AUC and TPR at 1 % FPR on the population
(average case) and on the canaries (worst case), and the certified ε̲ of each (one run, no assumption).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from privaudit.learners.conddp import CondDPRegressor, DPSGDRegressor
from privaudit.learners.dpgd_logistic import DPGDLogisticClassifier
from privaudit.learners.fedavg import FedAvgDPSGDRegressor
from privaudit.learners.iwp import IWPSGDClassifier
from privaudit.learners.modulated import OneShotModulatedRegressor
from privaudit.mechanisms.randomness import RandomLike, int_seeds, keyed_rng, resolve_seed
from privaudit.mechanisms.validation import check_epsilon, check_int

from privaudit.audit.engines.membership import audit_membership
from privaudit.audit.results import ExperimentResult

EPSILONS = (1.0, 4.0)

#: Learner name -> (constructor at ε, task).
LEARNERS = {
    "OneShotModulatedRegressor": (lambda e: OneShotModulatedRegressor(epsilon=e, delta=1e-5), "regression"),
    "IWPSGDClassifier": (lambda e: IWPSGDClassifier(epsilon=e, bounds=(-1.0, 1.0)), "classification"),
    "CondDPRegressor": (lambda e: CondDPRegressor(epsilon=e, epochs=20, label_bounds=(-1.0, 1.0)), "regression"),
    "DPSGDRegressor": (lambda e: DPSGDRegressor(epsilon=e, epochs=20, label_bounds=(-1.0, 1.0)), "regression"),
    "FedAvgDPSGDRegressor": (lambda e: FedAvgDPSGDRegressor(epsilon=e), "regression"),
    "DPGDLogisticClassifier": (lambda e: DPGDLogisticClassifier(epsilon=e, steps=30, lr=0.01), "classification"),
}


def _task(gen: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features in the unit ℓ2 ball (3-d), a clipped linear response, and a noisy binary class."""
    X = gen.uniform(-1, 1, (n, 3)) / np.sqrt(3)
    y_reg = np.clip(X @ np.array([1.0, -1.0, 0.5]) + 0.1 * gen.normal(size=n), -1, 1)
    y_cls = (X[:, 0] + 0.2 * gen.normal(size=n) > 0).astype(int)
    return X, y_reg, y_cls


def _certified(rows: list[dict]) -> float:
    return float(max((r["epsilon_lb"] for r in rows if r.get("assumption") == "none"), default=0.0))


def run_learner_membership(*, small: bool = False, rng: RandomLike = 0, epsilons: Sequence[float] = EPSILONS,
                           n: int = 400, canaries: int = 200, n_reference: int = 4) -> ExperimentResult:
    """Membership, label or feature inference against each paper's learner, population and canaries apart.

    Parameters
    ----------
    small : bool
        A smoke run: ε = 4 only, 200 records, 50 canaries, 2 reference models.
    rng : int, Generator, SeedSequence or None
        Root seed (recorded in the result).
    epsilons : sequence of float
        The learners' ε (δ their default).
    n : int
        Records of the task.
    canaries : int
        Mislabelled canaries per audit.
    n_reference : int
        Reference models per target.

    Returns
    -------
    ExperimentResult
        A panel of population and canary AUC against ε per learner, and the table of every number.
    """
    root, seed = resolve_seed(rng)
    if small:
        epsilons, n, canaries, n_reference = (4.0,), 200, 50, 2
    eps_list = [check_epsilon(e) for e in epsilons]
    X, y_reg, y_cls = _task(keyed_rng(root, 0), check_int("n", n, minimum=20))
    seeds = int_seeds(keyed_rng(root, 1), len(LEARNERS) * len(eps_list))
    rows, panels = [], {"population AUC": {}, "canary AUC": {}}
    for i, (name, (make, task)) in enumerate(LEARNERS.items()):
        y = y_reg if task == "regression" else y_cls
        for j, eps in enumerate(eps_list):  # a dozen audits: the loop is over models, not records
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # convergence and derived-bounds warnings of small fits
                res = audit_membership(make(eps), X, y, n_reference=check_int("n_reference", n_reference),
                                       canaries=check_int("canaries", canaries), rng=int(seeds[i * len(eps_list) + j]))
            best = res.attacks[res.best]
            rows.append(dict(learner=name, epsilon=eps, unit=res.unit, design=res.design,
                             claim=res.claim.adjacency if res.claim else None, attack=res.best,
                             population_auc=best.auc, population_tpr_1pct=best.tpr_at_fpr(0.01),
                             population_epsilon_lb=_certified(res.claim_check.one_run),
                             canary_auc=res.canaries.auc, canary_tpr_1pct=res.canaries.tpr_at_1pct,
                             canary_epsilon_lb=res.canaries.epsilon_lb, verdict=str(res.verdict)))
        mine = [r for r in rows if r["learner"] == name]
        panels["population AUC"][name] = {"x": eps_list, "y": [r["population_auc"] for r in mine]}
        panels["canary AUC"][name] = {"x": eps_list, "y": [r["canary_auc"] for r in mine]}
    over = [f"{r['learner']} at ε = {r['epsilon']:g}" for r in rows if r["verdict"] == "violation"]
    notes = [f"{n} records, {canaries} mislabelled canaries, {n_reference} reference models per target",
             "each learner is audited at its claim's unit (feature, label or membership; swap design for "
             "replace-one and local claims)",
             "no certified ε̲ exceeds a claim" if not over else f"certified ε̲ exceeds the claim: {over}"]
    return ExperimentResult(name="learner-membership", target="the papers' learners as trained models",
                            xlabel="ε", ylabel="AUC", panels=panels, table=rows, notes=notes, seed=seed,
                            xscale="log")


__all__ = ["EPSILONS", "LEARNERS", "run_learner_membership"]
