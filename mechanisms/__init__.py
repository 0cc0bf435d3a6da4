"""Local randomisers, their calibration, privacy claims and accounting adapters."""

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
    gdp_epsilon,
    gdp_sigma,
    privacy_loss_distribution,
    gaussian_steps_event,
    sigma_for_rho,
    zcdp_compose,
    zcdp_epsilon,
    zcdp_rho,
)
from .arcsine_gaussian import ArcsineGaussian
from .claim import PrivacyClaim, neighboring_relation
from .gaussian import GaussianMechanism, analytic_sigma, calibrate_gaussian, classical_sigma
from .laplace import LaplaceMechanism
from .modulated import ModulatedMechanism, random_orthonormal_basis
from .protocol import AccountableMechanism, DensityMechanism, Mechanism
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
    "AccountableMechanism", "ArcsineGaussian", "CalibrationCheck", "CalibrationWarning", "check_calibration", "check_claim", "dp_event_of", "draw_seed",
    "event_delta", "event_epsilon", "gdp_epsilon", "gdp_sigma", "privacy_loss_distribution", "resolve_seed",
    "spawn_generators",
    "DensityMechanism", "GaussianMechanism", "InvalidInputError", "InvalidParameterError", "LaplaceMechanism",
    "Mechanism", "ModulatedMechanism", "NonContractiveWarning", "ParameterTypeError", "PrivacyClaim",
    "PrivacyLeakWarning", "RandomizedResponse", "analytic_sigma", "calibrate_gaussian", "calibrate_noise_multiplier",
    "classical_sigma", "discrete_tradeoff", "dpsgd_delta", "dpsgd_epsilon", "gaussian_delta", "gaussian_rho",
    "gaussian_steps_event", "gaussian_tradeoff", "laplace_tradeoff", "neighboring_relation",
    "random_orthonormal_basis", "UnsafeFloatGaussianMechanism", "UnsafeFloatLaplaceMechanism",
    "DiscreteGaussianMechanism", "DiscreteLaplaceMechanism", "ExponentialMechanism", "SnappingLaplaceMechanism", "sigma_for_rho", "tradeoff_curve", "tradeoff_from_profile", "zcdp_compose",
    "zcdp_epsilon", "zcdp_rho",
]
