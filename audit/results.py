"""Common behaviour of audit results.

Every audit returns a frozen dataclass that carries its estimate, a confidence
bound, the confidence level, the sample sizes, the seed and a verdict. Reports
only render these objects, through :meth:`AuditResult.to_dict`.

Verdicts: ``"pass"`` (no evidence against the claim at the stated confidence),
``"violation"`` (the lower confidence bound exceeds the claim), ``"fail"`` (a
check failed, e.g. an estimator claimed unbiased is biased), ``"info"``
(informational, no claim to test).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar

import numpy as np

VERDICTS = ("pass", "violation", "fail", "info")


def to_jsonable(value: Any) -> Any:
    """Convert numpy scalars/arrays, dataclasses and non-finite floats to JSON-safe data.

    Non-finite floats become the strings ``"inf"``, ``"-inf"`` and ``"nan"`` so
    that the output is strict JSON.
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if hasattr(value, "to_dict"):
            return value.to_dict()
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, np.generic):
        return to_jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


@dataclasses.dataclass(frozen=True)
class AuditResult:
    """Base of every audit result; subclasses set :attr:`kind` and add their fields."""

    kind: ClassVar[str] = "audit"

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dict: ``{"kind": ..., <every field>}``."""
        out = {"kind": self.kind}
        for f in dataclasses.fields(self):
            out[f.name] = to_jsonable(getattr(self, f.name))
        return out

    @property
    def passed(self) -> bool:
        """True unless the verdict is ``"violation"`` or ``"fail"``."""
        return getattr(self, "verdict", "info") not in ("violation", "fail")


@dataclasses.dataclass(frozen=True)
class ExperimentResult(AuditResult):
    """Utility curves of an experiment (a paper figure), rendered as a line plot plus tables.

    ``series`` maps a method name to ``{"x": [...], "y": [...], "yerr": [...] (optional)}``;
    ``reference`` maps a label to a horizontal reference value (e.g. non-private OLS R²);
    ``panels`` optionally groups series by panel name (``{panel: {method: {...}}}``) for
    multi-panel figures, in which case ``series`` may be empty. ``table`` holds rows of
    plain dicts (e.g. measured vs. paper values) and ``notes`` the stated findings.
    """

    kind: ClassVar[str] = "utility"
    name: str
    target: str
    xlabel: str
    ylabel: str
    series: dict = dataclasses.field(default_factory=dict)
    panels: dict = dataclasses.field(default_factory=dict)
    reference: dict = dataclasses.field(default_factory=dict)
    table: list = dataclasses.field(default_factory=list)
    notes: list = dataclasses.field(default_factory=list)
    seed: int | None = None
    verdict: str = "info"
    xscale: str = "linear"
    yscale: str = "linear"
