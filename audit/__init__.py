"""Audits and their statistics, configurations, presets, runner, reports, CLI and pytest plugin.

Names are loaded lazily from their submodules.
"""

from importlib import import_module

from privaudit.mechanisms.tradeoff import gaussian_tradeoff, tradeoff_curve

#: Public name -> submodule defining it.
_LAZY = {
    "audit_tradeoff": "tradeoff",
    "TradeoffAudit": "tradeoff",
    "composed_tradeoff": "tradeoff", "pld_tradeoff": "tradeoff",
    "audit_calibration": "calibration", "CalibrationAudit": "calibration",
    "audit_modulated": "learner_audits", "audit_iwp_release": "learner_audits", "audit_dpsgd_label": "learner_audits", "one_run_label_audit": "learner_audits",
    "audit_reconstruction": "reconstruction",
    "ReconstructionAudit": "reconstruction",
    "mse_crb_curve": "reconstruction", "composition_curve": "reconstruction", "release_fisher": "fisher", "autograd_fisher": "fisher", "marginal_fisher": "fisher", "side_information_fisher": "fisher", "compose_fisher": "fisher", "GaussianNoiseMap": "fisher", "crb": "bounds", "seed_trace_bound": "bounds", "van_trees": "bounds", "hammersley_chapman_robbins": "bounds", "rero_bound": "bounds", "rero_mu": "bounds",
    "audit_bias": "bias",
    "BiasAudit": "bias",
    "required_draws": "bias", "run_bias_checks": "bias_checks",
    "AuditKind": "kinds", "register_kind": "kinds", "audit_kinds": "kinds", "get_kind": "kinds",
    "AuditEntry": "results", "AuditResult": "results", "ExperimentResult": "results",
    "allow_imports": "components", "load_config": "config", "parse_config": "config",
}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_LAZY))


__all__ = ["gaussian_tradeoff", "tradeoff_curve", *_LAZY]
