"""Kind ``calibration``: the exact ε of the noise a mechanism actually uses, against its claim, analytically.

Runs :func:`~privaudit.audit.engines.calibration.audit_calibration` (no sampling: the
verdict is a comparison of two numbers, the mechanism's exact ε at the claimed δ and
the claimed ε). ``expect = "violation"`` marks a negative control.
"""

from __future__ import annotations

import numpy as np

from privaudit.audit.engines.calibration import CalibrationAudit, audit_calibration
from privaudit.audit.schema.components import MECHANISMS
from privaudit.audit.schema.fields import Field
from privaudit.audit.display.formatting import fnum
from privaudit.audit.results import AuditEntry, apply_expectation
from privaudit.audit.kinds.base import EXPECT_PRIVATE, MECHANISM, AuditKind, epsilon_table_row, mechanism_target

FIELDS = {
    "mechanism": MECHANISM,
    "expect": EXPECT_PRIVATE,
}


def run(params: dict, rng: np.random.Generator) -> AuditEntry:
    """Exact ε of the noise actually used against the claimed ε, analytically (audit_calibration).

    Parameters
    ----------
    params : dict
        The entry's validated parameters, sample sizes scaled by ``samples``.
    rng : Generator
        The task's randomness (derived from the run's seed and the entry).

    Returns
    -------
    AuditEntry
    """
    res = audit_calibration(MECHANISMS.build(params["mechanism"], "mechanism"))
    return apply_expectation(res, params["expect"], caught="violation")


def headline(entry: AuditEntry) -> str:
    """``exact ε = … vs claimed ε = … at δ = … (slack …, analytic)``.

    Parameters
    ----------
    entry : AuditEntry
        An entry whose result is a :class:`CalibrationAudit`.

    Returns
    -------
    str
    """
    res: CalibrationAudit = entry.result
    return (f"exact ε = {fnum(res.epsilon_exact)} vs claimed ε = {fnum(res.claim.epsilon)} at "
            f"δ = {fnum(res.claim.delta)} (slack {fnum(res.slack)}, analytic)")


def epsilon_row(entry: AuditEntry) -> list[str]:
    """Analytic: the exact ε of the noise in use; nothing sampled, nothing to certify.

    Parameters
    ----------
    entry : AuditEntry
        An entry whose result is a :class:`CalibrationAudit`.

    Returns
    -------
    list of str
    """
    return epsilon_table_row(entry, exact=fnum(entry.result.epsilon_exact),
                             estimator="analytic: exact ε of the noise in use (no sampling)")


KIND = AuditKind("calibration", run, FIELDS, result=CalibrationAudit, doc=run.__doc__.split("\n")[0],
                 target=mechanism_target, headline=headline, table_rows={"epsilon": epsilon_row})
