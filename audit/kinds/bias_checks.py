"""Kind ``bias-checks``: the catalogue of bias checks of every estimator the papers claim unbiased.

Runs :func:`~privaudit.audit.studies.bias_checks.run_bias_checks`, which returns
:class:`~privaudit.audit.engines.bias.BiasAudit` and
:class:`~privaudit.audit.results.ExperimentResult` entries; each keeps its own name
and is rendered by the kind of its result (``bias``, ``utility``).
"""

from __future__ import annotations

import numpy as np

from privaudit.audit.studies.bias_checks import run_bias_checks
from privaudit.audit.schema.fields import Field
from privaudit.mechanisms.randomness import int_seed
from privaudit.audit.kinds.base import AuditKind

FIELDS = {
    "small": Field("bool", False, doc="smaller caps (smoke runs; may be under-powered, notes say so)"),
    "n_scale": Field("float", 1.0, low=0.0, high=1e4, closed="neither", samples=True,
                     doc="multiplies every cap on draws"),
}


def run(params: dict, rng: np.random.Generator) -> list:
    """The catalogue of bias checks of every estimator the papers claim unbiased (run_bias_checks).

    Parameters
    ----------
    params : dict
        The entry's validated parameters, sample sizes scaled by ``samples``.
    rng : Generator
        The task's randomness (derived from the run's seed and the entry).

    Returns
    -------
    list
        BiasAudit and ExperimentResult objects, in report order.
    """
    return run_bias_checks(n_scale=params["n_scale"], random_state=int_seed(rng), small=params["small"])


KIND = AuditKind("bias-checks", run, FIELDS, doc=run.__doc__.split("\n")[0],
                 target=lambda p: "bias checks" + (" (small)" if p["small"] else ""))
