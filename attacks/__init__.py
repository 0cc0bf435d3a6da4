"""Adversaries: distinguishers, reconstruction attackers and label-inference attackers.

Attack modules register themselves on import; the names below are loaded lazily so
that ``import privaudit.attacks`` stays cheap (no torch unless an attack needs it).
"""

from importlib import import_module

from .registry import AttackRegistryError, available_attacks, get_attack, register_attack

#: Public name -> submodule defining it. Submodules are imported on first access.
_LAZY = {
    "RRLabelPosterior": "labels", "RROnBinsLabelAttack": "labels", "DPSGDLabelInference": "labels",
    "GaussianPrior": "priors", "DiscretePrior": "priors", "ReconstructionAttacker": "reconstruction", "NaiveInverse": "reconstruction", "IdentityAttack": "reconstruction", "SplitMLE": "reconstruction", "SplitMLEMarginal": "reconstruction", "PosteriorMean": "reconstruction", "MAPAttack": "reconstruction", "AutodiffMLE": "reconstruction", "YAidedMLE": "reconstruction", "IWPDenoiser": "reconstruction", "DiscreteMAP": "reconstruction", "torch_map": "reconstruction",
    "LikelihoodRatioAttack": "distinguishers", "ProjectionAttack": "distinguishers", "LogisticAttack": "distinguishers", "MLPAttack": "distinguishers", "AtomAttack": "distinguishers",
    "worst_case_pair": "pairs", "random_pair": "pairs", "NeighbouringPair": "pairs", "label_canaries": "pairs",
}
#: Submodules that register attackers; imported before the registry is listed.
ATTACK_MODULES = ("reconstruction", "labels", "distinguishers",)


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def load_all() -> None:
    """Import every built-in attack module so that all built-in attackers are registered."""
    for mod in ATTACK_MODULES:
        import_module(f".{mod}", __name__)


__all__ = ["AttackRegistryError", "available_attacks", "get_attack", "load_all", "register_attack", *_LAZY]
