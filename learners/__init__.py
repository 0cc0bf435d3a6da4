"""The three private learners of the seeds and their baselines, as scikit-learn estimators.

Names are loaded lazily, so that importing one learner does not import torch
unless that learner needs it.
"""

from importlib import import_module

#: Public name -> submodule defining it.
_LAZY = {
    "ModulatedRegressor": "modulated",
    "OneShotModulatedRegressor": "modulated",
    "FedAvgDPSGDRegressor": "fedavg",
    "ServerStatistics": "modulated_server",
    "UnreliableInferenceWarning": "modulated",
    "NonNumericTargetError": "input_validation",
    "server_statistics": "modulated_server",
    "server_gradient": "modulated_server",
    "theorem81_variance": "modulated_theory",
    "uniform_variance_bound": "modulated_theory",
    "load_task": "datasets",
    "IWPSGDClassifier": "iwp",
    "IWPSGDRegressor": "iwp",
    "NoisySGDClassifier": "iwp",
    "SGDRealClassifier": "iwp",
    "NoisySGDRegressor": "iwp",
    "SGDRealRegressor": "iwp",
    "iwp_loss": "iwp_losses",
    "iwp_gradient": "iwp_losses",
    "iwp_loss_variance": "iwp_losses",
    "iwp_regression_loss": "iwp_losses",
    "iwp_regression_gradient": "iwp_losses",
    "glm_loss": "iwp_losses",
    "glm_gradient": "iwp_losses",
    "glm_risk": "iwp_losses",
    "LocalRelease": "release",
    "release_dataset": "release",
    "encode_binary_labels": "release",
    "weierstrass": "weierstrass_transforms",
    "inverse_weierstrass": "weierstrass_transforms",
    "bernoulli": "weierstrass_transforms",
    "inverse_bernoulli": "weierstrass_transforms",
    "transform": "weierstrass_transforms",
    "inverse_transform": "weierstrass_transforms",
    "truncation_bias": "weierstrass_transforms",
    "series_variance_limit": "weierstrass_transforms",
    "CondDPRegressor": "conddp",
    "DPSGDRegressor": "conddp",
    "RROnBinsRegressor": "rr_on_bins",
    "WeightedLLPRegressor": "weighted_llp",
    "DPSGDEngine": "dpsgd",
    "DPGDLogisticClassifier": "dpgd_logistic",
    "train_linear_dpsgd_runs": "dpsgd",
    "conditioning_matrix": "conditioning",
    # What a learner's release view declares, and the built-in views (each beside its learner).
    "TradeoffSetup": "release_view",
    "ReconstructionSetup": "release_view",
    "fit_on_synthetic": "release_view",
    "TranscriptRelease": "modulated_view",
    "RecordRelease": "iwp_view",
    "LabelCanarySteps": "dpsgd_view",
    "DPSGDLabelCanary": "dpsgd_view",
}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_LAZY))


__all__ = list(_LAZY)
