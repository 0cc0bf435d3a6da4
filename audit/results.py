"""Common behaviour of audit results.

Every audit returns a frozen dataclass that carries its estimate, a confidence
bound, the confidence level, the sample sizes, the seed and a verdict. Reports
only render these objects, through :meth:`AuditResult.to_dict`.

A configuration's kind wraps a result in an :class:`AuditEntry`: the label the
configuration gives it and, for negative controls, the expectation that inverts the
verdict (:func:`apply_expectation`) and the notes the kind adds (:func:`with_note`).
These rewrite frozen dataclasses (:func:`dataclasses.replace`), never dicts; the
report's JSON entry is :meth:`AuditEntry.to_dict`, and :meth:`AuditResult.from_dict`
reads a result back from it.

Verdicts: ``"pass"`` (no evidence against the claim at the stated confidence),
``"violation"`` (the lower confidence bound exceeds the claim), ``"fail"`` (a
check failed, e.g. an estimator claimed unbiased is biased), ``"info"``
(informational, no claim to test).
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Mapping
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


def _members(tp: Any) -> tuple:
    """The alternatives of a union annotation (``X | None`` included), else ``(tp,)``."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        return typing.get_args(tp)
    return (tp,)


def from_jsonable(tp: Any, value: Any) -> Any:
    """Inverse of :func:`to_jsonable` along the annotation ``tp`` (best effort, never raises on odd data)."""
    if value is None:
        return None
    members = _members(tp)
    origins = [typing.get_origin(m) or m for m in members]
    if isinstance(value, str) and value in ("inf", "-inf", "nan") and float in origins:
        return float(value)
    if isinstance(value, list):
        if np.ndarray in origins:
            return np.asarray([float(v) if isinstance(v, str) else v for v in value], dtype=float)
        if tuple in origins:
            return tuple(value)
        return value
    if isinstance(value, Mapping):
        for m in members:
            if dataclasses.is_dataclass(m) and isinstance(m, type):
                names = {f.name for f in dataclasses.fields(m)}
                if hasattr(m, "from_dict"):
                    return m.from_dict(value)
                hints = typing.get_type_hints(m)
                return m(**{k: from_jsonable(hints.get(k, Any), v) for k, v in value.items() if k in names})
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

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AuditResult:
        """The result whose :meth:`to_dict` is ``data`` (extra keys, e.g. a report entry's, are ignored).

        ``to_dict(from_dict(d))`` equals ``d`` restricted to ``"kind"`` and the fields.
        Values are converted back along the field annotations: ``"inf"``/``"nan"``
        strings to floats, lists to numpy arrays or tuples, dicts to dataclasses
        (e.g. :class:`~privaudit.mechanisms.PrivacyClaim`).
        """
        if data.get("kind", cls.kind) != cls.kind:
            raise ValueError(f"{cls.__name__}.from_dict needs kind {cls.kind!r}, got kind={data.get('kind')!r}")
        hints = typing.get_type_hints(cls)
        kwargs = {}
        for f in dataclasses.fields(cls):
            if f.name in data:
                kwargs[f.name] = from_jsonable(hints.get(f.name, Any), data[f.name])
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ValueError(f"{cls.__name__}.from_dict: missing field {f.name!r}")
        return cls(**kwargs)

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
    #: Per-panel axis labels and scales overriding the shared ones: ``{panel: {"xlabel", "ylabel", "xscale",
    #: "yscale"}}`` (e.g. a spectrum panel beside utility panels).
    panel_axes: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class AuditEntry:
    """One entry of a report: an audit's result as the configuration labels and judges it.

    Attributes
    ----------
    result : AuditResult
        The audit's own result (its own verdict is kept there).
    target : str, optional
        The configuration's label; the audit's own name is then kept as ``audited``.
    verdict : str, optional
        The entry's verdict when it differs from the result's (a negative control).
    expect : str, optional
        ``"violation"`` (or ``"biased"``) for a negative control.
    notes : tuple of str
        Notes the kind adds to the result's own.
    """

    result: AuditResult
    target: str | None = None
    verdict: str | None = None
    expect: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        return self.result.kind

    @property
    def final_verdict(self) -> str:
        return self.verdict if self.verdict is not None else getattr(self.result, "verdict", "info")

    def to_dict(self) -> dict[str, Any]:
        """The report entry: the result's fields, relabelled, with the entry's verdict and notes."""
        d = self.result.to_dict()
        if self.verdict is not None:
            d["audit_verdict"] = d.get("verdict")
            d["expect"] = self.expect
            d["verdict"] = self.verdict
        d.setdefault("verdict", "info")
        if self.notes:
            own = d.get("notes") or []
            d["notes"] = [*([own] if isinstance(own, str) else own), *self.notes]
        if self.target is not None:
            if d.get("target") and d["target"] != self.target:
                d["audited"] = d["target"]
            d["target"] = self.target
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], result_type: type[AuditResult]) -> AuditEntry:
        """Read an entry back (``result_type`` from the kind registry); inverse of :meth:`to_dict`."""
        raw = dict(data)
        control = "audit_verdict" in raw
        if control:
            raw["verdict"] = raw.pop("audit_verdict")
        if "audited" in raw:
            raw["target"] = raw.pop("audited")
        # The report does not separate the result's own notes from the kind's: a result
        # with a ``notes`` field takes them all (its to_dict is then the same entry).
        has_notes = "notes" in {f.name for f in dataclasses.fields(result_type)}
        extra = () if has_notes else tuple(raw.get("notes") or ())
        result = result_type.from_dict(raw)
        return cls(result, target=data.get("target"), verdict=data["verdict"] if control else None,
                   expect=data.get("expect") if control else None, notes=extra)


def as_entry(result: AuditResult | AuditEntry) -> AuditEntry:
    return result if isinstance(result, AuditEntry) else AuditEntry(result)


def apply_expectation(result: AuditResult | AuditEntry, expect: str, *, caught: str,
                      missed: str = "fail") -> AuditEntry:
    """Verdict of a negative control: a deliberately broken target must be caught.

    With ``expect="violation"`` (a target whose claim is known to be false) the entry
    passes when the audit reports ``caught`` and fails otherwise; the audit's own
    verdict stays in the result (``audit_verdict`` in the report). ``"private"`` and
    ``"unbiased"`` leave the verdict as is.
    """
    entry = as_entry(result)
    if expect in ("private", "unbiased"):
        return entry
    raw = getattr(entry.result, "verdict", None)
    note = (f"negative control: the claim is known to be false; the audit {'caught' if raw == caught else 'MISSED'} "
            f"it (audit verdict {raw!r})")
    return dataclasses.replace(entry, verdict="pass" if raw == caught else missed, expect=expect,
                               notes=(*entry.notes, note))


def with_note(result: AuditResult | AuditEntry, note: str) -> AuditEntry:
    """The entry with ``note`` appended to its notes."""
    entry = as_entry(result)
    return dataclasses.replace(entry, notes=(*entry.notes, note))
