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

Verdicts are :class:`~privaudit.audit.verdicts.Verdict` members (a :class:`str` enum):
``pass`` (no evidence against the claim at the stated confidence), ``violation`` (the
lower confidence bound exceeds the claim), ``fail`` (a check failed, e.g. an estimator
claimed unbiased is biased), ``inconclusive`` (no bound or test applied), ``info``
(informational, no claim to test) and ``error`` (the task raised: :class:`FailedTask`).
A result's ``verdict`` field is converted to a :class:`Verdict` when the result is
built, so an unknown verdict is a :class:`ValueError` at once.

A result may be built from sub-results, small frozen dataclasses its engine's stages return
(a trade-off audit's bound, sample sizes, attackers, operating point and curves; a bias audit's
estimate, test, detectable bias and normality check; a reconstruction audit's setting, error,
bounds and comparison), while its report entry stays flat: such a result writes its entry
explicitly (its own :meth:`~AuditResult.to_dict` and :meth:`~AuditResult.from_dict`, key by key),
and its flat names are properties written out in its class (``result.epsilon_lb`` is
``result.bound.epsilon_lb``). Sub-results that replaced dicts keep item access
(:class:`ItemAccess`: ``result.operating_point["fpr"]``). A result without sub-results gets
the default: one key per field, in field order.

Every report entry reads back into an :class:`AuditEntry` (:meth:`AuditEntry.from_dict`):
a registered kind's result dataclass, a :class:`FailedTask` for a task that raised, or
an :class:`UntypedResult` for the plain dict of a kind that has no result dataclass.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import math
import re
import types
import typing
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from privaudit.audit.display.hooks import renderer
from privaudit.audit.verdicts import Verdict

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def to_jsonable(value: Any) -> Any:
    """Convert numpy scalars/arrays, dataclasses and non-finite floats to JSON-safe data.

    Non-finite floats become the strings ``"inf"``, ``"-inf"`` and ``"nan"`` so
    that the output is strict JSON; enum members (a :class:`Verdict`) become their values.

    Parameters
    ----------
    value : Any
        A result, a field of one, or plain data.

    Returns
    -------
    Any
        JSON data (dicts, lists, strings, numbers, booleans, None).
    """
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if hasattr(value, "to_dict"):
            return to_jsonable(value.to_dict())
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


def _floats(value: Any) -> Any:
    """``"inf"``/``"-inf"``/``"nan"`` strings of (nested) JSON lists back to floats."""
    if isinstance(value, list):
        return [_floats(v) for v in value]
    return float(value) if isinstance(value, str) and value in ("inf", "-inf", "nan") else value


def from_jsonable(tp: Any, value: Any) -> Any:
    """Inverse of :func:`to_jsonable` along the annotation ``tp``.

    Parameters
    ----------
    tp : type or annotation
        The field's annotation (unions included).
    value : Any
        JSON data.

    Returns
    -------
    Any
        Floats for ``"inf"``/``"nan"`` strings of float fields, numpy arrays (of the
        dtype the numbers have, so integers stay integers) for array fields, tuples,
        enum members (a :class:`Verdict`), dataclasses and dicts of dataclasses
        (``dict[str, X]``); anything else as it is.

    Raises
    ------
    ValueError
        A value that is not a member of an enum field.
    """
    if value is None:
        return None
    members = _members(tp)
    origins = [typing.get_origin(m) or m for m in members]
    if isinstance(value, str):
        enums = [m for m in origins if isinstance(m, type) and issubclass(m, enum.Enum)]
        if enums and str not in origins:
            return enums[0](value)
    if isinstance(value, str) and value in ("inf", "-inf", "nan") and float in origins:
        return float(value)
    if isinstance(value, list):
        if np.ndarray in origins:
            try:
                return np.asarray(_floats(value))
            except ValueError:  # ragged nested lists: not an array, kept as JSON data
                return value
        if tuple in origins:
            return tuple(value)
        return value
    if isinstance(value, Mapping):
        for m in members:
            args = typing.get_args(m)
            if typing.get_origin(m) is dict and len(args) == 2 and dataclasses.is_dataclass(args[1]):
                return {k: from_jsonable(args[1], v) for k, v in value.items()}
        for m in members:
            if dataclasses.is_dataclass(m) and isinstance(m, type):
                names = {f.name for f in dataclasses.fields(m)}
                if hasattr(m, "from_dict"):
                    return m.from_dict(value)
                hints = typing.get_type_hints(m)
                return m(**{k: from_jsonable(hints.get(k, Any), v) for k, v in value.items() if k in names})
    return value


class ItemAccess:
    """Read access by key to a frozen dataclass's fields: ``point["fpr"]`` is ``point.fpr``.

    For the sub-results that replaced a result's dicts (an operating point, a band), so that
    code which indexed the dict keeps working. Only the fields are keys; nothing can be set.
    """

    def __getitem__(self, key: str) -> Any:
        if not isinstance(key, str) or key not in _field_names(type(self)):
            raise KeyError(key)
        return getattr(self, key)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in _field_names(type(self))

    def get(self, key: str, default: Any = None) -> Any:
        """The field ``key``, or ``default`` when there is no such field.

        Parameters
        ----------
        key : str
            A field name.
        default : Any
            Returned for a name that is not a field.

        Returns
        -------
        Any
        """
        return self[key] if key in self else default

    def keys(self) -> tuple[str, ...]:
        """The field names, in order (``dict(point)`` is the former dict).

        Returns
        -------
        tuple of str
        """
        return _field_names(type(self))


def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


@dataclasses.dataclass(frozen=True)
class AuditResult:
    """Base of every audit result; subclasses set :attr:`kind` and add their fields.

    The default :meth:`to_dict` writes one key per field, in field order, and :meth:`from_dict`
    reads them back along the field annotations. A result built from sub-results overrides both,
    writing its flat entry explicitly.
    """

    kind: ClassVar[str] = "audit"

    def __post_init__(self) -> None:
        # A result's verdict is a Verdict whatever the engine passed ("pass" or Verdict.PASS);
        # an unknown one is refused here, not rendered as something else later.
        if not any(f.name == "verdict" for f in dataclasses.fields(self)):
            return
        verdict = self.verdict
        if isinstance(verdict, str) and not isinstance(verdict, Verdict):
            try:
                object.__setattr__(self, "verdict", Verdict(verdict))
            except ValueError:
                raise ValueError(f"{type(self).__name__}: verdict must be one of "
                                 f"{[v.value for v in Verdict]}, got verdict={verdict!r}") from None

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
        (e.g. :class:`~privaudit.mechanisms.PrivacyClaim`), strings to :class:`Verdict`.

        Parameters
        ----------
        data : mapping
            A result's :meth:`to_dict` (or a report entry).

        Returns
        -------
        AuditResult
            An instance of the class it is called on.

        Raises
        ------
        ValueError
            Another kind, a missing field, or a value a field refuses (an unknown verdict).
        """
        if not isinstance(data, Mapping):
            raise TypeError(f"{cls.__name__}.from_dict needs a mapping, got {type(data).__name__}")
        if data.get("kind", cls.kind) != cls.kind:
            raise ValueError(f"{cls.__name__}.from_dict needs kind {cls.kind!r}, got kind={data.get('kind')!r}")
        hints = typing.get_type_hints(cls)
        kwargs = {}
        for f in dataclasses.fields(cls):
            if f.name in data:
                try:
                    kwargs[f.name] = from_jsonable(hints.get(f.name, Any), data[f.name])
                except (TypeError, ValueError) as exc:
                    raise ValueError(f"{cls.__name__}.from_dict: field {f.name!r}: {exc}") from None
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ValueError(f"{cls.__name__}.from_dict: missing field {f.name!r}")
        return cls(**kwargs)

    @property
    def passed(self) -> bool:
        """True unless the verdict is ``"violation"`` or ``"fail"``."""
        return getattr(self, "verdict", Verdict.INFO) not in (Verdict.VIOLATION, Verdict.FAIL)

    def plot(self, which: int | str = 0) -> Figure:
        """The result's figure, as its report draws it (:func:`privaudit.audit.plot_result`).

        Parameters
        ----------
        which : int or str
            The figure's position among its kind's figures, or its name (``"roc"``).

        Returns
        -------
        matplotlib.figure.Figure
        """
        return renderer("plot")(self, which)

    def _repr_html_(self) -> str:
        """The result as a notebook shows it: outcome, headline, figures, fields, notes."""
        return renderer("html")(self)


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
    verdict: Verdict = Verdict.INFO
    xscale: str = "linear"
    yscale: str = "linear"
    #: Per-panel axis labels and scales overriding the shared ones: ``{panel: {"xlabel", "ylabel", "xscale",
    #: "yscale"}}`` (e.g. a spectrum panel beside utility panels).
    panel_axes: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class FailedTask(AuditResult):
    """A task that raised: its kind, label, error message and the end of its traceback.

    Its report entry is ``{"kind", "target", "verdict": "error", "error", "traceback"}``,
    where ``kind`` is the task's kind (no result was produced).

    Attributes
    ----------
    task_kind : str
        The configuration's kind of the task.
    target : str
        The task's label.
    error : str
        ``"ExceptionType: message"``.
    traceback : str or None
        The last frames of the traceback (None when the worker was lost).
    """

    task_kind: str
    target: str
    error: str
    traceback: str | None = None

    @property
    def kind(self) -> str:  # type: ignore[override]
        return self.task_kind

    @property
    def verdict(self) -> Verdict:
        return Verdict.ERROR

    def to_dict(self) -> dict[str, Any]:
        """The report entry: ``{"kind", "target", "verdict": "error", "error"[, "traceback"]}``."""
        out = {"kind": self.task_kind, "target": self.target, "verdict": Verdict.ERROR.value, "error": self.error}
        if self.traceback is not None:
            out["traceback"] = self.traceback
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FailedTask:
        """The failure whose :meth:`to_dict` is ``data`` (``kind`` is the task's kind).

        Parameters
        ----------
        data : mapping
            An error entry.

        Returns
        -------
        FailedTask

        Raises
        ------
        ValueError
            ``data`` is not an error entry.
        """
        if data.get("verdict") != Verdict.ERROR or not isinstance(data.get("error"), str):
            raise ValueError(f"FailedTask.from_dict needs verdict 'error' and an error message, got "
                             f"verdict={data.get('verdict')!r}, error={data.get('error')!r}")
        return cls(str(data.get("kind", "")), str(data.get("target", "")), data["error"], data.get("traceback"))


@dataclasses.dataclass(frozen=True)
class UntypedResult(AuditResult):
    """The plain-dict result of a kind that declares no result dataclass (a quick kind in a script).

    Its entry is reported as it is; the report renders its scalar fields and no figure.
    Its verdict is the dict's own (an unknown word reads as ``inconclusive``, see
    :func:`privaudit.audit.verdicts.outcome`).

    Attributes
    ----------
    data : dict
        The JSON entry, with at least ``kind``, ``target`` and ``verdict``.
    """

    data: dict

    @property
    def kind(self) -> str:  # type: ignore[override]
        return str(self.data.get("kind", ""))

    @property
    def target(self) -> str:
        return str(self.data.get("target", ""))

    @property
    def verdict(self) -> str:
        return self.data.get("verdict", Verdict.INFO.value)

    @property
    def expect(self) -> str | None:
        return self.data.get("expect")

    def to_dict(self) -> dict[str, Any]:
        """The entry as it is (a copy)."""
        return dict(self.data)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> UntypedResult:
        """The entry ``data`` (without the report's ``task`` index).

        Parameters
        ----------
        data : mapping
            A report entry of a kind without a typed result.

        Returns
        -------
        UntypedResult
        """
        return cls({k: v for k, v in data.items() if k != "task"})


@dataclasses.dataclass(frozen=True)
class AuditEntry:
    """One entry of a report: an audit's result as the configuration labels and judges it.

    Attributes
    ----------
    result : AuditResult
        The audit's own result (its own verdict is kept there).
    target : str, optional
        The configuration's label; the audit's own name is then kept as ``audited``.
    verdict : Verdict, optional
        The entry's verdict when it differs from the result's (a negative control).
    expect : str, optional
        ``"violation"`` (or ``"biased"``) for a negative control.
    notes : tuple of str
        Notes the kind adds to the result's own.
    task : int, optional
        Index of the task that produced the entry (set in a report, not in a task's output).
    """

    result: AuditResult
    target: str | None = None
    verdict: Verdict | None = None
    expect: str | None = None
    notes: tuple[str, ...] = ()
    task: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.result, AuditResult):
            raise TypeError(f"AuditEntry needs an AuditResult, got result={type(self.result).__name__}")
        if self.verdict is not None and not isinstance(self.verdict, Verdict):
            object.__setattr__(self, "verdict", Verdict(self.verdict))

    @property
    def kind(self) -> str:
        """The result's kind (the report entry's ``kind``)."""
        return self.result.kind

    @property
    def label(self) -> str:
        """What the report calls the entry: the configuration's label, else the audit's own name."""
        own = getattr(self.result, "target", None)
        return str(self.target if self.target is not None else (own or ""))

    @property
    def final_verdict(self) -> Verdict | str:
        """The entry's verdict: a negative control's own, else the result's (``info`` when it has none)."""
        return self.verdict if self.verdict is not None else getattr(self.result, "verdict", Verdict.INFO)

    def plot(self, which: int | str = 0) -> Figure:
        """The entry's figure, as its report draws it (:func:`privaudit.audit.plot_result`).

        Parameters
        ----------
        which : int or str
            The figure's position among its kind's figures, or its name (``"roc"``).

        Returns
        -------
        matplotlib.figure.Figure
        """
        return renderer("plot")(self, which)

    def _repr_html_(self) -> str:
        """The entry as a notebook shows it: outcome, headline, figures, fields, notes."""
        return renderer("html")(self)

    @property
    def expectation(self) -> str | None:
        """What the entry expected: a negative control's ``expect``, else the result's own (a bias audit's)."""
        if self.expect is not None:
            return self.expect
        own = getattr(self.result, "expect", None)
        return own if isinstance(own, str) else None

    def to_dict(self) -> dict[str, Any]:
        """The report entry: the result's fields, relabelled, with the entry's verdict and notes (and ``task``)."""
        d = self.result.to_dict()
        if self.verdict is not None:
            d["audit_verdict"] = d.get("verdict")
            d["expect"] = self.expect
            d["verdict"] = self.verdict.value
        d.setdefault("verdict", Verdict.INFO.value)
        if self.notes:
            own = d.get("notes") or []
            d["notes"] = [*([own] if isinstance(own, str) else own), *self.notes]
        if self.target is not None:
            if d.get("target") and d["target"] != self.target:
                d["audited"] = d["target"]
            d["target"] = self.target
        if self.task is not None:
            d["task"] = self.task
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], result_type: type[AuditResult] | None = None) -> AuditEntry:
        """Read an entry back; inverse of :meth:`to_dict` (``to_dict(from_dict(d)) == d``).

        Parameters
        ----------
        data : mapping
            A report entry (``report.json``, a cache entry or a task's output).
        result_type : type of AuditResult, optional
            The dataclass of the entry's kind (:func:`privaudit.audit.kinds.result_type`).
            None: the entry is kept as an :class:`UntypedResult`. An error entry
            (verdict ``"error"``) is a :class:`FailedTask` whatever ``result_type``.

        Returns
        -------
        AuditEntry

        Raises
        ------
        TypeError, ValueError
            ``data`` is not a mapping, or not an entry of ``result_type`` (missing field,
            unknown verdict, a claim its dataclass refuses, ...).
        """
        if not isinstance(data, Mapping):
            raise TypeError(f"AuditEntry.from_dict needs a mapping, got {type(data).__name__}")
        task = data.get("task")
        if data.get("verdict") == Verdict.ERROR:
            return cls(FailedTask.from_dict(data), task=task)
        if result_type is None:
            return cls(UntypedResult.from_dict(data), task=task)
        raw = {k: v for k, v in data.items() if k != "task"}
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
                   expect=data.get("expect") if control else None, notes=extra, task=task)


def as_entry(result: AuditResult | AuditEntry) -> AuditEntry:
    """``result`` as an entry (an entry is returned as it is).

    Parameters
    ----------
    result : AuditResult or AuditEntry

    Returns
    -------
    AuditEntry
    """
    return result if isinstance(result, AuditEntry) else AuditEntry(result)


def apply_expectation(result: AuditResult | AuditEntry, expect: str, *, caught: Verdict | str,
                      missed: Verdict | str = Verdict.FAIL) -> AuditEntry:
    """Verdict of a negative control: a deliberately broken target must be caught.

    With ``expect="violation"`` (a target whose claim is known to be false) the entry
    passes when the audit reports ``caught`` and fails otherwise; the audit's own
    verdict stays in the result (``audit_verdict`` in the report). ``"private"`` and
    ``"unbiased"`` leave the verdict as is.

    Parameters
    ----------
    result : AuditResult or AuditEntry
        The audit of the negative control.
    expect : str
        The entry's ``expect``.
    caught : Verdict or str
        The audit verdict that means the known violation was caught.
    missed : Verdict or str
        The entry's verdict when it was not.

    Returns
    -------
    AuditEntry
    """
    entry = as_entry(result)
    if expect in ("private", "unbiased"):
        return entry
    raw = getattr(entry.result, "verdict", None)
    note = (f"negative control: the claim is known to be false; the audit {'caught' if raw == caught else 'MISSED'} "
            f"it (audit verdict {raw!r})")
    return dataclasses.replace(entry, verdict=Verdict.PASS if raw == caught else Verdict(missed), expect=expect,
                               notes=(*entry.notes, note))


def with_note(result: AuditResult | AuditEntry, note: str) -> AuditEntry:
    """The entry with ``note`` appended to its notes.

    Parameters
    ----------
    result : AuditResult or AuditEntry
    note : str

    Returns
    -------
    AuditEntry
    """
    entry = as_entry(result)
    return dataclasses.replace(entry, notes=(*entry.notes, note))


# --------------------------------------------------------------------------- how a result names its target
#: An address in a repr (``<mymech.MyLaplace object at 0x7f…>``): it differs between runs, so it never
#: reaches a result.
_ADDRESS = re.compile(r" (?:object )?at 0x[0-9a-fA-F]+")
#: Parameter values longer than this are shortened in a description.
_VALUE_CHARS = 200


def stable_repr(obj: Any) -> str:
    """A description of ``obj`` that is the same in every run: its own ``repr`` when it defines one, else its
    class path and parameters, never a memory address.

    A class without its own ``__repr__`` (Python's default shows the object's address, so
    two runs of the same audit recorded different targets) is described as
    ``module.Class(param=value, ...)``: the parameters are scikit-learn's ``get_params()``
    when the object has it, else the constructor's parameters that the object keeps as
    attributes of the same name. Any address left inside a custom ``repr`` is removed.

    Parameters
    ----------
    obj : object
        A mechanism, learner, attacker or other user object a result names.

    Returns
    -------
    str
    """
    cls = type(obj)
    if cls.__repr__ is not object.__repr__:
        return _ADDRESS.sub("", repr(obj))
    args = ", ".join(f"{k}={_short_value(v)}" for k, v in _parameters(obj).items())
    return f"{cls.__module__}.{cls.__qualname__}({args})"


def _parameters(obj: Any) -> dict[str, Any]:
    get_params = getattr(obj, "get_params", None)
    if callable(get_params):
        try:
            params = get_params(deep=False)
            if isinstance(params, dict):
                return dict(sorted(params.items()))
        except Exception:  # noqa: BLE001 - a user's get_params that fails: fall back on the constructor
            pass
    try:
        names = [n for n, p in inspect.signature(type(obj).__init__).parameters.items()
                 if n != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    except (TypeError, ValueError):
        names = []
    return {n: getattr(obj, n) for n in names if n in getattr(obj, "__dict__", {})}


def _short_value(value: Any) -> str:
    text = repr(value) if isinstance(value, str | int | float | bool | type(None)) else stable_repr(value)
    return text if len(text) <= _VALUE_CHARS else f"{text[:_VALUE_CHARS - 1]}…"
