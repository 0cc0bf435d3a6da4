"""Kind ``bias``: is an estimator unbiased? Draws of ``sampler(n, rng)`` tested against ``target_value``.

Runs :func:`~privaudit.audit.engines.bias.audit_bias`. The sampler is a registered bias
sampler (entry-point group ``privaudit.samplers``) or, with the user's opt-in
(``--allow-import MODULE``), a ``"package.module:function"`` reference; validating
the configuration imports it but never calls it. ``expect = "biased"`` marks a
negative control (it passes when the bias is detected).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privaudit.audit.engines.bias import BiasAudit, audit_bias
from privaudit.audit.schema.components import SAMPLERS
from privaudit.audit.schema.fields import ConfigTypeError, Field
from privaudit.audit.display.formatting import fnum
from privaudit.audit.display.displays import BiasDisplay
from privaudit.audit.results import AuditEntry
from privaudit.audit.verdicts import outcome_label
from privaudit.audit.kinds.base import CONFIDENCE, LEGEND_PT, AuditKind


def validate_sampler(path: str, name: str) -> str:
    """A registered sampler, or an allowed ``module:function`` reference; imported, not called.

    Parameters
    ----------
    path : str
        Key path of the value, named in errors.
    name : str
        A registered sampler name or a ``"module:function"`` reference.

    Returns
    -------
    str
        ``name``, unchanged.

    Raises
    ------
    ConfigValueError
        For an unknown name or a reference that is not allowed or cannot be imported.
    """
    obj, _ = SAMPLERS.resolve(name, path)
    if not callable(obj):
        raise ConfigTypeError(f"{path} = {name!r} is not callable")
    return name


FIELDS = {
    "sampler": Field("str", validate=validate_sampler,
                     doc="registered sampler or 'package.module:function' (opt-in) with sampler(n, rng) -> n draws"),
    "target_value": Field("array", doc="the estimator's claimed expectation"),
    "n": Field("int", 100_000, low=10, high=10**8, samples=True, doc="draws of the estimator"),
    "confidence": CONFIDENCE,
    "expect": Field("str", "unbiased", choices=("unbiased", "biased"),
                     doc="\"biased\" is a negative control: it passes when the audit detects the bias"),
}


def _name(params: dict) -> str:
    return params["sampler"].rpartition(":")[2]


def run(params: dict, rng: np.random.Generator) -> BiasAudit:
    """Bias audit of a user estimator: is E[sampler(n, rng)] equal to target_value? (audit_bias).

    Parameters
    ----------
    params : dict
        The entry's validated parameters, sample sizes scaled by ``samples``.
    rng : Generator
        The task's randomness (derived from the run's seed and the entry).

    Returns
    -------
    BiasAudit
    """
    sampler, _ = SAMPLERS.resolve_validated(params["sampler"], "sampler")
    return audit_bias(sampler, np.asarray(params["target_value"]), n=params["n"], confidence=params["confidence"],
                      expect=params["expect"], name=_name(params), rng=rng)


def headline(entry: AuditEntry) -> str:
    """``‖bias‖ = …, p = …, expect …, n = …``.

    Parameters
    ----------
    entry : AuditEntry
        An entry whose result is a :class:`BiasAudit`.

    Returns
    -------
    str
    """
    res: BiasAudit = entry.result
    return (f"‖bias‖ = {fnum(res.bias_norm)}, p = {fnum(res.p_value)}, "
            f"expect {entry.expectation or 'unbiased'}, n = {res.n}")


def bias_row(entry: AuditEntry) -> list[str]:
    """Row of the bias table.

    Parameters
    ----------
    entry : AuditEntry
        An entry whose result is a :class:`BiasAudit`.

    Returns
    -------
    list of str
    """
    res: BiasAudit = entry.result
    return [entry.label, str(entry.expectation or "unbiased"), fnum(res.bias_norm), fnum(res.relative_bias),
            fnum(res.min_detectable_relative_bias), fnum(res.p_value), fnum(res.n), outcome_label(entry)]


def bias_figures(entry: AuditEntry) -> list[tuple[str, Any, str]]:
    """Bias per coordinate with its simultaneous confidence interval (first 40 coordinates).

    Parameters
    ----------
    entry : AuditEntry
        An entry whose result is a :class:`BiasAudit`.

    Returns
    -------
    list of (suffix, matplotlib figure, caption)
    """
    display = BiasDisplay.from_result(entry.result, label=entry.label)
    if display is None:
        return []
    display.plot(legend_pt=LEGEND_PT)
    return [("bias", display.figure_, "Bias per coordinate with its simultaneous confidence interval")]


KIND = AuditKind("bias", run, FIELDS, result=BiasAudit, doc=run.__doc__.split("\n")[0], target=_name,
                 headline=headline, figures=bias_figures, table_rows={"bias": bias_row})
