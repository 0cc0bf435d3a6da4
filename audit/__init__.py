"""Audits and their statistics, configurations, presets, runner, reports, CLI and pytest plugin.

Names are loaded lazily from their submodules.
"""

from importlib import import_module

from .display.hooks import register_renderers as _register_renderers

#: Names re-exported from privaudit.mechanisms, also lazily: importing the mechanisms package loads
#: dp_accounting and scipy.stats, which `privaudit --help` and `privaudit list` never need.
_REEXPORTED = {"gaussian_tradeoff": "privaudit.mechanisms.tradeoff", "tradeoff_curve": "privaudit.mechanisms.tradeoff"}

#: Public name -> submodule defining it.
_LAZY = {
    "audit_tradeoff": "engines.tradeoff",
    "TradeoffAudit": "engines.tradeoff",
    "composed_tradeoff": "engines.tradeoff", "pld_tradeoff": "engines.tradeoff",
    "audit_calibration": "engines.calibration", "CalibrationAudit": "engines.calibration",
    "audit_modulated": "engines.learner_audits", "audit_iwp_release": "engines.learner_audits", "audit_dpsgd_label": "engines.learner_audits", "one_run_label_audit": "engines.learner_audits",
    "audit_reconstruction": "engines.reconstruction",
    "ReconstructionAudit": "engines.reconstruction",
    "mse_crb_curve": "engines.reconstruction", "composition_curve": "engines.reconstruction", "release_fisher": "stats.fisher", "autograd_fisher": "stats.fisher", "marginal_fisher": "stats.fisher", "side_information_fisher": "stats.fisher", "compose_fisher": "stats.fisher", "GaussianNoiseMap": "stats.fisher", "crb": "stats.estimation_bounds", "seed_trace_bound": "stats.estimation_bounds", "van_trees": "stats.estimation_bounds", "hammersley_chapman_robbins": "stats.estimation_bounds", "rero_bound": "stats.estimation_bounds", "rero_mu": "stats.estimation_bounds",
    "search_pairs": "engines.pair_search", "PairSearchResult": "engines.pair_search",
    "candidate_pairs": "engines.pair_search",
    "audit_bias": "engines.bias",
    "BiasAudit": "engines.bias",
    "required_draws": "engines.bias", "run_bias_checks": "studies.bias_checks",
    "AuditKind": "kinds", "register_kind": "kinds", "audit_kinds": "kinds", "get_kind": "kinds",
    "AuditEntry": "results", "AuditResult": "results", "ExperimentResult": "results", "Verdict": "verdicts",
    "allow_imports": "schema.components", "load_config": "app.config", "parse_config": "app.config",
    "plot_result": "reporting.figures", "result_html": "reporting.render", "write_report": "app.results_report",
    "results_report": "app.results_report",
    "audit_membership": "engines.membership", "MembershipAudit": "engines.membership_results",
    "MembershipRocDisplay": "engines.membership_results",
    "audit_record_reconstruction": "engines.record_reconstruction", "RecordReconstruction": "engines.record_reconstruction",
    "audit_candidate_reconstruction": "engines.candidate_reconstruction",
    "CandidateReconstruction": "engines.candidate_reconstruction",
}


def _plot_result(result, which=0):
    return import_module(".reporting.figures", __name__).plot_result(result, which)


def _result_html(result):
    return import_module(".reporting.render", __name__).result_html(result)


# A result's plot() and _repr_html_ call these (results sit below the kinds that draw them, so the
# package, which runs before any of its modules, registers the renderers; they load on first use).
_register_renderers(plot=_plot_result, html=_result_html)


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    if name in _REEXPORTED:
        return getattr(import_module(_REEXPORTED[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_LAZY) + list(_REEXPORTED))


__all__ = [*_REEXPORTED, *_LAZY]
