"""Accounting adapters over dp_accounting: zCDP, PLD and RDP, events of mechanisms, calibration checks.

Every call into dp_accounting made by privaudit's mechanisms, learners and audits goes
through this module. Mechanisms describe themselves with ``dp_event(distance=None)``
(the dp_accounting event of one release between inputs at the given distance, default
the claim's worst case); :func:`dp_event_of` reads it and
:func:`privacy_loss_distribution` turns any mechanism or event into dp_accounting's
PLD, so that audits never switch on concrete mechanism types.

privaudit writes no accountant of its own: every conversion below is either a
closed form stated in the literature (and named as such) or a call into
dp_accounting with the neighbouring relation of the claim.

zCDP conversions to (ε, δ) offered by :func:`zcdp_epsilon`:

``"seed"``
    ε = ρ + 2·sqrt(ρ ln(1/δ)) (Bun & Steinke 2016, Prop. 1.3), as used by seed 000.
``"rdp"``
    dp_accounting's RDP accountant applied to the ρ-zCDP curve (α, ρα); valid for
    any ρ-zCDP mechanism and always at least as tight as ``"seed"``.
``"gaussian"``
    exact for compositions of Gaussian mechanisms, which are exactly μ-GDP with
    μ = sqrt(2ρ) (Dong, Roth & Su 2019); the tightest, but valid only for them.
"""

from __future__ import annotations

import functools
import math

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import dp_accounting as dpa
import numpy as np
from numpy.typing import ArrayLike
from dp_accounting import dp_event as dp_event_lib
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from dp_accounting.pld.pld_privacy_accountant import PLDAccountant
from dp_accounting.rdp.rdp_privacy_accountant import RdpAccountant
from scipy.optimize import brentq
from scipy.special import expit

from .claim import neighboring_relation
from .tradeoff import pld_tradeoff
from .validation import InvalidParameterError, check_delta, check_epsilon, check_int, check_interval, check_positive

ZCDP_CONVERSIONS = ("seed", "rdp", "gaussian")
ACCOUNTANTS = ("pld", "rdp")
#: PLD grid of :func:`privacy_loss_distribution` (dp_accounting's pessimistic rounding keeps it an upper bound).
PLD_DISCRETIZATION = 1e-3
_Z_FLOOR = 0.25


def gaussian_rho(sigma: float, sensitivity: float = 1.0) -> float:
    """zCDP of one Gaussian release: ρ = Δ²/(2σ²).

    Parameters
    ----------
    sigma : float
        Noise std σ > 0.
    sensitivity : float
        ℓ₂ sensitivity Δ > 0.

    Returns
    -------
    float
        ρ.
    """
    return check_positive("sensitivity", sensitivity) ** 2 / (2 * check_positive("sigma", sigma) ** 2)


def sigma_for_rho(rho: float, sensitivity: float = 1.0) -> float:
    """Noise std giving ρ-zCDP for sensitivity Δ: σ = Δ/sqrt(2ρ) (seed 000, §4).

    Parameters
    ----------
    rho : float
        zCDP ρ ≥ 0.
    sensitivity : float
        ℓ₂ sensitivity Δ > 0.

    Returns
    -------
    float
        σ.
    """
    return check_positive("sensitivity", sensitivity) / math.sqrt(2 * check_positive("rho", rho))


def zcdp_compose(rhos: Iterable[float]) -> float:
    """ρ of a sequential composition: ρ adds over rounds (Bun & Steinke 2016, Lemma 2.3).

    Parameters
    ----------
    rhos : iterable of float
        ρ of each round, ≥ 0.

    Returns
    -------
    float
        Σ ρ_t.
    """
    return float(sum(check_positive("rho", r, allow_zero=True) for r in rhos))


def zcdp_epsilon(rho: float, delta: float, conversion: str = "rdp") -> float:
    """ε such that ρ-zCDP implies (ε, δ)-DP, by the named conversion.

    Parameters
    ----------
    rho : float
        zCDP ρ ≥ 0 (∞ gives ∞).
    delta : float
        δ in (0, 1).
    conversion : {"seed", "rdp", "gaussian"}
        zCDP → (ε, δ) conversion (module docstring).

    Returns
    -------
    float
        ε ≥ 0.

    Raises
    ------
    InvalidParameterError
        For an unknown conversion or out-of-range ρ or δ.
    """
    rho = check_positive("rho", rho, allow_zero=True, allow_inf=True)
    delta = check_delta(delta)
    if rho == 0:
        return 0.0
    if math.isinf(rho):
        return math.inf
    if conversion == "seed":
        return rho + 2 * math.sqrt(rho * math.log(1 / delta))
    if conversion == "rdp":
        acc = RdpAccountant()
        acc.compose(dpa.ZCDpEvent(rho))
        return float(acc.get_epsilon(delta))
    if conversion == "gaussian":
        return float(dpa.get_epsilon_gaussian(1 / math.sqrt(2 * rho), delta))
    raise InvalidParameterError(f"conversion must be one of {ZCDP_CONVERSIONS}, got conversion={conversion!r}")


def zcdp_rho(epsilon: float, delta: float, conversion: str = "rdp") -> float:
    """Largest ρ whose conversion gives at most (ε, δ); the inverse of :func:`zcdp_epsilon`.

    Parameters
    ----------
    epsilon : float
        ε > 0.
    delta : float
        δ in (0, 1).
    conversion : {"seed", "rdp", "gaussian"}
        zCDP → (ε, δ) conversion (module docstring).

    Returns
    -------
    float
        ρ ≥ 0.

    Raises
    ------
    InvalidParameterError
        For an unknown conversion or out-of-range ε or δ.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if conversion == "seed":
        log_inv = math.log(1 / delta)
        return (math.sqrt(log_inv + epsilon) - math.sqrt(log_inv)) ** 2
    if conversion == "gaussian":
        return 0.5 / dpa.get_sigma_gaussian(epsilon, delta) ** 2
    if conversion == "rdp":
        hi = zcdp_rho(epsilon, delta, "gaussian")  # "rdp" is never tighter than exact GDP
        lo = zcdp_rho(epsilon, delta, "seed")
        return brentq(lambda r: zcdp_epsilon(r, delta, "rdp") - epsilon, lo, hi * (1 + 1e-9), xtol=1e-14, rtol=1e-12)
    raise InvalidParameterError(f"conversion must be one of {ZCDP_CONVERSIONS}, got conversion={conversion!r}")


def gaussian_steps_event(noise_multiplier: float, steps: int, sampling_rate: float = 1.0) -> dpa.DpEvent:
    """The DpEvent of ``steps`` (optionally Poisson-subsampled) Gaussian steps.

    ``noise_multiplier`` is σ divided by the per-example ℓ₂ bound (clip norm).

    Parameters
    ----------
    noise_multiplier : float
        z = σ / (per-example ℓ₂ bound), > 0.
    steps : int
        Number T of composed steps.
    sampling_rate : float
        Poisson sampling probability q in (0, 1] (1: no subsampling).

    Returns
    -------
    dp_accounting.DpEvent
        ``SelfComposedDpEvent`` of the (Poisson-sampled) Gaussian step.
    """
    z = check_positive("noise_multiplier", noise_multiplier)
    steps = check_int("steps", steps)
    q = check_interval("sampling_rate", sampling_rate, 0.0, 1.0, closed="right")
    step = dpa.GaussianDpEvent(z) if q == 1.0 else dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(z))
    return dpa.SelfComposedDpEvent(step, steps)


def pure_dp_event(epsilon: float) -> dpa.DpEvent:
    """The DpEvent of an arbitrary pure ε-DP release: binary randomized response at ε.

    dp_accounting has no event for a generic ε-DP mechanism (e.g. the exponential
    mechanism). Binary randomized response that keeps its bit with probability
    e^ε/(1 + e^ε) is the least private ε-DP mechanism: every ε-DP mechanism is a
    post-processing of it (Kairouz, Oh & Viswanath 2015, Thm. 2.2), so its privacy loss
    distribution is a valid (pessimistic) one for any of them, and exact at δ = 0.

    Parameters
    ----------
    epsilon : float
        The pure ε (0 gives ``NoOpDpEvent``, ∞ gives ``NonPrivateDpEvent``).

    Returns
    -------
    dp_accounting.DpEvent
        ``RandomizedResponseDpEvent(noise_parameter=2/(1 + e^ε), num_buckets=2)``: with
        probability p the bit is replaced by a uniform one, so it is kept with
        probability 1 − p/2 = e^ε/(1 + e^ε).
    """
    eps = check_positive("epsilon", epsilon, allow_zero=True, allow_inf=True)
    if eps == 0:
        return dpa.NoOpDpEvent()
    if math.isinf(eps):
        return dpa.NonPrivateDpEvent()
    return dpa.RandomizedResponseDpEvent(noise_parameter=2 * float(expit(-eps)), num_buckets=2)


def _accountant(accountant: str, adjacency: str):
    relation = neighboring_relation(adjacency)
    if accountant == "pld":
        return PLDAccountant(relation)
    if accountant == "rdp":
        return RdpAccountant(neighboring_relation=relation)
    raise InvalidParameterError(f"accountant must be one of {ACCOUNTANTS}, got accountant={accountant!r}")


def _composed(event: dpa.DpEvent, accountant: str, adjacency: str):
    acc = _accountant(accountant, adjacency)
    if not acc.supports(event):
        raise InvalidParameterError(
            f"the {accountant!r} accountant of dp_accounting does not support {type(event).__name__} "
            f"under adjacency {adjacency!r}; try accountant='pld'"
        )
    acc.compose(event)
    return acc


def dpsgd_epsilon(
    noise_multiplier: float, steps: int, delta: float, *, sampling_rate: float = 1.0,
    adjacency: str = "add-remove", accountant: str = "pld",
) -> float:
    """ε of ``steps`` Gaussian steps at δ, under the claim's adjacency.

    Under ``"replace-one"`` / ``"label"`` dp_accounting treats one replacement as
    moving the clipped sum by twice the clip norm.

    Parameters
    ----------
    noise_multiplier : float
        z = σ / (per-example ℓ₂ bound), > 0.
    steps : int
        Number T of composed steps.
    delta : float
        δ in (0, 1).
    sampling_rate : float
        Poisson sampling probability q in (0, 1] (1: no subsampling).
    adjacency : str
        Neighbouring relation of the claim (e.g. ``"add-remove"``, ``"replace-one"``, ``"label"``).
    accountant : {"pld", "rdp"}
        dp_accounting accountant.

    Returns
    -------
    float
        ε ≥ 0.

    Raises
    ------
    InvalidParameterError
        When the accountant does not support the event under ``adjacency``.
    """
    event = gaussian_steps_event(noise_multiplier, steps, sampling_rate)
    return float(_composed(event, accountant, adjacency).get_epsilon(check_delta(delta)))


def dpsgd_delta(
    noise_multiplier: float, steps: int, epsilon: float, *, sampling_rate: float = 1.0,
    adjacency: str = "add-remove", accountant: str = "pld",
) -> float:
    """δ of ``steps`` Gaussian steps at ε, under the claim's adjacency.

    Parameters
    ----------
    noise_multiplier : float
        z = σ / (per-example ℓ₂ bound), > 0.
    steps : int
        Number T of composed steps.
    epsilon : float
        ε ≥ 0.
    sampling_rate : float
        Poisson sampling probability q in (0, 1] (1: no subsampling).
    adjacency : str
        Neighbouring relation of the claim (e.g. ``"add-remove"``, ``"replace-one"``, ``"label"``).
    accountant : {"pld", "rdp"}
        dp_accounting accountant.

    Returns
    -------
    float
        δ in [0, 1].

    Raises
    ------
    InvalidParameterError
        When the accountant does not support the event under ``adjacency``.
    """
    event = gaussian_steps_event(noise_multiplier, steps, sampling_rate)
    return float(_composed(event, accountant, adjacency).get_delta(check_positive("epsilon", epsilon, allow_zero=True)))


@functools.lru_cache(maxsize=256)
def calibrate_noise_multiplier(
    epsilon: float, delta: float, steps: int, *, sampling_rate: float = 1.0,
    adjacency: str = "add-remove", accountant: str = "pld", tol: float = 1e-4,
) -> float:
    """Smallest noise multiplier with ε(δ) ≤ ε over ``steps`` steps (dp_accounting's calibration).

    For full-batch steps with ``accountant="pld"`` the composition is exactly
    μ-GDP with μ = c·sqrt(T)/z (c = 2 under replace-one), so z comes from the
    analytic Gaussian calibration of dp_accounting directly; otherwise it is
    found by dp_accounting's bisection on the accountant. Results are cached
    (the calibration is a pure function of its arguments and can take seconds).

    Parameters
    ----------
    epsilon : float
        ε > 0.
    delta : float
        δ in (0, 1).
    steps : int
        Number T of composed steps.
    sampling_rate : float
        Poisson sampling probability q in (0, 1] (1: no subsampling).
    adjacency : str
        Neighbouring relation of the claim (e.g. ``"add-remove"``, ``"replace-one"``, ``"label"``).
    accountant : {"pld", "rdp"}
        dp_accounting accountant.
    tol : float
        Tolerance of dp_accounting's bisection on z.

    Returns
    -------
    float
        z > 0.

    Raises
    ------
    InvalidParameterError
        For an unsupported accountant/adjacency, or when no z in the bracket reaches ε.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)

    def make_event(z: float) -> dpa.DpEvent:
        return gaussian_steps_event(z, steps, sampling_rate)

    _composed(make_event(1.0), accountant, adjacency)  # fail early on unsupported combinations
    # Full participation without subsampling is exactly sqrt(T)/z-GDP (times 2 under
    # replace-one), which bounds the answer from above: subsampling only helps.
    doubling = 2.0 if neighboring_relation(adjacency) == dpa.NeighboringRelation.REPLACE_ONE else 1.0
    exact_full_batch = doubling * math.sqrt(steps) * dpa.get_sigma_gaussian(epsilon, delta)
    if sampling_rate == 1.0 and accountant == "pld":
        # The PLD of full-batch Gaussian steps is exactly this GDP curve (up to its grid).
        return float(exact_full_batch)
    upper = 1.05 * exact_full_batch
    # The PLD grid grows like 1/z^2; below this floor it no longer fits in memory.
    lower = min(_Z_FLOOR, upper / 2)
    try:
        return float(
            dpa.calibrate_dp_mechanism(
                lambda: _accountant(accountant, adjacency), make_event, epsilon, delta,
                dpa.ExplicitBracketInterval(lower, upper), tol=tol,
            )
        )
    except dpa.mechanism_calibration.NoBracketIntervalFoundError:
        raise InvalidParameterError(
            f"no noise multiplier in [{lower:.3g}, {upper:.3g}] reaches epsilon={epsilon!r} at delta={delta!r} "
            f"over steps={steps!r}; the budget is too large to calibrate with the {accountant!r} accountant"
        ) from None


# --- self-describing mechanisms ----------------------------------------------------------------
def dp_event_of(mechanism: object, distance: float | None = None) -> dpa.DpEvent:
    """The dp_accounting event of one release of ``mechanism`` (its ``dp_event(distance)``).

    ``distance`` is the distance between the two inputs (default: the mechanism's
    worst case under its claim). Raises if the mechanism does not describe itself.

    Parameters
    ----------
    mechanism : mechanism or dp_accounting.DpEvent
        Anything with ``dp_event(distance)``, or an event (returned as is).
    distance : float, optional
        Distance between the two inputs (default: the mechanism's worst case).

    Returns
    -------
    dp_accounting.DpEvent

    Raises
    ------
    InvalidParameterError
        When the mechanism has no ``dp_event`` method.
    """
    if isinstance(mechanism, dpa.DpEvent):
        return mechanism
    method = getattr(mechanism, "dp_event", None)
    if method is None:
        raise InvalidParameterError(
            f"{type(mechanism).__name__} has no dp_event(distance) method: dp_accounting cannot account for it"
        )
    return method() if distance is None else method(distance)


def _event_pld(event: dpa.DpEvent, vdi: float):
    # The pair is the one the event describes: a unit shift for additive noise (the
    # event's noise multiplier is already divided by the distance), two different
    # inputs for randomized response (replace-one). Pessimistic rounding throughout.
    if isinstance(event, dpa.NoOpDpEvent):
        return pld_lib.identity(value_discretization_interval=vdi)
    if isinstance(event, dpa.GaussianDpEvent):
        return pld_lib.from_gaussian_mechanism(standard_deviation=event.noise_multiplier, sensitivity=1.0,
                                               value_discretization_interval=vdi)
    if isinstance(event, dpa.LaplaceDpEvent):
        return pld_lib.from_laplace_mechanism(parameter=event.noise_multiplier, sensitivity=1.0,
                                              value_discretization_interval=vdi)
    if isinstance(event, dp_event_lib.DiscreteLaplaceDpEvent):
        return pld_lib.from_discrete_laplace_mechanism(parameter=event.noise_parameter, sensitivity=event.sensitivity,
                                                       value_discretization_interval=vdi)
    if isinstance(event, dpa.RandomizedResponseDpEvent):
        return pld_lib.from_randomized_response(noise_parameter=event.noise_parameter,
                                                num_buckets=event.num_buckets, value_discretization_interval=vdi)
    if isinstance(event, dpa.SelfComposedDpEvent):
        return _event_pld(event.event, vdi).self_compose(event.count)
    if isinstance(event, dpa.ComposedDpEvent):
        plds = [_event_pld(e, vdi) for e in event.events]
        return functools.reduce(lambda a, b: a.compose(b), plds) if plds else pld_lib.identity(vdi)
    raise InvalidParameterError(f"no privacy loss distribution for the dp_accounting event {event!r}")


def privacy_loss_distribution(mechanism: object, distance: float | None = None, *,
                              value_discretization_interval: float = PLD_DISCRETIZATION) -> pld_lib.PrivacyLossDistribution:
    """dp_accounting's PLD of one release of ``mechanism`` (or of a DpEvent) between its worst-case pair.

    Parameters
    ----------
    mechanism : mechanism with ``dp_event(distance)``, or a ``dp_accounting.DpEvent``
        Gaussian, Laplace, discrete Laplace and randomized-response events and their
        (self-)compositions are supported (zCDP events have no PLD: use the RDP accountant).
    distance : float, optional
        Distance between the two inputs (default: the mechanism's worst case).
    value_discretization_interval : float
        Grid of the privacy-loss values (pessimistic rounding: an upper bound on δ(ε)).

    Returns
    -------
    dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
        Compose with ``.compose``; read ``.get_delta_for_epsilon`` / ``.get_epsilon_for_delta``.
    """
    vdi = check_positive("value_discretization_interval", value_discretization_interval)
    return _event_pld(dp_event_of(mechanism, distance), vdi)


def composed_pld(
    *, noise_multiplier: float, steps: int, sampling_rate: float = 1.0, adjacency: str = "add-remove",
    value_discretization_interval: float = 1e-3,
) -> pld_lib.PrivacyLossDistribution:
    """PLD of ``steps`` Gaussian steps of noise multiplier z (σ over the ℓ₂ bound), via dp_accounting.

    Under ``"replace-one"``/``"label"`` dp_accounting treats one replacement as a
    shift of twice the bound, exactly as :func:`dpsgd_epsilon`.

    Parameters
    ----------
    noise_multiplier : float
        z = σ / (ℓ₂ bound).
    steps : int
        T, the composed steps.
    sampling_rate : float
        Poisson sampling probability q of each step.
    adjacency : str
        Neighbouring relation of the claim.
    value_discretization_interval : float
        Grid of the privacy-loss values.

    Returns
    -------
    dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
    """
    z = check_positive("noise_multiplier", noise_multiplier)
    steps = check_int("steps", steps)
    q = check_interval("sampling_rate", sampling_rate, 0.0, 1.0, closed="right")
    one = pld_lib.from_gaussian_mechanism(
        standard_deviation=z, sensitivity=1.0, sampling_prob=q, neighboring_relation=neighboring_relation(adjacency),
        value_discretization_interval=check_positive("value_discretization_interval", value_discretization_interval),
    )
    return one.self_compose(steps)


def composed_tradeoff(
    alpha: ArrayLike, *, noise_multiplier: float, steps: int, sampling_rate: float = 1.0, adjacency: str = "add-remove",
    value_discretization_interval: float = 1e-3, epsilon_grid: ArrayLike | None = None,
) -> np.ndarray:
    """Trade-off curve of T composed (subsampled) Gaussian steps from dp_accounting's PLD.

    For full participation (``sampling_rate=1``) under add/remove this is G_μ with
    μ = √T/z (Dong, Roth & Su 2019, Cor. 3.3), up to the grid/discretisation error.

    Parameters
    ----------
    alpha : array-like
        Type-I errors in [0, 1].
    noise_multiplier, steps, sampling_rate, adjacency, value_discretization_interval :
        As :func:`composed_pld` takes them.
    epsilon_grid : array-like, optional
        As :func:`privaudit.mechanisms.tradeoff.pld_tradeoff` takes it.

    Returns
    -------
    numpy.ndarray
        Type-II errors, the shape of ``alpha``.
    """
    pld = composed_pld(noise_multiplier=noise_multiplier, steps=steps, sampling_rate=sampling_rate,
                       adjacency=adjacency, value_discretization_interval=value_discretization_interval)
    return pld_tradeoff(pld, alpha, epsilon_grid)


def gaussian_mixture_pld(mus: Sequence[float], weights: Sequence[float], *,
                         value_discretization_interval: float = PLD_DISCRETIZATION) -> pld_lib.PrivacyLossDistribution:
    """PLD of a Gaussian shift whose size μ_j (in noise units) is drawn with probability w_j and *observed*.

    When the attacker sees which component ran, the privacy loss is the mixture of the
    components' losses (dp_accounting's ``compute_mixture``); μ = 0 components are the
    identity. Weights must sum to 1.

    Parameters
    ----------
    mus : sequence of float
        Shift sizes μ_j ≥ 0, in noise units.
    weights : sequence of float
        Their probabilities w_j ≥ 0, summing to 1.
    value_discretization_interval : float
        Grid of the privacy-loss values.

    Returns
    -------
    dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
        The mixture, pessimistically discretised.

    Raises
    ------
    InvalidParameterError
        When the lists are empty or of different lengths, or the weights do not sum to 1.
    """
    mus = [check_positive("mu", m, allow_zero=True) for m in mus]
    weights = [check_positive("weight", w, allow_zero=True) for w in weights]
    if len(mus) != len(weights) or not mus:
        raise InvalidParameterError(f"mus and weights must be non-empty and of one length, got {len(mus)} and {len(weights)}")
    if abs(sum(weights) - 1) > 1e-9:
        raise InvalidParameterError(f"weights must sum to 1, got sum={sum(weights)!r}")
    vdi = check_positive("value_discretization_interval", value_discretization_interval)
    pld, mass = None, 0.0
    for mu, w in zip(mus, weights):
        if w == 0:
            continue
        comp = _event_pld(dpa.GaussianDpEvent(1 / mu) if mu > 0 else dpa.NoOpDpEvent(), vdi)
        # Running mixture: new = (mass·old + w·comp)/(mass + w).
        pld = comp if pld is None else pld.compute_mixture(comp, mass / (mass + w))
        mass += w
    return pld


def event_epsilon(event: dpa.DpEvent, delta: float, *, adjacency: str = "add-remove",
                  accountant: str = "pld") -> float:
    """ε at δ ≥ 0 of a dp_accounting event under the claim's adjacency (δ = 0: pure ε).

    Parameters
    ----------
    event : dp_accounting.DpEvent
        The event to account.
    delta : float
        δ in [0, 1) (0: the pure ε).
    adjacency : str
        Neighbouring relation of the claim (e.g. ``"add-remove"``, ``"replace-one"``, ``"label"``).
    accountant : {"pld", "rdp"}
        dp_accounting accountant.

    Returns
    -------
    float
        ε ≥ 0.

    Raises
    ------
    InvalidParameterError
        When the accountant does not support the event under ``adjacency``.
    """
    return float(_composed(event, accountant, adjacency).get_epsilon(check_delta(delta, allow_zero=True)))


def event_delta(event: dpa.DpEvent, epsilon: float, *, adjacency: str = "add-remove",
                accountant: str = "pld") -> float:
    """δ at ε ≥ 0 of a dp_accounting event under the claim's adjacency.

    Parameters
    ----------
    event : dp_accounting.DpEvent
        The event to account.
    epsilon : float
        ε ≥ 0.
    adjacency : str
        Neighbouring relation of the claim (e.g. ``"add-remove"``, ``"replace-one"``, ``"label"``).
    accountant : {"pld", "rdp"}
        dp_accounting accountant.

    Returns
    -------
    float
        δ in [0, 1].

    Raises
    ------
    InvalidParameterError
        When the accountant does not support the event under ``adjacency``.
    """
    return float(_composed(event, accountant, adjacency).get_delta(check_positive("epsilon", epsilon, allow_zero=True)))


def gdp_epsilon(mu: float, delta: float) -> float:
    """ε at δ of μ-GDP (exact; Balle & Wang 2018 via dp_accounting); 0 for μ = 0, ∞ for μ = ∞.

    Parameters
    ----------
    mu : float
        GDP parameter μ ≥ 0 (∞ allowed).
    delta : float
        δ in (0, 1).

    Returns
    -------
    float
        ε ≥ 0.
    """
    mu = check_positive("mu", mu, allow_zero=True, allow_inf=True)
    delta = check_delta(delta)
    if mu == 0:
        return 0.0
    if math.isinf(mu):
        return math.inf
    return float(dpa.get_epsilon_gaussian(1 / mu, delta))


def gdp_sigma(epsilon: float, delta: float) -> float:
    """Smallest noise multiplier σ/Δ of a Gaussian with (ε, δ)-DP (exact, via dp_accounting).

    Parameters
    ----------
    epsilon : float
        ε > 0.
    delta : float
        δ in (0, 1).

    Returns
    -------
    float
        σ/Δ > 0.
    """
    return float(dpa.get_sigma_gaussian(check_epsilon(epsilon), check_delta(delta)))


# --- calibration checks ------------------------------------------------------------------------
class CalibrationWarning(UserWarning):
    """A learner or mechanism claims an (ε, δ) that its noise does not give exactly.

    ``false``: the exact ε at the claimed δ exceeds the claimed ε (the claim is wrong);
    ``loose``: the noise is larger than needed by more than the stated tolerance.
    """


@dataclass(frozen=True)
class CalibrationCheck:
    """The claimed ε against the exact ε of the released noise, at the claimed δ.

    ``status`` is ``"exact"`` (within ``rtol``), ``"loose"`` (the exact ε is smaller:
    valid but wasteful) or ``"false"`` (the exact ε is larger: the claim does not hold).
    """

    claimed_epsilon: float
    exact_epsilon: float
    delta: float
    status: str
    method: str

    def to_dict(self) -> dict:
        """Plain data for reports (``audit_calibration``)."""
        return {"claimed_epsilon": self.claimed_epsilon, "exact_epsilon": self.exact_epsilon,
                "delta": self.delta, "status": self.status, "method": self.method}


def check_calibration(claimed_epsilon: float, delta: float, exact_epsilon: float, *, method: str,
                      owner: str, rtol: float = 0.05, warn: bool = True, stacklevel: int = 2) -> CalibrationCheck:
    """Compare a claimed ε with the exact ε(δ) of the noise actually added; warn unless exact.

    Parameters
    ----------
    claimed_epsilon, delta : float
        The claim (ε, δ).
    exact_epsilon : float
        Exact ε at ``delta`` of what is released (e.g. :func:`gdp_epsilon` of the
        composition, or an exact PLD's ``get_epsilon_for_delta``).
    method : str
        How the noise was calibrated (e.g. ``"classical"``), named in the warning.
    owner : str
        The learner or mechanism, named in the warning.
    rtol : float
        Relative slack under which a valid calibration still counts as exact.
    warn : bool
        Emit a :class:`CalibrationWarning` for ``"false"`` and ``"loose"``.
    stacklevel : int
        As for :func:`warnings.warn`, counted from the caller (2: blame the caller's caller).

    Examples
    --------
    The classical σ = sqrt(2 ln(1.25/δ))/ε at ε = 10, δ = 1e-5 gives exact ε ≈ 10.39:
    ``check_calibration(10, 1e-5, gdp_epsilon(1/σ, 1e-5), method="classical", owner=...)``
    returns status ``"false"`` and warns.
    """
    claimed = check_epsilon(claimed_epsilon, "claimed_epsilon", allow_inf=True)
    delta = check_delta(delta)
    exact = check_positive("exact_epsilon", exact_epsilon, allow_zero=True, allow_inf=True)
    # 1e-6: the root-finding error of dp_accounting's ε(δ) (bisections), as in audit_calibration.
    if exact > claimed * (1 + 1e-6):
        status = "false"
    elif exact < claimed * (1 - rtol):
        status = "loose"
    else:
        status = "exact"
    if warn and status != "exact":
        what = ("does NOT hold" if status == "false" else "holds but is loose")
        warnings.warn(
            f"{owner}: the claimed (epsilon={claimed:.6g}, delta={delta:.3g}) {what}: the {method} calibration "
            f"gives exact epsilon={exact:.6g} at that delta", CalibrationWarning, stacklevel=stacklevel + 1,
        )
    return CalibrationCheck(claimed, exact, delta, status, method)


def check_claim(mechanism: object, *, rtol: float = 0.05, warn: bool = True, stacklevel: int = 2) -> CalibrationCheck:
    """Check a mechanism's own (ε, δ) claim against its exact ε at the claimed δ.

    The exact ε is the mechanism's closed form ``exact_epsilon(δ)`` when it has one,
    otherwise dp_accounting's PLD of its ``dp_event`` (pessimistic, grid 1e-4). Use it
    where a mechanism or learner is built (it warns on a false or loose claim) and in
    reports (``audit_calibration``: :meth:`CalibrationCheck.to_dict`). ``stacklevel`` as
    in :func:`check_calibration` (default: the warning names the caller's caller, e.g. the
    line that built the mechanism when called from its constructor).

    Parameters
    ----------
    mechanism : mechanism
        Anything with a ``claim`` and either ``exact_epsilon(δ)`` or ``dp_event``.
    rtol : float
        Relative slack under which a valid claim still counts as exact.
    warn : bool
        Emit a :class:`CalibrationWarning` for a false or loose claim.
    stacklevel : int
        As for :func:`check_calibration`.

    Returns
    -------
    CalibrationCheck
        Status ``"exact"`` for a non-private claim.
    """
    claim = mechanism.claim
    if not claim.is_private:
        return CalibrationCheck(claim.epsilon, math.inf, claim.delta, "exact", "non-private")
    delta = claim.delta if claim.delta > 0 else 1e-12  # pure claims: compare at a negligible δ
    if hasattr(mechanism, "exact_epsilon"):
        exact = float(mechanism.exact_epsilon(delta))
    else:
        exact = float(privacy_loss_distribution(mechanism, value_discretization_interval=1e-4).get_epsilon_for_delta(delta))
    method = str(getattr(mechanism, "calibration", "stated"))
    return check_calibration(claim.epsilon, delta, exact, method=method, owner=type(mechanism).__name__,
                             rtol=rtol, warn=warn, stacklevel=stacklevel + 1)
