"""Sample-size policy of the bias preset: powered audits of unbiased claims and sized negative controls.

An estimator claimed unbiased is audited at a number of draws large enough to detect a
relative bias of 1 % (of the target's ℓ₂ norm, in the worst direction) with power 0.9
(:func:`powered_audit`); a known-biased estimator (negative control) at the number of
draws that detects its exact bias (:func:`negative_control`). See
:mod:`privaudit.audit.studies.bias_checks` for the catalogue of checks that use them.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from privaudit.audit.engines.bias import BiasAudit, audit_bias, required_draws
from privaudit.mechanisms.randomness import draw_seed, named_seed_sequence
from privaudit.mechanisms.validation import check_positive

#: Relative bias the unbiased claims are powered for, and the power.
RELATIVE_RESOLUTION = 0.01
POWER = 0.9
#: Per-audit confidence. The preset runs about 50 audits; at 0.999 each, Bonferroni bounds the
#: probability that any estimator claimed unbiased is falsely flagged in a run by 5 %.
CONFIDENCE = 0.999
#: Head-room on the pilot's n_required (its covariance estimate has sampling error).
SAFETY = 1.15


class _Budget:
    """Sample-size policy shared by the checks of one run."""

    def __init__(self, n_scale: float, random_state, small: bool) -> None:
        self.n_scale = check_positive("n_scale", n_scale)
        # The recorded root seed (an int; drawn when random_state is None or a generator).
        self.random_state = draw_seed(random_state, "random_state")
        self.small = bool(small)

    def seed(self, name: str) -> int:
        """Seed of the stream called ``name``: independent of the order in which checks run.

        One draw from :func:`~privaudit.mechanisms.randomness.named_seed_sequence` (the root seed
        and a 64-bit hash of the name in the SeedSequence's entropy).
        """
        return draw_seed(named_seed_sequence(self.random_state, name))

    def cap(self, full: int, small: int) -> int:
        return max(200, int((small if self.small else full) * self.n_scale))


def _chunk(per_draw: int) -> int:
    """Draws per chunk so that one chunk holds ~2·10⁵ floats of intermediate data."""
    return int(max(64, min(20_000, 200_000 // max(per_draw, 1))))


def powered_audit(sampler: Callable, target: ArrayLike, *, name: str, budget: _Budget, cap: int, small_cap: int,
                  per_draw: int = 1, pilot: int = 20_000, note: str = "") -> BiasAudit:
    """Audit an estimator claimed unbiased at the n that detects a 1 % relative bias with power 0.9.

    A pilot audit (``pilot`` draws, its own seed) gives ``n_required``; the final audit
    draws n = max(pilot, 1.15·n_required) capped at ``budget.cap(cap, small_cap)``. The
    pilot is large because heavy-tailed estimators (e.g. the exponential-loss IWP
    gradient) have variances that small pilots underestimate.

    Parameters
    ----------
    sampler : callable
        ``sampler(n, rng)`` returning n draws of the estimator, one per row.
    target : array-like
        The value the estimator is claimed (or known not) to be unbiased for.
    name : str
        The audit's name (also names its seeds).
    budget : Budget
        The preset's sampling budget (caps, ``small``) and per-check seeds.
    cap : int
        Largest number of draws.
    small_cap : int
        Largest number of draws in a small run.
    per_draw : int
        Values per draw (sizes the chunks).
    pilot : int
        Draws of the pilot audit.
    note : str
        Note recorded in the audit.

    Returns
    -------
    BiasAudit
    """
    seed = budget.seed(name)
    chunk = _chunk(per_draw)
    pilot = min(pilot, budget.cap(cap, small_cap))
    pre = audit_bias(sampler, target, n=pilot, rng=budget.seed(f"{name} (pilot)"), chunk_size=chunk, name=name,
                     power=POWER, confidence=CONFIDENCE, relative_resolution=RELATIVE_RESOLUTION)
    # 15 % head-room: the pilot's covariance is itself an estimate.
    want = int(math.ceil(SAFETY * pre.n_required)) if pre.n_required is not None else pilot
    limit = budget.cap(cap, small_cap)
    n = int(min(max(want, pilot), limit))
    # The pilot's estimate, named as such: the final audit's own n_required (its field) comes from
    # its own covariance estimate and differs.
    sized = (
        f"n = {n} draws: the pilot ({pilot} draws) estimated that a relative bias of {RELATIVE_RESOLUTION:.0%} "
        f"needs n_required = {pre.n_required} for power {POWER}, so n = {want} with {SAFETY - 1:.0%} head-room "
        f"(this audit's own n_required is re-estimated from its draws)"
        + ("; capped, so the audit is under-powered for 1 %" if want > limit else "")
    ) if pre.n_required is not None else f"n = {n} draws (pilot of {pilot} draws gave no n_required)"
    return audit_bias(sampler, target, n=n, rng=seed, chunk_size=chunk, name=name, power=POWER,
                      confidence=CONFIDENCE, relative_resolution=RELATIVE_RESOLUTION,
                      note=(note + " " if note else "") + sized)


def negative_control(sampler: Callable, target: ArrayLike, *, name: str, budget: _Budget, n: int, small_n: int,
                     per_draw: int = 1, note: str = "", known_bias: ArrayLike | None = None,
                     pilot: int = 2000) -> BiasAudit:
    """Audit a known-biased estimator (``expect="biased"``): it must be flagged.

    With ``known_bias`` (the exact bias, computed independently) the number of draws is
    sized so that a bias of that norm, in the worst direction, is detected with power
    0.9: n = 1.15·n_required·(0.01‖θ‖/‖b‖)² from a pilot audit, capped at
    ``budget.cap(n, small_n)``. Otherwise n = ``budget.cap(n, small_n)``.

    Parameters
    ----------
    sampler : callable
        ``sampler(n, rng)`` returning n draws of the estimator, one per row.
    target : array-like
        The value the estimator is claimed (or known not) to be unbiased for.
    name : str
        The audit's name (also names its seeds).
    budget : Budget
        The preset's sampling budget (caps, ``small``) and per-check seeds.
    n : int
        Draws without ``known_bias`` (and the cap with it).
    small_n : int
        The same for a small run.
    per_draw : int
        Values per draw (sizes the chunks).
    note : str
        Note recorded in the audit.
    known_bias : array-like, optional
        The exact bias, computed independently.
    pilot : int
        Draws of the pilot audit.

    Returns
    -------
    BiasAudit
        With ``expect="biased"``.
    """
    seed, chunk = budget.seed(name), _chunk(per_draw)
    limit = budget.cap(n, small_n)
    draws = limit
    expect = "biased"
    if known_bias is not None:
        pre = audit_bias(sampler, target, n=min(pilot, limit), rng=budget.seed(f"{name} (pilot)"), chunk_size=chunk,
                         name=name, power=POWER, confidence=CONFIDENCE, relative_resolution=RELATIVE_RESOLUTION)
        b = float(np.linalg.norm(known_bias))
        want = int(math.ceil(SAFETY * required_draws(pre, b / np.linalg.norm(np.ravel(target)))))
        draws = int(min(max(want, pre.n), limit))
        note = (note + "; " if note else "") + (
            f"n = {draws} draws: the pilot ({pre.n} draws) estimated that the exact bias (norm {b:.3g}) needs "
            f"n = {want} for power {POWER} (with {SAFETY - 1:.0%} head-room)"
            + ("; capped, so the audit is under-powered for it and only informational" if want > limit else "")
        )
        if want > limit:
            # Missing a bias we cannot have the power to see is not a failed check.
            expect = "unknown"
    return audit_bias(sampler, target, n=draws, rng=seed, chunk_size=chunk, name=name, expect=expect,
                      power=POWER, confidence=CONFIDENCE, relative_resolution=RELATIVE_RESOLUTION, note=note)


__all__ = ["CONFIDENCE", "POWER", "RELATIVE_RESOLUTION", "SAFETY", "negative_control", "powered_audit"]
