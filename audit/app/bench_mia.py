"""Membership-inference leaderboard: ``privaudit bench mia``.

Every membership attack of :data:`privaudit.attacks.membership.ATTACKS` is run against a small
grid of (dataset, model) settings on data that ships with scikit-learn, at equal reference
budgets (by default 1, 2, 4 and 16 reference models per target), and ranked per budget.

Design (budget-fair, common random numbers)
-------------------------------------------
For each setting, the largest design is fitted once, with the engine's own stages
(:func:`~privaudit.audit.engines.membership.plan_design` and
:func:`~privaudit.audit.engines.membership.fit_models`): K = max budget + 1 models, each on an
independent fair-coin half of the records, seeded exactly as
:func:`~privaudit.audit.engines.membership.audit_membership` seeds them. Fits are exchangeable, so
a smaller budget b is evaluated on the same fits: every fit t is the target once, and its
reference models are the b fits that follow it, cyclically (t + 1, …, t + b mod K). Hence

* every attack and every budget sees the same fitted models (common random numbers): a
  difference between two rows is the attack or the budget, not another draw of the fits;
* every budget averages over the same K targets (``loss`` uses no reference model, so its row
  is the same at every budget);
* at the largest budget the numbers are those of ``audit_membership(model, X, y,
  n_reference=b, rng=seed)`` with the setting's seed;
* the fits are paid once per setting (K fits), not once per budget (Σ_b (b + 1) fits).

Metrics (per setting, budget and attack, population records, no canaries): the AUC averaged
over the K targets and its standard deviation over them, and the TPR at FPR 10⁻³ and 10⁻² (the
largest TPR at FPR ≤ the level, averaged over targets, as in Carlini et al. 2022).
``fit_seconds`` is the wall time per fit; an audit at budget b costs b + 1 fits. Timing fields
(:data:`TIMING_FIELDS`) are the only ones that are not a function of the seed.

Results go to ``OUT/mia/``: ``leaderboard.json`` (schema :data:`SCHEMA`), ``leaderboard.md``,
``leaderboard.html`` (self-contained, figures embedded as base64 PNG, in the style of the audit
reports) and ``figures/*.png``, each written atomically.
"""

from __future__ import annotations

import argparse
import dataclasses
import html
import io
import json
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from privaudit.attacks.membership import ATTACKS
from privaudit.mechanisms.randomness import int_seeds, keyed_rng, keyed_seed_sequence, resolve_seed, uint32_seed

from privaudit.audit.app.report_store import atomic_write
from privaudit.audit.engines.membership import DEFAULT_ATTACKS, fit_models, measure_attack, plan_design
from privaudit.audit.engines.membership_results import FPR_GRID, AttackResult
from privaudit.audit.engines.model_training import fit_model, infer_task
from privaudit.audit.results import to_jsonable

SCHEMA = "privaudit.mia-leaderboard/1"
#: Reference budgets of the full leaderboard and of ``--quick``.
DEFAULT_BUDGETS = (1, 2, 4, 16)
QUICK_BUDGETS = (1, 2)
#: The largest budget accepted (K = budget + 1 fits per setting).
MAX_BUDGET = 256
#: Fields that hold wall times: the only ones that are not a function of the seed.
TIMING_FIELDS = frozenset({"fit_seconds", "attack_seconds", "seconds"})
#: Seed of the fixed subsample of the quick settings (part of the setting, not of ``--seed``).
SUBSAMPLE_SEED = 20240601


# --------------------------------------------------------------------------- settings
def _subsample(X: np.ndarray, y: np.ndarray, n: int | None) -> tuple[np.ndarray, np.ndarray]:
    """``n`` fixed rows of (X, y) (in their original order), or all of them when ``n`` is None."""
    if n is None or n >= y.size:
        return X, y
    rows = np.sort(np.random.default_rng(SUBSAMPLE_SEED).permutation(y.size)[:n])
    return X[rows], y[rows]


def load_digits_scaled(n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's digits (1797 × 64, 10 classes), pixels divided by 16, optionally ``n`` fixed rows.

    Parameters
    ----------
    n : int, optional
        Rows kept (a fixed subsample); all when None.

    Returns
    -------
    X : ndarray (n, 64)
    y : ndarray (n,)
    """
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    return _subsample(X / 16.0, y, n)


def load_breast_cancer_standardised(n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's breast cancer (569 × 30, 2 classes), each feature standardised, optionally ``n`` fixed rows.

    The scaling is fitted on the whole pool (every fit's members and non-members): it is part of
    the data, not of the model under attack.

    Parameters
    ----------
    n : int, optional
        Rows kept (a fixed subsample, standardised after subsampling); all when None.

    Returns
    -------
    X : ndarray (n, 30)
    y : ndarray (n,)
    """
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X, y = _subsample(X, y, n)
    sd = X.std(0)
    return (X - X.mean(0)) / np.where(sd > 0, sd, 1.0), y


def _mlp(hidden: int, max_iter: int) -> Any:
    from sklearn.neural_network import MLPClassifier

    return MLPClassifier(hidden_layer_sizes=(hidden,), alpha=1e-4, max_iter=max_iter)


def _forest(n_estimators: int) -> Any:
    from sklearn.ensemble import RandomForestClassifier

    return RandomForestClassifier(n_estimators=n_estimators)


@dataclasses.dataclass(frozen=True)
class MiaSetting:
    """One (dataset, model) setting of the leaderboard.

    Attributes
    ----------
    name : str
        Row label.
    data : str
        What the records are (shown in the settings table).
    model : str
        The model under attack, as constructed (shown in the settings table).
    load : callable
        ``load() -> (X, y)``: the pool of records the fits draw from.
    build : callable
        ``build() -> estimator``: a fresh, unfitted scikit-learn classifier.
    """

    name: str
    data: str
    model: str
    load: Callable[[], tuple[np.ndarray, np.ndarray]]
    build: Callable[[], Any]


def default_settings() -> dict[str, MiaSetting]:
    """The full grid: a wide MLP on digits, and a random forest (which memorises) on breast cancer."""
    return {s.name: s for s in (
        MiaSetting("digits-mlp256", "digits (1797 × 64, 10 classes), X/16",
                   "MLPClassifier(hidden_layer_sizes=(256,), alpha=1e-4, max_iter=300)",
                   load_digits_scaled, lambda: _mlp(256, 300)),
        MiaSetting("breast-cancer-rf50", "breast cancer (569 × 30, 2 classes), standardised",
                   "RandomForestClassifier(n_estimators=50)",
                   load_breast_cancer_standardised, lambda: _forest(50)),
    )}


def quick_settings() -> dict[str, MiaSetting]:
    """The ``--quick`` grid: a small MLP on fixed subsamples of both datasets (seconds on one core)."""
    return {s.name: s for s in (
        MiaSetting("digits-600-mlp64", "digits, 600 fixed rows, X/16",
                   "MLPClassifier(hidden_layer_sizes=(64,), alpha=1e-4, max_iter=500)",
                   lambda: load_digits_scaled(600), lambda: _mlp(64, 500)),
        MiaSetting("breast-cancer-300-mlp64", "breast cancer, 300 fixed rows, standardised",
                   "MLPClassifier(hidden_layer_sizes=(64,), alpha=1e-4, max_iter=500)",
                   lambda: load_breast_cancer_standardised(300), lambda: _mlp(64, 500)),
    )}


def all_settings() -> dict[str, MiaSetting]:
    """Every setting, full grid first: a setting's seed is keyed by its position here."""
    return {**default_settings(), **quick_settings()}


def setting_seed(seed: int, name: str) -> int:
    """The integer seed of one setting: child ``i`` of ``SeedSequence(seed)``, i its position in :func:`all_settings`.

    The same whatever other settings are run.

    Parameters
    ----------
    seed : int
        Root seed (``--seed``).
    name : str
        A setting's name.

    Returns
    -------
    int
        A seed in [0, 2³²), passed to the design as ``audit_membership``'s ``rng`` would be.
    """
    index = list(all_settings()).index(name)
    return uint32_seed(keyed_seed_sequence(np.random.SeedSequence(seed), index))


# --------------------------------------------------------------------------- design
@dataclasses.dataclass(frozen=True)
class FittedDesign:
    """The largest design of one setting, fitted once: every smaller budget is evaluated on it.

    Attributes
    ----------
    inside : bool ndarray (K, n)
        ``inside[k, i]``: record i was in fit k's training set.
    signal, log_prob : ndarray (K, n)
        Each fit's membership signal and log p(y|x) on every record (what the attacks read).
    fit_seconds : float
        Wall time of all K fits.
    """

    inside: np.ndarray
    signal: np.ndarray
    log_prob: np.ndarray
    fit_seconds: float

    @property
    def n_fits(self) -> int:
        """K, the number of fitted models."""
        return int(self.inside.shape[0])


@dataclasses.dataclass(frozen=True)
class QuietFit:
    """A trainer ``train(X, y, seed)``: the engine's fit of a clone of ``estimator``, without its ConvergenceWarning.

    The MLPs' ``max_iter`` is part of their setting, so scikit-learn's warning that it was reached is
    noise here (dozens of identical lines); the fit is :func:`~privaudit.audit.engines.model_training.fit_model`'s,
    in a worker process too.

    Attributes
    ----------
    estimator : estimator
        The unfitted scikit-learn model.
    """

    estimator: Any

    def __call__(self, X: np.ndarray, y: np.ndarray, seed: int) -> Any:
        """Fit a clone of the estimator on (X, y) with ``random_state = seed``; returns it."""
        from sklearn.exceptions import ConvergenceWarning

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return fit_model(self.estimator, X, y, seed)


def fit_design(model: Any, X: np.ndarray, y: np.ndarray, n_fits: int, *, seed: int,
               n_jobs: int | None = 1) -> FittedDesign:
    """Fit the ``n_fits`` models of a leave-many-out design, as ``audit_membership(rng=seed)`` would.

    The inclusion coins, the fits' seeds and the fits themselves are those of
    :func:`~privaudit.audit.engines.membership.audit_membership` with ``n_reference = n_fits − 1``
    (no canaries, membership unit).

    Parameters
    ----------
    model : estimator
        A scikit-learn classifier (cloned for every fit).
    X, y : ndarray
        The pool of records.
    n_fits : int
        K, at least 2.
    seed : int
        The design's seed.
    n_jobs : int, optional
        joblib workers for the fits.

    Returns
    -------
    FittedDesign
    """
    root, _ = resolve_seed(seed)
    seeds = int_seeds(keyed_rng(root, 1), n_fits)
    inside, _ = plan_design(X.shape[0], n_fits, keyed_rng(root, 0))
    task = infer_task(model, y)
    t0 = time.perf_counter()
    fits = fit_models(QuietFit(model), X, y, inside, seeds, task, "membership", None, n_jobs=n_jobs, timeout=None)
    seconds = time.perf_counter() - t0
    return FittedDesign(inside, np.stack([f.signal for f in fits]), np.stack([f.log_prob for f in fits]), seconds)


def reference_window(target: int, budget: int, n_fits: int) -> np.ndarray:
    """The fits a target is scored with at a budget: itself and the ``budget`` fits after it, cyclically, sorted.

    Parameters
    ----------
    target : int
        The target fit t.
    budget : int
        Reference models b (1 ≤ b < K).
    n_fits : int
        K.

    Returns
    -------
    ndarray of int
        The b + 1 fit indices {t, t + 1, …, t + b} mod K in increasing order.
    """
    return np.sort((target + np.arange(budget + 1)) % n_fits)


def budget_scores(design: FittedDesign, attack: str, budget: int) -> np.ndarray:
    """Every target's scores of one attack when each target has ``budget`` reference models.

    Parameters
    ----------
    design : FittedDesign
    attack : str
        A name of :data:`~privaudit.attacks.membership.ATTACKS`.
    budget : int
        Reference models per target (1 ≤ budget < K).

    Returns
    -------
    ndarray (K, n)
        Row t: the attack's scores of the records against target t (higher: member).
    """
    fn, reads = ATTACKS[attack]
    values = design.signal if reads == "signal" else design.log_prob
    scores = np.empty_like(values)
    for t in range(design.n_fits):
        window = reference_window(t, budget, design.n_fits)
        scores[t] = fn(values[window], design.inside[window])[int(np.searchsorted(window, t))]
    return scores


def evaluate_budget(design: FittedDesign, attacks: Sequence[str], budget: int) -> dict[str, AttackResult]:
    """Each attack's ROC at one budget, averaged over the K targets.

    Parameters
    ----------
    design : FittedDesign
    attacks : sequence of str
    budget : int

    Returns
    -------
    dict of str to AttackResult
    """
    return {a: measure_attack(a, budget_scores(design, a, budget), design.inside) for a in attacks}


# --------------------------------------------------------------------------- the leaderboard
def _row(setting: str, budget: int, res: AttackResult, fit_seconds: float) -> dict[str, Any]:
    return {"setting": setting, "budget": budget, "attack": res.name, "auc": res.auc, "auc_std": res.auc_std,
            "tpr_at_1e-3": res.tpr_at_fpr(1e-3), "tpr_at_1e-2": res.tpr_at_fpr(1e-2), "targets": res.targets,
            "fit_seconds": fit_seconds}


def rank_key(row: dict[str, Any]) -> tuple[float, float, str]:
    """Sort key of a row within its (setting, budget): AUC, then TPR at 10⁻³, high first, then the name.

    Parameters
    ----------
    row : dict
        a leaderboard row (``auc``, ``tpr_at_1e-3``, ``attack``)
    """
    return (-float(row["auc"]), -float(row["tpr_at_1e-3"]), str(row["attack"]))


def _ranked(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of one (setting, budget), best first, each with its ``rank`` (1 = best)."""
    return [{**r, "rank": i + 1} for i, r in enumerate(sorted(rows, key=rank_key))]


def run_setting(setting: MiaSetting, budgets: Sequence[int], attacks: Sequence[str], *, seed: int,
                n_jobs: int | None = 1) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    """Fit one setting's largest design once and evaluate every budget on it.

    Parameters
    ----------
    setting : MiaSetting
    budgets : sequence of int
        Increasing reference budgets.
    attacks : sequence of str
    seed : int
        The setting's seed (:func:`setting_seed`).
    n_jobs : int, optional
        joblib workers for the fits.

    Returns
    -------
    info : dict
        The setting's data, model, sizes, seed and timings.
    rows : list of dict
        One ranked row per (budget, attack).
    roc : dict
        The ROC of every attack at the largest budget (``fpr`` grid and ``tpr`` per attack).
    """
    X, y = setting.load()
    design = fit_design(setting.build(), X, y, max(budgets) + 1, seed=seed, n_jobs=n_jobs)
    per_fit = design.fit_seconds / design.n_fits
    t0 = time.perf_counter()
    rows, last = [], {}
    for b in budgets:
        last = evaluate_budget(design, attacks, b)
        rows += _ranked([_row(setting.name, b, res, per_fit) for res in last.values()])
    info = {"name": setting.name, "data": setting.data, "model": setting.model, "n_records": int(y.size),
            "n_features": int(X.shape[1]), "n_classes": int(np.unique(y).size), "n_fits": design.n_fits,
            "seed": seed, "fit_seconds": per_fit, "attack_seconds": time.perf_counter() - t0}
    roc = {"budget": max(budgets), "fpr": FPR_GRID, "tpr": {a: r.tpr for a, r in last.items()}}
    return info, rows, roc


def check_budgets(budgets: Sequence[int]) -> tuple[int, ...]:
    """Budgets as distinct increasing integers in [1, :data:`MAX_BUDGET`]; ValueError naming the bad one.

    Parameters
    ----------
    budgets : sequence of int
        reference-model budgets
    """
    values = list(budgets)
    if not values:
        raise ValueError("budgets must name at least one reference budget")
    for b in values:
        if isinstance(b, bool) or not isinstance(b, int | np.integer) or not 1 <= b <= MAX_BUDGET:
            raise ValueError(f"a reference budget must be an integer in [1, {MAX_BUDGET}], got {b!r}")
    return tuple(sorted({int(b) for b in values}))


def _choose(names: Sequence[str] | None, available: dict[str, Any], what: str) -> list[str]:
    chosen = list(dict.fromkeys(available if names is None else names))  # in order, each once
    unknown = [s for s in chosen if s not in available]
    if unknown or not chosen:
        raise ValueError(f"unknown {what}(s) {unknown}; available: {sorted(available)}")
    return chosen


def resolve_request(settings: Sequence[str] | None, budgets: Sequence[int] | None, attacks: Sequence[str] | None,
                    quick: bool) -> tuple[list[str], tuple[int, ...], list[str]]:
    """The settings, budgets and attacks a run asks for, defaults filled in, checked before anything is fitted.

    Parameters
    ----------
    settings, budgets, attacks : sequence, optional
        As :func:`run_mia_benchmark` takes them.
    quick : bool

    Returns
    -------
    settings : list of str
    budgets : tuple of int
    attacks : list of str

    Raises
    ------
    ValueError
        An unknown setting or attack, or a budget outside [1, :data:`MAX_BUDGET`].
    """
    default = quick_settings() if quick else default_settings()
    chosen = _choose(list(default) if settings is None else settings, all_settings(), "setting")
    names = _choose(list(DEFAULT_ATTACKS) if attacks is None else attacks, ATTACKS, "attack")
    return chosen, check_budgets((QUICK_BUDGETS if quick else DEFAULT_BUDGETS) if budgets is None else budgets), names


def run_mia_benchmark(*, settings: Sequence[str] | None = None, budgets: Sequence[int] | None = None,
                      attacks: Sequence[str] | None = None, quick: bool = False, seed: int = 0,
                      n_jobs: int | None = 1, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run every (setting, budget, attack) cell; return the leaderboard as plain data.

    Parameters
    ----------
    settings : sequence of str, optional
        Settings to run (default: the full grid, or the quick grid with ``quick``).
    budgets : sequence of int, optional
        Reference budgets (default :data:`DEFAULT_BUDGETS`, or :data:`QUICK_BUDGETS` with ``quick``).
    attacks : sequence of str, optional
        Attacks (default: the engine's five, :data:`~privaudit.audit.engines.membership.DEFAULT_ATTACKS`).
    quick : bool
        Small MLPs on fixed subsamples, budgets 1 and 2: under a minute on 2 cores.
    seed : int
        Root seed; each setting gets its own child (:func:`setting_seed`).
    n_jobs : int, optional
        joblib workers for the fits (the result does not depend on it).
    progress : callable, optional
        Called with one line per setting before it runs.

    Returns
    -------
    dict
        The leaderboard: schema, seed, budgets, attacks, settings, per-setting ``info``, the ranked
        ``rows`` and each setting's ``roc`` at the largest budget.

    Raises
    ------
    ValueError
        An unknown setting or attack, or a budget outside [1, :data:`MAX_BUDGET`].
    """
    t0 = time.perf_counter()
    chosen, budgets, names = resolve_request(settings, budgets, attacks, quick)
    grid = all_settings()
    info, rows, roc = {}, [], {}
    for name in chosen:
        if progress:
            progress(f"{name}: {max(budgets) + 1} fits, budgets {', '.join(map(str, budgets))}")
        info[name], cells, roc[name] = run_setting(grid[name], budgets, names, seed=setting_seed(seed, name),
                                                   n_jobs=n_jobs)
        rows += cells
    return to_jsonable({"schema": SCHEMA, "seed": seed, "quick": quick, "budgets": list(budgets), "attacks": names,
                        "settings": chosen, "info": info, "rows": rows, "roc": roc,
                        "seconds": time.perf_counter() - t0})


def without_timing(value: Any) -> Any:
    """A leaderboard (or part of it) with every :data:`TIMING_FIELDS` key removed: what a seed fixes.

    Parameters
    ----------
    value : dict, list or scalar

    Returns
    -------
    The same structure without timing fields.
    """
    if isinstance(value, dict):
        return {k: without_timing(v) for k, v in value.items() if k not in TIMING_FIELDS}
    if isinstance(value, list):
        return [without_timing(v) for v in value]
    return value


# --------------------------------------------------------------------------- tables
def _intro(board: dict) -> str:
    b = board["budgets"]
    return (f"seed {board['seed']}{', quick mode' if board.get('quick') else ''}; budgets "
            f"{', '.join(map(str, b))} reference models per target. For each setting the {b[-1] + 1} models of the "
            f"largest design are fitted once, each on an independent fair-coin half of the records; at budget b every "
            "fit is the target once and its references are the b fits after it (cyclically), so every attack and "
            "every budget sees the same fits and averages over the same targets (loss uses no reference, so it is "
            f"the same at every budget). At budget {b[-1]} the numbers are those of audit_membership(n_reference="
            f"{b[-1]}, rng=the setting's seed). AUC: mean ± sd over targets; TPR at FPR ≤ 0.1 % and 1 %, averaged "
            "over targets; an audit at budget b costs b + 1 fits.")


def _settings_table(board: dict) -> tuple[str, list[str], list[list[str]]]:
    rows = [[name, i["data"], i["model"], str(i["n_records"]), str(i["n_fits"]), str(i["seed"]),
             f"{float(i['fit_seconds']):.2f}"] for name, i in ((n, board["info"][n]) for n in board["settings"])]
    return "Settings", ["setting", "data", "model", "records", "fits", "seed", "s / fit"], rows


def ranking_rows(board: dict, setting: str) -> list[list[str]]:
    """One setting's ranking as text cells: per budget (increasing), attacks best first.

    Parameters
    ----------
    board : dict
        A leaderboard (:func:`run_mia_benchmark`, or its JSON read back).
    setting : str

    Returns
    -------
    list of list of str
        ``[budget, rank, attack, AUC ± sd, TPR@0.1%, TPR@1%]`` per row.
    """
    rows = [r for r in board["rows"] if r["setting"] == setting]
    rows.sort(key=lambda r: (int(r["budget"]), int(r["rank"])))
    return [[str(r["budget"]), str(r["rank"]), r["attack"], f"{float(r['auc']):.3f} ± {float(r['auc_std']):.3f}",
             f"{float(r['tpr_at_1e-3']):.4f}", f"{float(r['tpr_at_1e-2']):.4f}"] for r in rows]


RANKING_HEADER = ["budget", "rank", "attack", "AUC ± sd", "TPR@0.1% FPR", "TPR@1% FPR"]


def mean_rank_rows(board: dict) -> list[list[str]]:
    """Per attack, its rank averaged over the settings at each budget; attacks by their mean rank at the largest budget.

    Parameters
    ----------
    board : dict

    Returns
    -------
    list of list of str
        ``[attack, mean rank at budget 1, …]``.
    """
    ranks: dict[tuple[str, int], list[int]] = {}
    for r in board["rows"]:
        ranks.setdefault((r["attack"], int(r["budget"])), []).append(int(r["rank"]))
    mean = {k: float(np.mean(v)) for k, v in ranks.items()}
    last = board["budgets"][-1]
    order = sorted(board["attacks"], key=lambda a: (mean.get((a, last), np.inf), a))
    return [[a, *(f"{mean[(a, b)]:.1f}" if (a, b) in mean else "–" for b in board["budgets"])] for a in order]


def leaderboard_tables(board: dict) -> list[tuple[str, list[str], list[list[str]]]]:
    """The leaderboard's tables as ``(title, header, rows)`` of text cells, in the order they are shown.

    The settings, one ranking per setting (per budget, best AUC first) and the mean rank over settings.

    Parameters
    ----------
    board : dict
        A leaderboard.

    Returns
    -------
    list of (str, list of str, list of list of str)
    """
    tables = [_settings_table(board)]
    tables += [(f"Ranking: {s}", RANKING_HEADER, ranking_rows(board, s)) for s in board["settings"]]
    tables.append(("Mean rank over settings", ["attack", *(f"budget {b}" for b in board["budgets"])],
                   mean_rank_rows(board)))
    return tables


def render_markdown(board: dict, figures: Sequence[str] = ()) -> str:
    """The leaderboard as Markdown: one table per section of :func:`leaderboard_tables`.

    Parameters
    ----------
    board : dict
        A leaderboard.
    figures : sequence of str
        File names under ``figures/`` to link after each setting's ranking (``<setting>.png``).

    Returns
    -------
    str
    """
    lines = [f"# Membership-inference leaderboard\n\n{_intro(board)}\n"]
    for k, (title, header, rows) in enumerate(leaderboard_tables(board)):
        lines += [f"{'' if k == 0 else chr(10)}## {title}\n", "| " + " | ".join(header) + " |",
                  "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |" for cells in rows]
        name = f"{title.removeprefix('Ranking: ')}.png"
        if title.startswith("Ranking: ") and name in figures:
            lines += ["", f"![{_caption(board, name[:-4])}](figures/{name})"]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- figures and HTML
def _caption(board: dict, setting: str) -> str:
    return (f"{setting}: mean AUC over targets against the number of reference models (left); log-log ROC of "
            f"every attack at {board['budgets'][-1]} reference models (right).")


def _auc_panel(ax: Any, board: dict, setting: str, colours: dict[str, Any]) -> None:
    budgets = board["budgets"]
    for a in board["attacks"]:
        auc = {int(r["budget"]): float(r["auc"]) for r in board["rows"] if r["setting"] == setting
               and r["attack"] == a}
        ax.plot(budgets, [auc.get(b, np.nan) for b in budgets], marker="o", label=a, color=colours[a])
    ax.set_xscale("log", base=2)
    ax.set_xticks(budgets, [str(b) for b in budgets])
    ax.minorticks_off()
    ax.set_xlabel("reference models per target")
    ax.set_ylabel("AUC (mean over targets)")
    ax.set_title("AUC against the reference budget", fontsize=11)
    ax.grid(alpha=0.3)


def _roc_panel(ax: Any, board: dict, setting: str, colours: dict[str, Any]) -> None:
    from privaudit.audit.engines.membership_results import MembershipRocDisplay

    roc = board["roc"][setting]
    fpr = np.asarray(roc["fpr"], dtype=float)
    aucs = {r["attack"]: float(r["auc"]) for r in board["rows"] if r["setting"] == setting
            and int(r["budget"]) == int(roc["budget"])}
    curves = {a: (fpr, np.asarray(t, dtype=float), aucs[a]) for a, t in roc["tpr"].items()}
    MembershipRocDisplay(curves, None).plot(ax=ax)
    for line in ax.get_lines():  # one colour per attack in both panels
        name = str(line.get_label()).split(" (")[0]
        if name in colours:
            line.set_color(colours[name])
    ax.get_legend().remove()  # the figure's legend names the attacks once, the tables give their AUCs
    ax.set_title(f"log-log ROC at {roc['budget']} reference models", fontsize=11)


def render_figures(board: dict) -> dict[str, bytes]:
    """Per setting, one two-panel PNG: AUC against the budget per attack, and the log-log ROC at the largest budget.

    Parameters
    ----------
    board : dict
        A leaderboard.

    Returns
    -------
    dict of str to bytes
        PNG per file name ``<setting>.png``.
    """
    from matplotlib.figure import Figure

    from privaudit.audit.app.bench import attacker_colours

    colours = attacker_colours(board["attacks"])
    out = {}
    for setting in board["settings"]:
        fig = Figure(figsize=(10, 4.3), layout="constrained")
        left, right = fig.subplots(1, 2)
        _auc_panel(left, board, setting, colours)
        _roc_panel(right, board, setting, colours)
        handles = [*left.get_lines(), next(line for line in right.get_lines() if line.get_label() == "chance")]
        fig.legend(handles, [h.get_label() for h in handles], loc="outside lower center", ncol=len(handles),
                   fontsize=10, frameon=False)
        fig.suptitle(setting, fontsize=12, fontweight="bold")
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110)
        out[f"{setting}.png"] = buf.getvalue()
    return out


#: A setting's single two-panel figure spans the page (the report's grid would give it two thirds of it).
_ONE_FIGURE_CSS = ".figs.one{display:block;max-width:1100px}"


def render_html(board: dict, figures: dict[str, bytes]) -> str:
    """The leaderboard as one self-contained HTML page in the style of the audit reports.

    Parameters
    ----------
    board : dict
        A leaderboard.
    figures : dict of str to bytes
        :func:`render_figures` of it, embedded as base64 PNG (each enlarges on click, CSS only).

    Returns
    -------
    str
    """
    # One look for every privaudit page: the audit report's stylesheet and its table and figure markup
    # (the attacker leaderboard's too). Read from the module: they are private names of reporting.render.
    from privaudit.audit.reporting import render

    e = html.escape
    parts = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
             "<meta name='viewport' content='width=device-width, initial-scale=1'>",
             f"<title>privaudit membership-inference leaderboard</title><style>{render._CSS}</style>",
             f"<style>{_ONE_FIGURE_CSS}</style></head><body>",
             "<h1>privaudit membership-inference leaderboard</h1>", f"<p class='meta'>{e(_intro(board))}</p>"]
    for title, header, rows in leaderboard_tables(board):
        slug = "".join(c if c.isalnum() or c == "-" else "-" for c in title.lower())
        parts += [f"<h2 id='{e(slug)}'>{e(title)}</h2>", render._html_table(header, rows, cls="summary")]
        name = f"{title.removeprefix('Ranking: ')}.png"
        if title.startswith("Ranking: ") and name in figures:
            figure = render._figure(name, figures[name], _caption(board, name[:-4]))
            parts.append(f"<div class='figs one'>{figure}</div>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_leaderboard(board: dict, out_dir: str | Path) -> Path:
    """Write ``leaderboard.json``, ``leaderboard.md``, ``leaderboard.html`` and ``figures/*.png`` into ``out_dir``.

    Parameters
    ----------
    board : dict
        A leaderboard.
    out_dir : path
        Folder to write into (created if needed).

    Returns
    -------
    Path
        ``out_dir``.
    """
    out_dir = Path(out_dir)
    figures = render_figures(board)
    for name, png in figures.items():
        atomic_write(out_dir / "figures" / name, png)
    atomic_write(out_dir / "leaderboard.json", json.dumps(board, indent=2, allow_nan=False) + "\n")
    atomic_write(out_dir / "leaderboard.md", render_markdown(board, list(figures)))
    atomic_write(out_dir / "leaderboard.html", render_html(board, figures))
    return out_dir


# --------------------------------------------------------------------------- command line
def parse_budgets(text: str) -> tuple[int, ...]:
    """``--budgets``: comma-separated integers in [1, :data:`MAX_BUDGET`] (``"1,2,4,16"``).

    Parameters
    ----------
    text : str

    Returns
    -------
    tuple of int
        Distinct, increasing.

    Raises
    ------
    argparse.ArgumentTypeError
        Naming the value and what is expected.
    """
    expected = f"comma-separated integers in [1, {MAX_BUDGET}] (e.g. 1,2,4,16), got {text!r}"
    try:
        values = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {expected}") from None
    try:
        return check_budgets(values)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {expected}") from None


def _seed(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer in [0, 2**63), got {text!r}") from None
    if not 0 <= v < 2**63:
        raise argparse.ArgumentTypeError(f"must be an integer in [0, 2**63), got {text!r}")
    return v


def _jobs(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        v = 0
    if v < 1 and v != -1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1 or -1 (every core), got {text!r}")
    return v


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="privaudit bench mia",
        description="Rank the membership-inference attacks at equal reference budgets on scikit-learn datasets "
                    "and write a leaderboard (OUT/mia/leaderboard.{json,md,html}).",
        epilog="Exit codes: 0 success, 1 a fit or an attack failed, 2 usage or --out error.")
    p.add_argument("--out", default="reports", metavar="DIR",
                   help="parent folder; the leaderboard goes to OUT/mia (default reports)")
    p.add_argument("--seed", type=_seed, default=0, metavar="S", help="root seed (default 0)")
    p.add_argument("--jobs", type=_jobs, default=1, metavar="J",
                   help="joblib workers for the fits (-1 = every core; default 1); the result does not depend on it")
    p.add_argument("--quick", action="store_true",
                   help="small MLPs on fixed subsamples, budgets 1 and 2 (under a minute on 2 cores)")
    p.add_argument("--budgets", type=parse_budgets, default=None, metavar="B,B,...",
                   help=f"reference models per target (default {','.join(map(str, DEFAULT_BUDGETS))}; "
                        f"with --quick {','.join(map(str, QUICK_BUDGETS))})")
    p.add_argument("--settings", nargs="+", default=None, metavar="SETTING",
                   help=f"settings to run (default: {', '.join(default_settings())}; with --quick "
                        f"{', '.join(quick_settings())})")
    p.add_argument("--attacks", nargs="+", default=None, metavar="NAME",
                   help=f"attacks to rank (default: {', '.join(DEFAULT_ATTACKS)})")
    p.add_argument("--json", action="store_true", help="print the leaderboard as JSON on stdout")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """``privaudit bench mia ...``; returns the exit code (2 on bad arguments or ``--out``, 1 on a failed run).

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments after ``bench mia`` (default ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit code: 0, 1 when a fit or an attack failed, 2 on bad arguments.
    """
    from privaudit.audit.app.report_store import check_destination
    from privaudit.audit.schema.fields import ConfigError

    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["mia"]:
        argv = argv[1:]
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        check_destination(args.out, "mia", "", overwrite=True)
    except ConfigError as exc:
        print(f"privaudit: error: {exc}", file=sys.stderr)
        return 2
    try:
        resolve_request(args.settings, args.budgets, args.attacks, args.quick)
    except ValueError as exc:
        print(f"privaudit: error: {exc}", file=sys.stderr)
        return 2
    quiet = args.json or not sys.stderr.isatty()
    try:
        board = run_mia_benchmark(settings=args.settings, budgets=args.budgets, attacks=args.attacks,
                                  quick=args.quick, seed=args.seed, n_jobs=args.jobs,
                                  progress=None if quiet else lambda m: print(f"  {m}", file=sys.stderr))
    except Exception as exc:  # noqa: BLE001 - a fit or an attack that breaks is a failed run, not a usage error
        print(f"privaudit: error: the membership-inference leaderboard failed: {type(exc).__name__}: {exc}",
              file=sys.stderr)
        return 1
    out = write_leaderboard(board, Path(args.out) / "mia")
    if args.json:
        print(json.dumps(board, allow_nan=False))
    else:
        print(f"leaderboard written to {out}/leaderboard.md")
    return 0


__all__ = ["DEFAULT_BUDGETS", "FittedDesign", "MAX_BUDGET", "MiaSetting", "QUICK_BUDGETS", "QuietFit", "SCHEMA",
           "TIMING_FIELDS", "budget_scores", "check_budgets", "default_settings", "evaluate_budget", "fit_design",
           "leaderboard_tables", "main", "mean_rank_rows", "parse_budgets", "quick_settings",
           "ranking_rows", "reference_window", "render_figures", "render_html", "render_markdown", "resolve_request",
           "run_mia_benchmark", "run_setting", "setting_seed", "without_timing", "write_leaderboard"]
