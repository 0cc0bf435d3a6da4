"""Kind ``one-run-label``: one DP-SGD training run with m label canaries; ε̲ by Steinke, Nasr & Jagielski (2023).

Runs :func:`~privaudit.audit.engines.learner_audits.one_run_label_audit`. Like a trade-off
audit, the verdict is a violation iff the lower confidence bound ε̲ exceeds the
claimed ε. The bound is valid but loose by design (m canaries, r guesses).
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np

from privaudit.audit.app.fields import Field
from privaudit.audit.reporting.formatting import claim_of, fnum
from privaudit.audit.engines.learner_audits import one_run_label_audit
from privaudit.audit.results import AuditResult
from privaudit.audit.kinds.base import CONFIDENCE, AuditKind, epsilon_table_row


@dataclasses.dataclass(frozen=True)
class OneRunLabelAudit(AuditResult):
    """ε̲ of one training run with m label canaries, against the claim of that run.

    Attributes
    ----------
    claim : dict
        ``{"epsilon", "delta", "adjacency"}`` of the DP-SGD run.
    verdict : str
        ``"violation"`` iff ``epsilon_lb > claim["epsilon"]``, else ``"pass"``.
    delta, confidence : float
        δ and confidence level of the bound.
    m, guesses, correct, k : int
        Canaries, guesses made (k highest and k lowest scores), correct guesses, k.
    epsilon_lb : float
        The lower confidence bound on ε.
    notes : list of str
    """

    kind: ClassVar[str] = "one-run"
    claim: dict
    verdict: str
    delta: float
    confidence: float
    m: int
    guesses: int
    correct: int
    k: int
    epsilon_lb: float
    notes: list = dataclasses.field(default_factory=list)


FIELDS = {
    "m": Field("int", 1000, low=10, high=10**6, samples=True, doc="label canaries in the single training run"),
    "epsilon": Field("float", 1.0, low=0.0, closed="neither", doc="claimed ε of the DP-SGD run"),
    "delta": Field("float", 1e-5, low=0.0, high=1.0, closed="neither"),
    "clip": Field("float", 1.0, low=0.0, closed="neither"),
    "epochs": Field("int", 10, low=1, high=100_000),
    "lr": Field("float", 0.05, low=0.0, closed="neither"),
    "adjacency": Field("str", "label", choices=("label", "replace-one", "add-remove"),
                       doc="neighbouring relation DP-SGD is calibrated for"),
    "confidence": CONFIDENCE,
}


def run(params: dict, rng: np.random.Generator) -> OneRunLabelAudit:
    """One DP-SGD training run with m label canaries; ε̲ by Steinke, Nasr & Jagielski (2023)."""
    kw = {k: params[k] for k in ("m", "epsilon", "delta", "clip", "epochs", "lr", "adjacency", "confidence")}
    bound = one_run_label_audit(**kw, rng=rng)
    claim = {"epsilon": params["epsilon"], "delta": params["delta"], "adjacency": params["adjacency"]}
    return OneRunLabelAudit(
        claim=claim, verdict="violation" if bound.epsilon > claim["epsilon"] else "pass", delta=bound.delta,
        confidence=bound.confidence, m=bound.m, guesses=bound.guesses, correct=bound.correct, k=bound.k,
        epsilon_lb=bound.epsilon,
        notes=["one training run; the bound is valid but loose by design (m canaries, r guesses)"],
    )


def headline(entry: dict) -> str:
    c = claim_of(entry)
    return (f"ε_lb = {fnum(entry.get('epsilon_lb'))} vs claimed ε = {fnum(c.get('epsilon'))} "
            f"({entry.get('correct')}/{entry.get('guesses')} canary guesses correct, m = {entry.get('m')})")


def epsilon_row(entry: dict) -> list[str]:
    return epsilon_table_row(entry, certified=fnum(entry.get("epsilon_lb")),
                             estimator="one run (Steinke, Nasr & Jagielski 2023; no assumption)",
                             n=f"{entry.get('m')} canaries, 1 run")


KIND = AuditKind(
    "one-run-label", run, FIELDS, result=OneRunLabelAudit, doc=run.__doc__.split("\n")[0],
    target=lambda p: f"DP-SGD one run, {p['m']} label canaries, ε={p['epsilon']:g}",
    headline=headline, table_rows={"epsilon": epsilon_row},
)
