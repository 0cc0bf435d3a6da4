"""Local randomisers, their calibration, privacy claims and accounting adapters.

Each mechanism class declares its configuration name next to its code
(``@register_mechanism("gaussian", check=...)``, :mod:`privaudit.mechanisms.registry`) and its
parameters as ``_parameter_constraints`` (:mod:`privaudit.mechanisms.parameter_constraints`);
importing this package declares them all (in the order of the imports below, which is the
order ``privaudit list`` shows).
"""

# The first four configuration names keep their historical listing order.
from . import gaussian, laplace, randomized_response, modulated  # noqa: F401  (declares the mechanisms)
from .accounting import (
    CalibrationCheck,
    CalibrationWarning,
    calibrate_noise_multiplier,
    check_calibration,
    check_claim,
    dp_event_of,
    dpsgd_delta,
    dpsgd_epsilon,
    event_delta,
    event_epsilon,
    gaussian_rho,
    gaussian_steps_event,
    gdp_epsilon,
    gdp_sigma,
    privacy_loss_distribution,
    sigma_for_rho,
    zcdp_compose,
    zcdp_epsilon,
    zcdp_rho,
)
from .arcsine_gaussian import ArcsineGaussian
from .claim import ClaimTypeError, PrivacyClaim, claim_of, neighboring_relation
from .gaussian import GaussianMechanism, analytic_sigma, calibrate_gaussian, classical_sigma
from .laplace import LaplaceMechanism
from .modulated import ModulatedMechanism, random_orthonormal_basis
from .protocol import (
    AccountableMechanism,
    ClosedFormRelease,
    DensityMechanism,
    HasBatchRelease,
    HasDensity,
    HasDPEvent,
    HasExactDelta,
    HasExactEpsilon,
    HasExactTradeoff,
    HasFisherInformation,
    HasLaplaceScale,
    HasMarginalFisherInformation,
    HasNoiseFreeMap,
    HasWorstCasePair,
    IsotropicGaussianRelease,
    Mechanism,
    ModulatedRelease,
    NeighbouringPair,
    ReleaseLaw,
    closed_form_release,
)
from .randomized_response import RandomizedResponse
from .randomness import draw_seed, resolve_seed, spawn_generators
from .unsafe import UnsafeFloatGaussianMechanism, UnsafeFloatLaplaceMechanism
from .discrete import DiscreteGaussianMechanism, DiscreteLaplaceMechanism
from .exponential import ExponentialMechanism
from .snapping import SnappingLaplaceMechanism
from .tradeoff import (
    discrete_tradeoff,
    gaussian_delta,
    gaussian_tradeoff,
    laplace_tradeoff,
    tradeoff_curve,
    tradeoff_from_profile,
)
from .validation import (
    InvalidInputError,
    InvalidParameterError,
    NonContractiveWarning,
    ParameterTypeError,
    PrivacyLeakWarning,
)

__all__ = [
    "AccountableMechanism", "analytic_sigma", "ArcsineGaussian", "calibrate_gaussian", "calibrate_noise_multiplier",
    "CalibrationCheck", "CalibrationWarning", "check_calibration", "check_claim", "claim_of", "ClaimTypeError",
    "classical_sigma", "closed_form_release", "ClosedFormRelease",
    "DensityMechanism", "discrete_tradeoff", "DiscreteGaussianMechanism", "DiscreteLaplaceMechanism", "dp_event_of",
    "dpsgd_delta", "dpsgd_epsilon", "draw_seed", "event_delta", "event_epsilon", "ExponentialMechanism",
    "gaussian_delta", "gaussian_rho", "gaussian_steps_event", "gaussian_tradeoff", "GaussianMechanism",
    "gdp_epsilon", "gdp_sigma", "HasBatchRelease", "HasDensity", "HasDPEvent", "HasExactDelta",
    "HasExactEpsilon", "HasExactTradeoff", "HasFisherInformation", "HasLaplaceScale", "HasMarginalFisherInformation",
    "HasNoiseFreeMap", "IsotropicGaussianRelease", "InvalidInputError", "InvalidParameterError", "laplace_tradeoff",
    "LaplaceMechanism", "Mechanism", "ModulatedMechanism", "ModulatedRelease", "neighboring_relation",
    "HasWorstCasePair", "NeighbouringPair", "ReleaseLaw",
    "NonContractiveWarning",
    "ParameterTypeError", "privacy_loss_distribution", "PrivacyClaim", "PrivacyLeakWarning",
    "random_orthonormal_basis", "RandomizedResponse", "resolve_seed", "sigma_for_rho", "SnappingLaplaceMechanism",
    "spawn_generators", "tradeoff_curve", "tradeoff_from_profile", "UnsafeFloatGaussianMechanism",
    "UnsafeFloatLaplaceMechanism", "zcdp_compose", "zcdp_epsilon", "zcdp_rho",
]
