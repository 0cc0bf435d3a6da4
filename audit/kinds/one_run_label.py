"""Kind ``one-run-label``: one DP-SGD training run with m label canaries; ε̲ by Steinke, Nasr & Jagielski (2023).

Runs :func:`~privaudit.audit.engines.learner_audits.one_run_label_audit`. Like a trade-off
audit, the verdict is a violation iff the lower confidence bound ε̲ exceeds the
claimed ε. The bound is valid but loose by design (m canaries, r guesses).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from privaudit.mechanisms import PrivacyClaim

from privaudit.audit.schema.fields import ConfigValueError, Field
from privaudit.audit.schema.limits import Estimate
from privaudit.audit.display.formatting import fnum
from privaudit.audit.engines.learner_audits import one_run_label_audit
from privaudit.audit.results import AuditEntry, AuditResult, to_jsonable
from privaudit.audit.stats.epsilon_bounds import OneRunBound
from privaudit.audit.verdicts import Verdict
from privaudit.audit.kinds.base import CONFIDENCE, AuditKind, epsilon_table_row

#: The claim's fields in the report entry (μ and ρ do not apply to this claim).
_CLAIM_KEYS = ("epsilon", "delta", "adjacency")
#: The bound's fields in the report entry, in order; ``epsilon`` is reported as ``epsilon_lb``.
_BOUND_KEYS = ("delta", "confidence", "m", "guesses", "correct", "k", "epsilon_lb")


@dataclasses.dataclass(frozen=True)
class OneRunLabelAudit(AuditResult):
    """ε̲ of one training run with m label canaries, against the claim of that run.

    The report entry is flat: ``claim`` (ε, δ, adjacency), ``verdict``, then the bound's
    fields (``delta``, ``confidence``, ``m``, ``guesses``, ``correct``, ``k``,
    ``epsilon_lb`` for its ε) and ``notes``.

    Attributes
    ----------
    claim : PrivacyClaim
        The claim of the DP-SGD run.
    bound : OneRunBound
        The one-run lower bound: ε̲, its δ and confidence, m canaries, guesses made
        (k highest and k lowest scores), correct guesses.
    verdict : Verdict
        ``"violation"`` iff ``bound.epsilon > claim.epsilon``, else ``"pass"``.
    notes : tuple of str
    """

    kind: ClassVar[str] = "one-run"
    claim: PrivacyClaim
    bound: OneRunBound
    verdict: Verdict
    notes: tuple[str, ...] = ()

    @property
    def epsilon_lb(self) -> float:
        """The lower confidence bound on ε."""
        return self.bound.epsilon

    def to_dict(self) -> dict[str, Any]:
        """The flat report entry (see the class docstring)."""
        bound = {**dataclasses.asdict(self.bound), "epsilon_lb": self.bound.epsilon}
        return to_jsonable({"kind": self.kind, "claim": {k: getattr(self.claim, k) for k in _CLAIM_KEYS},
                            "verdict": self.verdict, **{k: bound[k] for k in _BOUND_KEYS}, "notes": self.notes})

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> OneRunLabelAudit:
        """The audit whose :meth:`to_dict` is ``data`` (extra keys of a report entry are ignored).

        Parameters
        ----------
        data : mapping
            The audit's :meth:`to_dict` (or a report entry).

        Returns
        -------
        OneRunLabelAudit

        Raises
        ------
        ValueError
            Another kind, a missing field, or a claim or verdict that is refused.
        """
        if data.get("kind", cls.kind) != cls.kind:
            raise ValueError(f"OneRunLabelAudit.from_dict needs kind {cls.kind!r}, got kind={data.get('kind')!r}")
        missing = [k for k in ("claim", "verdict", *_BOUND_KEYS) if k not in data]
        if missing or not isinstance(data["claim"], Mapping):
            raise ValueError(f"OneRunLabelAudit.from_dict: missing or malformed fields {missing or ['claim']}")
        claim = PrivacyClaim(**{k: data["claim"][k] for k in _CLAIM_KEYS})
        bound = OneRunBound(epsilon=float(data["epsilon_lb"]), **{k: data[k] for k in _BOUND_KEYS[:-1]})
        return cls(claim=claim, bound=bound, verdict=data["verdict"], notes=tuple(data.get("notes") or ()))


FIELDS = {
    "m": Field("int", 1000, low=10, high=10**6, samples=True, doc="label canaries in the single training run"),
    "epsilon": Field("float", 1.0, low=0.0, closed="neither", doc="claimed ε of the DP-SGD run"),
    "delta": Field("float", 1e-5, low=0.0, high=1.0, closed="neither", doc="claimed δ of the DP-SGD run"),
    "clip": Field("float", 1.0, low=0.0, closed="neither", doc="per-sample gradient clip norm"),
    "epochs": Field("int", 10, low=1, high=100_000, doc="full-batch DP-SGD steps of the run"),
    "lr": Field("float", 0.05, low=0.0, closed="neither", doc="learning rate of DP-SGD"),
    "adjacency": Field("str", "label", choices=("label", "replace-one", "add-remove"),
                       doc="neighbouring relation DP-SGD is calibrated for"),
    "confidence": CONFIDENCE,
}


#: Copies of the m × m canary feature matrix alive while the run trains (numpy features, torch tensor,
#: per-example gradients, work space).
CANARY_COPIES = 4
#: The largest lr × clip × epochs: the model moves by at most lr·clip (plus noise of that scale) per step, so
#: beyond this it can overflow float64 and rank the canaries by ±inf.
MAX_STEP_PRODUCT = 1e250


def memory(params: dict) -> Estimate:
    """Peak memory of the run: the m canaries' unit features form an m × m matrix.

    Parameters
    ----------
    params : dict
        The entry's (scaled) fields.

    Returns
    -------
    Estimate
    """
    m = params["m"]
    return Estimate(float(m) ** 2 * 8 * CANARY_COPIES, "m", m,
                    f"m × m canary features × 8 bytes × {CANARY_COPIES} copies")


def check(path: str, params: dict) -> None:
    """``lr × clip × epochs`` must keep the model within float64 (an overflowed run ranks canaries by ±inf).

    Parameters
    ----------
    path : str
    params : dict

    Raises
    ------
    ConfigValueError
        Naming lr, clip and epochs.
    """
    product = params["lr"] * params["clip"] * params["epochs"]
    if not product <= MAX_STEP_PRODUCT:
        raise ConfigValueError(
            f"{path}.lr = {params['lr']!r} with clip = {params['clip']!r} and epochs = {params['epochs']!r} can move "
            f"the model by lr × clip × epochs = {product:.3g}, beyond float64's safe range ({MAX_STEP_PRODUCT:g}): "
            f"the run would overflow and its bound mean nothing; lower lr"
        )


def run(params: dict, rng: np.random.Generator) -> OneRunLabelAudit:
    """One DP-SGD training run with m label canaries; ε̲ by Steinke, Nasr & Jagielski (2023).

    Parameters
    ----------
    params : dict
        The entry's validated, scaled parameters.
    rng : Generator
        The task's randomness.

    Returns
    -------
    OneRunLabelAudit
    """
    kw = {k: params[k] for k in ("m", "epsilon", "delta", "clip", "epochs", "lr", "adjacency", "confidence")}
    bound = one_run_label_audit(**kw, rng=rng)
    claim = PrivacyClaim(params["epsilon"], params["delta"], params["adjacency"])
    return OneRunLabelAudit(
        claim=claim, bound=bound, verdict=Verdict.VIOLATION if bound.epsilon > claim.epsilon else Verdict.PASS,
        notes=("one training run; the bound is valid but loose by design (m canaries, r guesses)",),
    )


def headline(entry: AuditEntry) -> str:
    """``ε_lb = … vs claimed ε = … (correct/guesses canary guesses correct, m = …)``.

    Parameters
    ----------
    entry : AuditEntry
        An entry whose result is a :class:`OneRunLabelAudit`.

    Returns
    -------
    str
    """
    res: OneRunLabelAudit = entry.result
    b = res.bound
    return (f"ε_lb = {fnum(b.epsilon)} vs claimed ε = {fnum(res.claim.epsilon)} "
            f"({b.correct}/{b.guesses} canary guesses correct, m = {b.m})")


def epsilon_row(entry: AuditEntry) -> list[str]:
    """Row of the ε table: the one-run ε̲ with m canaries.

    Parameters
    ----------
    entry : AuditEntry
        An entry whose result is a :class:`OneRunLabelAudit`.

    Returns
    -------
    list of str
        The cells, in the ε table's column order.
    """
    b = entry.result.bound
    return epsilon_table_row(entry, certified=fnum(b.epsilon),
                             estimator="one run (Steinke, Nasr & Jagielski 2023; no assumption)",
                             n=f"{b.m} canaries, 1 run")


KIND = AuditKind(
    "one-run-label", run, FIELDS, result=OneRunLabelAudit, doc=run.__doc__.split("\n")[0],
    target=lambda p: f"DP-SGD one run, {p['m']} label canaries, ε={p['epsilon']:g}",
    headline=headline, table_rows={"epsilon": epsilon_row}, check=check, memory=memory,
)
