"""Kind ``learner-reconstruction``: reconstruction from what a learner releases.

The learner's ``release_view`` gives the mechanism standing for its release (a
client's transcript, a record's features, a canary's DP-SGD steps); the attack and
the bounds run on what it declares
(:func:`privaudit.audit.engines.release_views.reconstruction_setup`), whose note the
report records.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privaudit.attacks.priors import GaussianPrior

from privaudit.audit.schema.components import registered_attackers
from privaudit.audit.schema.fields import Field
from privaudit.audit.engines.reconstruction import ReconstructionAudit
from privaudit.audit.engines.release_views import audit_reconstruction_setup, reconstruction_setup
from privaudit.audit.results import AuditEntry, as_entry, with_note
from privaudit.audit.kinds import reconstruction
from privaudit.audit.kinds.base import (CONFIDENCE, DATA_FIELDS, LEARNER, AuditKind, build_learner, check_learner,
                                        learner_data_memory, learner_target)

FIELDS = {
    "learner": LEARNER, **DATA_FIELDS,
    "n": Field("int", 5000, low=10, samples=True, doc="audited releases"),
    "attacker": Field("str", None, validate=registered_attackers("reconstruction"),
                      doc="registered reconstruction attacker (default: strongest applicable)"),
    "prior_std": Field("float", None, low=0.0, closed="neither",
                       doc="draw x ~ N(0, prior_std² I) (van Trees); default: a fixed x"),
    "phase": Field("str", "known", choices=("known", "hidden"), doc="modulated learners: phases revealed or not"),
    "confidence": CONFIDENCE,
}


def run(params: dict, rng: np.random.Generator) -> AuditEntry:
    """Reconstruction from what a learner releases (its release_view), against the bounds that apply.

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
    d = params["dim"]
    prior = None if params["prior_std"] is None else GaussianPrior(np.zeros(d), params["prior_std"] ** 2 * np.eye(d))
    # Reconstruction attacks see everything released: the white-box view.
    view = build_learner(params).release_view(n_train=params["n_train"], dim=d, mode="white-box", rng=rng)
    setup = reconstruction_setup(view, prior=prior, phase=params["phase"])
    res = reconstruction.judge(audit_reconstruction_setup(
        setup, attacker=params["attacker"], n=params["n"], confidence=params["confidence"], rng=rng,
        x=fixed_input(setup, view, d)))
    return with_note(res, setup.note) if setup.note else as_entry(res)


def fixed_input(setup: Any, view: Any, dim: int) -> np.ndarray | None:
    """The fixed input of a setup whose release does not state its dimension (a record's features).

    The audit's default input, (1, ..., 1)/sqrt(dim), moved into the box the view declares
    (``view.bounds``, its low and high corners), so that the audited record is one the
    learner accepts unclipped. None when a prior is used or the release states its ``dim``
    (the audit then chooses as it always did).

    Parameters
    ----------
    setup : ReconstructionSetup
    view : object
        The learner's release view.
    dim : int
        The feature dimension of the entry.

    Returns
    -------
    ndarray of shape (dim,) or None
    """
    rounds = setup.mechanism if isinstance(setup.mechanism, list | tuple) else [setup.mechanism]
    if setup.prior is not None or any(hasattr(m, "dim") for m in rounds):
        return None
    x = np.full(dim, 1 / math.sqrt(dim))
    bounds = getattr(view, "bounds", None)
    if bounds is not None:
        lo, hi = (np.broadcast_to(np.asarray(b, dtype=float), (dim,)) for b in bounds)
        x = np.clip(x, lo, hi)
    return x


KIND = AuditKind("learner-reconstruction", run, FIELDS, result=ReconstructionAudit, doc=run.__doc__.split("\n")[0],
                 target=learner_target, check=check_learner, memory=learner_data_memory, headline=reconstruction.headline,
                 figures=reconstruction.reconstruction_figures)
