"""Kinds ``membership`` and ``record-reconstruction``: audits of a trained model on a shipped data set.

``membership`` runs :func:`~privaudit.audit.engines.membership.audit_membership` (leave-many-out
reference models, LiRA/RMIA, canaries, certified one-run bounds against the model's claim);
``record-reconstruction`` runs :func:`~privaudit.audit.engines.record_reconstruction.audit_record_reconstruction`
(the informed adversary, against the Cramér–Rao and ReRo bounds under a Gaussian release of the
parameters). Models are named from the model registry (scikit-learn estimators and every privaudit
learner); data sets from :data:`~privaudit.learners.datasets.MODEL_DATASETS` and the statsmodels tasks.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from privaudit.learners.datasets import MODEL_DATASETS, TASKS, load_model_dataset

from privaudit.audit.display.formatting import fnum
from privaudit.audit.engines.membership import audit_membership
from privaudit.audit.engines.membership_results import MembershipAudit, MembershipRocDisplay
from privaudit.audit.engines.record_reconstruction import RecordReconstruction, audit_record_reconstruction, inverter_of
from privaudit.audit.results import AuditEntry, apply_expectation
from privaudit.audit.schema.components import MODELS
from privaudit.audit.schema.fields import ConfigValueError, Field
from privaudit.audit.kinds.base import CONFIDENCE, EXPECT_PRIVATE, AuditKind, Figure, epsilon_table_row

MODEL = Field("table", validate=MODELS.field_validator(), doc="model table {name = ..., <hyperparameters>}")
DATASET = Field("str", "digits", choices=tuple(sorted(MODEL_DATASETS)) + TASKS,
                doc="shipped data set (scikit-learn's, or a statsmodels regression task)")
N_RECORDS = Field("int", None, low=8, high=10**6, doc="records drawn from the data set (default: all)")

FIELDS = {
    "model": MODEL, "dataset": DATASET, "n_records": N_RECORDS,
    "n_reference": Field("int", 16, low=1, high=1000, doc="reference models per target (fits: n_reference + 1)"),
    "canaries": Field("int", 0, low=0, high=10**5, doc="generated canaries, each in a fit with probability 1/2"),
    "canary_kind": Field("str", "mislabel", choices=("mislabel", "ood"),
                         doc="mislabelled copies of records, or out-of-distribution records on constant features"),
    "jobs": Field("int", 1, low=-1, high=1024,
                  doc="joblib workers for this entry's fits (-1: every core; the seed fixes the result whatever the number)"),
    "confidence": CONFIDENCE,
    "expect": EXPECT_PRIVATE,
}


def build_model(table: dict) -> Any:
    """The configured estimator: integral lists become tuples of ints (``hidden_layer_sizes``), others arrays.

    Parameters
    ----------
    table : dict
        a validated model table
    """
    obj, _ = MODELS.resolve_validated(table["name"], "model.name")
    kwargs = {}
    for key, value in table.items():
        if key == "name":
            continue
        if isinstance(value, list):
            arr = np.asarray(value, dtype=float)
            value = tuple(int(v) for v in arr) if np.all(arr == np.round(arr)) else arr
        kwargs[key] = value
    try:
        return obj(**kwargs)
    except (TypeError, ValueError) as exc:
        raise ConfigValueError(f"model: {exc} (got model = {table!r})") from exc


def _data(params: dict) -> tuple[np.ndarray, np.ndarray, str]:
    return load_model_dataset(params["dataset"], n_records=params["n_records"], random_state=0)


def run(params: dict, rng: np.random.Generator) -> AuditEntry:
    """Membership inference against a model trained on a shipped data set, held against its claim.

    Parameters
    ----------
    params : dict
        The entry's validated parameters.
    rng : Generator
        The task's randomness.

    Returns
    -------
    AuditEntry
    """
    X, y, task = _data(params)
    with warnings.catch_warnings():
        # Reference fits of a small max_iter warn once per fit; the audit is about what they release.
        warnings.simplefilter("ignore", category=UserWarning)
        res = audit_membership(build_model(params["model"]), X, y, n_reference=params["n_reference"],
                               canaries=params["canaries"] or None, canary_kind=params["canary_kind"], task=task,
                               confidence=params["confidence"], n_jobs=params["jobs"] or None,
                               rng=rng)
    return apply_expectation(res, params["expect"], caught="violation")


def headline(entry: AuditEntry) -> str:
    """``lira-online AUC … and TPR … at 1 % FPR; certified ε̲ … vs claimed ε = …``.

    Parameters
    ----------
    entry : AuditEntry
        an entry of this kind's result
    """
    res: MembershipAudit = entry.result
    best = res.attacks[res.best]
    text = (f"{res.unit} inference: best attack {res.best}, AUC {best.auc:.3f}, TPR {best.tpr_at_fpr(0.01):.3f} "
            f"at 1 % FPR ({res.n_records} records, {res.n_fits} fits)")
    if res.claim is not None:
        text += f"; certified ε_lb = {fnum(res.epsilon_lb)} vs claimed ε = {fnum(res.claim.epsilon)}"
    return text


def figures(entry: AuditEntry) -> list[Figure]:
    """The log-log ROC of every attack (population records), with the claim's curve where it applies.

    Parameters
    ----------
    entry : AuditEntry
        an entry of this kind's result
    """
    res: MembershipAudit = entry.result
    disp = MembershipRocDisplay.from_result(res).plot()
    best = res.attacks[res.best]
    caption = (f"Membership ROC of {len(res.attacks)} attacks averaged over {best.targets} targets; the best, "
               f"{res.best}, reaches AUC {best.auc:.3f} and TPR {best.tpr_at_fpr(0.01):.3f} at 1 % FPR.")
    if disp.claim is not None:
        above, where = res.claim_check.points_above, f"at FPR ≥ {res.claim_check.min_fpr:.2g}"
        caption += (f" {where.capitalize()} (10 non-members per target; shaded below) every ROC point lies below "
                    f"the claim's 1 − f(ε, δ)." if above == 0 else
                    f" {above} ROC points {where} lie above the claim's 1 − f(ε, δ) (average case, not certified).")
    return [("membership-roc", disp.figure_, caption)]


def epsilon_row(entry: AuditEntry) -> list[str] | None:
    """Row of the ε table: the certified one-run ε̲ (population and canaries), when the model carries a claim.

    Parameters
    ----------
    entry : AuditEntry
        an entry of this kind's result
    """
    res: MembershipAudit = entry.result
    if res.claim is None:
        return None
    m = res.n_records + (res.canaries.count if res.canaries is not None else 0)
    return epsilon_table_row(entry, certified=fnum(res.epsilon_lb),
                             estimator=f"one run over {res.unit} coins (Steinke et al. 2023; no assumption)",
                             n=f"{m} records, {res.n_fits} fits")


KIND = AuditKind("membership", run, FIELDS, result=MembershipAudit, doc=run.__doc__.split("\n")[0],
                 target=lambda p: f"{p['model']['name']} on {p['dataset']}, membership",
                 headline=headline, figures=figures, table_rows={"epsilon": epsilon_row})


# --------------------------------------------------------------------------- record reconstruction
RECONSTRUCTION_FIELDS = {
    "model": MODEL, "dataset": DATASET, "n_records": N_RECORDS,
    "index": Field("int", 0, low=0, high=10**6, doc="the record the informed adversary reconstructs"),
    "noise_std": Field("float", None, low=0.0, closed="neither",
                       doc="sigma of a Gaussian release of the parameters (adds the CRB and ReRo comparison)"),
    "trials": Field("int", 200, low=2, high=10**6, samples=True, doc="noise draws"),
    "n_candidates": Field("int", 10, low=2, high=10**4, doc="size of the ReRo prior (uniform candidates)"),
}


def check_reconstruction(path: str, params: dict) -> None:
    """The model must have a registered closed form, and ``index`` must name a record.

    Parameters
    ----------
    path : str
        key path of the entry, named in errors
    params : dict
        the entry's validated parameters
    """
    try:
        inverter_of(build_model(params["model"]))
    except TypeError as exc:
        raise ConfigValueError(f"{path}.model.name = {params['model']['name']!r}: {exc}") from None
    n = params["n_records"]
    if n is not None and params["index"] >= n:
        raise ConfigValueError(f"{path}.index = {params['index']} must be below n_records = {n}")


def run_reconstruction(params: dict, rng: np.random.Generator) -> RecordReconstruction:
    """Informed-adversary reconstruction of one training record from a model, against the CRB and ReRo bounds.

    Parameters
    ----------
    params : dict
    rng : Generator

    Returns
    -------
    RecordReconstruction
    """
    X, y, _ = _data(params)
    if params["index"] >= len(y):
        raise ConfigValueError(f"index = {params['index']} must be below the data set's {len(y)} records")
    return audit_record_reconstruction(build_model(params["model"]), X, y, index=params["index"],
                                       noise_std=params["noise_std"], trials=params["trials"],
                                       n_candidates=params["n_candidates"], rng=rng)


def reconstruction_headline(entry: AuditEntry) -> str:
    """The error of the reconstruction and, under noise, its ratio to the CRB and the ReRo comparison.

    Parameters
    ----------
    entry : AuditEntry
        an entry of this kind's result
    """
    res: RecordReconstruction = entry.result
    text = f"record {res.index} reconstructed with error {res.reconstruction_error:.3g} ({'exact' if res.exact else 'not exact'})"
    if res.noisy is not None:
        n = res.noisy
        text += (f"; under N(0, {n.noise_std:g}²): MSE/CRB = {n.mse / n.crb:.3g}, exact among {n.n_candidates} "
                 f"{n.rero_success:.3f} vs ReRo bound {n.rero_bound:.3f}")
    return text


RECONSTRUCTION_KIND = AuditKind(
    "record-reconstruction", run_reconstruction, RECONSTRUCTION_FIELDS, result=RecordReconstruction,
    doc=run_reconstruction.__doc__.split("\n")[0],
    target=lambda p: f"{p['model']['name']} on {p['dataset']}, record {p['index']}",
    check=check_reconstruction, headline=reconstruction_headline,
)

#: The kinds this module registers (see privaudit.audit.kinds).
KINDS = (KIND, RECONSTRUCTION_KIND)
