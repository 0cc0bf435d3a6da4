"""Privacy, utility and attack success across ε for one DP model: accuracy, TPR at 1 % FPR, certified ε̲.

For each ε, :class:`~privaudit.learners.DPGDLogisticClassifier` (full-batch DP-GD, exact μ-GDP
accounting) is

* trained on a random half of the records and scored on the other half (utility: accuracy);
* audited by :func:`~privaudit.audit.engines.membership.audit_membership` with out-of-distribution
  canaries on the data set's constant features: the best attack's TPR at 1 % FPR on the population
  records (average case) and on the canaries (worst case), and the certified ε̲ (the one-run bounds;
  the GDP row decides, the claim stating μ).

Three panels against ε: accuracy (with the non-private model's as a flat line), TPR at 1 % FPR
(population and canaries), certified ε̲ beside the claimed ε (the line y = ε): a point above that
line would be a violation.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.linear_model import LogisticRegression

from privaudit.learners.datasets import load_model_dataset
from privaudit.learners.dpgd_logistic import DPGDLogisticClassifier
from privaudit.mechanisms.randomness import RandomLike, int_seeds, keyed_rng, resolve_seed
from privaudit.mechanisms.validation import check_epsilon, check_int

from privaudit.audit.engines.membership import audit_membership
from privaudit.audit.results import ExperimentResult

EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)


def run_privacy_utility_attack(*, small: bool = False, rng: RandomLike = 0, epsilons: Sequence[float] = EPSILONS,
                               dataset: str = "sparse", canaries: int = 1000, n_reference: int = 4,
                               steps: int = 30, lr: float = 0.01) -> ExperimentResult:
    """Accuracy, membership TPR at 1 % FPR and certified ε̲ of DP-GD logistic regression across ε.

    Parameters
    ----------
    small : bool
        A smoke run: ε ∈ {1, 4}, 300 canaries, 2 reference models.
    rng : int, Generator, SeedSequence or None
        Root seed (recorded in the result).
    epsilons : sequence of float
        The claimed ε of each model (δ = 1e-5).
    dataset : str
        A data set of :func:`~privaudit.learners.datasets.load_model_dataset` with at least ``canaries``
        constant features (the default ``sparse`` has 1,500).
    canaries : int
        Out-of-distribution canaries per audit.
    n_reference : int
        Reference models per target.
    steps, lr : int, float
        DP-GD's steps and step size.

    Returns
    -------
    ExperimentResult
        Three panels against ε and a table of every number.
    """
    root, seed = resolve_seed(rng)
    if small:
        epsilons, canaries, n_reference = (1.0, 4.0), 300, 2
    eps_list = [check_epsilon(e) for e in epsilons]
    canaries, n_reference = check_int("canaries", canaries), check_int("n_reference", n_reference)
    X, y, _ = load_model_dataset(dataset)
    half = keyed_rng(root, 0).random(len(y)) < 0.5
    seeds = int_seeds(keyed_rng(root, 1), len(eps_list))
    baseline = LogisticRegression(max_iter=1000).fit(X[half], y[half]).score(X[~half], y[~half])
    rows = []
    for eps, s in zip(eps_list, seeds):  # one model family per ε: a handful of points
        model = DPGDLogisticClassifier(epsilon=eps, steps=steps, lr=lr)
        accuracy = model.set_params(random_state=int(s)).fit(X[half], y[half]).score(X[~half], y[~half])
        res = audit_membership(model.set_params(random_state=None), X, y, n_reference=n_reference,
                               canaries=canaries, canary_kind="ood", rng=int(s))
        best = res.attacks[res.best]
        rows.append(dict(epsilon=eps, accuracy=accuracy, tpr_population=best.tpr_at_fpr(0.01),
                         tpr_canaries=res.canaries.tpr_at_1pct, auc_population=best.auc, epsilon_lb=res.epsilon_lb,
                         verdict=str(res.verdict), attack=res.best))
    xs = [r["epsilon"] for r in rows]

    def series(key):
        return {"x": xs, "y": [r[key] for r in rows]}

    panels = {
        "utility": {"DP-GD accuracy": series("accuracy"), "non-private": {"x": xs, "y": [baseline] * len(xs)}},
        "membership TPR at 1 % FPR": {"population (best attack)": series("tpr_population"),
                                      "canaries (certifying attack)": series("tpr_canaries")},
        "certified ε̲": {"certified ε̲": series("epsilon_lb"), "claimed ε": {"x": xs, "y": xs}},
    }
    panel_axes = {"utility": {"ylabel": "test accuracy"}, "membership TPR at 1 % FPR": {"ylabel": "TPR",
                                                                                         "yscale": "linear"},
                  "certified ε̲": {"ylabel": "ε", "yscale": "linear"}}
    over = [r["epsilon"] for r in rows if r["verdict"] == "violation"]
    notes = [f"non-private logistic regression's accuracy: {baseline:.3f}",
             f"{canaries} out-of-distribution canaries on the constant features of {dataset!r}, "
             f"{n_reference} reference models per target, δ = 1e-5",
             "no certified ε̲ exceeds its claim" if not over else f"certified ε̲ exceeds the claim at ε = {over}"]
    return ExperimentResult(name="privacy-utility-attack", target=f"DP-GD logistic regression on {dataset}",
                            xlabel="claimed ε", ylabel="", panels=panels, table=rows, notes=notes, seed=seed,
                            xscale="log", panel_axes=panel_axes)


__all__ = ["EPSILONS", "run_privacy_utility_attack"]
