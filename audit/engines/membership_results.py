"""Results of a membership audit, composed of the stages' own objects, and its ROC display.

:class:`MembershipAudit` holds one :class:`AttackResult` per attack (population records), the
:class:`VulnerabilityTable` of the records, the :class:`ClaimCheck` of the population ROC against
the claim's f_{ε,δ}, and the canaries' :class:`CanaryResult` (their own ROC and certified ε̲).
Only certified bounds set the verdict (DESIGN, "Standards for audits").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from privaudit.mechanisms.claim import PrivacyClaim
from privaudit.mechanisms.tradeoff import tradeoff_curve

from privaudit.audit.results import AuditResult

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: The FPR grid on which ROCs are averaged over targets: 0, then log-spaced from 1e-4 to 1.
FPR_GRID = np.unique(np.r_[0.0, np.logspace(-4, 0, 161), 1e-3, 1e-2, 1e-1])


@dataclass(frozen=True)
class AttackResult:
    """One attack's ROC on the population records, averaged over the targets.

    ``fpr`` is :data:`FPR_GRID`; ``tpr[j]`` is the mean over targets of the largest TPR whose FPR is
    at most ``fpr[j]`` (the convention of Carlini et al.'s TPR at low FPR). ``auc`` is the mean of the
    targets' AUCs, ``auc_std`` their standard deviation.
    """

    name: str
    auc: float
    auc_std: float
    fpr: np.ndarray
    tpr: np.ndarray
    targets: int

    def tpr_at_fpr(self, fpr: float) -> float:
        """Mean TPR at FPR ≤ ``fpr``, read at the largest grid point not above ``fpr``.

        Parameters
        ----------
        fpr : float
            false positive rate in [0, 1]
        """
        if not 0.0 <= fpr <= 1.0:
            raise ValueError(f"fpr must lie in [0, 1], got fpr={fpr!r}")
        j = int(np.searchsorted(self.fpr, fpr * (1 + 1e-12), side="right")) - 1
        return float(self.tpr[j])


@dataclass(frozen=True)
class VulnerabilityTable:
    """Per record, how well the best attack separates the targets that trained on it from those that did not.

    ``auc[i]`` is the Mann–Whitney AUC of record i's scores over the K targets (IN against OUT);
    ``gap[i]`` is the mean IN score minus the mean OUT score. Records are ranked by ``auc`` in ``order``.
    """

    attack: str
    auc: np.ndarray
    gap: np.ndarray
    n_in: np.ndarray
    order: np.ndarray

    def top(self, k: int = 10) -> list[dict[str, Any]]:
        """The ``k`` most vulnerable records: index, AUC, score gap and IN/OUT counts.

        Parameters
        ----------
        k : int
            rows
        """
        return [dict(record=int(i), auc=float(self.auc[i]), gap=float(self.gap[i]), n_in=int(self.n_in[i]))
                for i in self.order[:k]]


@dataclass(frozen=True)
class ClaimCheck:
    """The population ROC of every attack against the claim: TPR ≤ 1 − f_{ε,δ}(FPR) at each grid point.

    Average-case and not certified (the records of one model are not independent trials), so it
    never sets the verdict; ``max_excess`` is the largest TPR − (1 − f(FPR)) over attacks and points.
    Grid points with FPR below ``min_fpr`` (fewer than 10 non-members of a target) are not compared.
    ``one_run`` is the certified one-run table on the designated target's population records
    (Steinke et al. 2023: their inclusion coins are the game's bits), of the attack certifying most with
    every attack at the Bonferroni level (each row's ``attack`` and ``confidence``).
    """

    unit: str
    applies: bool
    max_excess: float
    points_above: int
    note: str
    one_run: list[dict[str, Any]] = field(default_factory=list)
    min_fpr: float = 0.0


@dataclass(frozen=True)
class CanaryResult:
    """The canaries: the certifying attack's ROC on them and the certified ε̲ (one run, and over fits).

    ``attack`` is the attack whose one-run ε̲ is largest, every attack tested at the Bonferroni level
    (each row's ``confidence``). ``one_run`` holds one row per one-run method on the designated target's canaries
    (Steinke et al. 2023; the f-DP recursion): certified. ``multi_run`` is the Clopper–Pearson
    ε̲ of one canary over the fits (selection and evaluation fits apart), when there are enough.
    """

    count: int
    attack: str
    auc: float
    tpr_at_1pct: float
    one_run: list[dict[str, Any]]
    multi_run: dict[str, Any] | None
    epsilon_lb: float



@dataclass(frozen=True)
class MembershipAudit(AuditResult):
    """A membership-inference audit of a trained model (:func:`~privaudit.audit.audit_membership`).

    Fields
    ------
    attacks : dict of AttackResult
        Per attack, on the population records (``res.attacks["lira-online"].auc``).
    best : str
        The attack with the largest mean AUC.
    vulnerability : VulnerabilityTable
    claim : PrivacyClaim or None
    claim_check : ClaimCheck
    canaries : CanaryResult or None
    epsilon_lb : float
        The largest certified ε̲ (canaries), 0 without canaries.
    verdict : Verdict
        ``violation`` when a certified ε̲ exceeds the claim's ε; ``pass`` when certified bounds were
        computed against an applicable claim; ``inconclusive`` when the claim's unit is not
        membership or nothing was certified; ``info`` without a claim.
    unit : str
        What was inferred: ``"membership"`` or ``"label"``.
    design : str
        ``"coins"`` (records added or removed) or ``"swap"`` (records replaced within pairs).
    n_records, n_fits : int
    seed : int
    fit_seconds, attack_seconds : float
        Time spent fitting the models, and everything else.
    notes : list of str
    """

    kind: ClassVar[str] = "membership"

    attacks: dict[str, AttackResult]
    best: str
    vulnerability: VulnerabilityTable
    claim: PrivacyClaim | None
    claim_check: ClaimCheck
    canaries: CanaryResult | None
    epsilon_lb: float
    verdict: str
    unit: str
    design: str
    n_records: int
    n_fits: int
    seed: int
    fit_seconds: float
    attack_seconds: float
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """A few lines: each attack's AUC and TPR at 1 % FPR, the canaries' ε̲, the verdict."""
        lines = [f"membership audit ({self.unit}, {self.design} design) of {self.n_records} records over {self.n_fits} fits "
                 f"({self.n_fits - 1} reference models per target): verdict {self.verdict}"]
        for name, a in sorted(self.attacks.items(), key=lambda kv: -kv[1].auc):
            lines.append(f"  {name:<13} AUC {a.auc:.3f} ± {a.auc_std:.3f}   TPR@1%FPR {a.tpr_at_fpr(0.01):.3f}"
                         f"   TPR@0.1%FPR {a.tpr_at_fpr(0.001):.3f}")
        if self.claim is not None:
            lines.append(f"  claim: ε = {self.claim.epsilon:g}, δ = {self.claim.delta:g} ({self.claim.adjacency}); "
                         f"{self.claim_check.note}")
        if self.canaries is not None:
            c = self.canaries
            lines.append(f"  canaries: {c.count}, {c.attack} AUC {c.auc:.3f}, certified ε̲ {c.epsilon_lb:.3f}")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def plot(self, ax: Axes | None = None) -> Figure:
        """The log-log ROC of every attack, with the claim's 1 − f_{ε,δ} where there is a claim.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            where to draw (a new figure when None)
        """
        return MembershipRocDisplay.from_result(self).plot(ax=ax).figure_


@dataclass
class MembershipRocDisplay:
    """ROC curves in log-log axes, in the scikit-learn manner: ``from_result(res).plot(ax=...)``.

    Attributes set by :meth:`plot`: ``ax_``, ``figure_``.
    """

    curves: dict[str, tuple[np.ndarray, np.ndarray, float]]
    claim: PrivacyClaim | None
    min_fpr: float = 0.0
    ax_: Any = None
    figure_: Any = None

    @classmethod
    def from_result(cls, result: MembershipAudit) -> MembershipRocDisplay:
        """Read the curves (population) of a :class:`MembershipAudit`.

        Parameters
        ----------
        result : MembershipAudit
        """
        curves = {name: (a.fpr, a.tpr, a.auc) for name, a in result.attacks.items()}
        claim = result.claim if result.claim_check.applies else None
        return cls(curves, claim, result.claim_check.min_fpr)

    def plot(self, ax: Axes | None = None) -> MembershipRocDisplay:
        """Draw on ``ax`` (a new figure when None); returns self.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            where to draw (a new figure when None)
        """
        if ax is None:
            from matplotlib.figure import Figure

            fig = Figure(figsize=(6.4, 4.8), layout="constrained")
            ax = fig.add_subplot()
        lo = FPR_GRID[1]
        for name, (fpr, tpr, auc) in sorted(self.curves.items(), key=lambda kv: -kv[1][2]):
            keep = fpr > 0
            ax.plot(fpr[keep], np.maximum(tpr[keep], lo), label=f"{name} (AUC {auc:.3f})", drawstyle="steps-post")
        ax.plot(FPR_GRID[1:], FPR_GRID[1:], color="0.6", linestyle=":", label="chance")
        if self.claim is not None and not math.isinf(self.claim.epsilon):
            grid = FPR_GRID[1:]
            bound = 1 - tradeoff_curve(self.claim.epsilon, self.claim.delta, grid)
            ax.plot(grid, bound, color="k", linestyle="--",
                    label=f"claim: 1 − f(ε={self.claim.epsilon:g}, δ={self.claim.delta:g})")
            if self.min_fpr > lo:
                ax.axvspan(lo, self.min_fpr, color="0.9", zorder=0, label="FPR under 10 non-members")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, 1)
        ax.set_ylim(lo, 1.05)
        ax.set_xlabel("false positive rate")
        ax.set_ylabel("true positive rate")
        ax.set_title("membership inference ROC (population records)")
        ax.legend(loc="lower right", fontsize="small")
        self.ax_, self.figure_ = ax, ax.figure
        return self


__all__ = ["FPR_GRID", "AttackResult", "CanaryResult", "ClaimCheck", "MembershipAudit", "MembershipRocDisplay",
           "VulnerabilityTable"]
