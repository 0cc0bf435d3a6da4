"""Typed audit results with chosen values, for report tests (every field set; override any by keyword).

The report renders typed entries (:class:`~privaudit.audit.results.AuditEntry`), so tests
build real result dataclasses rather than hand-written dicts, which the report would
read back as untyped data.
"""

from __future__ import annotations

import numpy as np

from privaudit.audit.engines.bias import BiasAudit
from privaudit.audit.engines.calibration import CalibrationAudit
from privaudit.audit.engines.reconstruction import ReconstructionAudit
from privaudit.audit.engines.tradeoff import TradeoffAudit
from privaudit.audit.kinds.one_run_label import OneRunLabelAudit
from privaudit.audit.results import ExperimentResult
from privaudit.audit.stats.epsilon_bounds import OneRunBound
from privaudit.mechanisms import PrivacyClaim, gaussian_tradeoff, tradeoff_curve

def tradeoff_result(**overrides) -> TradeoffAudit:
    """A trade-off audit of the exact Gaussian curve (μ = 0.5) on a 41-point grid, claim ε = 1, δ = 1e-5."""
    alpha = np.linspace(0, 1, 41)
    exact = gaussian_tradeoff(0.5, alpha)
    fields = dict(
        target="gauss", attacker="llr", attackers_tried=("llr",), claim=PrivacyClaim(1.0, 1e-5, "l2<=1"),
        estimator="clopper-pearson", selection="split", epsilon_lb=0.8, mu_lb=None, delta=1e-5, epsilon_exact=1.2,
        verdict="pass", n=5000, n_train=0, n_select=500, n_eval=4500, confidence=0.95, seed=0,
        operating_point={"threshold": 0.0, "direction": 1, "fpr": 0.1, "fnr": 0.6},
        fpr=alpha.copy(), fnr=exact.copy(), alpha=alpha,
        band={"lower": np.clip(exact - 0.05, 0, 1), "upper": np.clip(exact + 0.05, 0, 1), "method": "DKW"},
        claim_curve=tradeoff_curve(1.0, 1e-5, alpha), exact_curve=exact, notes=(), assumptions=(),
        min_detectable_ratio=1.5, leaks={},
    )
    return TradeoffAudit(**{**fields, **overrides})

def reconstruction_result(**overrides) -> ReconstructionAudit:
    """A reconstruction audit: MSE 0.5 [0.45, 0.56] against a CRB of 0.4 and a van Trees bound of 0.3."""
    fields = dict(
        target="recon", attacker="mle", n=1000, seed=0, confidence=0.95, dim=2, rounds=1, information="known",
        side_info=False, prior=None, x=[0.7, 0.7], mse=0.5, mse_ci=(0.45, 0.56), bias=[0.0, 0.01], bias_sq=0.0,
        variance=0.5, bias_p_value=0.6, mse_along=None, mse_orth=None, crb_along=None, crb_orth=None, crb=0.4,
        crb_phase_conditional=None, seed_bound=None, hcr=None, van_trees=0.3, ratio={"crb": 1.25, "van_trees": 1.67},
        ratio_ci={}, applies={"crb": True, "van_trees": True}, beaten=[], attacker_unbiased=True, rero=None,
        verdict="pass", notes=[],
    )
    return ReconstructionAudit(**{**fields, **overrides})

def bias_result(**overrides) -> BiasAudit:
    """A bias audit of a 2-coordinate estimator whose bias (0.1, −0.02) was detected (claimed unbiased: fail)."""
    fields = dict(
        target="est", n=1000, confidence=0.95, seed=0, verdict="fail", expect="unbiased", detected=True,
        p_value=1e-4, test="hotelling-T2", statistic=20.0, shape=(2,), target_value=[1.0, 2.0], bias=[0.1, -0.02],
        bias_ci=[[0.05, 0.15], [-0.07, 0.03]], std=[1.0, 1.0], bias_norm=0.102, relative_bias=0.0456, power=0.9,
        min_detectable_bias=[0.05, 0.05], min_detectable_bias_norm=0.06, min_detectable_relative_bias=0.027,
        relative_resolution=0.01, n_required=50_000, rejected_coordinates=[0], chunk_size=1000,
    )
    return BiasAudit(**{**fields, **overrides})

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
