"""The :class:`AuditKind` record and the fields several built-in kinds share.

Kind modules import this module, never the registry (:mod:`privaudit.audit.kinds`),
so that registering the built-ins on import is not an import cycle.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from privaudit.audit.schema.components import LEARNERS, MECHANISMS
from privaudit.audit.schema.fields import ConfigValueError, Field
from privaudit.audit.schema.limits import Estimate
from privaudit.audit.display.formatting import fnum
from privaudit.audit.results import AuditEntry, AuditResult
from privaudit.audit.verdicts import outcome_label


#: A figure: (file-name suffix, matplotlib figure, caption).
Figure = tuple[str, Any, str]
#: Font size (pt) of figure legends: readable when a figure is shown at column width.
LEGEND_PT = 9


@dataclasses.dataclass(frozen=True)
class AuditKind:
    """A registered kind of audit entry.

    Attributes
    ----------
    name : str
        The ``kind`` value in a configuration.
    run : callable(params, rng) -> AuditResult | AuditEntry | list | dict
        Runs one entry. ``params`` are the validated fields (sample sizes scaled),
        ``rng`` the task's own :class:`numpy.random.Generator`.
    fields : mapping of str to Field
        Keys the entry accepts (besides ``kind`` and ``target``).
    result : type of AuditResult, optional
        The dataclass ``run`` returns (its ``kind`` is the report entry's ``kind``).
    doc : str
        One line for ``privaudit list kinds``.
    target : callable(params) -> str, optional
        Default report label when the entry has no ``target``.
    check : callable(path, params), optional
        Validation spanning several fields, run when the configuration is loaded.
    memory : callable(params) -> Estimate or None, optional
        Peak memory of an entry where it is not linear in a sample size (see
        :func:`privaudit.audit.schema.limits.check_tasks`); checked before any task runs.
    check_built : callable(path, params, components), optional
        Validation that needs the entry's registered components built (``components``
        maps ``"mechanism"``, ``"prior"``, ``"learner"`` to the constructed objects):
        e.g. a pair against the mechanism's claim. Run by the preflight
        (:func:`privaudit.audit.app.runner.check_buildable`), before any task; raises
        config errors naming ``path``.
    headline : callable(AuditEntry) -> str, optional
        One-line summary of a report entry whose result is a ``result``.
    figures : callable(AuditEntry) -> list of (suffix, figure, caption), optional
        Figures of a report entry (matplotlib figures; the report renders them to PNG).
    table_rows : mapping of table name to callable(AuditEntry) -> list of str, optional
        Rows this kind contributes to the summary tables of :mod:`privaudit.audit.reporting.figures`
        (``"epsilon"``, ``"bias"``); a callable returning None adds no row.
    primary : bool or None
        Whether this kind renders every report entry of its result's kind (its ``headline``,
        ``figures`` and ``table_rows`` are used for them), when several kinds produce one result
        type. None (default): it does when it is the kind the result names (``result.kind ==
        name``, e.g. ``tradeoff`` for :class:`~privaudit.audit.engines.tradeoff.TradeoffAudit`,
        not ``learner-tradeoff``), or the only kind producing that result; True: it does (at
        most one kind per result kind may say so); False: never. Registration order plays no
        part (:func:`privaudit.audit.kinds.renderer`).

    The rendering callables receive the typed entry (:class:`~privaudit.audit.results.AuditEntry`,
    its ``result`` an instance of ``result``), never the JSON dict; the report calls them
    only for entries whose result is a ``result``.
    """

    name: str
    run: Callable[[dict, Any], Any]
    fields: Mapping[str, Field]
    result: type[AuditResult] | None = None
    doc: str = ""
    target: Callable[[dict], str] | None = None
    check: Callable[[str, dict], None] | None = None
    check_built: Callable[[str, dict, Mapping[str, Any]], None] | None = None
    memory: Callable[[dict], Any] | None = None
    headline: Callable[[AuditEntry], str] | None = None
    figures: Callable[[AuditEntry], list[Figure]] | None = None
    table_rows: Mapping[str, Callable[[AuditEntry], list[str] | None]] = dataclasses.field(default_factory=dict)
    primary: bool | None = None

    def validate(self, path: str, params: dict) -> None:
        """Checks spanning several fields (after each field is valid); raise naming ``path``.

        Parameters
        ----------
        path : str
            Key path of the entry (``audits[0]``), named in errors.
        params : dict
            The entry's validated parameters.

        Raises
        ------
        ConfigError
            Whatever the kind's ``check`` raises, naming ``path``.
        """
        if self.check is not None:
            self.check(path, params)

    def default_target(self, params: dict) -> str:
        """The entry's label: the kind's ``target(params)``, else the kind's name.

        Parameters
        ----------
        params : dict
            The entry's validated parameters.

        Returns
        -------
        str
        """
        return self.target(params) if self.target is not None else self.name

    @property
    def result_kind(self) -> str | None:
        return self.result.kind if self.result is not None else None

    def renders(self, entry: AuditEntry) -> bool:
        """True when this kind's headline, figures and table rows apply to ``entry`` (its result is a ``result``).

        Parameters
        ----------
        entry : AuditEntry

        Returns
        -------
        bool
        """
        return self.result is not None and isinstance(entry.result, self.result)



#: Confidence level of every bound.
CONFIDENCE = Field("float", 0.95, low=0.0, high=1.0, closed="neither", doc="confidence level of the bounds")
#: What a privacy audit expects of its target: "violation" makes the entry a negative control.
EXPECT_PRIVATE = Field("str", "private", choices=("private", "violation"),
                       doc="negative control: \"violation\" passes when the audit catches a known violation")
#: A mechanism table, validated against the mechanism registry (nothing is constructed).
MECHANISM = Field("table", validate=MECHANISMS.field_validator(), doc="mechanism table {name = ..., <parameters>}")


def mechanism_target(params: dict) -> str:
    """Default label of an entry with a mechanism table: ``name(key=value, ...)`` (arrays left out).

    Parameters
    ----------
    params : dict
        The entry's validated parameters.

    Returns
    -------
    str
    """
    m = params.get("mechanism") or {}
    args = ", ".join(f"{k}={v}" for k, v in m.items() if k != "name" and not isinstance(v, list))
    return f"{m.get('name', '?')}({args})"


# --------------------------------------------------------------------------- learner kinds
#: A learner table, validated against the learner registry and the learner's ``_parameter_constraints``.
LEARNER = Field("table", validate=LEARNERS.field_validator(), doc="learner table {name = ..., <hyperparameters>}")
#: The synthetic data a learner is fitted on before its release is audited.
DATA_FIELDS = {
    "n_train": Field("int", 2000, low=10, high=10**7, doc="synthetic training examples the learner is fitted on"),
    "dim": Field("int", 3, low=1, high=10_000, doc="feature dimension of the synthetic data"),
}


#: Copies of the synthetic training data (n_train × dim float64) alive while a learner is fitted and its
#: release view built (features, clipped and released copies, work space).
DATA_COPIES = 4


def learner_data_memory(params: dict) -> Estimate:
    """Peak memory of fitting a learner entry's synthetic data: ``n_train × dim`` float64 values, several copies.

    Parameters
    ----------
    params : dict
        The entry's (scaled) fields, with ``n_train`` and ``dim``.

    Returns
    -------
    Estimate
    """
    n, d = params["n_train"], params["dim"]
    return Estimate(float(n) * d * 8 * DATA_COPIES, "n_train", n,
                    f"n_train × dim {d} × 8 bytes × {DATA_COPIES} copies of the training data")


def learner_target(params: dict) -> str:
    """Default label of a learner entry: ``Name(key=value, ...)`` (arrays left out).

    Parameters
    ----------
    params : dict
        The entry's validated parameters.

    Returns
    -------
    str
    """
    spec = params["learner"]
    args = ", ".join(f"{k}={v}" for k, v in spec.items() if k != "name" and not isinstance(v, list))
    return f"{spec['name']}({args})"


#: Learner parameters that declare a box: (low, high), each a number or one number per feature
#: (``bounds``), or two numbers (``label_bounds``).
BOX_PARAMETERS = {"bounds": "features", "label_bounds": "label"}


def check_box(loc: str, value: Any, width: int | None) -> None:
    """A declared box ``[low, high]``: two numbers, or (``width`` given) two arrays of ``width`` numbers.

    Parameters
    ----------
    loc : str
        Key path of the value (``audits[0].learner.bounds``).
    value : object
        The value as the configuration holds it.
    width : int or None
        Features of the box (arrays of this length allowed); None: two numbers only.

    Raises
    ------
    ConfigValueError
        Naming ``loc`` and the value: not a pair, a side of the wrong length, low > high,
        or no positive extent.
    """
    shape = f"[low, high], two numbers or two arrays of {width} numbers" if width else "[low, high], two numbers"
    if not isinstance(value, list) or len(value) != 2:
        raise ConfigValueError(f"{loc} must be {shape}, got {loc} = {value!r}")
    sides = []
    for side in value:
        if isinstance(side, list) and width is not None and len(side) == width and not any(
                isinstance(v, list) for v in side):
            sides.append(np.asarray(side, dtype=float))
        elif isinstance(side, int | float) and not isinstance(side, bool):
            sides.append(np.full(width or 1, float(side)))
        else:
            raise ConfigValueError(f"{loc} must be {shape}, got {loc} = {value!r}")
    low, high = sides
    if np.any(low > high) or not np.any(high > low):
        raise ConfigValueError(f"{loc} must have low <= high everywhere and high > low somewhere, got {loc} = {value!r}")


def check_learner(path: str, params: dict) -> None:
    """The learner must say what it releases (``release_view``); its class is imported, not called.
    Declared boxes (``bounds``, ``label_bounds``) must be pairs fitting the entry's ``dim``.

    Parameters
    ----------
    path : str
        Key path of the entry (``audits[0]``), named in errors.
    params : dict
        The entry's validated parameters.

    Raises
    ------
    ConfigValueError
        For a malformed box, or a learner class without ``release_view``.
    """
    for key, sort in BOX_PARAMETERS.items():
        if params["learner"].get(key) is not None:
            check_box(f"{path}.learner.{key}", params["learner"][key], params.get("dim") if sort == "features" else None)
    cls, _ = LEARNERS.resolve(params["learner"]["name"], f"{path}.learner.name")
    if not callable(getattr(cls, "release_view", None)):
        raise ConfigValueError(
            f"{path}.learner.name = {params['learner']['name']!r} has no learner audit: it does not define "
            f"release_view() (learners with one: "
            f"{', '.join(n for n in LEARNERS.names() if hasattr(LEARNERS.get(n).load(), 'release_view'))})"
        )


def build_learner(params: dict) -> Any:
    """The configured (unfitted) learner of a validated entry.

    Parameters
    ----------
    params : dict
        The entry's validated parameters.

    Returns
    -------
    estimator
        The learner, constructed by the learner registry (not fitted).
    """
    return LEARNERS.build(params["learner"], "learner")


def epsilon_table_row(entry: AuditEntry, *, estimator: str, exact: str = "—", certified: str = "—", n: str = "—",
                      ceiling: str = "—") -> list[str]:
    """One row of the report's ε table, in its column order.

    Parameters
    ----------
    entry : AuditEntry
        An entry whose result has a ``claim`` (:class:`~privaudit.mechanisms.PrivacyClaim`).
    estimator, exact, certified, n, ceiling : str
        The formatted cells of the estimator (assumption), exact ε, certified ε̲, sample
        size and max certifiable ε columns.

    Returns
    -------
    list of str
        Target, claimed ε and δ, exact ε, certified ε̲, estimator, n, max certifiable ε, outcome.
    """
    claim = entry.result.claim
    return [entry.label, fnum(claim.epsilon), fnum(claim.delta), exact, certified, estimator, n, ceiling,
            outcome_label(entry)]
