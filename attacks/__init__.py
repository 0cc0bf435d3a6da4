"""Adversaries: distinguishers, reconstruction attackers and label-inference attackers.

The registry is filled on import: the built-in attack modules listed in
:data:`BUILTIN_MODULES` are imported here (they are cheap: numpy/scipy only, torch and
scikit-learn are imported inside the attackers that need them), so
``privaudit.attacks.available_attacks()`` lists every built-in attacker in a fresh
interpreter. Third-party attackers (the ``privaudit.attacks`` entry-point group) are
loaded lazily, the first time the registry is read.

``attacks`` depends on :mod:`privaudit.mechanisms` only.
"""

from importlib import import_module

from .registry import AttackRegistryError, available_attacks, get_attack, register_attack

#: Submodules that register built-in attackers; each is imported (and registers) below.
#: A new built-in attack module adds its name here.
BUILTIN_MODULES = (
    "reconstruction", "bayesian_reconstruction", "autodiff_reconstruction", "labels", "distinguishers",
    "floating_point", "reachability", "coordinates",
)
#: Former name of :data:`BUILTIN_MODULES`.
ATTACK_MODULES = BUILTIN_MODULES

for _mod in BUILTIN_MODULES:
    import_module(f".{_mod}", __name__)

from .distinguishers import (  # noqa: E402
    AtomAttack,
    LikelihoodRatioAttack,
    LogisticAttack,
    MLPAttack,
    ProjectionAttack,
)
from .labels import DPSGDLabelInference, RRLabelPosterior, RROnBinsLabelAttack  # noqa: E402
from .pairs import NeighbouringPair, label_canaries, random_pair, worst_case_pair  # noqa: E402
from .priors import DiscretePrior, GaussianPrior  # noqa: E402
from .autodiff_reconstruction import AutodiffMLE  # noqa: E402
from .bayesian_reconstruction import DiscreteMAP, IWPDenoiser, MAPAttack, PosteriorMean  # noqa: E402
from .reconstruction import (  # noqa: E402
    IdentityAttack,
    NaiveInverse,
    ReconstructionAttacker,
    SplitMLE,
    SplitMLEMarginal,
    YAidedMLE,
    torch_map,
)


__all__ = [
    "AtomAttack", "AttackRegistryError", "AutodiffMLE", "BUILTIN_MODULES", "DPSGDLabelInference", "DiscreteMAP",
    "DiscretePrior", "GaussianPrior", "IWPDenoiser", "IdentityAttack", "LikelihoodRatioAttack", "LogisticAttack",
    "MAPAttack", "MLPAttack", "NaiveInverse", "NeighbouringPair", "PosteriorMean", "ProjectionAttack",
    "RRLabelPosterior", "RROnBinsLabelAttack", "ReconstructionAttacker", "SplitMLE", "SplitMLEMarginal",
    "YAidedMLE", "available_attacks", "get_attack", "label_canaries", "random_pair", "register_attack",
    "torch_map", "worst_case_pair",
]
