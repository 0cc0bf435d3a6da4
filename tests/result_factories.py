"""Typed audit results with chosen values, for report tests (every field set; override any by keyword).

A result built from sub-results takes its report entry's flat keys as overrides
(``tradeoff_result(epsilon_lb=1.5)``, ``reconstruction_result(crb=3.0)``), a dict setting some keys
of an entry's JSON object (``operating_point={"direction": "reverse", "fpr": 0.0}``;
``band={"lower": ..., "upper": ...}``), and is read back with its class's ``from_dict``.

The report renders typed entries (:class:`~privaudit.audit.results.AuditEntry`), so tests
build real result dataclasses rather than hand-written dicts, which the report would
read back as untyped data.
"""

from __future__ import annotations

import numpy as np

from privaudit.audit.engines.bias import BiasAudit
from privaudit.audit.engines.calibration import CalibrationAudit
from privaudit.audit.engines.reconstruction import (AuditedSetting, BoundComparison, Bounds, ErrorStatistics,
                                                    ReconstructionAudit)
from privaudit.audit.engines.tradeoff import (AttackerChoice, Band, Curves, EpsilonBound, OperatingPoint, SampleSizes,
                                              TradeoffAudit, TradeoffCurve)
from privaudit.audit.kinds.one_run_label import OneRunLabelAudit
from privaudit.audit.results import ExperimentResult
from privaudit.audit.stats.epsilon_bounds import OneRunBound
from privaudit.mechanisms import PrivacyClaim, gaussian_tradeoff, tradeoff_curve

def _from_entry(cls: type, result, overrides: dict):
    """``result`` with ``overrides`` applied to its flat report entry (a dict merged into an entry's JSON object)."""
    entry = result.to_dict()
    for name, value in overrides.items():
        if isinstance(value, dict) and isinstance(entry.get(name), dict):
            entry[name] = {**entry[name], **value}
        else:
            entry[name] = value
    return cls.from_dict(entry)


def tradeoff_result(**overrides) -> TradeoffAudit:
    """A trade-off audit of the exact Gaussian curve (μ = 0.5) on a 41-point grid, claim ε = 1, δ = 1e-5.

    Overrides are the report entry's flat keys (``epsilon_lb``, ``n_eval``, ``fpr``, ...); a dict for an
    entry's JSON object (``operating_point``, ``band``) sets some of its keys."""
    alpha = np.linspace(0, 1, 41)
    exact = gaussian_tradeoff(0.5, alpha)
    base = TradeoffAudit(
        target="gauss", attackers=AttackerChoice("llr", ("llr",)), claim=PrivacyClaim(1.0, 1e-5, "l2<=1"),
        bound=EpsilonBound("clopper-pearson", "split", epsilon_lb=0.8, mu_lb=None, delta=1e-5, confidence=0.95),
        epsilon_exact=1.2, verdict="pass", sizes=SampleSizes(n=5000, n_train=0, n_select=500, n_eval=4500), seed=0,
        operating_point=OperatingPoint(threshold=0.0, reverse_threshold=None, direction="forward", fpr=0.1, fnr=0.6,
                                       fpr_upper=0.11, fnr_upper=0.62),
        curves=Curves(TradeoffCurve(alpha.copy(), exact.copy()),
                      Band(alpha, np.clip(exact - 0.05, 0, 1), np.clip(exact + 0.05, 0, 1), "DKW"),
                      tradeoff_curve(1.0, 1e-5, alpha), exact),
        notes=(), assumptions=(), min_detectable_ratio=1.5, leaks={},
    )
    return _from_entry(TradeoffAudit, base, overrides) if overrides else base


def reconstruction_result(**overrides) -> ReconstructionAudit:
    """A reconstruction audit: MSE 0.5 [0.45, 0.56] against a CRB of 0.4 and a van Trees bound of 0.3.

    Overrides are the report entry's flat keys (``crb``, ``applies``, ``attacker_unbiased``, ``rero``, ...)."""
    base = ReconstructionAudit(
        target="recon", attacker="mle", n=1000, seed=0, confidence=0.95,
        setting=AuditedSetting(dim=2, rounds=1, information="known", side_info=False, prior=None, x=[0.7, 0.7]),
        error=ErrorStatistics(mse=0.5, mse_ci=(0.45, 0.56), bias=np.array([0.0, 0.01]), bias_sq=0.0, variance=0.5,
                              bias_p_value=0.6, mse_along=None, mse_orth=None),
        bounds=Bounds(crb=0.4, van_trees=0.3),
        comparison=BoundComparison(ratio={"crb": 1.25, "van_trees": 1.67},
                                   ratio_ci={"crb": (1.125, 1.4), "van_trees": (1.5, 1.87)},
                                   applies={"crb": True, "van_trees": True}, beaten=[]),
        attacker_unbiased=True, rero=None, verdict="pass", notes=[],
    )
    return _from_entry(ReconstructionAudit, base, overrides) if overrides else base


def bias_result(**overrides) -> BiasAudit:
    """A bias audit of a 2-coordinate estimator whose bias (0.1, −0.02) was detected (claimed unbiased: fail)."""
    fields = dict(
        target="est", n=1000, confidence=0.95, seed=0, verdict="fail", expect="unbiased", detected=True,
        p_value=1e-4, test="hotelling-T2", statistic=20.0, shape=(2,), target_value=[1.0, 2.0], bias=[0.1, -0.02],
        bias_ci=[[0.05, 0.15], [-0.07, 0.03]], std=[1.0, 1.0], bias_norm=0.102, relative_bias=0.0456, power=0.9,
        min_detectable_bias=[0.05, 0.05], min_detectable_bias_norm=0.06, min_detectable_relative_bias=0.027,
        relative_resolution=0.01, n_required=50_000, rejected_coordinates=[0], chunk_size=1000,
    )
    return BiasAudit.from_dict({"kind": "bias", **fields, **overrides})

def calibration_result(**overrides) -> CalibrationAudit:
    """An exact-ε check: exact ε 0.751 of a claimed ε = 1 (a loose claim: pass)."""
    fields = dict(target="gauss classical", claim=PrivacyClaim(1.0, 1e-5, "l2<=1"), epsilon_exact=0.751,
                  delta_exact=2e-7, slack=0.249, ratio=0.751, verdict="pass")
    return CalibrationAudit(**{**fields, **overrides})

def one_run_result(**overrides) -> OneRunLabelAudit:
    """A one-run audit with m = 50 label canaries: 6 of 10 guesses correct, ε̲ = 0."""
    fields = dict(claim=PrivacyClaim(1.0, 1e-5, "label"), bound=OneRunBound(0.0, 1e-5, 0.95, 50, 10, 6, 5),
                  verdict="pass", notes=("one training run",))
    return OneRunLabelAudit(**{**fields, **overrides})

def experiment_result(**overrides) -> ExperimentResult:
    """Utility curves: one series on a log axis and a second panel, with a reference line."""
    fields = dict(
        name="demo", target="utility demo", xlabel="ε", ylabel="R²", xscale="log",
        series={"ours": {"x": [0.5, 1, 2], "y": [0.1, 0.4, 0.6], "yerr": [0.05, 0.04, 0.02]}},
        panels={"panel B": {"base": {"x": [1, 2], "y": [0.3, 0.2]}}},
        reference={"OLS": 0.7}, notes=["a finding"],
    )
    return ExperimentResult(**{**fields, **overrides})

__all__ = ["bias_result", "calibration_result", "experiment_result", "one_run_result", "reconstruction_result",
           "tradeoff_result"]
