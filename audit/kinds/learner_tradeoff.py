"""Kind ``learner-tradeoff``: the trade-off audit of what a learner releases.

The learner (a registered one, fitted as its ``release_view`` decides, e.g. on
synthetic data) returns the mechanism standing for its release; the audit runs on
the pair it declares (:func:`privaudit.audit.engines.release_views.tradeoff_setup`),
whose note the report records. Nothing here depends on the learner's type: a learner
with a ``release_view`` is audited.
"""

from __future__ import annotations

import numpy as np

from privaudit.audit.schema.fields import Field
from privaudit.audit.engines.release_views import audit_tradeoff_setup, tradeoff_setup
from privaudit.audit.results import AuditEntry, apply_expectation, with_note
from privaudit.audit.engines.tradeoff import MIN_N, TradeoffAudit
from privaudit.audit.kinds import tradeoff
from privaudit.audit.kinds.base import (CONFIDENCE, DATA_FIELDS, EXPECT_PRIVATE, LEARNER, AuditKind, build_learner,
                                        check_learner, learner_data_memory, learner_target)

FIELDS = {
    "learner": LEARNER, **DATA_FIELDS,
    "n": Field("int", 20000, low=MIN_N, samples=True, doc="releases (or training runs) per hypothesis"),
    "phase": Field("str", "known", choices=("known", "hidden"), doc="modulated learners: phases revealed or not"),
    "mode": Field("str", "white-box", choices=("white-box", "black-box"),
                  doc="DP-SGD learners: attacker sees every noisy step, or the final model"),
    "estimator": Field("str", None, choices=("clopper-pearson", "gdp"), doc="default: the audit's own choice"),
    "confidence": CONFIDENCE,
    "expect": EXPECT_PRIVATE,
}


def run(params: dict, rng: np.random.Generator) -> AuditEntry:
    """Trade-off audit of what a learner releases (its release_view: transcript, record, label canary).

    Parameters
    ----------
    params : dict
        The entry's validated parameters, sample sizes scaled by ``samples``.
    rng : Generator
        The task's randomness (derived from the run's seed and the entry).

    Returns
    -------
    AuditEntry
        The trade-off audit of the learner's release.
    """
    view = build_learner(params).release_view(n_train=params["n_train"], dim=params["dim"], mode=params["mode"],
                                              rng=rng)
    setup = tradeoff_setup(view, phase=params["phase"])
    res = audit_tradeoff_setup(setup, n=params["n"], confidence=params["confidence"], rng=rng,
                               estimator=params["estimator"])
    entry = apply_expectation(tradeoff.judge(res), params["expect"], caught="violation")
    return with_note(entry, setup.note) if setup.note else entry


KIND = AuditKind("learner-tradeoff", run, FIELDS, result=TradeoffAudit, doc=run.__doc__.split("\n")[0],
                 target=learner_target, check=check_learner, memory=learner_data_memory, headline=tradeoff.headline,
                 figures=tradeoff.tradeoff_figures, table_rows={"epsilon": tradeoff.epsilon_row})
