"""Calibration audit: the exact ε of a mechanism at its claimed δ, against its claimed ε.

Where the privacy profile of the noise actually used is known exactly (Gaussian
via Balle & Wang 2018, Laplace, randomised response, composed Gaussian steps via
dp_accounting's PLD), no sampling is needed: the claim is checked analytically.

* ``slack = claim.epsilon − epsilon_exact > 0``: the claim is loose (e.g. the
  classical σ = Δ sqrt(2 ln(1.25/δ))/ε at ε = 1, δ = 1e−5 is exactly
  0.77-DP: verdict "pass", slack reported).
* ``epsilon_exact > claim.epsilon``: the claim is false (e.g. the classical σ at
  ε = 10, or DP-SGD under label DP accounted as add/remove): "violation".

The comparison uses a relative tolerance of 1e−6 for the root-finding error of
dp_accounting's ε(δ) (its analytic Gaussian and calibration are bisections).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar

from privaudit.mechanisms.claim import ClaimTypeError, PrivacyClaim, claim_of
from privaudit.mechanisms.protocol import HasExactDelta, HasExactEpsilon
from privaudit.mechanisms.validation import InvalidParameterError, check_positive

from privaudit.audit.results import AuditResult, stable_repr
from privaudit.audit.verdicts import Verdict

#: Relative tolerance for "exact ε equals the claim" (dp_accounting solves ε(δ) by bisection).
RTOL = 1e-6


@dataclasses.dataclass(frozen=True)
class CalibrationAudit(AuditResult):
    """Exact-ε check of a claim (``kind = "calibration"``).

    Attributes
    ----------
    target : str
    claim : PrivacyClaim
    epsilon_exact : float
        Exact ε of the mechanism at ``claim.delta``.
    delta_exact : float or None
        Exact δ at ``claim.epsilon`` (when the mechanism exposes ``exact_delta``).
    slack : float
        ``claim.epsilon − epsilon_exact`` (negative when violated).
    ratio : float
        ``epsilon_exact / claim.epsilon`` (< 1: loose, > 1: violated).
    verdict : {"pass", "violation"}
    """

    kind: ClassVar[str] = "calibration"
    target: str
    claim: PrivacyClaim
    epsilon_exact: float
    delta_exact: float | None
    slack: float
    ratio: float
    verdict: Verdict


def audit_calibration(mechanism: Any, *, claim: PrivacyClaim | None = None,
                      target: str | None = None) -> CalibrationAudit:
    """Compare ``mechanism.exact_epsilon(claim.delta)`` with ``claim.epsilon``.

    Parameters
    ----------
    mechanism : HasExactEpsilon (and optionally HasExactDelta)
        Anything with ``exact_epsilon(delta)`` (:mod:`privaudit.mechanisms.protocol`), e.g.
        GaussianMechanism, LaplaceMechanism, RandomizedResponse, ModulatedMechanism, the
        external adapters, or a learner's label-DP release view.
    claim : PrivacyClaim, optional
        Default ``mechanism.claim``.
    target : str, optional
        Name shown in reports; default ``repr(mechanism)``.

    Returns
    -------
    CalibrationAudit
    """
    if claim is None:
        claim = claim_of(mechanism, required=True)
    elif not isinstance(claim, PrivacyClaim):
        raise ClaimTypeError(f"claim must be a PrivacyClaim, got claim={claim!r:.200} ({type(claim).__name__})")
    if not isinstance(mechanism, HasExactEpsilon):
        raise InvalidParameterError(
            f"{type(mechanism).__name__} has no exact_epsilon(delta): its calibration cannot be checked exactly; "
            "use audit_tradeoff for an empirical lower bound"
        )
    eps_exact = float(mechanism.exact_epsilon(claim.delta))
    check_positive("epsilon_exact", eps_exact, allow_zero=True, allow_inf=True)
    delta_exact = (float(mechanism.exact_delta(claim.epsilon))
                   if isinstance(mechanism, HasExactDelta) and claim.is_private else None)
    violated = claim.is_private and eps_exact > claim.epsilon * (1 + RTOL)
    ratio = eps_exact / claim.epsilon if claim.is_private else 0.0
    return CalibrationAudit(
        target=target or stable_repr(mechanism), claim=claim, epsilon_exact=eps_exact, delta_exact=delta_exact,
        slack=claim.epsilon - eps_exact if claim.is_private else math.inf, ratio=ratio,
        verdict="violation" if violated else "pass",
    )


__all__ = ["CalibrationAudit", "audit_calibration"]
